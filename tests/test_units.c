/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the core's pure parts: PCI addresses, CUDA ordering, the
 * link-matrix rule. */
#include <stdlib.h>

#include "check.h"
#include "model/model.h"
#include "linkmatrix.h"
#include "order/order.h"
#include "pairs.h"
#include "pci.h"

static void test_pci(void)
{
	struct dc_pci p;
	char buf[DC_PCI_BUS_ID_SIZE];
	CHECK_INT(dc_pci_parse("00000000:00:06.0", 32, &p), 0);
	CHECK_INT(p.domain, 0);
	CHECK_INT(p.device, 6);
	dc_pci_format(&p, buf);
	CHECK_STR(buf, "0000:00:06.0");
	CHECK_INT(dc_pci_parse("0000:0A:1f.3", 32, &p), 0);
	dc_pci_format(&p, buf);
	CHECK_STR(buf, "0000:0a:1f.3");
	CHECK_INT(dc_pci_parse("0a:00.0", 32, &p), 0);
	CHECK_INT(p.bus, 10);
	CHECK_INT(dc_pci_parse("FFFFFFFF:FF:FF.0", 32, &p), 0);
	dc_pci_format(&p, buf);
	CHECK_STR(buf, "ffffffff:ff:ff.0");
	/* Unterminated buffers are read up to their size only. */
	char raw[8] = { '0', '1', ':', '0', '0', '.', '0', 'X' };
	CHECK(dc_pci_parse(raw, sizeof(raw), &p) != 0);
	CHECK_INT(dc_pci_parse(raw, 7, &p), 0);
	const char *bad[] = { "", "0", "00:00", "00:00.8", "000000000:00:00.0", "0:0:0:0.0",
			      "zz:00.0", "00:00.0 ", " 00:00.0", "100:00.0", "00:100.0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(dc_pci_parse(bad[i], 32, &p) != 0);
	CHECK(dc_pci_parse(NULL, 32, &p) != 0);
}

static struct dc_gpu gpu(const char *uuid, const char *name, unsigned bus, int cc)
{
	struct dc_gpu g;
	memset(&g, 0, sizeof(g));
	snprintf(g.uuid, sizeof(g.uuid), "%s", uuid);
	snprintf(g.name, sizeof(g.name), "%s", name);
	g.pci.bus = bus;
	g.cc_major = cc / 10;
	g.cc_minor = cc % 10;
	return g;
}

/* Runs the ordering and renders the slots as "i,i,m,u" (m: MIG, u: unknown). */
static const struct dc_mig *test_migs;
static int test_nmigs;

static const char *order(const struct dc_gpu *g, int n, int known, const char *ord,
			 const char *cvd, int *guessed)
{
	static char out[256];
	struct dc_slot *slots;
	int dummy;
	int count = dc_cuda_visible(g, n, test_migs, test_nmigs, known, ord, cvd, &slots,
				    guessed ? guessed : &dummy);
	out[0] = '\0';
	for (int i = 0; i < count; i++) {
		char item[16];
		if (slots[i].index >= 0)
			snprintf(item, sizeof(item), "%s%d", i ? "," : "", slots[i].index);
		else
			snprintf(item, sizeof(item), "%s%s", i ? "," : "",
				 slots[i].index == DC_SLOT_MIG ? "m" : "u");
		if (slots[i].index == DC_SLOT_MIG && slots[i].parent >= 0)
			snprintf(item + strlen(item), sizeof(item) - strlen(item), "%d", slots[i].parent);
		strcat(out, item);
	}
	free(slots);
	return out;
}

static void test_order(void)
{
	/* NVML index order deliberately differs from PCI order. */
	struct dc_gpu g[4] = {
		gpu("GPU-aaaa1111-0000", "H100", 0x41, 90),
		gpu("GPU-aaaa2222-0000", "H100", 0x01, 90),
		gpu("GPU-bbbb3333-0000", "H100", 0x81, 90),
		gpu("GPU-cccc4444-0000", "H100", 0x21, 90),
	};
	int guessed;
	CHECK_STR(order(g, 4, 1, NULL, NULL, &guessed), "1,3,0,2");
	CHECK_INT(guessed, 0);
	CHECK_STR(order(g, 4, 1, "PCI_BUS_ID", NULL, NULL), "1,3,0,2");
	CHECK_STR(order(g, 4, 1, NULL, "2,0", NULL), "0,1");
	CHECK_STR(order(g, 4, 1, NULL, " 3 , 1", NULL), "2,3");
	CHECK_STR(order(g, 4, 1, NULL, "", NULL), "");
	CHECK_STR(order(g, 4, 1, NULL, "-1", NULL), "");
	CHECK_STR(order(g, 4, 1, NULL, "-1,0", NULL), "");
	CHECK_STR(order(g, 4, 1, NULL, "0,foo,1", NULL), "1");
	CHECK_STR(order(g, 4, 1, NULL, "1,9,2", NULL), "3");
	CHECK_STR(order(g, 4, 1, NULL, "1,1,2", NULL), "3");
	CHECK_STR(order(g, 4, 1, NULL, "0,,1", NULL), "1");
	CHECK_STR(order(g, 4, 1, NULL, "GPU-bbbb3333-0000,0", NULL), "2,1");
	CHECK_STR(order(g, 4, 1, NULL, "GPU-bbbb,GPU-cccc", NULL), "2,3");
	CHECK_STR(order(g, 4, 1, NULL, "GPU-BBBB", NULL), "2");
	CHECK_STR(order(g, 4, 1, NULL, "GPU-aaaa,1", NULL), "");  /* ambiguous prefix */
	CHECK_STR(order(g, 4, 1, NULL, "GPU-dddd,1", NULL), "");  /* no such GPU */
	CHECK_STR(order(g, 4, 1, NULL, "GPU-aaaa2,GPU-aaaa2222", NULL), "1"); /* same GPU twice */
	CHECK_STR(order(g, 4, 1, NULL, "1,GPU-aaaa1111", NULL), "3,0");
	/* MIG entries name listed instances (m<parent>), one per process. */
	const struct dc_mig migs[] = {
		{ "MIG-11111111-2222-5333-8444-555555555555", 2, 1, 0 },
		{ "MIG-66666666-7777-5888-9999-aaaaaaaaaaaa", 2, 2, 0 },
		{ "MIG-bbbbbbbb-cccc-5ddd-8eee-ffffffffffff", 0, -1, -1 },
	};
	CHECK_STR(order(g, 4, 1, NULL, "0,MIG-1234,1", NULL), "1"); /* no such instance */
	CHECK_STR(order(g, 4, 1, NULL, "MIG-zzz,MIG-not-a-uuid,0", NULL), "");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-", NULL), "");
	test_migs = migs;
	test_nmigs = 3;
	CHECK_STR(order(g, 4, 1, NULL, "0,MIG-11111111-2222-5333-8444-555555555555,1", NULL), "1,m2,3");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-66666666-7777-5888-9999-AAAAAAAAAAAA", NULL), "m2");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-66666666,0", NULL), ""); /* no prefixes */
	/* MIG-<uuid> of a GPU itself names that GPU, as the CUDA driver counts
	 * it (seen on an H200 without MIG); its full UUID only. */
	CHECK_STR(order(g, 4, 1, NULL, "MIG-bbbb3333-0000,0", NULL), "2,1");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-BBBB3333-0000,GPU-bbbb3333-0000", NULL), "2");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-bbbb3333,0", NULL), "");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-GPU-bbbb3333-0000/2/0,0", NULL), "m2,1");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-GPU-bbbb3333-0000/2/1", NULL), "");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-GPU-bbbb/1/0", NULL), ""); /* the GPU's full UUID */
	CHECK_STR(order(g, 4, 1, NULL, "MIG-GPU-aaaa1111-0000/-1/-1", NULL), "");
	/* A second instance ends the list, as it does for CUDA. */
	CHECK_STR(order(g, 4, 1, NULL,
			"MIG-11111111-2222-5333-8444-555555555555,MIG-bbbbbbbb-cccc-5ddd-8eee-ffffffffffff,1",
			NULL), "m2");
	CHECK_STR(order(g, 4, 1, NULL, "MIG-11111111-2222-5333-8444-555555555555,"
			"MIG-11111111-2222-5333-8444-555555555555", NULL), "m2");
	test_migs = NULL;
	test_nmigs = 0;
	CHECK_STR(order(g, 4, 1, NULL, "0,1,2,3,0", NULL), "1,3,0,2");
	CHECK_STR(order(g, 0, 1, NULL, "0", NULL), "");
	/* Without identities: UUIDs take slots while GPUs remain. */
	CHECK_STR(order(g, 2, 0, NULL, "GPU-x,1", NULL), "");
	CHECK_STR(order(g, 2, 0, NULL, "GPU-12ab,1,GPU-34cd", NULL), "u,0");
	CHECK_STR(order(g, 2, 0, NULL, "MIG-12ab,MIG-34cd,0", NULL), "m");
	CHECK_STR(order(g, 2, 0, NULL, "0,MIG-GPU-12ab/1/0,1", NULL), "1,m,0");
	CHECK_STR(order(g, 2, 0, NULL, "MIG-x", NULL), "");

	/* Mixed GPUs: FASTEST_FIRST guesses by compute capability. */
	struct dc_gpu m[3] = {
		gpu("GPU-1", "A100", 0x01, 80),
		gpu("GPU-2", "H100", 0x41, 90),
		gpu("GPU-3", "A100", 0x21, 80),
	};
	CHECK_STR(order(m, 3, 1, NULL, NULL, &guessed), "1,0,2");
	CHECK_INT(guessed, 1);
	CHECK_STR(order(m, 3, 1, "FASTEST_FIRST", "0", &guessed), "1");
	CHECK_INT(guessed, 1);
	CHECK_STR(order(m, 3, 1, NULL, "GPU-3", &guessed), "2");
	CHECK_INT(guessed, 0);
	CHECK_STR(order(m, 3, 1, "PCI_BUS_ID", NULL, &guessed), "0,2,1");
	CHECK_INT(guessed, 0);
}

