/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result codec (src/codec.h):
 *
 *   test_codec TOPOLOGIES_DIR
 *
 * Every built-in detector's result over replayed nodes (devices, pairs,
 * properties, warnings, the unavailable flag) is written exactly, read
 * back into a new result and compared whole; values are typed as the
 * JSON documentation promises and kept as written where they would not
 * read back the same; a document that is not whole is refused and sets
 * nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "codec.h"
#include "dmaconn.h"

static const struct dc_codec exact = { DC_CODEC_EXACT, NULL };
static const struct dc_codec shown = { 0, NULL };

struct reading {
	json_t *doc;
	int rc, unavailable;
	char why[200];
};

static int read_doc(dmaconn_builder *b, void *arg)
{
	struct reading *rd = arg;
	rd->rc = dc_codec_read(rd->doc, b, &rd->unavailable, rd->why, sizeof(rd->why));
	return rd->rc == 0 ? DMACONN_OK : dmaconn_builder_fail(b, DMACONN_EINVAL, "%s", rd->why);
}

/* doc read back as a result of r's type and connection (NULL: refused). */
static dmaconn_result *read_back(const char *text, dmaconn_device_type type, const char *connection,
				 struct reading *rd)
{
	json_error_t err;
	memset(rd, 0, sizeof(*rd));
	rd->doc = json_loads(text, 0, &err);
	CHECK(rd->doc != NULL);
	dmaconn_result *r = NULL;
	int rc = dmaconn_result_build(type, connection, read_doc, rd, &r);
	json_decref(rd->doc);
	rd->doc = NULL;
	return rc == DMACONN_OK ? r : NULL;
}

/* Whether a and b are the same result, said where they differ. */
static int same(const dmaconn_result *a, const dmaconn_result *b, const char *what)
{
	int n = dmaconn_result_size(a), bad = 0;
	if (dmaconn_result_size(b) != n) {
		fprintf(stderr, "%s: %d devices, read back %d\n", what, n, dmaconn_result_size(b));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int count = dmaconn_result_device_property_count(a, i);
		bad |= count != dmaconn_result_device_property_count(b, i);
		for (int k = 0; !bad && k < count; k++)
			bad |= strcmp(dmaconn_result_device_property_key(a, i, k),
				      dmaconn_result_device_property_key(b, i, k)) ||
			       strcmp(dmaconn_result_device_property_value(a, i, k),
				      dmaconn_result_device_property_value(b, i, k));
		for (int j = 0; !bad && j < n; j++) {
			bad |= dmaconn_result_get(a, i, j) != dmaconn_result_get(b, i, j);
			count = dmaconn_result_pair_property_count(a, i, j);
			bad |= count != dmaconn_result_pair_property_count(b, i, j);
			for (int k = 0; !bad && k < count; k++)
				bad |= strcmp(dmaconn_result_pair_property_key(a, i, j, k),
					      dmaconn_result_pair_property_key(b, i, j, k)) ||
				       strcmp(dmaconn_result_pair_property_value(a, i, j, k),
					      dmaconn_result_pair_property_value(b, i, j, k));
		}
		if (bad) {
			fprintf(stderr, "%s: device %d or its pairs differ\n", what, i);
			return 0;
		}
	}
	int w = dmaconn_result_warning_count(a);
	bad = w != dmaconn_result_warning_count(b);
	for (int k = 0; !bad && k < w; k++)
		bad = strcmp(dmaconn_result_warning(a, k), dmaconn_result_warning(b, k)) != 0;
	if (bad)
		fprintf(stderr, "%s: the warnings differ\n", what);
	return !bad;
}

