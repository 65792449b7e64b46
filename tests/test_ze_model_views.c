/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Level Zero views read the node model and nothing else: models filled
 * here by hand -- with facts no Level Zero node would give together, their
 * stages already asked -- go through the views (xpu/p2p, xpu/xelink) with
 * no Level Zero to load (DMACONN_ZE_LIBRARY names a file that does not
 * exist, no replay) and no sysfs GPU (DMACONN_SYSFS_ROOT: an empty
 * directory).
 * Every matrix entry, property and warning must be what the model says; a
 * view that asked the vendor, or read a discovery of its own, would find
 * no device, or a loader that lacks every function.
 *
 * Built with the library's objects (hidden symbols included):
 * dc_ze_view_of_model() is level_zero.c's view over a given model.
 */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"
#include "model/connections.h"
#include "model/model.h"

int dc_ze_view_of_model(dmaconn_builder *b, struct dc_model *m, const struct dc_connection *row);

static struct dc_model *model;

static int p2p_view(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return dc_ze_view_of_model(b, model, dc_connection_find(DMACONN_DEVICE_XPU, "p2p"));
}

static int xelink_view(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return dc_ze_view_of_model(b, model, dc_connection_find(DMACONN_DEVICE_XPU, "xelink"));
}

/* The view's result over model m (registered under a name of its own, so
 * that nothing is cached between models). */
static dmaconn_result *view(struct dc_model *m, int xelink)
{
	static int serial;
	char name[32];
	snprintf(name, sizeof(name), "model_%s_%d", xelink ? "xelink" : "p2p", serial++);
	model = m;
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_XPU, name, xelink ? xelink_view : p2p_view, NULL),
		  DMACONN_OK);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_XPU, name, &r), DMACONN_OK);
	CHECK_INT(dmaconn_unregister_detector(DMACONN_DEVICE_XPU, name), DMACONN_OK);
	return r;
}

static void set_peer(struct dc_model *m, int i, int j, int access, int atomics)
{
	struct dc_peer *p = &m->peers[dc_pair_index(i, j, m->n)];
	p->asked = 1;
	p->status[DC_PEER_READ] = p->status[DC_PEER_WRITE] = access ? DC_PEER_OK : DC_PEER_NS;
	p->status[DC_PEER_ATOMICS] = atomics ? DC_PEER_OK : DC_PEER_NS;
}

/* Three devices of one driver and a fourth of another; device 1 a tile;
 * with_warning: the tile counts could not all be read. */
static struct dc_model *hand_model(int with_warning)
{
	int n = 4;
	struct dc_model *m = dc_model_new(n, 1);
	CHECK(m != NULL);
	if (!m)
		exit(check_done("ze_model_views"));
	m->vendor_ok = 1;
	m->ngroups = 2;
	static const char *const names[] = { "Hand GPU A", "Hand GPU B", "Hand GPU C", "Hand GPU D" };
	for (int i = 0; i < n; i++) {
		struct dc_device *d = &m->devices[i];
		snprintf(d->long_name, sizeof(d->long_name), "%s", names[i]);
		snprintf(m->ids[i].uuid, sizeof(m->ids[i].uuid), "00000000-0000-0000-0000-00000000000%d", i);
		d->group = i < 3 ? 0 : 1;
		d->group_index = i < 3 ? i : 0;
		d->node.has_pci = i != 2;
		d->node.pci = (struct dc_pci){ 0, (unsigned int)(0x30 + i), 0, 0 };
	}
	m->devices[0].tiles = 2;
	m->devices[1].tile_known = 1;
	m->devices[1].tile = 7;
	if (with_warning)
		snprintf(m->tiles_why, sizeof(m->tiles_why), "zeDeviceGetSubDevices(device 2) failed: HAND_MADE");
	m->peers = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*m->peers));
	m->pair_links = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*m->pair_links));
	CHECK(m->peers && m->pair_links);
	if (!m->peers || !m->pair_links)
		exit(check_done("ze_model_views"));
	m->peer_stage.done = m->fabric_stage.done = 1;
	set_peer(m, 0, 1, 1, 1);
	set_peer(m, 1, 0, 1, 0);
	set_peer(m, 0, 2, 0, 0);
	set_peer(m, 2, 0, 0, 1);
	set_peer(m, 1, 2, 1, 1);
	set_peer(m, 2, 1, 1, 1);
	struct dc_pair_links xl = { .fabric = 3, .latency = 1, .latency_unit = DC_LATENCY_HOP, .duplex = DC_DUPLEX_FULL };
	xl.bw[DC_BW_BYTES_PER_NS] = 45;
	xl.bw_links[DC_BW_BYTES_PER_NS] = 3;
	m->pair_links[dc_pair_index(0, 2, n)] = m->pair_links[dc_pair_index(2, 0, n)] = xl;
	struct dc_pair_links clk = { .fabric = 2, .die = 1, .latency = 5, .latency_unit = DC_LATENCY_CLOCK,
				     .duplex = DC_DUPLEX_MIXED };
	clk.bw[DC_BW_BYTES_PER_CLOCK] = 64;
	clk.bw_links[DC_BW_BYTES_PER_CLOCK] = 2;
	m->pair_links[dc_pair_index(1, 2, n)] = m->pair_links[dc_pair_index(2, 1, n)] = clk;
	struct dc_pair_links mdfi = { .die = 2 };
	m->pair_links[dc_pair_index(0, 1, n)] = m->pair_links[dc_pair_index(1, 0, n)] = mdfi;
	return m;
}

