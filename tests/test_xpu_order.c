/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of Level Zero's device list under ZE_AFFINITY_MASK and
 * ZE_FLAT_DEVICE_HIERARCHY (src/backends/level_zero/order_ze.c); every expectation follows from
 * the rules numbered there, not from running the code. */
#include <stdlib.h>

#include "check.h"
#include "backends/level_zero/order_ze.h"

/* The devices zeDeviceGet would return, as "card.tile" ("card" for a root
 * with sub-devices or a card without tiles), and each root's sub-device
 * count after a '/', e.g. "0.0,1.0/0,0". */
static const char *expose(const int *tiles, int n, enum dc_ze_hierarchy h, const char *mask)
{
	static char out[1024];
	struct dc_ze_root *roots;
	struct dc_ze_device *devs;
	int nr, nd;
	out[0] = '\0';
	if (dc_ze_expose(tiles, n, h, mask, &roots, &nr, &devs, &nd) != 0)
		return "oom";
	size_t len = 0;
	for (int i = 0; i < nd; i++) {
		if (devs[i].tile >= 0)
			len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%d.%d", i ? "," : "", devs[i].card,
						devs[i].tile);
		else
			len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%d", i ? "," : "", devs[i].card);
	}
	len += (size_t)snprintf(out + len, sizeof(out) - len, "/");
	for (int r = 0; r < nr; r++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%d", r ? "," : "", roots[r].subdevices);
	free(roots);
	free(devs);
	return out;
}

int main(void)
{
	const int pvc6[6] = { 2, 2, 2, 2, 2, 2 };
	const int arc4[4] = { 1, 1, 1, 1 };
	const int mixed[3] = { 2, 1, 2 };

	/* Rule 2: exact names only. */
	CHECK_INT(dc_ze_hierarchy("FLAT", DC_ZE_COMPOSITE), DC_ZE_FLAT);
	CHECK_INT(dc_ze_hierarchy("COMBINED", DC_ZE_COMPOSITE), DC_ZE_COMBINED);
	CHECK_INT(dc_ze_hierarchy("COMPOSITE", DC_ZE_FLAT), DC_ZE_COMPOSITE);
	CHECK_INT(dc_ze_hierarchy("flat", DC_ZE_COMPOSITE), DC_ZE_COMPOSITE);
	CHECK_INT(dc_ze_hierarchy("FLAT ", DC_ZE_COMPOSITE), DC_ZE_COMPOSITE);
	CHECK_INT(dc_ze_hierarchy(NULL, DC_ZE_FLAT), DC_ZE_FLAT);
	CHECK_STR(dc_ze_hierarchy_name(DC_ZE_COMBINED), "COMBINED");

	/* Rules 1, 4, 10: no mask. */
	CHECK_STR(expose(pvc6, 6, DC_ZE_FLAT, NULL), "0.0,0.1,1.0,1.1,2.0,2.1,3.0,3.1,4.0,4.1,5.0,5.1/2,2,2,2,2,2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMBINED, ""), "0.0,0.1,1.0,1.1,2.0,2.1,3.0,3.1,4.0,4.1,5.0,5.1/2,2,2,2,2,2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "default"), "0,1,2,3,4,5/2,2,2,2,2,2");
	CHECK_STR(expose(arc4, 4, DC_ZE_FLAT, NULL), "0,1,2,3/0,0,0,0");
	CHECK_STR(expose(arc4, 4, DC_ZE_COMPOSITE, NULL), "0,1,2,3/0,0,0,0");

	/* Rule 6: FLAT/COMBINED indices run over tiles; "X.Y" is ignored. */
	CHECK_STR(expose(pvc6, 6, DC_ZE_FLAT, "0,2"), "0.0,1.0/0,0");
	CHECK_STR(expose(pvc6, 6, DC_ZE_FLAT, "1.0"), "/");
	CHECK_STR(expose(pvc6, 6, DC_ZE_FLAT, "0.1,1.1"), "/");
	CHECK_STR(expose(pvc6, 6, DC_ZE_FLAT, "11,12,99"), "5.1/0");
	CHECK_STR(expose(mixed, 3, DC_ZE_FLAT, "2,3"), "1,2.0/0,0");
	CHECK_STR(expose(arc4, 4, DC_ZE_FLAT, "1.0"), "/");
	/* Rule 9: one tile left is a root without sub-devices, except COMBINED. */
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMBINED, "3,1"), "0.1,1.1/1,1");
	CHECK_STR(expose(pvc6, 6, DC_ZE_FLAT, "3,1"), "0.1,1.1/0,0");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMBINED, "0,1,3"), "0.0,0.1,1.1/2,1");
	CHECK_STR(expose(arc4, 4, DC_ZE_COMBINED, "2"), "2/0");

	/* Rule 7: COMPOSITE indices are cards; "X.Y" a tile of card X. */
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "0,2"), "0,2/2,2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "1.0"), "1.0/0");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "0.1,1.1"), "0.1,1.1/0,0");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "1.1,1.0"), "1/2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "1.2,6,1.0.0"), "/");
	CHECK_STR(expose(arc4, 4, DC_ZE_COMPOSITE, "1.0"), "1/0");
	CHECK_STR(expose(arc4, 4, DC_ZE_COMPOSITE, "1.1"), "/");

	/* Rule 8: the order of the entries does not matter. */
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "5,0,3"), "0,3,5/2,2,2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_FLAT, "4,0,4"), "0.0,2.0/0,0");

	/* Rule 5: std::stoul's reading; entries without a number are skipped. */
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "0x3, 01"), "1,3/2,2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "2abc"), "2/2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, ",x,,4,"), "4/2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "1."), "1/2");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, ".1"), "/");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "-1"), "/");
	CHECK_STR(expose(pvc6, 6, DC_ZE_COMPOSITE, "4294967296"), "0/2");

	/* No cards. */
	CHECK_STR(expose(pvc6, 0, DC_ZE_FLAT, NULL), "/");
	return check_done("test_xpu_order");
}
