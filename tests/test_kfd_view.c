/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rocm views computed from a node model filled by hand (no KFD tree, no
 * DMACONN_SYSFS_ROOT, no replay): what they show must come from struct
 * dc_model alone, and leave it as it was.
 *
 * Three GPUs (topology nodes 2, 3, 4) below two CPUs (nodes 0 and 1), shown
 * in the order 2, 0, 1:
 *   0 -> 1  XGMI, 3 links by bandwidth, one hop
 *   0 -> 2  a disabled PCIe io_link beside an enabled p2p_link without 64-bit
 *           atomics (the io_link wins), across the two CPUs
 *   1 -> 0  XGMI between partitions of one package (count unknown)
 *   1 -> 2  nothing
 *   2 -> 0  XGMI reached through another GPU (two hops, no link of its own)
 *   2 -> 1  PCIe p2p_link under one CPU, a kind of the vendor's own (type 7)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/kfd/kfd_view.h"
#include "check.h"
#include "dmaconn.h"

static struct dc_link_info link_to(enum dc_link_kind kind, unsigned long long type, int to,
				   unsigned long long node, unsigned long long weight, unsigned long long min_mbs,
				   unsigned long long max_mbs, unsigned long long flags, int indirect)
{
	struct dc_link_info l;
	memset(&l, 0, sizeof(l));
	l.kind = kind;
	l.vendor_type = type;
	l.end = to >= 0 ? DC_END_DEVICE : DC_END_CPU;
	l.to = to;
	l.to_node = node;
	l.indirect = indirect;
	l.weight = weight;
	l.min_mbs = min_mbs;
	l.max_mbs = max_mbs;
	l.vendor_flags = flags;
	l.enabled = flags & 1;
	l.coherent = !(flags & 2);
	l.atomics_32 = !(flags & 4);
	l.atomics_64 = !(flags & 8);
	l.peer_dma = !(flags & 16);
	return l;
}

static void add_links(struct dc_device *d, const struct dc_link_info *links, int n)
{
	d->links = calloc((size_t)n, sizeof(*d->links));
	memcpy(d->links, links, (size_t)n * sizeof(*links));
	d->nlinks = n;
}

static void set_peer(struct dc_model *m, int a, int b, int link, int count, const char *source, int hops)
{
	struct dc_peer *p = &m->peers[dc_pair_index(a, b, m->n)];
	p->link = link;
	p->link_count = count;
	p->count_source = source;
	p->hops = hops;
}

static struct dc_model *hand_model(void)
{
	struct dc_model *m = dc_model_new(3, 1);
	m->vendor_ok = 1;
	m->peers = calloc(9, sizeof(*m->peers));
	for (int k = 0; k < 9; k++)
		m->peers[k].link = -1;
	static const char *const names[] = { "AMD Instinct MI250X", "", "" };
	static const unsigned long long gfx[] = { 90010, 90402, 0 };
	for (int g = 0; g < 3; g++) {
		struct dc_device *d = &m->devices[g];
		m->ids[g].pci = (struct dc_pci){ .domain = 0, .bus = 0x11 + (unsigned int)g, .device = 0, .function = 0 };
		d->topo_node = 2 + (unsigned long long)g;
		d->unique_id = g == 2 ? 0 : 0x1000 + (unsigned long long)g;
		if (d->unique_id)
			snprintf(m->ids[g].uuid, sizeof(m->ids[g].uuid), "GPU-%016llx", d->unique_id);
		d->isa_version = gfx[g];
		d->pci_device_id = 0x740c;
		d->fabric_id = g < 2 ? 0xabc : 0;
		snprintf(d->topo_name, sizeof(d->topo_name), "%s", g == 1 ? "" : "aldebaran");
		snprintf(d->product_name, sizeof(d->product_name), "%s", names[g]);
		d->host_cpu = g == 2 ? 1 : 0;
		d->partition = g == 1;
		d->partitions = g == 1 ? 2 : 1;
	}
	const struct dc_link_info l0[] = {
		link_to(DC_LINK_PCIE, 2, -1, 0, 20, 0, 0, 1, 0),
		link_to(DC_LINK_XGMI, 11, 1, 3, 15, 50000, 150000, 1, 0),
		link_to(DC_LINK_PCIE, 2, 2, 4, 40, 0, 0, 0, 0),
		link_to(DC_LINK_PCIE, 2, 2, 4, 40, 0, 0, 1 | 8, 1),
	};
	const struct dc_link_info l1[] = { link_to(DC_LINK_XGMI, 11, 0, 2, 13, 0, 0, 1, 0) };
	const struct dc_link_info l2[] = {
		link_to(DC_LINK_XGMI, 11, 0, 2, 30, 50000, 0, 1, 1),
		link_to(DC_LINK_OTHER, 7, 1, 3, 20, 0, 0, 1 | 2, 1),
	};
	add_links(&m->devices[0], l0, 4);
	add_links(&m->devices[1], l1, 1);
	add_links(&m->devices[2], l2, 2);
	set_peer(m, 0, 1, 1, 3, "bandwidth", 1);
	set_peer(m, 0, 2, 2, 0, NULL, 3);
	set_peer(m, 1, 0, 0, -1, "partition", 1);
	set_peer(m, 2, 0, 0, 0, "bandwidth", 2);
	set_peer(m, 2, 1, 1, 0, NULL, 0);
	return m;
}

