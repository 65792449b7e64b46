/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVML views read the node model and never write to it: a model filled
 * here by hand -- its stages (per-pair facts, driver) already asked -- goes
 * through every view of the NVML backend (each row of the connection table
 * it serves), in CUDA's order and in a visible order that reverses it, with
 * no NVML to load (DMACONN_NVML_LIBRARY names a file that does not exist,
 * no replay) and no sysfs GPU (DMACONN_SYSFS_ROOT: an empty directory).
 * After each view the model -- the struct, its devices, identities and
 * peers -- must be byte for byte what it was, and the results what the
 * model says.
 *
 * Built with the library's objects (hidden symbols included):
 * dc_nvml_view_of_model() is nvml.c's view over a given model.
 */
#include <stdlib.h>

#include "backends/backend.h"
#include "check.h"
#include "dmaconn.h"
#include "model/connections.h"
#include "model/model.h"

int dc_nvml_view_of_model(dmaconn_builder *b, struct dc_model *model, const struct dc_connection *row);
extern const struct dc_backend dc_backend_nvml;

enum { N = 4 };

static struct dc_model *model;
static const struct dc_connection *view_row;

static int hand_view(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return dc_nvml_view_of_model(b, model, view_row);
}

/* The model's bytes: the struct and every array a view could reach. */
struct snapshot {
	struct dc_model m;
	struct dc_gpu ids[N];
	struct dc_device devices[N];
	struct dc_peer peers[N * N];
};

static void take(struct snapshot *s, const struct dc_model *m)
{
	memcpy(&s->m, m, sizeof(*m));
	memcpy(s->ids, m->ids, sizeof(s->ids));
	memcpy(s->devices, m->devices, sizeof(s->devices));
	memcpy(s->peers, m->peers, sizeof(s->peers));
}

static void check_unchanged(const struct snapshot *before, const struct dc_model *m, const char *label)
{
	struct snapshot after;
	take(&after, m);
	check_record(!memcmp(&before->m, &after.m, sizeof(after.m)), __FILE__, __LINE__,
		     "%s wrote to struct dc_model", label);
	check_record(!memcmp(before->ids, after.ids, sizeof(after.ids)), __FILE__, __LINE__,
		     "%s wrote to the model's identities", label);
	for (int k = 0; k < N; k++)
		check_record(!memcmp(&before->devices[k], &after.devices[k], sizeof(after.devices[k])), __FILE__,
			     __LINE__, "%s wrote to the model's device %d", label, k);
	for (int k = 0; k < N * N; k++)
		check_record(!memcmp(&before->peers[k], &after.peers[k], sizeof(after.peers[k])), __FILE__, __LINE__,
			     "%s wrote to the model's pair %d,%d", label, k / N, k % N);
}

/* The view of row over the model (registered under a name of its own, so
 * that nothing is cached between runs). */
static dmaconn_result *view(const struct dc_connection *row)
{
	static int serial;
	char name[48];
	snprintf(name, sizeof(name), "hand_%s_%d", row->name, serial++);
	view_row = row;
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_register_detector(DMACONN_DEVICE_CUDA, name, hand_view, NULL), DMACONN_OK);
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, name, &r), DMACONN_OK);
	CHECK_INT(dmaconn_unregister_detector(DMACONN_DEVICE_CUDA, name), DMACONN_OK);
	return r;
}

static void link_to(struct dc_device *d, enum dc_remote remote, const struct dc_pci *pci)
{
	struct dc_link *l = &d->node.links[d->node.nlinks];
	l->remote = remote;
	if (pci)
		l->remote_pci = *pci;
	d->speed[d->node.nlinks] = 25000;
	d->up |= 1ull << d->node.nlinks;
	d->node.nlinks++;
}

static void set_peer(struct dc_model *m, int a, int b, int atomics, unsigned char path)
{
	struct dc_peer *p = &m->peers[dc_pair_index(a, b, N)];
	p->asked = 1;
	p->status[DC_PEER_READ] = p->status[DC_PEER_WRITE] = DC_PEER_OK;
	p->status[DC_PEER_ATOMICS] = atomics ? DC_PEER_OK : DC_PEER_NS;
	p->status[DC_PEER_NVLINK] = path ? DC_PEER_NS : DC_PEER_OK;
	p->path_asked = path != 0;
	p->path = path;
}