/* Every detector's result over the node in file, through the codec and back. */
static int round_trips(const char *dir, const char *file)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	CHECK_INT(dmaconn_set_replay_file(path), DMACONN_OK);
	dmaconn_device_type types[64];
	const char *conns[64];
	int nd = dmaconn_list_detectors(types, conns, 64), pairs = 0, unavailable = 0;
	for (int d = 0; d < nd && d < 64; d++) {
		dmaconn_result *r = NULL;
		if (dmaconn_detect(types[d], conns[d], &r) != DMACONN_OK)
			continue;
		char what[4400];
		snprintf(what, sizeof(what), "%s %s/%s", file, dmaconn_device_type_name(types[d]), conns[d]);
		json_t *doc = dc_codec_result(&exact, r);
		CHECK(doc != NULL);
		char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
		json_decref(doc);
		struct reading rd;
		dmaconn_result *back = text ? read_back(text, types[d], conns[d], &rd) : NULL;
		if (!back)
			fprintf(stderr, "%s: refused: %s\n", what, rd.why);
		CHECK(back != NULL);
		if (back) {
			CHECK(same(r, back, what));
			CHECK_INT(rd.unavailable, dmaconn_result_unavailable(r));
			unavailable += rd.unavailable;
			for (int i = 0; i < dmaconn_result_size(r); i++)
				for (int j = 0; j < dmaconn_result_size(r); j++)
					pairs += dmaconn_result_pair_property_count(r, i, j) > 0;
		}
		dmaconn_result_release(back);
		dmaconn_result_release(r);
		free(text);
	}
	dmaconn_shutdown(); /* the next file is another replay */
	return pairs * 2 + (unavailable > 0);
}

/* A detector setting what the typed tests need. */
static int typed(dmaconn_builder *b, void *arg)
{
	(void)arg;
	dmaconn_builder_set_size(b, 2);
	dmaconn_builder_set(b, 0, 1, 18);
	dmaconn_builder_set_device_property(b, 0, DMACONN_PROP_NVML_INDEX, "0");
	dmaconn_builder_set_device_property(b, 1, DMACONN_PROP_NVML_INDEX, "007");
	dmaconn_builder_set_device_property(b, 1, DMACONN_PROP_NAME, "H200 \xc3\xa9");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_NVLINK_GBPS, "478.1");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_GBPS, "393.70");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_LATENCY_US, "n/a");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_ENABLED, "yes");
	dmaconn_builder_set_pair_property(b, 0, 1, DMACONN_PROP_COHERENT, "maybe");
	dmaconn_builder_set_pair_property(b, 0, 1, "can_access_peer", "1");
	dmaconn_builder_set_pair_property(b, 1, 0, DMACONN_PROP_NVLINK_LINKS, "18");
	dmaconn_builder_add_warning(b, "a warning, \"quoted\"");
	return DMACONN_OK;
}

