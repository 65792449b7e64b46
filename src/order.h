/* Device order as the CUDA runtime shows it, without asking CUDA. */
#ifndef DMACONN_ORDER_H
#define DMACONN_ORDER_H

#include "pci.h"

#define DC_UUID_SIZE 96
#define DC_NAME_SIZE 96

struct dc_gpu {
	char uuid[DC_UUID_SIZE]; /* "GPU-...", empty when unknown */
	char name[DC_NAME_SIZE];
	struct dc_pci pci;
	int cc_major, cc_minor; /* -1 when unknown */
};

enum { DC_SLOT_MIG = -1, DC_SLOT_UNKNOWN = -2 };

/* One CUDA ordinal: a GPU of the list, a MIG instance, or (uuids unknown) a
 * GPU named by a UUID that cannot be resolved. */
struct dc_slot {
	int index; /* into the GPU list, or DC_SLOT_MIG / DC_SLOT_UNKNOWN */
	char uuid[DC_UUID_SIZE];
};

/*
 * Applies CUDA_DEVICE_ORDER (`order`, NULL = FASTEST_FIRST) and
 * CUDA_VISIBLE_DEVICES (`visible`, NULL = all) to the n GPUs.
 * FASTEST_FIRST: identical GPUs in PCI order; mixed GPUs by compute
 * capability, highest first, then PCI order, and *guessed is set when that
 * guess decided an ordinal.  CUDA_VISIBLE_DEVICES: comma-separated integer
 * indices, "GPU-" UUIDs or unique prefixes, "MIG-" instances; surrounding
 * blanks ignored; parsing stops at the first invalid, out-of-range,
 * ambiguous, unmatched or repeated entry; "" and "-1" give none.  With
 * uuids_known 0 (no vendor library), a well-formed UUID entry takes a slot
 * while GPUs remain.  Returns the number of slots (*slots malloc'd, caller
 * frees), or -1 when out of memory.
 */
int dc_cuda_visible(const struct dc_gpu *gpus, int n, int uuids_known, const char *order,
		    const char *visible, struct dc_slot **slots, int *guessed);

#endif
