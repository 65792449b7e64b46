/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Level Zero's device list under ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY.
 *
 * The rules, and where each comes from (facts read from Intel's sources and
 * documentation; nothing copied):
 *
 * 1. Three hierarchies (Intel oneAPI GPU Optimization Guide, "Exposing the
 *    Device Hierarchy"; Intel, "Flattening GPU Tile Hierarchy"; dpctl's
 *    environment variable guide for COMBINED): COMPOSITE shows each card as
 *    one root device whose tiles (stacks) are sub-devices; FLAT shows each
 *    tile as a root device of its own; COMBINED shows the tiles as root
 *    devices like FLAT while keeping the card reachable as a composite
 *    device.  With one tile per card FLAT and COMPOSITE are the same.
 * 2. The variable is compared exactly with "COMPOSITE", "FLAT" and "COMBINED";
 *    any other value, or none, gives the platform's default, which is FLAT
 *    for Xe HPC (Data Center GPU Max, "Ponte Vecchio"; the Optimization
 *    Guide calls FLAT the default) and COMPOSITE for the other GPU families
 *    (compute-runtime, shared/source/execution_environment/
 *    execution_environment.cpp setDeviceHierarchyMode, and the
 *    getDefaultDeviceHierarchy of gfx_core_helper_base.inl and of the
 *    xe_hpc_core helper).  The default of a node is that of the first card
 *    the driver finds.
 * 3. Cards are numbered in the driver's order, which compute-runtime sorts
 *    before applying the mask: discrete before integrated, then by PCI
 *    domain, bus, device and function (ZE_ENABLE_PCI_ID_DEVICE_ORDER=1:
 *    PCI order alone) (device_factory.cpp prepareDeviceEnvironments calls
 *    sortNeoDevices, then parseAffinityMask).  Callers pass the cards in
 *    that order.
 * 4. ZE_AFFINITY_MASK unset, empty or "default": every device and tile
 *    (Level Zero specification, "Affinity Mask"; parseAffinityMask).
 * 5. The mask is split at commas and each entry at dots; an empty part
 *    after the last delimiter is dropped (StringHelpers::split).  Numbers are
 *    read as std::stoul(s, nullptr, 0) reads them (leading blanks skipped,
 *    0x hexadecimal and 0 octal prefixes, trailing characters ignored) and
 *    truncated to 32 bits.  A part without a number makes the runtime throw;
 *    here that entry is skipped instead.
 * 6. FLAT and COMBINED: an entry is an index into the list of every tile of
 *    every card, card by card (a card without tiles counts once); "X.Y"
 *    entries are ignored, as are indices past the end (parseAffinityMask,
 *    the FLAT/COMBINED branch).
 * 7. COMPOSITE: "X" selects card X with all its tiles; "X.Y" selects tile Y
 *    of card X; indices past the cards, tiles past the card's and entries of
 *    three or more parts are ignored (parseAffinityMask, the COMPOSITE
 *    branch).
 * 8. The order of the entries does not matter: devices keep the driver's
 *    order and tiles their own (specification, "Affinity Mask", whose
 *    examples keep the driver's order; parseAffinityMask filters the sorted
 *    list in place).
 * 9. A card keeping a single tile becomes a root device that is that tile,
 *    without sub-devices, except under COMBINED where it keeps the one
 *    sub-device (shared/source/device/device.cpp genericSubDevicesAllowed;
 *    the specification's affinity mask examples show such a tile as a
 *    device).
 * 10. zeDeviceGet returns the root devices under COMPOSITE; under FLAT and
 *    COMBINED it returns, root by root, its sub-devices, or the root itself
 *    when it has none (level_zero/core/source/driver/driver_handle_imp.cpp
 *    setupDevicesToExpose).
 */
#include "order_ze.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum dc_ze_hierarchy dc_ze_hierarchy(const char *value, enum dc_ze_hierarchy dflt)
{
	if (!value)
		return dflt;
	if (!strcmp(value, "COMPOSITE"))
		return DC_ZE_COMPOSITE;
	if (!strcmp(value, "FLAT"))
		return DC_ZE_FLAT;
	if (!strcmp(value, "COMBINED"))
		return DC_ZE_COMBINED;
	return dflt;
}

const char *dc_ze_hierarchy_name(enum dc_ze_hierarchy h)
{
	return h == DC_ZE_FLAT ? "FLAT" : h == DC_ZE_COMBINED ? "COMBINED" : "COMPOSITE";
}

/* The parts of s (len bytes) between `delim`s, without an empty last one. */
static int split(const char *s, size_t len, char delim, const char **part, size_t *plen, int max)
{
	int n = 0;
	size_t pos = 0;
	while (pos < len) {
		const char *d = memchr(s + pos, delim, len - pos);
		size_t end = d ? (size_t)(d - s) : len;
		if (n < max) {
			part[n] = s + pos;
			plen[n] = end - pos;
		}
		n++;
		pos = d ? end + 1 : len;
	}
	return n;
}

