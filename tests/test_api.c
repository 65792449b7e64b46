/* SPDX-License-Identifier: BSD-3-Clause */
/* The public API with run-time detectors: registry, cache, ownership,
 * builder rules, errors and the warning sink.  Needs no vendor library. */
#include <stdlib.h>

#include "check.h"
#include "dmaconn.h"

static int calls;

static int ring(dmaconn_builder *b, void *user_data)
{
	int n = *(int *)user_data;
	calls++;
	CHECK_INT(dmaconn_builder_set_size(b, n), DMACONN_OK);
	CHECK_INT(dmaconn_builder_set_size(b, n), DMACONN_EINVAL); /* once only */
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "dev%d", i);
		CHECK_INT(dmaconn_builder_set_device_property(b, i, "name", "first"), DMACONN_OK);
		CHECK_INT(dmaconn_builder_set_device_property(b, i, "name", name), DMACONN_OK);
		CHECK_INT(dmaconn_builder_set(b, i, (i + 1) % n, 2), DMACONN_OK);
	}
	CHECK_INT(dmaconn_builder_set(b, 0, 0, 1), DMACONN_EINVAL);
	CHECK_INT(dmaconn_builder_set(b, 0, n, 1), DMACONN_ERANGE);
	CHECK_INT(dmaconn_builder_set(b, 0, 1, -1), DMACONN_EINVAL);
	CHECK_INT(dmaconn_builder_set_device_property(b, n, "k", "v"), DMACONN_ERANGE);
	CHECK_INT(dmaconn_builder_warn(b, "ring of %d", n), DMACONN_OK);
	return DMACONN_OK;
}

static int failing(dmaconn_builder *b, void *user_data)
{
	(void)b;
	(void)user_data;
	return -42;
}

static int recursive(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_XPU, "self", &r), DMACONN_EBUSY);
	CHECK(r == NULL);
	return dmaconn_builder_set_size(b, 0);
}

/* Pair properties: a list per pair, equal lists numbered alike. */
static int paired(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	CHECK_INT(dmaconn_builder_set_size(b, 3), DMACONN_OK);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			if (i != j && !(i == 2 && j == 0)) {
				CHECK_INT(dmaconn_builder_set_pair_property(b, i, j, "path", "NV18"), DMACONN_OK);
				CHECK_INT(dmaconn_builder_set_pair_property(b, i, j, "read", i == 1 ? "CNS" : "OK"),
					  DMACONN_OK);
			}
	/* Replacing a value keeps the key's place. */
	CHECK_INT(dmaconn_builder_set_pair_property(b, 0, 2, "path", "PIX"), DMACONN_OK);
	CHECK_INT(dmaconn_builder_set_pair_property(b, 0, 2, "path", "NV18"), DMACONN_OK);
	CHECK_INT(dmaconn_builder_set_pair_property(b, 0, 0, "path", "x"), DMACONN_ERANGE);
	return DMACONN_OK;
}

static void test_pair_lists(void)
{
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_XPU, "paired", paired, NULL), DMACONN_OK);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_XPU, "paired", &r), DMACONN_OK);
	unsigned int ids[9];
	CHECK_INT(dmaconn_result_pair_lists(r, ids, 8), DMACONN_ERANGE);
	CHECK_INT(dmaconn_result_pair_lists(NULL, ids, 9), DMACONN_EINVAL);
	CHECK_INT(dmaconn_result_pair_lists(r, ids, 9), DMACONN_OK);
	CHECK(ids[0] == 0 && ids[4] == 0 && ids[8] == 0 && ids[2 * 3 + 0] == 0); /* diagonal, 2 -> 0 */
	CHECK(ids[0 * 3 + 1] != 0 && ids[0 * 3 + 1] == ids[0 * 3 + 2] && ids[0 * 3 + 1] == ids[2 * 3 + 1]);
	CHECK(ids[1 * 3 + 0] != 0 && ids[1 * 3 + 0] == ids[1 * 3 + 2] && ids[1 * 3 + 0] != ids[0 * 3 + 1]);
	CHECK_STR(dmaconn_result_pair_property_key(r, 0, 2, 0), "path");
	CHECK_STR(dmaconn_result_pair_property_value(r, 0, 2, 0), "NV18");
	CHECK_STR(dmaconn_result_pair_get(r, 1, 2, "read"), "CNS");
	CHECK(dmaconn_result_pair_get(r, 0, 1, "path") == dmaconn_result_pair_get(r, 2, 1, "path"));
	CHECK_INT(dmaconn_result_pair_property_count(r, 2, 0), 0);
	dmaconn_result_release(r);
	CHECK_INT(dmaconn_unregister_detector(DMACONN_DEVICE_XPU, "paired"), DMACONN_OK);
}