struct view {
	const struct dc_model *m;
	const struct dc_connection *row;
};

static const int slots[] = { 2, 0, 1 };

static int project(dmaconn_builder *b, void *user_data)
{
	const struct view *v = user_data;
	if (dmaconn_builder_set_size(b, 3) != DMACONN_OK)
		return DMACONN_ENOMEM;
	for (int i = 0; i < 3; i++)
		dc_kfd_view_identity(b, v->m, slots[i], i);
	dc_kfd_view_pairs(b, v->m, slots, 3, v->row);
	return DMACONN_OK;
}

/* The properties of a device (j < 0) or a pair: "key=value;" each, "key=!"
 * where the property must be absent. */
struct want {
	int i, j;
	const char *props;
};

static const struct want identities[] = {
	/* Ordinal 0 is model device 2, 1 is 0, 2 is 1. */
	{ 1, -1,
	  "name=AMD Instinct MI250X;marketing_name=AMD Instinct MI250X;"
	  "pci_bus_id=0000:11:00.0;uuid=GPU-0000000000001000;kfd_node=2;"
	  "gfx_target_version=90010;gfx_arch=gfx90a;kfd_name=aldebaran;"
	  "pci_device_id=0x740c;hive_id=0xabc;partition=!;" },
	{ 2, -1,
	  "name=gfx942;marketing_name=!;kfd_name=!;partition=1;partitions=2;kfd_node=3;" },
	{ 0, -1,
	  "name=AMD GPU;uuid=!;gfx_arch=!;hive_id=!;pci_bus_id=0000:13:00.0;" },
};

static const struct want pairs[] = {
	/* 0 -> 1 (ordinals 1 -> 2): three XGMI links. */
	{ 1, 2,
	  "link_type=XGMI;path=XGMI3;xgmi_links=3;xgmi_links_source=bandwidth;hops=1;"
	  "kfd_link=io_links;max_bandwidth_mbs=150000;min_bandwidth_mbs=50000;weight=15;"
	  "flags=0x1;enabled=yes;" },
	/* 0 -> 2 (1 -> 0): the disabled io_link, not the p2p_link. */
	{ 1, 0,
	  "link_type=PCIE;kfd_link=io_links;enabled=no;path=NONE;hops=3;flags=0x0;"
	  "xgmi_links=!;" },
	/* 1 -> 0 (2 -> 1): partitions. */
	{ 2, 1,
	  "path=XGMI?;xgmi_links=unknown;xgmi_links_source=partition;" },
	/* 1 -> 2 (2 -> 0): nothing. */
	{ 2, 0,
	  "link_type=NONE;path=NONE;flags=!;" },
	/* 2 -> 0 (0 -> 1): through another GPU. */
	{ 0, 1,
	  "path=XGMI+;xgmi_links=0;hops=2;kfd_link=p2p_links;" },
	/* 2 -> 1 (0 -> 2): the vendor's own kind, non-coherent. */
	{ 0, 2,
	  "link_type=TYPE7;path=TYPE7;coherent=no;atomics_64=yes;hops=!;" },
};

