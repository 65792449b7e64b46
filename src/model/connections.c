/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of built-in connection types (connections.h). */
#include "model/connections.h"

#include <string.h>

#include "internal.h"

#include "model/model.h"

#define DC_ALL_LINKS (DC_LINKS_TO(DC_REMOTE_GPU) | DC_LINKS_TO(DC_REMOTE_SWITCH))
#define DC_PEER_DMA (DC_PEER_NEEDS(DC_PEER_READ) | DC_PEER_NEEDS(DC_PEER_WRITE) | DC_PEER_NEEDS(DC_PEER_ATOMICS))

/* The texts of a row, in dmaconn_connection_text_kind's order. */
#define DC_TEXTS(value, source, title, paths, caps, status, torch) \
	.text = { (value), (source), (title), (paths), (caps), (status), (torch) }

const struct dc_connection dc_connections[] = {
	{
		DMACONN_DEVICE_CUDA, "nvlink", NULL, "cuda/nvlink", DC_COUNTS_LINKS, DC_ALL_LINKS, 0, DC_SWITCH_LINKS,
		DC_REASONS_CUDA,
		/* PyTorch's own detector answers (CUDA, "nvlink"): never replaced. */
		DC_TEXTS("number of NVLinks from GPU *i* to GPU *j*", "NVML", NULL, NULL, NULL, NULL, NULL) },
	{
		DMACONN_DEVICE_CUDA, "p2p", NULL, "cuda/p2p", DC_COUNTS_PEER, DC_ALL_LINKS, DC_PEER_DMA, DC_SWITCH_LINKS,
		DC_REASONS_CUDA,
		DC_TEXTS("1 when NVML reports peer read, write **and** atomics OK", "NVML", NULL,
			 "Paths: X = self; NV# = # bonded NVLinks; PIX = at most one PCIe bridge;\n"
			 "PXB = several PCIe bridges, no host bridge; PHB = through a PCIe host bridge;\n"
			 "NODE = between host bridges of one NUMA node; SYS = across NUMA nodes;\n"
			 "? = NVML gives no PCIe path; - = no answer.\n",
			 "Peer capabilities (DMA = load/store and atomics all OK):",
			 "\nStatus: OK = supported; CNS = chipset not supported; GNS = GPU not supported;\n"
			 "TNS = topology not supported; DR = disabled by the driver's registry key;\n"
			 "NS = not supported; U = unknown.",
			 "CUDA") },
	{
		DMACONN_DEVICE_CUDA, "multicast", NULL, "cuda/multicast", DC_COUNTS_DOMAIN, 0, 0, DC_SWITCH_DOMAIN,
		DC_REASONS_MULTICAST,
		DC_TEXTS("1 when GPUs *i* and *j* can join one NVLink SHARP multicast object (symmetric memory)",
			 "NVML (below)", "Multicast (cuda/multicast: one NVLink SHARP object, as symmetric memory needs):",
			 NULL, NULL, NULL, "CUDA") },
	{
		DMACONN_DEVICE_CUDA, "verified", "cuda_verify", "cuda/verified", DC_COUNTS_VERIFIED, 0, 0,
		DC_SWITCH_NONE,
		DC_REASONS_SUSPECTS,
		DC_TEXTS("1 where read, write, 32- and 64-bit atomics were each proven by a kernel, data checked",
			 "the `--verify` helper, or its cached verdict", NULL, NULL, NULL, NULL, "CUDA") },
	{
		DMACONN_DEVICE_ROCM, "infinity_fabric", NULL, "rocm/infinity_fabric", DC_COUNTS_LINKS,
		DC_LINKS_TO(DC_REMOTE_GPU), 0, DC_SWITCH_NONE, DC_REASONS_ROCM,
		DC_TEXTS("number of direct XGMI links between GPU *i* and *j*", "amdgpu KFD topology (sysfs)", NULL, NULL,
			 NULL, NULL, "HIP") },
	{
		DMACONN_DEVICE_ROCM, "p2p", NULL, "rocm/p2p", DC_COUNTS_PEER, DC_LINKS_TO(DC_REMOTE_GPU), DC_PEER_DMA,
		DC_SWITCH_NONE,
		DC_REASONS_ROCM,
		DC_TEXTS("1 when peer DMA and 32- and 64-bit atomics are supported", "amdgpu KFD topology (sysfs)", NULL,
			 "Paths: X = self; XGMI# = # direct XGMI (Infinity Fabric) links; XGMI+ = XGMI\n"
			 "through other GPUs; XGMI? = XGMI, link count not reported (partitioned GPUs);\n"
			 "PCIE = peer access over PCIe; NONE = no peer link; - = no answer.\n",
			 "Peer capabilities (DMA = peer DMA and 32- and 64-bit atomics all supported):", NULL, "HIP") },
	{
		DMACONN_DEVICE_XPU, "p2p", NULL, "xpu/p2p", DC_COUNTS_PEER, DC_LINKS_TO(DC_REMOTE_GPU), DC_PEER_DMA,
		DC_SWITCH_NONE,
		DC_REASONS_XPU,
		DC_TEXTS("1 when Level Zero reports peer access and atomics", "Level Zero", NULL,
			 "Paths: X = self; XL# = # Xe Link connections (fabric edges); MDFI = the die-to-die\n"
			 "link between two tiles of one card; - = no fabric edge (PCIe, or no answer).\n",
			 "Peer capabilities (DMA = Level Zero P2P ACCESS and ATOMICS):", NULL, "XPU") },
	{
		DMACONN_DEVICE_XPU, "xelink", NULL, "xpu/xelink", DC_COUNTS_LINKS, DC_LINKS_TO(DC_REMOTE_GPU), 0,
		DC_SWITCH_NONE, DC_REASONS_XPU,
		DC_TEXTS("number of Xe Link connections between devices *i* and *j*", "Level Zero fabric topology", NULL,
			 NULL, NULL, NULL, "XPU") },
};

