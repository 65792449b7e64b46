/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The properties the built-in detectors (and libdmaconn_mpi) set, declared
 * once.  Included by dmaconn.h; not meant to be included alone.
 *
 * Each row of DMACONN_PROPERTIES is X(NAME, key, type, scope, unit, doc):
 *   NAME   the constant DMACONN_PROP_NAME (defined below) that spells key;
 *   type   how the value reads (DMACONN_TYPE_*, dmaconn.h): the typed
 *          getters, the JSON document's typing (`dmaconn --json`, Python's
 *          as_dict()) and docs/dmaconn.schema.json follow it;
 *   scope  DEVICE (dmaconn_result_device_*) or PAIR (dmaconn_result_pair_*);
 *   unit   of a number ("" when none);
 *   doc    one line for people.
 * Values stay strings in the result (dmaconn_result_device_get); the type
 * says what the text holds.
 *
 * A new property is one row here; then `make props` (tools/gen_props.py)
 * rewrites the generated block at the end of this file, the schema and the
 * documentation table, and the `props_generated` test fails until it has.
 */
#ifndef DMACONN_PROPS_H
#define DMACONN_PROPS_H

/* clang-format off */
#define DMACONN_PROPERTIES(X) \
	/* Every device type. */ \
	X(NAME, "name", STRING, DEVICE, "", "marketing or product name") \
	X(PCI_BUS_ID, "pci_bus_id", STRING, DEVICE, "", "\"dddd:bb:dd.f\", lower case") \
	X(UUID, "uuid", STRING, DEVICE, "", "\"GPU-...\", \"MIG-...\"") \
	/* cuda devices (NVML). */ \
	X(NVML_INDEX, "nvml_index", INT, DEVICE, "", "NVML's index of the GPU") \
	X(MINOR_NUMBER, "minor_number", INT, DEVICE, "", "N of /dev/nvidiaN, not always the NVML index") \
	X(COMPUTE_CAPABILITY, "compute_capability", VERSION, DEVICE, "", "\"9.0\"") \
	X(MIG, "mig", STRING, DEVICE, "", "\"enabled\", \"disabled\", \"instance\"") \
	X(MIG_PARENT_UUID, "mig_parent_uuid", STRING, DEVICE, "", "a MIG instance's GPU") \
	X(NVLINK_ACTIVE_LINKS, "nvlink_active_links", INT, DEVICE, "", "NVLinks of the GPU that are active") \
	X(NVLINK_SWITCH_LINKS, "nvlink_switch_links", INT, DEVICE, "", "active links to NVSwitches") \
	X(FABRIC_STATE, "fabric_state", STRING, DEVICE, "", "\"not_supported\", ..., \"completed\"") \
	X(FABRIC_STATUS, "fabric_status", STRING, DEVICE, "", "NVML's return name, e.g. \"NVML_SUCCESS\"") \
	X(CLUSTER_UUID, "cluster_uuid", STRING, DEVICE, "", "NVLink domain (with clique_id)") \
	X(CLIQUE_ID, "clique_id", INT, DEVICE, "", "NVLink clique within the domain") \
	X(FABRIC_HEALTH_MASK, "fabric_health_mask", HEX, DEVICE, "", "NVML's mask, hexadecimal") \
	X(FABRIC_HEALTH_SUMMARY, "fabric_health_summary", STRING, DEVICE, "", "\"healthy\", \"unhealthy\", ...") \
	X(NVLINK_INACTIVE_LINKS, "nvlink_inactive_links", LIST, DEVICE, "", "\"3,7\": links not active") \
	X(NVLINK_DOWN_LINKS, "nvlink_down_links", LIST, DEVICE, "", "\"5,11\": inactive links another GPU of its model has active (down)") \
	X(NVLINK_SPEEDS_MBPS, "nvlink_speeds_mbps", RUNS, DEVICE, "MB/s", "NVML's speed of each active link per direction, as runs of links at one speed: \"0-4:53125,5:26562\"") \
	X(BAR1_MIB, "bar1_mib", INT_STRING, DEVICE, "MiB", "BAR1 size") \
	X(VIRTUALIZATION_MODE, "virtualization_mode", STRING, DEVICE, "", "\"none\", \"passthrough\", \"vgpu\", ...") \
	X(CONFIDENTIAL_COMPUTING, "confidential_computing", STRING, DEVICE, "", "\"on\", \"off\"") \
	X(IOMMU_GROUP_TYPE, "iommu_group_type", STRING, DEVICE, "", "the kernel's: \"DMA\", \"DMA-FQ\", \"identity\"") \
	X(HYPERVISOR, "hypervisor", STRING, DEVICE, "", "what shows the node is a virtual machine") \
	X(NUMA_NODE, "numa_node", INT, DEVICE, "", "the kernel's NUMA node of the GPU (sysfs)") \
	/* cuda/multicast: NVLink SHARP multicast objects, judged from NVML \
	 * alone (dmaconn.h, "Why a pair is 0", for the order of causes). */ \
	X(MULTICAST_SUPPORTED, "multicast_supported", INT, DEVICE, "", "1 or 0: the GPU can join a multicast object") \
	X(MULTICAST_REASON, "multicast_reason", STRING, DEVICE, "", "with multicast_supported 0: a DMACONN_REASON_ code") \
	X(FABRIC_INFO_VERSION, "fabric_info_version", STRING, DEVICE, "", "the fabric struct the driver answered: \"v4\", \"v3\", \"v2\", \"v1\"") \
	X(FABRIC_CLIQUES, "fabric_cliques", CLIQUES, DEVICE, "", "v4's typed cliques: unicast_pointer, multicast_pointer, unicast_logical_endpoint, multicast_logical_endpoint") \
	X(MULTICAST_CLIQUE_ID, "multicast_clique_id", INT, DEVICE, "", "the clique multicast follows: v4's first multicast_pointer, else multicast_logical_endpoint, else clique_id") \
	/* rocm devices (KFD). */ \
	X(KFD_NODE, "kfd_node", INT, DEVICE, "", "the KFD topology's node") \
	X(KFD_NAME, "kfd_name", STRING, DEVICE, "", "the KFD topology's name of the node") \
	X(GFX_TARGET_VERSION, "gfx_target_version", INT, DEVICE, "", "the KFD's gfx_target_version, e.g. 90402") \
	X(GFX_ARCH, "gfx_arch", STRING, DEVICE, "", "\"gfx942\"") \
	X(MARKETING_NAME, "marketing_name", STRING, DEVICE, "", "the product name") \
	X(PCI_DEVICE_ID, "pci_device_id", HEX, DEVICE, "", "\"0x74a1\"") \
	X(HIVE_ID, "hive_id", HEX, DEVICE, "", "XGMI hive, hexadecimal") \
	X(PARTITION, "partition", INT, DEVICE, "", "index of a partitioned GPU's part") \
	X(PARTITIONS, "partitions", INT, DEVICE, "", "parts of a partitioned GPU") \
	/* xpu devices (Level Zero). */ \
	X(LEVEL_ZERO_DRIVER, "level_zero_driver", INT, DEVICE, "", "index of the Level Zero driver") \
	X(LEVEL_ZERO_INDEX, "level_zero_index", INT, DEVICE, "", "index of the device in its driver") \
	X(TILE, "tile", INT, DEVICE, "", "the tile a device of the flat hierarchy is") \
	X(TILES, "tiles", INT, DEVICE, "", "tiles of the card") \
	/* Devices of a libdmaconn_mpi result. */ \
	X(RANK, "rank", INT, DEVICE, "", "the MPI rank that sees the device") \
	X(HOST, "host", STRING, DEVICE, "", "the node's identity (dmaconn_host_id)") \
	X(NODE, "node", INT, DEVICE, "", "index of the node") \
	X(LOCAL_ORDINAL, "local_ordinal", INT, DEVICE, "", "the device's ordinal in its rank") \
	/* Pairs (i -> j). */ \
	X(PATH, "path", STRING, PAIR, "", "NV#, PIX, ..., XGMI#, NONE") \
	X(READ, "read", STRING, PAIR, "", "OK, CNS, GNS, TNS, NS, DR, U") \
	X(WRITE, "write", STRING, PAIR, "", "as read") \
	X(ATOMICS, "atomics", STRING, PAIR, "", "as read") \
	X(NVLINK, "nvlink", STRING, PAIR, "", "as read") \
	X(NVLINK_LINKS, "nvlink_links", INT, PAIR, "", "NVLinks between the pair") \
	X(NVLINK_DIRECT_LINKS, "nvlink_direct_links", INT, PAIR, "", "cuda/nvlink: GPU-to-GPU links of the pair") \
	X(NVLINK_GBPS, "nvlink_gbps", NUMBER, PAIR, "GB/s", "per direction, one decimal") \
	X(NVLINK_RATE_SOURCE, "nvlink_rate_source", STRING, PAIR, "", "where nvlink_gbps comes from") \
	X(LINK_TYPE, "link_type", STRING, PAIR, "", "XGMI, PCIE, NONE, ...") \
	X(KFD_LINK, "kfd_link", STRING, PAIR, "", "\"io_links\", \"p2p_links\"") \
	X(HOPS, "hops", INT, PAIR, "", "the KFD link's hops") \
	X(WEIGHT, "weight", INT, PAIR, "", "the KFD link's weight") \
	X(MIN_BANDWIDTH_MBS, "min_bandwidth_mbs", INT, PAIR, "MB/s", "the KFD link's minimum bandwidth") \
	X(MAX_BANDWIDTH_MBS, "max_bandwidth_mbs", INT, PAIR, "MB/s", "the KFD link's maximum bandwidth") \
	X(XGMI_LINKS, "xgmi_links", INT, PAIR, "", "XGMI links of the pair, or \"unknown\"") \
	X(XGMI_LINKS_SOURCE, "xgmi_links_source", STRING, PAIR, "", "what xgmi_links was counted from") \
	X(FLAGS, "flags", HEX, PAIR, "", "KFD io_link flags, hexadecimal") \
	X(ENABLED, "enabled", BOOL, PAIR, "", "\"yes\", \"no\"") \
	X(COHERENT, "coherent", BOOL, PAIR, "", "the link is cache coherent") \
	X(ATOMICS_32, "atomics_32", BOOL, PAIR, "", "32-bit atomics over the link") \
	X(ATOMICS_64, "atomics_64", BOOL, PAIR, "", "64-bit atomics over the link") \
	X(PEER_DMA, "peer_dma", BOOL, PAIR, "", "peer DMA over the link") \
	X(P2P_FLAGS, "p2p_flags", STRING, PAIR, "", "Level Zero's peer flags, \"ACCESS|ATOMICS\"") \
	X(XELINK_LINKS, "xelink_links", INT, PAIR, "", "XeLink edges between the pair") \
	X(XELINK_GBPS, "xelink_gbps", NUMBER, PAIR, "GB/s", "design bandwidth of the XeLinks") \
	X(XELINK_BANDWIDTH, "xelink_bandwidth", STRING, PAIR, "", "bandwidth in Level Zero's other unit, \"N bytes/clock\"") \
	X(XELINK_LATENCY, "xelink_latency", STRING, PAIR, "", "\"1 hop\", \"N ns\", \"N clocks\"") \
	X(XELINK_DUPLEXITY, "xelink_duplexity", STRING, PAIR, "", "\"full\", \"half\", \"mixed\", \"unknown\"") \
	X(MDFI_LINKS, "mdfi_links", INT, PAIR, "", "MDFI edges between two tiles of a card") \
	/* Pairs of cuda/verified (dmaconn.h, "Pairs of cuda/verified"). */ \
	X(VERIFIED, "verified", STRING, PAIR, "", "\"pass\", \"fail\", \"no_peer\", \"hang\", \"not_verified\"") \
	X(READ_ADVERTISED, "read_advertised", STRING, PAIR, "", "\"yes\"/\"no\": the driver's peer access") \
	X(READ_VERIFIED, "read_verified", STRING, PAIR, "", "\"yes\", \"no\", \"not_run\"") \
	X(WRITE_ADVERTISED, "write_advertised", STRING, PAIR, "", "\"yes\"/\"no\": the driver's peer access") \
	X(WRITE_VERIFIED, "write_verified", STRING, PAIR, "", "\"yes\", \"no\", \"not_run\"") \
	X(ATOMICS_32_ADVERTISED, "atomics_32_advertised", STRING, PAIR, "", "\"yes\"/\"no\": the driver's native atomics") \
	X(ATOMICS_32_VERIFIED, "atomics_32_verified", STRING, PAIR, "", "\"yes\", \"no\", \"not_run\"") \
	X(ATOMICS_64_ADVERTISED, "atomics_64_advertised", STRING, PAIR, "", "\"yes\"/\"no\": the driver's native atomics") \
	X(ATOMICS_64_VERIFIED, "atomics_64_verified", STRING, PAIR, "", "\"yes\", \"no\", \"not_run\"") \
	X(GBPS, "gbps", NUMBER, PAIR, "GB/s", "measured copy bandwidth, decimal") \
	X(LATENCY_US, "latency_us", NUMBER, PAIR, "us", "measured 4-byte copy latency") \
	X(PCIE_BRIDGES, "pcie_bridges", STRING, PAIR, "", "the bridges between the pair, from sysfs") \
	X(ACS_REDIRECT, "acs_redirect", STRING, PAIR, "", "bridges of the path redirecting peer requests") \
	/* Pairs of dmaconn_verify() (dmaconn.h, "Verification"). */ \
	X(CAN_ACCESS_PEER, "can_access_peer", BOOL, PAIR, "", "the CUDA driver grants peer access") \
	X(ACCESS_SUPPORTED, "access_supported", BOOL, PAIR, "", "the driver's peer access attribute") \
	X(NATIVE_ATOMICS, "native_atomics", BOOL, PAIR, "", "the driver's native atomics attribute") \
	X(PERFORMANCE_RANK, "performance_rank", INT, PAIR, "", "the driver's relative performance of the link") \
	/* Why a pair is 0 (dmaconn.h, "Why a pair is 0"). */ \
	X(REASON, "reason", STRING, PAIR, "", "a DMACONN_REASON_ code") \
	X(REASON_TEXT, "reason_text", STRING, PAIR, "", "one line for people")