static void test_typed(void)
{
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_result_build(DMACONN_DEVICE_CUDA, "typed", typed, NULL, &r), DMACONN_OK);
	/* Exact: typed where the text reads back the same, else the text. */
	json_t *doc = dc_codec_result(&exact, r);
	CHECK(doc != NULL);
	json_t *d0 = json_array_get(json_object_get(doc, "devices"), 0),
	       *d1 = json_array_get(json_object_get(doc, "devices"), 1),
	       *p = json_array_get(json_object_get(doc, "pairs"), 0);
	CHECK(json_is_integer(json_object_get(d0, DMACONN_PROP_NVML_INDEX)));
	CHECK_STR(json_string_value(json_object_get(d1, DMACONN_PROP_NVML_INDEX)), "007");
	CHECK(json_is_real(json_object_get(p, DMACONN_PROP_NVLINK_GBPS)));
	CHECK_STR(json_string_value(json_object_get(p, DMACONN_PROP_GBPS)), "393.70");
	CHECK_STR(json_string_value(json_object_get(p, DMACONN_PROP_LATENCY_US)), "n/a");
	CHECK(json_is_true(json_object_get(p, DMACONN_PROP_ENABLED)));
	CHECK_STR(json_string_value(json_object_get(p, DMACONN_PROP_COHERENT)), "maybe");
	CHECK_STR(json_string_value(json_object_get(p, "can_access_peer")), "1");
	CHECK(json_object_get(doc, "unavailable") == NULL);
	CHECK_INT((int)json_integer_value(json_array_get(json_array_get(json_object_get(doc, "matrix"), 0), 1)), 18);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	struct reading rd;
	dmaconn_result *back = read_back(text, DMACONN_DEVICE_CUDA, "typed", &rd);
	CHECK(back && same(r, back, "typed"));
	dmaconn_result_release(back);
	free(text);

	/* As shown (the CLI): every typed key its type, or null. */
	doc = dc_codec_result(&shown, r);
	p = json_array_get(json_object_get(doc, "pairs"), 0);
	d1 = json_array_get(json_object_get(doc, "devices"), 1);
	CHECK_INT((int)json_integer_value(json_object_get(d1, DMACONN_PROP_NVML_INDEX)), 7);
	CHECK(json_is_real(json_object_get(p, DMACONN_PROP_GBPS)) &&
	      json_real_value(json_object_get(p, DMACONN_PROP_GBPS)) == 393.7);
	CHECK(json_is_null(json_object_get(p, DMACONN_PROP_LATENCY_US)));
	CHECK(json_is_null(json_object_get(p, DMACONN_PROP_COHERENT)));
	CHECK(json_is_true(json_object_get(p, "can_access_peer")));
	json_decref(doc);

	/* Text that is not UTF-8 is never stored. */
	json_t *v = dc_codec_value(&exact, DMACONN_PROP_NAME, "bad \xff");
	CHECK(v == NULL);
	json_decref(v);
	dmaconn_result_release(r);

	/* Values read back as results hold them. */
	static const struct {
		const char *key, *json, *text;
	} texts[] = { { DMACONN_PROP_ENABLED, "false", "no" }, { "mine", "true", "true" },
		      { DMACONN_PROP_GBPS, "393.7", "393.7" }, { DMACONN_PROP_GBPS, "1e3", "1000" },
		      { DMACONN_PROP_HOPS, "-2", "-2" },
		      { DMACONN_PROP_GBPS, "1e-9", "1e-09" }, { DMACONN_PROP_GBPS, "0.0", "0" },     { "mine", "\"x\"", "x" } };
	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		json_t *j = json_loads(texts[k].json, JSON_DECODE_ANY, NULL);
		char *t = dc_codec_text(texts[k].key, j);
		CHECK_STR(t, texts[k].text);
		free(t);
		json_decref(j);
	}
	json_t *null = json_null(), *arr = json_array();
	CHECK(dc_codec_text("mine", null) == NULL);
	CHECK(dc_codec_text("mine", arr) == NULL);
	json_decref(arr);
	CHECK(dc_prop_kind("can_access_peer") == DC_PROP_BOOL);
	CHECK(dc_prop_kind(DMACONN_PROP_UUID) == DC_PROP_STRING);
}

/* A document that is not whole is refused, and the result not built. */
static void test_refused(void)
{
	static const char *const bad[] = {
		"[]",
		"{\"matrix\":[[0]],\"devices\":[],\"pairs\":[],\"warnings\":[]}",
		"{\"matrix\":[[0,1]],\"devices\":[{\"ordinal\":0}],\"pairs\":[],\"warnings\":[]}",
		"{\"matrix\":[[0,-1],[1,0]],\"devices\":[{\"ordinal\":0},{\"ordinal\":1}],\"pairs\":[],\"warnings\":[]}",
		"{\"matrix\":[[0]],\"devices\":[{\"ordinal\":1}],\"pairs\":[],\"warnings\":[]}",
		"{\"matrix\":[[0]],\"devices\":[{\"ordinal\":0,\"name\":[1]}],\"pairs\":[],\"warnings\":[]}",
		"{\"matrix\":[[0]],\"devices\":[{\"ordinal\":0,\"name\":null}],\"pairs\":[],\"warnings\":[]}",
		"{\"matrix\":[[0,1],[1,0]],\"devices\":[{\"ordinal\":0},{\"ordinal\":1}],"
		"\"pairs\":[{\"from\":0,\"to\":0}],\"warnings\":[]}",
		"{\"matrix\":[[0,1],[1,0]],\"devices\":[{\"ordinal\":0},{\"ordinal\":1}],"
		"\"pairs\":[{\"from\":0,\"to\":2}],\"warnings\":[]}",
		"{\"matrix\":[[0,1],[1,0]],\"devices\":[{\"ordinal\":0},{\"ordinal\":1}],"
		"\"pairs\":[{\"from\":0,\"to\":1,\"a\":\"1\"},{\"from\":0,\"to\":1,\"a\":\"2\"}],\"warnings\":[]}",
		"{\"matrix\":[[0]],\"devices\":[{\"ordinal\":0}],\"pairs\":[],\"warnings\":[1]}",
		"{\"matrix\":[[0]],\"devices\":[{\"ordinal\":0}],\"pairs\":[],\"warnings\":[],\"unavailable\":1}",
		"{\"matrix\":[[0]],\"devices\":[{\"ordinal\":0}],\"warnings\":[]}",
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct reading rd;
		dmaconn_result *r = read_back(bad[k], DMACONN_DEVICE_CUDA, "refused", &rd);
		if (r)
			fprintf(stderr, "accepted: %s\n", bad[k]);
		CHECK(r == NULL);
		CHECK(rd.rc == -1 && rd.why[0]);
		dmaconn_result_release(r);
	}
	/* The same shape, whole, is read; and unavailable with it. */
	struct reading rd;
	dmaconn_result *r = read_back("{\"matrix\":[[0,1],[1,0]],\"devices\":[{\"ordinal\":0},{\"ordinal\":1}],"
				      "\"pairs\":[{\"from\":0,\"to\":1,\"a\":\"1\"}],\"warnings\":[\"w\"],"
				      "\"unavailable\":true}",
				      DMACONN_DEVICE_CUDA, "refused", &rd);
	CHECK(r != NULL);
	CHECK_INT(rd.unavailable, 1);
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, "a"), "1");
	CHECK_INT(dmaconn_result_warning_count(r), 1);
	dmaconn_result_release(r);
}

