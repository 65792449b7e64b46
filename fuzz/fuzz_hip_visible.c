/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dc_hip_visible() (src/order_hip.c): ROCR_VISIBLE_DEVICES, then
 * HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES, against a GPU list the input
 * also chooses.
 *
 * Input: byte 0 = number of GPUs (mod 17); 8 bytes of KFD unique_id per GPU;
 * the rest is ROCR, HIP and CUDA values separated by NUL bytes (a value of
 * the single byte 0xff is unset; missing ones are unset).  Every index
 * returned must be one of the GPUs, each at most once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "order/order.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int n = data[0] % 17;
	size_t pos = 1;
	unsigned long long *ids = calloc((size_t)n + 1, sizeof(*ids));
	char *copy = malloc(size + 1);
	if (!ids || !copy) {
		free(ids);
		free(copy);
		return 0;
	}
	for (int i = 0; i < n; i++)
		for (int b = 0; b < 8; b++, pos++)
			ids[i] = ids[i] << 8 | (pos < size ? data[pos] : 0);
	if (pos > size)
		pos = size;
	memcpy(copy, data + pos, size - pos);
	copy[size - pos] = '\0';
	const char *values[3] = { NULL, NULL, NULL };
	char *p = copy, *end = copy + (size - pos);
	for (int k = 0; k < 3 && p <= end && size > pos; k++) {
		values[k] = (unsigned char)p[0] == 0xff && p[1] == '\0' ? NULL : p;
		p += strlen(p) + 1;
	}
	int *order = NULL;
	int count = dc_hip_visible(ids, n, values[0], values[1], values[2], &order);
	if (count > n)
		abort();
	char seen[17] = { 0 };
	for (int k = 0; k < count; k++) {
		if (order[k] < 0 || order[k] >= n || seen[order[k]]++)
			abort();
	}
	free(order);
	free(copy);
	free(ids);
	return 0;
}
