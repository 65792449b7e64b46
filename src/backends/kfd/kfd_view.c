/* SPDX-License-Identifier: BSD-3-Clause */
/* The rocm views from the node model (kfd_view.h). */
#include "kfd_view.h"

#include <stdio.h>

#include "dmaconn.h"

void dc_kfd_view_identity(dmaconn_builder *b, const struct dc_model *m, int d, int ordinal)
{
	const struct dc_gpu *id = &m->ids[d];
	const struct dc_device *n = &m->devices[d];
	char buf[160], arch[32];
	unsigned long long v = n->isa_version;
	snprintf(arch, sizeof(arch), "gfx%llu%llu%llx", v / 10000, (v / 100) % 100, v % 100);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NAME, n->product_name[0] ? n->product_name
								       : v ? arch : "AMD GPU");
	dc_pci_format(&id->pci, buf);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PCI_BUS_ID, buf);
	if (id->uuid[0])
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_UUID, id->uuid);
	snprintf(buf, sizeof(buf), "%llu", n->topo_node);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_KFD_NODE, buf);
	if (v) {
		snprintf(buf, sizeof(buf), "%llu", v);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_GFX_TARGET_VERSION, buf);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_GFX_ARCH, arch);
	}
	if (n->product_name[0])
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_MARKETING_NAME, n->product_name);
	if (n->topo_name[0])
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_KFD_NAME, n->topo_name);
	snprintf(buf, sizeof(buf), "0x%04llx", n->pci_device_id);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PCI_DEVICE_ID, buf);
	if (n->fabric_id) {
		snprintf(buf, sizeof(buf), "0x%llx", n->fabric_id);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_HIVE_ID, buf);
	}
	if (n->partitions > 1) {
		snprintf(buf, sizeof(buf), "%d", n->partition);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PARTITION, buf);
		snprintf(buf, sizeof(buf), "%d", n->partitions);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PARTITIONS, buf);
	}
}

static const char *kind_name(const struct dc_link_info *k, char *buf, size_t len)
{
	switch (k->kind) {
	case DC_LINK_XGMI:
		return "XGMI";
	case DC_LINK_PCIE:
		return "PCIE";
	case DC_LINK_HYPERTRANSPORT:
		return "HYPERTRANSPORT";
	case DC_LINK_OTHER:
		break;
	}
	snprintf(buf, len, "TYPE%llu", k->vendor_type);
	return buf;
}

/* The link of the ordered pair (a, b) of the model, NULL none. */
static const struct dc_link_info *pair_link(const struct dc_model *m, int a, int b)
{
	const struct dc_peer *p = &m->peers[dc_pair_index(a, b, m->n)];
	return p->link >= 0 && p->link < m->devices[a].nlinks ? &m->devices[a].links[p->link] : NULL;
}

int dc_kfd_view_xgmi(const struct dc_model *m, int a, int b)
{
	const struct dc_link_info *k = pair_link(m, a, b);
	return k && k->enabled && k->kind == DC_LINK_XGMI;
}

static const char *yes(int v)
{
	return v ? "yes" : "no";
}

static void set_pair(dmaconn_builder *b, int i, int j, const struct dc_link_info *k, const struct dc_peer *p)
{
	char buf[64], tbuf[32];
	if (!k) {
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_LINK_TYPE, "NONE");
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PATH, "NONE");
		return;
	}
	const char *type = kind_name(k, tbuf, sizeof(tbuf));
	int xgmi = k->kind == DC_LINK_XGMI;
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_LINK_TYPE, type);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_KFD_LINK, k->indirect ? "p2p_links" : "io_links");
	if (p->hops) {
		snprintf(buf, sizeof(buf), "%d", p->hops);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_HOPS, buf);
	}
	snprintf(buf, sizeof(buf), "%llu", k->weight);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_WEIGHT, buf);
	snprintf(buf, sizeof(buf), "%llu", k->min_mbs);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_MIN_BANDWIDTH_MBS, buf);
	snprintf(buf, sizeof(buf), "%llu", k->max_mbs);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_MAX_BANDWIDTH_MBS, buf);
	if (xgmi) {
		if (p->link_count >= 0)
			snprintf(buf, sizeof(buf), "%d", p->link_count);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XGMI_LINKS,
						  p->link_count >= 0 ? buf : "unknown");
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XGMI_LINKS_SOURCE, p->count_source);
	}
	snprintf(buf, sizeof(buf), "0x%llx", k->vendor_flags);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_FLAGS, buf);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ENABLED, yes(k->enabled));
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_COHERENT, yes(k->coherent));
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ATOMICS_32, yes(k->atomics_32));
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ATOMICS_64, yes(k->atomics_64));
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PEER_DMA, yes(k->peer_dma));
	const char *path = buf;
	if (!k->enabled)
		path = "NONE";
	else if (xgmi && p->link_count > 0)
		snprintf(buf, sizeof(buf), "XGMI%d", p->link_count);
	else if (xgmi)
		path = p->link_count < 0 ? "XGMI?" : "XGMI+";
	else
		path = type;
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PATH, path);
}

/* The link's capabilities as peer statuses: read and write by peer DMA,
 * atomics by both widths. */
static void link_status(const struct dc_link_info *k, unsigned char status[DC_PEER_CAPS])
{
	status[DC_PEER_READ] = status[DC_PEER_WRITE] = k->peer_dma ? DC_PEER_OK : DC_PEER_NS;
	status[DC_PEER_ATOMICS] = k->atomics_32 && k->atomics_64 ? DC_PEER_OK : DC_PEER_NS;
	status[DC_PEER_NVLINK] = DC_PEER_NS;
}

void dc_kfd_view_pairs(dmaconn_builder *b, const struct dc_model *m, const int *slots, int n,
		       const struct dc_connection *row)
{
	int xgmi = row->counts == DC_COUNTS_LINKS && (row->links & DC_LINKS_TO(DC_REMOTE_GPU));
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const struct dc_peer *p = &m->peers[dc_pair_index(slots[i], slots[j], m->n)];
			const struct dc_link_info *k = pair_link(m, slots[i], slots[j]);
			set_pair(b, i, j, k, p);
			unsigned char status[DC_PEER_CAPS];
			int value = 0;
			if (k && k->enabled && row->counts == DC_COUNTS_PEER) {
				link_status(k, status);
				value = dc_peer_ok(row->peer, status);
			} else if (k && k->enabled && xgmi && k->kind == DC_LINK_XGMI) {
				value = p->link_count > 0 ? p->link_count : p->link_count < 0 ? 1 : 0;
			}
			dmaconn_builder_set(b, i, j, value);
		}
	}
}