/* clang-format on */

/* Generated from DMACONN_PROPERTIES by tools/gen_props.py: do not edit. */
/* BEGIN GENERATED */
#define DMACONN_PROP_NAME "name"
#define DMACONN_PROP_PCI_BUS_ID "pci_bus_id"
#define DMACONN_PROP_UUID "uuid"
#define DMACONN_PROP_NVML_INDEX "nvml_index"
#define DMACONN_PROP_MINOR_NUMBER "minor_number"
#define DMACONN_PROP_COMPUTE_CAPABILITY "compute_capability"
#define DMACONN_PROP_MIG "mig"
#define DMACONN_PROP_MIG_PARENT_UUID "mig_parent_uuid"
#define DMACONN_PROP_NVLINK_ACTIVE_LINKS "nvlink_active_links"
#define DMACONN_PROP_NVLINK_SWITCH_LINKS "nvlink_switch_links"
#define DMACONN_PROP_FABRIC_STATE "fabric_state"
#define DMACONN_PROP_FABRIC_STATUS "fabric_status"
#define DMACONN_PROP_CLUSTER_UUID "cluster_uuid"
#define DMACONN_PROP_CLIQUE_ID "clique_id"
#define DMACONN_PROP_FABRIC_HEALTH_MASK "fabric_health_mask"
#define DMACONN_PROP_FABRIC_HEALTH_SUMMARY "fabric_health_summary"
#define DMACONN_PROP_NVLINK_INACTIVE_LINKS "nvlink_inactive_links"
#define DMACONN_PROP_NVLINK_DOWN_LINKS "nvlink_down_links"
#define DMACONN_PROP_NVLINK_SPEEDS_MBPS "nvlink_speeds_mbps"
#define DMACONN_PROP_BAR1_MIB "bar1_mib"
#define DMACONN_PROP_VIRTUALIZATION_MODE "virtualization_mode"
#define DMACONN_PROP_CONFIDENTIAL_COMPUTING "confidential_computing"
#define DMACONN_PROP_IOMMU_GROUP_TYPE "iommu_group_type"
#define DMACONN_PROP_HYPERVISOR "hypervisor"
#define DMACONN_PROP_NUMA_NODE "numa_node"
#define DMACONN_PROP_MULTICAST_SUPPORTED "multicast_supported"
#define DMACONN_PROP_MULTICAST_REASON "multicast_reason"
#define DMACONN_PROP_FABRIC_INFO_VERSION "fabric_info_version"
#define DMACONN_PROP_FABRIC_CLIQUES "fabric_cliques"
#define DMACONN_PROP_MULTICAST_CLIQUE_ID "multicast_clique_id"
#define DMACONN_PROP_KFD_NODE "kfd_node"
#define DMACONN_PROP_KFD_NAME "kfd_name"
#define DMACONN_PROP_GFX_TARGET_VERSION "gfx_target_version"
#define DMACONN_PROP_GFX_ARCH "gfx_arch"
#define DMACONN_PROP_MARKETING_NAME "marketing_name"
#define DMACONN_PROP_PCI_DEVICE_ID "pci_device_id"
#define DMACONN_PROP_HIVE_ID "hive_id"
#define DMACONN_PROP_PARTITION "partition"
#define DMACONN_PROP_PARTITIONS "partitions"
#define DMACONN_PROP_LEVEL_ZERO_DRIVER "level_zero_driver"
#define DMACONN_PROP_LEVEL_ZERO_INDEX "level_zero_index"
#define DMACONN_PROP_TILE "tile"
#define DMACONN_PROP_TILES "tiles"
#define DMACONN_PROP_RANK "rank"
#define DMACONN_PROP_HOST "host"
#define DMACONN_PROP_NODE "node"
#define DMACONN_PROP_LOCAL_ORDINAL "local_ordinal"
#define DMACONN_PROP_PATH "path"
#define DMACONN_PROP_READ "read"
#define DMACONN_PROP_WRITE "write"
#define DMACONN_PROP_ATOMICS "atomics"
#define DMACONN_PROP_NVLINK "nvlink"
#define DMACONN_PROP_NVLINK_LINKS "nvlink_links"
#define DMACONN_PROP_NVLINK_DIRECT_LINKS "nvlink_direct_links"
#define DMACONN_PROP_NVLINK_GBPS "nvlink_gbps"
#define DMACONN_PROP_NVLINK_RATE_SOURCE "nvlink_rate_source"
#define DMACONN_PROP_LINK_TYPE "link_type"
#define DMACONN_PROP_KFD_LINK "kfd_link"
#define DMACONN_PROP_HOPS "hops"
#define DMACONN_PROP_WEIGHT "weight"
#define DMACONN_PROP_MIN_BANDWIDTH_MBS "min_bandwidth_mbs"
#define DMACONN_PROP_MAX_BANDWIDTH_MBS "max_bandwidth_mbs"
#define DMACONN_PROP_XGMI_LINKS "xgmi_links"
#define DMACONN_PROP_XGMI_LINKS_SOURCE "xgmi_links_source"
#define DMACONN_PROP_FLAGS "flags"
#define DMACONN_PROP_ENABLED "enabled"
#define DMACONN_PROP_COHERENT "coherent"
#define DMACONN_PROP_ATOMICS_32 "atomics_32"
#define DMACONN_PROP_ATOMICS_64 "atomics_64"
#define DMACONN_PROP_PEER_DMA "peer_dma"
#define DMACONN_PROP_P2P_FLAGS "p2p_flags"
#define DMACONN_PROP_XELINK_LINKS "xelink_links"
#define DMACONN_PROP_XELINK_GBPS "xelink_gbps"
#define DMACONN_PROP_XELINK_BANDWIDTH "xelink_bandwidth"
#define DMACONN_PROP_XELINK_LATENCY "xelink_latency"
#define DMACONN_PROP_XELINK_DUPLEXITY "xelink_duplexity"
#define DMACONN_PROP_MDFI_LINKS "mdfi_links"
#define DMACONN_PROP_VERIFIED "verified"
#define DMACONN_PROP_READ_ADVERTISED "read_advertised"
#define DMACONN_PROP_READ_VERIFIED "read_verified"
#define DMACONN_PROP_WRITE_ADVERTISED "write_advertised"
#define DMACONN_PROP_WRITE_VERIFIED "write_verified"
#define DMACONN_PROP_ATOMICS_32_ADVERTISED "atomics_32_advertised"
#define DMACONN_PROP_ATOMICS_32_VERIFIED "atomics_32_verified"
#define DMACONN_PROP_ATOMICS_64_ADVERTISED "atomics_64_advertised"
#define DMACONN_PROP_ATOMICS_64_VERIFIED "atomics_64_verified"
#define DMACONN_PROP_GBPS "gbps"
#define DMACONN_PROP_LATENCY_US "latency_us"
#define DMACONN_PROP_PCIE_BRIDGES "pcie_bridges"
#define DMACONN_PROP_ACS_REDIRECT "acs_redirect"
#define DMACONN_PROP_CAN_ACCESS_PEER "can_access_peer"
#define DMACONN_PROP_ACCESS_SUPPORTED "access_supported"
#define DMACONN_PROP_NATIVE_ATOMICS "native_atomics"
#define DMACONN_PROP_PERFORMANCE_RANK "performance_rank"
#define DMACONN_PROP_REASON "reason"
#define DMACONN_PROP_REASON_TEXT "reason_text"
/* END GENERATED */

#endif