static void check_pair(const dmaconn_result *r, int i, int j, const char *key, const char *want)
{
	const char *got = dmaconn_result_pair_get(r, i, j, key);
	if (!want) {
		check_record(got == NULL, __FILE__, __LINE__, "pair %d,%d %s: \"%s\", none expected", i, j, key,
			     got ? got : "");
		return;
	}
	check_record(got && !strcmp(got, want), __FILE__, __LINE__, "pair %d,%d %s: \"%s\" != \"%s\"", i, j, key,
		     got ? got : "(none)", want);
}

/* Checks each "I,J: KEY=VALUE; ..." line of spec ("-": no such property). */
static void check_pairs(const dmaconn_result *r, const char *spec)
{
	char line[512];
	for (const char *p = spec; *p;) {
		size_t len = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		int i, j, at = 0;
		if (sscanf(line, "%d,%d: %n", &i, &j, &at) != 2 || !at) {
			check_record(0, __FILE__, __LINE__, "bad expectation \"%s\"", line);
			continue;
		}
		for (char *save = NULL, *item = strtok_r(line + at, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
			item += strspn(item, " ");
			char *eq = strchr(item, '=');
			if (!eq) {
				check_record(0, __FILE__, __LINE__, "bad expectation item \"%s\"", item);
				continue;
			}
			*eq = '\0';
			check_pair(r, i, j, item, strcmp(eq + 1, "-") ? eq + 1 : NULL);
		}
	}
}

static void check_device(const dmaconn_result *r, int i, const char *key, const char *want)
{
	const char *got = dmaconn_result_device_get(r, i, key);
	if (!want) {
		check_record(got == NULL, __FILE__, __LINE__, "device %d %s: \"%s\", none expected", i, key,
			     got ? got : "");
		return;
	}
	check_record(got && !strcmp(got, want), __FILE__, __LINE__, "device %d %s: \"%s\" != \"%s\"", i, key,
		     got ? got : "(none)", want);
}

static void check_warnings(const dmaconn_result *r, int count, const char *first)
{
	CHECK_INT(dmaconn_result_warning_count(r), count);
	if (first && dmaconn_result_warning_count(r) > 0)
		CHECK_STR(dmaconn_result_warning(r, 0), first);
}

static void test_p2p(void)
{
	struct dc_model *m = hand_model(1);
	dmaconn_result *r = view(m, 0);
	if (!r)
		goto out;
	CHECK_INT(dmaconn_result_size(r), 4);
	CHECK_INT(dmaconn_result_unavailable(r), 0);
	check_warnings(r, 1, "xpu/p2p: zeDeviceGetSubDevices(device 2) failed: HAND_MADE; tile counts are unknown");
	/* The identities. */
	check_device(r, 0, DMACONN_PROP_NAME, "Hand GPU A");
	check_device(r, 3, DMACONN_PROP_NAME, "Hand GPU D");
	check_device(r, 1, DMACONN_PROP_UUID, "00000000-0000-0000-0000-000000000001");
	check_device(r, 1, DMACONN_PROP_PCI_BUS_ID, "0000:31:00.0");
	check_device(r, 2, DMACONN_PROP_PCI_BUS_ID, NULL);
	check_device(r, 3, DMACONN_PROP_LEVEL_ZERO_DRIVER, "1");
	check_device(r, 2, DMACONN_PROP_LEVEL_ZERO_INDEX, "2");
	check_device(r, 0, DMACONN_PROP_TILES, "2");
	check_device(r, 1, DMACONN_PROP_TILES, NULL);
	check_device(r, 1, DMACONN_PROP_TILE, "7");
	check_device(r, 0, DMACONN_PROP_TILE, NULL);
	/* The peers: 1 with access and atomics; what the model left unasked
	 * (another driver's device) says nothing. */
	CHECK_INT(dmaconn_result_get(r, 0, 1), 1);
	CHECK_INT(dmaconn_result_get(r, 1, 0), 0);
	CHECK_INT(dmaconn_result_get(r, 0, 2), 0);
	CHECK_INT(dmaconn_result_get(r, 2, 0), 0);
	CHECK_INT(dmaconn_result_get(r, 1, 2), 1);
	CHECK_INT(dmaconn_result_get(r, 0, 3), 0);
	/* The peers' detail (what the model left unasked, another driver's
	 * device, says nothing: "-"; a warning makes each 0 an assumption), and
	 * the fabric's. */
	check_pairs(r, "0,1: p2p_flags=ACCESS|ATOMICS; path=MDFI; xelink_links=-\n"
		       "1,0: p2p_flags=ACCESS; write=OK; atomics=NS; reason=unknown; mdfi_links=2\n"
		       "0,2: p2p_flags=none; read=NS; path=XL3; xelink_latency=1 hop; xelink_duplexity=full\n"
		       "2,0: p2p_flags=ATOMICS; xelink_gbps=45.0\n0,3: p2p_flags=-\n"
		       "1,2: xelink_bandwidth=64 bytes/clock; xelink_latency=5 clocks; xelink_duplexity=mixed; "
		       "mdfi_links=1\n");
out:
	dmaconn_result_release(r);
	dc_model_release(m);
}

/* The links counted, MDFI only told. */
static void test_xelink(void)
{
	struct dc_model *m = hand_model(0);
	dmaconn_result *r = view(m, 1);
	if (r) {
		CHECK_INT(dmaconn_result_size(r), 4);
		check_warnings(r, 0, NULL);
		CHECK_INT(dmaconn_result_get(r, 0, 2), 3);
		CHECK_INT(dmaconn_result_get(r, 2, 1), 2);
		CHECK_INT(dmaconn_result_get(r, 0, 1), 0);
		check_pair(r, 2, 1, DMACONN_PROP_XELINK_LINKS, "2");
		check_pair(r, 0, 1, DMACONN_PROP_PATH, "MDFI");
	}
	dmaconn_result_release(r);
	dc_model_release(m);
}

/* Facts the model says could not be had: the views say so, and no more. */
static void test_failed_stages(void)
{
	struct dc_model *m = hand_model(0);
	m->fabric_stage.failed = 1;
	snprintf(m->fabric_stage.why, sizeof(m->fabric_stage.why), "hand-made fabric failure");
	m->peer_stage.lacks = "zeHandMadeP2P";
	dmaconn_result *r = view(m, 1);
	if (r) {
		CHECK_INT(dmaconn_result_unavailable(r), 1);
		check_warnings(r, 1, "xpu/xelink: hand-made fabric failure; assuming no Xe Link connectivity");
		CHECK_INT(dmaconn_result_get(r, 0, 2), 0);
		check_pair(r, 0, 2, DMACONN_PROP_PATH, NULL);
	}
	dmaconn_result_release(r);
	r = view(m, 0);
	if (r) {
		CHECK_INT(dmaconn_result_unavailable(r), 1);
		check_warnings(r, 1, "xpu/p2p: the Level Zero loader lacks zeHandMadeP2P; assuming no peer access");
		CHECK_INT(dmaconn_result_get(r, 0, 1), 0);
	}
	dmaconn_result_release(r);
	/* The fabric unsupported: p2p's pairs stand, without paths, quietly. */
	m->peer_stage.lacks = NULL;
	m->fabric_stage.unsupported = 1;
	r = view(m, 0);
	if (r) {
		CHECK_INT(dmaconn_result_unavailable(r), 0);
		check_warnings(r, 0, NULL);
		CHECK_INT(dmaconn_result_get(r, 0, 1), 1);
		check_pair(r, 0, 2, DMACONN_PROP_PATH, NULL);
		check_pair(r, 1, 0, DMACONN_PROP_REASON_TEXT,
			   "Level Zero reports peer access without atomics (P2P flags ACCESS)");
	}
	dmaconn_result_release(r);
	dc_model_release(m);
}

/* Devices counted without the vendor: sized and named from the model. */
static void test_counted(void)
{
	struct dc_model *m = dc_model_new(2, 1);
	CHECK(m != NULL);
	if (!m)
		return;
	snprintf(m->why, sizeof(m->why), "hand-made absence");
	for (int i = 0; i < 2; i++) {
		m->devices[i].node.has_pci = 1;
		m->devices[i].node.pci = (struct dc_pci){ 0, 0x4d, 0, 0 };
		m->devices[i].tile_known = 1;
		m->devices[i].tile = (unsigned int)(1 - i);
	}
	dmaconn_result *r = view(m, 0);
	if (r) {
		CHECK_INT(dmaconn_result_size(r), 2);
		CHECK_INT(dmaconn_result_unavailable(r), 1);
		check_warnings(r, 1,
			       "xpu/p2p: hand-made absence; assuming no DMA connectivity (2 devices counted without "
			       "Level Zero)");
		check_device(r, 0, DMACONN_PROP_TILE, "1");
		check_device(r, 1, DMACONN_PROP_PCI_BUS_ID, "0000:4d:00.0");
		check_device(r, 1, DMACONN_PROP_NAME, NULL);
		check_device(r, 1, DMACONN_PROP_UUID, NULL);
	}
	dmaconn_result_release(r);
	dc_model_release(m);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char root[4096];
	snprintf(root, sizeof(root), "%s/dmaconn-ze-views-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	unsetenv("DMACONN_REPLAY");
	setenv("DMACONN_ZE_LIBRARY", "/nonexistent/dmaconn-test/libze_loader.so.1", 1);
	setenv("DMACONN_SYSFS_ROOT", root, 1);
	setenv("DMACONN_QUIET", "1", 1);
	test_p2p();
	test_xelink();
	test_failed_stages();
	test_counted();
	dmaconn_shutdown();
	rmdir(root);
	return check_done("ze_model_views");
}
