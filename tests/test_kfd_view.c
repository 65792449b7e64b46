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
#include <stdlib.h>
#include <string.h>

#include "backends/kfd_view.h"
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
	int p2p;
};

static const int slots[] = { 2, 0, 1 };

static int project(dmaconn_builder *b, void *user_data)
{
	const struct view *v = user_data;
	if (dmaconn_builder_set_size(b, 3) != DMACONN_OK)
		return DMACONN_ENOMEM;
	for (int i = 0; i < 3; i++)
		dc_kfd_view_identity(b, v->m, slots[i], i);
	dc_kfd_view_pairs(b, v->m, slots, 3, v->p2p);
	return DMACONN_OK;
}

#define DEV(r, i, key) dmaconn_result_device_get(r, i, key)
#define PAIR(r, i, j, key) dmaconn_result_pair_get(r, i, j, key)

static void check_identities(const dmaconn_result *r)
{
	/* Ordinal 0 is model device 2, 1 is 0, 2 is 1. */
	CHECK_STR(DEV(r, 1, DMACONN_PROP_NAME), "AMD Instinct MI250X");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_MARKETING_NAME), "AMD Instinct MI250X");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_PCI_BUS_ID), "0000:11:00.0");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_UUID), "GPU-0000000000001000");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_KFD_NODE), "2");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_GFX_TARGET_VERSION), "90010");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_GFX_ARCH), "gfx90a");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_KFD_NAME), "aldebaran");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_PCI_DEVICE_ID), "0x740c");
	CHECK_STR(DEV(r, 1, DMACONN_PROP_HIVE_ID), "0xabc");
	CHECK(DEV(r, 1, DMACONN_PROP_PARTITION) == NULL);
	CHECK_STR(DEV(r, 2, DMACONN_PROP_NAME), "gfx942");
	CHECK(DEV(r, 2, DMACONN_PROP_MARKETING_NAME) == NULL);
	CHECK(DEV(r, 2, DMACONN_PROP_KFD_NAME) == NULL);
	CHECK_STR(DEV(r, 2, DMACONN_PROP_PARTITION), "1");
	CHECK_STR(DEV(r, 2, DMACONN_PROP_PARTITIONS), "2");
	CHECK_STR(DEV(r, 2, DMACONN_PROP_KFD_NODE), "3");
	CHECK_STR(DEV(r, 0, DMACONN_PROP_NAME), "AMD GPU");
	CHECK(DEV(r, 0, DMACONN_PROP_UUID) == NULL);
	CHECK(DEV(r, 0, DMACONN_PROP_GFX_ARCH) == NULL);
	CHECK(DEV(r, 0, DMACONN_PROP_HIVE_ID) == NULL);
	CHECK_STR(DEV(r, 0, DMACONN_PROP_PCI_BUS_ID), "0000:13:00.0");
}

static void check_pairs(const dmaconn_result *r)
{
	/* 0 -> 1 (ordinals 1 -> 2): three XGMI links. */
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_LINK_TYPE), "XGMI");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_PATH), "XGMI3");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_XGMI_LINKS), "3");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_XGMI_LINKS_SOURCE), "bandwidth");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_HOPS), "1");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_KFD_LINK), "io_links");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_MAX_BANDWIDTH_MBS), "150000");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_MIN_BANDWIDTH_MBS), "50000");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_WEIGHT), "15");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_FLAGS), "0x1");
	CHECK_STR(PAIR(r, 1, 2, DMACONN_PROP_ENABLED), "yes");
	/* 0 -> 2 (1 -> 0): the disabled io_link, not the p2p_link. */
	CHECK_STR(PAIR(r, 1, 0, DMACONN_PROP_LINK_TYPE), "PCIE");
	CHECK_STR(PAIR(r, 1, 0, DMACONN_PROP_KFD_LINK), "io_links");
	CHECK_STR(PAIR(r, 1, 0, DMACONN_PROP_ENABLED), "no");
	CHECK_STR(PAIR(r, 1, 0, DMACONN_PROP_PATH), "NONE");
	CHECK_STR(PAIR(r, 1, 0, DMACONN_PROP_HOPS), "3");
	CHECK_STR(PAIR(r, 1, 0, DMACONN_PROP_FLAGS), "0x0");
	CHECK(PAIR(r, 1, 0, DMACONN_PROP_XGMI_LINKS) == NULL);
	/* 1 -> 0 (2 -> 1): partitions. */
	CHECK_STR(PAIR(r, 2, 1, DMACONN_PROP_PATH), "XGMI?");
	CHECK_STR(PAIR(r, 2, 1, DMACONN_PROP_XGMI_LINKS), "unknown");
	CHECK_STR(PAIR(r, 2, 1, DMACONN_PROP_XGMI_LINKS_SOURCE), "partition");
	/* 1 -> 2 (2 -> 0): nothing. */
	CHECK_STR(PAIR(r, 2, 0, DMACONN_PROP_LINK_TYPE), "NONE");
	CHECK_STR(PAIR(r, 2, 0, DMACONN_PROP_PATH), "NONE");
	CHECK(PAIR(r, 2, 0, DMACONN_PROP_FLAGS) == NULL);
	/* 2 -> 0 (0 -> 1): through another GPU. */
	CHECK_STR(PAIR(r, 0, 1, DMACONN_PROP_PATH), "XGMI+");
	CHECK_STR(PAIR(r, 0, 1, DMACONN_PROP_XGMI_LINKS), "0");
	CHECK_STR(PAIR(r, 0, 1, DMACONN_PROP_HOPS), "2");
	CHECK_STR(PAIR(r, 0, 1, DMACONN_PROP_KFD_LINK), "p2p_links");
	/* 2 -> 1 (0 -> 2): the vendor's own kind, non-coherent. */
	CHECK_STR(PAIR(r, 0, 2, DMACONN_PROP_LINK_TYPE), "TYPE7");
	CHECK_STR(PAIR(r, 0, 2, DMACONN_PROP_PATH), "TYPE7");
	CHECK_STR(PAIR(r, 0, 2, DMACONN_PROP_COHERENT), "no");
	CHECK_STR(PAIR(r, 0, 2, DMACONN_PROP_ATOMICS_64), "yes");
	CHECK(PAIR(r, 0, 2, DMACONN_PROP_HOPS) == NULL);
}

int main(void)
{
	struct dc_model *m = hand_model();
	struct dc_model before = *m;
	struct dc_device devices[3];
	struct dc_peer peers[9];
	memcpy(devices, m->devices, sizeof(devices));
	memcpy(peers, m->peers, sizeof(peers));
	struct view fabric = { m, 0 }, p2p = { m, 1 };
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "model_fabric", project, &fabric), DMACONN_OK);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "model_p2p", project, &p2p), DMACONN_OK);

	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "model_fabric", &r), DMACONN_OK);
	if (r) {
		CHECK_INT(dmaconn_result_size(r), 3);
		static const int want[9] = { 0, 0, 0, 0, 0, 3, 0, 1, 0 };
		for (int k = 0; k < 9; k++)
			CHECK_INT(dmaconn_result_get(r, k / 3, k % 3), want[k]);
		check_identities(r);
		check_pairs(r);
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
		check_pairs(r);
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
