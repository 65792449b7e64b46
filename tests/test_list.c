/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel's list form of CPU and node sets (src/pci.c: dc_list_parse,
 * dc_list_format), as local_cpulist, nodeN/cpulist and the replay's
 * cpu_affinity hold it: round trips, the edges of the mask, what is refused.
 */
#include <string.h>

#include "check.h"
#include "pci.h"

static const char *round_trip(const char *s, char *out, size_t len)
{
	unsigned long mask[4];
	if (dc_list_parse(s, mask, 4) != 0)
		return "(refused)";
	if (dc_list_format(mask, 4, out, len) < 0)
		return "(too long)";
	return out;
}

int main(void)
{
	char out[256];
	unsigned long mask[4];
	CHECK_STR(round_trip("0-55,112-167\n", out, sizeof(out)), "0-55,112-167");
	CHECK_STR(round_trip("3,1,2", out, sizeof(out)), "1-3");
	CHECK_STR(round_trip("0", out, sizeof(out)), "0");
	CHECK_STR(round_trip("", out, sizeof(out)), "");
	CHECK_STR(round_trip("\n", out, sizeof(out)), "");
	CHECK_STR(round_trip("63-64,255", out, sizeof(out)), "63-64,255");
	CHECK_STR(round_trip("0-255", out, sizeof(out)), "0-255");
	/* Refused: beyond the mask, reversed, malformed. */
	CHECK_STR(round_trip("256", out, sizeof(out)), "(refused)");
	CHECK_STR(round_trip("5-3", out, sizeof(out)), "(refused)");
	CHECK_STR(round_trip("1-", out, sizeof(out)), "(refused)");
	CHECK_STR(round_trip("-1", out, sizeof(out)), "(refused)");
	CHECK_STR(round_trip("1,,2", out, sizeof(out)), "(refused)");
	CHECK_STR(round_trip("1 2", out, sizeof(out)), "(refused)");
	CHECK_STR(round_trip("0x3", out, sizeof(out)), "(refused)");
	CHECK_STR(round_trip("99999999999999999999", out, sizeof(out)), "(refused)");
	/* Members counted; an output too small is said, not cut. */
	CHECK_INT(dc_list_parse("0-55,112-167", mask, 4), 0);
	CHECK_INT(dc_list_format(mask, 4, out, sizeof(out)), 112);
	CHECK_INT(dc_list_format(mask, 4, out, 8), -1);
	CHECK_INT(dc_list_format(mask, 4, out, 0), -1);
	CHECK_INT(mask[0], 0x00ffffffffffffffUL);
	return check_done("test_list");
}