static void check_props(const dmaconn_result *r, const struct want *w, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		char list[512], *save = NULL;
		snprintf(list, sizeof(list), "%s", w[k].props);
		for (char *kv = strtok_r(list, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
			char *value = strchr(kv, '=');
			*value++ = '\0';
			const char *want = strcmp(value, "!") ? value : NULL;
			const char *got = w[k].j < 0 ? dmaconn_result_device_get(r, w[k].i, kv)
						     : dmaconn_result_pair_get(r, w[k].i, w[k].j, kv);
			check_record(want ? got && !strcmp(got, want) : got == NULL, __FILE__, __LINE__,
				     "%d,%d %s: \"%s\", not \"%s\"", w[k].i, w[k].j, kv, got ? got : "(none)",
				     want ? want : "(none)");
		}
	}
}

#define CHECK_PROPS(r, table) check_props(r, table, sizeof(table) / sizeof(table[0]))

int main(void)
{
	struct dc_model *m = hand_model();
	struct dc_model before = *m;
	struct dc_device devices[3];
	struct dc_peer peers[9];
	memcpy(devices, m->devices, sizeof(devices));
	memcpy(peers, m->peers, sizeof(peers));
	/* The rows of src/model/connections.c: XGMI links to GPUs; peer DMA
	 * (read, write) and atomics. */
	const struct dc_connection *fabric_row = dc_connection_find(DMACONN_DEVICE_ROCM, "infinity_fabric");
	const struct dc_connection *p2p_row = dc_connection_find(DMACONN_DEVICE_ROCM, "p2p");
	CHECK(fabric_row != NULL && p2p_row != NULL);
	if (!fabric_row || !p2p_row)
		return check_done("kfd_view");
	struct view fabric = { m, fabric_row }, p2p = { m, p2p_row };
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "model_fabric", project, &fabric), DMACONN_OK);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "model_p2p", project, &p2p), DMACONN_OK);

	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "model_fabric", &r), DMACONN_OK);
	if (r) {
		CHECK_INT(dmaconn_result_size(r), 3);
		static const int want[9] = { 0, 0, 0, 0, 0, 3, 0, 1, 0 };
		for (int k = 0; k < 9; k++)
			CHECK_INT(dmaconn_result_get(r, k / 3, k % 3), want[k]);
		CHECK_PROPS(r, identities);
		CHECK_PROPS(r, pairs);
		CHECK_INT(dmaconn_result_warning_count(r), 0);
		dmaconn_result_release(r);
	}
	r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "model_p2p", &r), DMACONN_OK);
	if (r) {
	/* Every enabled link whose flags allow peer DMA with atomics, XGMI or
		 * not: all but the disabled io_link (ordinals 1 -> 0) and the pair
		 * without a link (2 -> 0). */
		static const int want[9] = { 0, 1, 1, 0, 0, 1, 0, 1, 0 };
		for (int k = 0; k < 9; k++)
			CHECK_INT(dmaconn_result_get(r, k / 3, k % 3), want[k]);
		CHECK_PROPS(r, pairs);
		dmaconn_result_release(r);
	}
	CHECK_INT(dc_kfd_view_xgmi(m, 0, 1), 1);
	CHECK_INT(dc_kfd_view_xgmi(m, 0, 2), 0);
	CHECK_INT(dc_kfd_view_xgmi(m, 1, 2), 0);

	/* Nothing written back. */
	CHECK(!memcmp(&before, m, sizeof(before)));
	CHECK(!memcmp(devices, m->devices, sizeof(devices)));
	CHECK(!memcmp(peers, m->peers, sizeof(peers)));
	dc_model_release(m);
	dmaconn_shutdown();
	return check_done("kfd_view");
}
