/* SPDX-License-Identifier: BSD-3-Clause */
/* Device order as the CUDA runtime shows it, without asking CUDA. */
#ifndef DMACONN_ORDER_H
#define DMACONN_ORDER_H

#include "../pci.h"

#define DC_UUID_SIZE 96
#define DC_NAME_SIZE 96

struct dc_gpu {
	char uuid[DC_UUID_SIZE]; /* "GPU-...", empty when unknown */
	char name[DC_NAME_SIZE];
	struct dc_pci pci;
	int cc_major, cc_minor; /* -1 when unknown */
	int numa_node;          /* dc_sysfs_numa_node(): -1 none, -2 unread */
};

enum { DC_SLOT_MIG = -1, DC_SLOT_UNKNOWN = -2 };

/* A MIG instance the vendor lists: a compute instance of a GPU instance of
 * a GPU in MIG mode, a CUDA device of its own. */
struct dc_mig {
	char uuid[DC_UUID_SIZE]; /* "MIG-..." */
	int parent;              /* index of its GPU in the list */
	int gi, ci;              /* GPU and compute instance ids, -1 unknown */
};

/* One CUDA ordinal: a GPU of the list, a MIG instance, or (uuids unknown) a
 * GPU named by a UUID that cannot be resolved. */
struct dc_slot {
	int index; /* into the GPU list, or DC_SLOT_MIG / DC_SLOT_UNKNOWN */
	int parent; /* DC_SLOT_MIG: the instance's GPU, -1 unknown */
	char uuid[DC_UUID_SIZE];
};

/*
 * Applies CUDA_DEVICE_ORDER (`order`, NULL = FASTEST_FIRST) and
 * CUDA_VISIBLE_DEVICES (`visible`, NULL = all) to the n GPUs.
 * FASTEST_FIRST: identical GPUs in PCI order; mixed GPUs by compute
 * capability, highest first, then PCI order, and *guessed is set when that
 * guess decided an ordinal.  CUDA_VISIBLE_DEVICES: comma-separated integer
 * indices, "GPU-" UUIDs or unique prefixes, MIG instances; surrounding
 * blanks ignored; parsing stops at the first invalid, out-of-range,
 * ambiguous, unmatched or repeated entry; "" and "-1" give none.
 *
 * A MIG entry names one of the nmigs instances listed in migs, by its UUID
 * ("MIG-<uuid>", drivers from R470 on; case ignored, no prefixes) or by its
 * GPU's full UUID and its GPU and compute instance ids
 * ("MIG-GPU-<uuid>/<gi>/<ci>", the form of R450/R460).  CUDA enumerates a
 * single MIG instance per process: a second MIG entry, like an unmatched
 * one, ends the list.
 *
 * With uuids_known 0 (no vendor library), a well-formed UUID entry (GPU or
 * MIG, one MIG at most) takes a slot while GPUs remain.  Returns the number
 * of slots (*slots malloc'd, caller frees), or -1 when out of memory.
 */
int dc_cuda_visible(const struct dc_gpu *gpus, int n, const struct dc_mig *migs, int nmigs,
		    int uuids_known, const char *order, const char *visible, struct dc_slot **slots,
		    int *guessed);

/*
 * Device order as HIP shows AMD GPUs (order_hip.c), without asking ROCr or
 * HIP.  The n GPUs are given in KFD node order, by their KFD unique_id (0 when
 * the kernel reports none).  ROCR_VISIBLE_DEVICES (`rocr`, NULL = unset)
 * first, as ROCr's device filter does: set but empty hides every GPU;
 * otherwise comma-separated tokens, blanks around them ignored and case
 * ignored, at most n of them evaluated: a token starting with 'G' is a UUID
 * ("GPU-" and 16 hex digits of unique_id) or a unique prefix of one, 5 to 20
 * characters; any other is an integer (C syntax: 0x1f and 017 too); the
 * first unmatched, ambiguous, out-of-range or repeated token ends the list,
 * and an empty token leaves ROCr without devices.  Then HIP_VISIBLE_DEVICES
 * (`hip`), or CUDA_VISIBLE_DEVICES (`cuda`) when that is unset or empty,
 * indexes the GPUs ROCr left, as HIP does: exact decimal indices ("1", not
 * " 1" or "01") or a string found inside a GPU's "GPU-<16 lower-case hex>"
 * UUID ("GPU-XX" for unique_id 0), which selects the first such GPU; the
 * first invalid entry ends the list and repeated ones are skipped.
 * Returns the number of visible GPUs and *order, their indices into the n
 * (malloc'd, caller frees), or -1 when out of memory.
 */
int dc_hip_visible(const unsigned long long *unique_ids, int n, const char *rocr,
		   const char *hip, const char *cuda, int **order);

#endif