/*
 * GPUs 0 and 1: two NVLinks to each other and four to NVSwitches each, one
 * fabric domain; GPU 2: PCIe only, compute capability 8.0; GPU 3 in MIG
 * mode.  Peer facts, link rates and the driver asked (the stages done).
 */
static struct dc_model *hand_model(void)
{
	struct dc_model *m = dc_model_new(N, 1);
	CHECK(m != NULL);
	if (!m || !(m->peers = calloc(N * N, sizeof(*m->peers))))
		exit(check_done("nvml_model_views"));
	m->vendor_ok = 1;
	for (int i = 0; i < N; i++) {
		struct dc_gpu *g = &m->ids[i];
		struct dc_device *d = &m->devices[i];
		snprintf(g->uuid, sizeof(g->uuid), "GPU-00000000-0000-0000-0000-00000000000%d", i);
		snprintf(g->name, sizeof(g->name), "Hand GPU %c", 'A' + i);
		g->pci = (struct dc_pci){ 0, (unsigned int)(0x10 + i), 0, 0 };
		g->cc_major = i == 2 ? 8 : 9;
		g->cc_minor = 0;
		d->node.has_pci = 1;
		d->node.pci = g->pci;
		d->node.switch_usable = 1;
		d->mig_known = 1;
		d->mig = i == 3;
		d->node.isolated = i == 3;
		d->links_read = 1;
		d->rate_known = i != 3;
		d->rate_source = i < 2 ? "nvlink_version" : "unknown";
		d->link_gbps = i < 2 ? 25 : 0;
		d->bar1_known = d->virt_known = 1;
		d->bar1_total = 32ull << 30;
		d->fabric.known = 1;
		d->fabric.version = 2;
		d->fabric.state = i < 2 ? DC_FABRIC_COMPLETED : DC_FABRIC_NOT_SUPPORTED;
	}
	for (int i = 0; i < 2; i++) {
		struct dc_device *d = &m->devices[i];
		for (int k = 0; k < 2; k++)
			link_to(d, DC_REMOTE_GPU, &m->ids[1 - i].pci);
		for (int k = 0; k < 4; k++)
			link_to(d, DC_REMOTE_SWITCH, NULL);
		d->node.has_domain = 1;
		d->fabric.cluster[0] = d->node.cluster[0] = 0x5e;
		d->fabric.clique = d->fabric.mc_clique = d->node.clique = 7;
	}
	set_peer(m, 0, 1, 1, 0);
	set_peer(m, 1, 0, 1, 0);
	set_peer(m, 0, 2, 0, DC_PATH_PHB);
	set_peer(m, 2, 0, 0, DC_PATH_PHB);
	set_peer(m, 1, 2, 0, DC_PATH_SYS);
	set_peer(m, 2, 1, 0, DC_PATH_SYS);
	m->cc_asked = m->cc_known = 1;
	snprintf(m->driver, sizeof(m->driver), "580.65.06");
	m->peer_stage.done = m->driver_stage.done = m->place_stage.done = 1;
	return m;
}

static void check_pair(const dmaconn_result *r, int i, int j, const char *key, const char *want)
{
	const char *got = dmaconn_result_pair_get(r, i, j, key);
	check_record(got && !strcmp(got, want), __FILE__, __LINE__, "pair %d,%d %s: \"%s\" != \"%s\"", i, j, key,
		     got ? got : "(none)", want);
}

static void check_device(const dmaconn_result *r, int i, const char *key, const char *want)
{
	const char *got = dmaconn_result_device_get(r, i, key);
	check_record(got && !strcmp(got, want), __FILE__, __LINE__, "device %d %s: \"%s\" != \"%s\"", i, key,
		     got ? got : "(none)", want);
}