const int dc_nconnections = (int)(sizeof(dc_connections) / sizeof(dc_connections[0]));

const struct dc_connection *dc_connection_find(dmaconn_device_type type, const char *name)
{
	for (int k = 0; name && k < dc_nconnections; k++)
		if (dc_connections[k].type == type && !strcmp(dc_connections[k].name, name))
			return &dc_connections[k];
	return NULL;
}

/* Whether backend be serves row c: the row names it, or names none and be
 * is the first backend of its device type. */
static int served(const struct dc_connection *c, const struct dc_backend *be)
{
	if (c->type != be->type)
		return 0;
	if (c->backend)
		return !strcmp(c->backend, be->name);
	const struct dc_backend *const *first = dc_backends;
	while (*first && (*first)->type != c->type)
		first++;
	return *first == be;
}

const struct dc_connection *dc_connection_next(const struct dc_backend *be, const struct dc_connection *after)
{
	for (int k = after ? (int)(after - dc_connections) + 1 : 0; be && k < dc_nconnections; k++)
		if (served(&dc_connections[k], be))
			return &dc_connections[k];
	return NULL;
}

const struct dc_connection *dc_connection_of(const dmaconn_builder *b)
{
	if (!b || !b->r)
		return NULL;
	return dc_connection_find(dmaconn_result_device_type(b->r), dmaconn_result_connection_type(b->r));
}

int dc_connection_view(dmaconn_builder *b, struct dc_model *(*get)(void), dc_model_view *view)
{
	int rc;
	struct dc_model *m = dc_view_model(get, &rc);
	if (!m)
		return rc;
	rc = view(b, m, dc_connection_of(b));
	dc_model_release(m);
	return rc;
}

const char *dmaconn_connection_text(dmaconn_device_type type, const char *connection, dmaconn_connection_text_kind kind)
{
	const struct dc_connection *c = dc_connection_find(type, connection);
	return c && (int)kind >= 0 && kind < DMACONN_CONNECTION_TEXTS ? c->text[kind] : NULL;
}