/* std::stoul(part, nullptr, 0) truncated to 32 bits; -1 where it throws. */
static int number(const char *part, size_t len, uint32_t *out)
{
	char buf[64];
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, part, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	unsigned long v = strtoul(buf, &end, 0);
	if (end == buf || errno == ERANGE)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int popcount(unsigned int x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

static int lowest_bit(unsigned int x)
{
	for (int t = 0; t < DC_ZE_MAX_TILES; t++)
		if (x & (1u << t))
			return t;
	return 0;
}

/* The tiles of a card as the runtime counts them: a card without tiles
 * counts as one; more than DC_ZE_MAX_TILES are not represented. */
static int count_of(int tiles)
{
	return tiles < 1 ? 1 : tiles > DC_ZE_MAX_TILES ? DC_ZE_MAX_TILES : tiles;
}

static unsigned int all_tiles(int tiles)
{
	return tiles >= DC_ZE_MAX_TILES ? ~0u : (1u << tiles) - 1;
}

/* Rules 5 to 8: the enabled tiles of every card, into enabled[]. */
static void apply_mask(const int *tiles, int ncards, enum dc_ze_hierarchy h, const char *mask,
		       unsigned int *enabled)
{
	for (int c = 0; c < ncards; c++)
		enabled[c] = 0;
	const size_t len = strlen(mask);
	enum { MAX_PARTS = 4 };
	const char *part[MAX_PARTS];
	size_t plen[MAX_PARTS];
	size_t pos = 0;
	/* Entries one by one (a mask can hold any number of them). */
	while (pos < len) {
		const char *comma = memchr(mask + pos, ',', len - pos);
		size_t end = comma ? (size_t)(comma - mask) : len;
		const char *entry = mask + pos;
		size_t elen = end - pos;
		pos = comma ? end + 1 : len;

		int parts = split(entry, elen, '.', part, plen, MAX_PARTS);
		uint32_t index;
		/* An empty entry has no number: std::stoul("") throws. */
		if (parts == 0 || number(part[0], plen[0], &index) != 0)
			continue;
		if (h != DC_ZE_COMPOSITE) {
			if (parts > 1)
				continue;
			uint32_t flat = 0;
			for (int c = 0; c < ncards; c++) {
				uint32_t n = (uint32_t)count_of(tiles[c]);
				if (index < flat + n) {
					enabled[c] |= 1u << (index - flat);
					break;
				}
				flat += n;
			}
			continue;
		}
		if (index >= (uint32_t)ncards)
			continue;
		int count = count_of(tiles[index]);
		if (parts == 1) {
			enabled[index] |= all_tiles(count);
			continue;
		}
		uint32_t sub;
		if (number(part[1], plen[1], &sub) != 0 || sub >= (uint32_t)count || parts != 2)
			continue;
		enabled[index] |= 1u << sub;
	}
}

int dc_ze_expose(const int *tiles, int ncards, enum dc_ze_hierarchy h, const char *mask,
		 struct dc_ze_root **roots, int *nroots, struct dc_ze_device **devices, int *ndevices)
{
	*roots = NULL;
	*devices = NULL;
	*nroots = *ndevices = 0;
	if (ncards <= 0)
		return 0;
	unsigned int *enabled = calloc((size_t)ncards, sizeof(*enabled));
	struct dc_ze_root *r = calloc((size_t)ncards, sizeof(*r));
	/* At most every tile of every card. */
	size_t most = 0;
	for (int c = 0; c < ncards; c++)
		most += (size_t)count_of(tiles[c]);
	struct dc_ze_device *d = calloc(most, sizeof(*d));
	if (!enabled || !r || !d) {
		free(enabled);
		free(r);
		free(d);
		return -1;
	}
	if (!mask || !*mask || !strcmp(mask, "default")) {
		for (int c = 0; c < ncards; c++)
			enabled[c] = all_tiles(count_of(tiles[c]));
	} else {
		apply_mask(tiles, ncards, h, mask, enabled);
	}
	int nr = 0, nd = 0;
	for (int c = 0; c < ncards; c++) {
		if (!enabled[c])
			continue;
		int count = count_of(tiles[c]);
		int k = popcount(enabled[c]);
		struct dc_ze_root *root = &r[nr];
		root->card = c;
		root->tiles = enabled[c];
		root->subdevices = (k == 1 && (h != DC_ZE_COMBINED || count == 1)) ? 0 : k;
		if (h == DC_ZE_COMPOSITE || root->subdevices == 0) {
			d[nd].root = nr;
			d[nd].card = c;
			d[nd].tile = root->subdevices == 0 && count > 1 ? lowest_bit(enabled[c]) : -1;
			nd++;
		} else {
			for (int t = 0; t < count; t++) {
				if (!(enabled[c] & (1u << t)))
					continue;
				d[nd].root = nr;
				d[nd].card = c;
				d[nd].tile = t;
				nd++;
			}
		}
		nr++;
	}
	free(enabled);
	if (nr == 0) {
		free(r);
		free(d);
		return 0;
	}
	*roots = r;
	*devices = d;
	*nroots = nr;
	*ndevices = nd;
	return 0;
}