/* What the view of row says of the model, GPU g at ordinal o[g]. */
static void check_result(const struct dc_connection *row, const dmaconn_result *r, const int o[N])
{
	CHECK_INT(dmaconn_result_size(r), N);
	CHECK_INT(dmaconn_result_unavailable(r), 0);
	check_device(r, o[1], DMACONN_PROP_NAME, "Hand GPU B");
	check_device(r, o[2], DMACONN_PROP_PCI_BUS_ID, "0000:12:00.0");
	check_device(r, o[3], DMACONN_PROP_MIG, "enabled");
	if (row->counts == DC_COUNTS_LINKS) {
		CHECK_INT(dmaconn_result_get(r, o[0], o[1]), 6); /* 2 direct + 4 through the switches */
		CHECK_INT(dmaconn_result_get(r, o[0], o[2]), 0);
		check_pair(r, o[1], o[0], DMACONN_PROP_NVLINK_DIRECT_LINKS, "2");
		check_device(r, o[0], DMACONN_PROP_NVLINK_SPEEDS_MBPS, "0-5:25000");
	} else if (row->counts == DC_COUNTS_PEER) {
		CHECK_INT(dmaconn_result_get(r, o[0], o[1]), 1);
		CHECK_INT(dmaconn_result_get(r, o[2], o[0]), 0); /* atomics not supported */
		check_pair(r, o[0], o[1], DMACONN_PROP_PATH, "NV6");
		check_pair(r, o[1], o[0], DMACONN_PROP_NVLINK_GBPS, "150.0");
		check_pair(r, o[0], o[1], DMACONN_PROP_NVLINK_RATE_SOURCE, "nvlink_version");
		/* The path is the pair's, whichever GPU has the lower ordinal. */
		check_pair(r, o[0], o[2], DMACONN_PROP_PATH, "PHB");
		check_pair(r, o[2], o[0], DMACONN_PROP_PATH, "PHB");
		check_pair(r, o[2], o[1], DMACONN_PROP_PATH, "SYS");
		check_pair(r, o[2], o[1], DMACONN_PROP_ATOMICS, "NS");
		check_device(r, o[2], DMACONN_PROP_BAR1_MIB, "32768");
		check_device(r, o[0], DMACONN_PROP_CONFIDENTIAL_COMPUTING, "off");
	} else if (row->counts == DC_COUNTS_DOMAIN) {
		CHECK_INT(dmaconn_result_get(r, o[1], o[0]), 1);
		CHECK_INT(dmaconn_result_get(r, o[0], o[2]), 0);
		check_device(r, o[0], DMACONN_PROP_MULTICAST_SUPPORTED, "1");
		check_device(r, o[2], DMACONN_PROP_MULTICAST_REASON, DMACONN_REASON_GPU_NOT_SUPPORTED);
		check_device(r, o[3], DMACONN_PROP_MULTICAST_REASON, DMACONN_REASON_MIG);
	} else {
		check_record(0, __FILE__, __LINE__, "NVML serves %s, which counts nothing it computes", row->label);
	}
}

/* Every view of the NVML backend over the model, GPUs in the order visible. */
static int run_views(struct dc_model *m, const char *visible, const int o[N])
{
	int views = 0;
	setenv("CUDA_VISIBLE_DEVICES", visible, 1);
	for (const struct dc_connection *row = NULL; (row = dc_connection_next(&dc_backend_nvml, row)) != NULL;) {
		struct snapshot before;
		take(&before, m);
		dmaconn_result *r = view(row);
		check_unchanged(&before, m, row->label);
		if (r)
			check_result(row, r, o);
		dmaconn_result_release(r);
		views++;
	}
	unsetenv("CUDA_VISIBLE_DEVICES");
	return views;
}

int main(void)
{
	/* The host's facts (the reasons read them below the root): none. */
	static const char *const env[][2] = {
		{ "CUDA_DEVICE_ORDER", "PCI_BUS_ID" },
		{ "DMACONN_NVML_LIBRARY", "/nonexistent/dmaconn-test/libnvidia-ml.so.1" },
		{ "DMACONN_SYSFS_ROOT", "/nonexistent/dmaconn-test/root" },
		{ "DMACONN_QUIET", "1" },
	};
	unsetenv("DMACONN_REPLAY");
	for (size_t k = 0; k < sizeof(env) / sizeof(env[0]); k++)
		setenv(env[k][0], env[k][1], 1);
	model = hand_model();
	static const int in_order[N] = { 0, 1, 2, 3 }, reversed[N] = { 3, 2, 1, 0 };
	CHECK_INT(run_views(model, "0,1,2,3", in_order), 3);
	CHECK_INT(run_views(model, "3,2,1,0", reversed), 3);
	dc_model_release(model);
	dmaconn_shutdown();
	return check_done("nvml_model_views");
}