static char seen[256];
static int seen_count;

static void sink(const char *message, void *user_data)
{
	CHECK(user_data == (void *)seen);
	snprintf(seen, sizeof(seen), "%s", message);
	seen_count++;
}

int main(void)
{
	/* Names, errors. */
	dmaconn_device_type t;
	CHECK_INT(dmaconn_device_type_parse("CUDA", &t), DMACONN_OK);
	CHECK_INT(t, DMACONN_DEVICE_CUDA);
	CHECK_INT(dmaconn_device_type_parse("rocm", &t), DMACONN_OK);
	CHECK_INT(t, DMACONN_DEVICE_ROCM);
	CHECK_INT(dmaconn_device_type_parse("tpu", &t), DMACONN_EINVAL);
	CHECK_CONTAINS(dmaconn_last_error(), "tpu");
	CHECK_STR(dmaconn_device_type_name(DMACONN_DEVICE_XPU), "xpu");
	CHECK(dmaconn_device_type_name((dmaconn_device_type)9) == NULL);
	CHECK_STR(dmaconn_strerror(DMACONN_ENODETECTOR), "no DMA connectivity detector for this pair");
	CHECK_STR(dmaconn_strerror(12345), "unknown error");
	CHECK_STR(dmaconn_version_string(), "0.1.0");

	/* Unknown pairs. */
	dmaconn_result *r = (dmaconn_result *)&t;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "bogus", &r), DMACONN_ENODETECTOR);
	CHECK(r == NULL);
	CHECK_STR(dmaconn_last_error(), "no DMA connectivity detector for cuda over bogus");
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "", &r), DMACONN_EINVAL);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, NULL, &r), DMACONN_EINVAL);
	CHECK_INT(dmaconn_detect((dmaconn_device_type)0, "nvlink", &r), DMACONN_EINVAL);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", NULL), DMACONN_EINVAL);

	/* Registry. */
	int n = 3;
	dmaconn_set_warning_handler(sink, seen);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "ring", ring, &n), DMACONN_OK);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "ring", ring, &n), DMACONN_EEXIST);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_CUDA, "nvlink", ring, &n), DMACONN_EEXIST);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "x", NULL, NULL), DMACONN_EINVAL);
	dmaconn_device_type types[16];
	const char *conns[16];
	int count = dmaconn_list_detectors(types, conns, 16);
	CHECK(count >= 2);
	CHECK_INT(types[0], DMACONN_DEVICE_CUDA);
	CHECK_STR(conns[0], "nvlink");
	CHECK_INT(types[count - 1], DMACONN_DEVICE_ROCM);
	CHECK_STR(conns[count - 1], "ring");
	CHECK_INT(dmaconn_list_detectors(NULL, NULL, 0), count);

	/* First detection runs the detector; the next is the cached result. */
	dmaconn_result *a = NULL, *b = NULL, *c = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "ring", &a), DMACONN_OK);
	CHECK_INT(calls, 1);
	CHECK_INT(seen_count, 1);
	CHECK_STR(seen, "ring of 3");
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "ring", &b), DMACONN_OK);
	CHECK_INT(calls, 1);
	CHECK_INT(seen_count, 1); /* a cached result warns no more */
	CHECK(a == b);
	CHECK_INT(dmaconn_result_size(a), 3);
	CHECK_INT(dmaconn_result_device_type(a), DMACONN_DEVICE_ROCM);
	CHECK_STR(dmaconn_result_connection_type(a), "ring");
	CHECK_INT(dmaconn_result_get(a, 0, 1), 2);
	CHECK_INT(dmaconn_result_get(a, 1, 0), 0);
	CHECK_INT(dmaconn_result_get(a, 2, 0), 2);
	CHECK_INT(dmaconn_result_get(a, 3, 0), 0);
	CHECK_INT(dmaconn_result_get(a, -1, 0), 0);
	const int *m = dmaconn_result_matrix(a);
	CHECK(m && m[1] == 2 && m[0] == 0);
	CHECK_INT(dmaconn_result_warning_count(a), 1);
	CHECK_STR(dmaconn_result_warning(a, 0), "ring of 3");
	CHECK(dmaconn_result_warning(a, 1) == NULL);
	CHECK_INT(dmaconn_result_device_property_count(a, 1), 1);
	CHECK_STR(dmaconn_result_device_property_key(a, 1, 0), "name");
	CHECK_STR(dmaconn_result_device_property_value(a, 1, 0), "dev1");
	CHECK_STR(dmaconn_result_device_get(a, 2, "name"), "dev2");
	CHECK(dmaconn_result_device_get(a, 2, "uuid") == NULL);
	CHECK(dmaconn_result_device_get(a, 3, "name") == NULL);

	/* Fresh detection replaces the cache; old references stay valid. */
	n = 2;
	CHECK_INT(dmaconn_detect_fresh(DMACONN_DEVICE_ROCM, "ring", &c), DMACONN_OK);
	CHECK_INT(calls, 2);
	CHECK(c != a);
	CHECK_INT(dmaconn_result_size(c), 2);
	CHECK_INT(dmaconn_result_size(a), 3);
	dmaconn_result_release(b);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "ring", &b), DMACONN_OK);
	CHECK(b == c);
	dmaconn_result_release(b);
	dmaconn_clear_cache();
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "ring", &b), DMACONN_OK);
	CHECK_INT(calls, 3);
	CHECK(dmaconn_result_retain(b) == b);
	dmaconn_result_release(b);
	dmaconn_result_release(b);
	dmaconn_result_release(c);
	dmaconn_result_release(a);
	dmaconn_result_release(NULL);

	/* A failing detector fails the call and caches nothing. */
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_XPU, "broken", failing, NULL), DMACONN_OK);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_XPU, "broken", &r), DMACONN_EDETECTOR);
	CHECK_CONTAINS(dmaconn_last_error(), "xpu over broken");
	/* Detecting a pair from inside its own detector is refused, not a deadlock. */
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_XPU, "self", recursive, NULL), DMACONN_OK);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_XPU, "self", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_size(r), 0);
	CHECK(dmaconn_result_matrix(r) == NULL);
	dmaconn_result_release(r);

	/* Unregistering. */
	CHECK_INT(dmaconn_unregister_detector(DMACONN_DEVICE_ROCM, "ring"), DMACONN_OK);
	CHECK_INT(dmaconn_unregister_detector(DMACONN_DEVICE_ROCM, "ring"), DMACONN_ENODETECTOR);
	CHECK_INT(dmaconn_unregister_detector(DMACONN_DEVICE_CUDA, "nvlink"), DMACONN_ENODETECTOR);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "ring", &r), DMACONN_ENODETECTOR);
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_ROCM, "ring", ring, &n), DMACONN_OK);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "ring", &r), DMACONN_OK);
	CHECK_INT(calls, 4);
	dmaconn_result_release(r);

	test_pair_lists();
	dmaconn_shutdown();
	/* After shutdown the built-in detectors come back, run-time ones do not. */
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_ROCM, "ring", &r), DMACONN_ENODETECTOR);
	CHECK_INT(dmaconn_list_detectors(NULL, NULL, 0), count - 1);
	dmaconn_shutdown();
	return check_done("test_api");
}
