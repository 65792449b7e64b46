/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dc_cuda_visible(): CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER against a GPU
 * list that the input also chooses.
 *
 * Input: byte 0 = the order (PCI_BUS_ID, FASTEST_FIRST, unset, garbage),
 * byte 1 = number of GPUs (mod 17) and whether UUIDs are known, then per GPU
 * 3 bytes (model, compute capability, PCI bus); the rest is the value of
 * CUDA_VISIBLE_DEVICES (unset when it starts with 0xff).
 *
 * Every slot must be a GPU of the list (each at most once), a MIG instance
 * (at most one; with UUIDs known, one of the listed instances, of a GPU of
 * the list) or (UUIDs unknown) an unresolved UUID, and there are never more
 * GPU slots than GPUs.  Each GPU has one MIG instance, gi 1 and ci 0, named
 * after its UUID ("MIG-" and the GPU's UUID past "GPU-").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order/order.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const models[] = { "NVIDIA H100 80GB HBM3", "NVIDIA H200", "Tesla V100-SXM2-32GB",
				      "NVIDIA A100-SXM4-80GB" };
/* Prefix-sharing UUIDs, so that "GPU-" prefixes can be ambiguous. */
static const char *const uuids[] = { "GPU-3f8a2c61-7d04-e9b5-1a6c-28e47f09b3d5",
				     "GPU-3f8a5b90-e26d-c471-8f3a-9b0c65e12d78",
				     "GPU-c41d9e07-58b2-a36f-0e91-d7b5426c8fa3",
				     "GPU-7a62e0f9-1c85-4b3d-96e2-0fd81b3a5c47" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	static const char *const orders[] = { "PCI_BUS_ID", "FASTEST_FIRST", NULL, "pci_bus_id" };
	const char *order = orders[data[0] & 3];
	int n = data[1] % 17, uuids_known = (data[1] & 0x80) != 0;
	size_t pos = 2;
	struct dc_gpu *gpus = calloc((size_t)n + 1, sizeof(*gpus));
	if (!gpus)
		return 0;
	for (int i = 0; i < n; i++) {
		uint8_t m = pos < size ? data[pos] : 0, cc = pos + 1 < size ? data[pos + 1] : 0,
			bus = pos + 2 < size ? data[pos + 2] : (uint8_t)i;
		pos += 3;
		snprintf(gpus[i].name, sizeof(gpus[i].name), "%s", models[m & 3]);
		snprintf(gpus[i].uuid, sizeof(gpus[i].uuid), "%s%s", uuids[(m >> 2) & 3],
			 (m & 0x10) ? "" : (const char *[]){ "0", "1", "2", "3" }[i & 3]);
		gpus[i].cc_major = (cc & 0x80) ? -1 : cc >> 4;
		gpus[i].cc_minor = (cc & 0x80) ? -1 : cc & 15;
		gpus[i].pci = (struct dc_pci){ (unsigned int)(m >> 5), bus, (unsigned int)(i & 31), 0 };
	}
	struct dc_mig *migs = calloc((size_t)n + 1, sizeof(*migs));
	if (!migs) {
		free(gpus);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		snprintf(migs[i].uuid, sizeof(migs[i].uuid), "MIG-%s", gpus[i].uuid + 4);
		migs[i].parent = i;
		migs[i].gi = 1;
		migs[i].ci = 0;
	}
	char *visible = NULL;
	if (pos > size)
		pos = size;
	if (pos == size || data[pos] != 0xff) {
		visible = malloc(size - pos + 1);
		if (!visible) {
			free(gpus);
			free(migs);
			return 0;
		}
		memcpy(visible, data + pos, size - pos);
		visible[size - pos] = '\0';
	}
	struct dc_slot *slots = NULL;
	int guessed = -1;
	int count = dc_cuda_visible(gpus, n, migs, n, uuids_known, order, visible, &slots, &guessed);
	if (count >= 0) {
		int gpu_slots = 0, mig_slots = 0;
		char *seen = calloc((size_t)n + 1, 1);
		for (int k = 0; seen && k < count; k++) {
			int idx = slots[k].index;
			if (idx >= n || (idx < 0 && idx != DC_SLOT_MIG && idx != DC_SLOT_UNKNOWN))
				abort();
			if (idx == DC_SLOT_UNKNOWN && uuids_known)
				abort(); /* with UUIDs known every UUID entry resolves or stops */
			if (idx >= 0 && seen[idx]++)
				abort();
			if (memchr(slots[k].uuid, '\0', sizeof(slots[k].uuid)) == NULL)
				abort();
			gpu_slots += idx != DC_SLOT_MIG;
			mig_slots += idx == DC_SLOT_MIG;
			if (idx == DC_SLOT_MIG && uuids_known &&
			    (slots[k].parent < 0 || slots[k].parent >= n ||
			     strcmp(slots[k].uuid, migs[slots[k].parent].uuid) != 0))
				abort();
		}
		if (gpu_slots > n || mig_slots > 1 || (guessed != 0 && guessed != 1))
			abort();
		free(seen);
	}
	free(slots);
	free(visible);
	free(gpus);
	free(migs);
	return 0;
}
