/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dc_ze_expose() and dc_ze_hierarchy() (src/backends/level_zero/order_ze.c): ZE_AFFINITY_MASK
 * and ZE_FLAT_DEVICE_HIERARCHY against cards the input also chooses.
 *
 * Input: byte 0 = number of cards (mod 9) and the hierarchy (bits 4-5),
 * then one byte per card: its tiles (1 to DC_ZE_MAX_TILES); the rest,
 * before a NUL, is ZE_FLAT_DEVICE_HIERARCHY, and after it ZE_AFFINITY_MASK
 * (unset when absent).  Every device must name a root, card and tile that
 * exist; every root a card, at most once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/level_zero/order_ze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int ncards = data[0] % 9;
	size_t pos = 1;
	int tiles[9];
	for (int c = 0; c < ncards; c++, pos++)
		tiles[c] = pos < size ? 1 + data[pos] % DC_ZE_MAX_TILES : 1;
	if (pos > size)
		pos = size;
	char *copy = malloc(size - pos + 1);
	if (!copy)
		return 0;
	memcpy(copy, data + pos, size - pos);
	copy[size - pos] = '\0';
	const char *hier = copy, *mask = NULL;
	size_t len = strlen(copy);
	if (len < size - pos)
		mask = copy + len + 1;
	enum dc_ze_hierarchy h = dc_ze_hierarchy(hier, (enum dc_ze_hierarchy)((data[0] >> 4) % 3));
	if (!dc_ze_hierarchy_name(h))
		abort();
	struct dc_ze_root *roots = NULL;
	struct dc_ze_device *devices = NULL;
	int nroots = -1, ndevices = -1;
	if (dc_ze_expose(tiles, ncards, h, mask, &roots, &nroots, &devices, &ndevices) == 0) {
		char seen[9] = { 0 };
		if (nroots < 0 || nroots > ncards || ndevices < 0)
			abort();
		for (int r = 0; r < nroots; r++) {
			int c = roots[r].card;
			if (c < 0 || c >= ncards || seen[c]++ || roots[r].subdevices < 0 ||
			    roots[r].subdevices > tiles[c])
				abort();
		}
		for (int d = 0; d < ndevices; d++) {
			const struct dc_ze_device *v = &devices[d];
			if (v->root < 0 || v->root >= nroots || v->card != roots[v->root].card || v->tile < -1 ||
			    v->tile >= tiles[v->card])
				abort();
		}
	}
	free(roots);
	free(devices);
	free(copy);
	return 0;
}