static struct dc_node node(unsigned bus, int sw)
{
	struct dc_node n;
	memset(&n, 0, sizeof(n));
	n.has_pci = 1;
	n.pci.bus = bus;
	n.switch_usable = 1;
	for (int l = 0; l < sw; l++)
		n.links[n.nlinks++].remote = DC_REMOTE_SWITCH;
	return n;
}

static void direct(struct dc_node *a, const struct dc_node *b, int links)
{
	for (int l = 0; l < links; l++) {
		a->links[a->nlinks].remote = DC_REMOTE_GPU;
		a->links[a->nlinks++].remote_pci = b->pci;
	}
}

static void test_matrix(void)
{
	struct dc_node n[4] = { node(1, 18), node(2, 16), node(3, 18), node(4, 0) };
	direct(&n[3], &n[0], 2);
	direct(&n[0], &n[3], 2);
	n[0].links[n[0].nlinks++].remote = DC_REMOTE_OTHER; /* a CPU link counts for nothing */
	int m[16];
	const unsigned int all = DC_LINKS_TO(DC_REMOTE_GPU) | DC_LINKS_TO(DC_REMOTE_SWITCH);
	dc_link_matrix(n, 4, all, m);
	const int want[16] = { 0, 16, 18, 2, 16, 0, 16, 0, 18, 16, 0, 0, 2, 0, 0, 0 };
	for (int i = 0; i < 16; i++)
		CHECK_INT(m[i], want[i]);
	/* A link filter: only the kinds asked count. */
	dc_link_matrix(n, 4, DC_LINKS_TO(DC_REMOTE_GPU), m);
	const int direct_only[16] = { 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0 };
	for (int i = 0; i < 16; i++)
		CHECK_INT(m[i], direct_only[i]);
	dc_link_matrix(n, 4, DC_LINKS_TO(DC_REMOTE_SWITCH), m);
	for (int i = 0; i < 16; i++)
		CHECK_INT(m[i], want[i] - direct_only[i]);

	/* Unusable switch links, other cliques and isolated nodes. */
	n[2].switch_usable = 0;
	n[1].has_domain = n[0].has_domain = 1;
	n[1].clique = 7;
	n[3].isolated = 1;
	dc_link_matrix(n, 4, all, m);
	const int want2[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	for (int i = 0; i < 16; i++)
		CHECK_INT(m[i], want2[i]);
	n[1].clique = 0;
	dc_link_matrix(n, 4, all, m);
	CHECK_INT(m[1], 16);
	CHECK_INT(m[2], 0);
	CHECK_INT(m[3], 0);
	CHECK_INT(dc_switch_links(&n[1]), 16);
}

/* The ordered pair (i, j) of n devices as one index, and back: exact past
 * 46,340 devices, where i*n+j no longer fits an int. */
static void test_pair_index(void)
{
	const int n = 46341;
	size_t k = dc_pair_index(n - 1, n - 2, n);
	CHECK(k == (size_t)46340 * 46341 + 46339);
	CHECK_INT(k / (size_t)n, n - 1);
	CHECK_INT(k % (size_t)n, n - 2);
	CHECK(dc_pair_index(2, 3, 4) == 11);
	CHECK(dc_pair_index(65535, 65535, 65536) == (size_t)65536 * 65536 - 1);
}

/* Link counts from an XGMI link's bandwidths (max: all links, min: one). */
static void test_links_by_bandwidth(void)
{
	CHECK_INT(dc_links_by_bandwidth(64000, 64000), 1);
	CHECK_INT(dc_links_by_bandwidth(256000, 64000), 4);
	CHECK_INT(dc_links_by_bandwidth(0, 64000), 0);       /* reached through other GPUs */
	CHECK_INT(dc_links_by_bandwidth(DC_MAX_LINKS, 1), DC_MAX_LINKS);
	/* Beyond any real count: unknown, never a wrapped int. */
	CHECK_INT(dc_links_by_bandwidth(4294967299ULL, 1), -1);
	CHECK_INT(dc_links_by_bandwidth(1ULL << 31, 1), -1);
	CHECK_INT(dc_links_by_bandwidth(1ULL << 32, 1), -1);
	CHECK_INT(dc_links_by_bandwidth(DC_MAX_LINKS + 1, 1), -1);
}

/* Names cut to a buffer keep whole UTF-8 characters. */
static void test_copy_text(void)
{
	char buf[8];
	dc_copy_text(buf, sizeof(buf), "abcdef\xc3\xa9", 8); /* "abcdef" + e-acute: 8 bytes */
	CHECK_STR(buf, "abcdef");
	dc_copy_text(buf, sizeof(buf), "abcde\xc3\xa9", 7);
	CHECK_STR(buf, "abcde\xc3\xa9");
	dc_copy_text(buf, sizeof(buf), "ab\xe2\x82\xac\xe2\x82\xac", 8); /* two euro signs */
	CHECK_STR(buf, "ab\xe2\x82\xac");
	dc_copy_text(buf, sizeof(buf), "abc", 3);
	CHECK_STR(buf, "abc");
	char tiny[1];
	dc_copy_text(tiny, sizeof(tiny), "x", 1);
	CHECK_STR(tiny, "");
	/* A source shorter than srclen stops at its NUL. */
	dc_copy_text(buf, sizeof(buf), "ab\0cd", 5);
	CHECK_STR(buf, "ab");
}

/* The pair store: order of first setting, replacement in place, equal
 * lists and equal strings shared. */
static void test_pairs(void)
{
	struct dc_pairs p;
	dc_pairs_init(&p, 4);
	CHECK_INT(dc_pairs_count(&p, 0), 0);
	CHECK(dc_pairs_get(&p, 0, "a") == NULL);
	char value[8] = "one";
	for (size_t k = 0; k < 4; k++) {
		CHECK_INT(dc_pairs_set(&p, k, "a", value), 0);
		CHECK_INT(dc_pairs_set(&p, k, "b", "two"), 0);
	}
	strcpy(value, "x"); /* the store keeps its own copy */
	CHECK_STR(dc_pairs_get(&p, 3, "a"), "one");
	CHECK(p.at[0] == p.at[3]);
	CHECK(dc_pairs_get(&p, 0, "b") == dc_pairs_get(&p, 2, "b"));
	CHECK_INT(dc_pairs_set(&p, 1, "a", "uno"), 0);
	CHECK_INT(dc_pairs_count(&p, 1), 2);
	CHECK_STR(dc_pairs_key(&p, 1, 0), "a");
	CHECK_STR(dc_pairs_value(&p, 1, 0), "uno");
	CHECK_STR(dc_pairs_key(&p, 1, 1), "b");
	CHECK_STR(dc_pairs_value(&p, 1, 1), "two");
	CHECK(dc_pairs_key(&p, 1, 2) == NULL && dc_pairs_key(&p, 1, -1) == NULL);
	CHECK_STR(dc_pairs_get(&p, 0, "a"), "one");
	/* Set back, pair 1 shares pair 0's list again. */
	CHECK_INT(dc_pairs_set(&p, 1, "a", "one"), 0);
	CHECK(p.at[1] == p.at[0]);
	CHECK_INT(dc_pairs_set(&p, 2, "b", "two"), 0);
	CHECK(p.at[2] == p.at[0]);
	CHECK_INT((int)p.strings_used, 5); /* a, one, b, two, uno */
	CHECK(dc_pairs_set(&p, 4, "a", "b") != 0);
	dc_pairs_free(&p);
}

int main(void)
{
	test_pair_index();
	test_pairs();
	test_links_by_bandwidth();
	test_copy_text();
	test_pci();
	test_order();
	test_matrix();
	return check_done("test_units");
}
