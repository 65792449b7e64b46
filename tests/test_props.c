/* SPDX-License-Identifier: BSD-3-Clause */
/* The property table and the typed getters: each type read from a built
 * result, an absent key, a key of another type, a malformed value, a bad
 * index, NULL arguments; the table as the library lists it. */
#include "check.h"
#include "dmaconn.h"

#include <float.h>
#include <limits.h>
#include <string.h>

static int fill(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	dmaconn_builder_set_size(b, 3);
	dmaconn_builder_set_device_property(b, 0, DMACONN_PROP_NVML_INDEX, "7");
	dmaconn_builder_set_device_property(b, 0, DMACONN_PROP_BAR1_MIB, "131072");
	dmaconn_builder_set_device_property(b, 0, DMACONN_PROP_FABRIC_HEALTH_MASK, "0x1a");
	dmaconn_builder_set_device_property(b, 0, DMACONN_PROP_NVLINK_INACTIVE_LINKS, "3,7,11");
	dmaconn_builder_set_device_property(b, 0, DMACONN_PROP_COMPUTE_CAPABILITY, "9.0");
	dmaconn_builder_set_device_property(b, 0, DMACONN_PROP_NAME, "NVIDIA H200");
	dmaconn_builder_set_device_property(b, 1, DMACONN_PROP_NVML_INDEX, " 8");
	dmaconn_builder_set_device_property(b, 1, DMACONN_PROP_NVLINK_INACTIVE_LINKS, "3,");
	dmaconn_builder_set_device_property(b, 1, DMACONN_PROP_HIVE_ID, "-0x1");
	dmaconn_builder_set_device_property(b, 2, DMACONN_PROP_NVML_INDEX, "99999999999999999999");
	dmaconn_builder_set_device_property(b, 2, DMACONN_PROP_NVLINK_INACTIVE_LINKS, "");
	dmaconn_builder_set_device_property(b, 2, "user_key", "5");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_NVLINK_GBPS, "478.1");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_NVLINK_LINKS, "18");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_ENABLED, "yes");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_COHERENT, "false");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_XGMI_LINKS, "unknown");
	dmaconn_builder_set_pair_property(b, 1, 0, DMACONN_PROP_NVLINK_GBPS, "inf");
	dmaconn_builder_set_pair_property(b, 1, 0, DMACONN_PROP_ENABLED, "maybe");
	dmaconn_builder_set_pair_property(b, 1, 0, DMACONN_PROP_GBPS, "1e999");
	dmaconn_builder_set_pair_property(b, 1, 2, DMACONN_PROP_NVLINK_GBPS, "12.5 ");
	return DMACONN_OK;
}