/* cuda/verified's pair 0 -> 1 replayed from file: its gbps, latency_us
 * and "mine" as the result holds them ("" where absent). */
static void replayed_pair(const char *file, char out[3][64])
{
	CHECK_INT(dmaconn_set_replay_file(file), DMACONN_OK);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "verified", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_get(r, 0, 1), 1);
	const char *keys[3] = { DMACONN_PROP_GBPS, DMACONN_PROP_LATENCY_US, "mine" };
	for (int k = 0; k < 3; k++) {
		const char *v = dmaconn_result_pair_get(r, 0, 1, keys[k]);
		snprintf(out[k], 64, "%s", v ? v : "");
	}
	dmaconn_result_release(r);
	dmaconn_shutdown();
}

/*
 * A recording's verification section: as recordings before the codec
 * wrote it (every value a string), and as it writes it now (numbers where
 * they read back the same), each read as the result held it.
 */
static void test_recorded_section(const char *topologies)
{
	char old[4200], typed[4200], got[3][64];
	snprintf(old, sizeof(old), "%s/../topologies-reasons/verified-partial.json", topologies);
	replayed_pair(old, got);
	CHECK_STR(got[0], "373.23");
	CHECK_STR(got[1], "9.66");

	json_t *doc = json_load_file(old, 0, NULL);
	json_t *pair = json_array_get(json_object_get(json_object_get(doc, "verification"), "pairs"), 0);
	CHECK(json_is_object(pair));
	json_object_set_new(pair, DMACONN_PROP_GBPS, json_real(373.2));
	json_object_set_new(pair, DMACONN_PROP_LATENCY_US, json_real(9.66));
	json_object_set_new(pair, "mine", json_true());
	const char *tmp = getenv("TMPDIR");
	snprintf(typed, sizeof(typed), "%s/test_codec.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(typed);
	CHECK(fd >= 0 && json_dumpfd(doc, fd, JSON_COMPACT) == 0);
	if (fd >= 0)
		close(fd);
	json_decref(doc);
	replayed_pair(typed, got);
	CHECK_STR(got[0], "373.2");
	CHECK_STR(got[1], "9.66");
	CHECK_STR(got[2], "true");
	unlink(typed);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_codec TOPOLOGIES_DIR\n");
		return 2;
	}
	/* Nodes of each vendor, degraded, with MIG, and one whose NVML fails
	 * (every result unavailable). */
	static const char *const files[] = { "h200x2.json", "hgx-h100-8-degraded.json", "mig.json",
					     "init-fail.json", "fabric-two-cliques.json", "p2p-vm-hidden.json",
					     "../topologies-rocm/mi300x-8.json", "../topologies-xpu/aurora-6x2.json",
					     "../topologies-xpu/init-fail.json" };
	int pairs = 0, unavailable = 0;
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		int got = round_trips(argv[1], files[k]);
		pairs += got / 2;
		unavailable += got % 2;
	}
	CHECK(pairs > 50);
	CHECK(unavailable > 0);
	test_typed();
	test_refused();
	test_recorded_section(argv[1]);
	dmaconn_shutdown();
	return check_done("test_codec");
}