static void device_getters(const dmaconn_result *r)
{
	long long v = -1;
	double d = -1;
	int flag = -1, count = -1;
	const char *s = NULL;

	/* int: decimal, the integer kept a JSON string, hexadecimal. */
	CHECK_INT(dmaconn_result_device_int(r, 0, DMACONN_PROP_NVML_INDEX, &v), DMACONN_OK);
	CHECK_INT(v, 7);
	CHECK_INT(dmaconn_result_device_int(r, 0, DMACONN_PROP_BAR1_MIB, &v), DMACONN_OK);
	CHECK_INT(v, 131072);
	CHECK_INT(dmaconn_result_device_int(r, 0, DMACONN_PROP_FABRIC_HEALTH_MASK, &v), DMACONN_OK);
	CHECK_INT(v, 0x1a);
	/* A number getter reads an integer key too. */
	CHECK_INT(dmaconn_result_device_number(r, 0, DMACONN_PROP_NVML_INDEX, &d), DMACONN_OK);
	CHECK(d == 7.0);
	/* Malformed: leading space, overflow, a sign on hexadecimal; *out kept. */
	v = 42;
	CHECK_INT(dmaconn_result_device_int(r, 1, DMACONN_PROP_NVML_INDEX, &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_int(r, 2, DMACONN_PROP_NVML_INDEX, &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_int(r, 1, DMACONN_PROP_HIVE_ID, &v), DMACONN_EINVAL);
	CHECK_INT(v, 42);
	/* Absent: on this device, or a key nobody set. */
	CHECK_INT(dmaconn_result_device_int(r, 1, DMACONN_PROP_BAR1_MIB, &v), DMACONN_ENOENT);
	CHECK_INT(dmaconn_result_device_str(r, 0, "no_such_key", &s), DMACONN_ENOENT);
	/* Wrong type: a string key asked as an int, an int key as a bool; an
	 * undeclared key is a string. */
	CHECK_INT(dmaconn_result_device_int(r, 0, DMACONN_PROP_NAME, &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_bool(r, 0, DMACONN_PROP_NVML_INDEX, &flag), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_int(r, 2, "user_key", &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_str(r, 2, "user_key", &s), DMACONN_OK);
	CHECK_STR(s, "5");
	CHECK_INT(v, 42);
	/* str: every key, the result's own string. */
	CHECK_INT(dmaconn_result_device_str(r, 0, DMACONN_PROP_NVML_INDEX, &s), DMACONN_OK);
	CHECK(s == dmaconn_result_device_get(r, 0, DMACONN_PROP_NVML_INDEX));
	CHECK_INT(dmaconn_result_device_str(r, 0, DMACONN_PROP_NAME, &s), DMACONN_OK);
	CHECK_STR(s, "NVIDIA H200");
	/* Bad index, NULL arguments. */
	CHECK_INT(dmaconn_result_device_int(r, 3, DMACONN_PROP_NVML_INDEX, &v), DMACONN_ERANGE);
	CHECK_INT(dmaconn_result_device_int(r, -1, DMACONN_PROP_NVML_INDEX, &v), DMACONN_ERANGE);
	CHECK_INT(dmaconn_result_device_str(r, 3, DMACONN_PROP_NAME, &s), DMACONN_ERANGE);
	CHECK_INT(dmaconn_result_device_int(NULL, 0, DMACONN_PROP_NVML_INDEX, &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_int(r, 0, NULL, &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_int(r, 0, DMACONN_PROP_NVML_INDEX, NULL), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_str(r, 0, DMACONN_PROP_NAME, NULL), DMACONN_EINVAL);
	CHECK_INT(v, 42);

	/* list: every item, at most max written, the count whole. */
	long long items[4] = { -1, -1, -1, -1 };
	CHECK_INT(dmaconn_result_device_list(r, 0, DMACONN_PROP_NVLINK_INACTIVE_LINKS, items, 4, &count), DMACONN_OK);
	CHECK_INT(count, 3);
	CHECK_INT(items[0], 3);
	CHECK_INT(items[1], 7);
	CHECK_INT(items[2], 11);
	CHECK_INT(items[3], -1);
	items[1] = -1;
	CHECK_INT(dmaconn_result_device_list(r, 0, DMACONN_PROP_NVLINK_INACTIVE_LINKS, items, 1, &count), DMACONN_OK);
	CHECK_INT(count, 3);
	CHECK_INT(items[1], -1);
	CHECK_INT(dmaconn_result_device_list(r, 0, DMACONN_PROP_NVLINK_INACTIVE_LINKS, NULL, 0, &count), DMACONN_OK);
	CHECK_INT(count, 3);
	/* A version is a list of its dot-separated numbers. */
	CHECK_INT(dmaconn_result_device_list(r, 0, DMACONN_PROP_COMPUTE_CAPABILITY, items, 4, &count), DMACONN_OK);
	CHECK_INT(count, 2);
	CHECK_INT(items[0], 9);
	CHECK_INT(items[1], 0);
	/* An empty list has no item; a trailing comma is malformed. */
	CHECK_INT(dmaconn_result_device_list(r, 2, DMACONN_PROP_NVLINK_INACTIVE_LINKS, items, 4, &count), DMACONN_OK);
	CHECK_INT(count, 0);
	count = 9;
	CHECK_INT(dmaconn_result_device_list(r, 1, DMACONN_PROP_NVLINK_INACTIVE_LINKS, items, 4, &count), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_list(r, 0, DMACONN_PROP_NVML_INDEX, items, 4, &count), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_device_list(r, 0, DMACONN_PROP_NVLINK_INACTIVE_LINKS, NULL, 4, &count), DMACONN_EINVAL);
	CHECK_INT(count, 9);
}

static void pair_getters(const dmaconn_result *r)
{
	long long v = -1;
	double d = -1;
	int flag = -1;
	const char *s = NULL;

	CHECK_INT(dmaconn_result_pair_number(r, 0, 1, DMACONN_PROP_NVLINK_GBPS, &d), DMACONN_OK);
	CHECK(d > 478.09 && d < 478.11);
	CHECK_INT(dmaconn_result_pair_int(r, 0, 1, DMACONN_PROP_NVLINK_LINKS, &v), DMACONN_OK);
	CHECK_INT(v, 18);
	CHECK_INT(dmaconn_result_pair_bool(r, 0, 1, DMACONN_PROP_ENABLED, &flag), DMACONN_OK);
	CHECK_INT(flag, 1);
	CHECK_INT(dmaconn_result_pair_bool(r, 0, 1, DMACONN_PROP_COHERENT, &flag), DMACONN_OK);
	CHECK_INT(flag, 0);
	/* Values that do not read as their type: *out kept. */
	d = -2;
	flag = -2;
	v = -2;
	CHECK_INT(dmaconn_result_pair_int(r, 0, 1, DMACONN_PROP_XGMI_LINKS, &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_pair_number(r, 1, 0, DMACONN_PROP_NVLINK_GBPS, &d), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_pair_number(r, 1, 0, DMACONN_PROP_GBPS, &d), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_pair_number(r, 1, 2, DMACONN_PROP_NVLINK_GBPS, &d), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_pair_bool(r, 1, 0, DMACONN_PROP_ENABLED, &flag), DMACONN_EINVAL);
	CHECK(d == -2);
	CHECK_INT(flag, -2);
	CHECK_INT(v, -2);
	/* Wrong type, absent, bad index (the diagonal and -1 included). */
	CHECK_INT(dmaconn_result_pair_int(r, 0, 1, DMACONN_PROP_ENABLED, &v), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_pair_bool(r, 0, 1, DMACONN_PROP_NVLINK_LINKS, &flag), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_pair_int(r, 1, 0, DMACONN_PROP_NVLINK_LINKS, &v), DMACONN_ENOENT);
	CHECK_INT(dmaconn_result_pair_int(r, 2, 0, DMACONN_PROP_NVLINK_LINKS, &v), DMACONN_ENOENT);
	CHECK_INT(dmaconn_result_pair_int(r, 0, 0, DMACONN_PROP_NVLINK_LINKS, &v), DMACONN_ERANGE);
	CHECK_INT(dmaconn_result_pair_int(r, 0, -1, DMACONN_PROP_NVLINK_LINKS, &v), DMACONN_ERANGE);
	CHECK_INT(dmaconn_result_pair_int(r, 0, 3, DMACONN_PROP_NVLINK_LINKS, &v), DMACONN_ERANGE);
	CHECK_INT(dmaconn_result_pair_str(r, 3, 0, DMACONN_PROP_PATH, &s), DMACONN_ERANGE);
	CHECK_INT(dmaconn_result_pair_str(r, 0, 1, DMACONN_PROP_XGMI_LINKS, &s), DMACONN_OK);
	CHECK_STR(s, "unknown");
	CHECK_INT(dmaconn_result_pair_bool(NULL, 0, 1, DMACONN_PROP_ENABLED, &flag), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_pair_number(r, 0, 1, DMACONN_PROP_NVLINK_GBPS, NULL), DMACONN_EINVAL);
	CHECK_INT(v, -2);
}

/* The table as listed: every key once, each with a type that has a name
 * and a JSON type, a scope, a unit and a doc; the constants are its keys. */
static void table(void)
{
	int n = dmaconn_property_count(), typed = 0;
	CHECK(n > 80);
	CHECK(dmaconn_property_key(-1) == NULL);
	CHECK(dmaconn_property_key(n) == NULL);
	for (int k = 0; k < n; k++) {
		const char *key = dmaconn_property_key(k);
		CHECK(key != NULL);
		if (!key)
			continue;
		for (int m = 0; m < k; m++)
			CHECK(strcmp(dmaconn_property_key(m), key) != 0);
		dmaconn_property_type t = dmaconn_property_type_of(key);
		CHECK(dmaconn_property_type_name(t) != NULL);
		CHECK(dmaconn_property_json_type(t) != NULL);
		typed += dmaconn_property_json_type(t) && strcmp(dmaconn_property_json_type(t), "string") != 0;
		int scope = dmaconn_property_scope_of(key);
		CHECK(scope == DMACONN_SCOPE_DEVICE || scope == DMACONN_SCOPE_PAIR);
		CHECK(dmaconn_property_unit(key) != NULL);
		CHECK(dmaconn_property_doc(key) != NULL && *dmaconn_property_doc(key));
	}
	CHECK(typed > 30);
	/* Each constant is a declared key, in the table's order. */
	int k = 0;
#define ROW_(name, key, type, scope, unit, doc)                                         \
	CHECK_STR(dmaconn_property_key(k), DMACONN_PROP_##name);                        \
	CHECK_INT(dmaconn_property_type_of(DMACONN_PROP_##name), DMACONN_TYPE_##type);  \
	CHECK_INT(dmaconn_property_scope_of(DMACONN_PROP_##name), DMACONN_SCOPE_##scope); \
	CHECK_STR(dmaconn_property_unit(DMACONN_PROP_##name), unit);                    \
	k++;
	DMACONN_PROPERTIES(ROW_)
#undef ROW_
	CHECK_INT(k, n);
	CHECK_STR(dmaconn_property_unit(DMACONN_PROP_NVLINK_GBPS), "GB/s");
	CHECK_STR(dmaconn_property_json_type(DMACONN_TYPE_INT), "integer");
	CHECK_STR(dmaconn_property_json_type(DMACONN_TYPE_NUMBER), "number");
	CHECK_STR(dmaconn_property_json_type(DMACONN_TYPE_BOOL), "boolean");
	CHECK_STR(dmaconn_property_json_type(DMACONN_TYPE_HEX), "string");
	CHECK_STR(dmaconn_property_json_type(DMACONN_TYPE_INT_STRING), "string");
	CHECK_STR(dmaconn_property_type_name(DMACONN_TYPE_LIST), "list");
	CHECK(dmaconn_property_type_name((dmaconn_property_type)99) == NULL);
	CHECK(dmaconn_property_json_type((dmaconn_property_type)-1) == NULL);
	/* Keys not declared. */
	CHECK_INT(dmaconn_property_type_of("user_key"), DMACONN_TYPE_STRING);
	CHECK_INT(dmaconn_property_type_of(NULL), DMACONN_TYPE_STRING);
	CHECK_INT(dmaconn_property_scope_of("user_key"), 0);
	CHECK(dmaconn_property_unit("user_key") == NULL);
	CHECK(dmaconn_property_doc(NULL) == NULL);
}

/* The value readers alone: what the CLI's JSON reads (strtoll/strtod
 * limits, no surrounding space, finite numbers). */
/* A typed reader's case: which reader (Int, Number, Bool, List: its count),
 * the key and text, what it returns and, where that is DMACONN_OK, the value. */
static const struct read_case {
	char reader;
	const char *key, *text;
	int rc;
	long long value;
	double number;
} read_cases[] = {
	{ 'I', DMACONN_PROP_HOPS, "-3", DMACONN_OK, -3, 0 },
	{ 'I', DMACONN_PROP_HOPS, "+4", DMACONN_OK, 4, 0 },
	{ 'I', DMACONN_PROP_HOPS, "9223372036854775807", DMACONN_OK, LLONG_MAX, 0 },
	{ 'I', DMACONN_PROP_HOPS, "9223372036854775808", DMACONN_EINVAL, 0, 0 },
	{ 'I', DMACONN_PROP_HOPS, "", DMACONN_EINVAL, 0, 0 },
	{ 'I', DMACONN_PROP_HOPS, "-", DMACONN_EINVAL, 0, 0 },
	{ 'I', DMACONN_PROP_HOPS, "\t1", DMACONN_EINVAL, 0, 0 },
	{ 'I', DMACONN_PROP_HOPS, "1x", DMACONN_EINVAL, 0, 0 },
	{ 'I', DMACONN_PROP_FLAGS, "0xf", DMACONN_OK, 15, 0 },
	{ 'I', DMACONN_PROP_FLAGS, "ff", DMACONN_OK, 255, 0 },
	{ 'I', DMACONN_PROP_FLAGS, "0xffffffffffffffff", DMACONN_EINVAL, 0, 0 },
	{ 'I', DMACONN_PROP_HOPS, NULL, DMACONN_EINVAL, 0, 0 },
	{ 'N', DMACONN_PROP_GBPS, "2.5", DMACONN_OK, 0, 2.5 },
	{ 'N', DMACONN_PROP_GBPS, "nan", DMACONN_EINVAL, 0, 0 },
	{ 'N', DMACONN_PROP_GBPS, " 2.5", DMACONN_EINVAL, 0, 0 },
	{ 'N', DMACONN_PROP_NAME, "2.5", DMACONN_EINVAL, 0, 0 },
	{ 'B', DMACONN_PROP_PEER_DMA, "true", DMACONN_OK, 1, 0 },
	{ 'B', DMACONN_PROP_PEER_DMA, "no", DMACONN_OK, 0, 0 },
	/* "1"/"0": as dmaconn_verify_pair_get gives can_access_peer. */
	{ 'B', DMACONN_PROP_CAN_ACCESS_PEER, "1", DMACONN_OK, 1, 0 },
	{ 'B', DMACONN_PROP_PEER_DMA, "0", DMACONN_OK, 0, 0 },
	{ 'B', DMACONN_PROP_PEER_DMA, "2", DMACONN_EINVAL, 0, 0 },
	{ 'B', DMACONN_PROP_PEER_DMA, "01", DMACONN_EINVAL, 0, 0 },
	{ 'B', DMACONN_PROP_READ_ADVERTISED, "yes", DMACONN_EINVAL, 0, 0 },
	{ 'L', DMACONN_PROP_NVLINK_DOWN_LINKS, "5,,6", DMACONN_EINVAL, 0, 0 },
	{ 'L', DMACONN_PROP_NVLINK_DOWN_LINKS, ",5", DMACONN_EINVAL, 0, 0 },
	{ 'L', DMACONN_PROP_NVLINK_DOWN_LINKS, "5", DMACONN_OK, 1, 0 },
	{ 'L', DMACONN_PROP_COMPUTE_CAPABILITY, "", DMACONN_EINVAL, 0, 0 },
	{ 'L', DMACONN_PROP_COMPUTE_CAPABILITY, "9.0.", DMACONN_EINVAL, 0, 0 },
	{ 'L', DMACONN_PROP_COMPUTE_CAPABILITY, "9,0", DMACONN_EINVAL, 0, 0 },
};

static void readers(void)
{
	for (size_t k = 0; k < sizeof(read_cases) / sizeof(read_cases[0]); k++) {
		const struct read_case *c = &read_cases[k];
		long long v = 0;
		double d = 0;
		int flag = 0, count = 0, rc;
		if (c->reader == 'I')
			rc = dmaconn_property_read_int(c->key, c->text, &v);
		else if (c->reader == 'N')
			rc = dmaconn_property_read_number(c->key, c->text, &d);
		else if (c->reader == 'B')
			rc = dmaconn_property_read_bool(c->key, c->text, &flag);
		else
			rc = dmaconn_property_read_list(c->key, c->text, NULL, 0, &count);
		long long got = c->reader == 'I' ? v : c->reader == 'B' ? flag : count;
		int ok = rc == c->rc && (rc != DMACONN_OK || (c->reader == 'N' ? d == c->number : got == c->value));
		check_record(ok, __FILE__, __LINE__, "read %c %s \"%s\": %d, %lld, %g; expected %d, %lld, %g", c->reader,
			     c->key, c->text ? c->text : "(null)", rc, got, d, c->rc, c->value, c->number);
	}
	/* Runs of links at one speed (nvlink_speeds_mbps). */
	{
		long long sp[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
		int n = -1;
		CHECK_INT(dmaconn_property_read_runs(DMACONN_PROP_NVLINK_SPEEDS_MBPS, "0-2:53125,4:26562,6-9:1", sp, 8, &n),
			  DMACONN_OK);
		CHECK_INT(n, 10);
		CHECK_INT((int)sp[0], 53125);
		CHECK_INT((int)sp[2], 53125);
		CHECK_INT((int)sp[3], 0);
		CHECK_INT((int)sp[4], 26562);
		CHECK_INT((int)sp[5], 0);
		CHECK_INT((int)sp[7], 1);
		CHECK_INT(dmaconn_property_read_runs(DMACONN_PROP_NVLINK_SPEEDS_MBPS, "", sp, 8, &n), DMACONN_OK);
		CHECK_INT(n, 0);
		CHECK_INT((int)sp[0], 0);
		static const char *const bad[] = { "3-1:5", "1:5,1:6", "2:5,1:6", "1:-5", "1-:5", ":5", "1:5,", "1",
						   "1:5:6", "a:5", "1:0x5", " 1:5", "1-2-3:4", "1:99999999999999999999" };
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			sp[0] = 77;
			CHECK_INT(dmaconn_property_read_runs(DMACONN_PROP_NVLINK_SPEEDS_MBPS, bad[k], sp, 8, &n),
				  DMACONN_EINVAL);
			CHECK_INT((int)sp[0], 77);
		}
		CHECK_INT(dmaconn_property_read_runs(DMACONN_PROP_NVLINK_DOWN_LINKS, "1:5", sp, 8, &n), DMACONN_EINVAL);
	}
}

int main(void)
{
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_result_build(DMACONN_DEVICE_CUDA, "props", fill, NULL, &r), DMACONN_OK);
	if (r) {
		device_getters(r);
		pair_getters(r);
	}
	dmaconn_result_release(r);
	table();
	readers();
	return check_done("props");
}
