/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVML's replay: the "nvml" section of a topology file (docs/replay-format.md,
 * described by the field tables below, which record_nvml.c records with),
 * and every NVML function dmaconn calls (replay_nvml_table())
 * answered from it, with NVML's argument checks and return codes, so that
 * the core runs the same path as on hardware.  The section is read with the
 * file (replay/component.c); after that all is read-only but the init count,
 * for any thread.
 */
#include "replay_internal.h"
#include "replay_nvml.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pci.h"

#define MAX_DEVICES REPLAY_MAX_DEVICES
#define MAX_LINKS 64
#define PATH_LEN REPLAY_PATH_LEN
#define DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define NOT_INSTALLED DEFAULT_LIBRARY ": cannot open shared object file: No such file or directory (replayed)"
#define NS NVML_ERROR_NOT_SUPPORTED
#define PNS NVML_P2P_STATUS_NOT_SUPPORTED
#define OR_ERROR "expected %s or an error object"

static const char *const fn_names[NVML_FN_COUNT] = NVML_FN_NAMES;

/* ------------------------------------------------------------------ data */

static const struct replay_name p2p_names[] = {
	{ "OK", NVML_P2P_STATUS_OK },	{ "CNS", NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED },
	{ "GNS", NVML_P2P_STATUS_GPU_NOT_SUPPORTED }, { "TNS", NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED },
	{ "DR", NVML_P2P_STATUS_DISABLED_BY_REGKEY }, { "NS", NVML_P2P_STATUS_NOT_SUPPORTED },
	{ "U", NVML_P2P_STATUS_UNKNOWN },	{ NULL, 0 },
};
const struct replay_name replay_ancestor_names[] = {
	{ "INTERNAL", NVML_TOPOLOGY_INTERNAL }, { "SINGLE", NVML_TOPOLOGY_SINGLE },
	{ "MULTIPLE", NVML_TOPOLOGY_MULTIPLE }, { "HOSTBRIDGE", NVML_TOPOLOGY_HOSTBRIDGE },
	{ "NODE", NVML_TOPOLOGY_NODE },		{ "SYSTEM", NVML_TOPOLOGY_SYSTEM },
	{ NULL, 0 },
};
static const struct replay_name remote_type_names[] = {
	{ "GPU", NVML_NVLINK_DEVICE_TYPE_GPU },		{ "IBMNPU", NVML_NVLINK_DEVICE_TYPE_IBMNPU },
	{ "SWITCH", NVML_NVLINK_DEVICE_TYPE_SWITCH }, { "UNKNOWN", NVML_NVLINK_DEVICE_TYPE_UNKNOWN },
	{ NULL, 0 },
};

#define P2P_NONE 0xffffu
#define MAX_P2P_ANSWERS 0xfff0u

static struct replay {
	const char *load_error; /* NULL once the file loaded */
	bool nvml_present;	/* "nvml" key */
	struct replay_library lib;
	bool fn_missing[NVML_FN_COUNT];
	struct replay_system sys; /* sys.count: device_count's answer, or ndev */
	unsigned int ndev, nanswers;
	struct nvmlDevice_st *devs;
	struct p2p *answers; /* nvml.p2p_answers, what "p2p_row" entries name */
	bool any_mig;	     /* a device lists MIG instances */
} g;

static atomic_uint g_inits;

void replay_nvml_release(void)
{
	for (unsigned int i = 0; i < g.ndev; i++)
		free(g.devs[i].links), free(g.devs[i].p2p), free(g.devs[i].row), free(g.devs[i].migs);
	free(g.devs), free(g.answers);
	replay_library_release(&g.lib);
	memset(&g, 0, sizeof(g));
}

/* ----------------------------------------------------------- the format */

static int nvml_parse(const char *name, int *code)
{
	nvmlReturn_t rc;
	int r = nvml_return_parse(name, &rc);
	*code = (int)rc;
	return r;
}

/* "NOT_SUPPORTED", "SUCCESS": the names the format uses. */
static const char *nvml_name(int rc)
{
	const char *n = nvml_return_name((nvmlReturn_t)rc);
	return !n ? "UNKNOWN" : strncmp(n, "NVML_ERROR_", 11) ? n + 5 : n + 11;
}

static const struct replay_codes nvml_codes = { nvml_parse,
						"expected an NVML return code name such as \"NOT_SUPPORTED\"",
						"unknown NVML return code", NVML_ERROR_UNKNOWN };
const struct fmt_ctx replay_nvml_fmt = { NULL, &nvml_codes, nvml_name, "NVML" };

static const struct fmt_field pci_fields[] = {
	FMT_FIELD("bus_id", FMT_STR, nvmlPciInfo_t, busId, .flags = FMT_REQ),
	FMT_FIELD("bus_id_legacy", FMT_STR, nvmlPciInfo_t, busIdLegacy),
	FMT_FIELD("pci_device_id", FMT_UINT, nvmlPciInfo_t, pciDeviceId, FMT_U32),
	FMT_FIELD("pci_subsystem_id", FMT_UINT, nvmlPciInfo_t, pciSubSystemId, FMT_U32),
	{ .key = NULL },
};

/* nvmlPciInfo_t: domain, bus and device derived from the bus id, and the
 * legacy form (a 4-digit domain by definition) when absent. */
static int pci_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	char q[PATH_LEN];
	nvmlPciInfo_t *p = out;
	struct dc_pci a, b;
	(void)f;
	memset(p, 0, sizeof(*p));
	if (!json_is_object(v))
		return replay_bad(c->file, path, "expected an object with \"bus_id\" or an error object");
	if (fmt_read(c, pci_fields, v, path, p))
		return -1;
	if (dc_pci_parse(p->busId, sizeof(p->busId), &a))
		return replay_bad(c->file, replay_sub(q, path, "bus_id"), "\"%s\" is not a PCI bus id", p->busId);
	if (p->busIdLegacy[0] && dc_pci_parse(p->busIdLegacy, sizeof(p->busIdLegacy), &b))
		return replay_bad(c->file, replay_sub(q, path, "bus_id_legacy"), "\"%s\" is not a PCI bus id",
				  p->busIdLegacy);
	p->domain = a.domain;
	p->bus = a.bus;
	p->device = a.device;
	if (!p->busIdLegacy[0])
		snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.%X", a.domain & 0xffffu, a.bus & 0xffu,
			 a.device & 0xffu, a.function & 0x7u);
	return 0;
}

/* An unusable legacy id is left for the reader to derive. */
static json_t *pci_write(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	const nvmlPciInfo_t *p = in;
	struct dc_pci legacy;
	json_t *o = fmt_write(c, pci_fields, in);
	(void)f;
	if (o && dc_pci_parse(p->busIdLegacy, sizeof(p->busIdLegacy) - 1, &legacy))
		json_object_del(o, "bus_id_legacy");
	return o;
}

static const struct fmt_custom pci_custom = { pci_read, pci_write };

/* A set of CPUs or NUMA nodes in the kernel's list form ("0-55,112-167"),
 * kept as its mask (a list of any length the mask holds). */
static int list_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	const char *s = json_string_value(v);
	(void)f;
	if (!s || dc_list_parse(s, out, REPLAY_LIST_WORDS) != 0)
		return replay_bad(c->file, path, "expected a list such as \"0-55,112-167\" (members below %d) or an error object",
				  REPLAY_LIST_WORDS * DC_LIST_BITS);
	return 0;
}

static json_t *list_write(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	char *list = malloc(REPLAY_LIST_LEN);
	json_t *s = list && dc_list_format(in, REPLAY_LIST_WORDS, list, REPLAY_LIST_LEN) >= 0 ? json_string(list) : NULL;
	(void)c, (void)f;
	free(list);
	return s;
}

static const struct fmt_custom list_custom = { list_read, list_write };

#define LINK(key, kind, m, ...) FMT_FIELD(key, kind, struct link, m, FMT_RC(struct link, m##_rc, NS), __VA_ARGS__)
const struct fmt_field replay_link_fields[] = {
	LINK("state", FMT_UINT, state, .max = 1, .msg = "expected 0, 1 or an error object"),
	LINK("version", FMT_UINT, version, FMT_U32),
	LINK("remote_type", FMT_NAME, type, .aux = remote_type_names, .msg = OR_ERROR),
	LINK("remote_pci", FMT_CUSTOM, pci, .aux = &pci_custom),
	LINK("speed_mbps", FMT_UINT, speed, FMT_U32),
	{ .key = NULL },
};

#define CAP(key, i)                                                                                  \
	FMT_FIELD(key, FMT_NAME, struct p2p, status[i], FMT_RC(struct p2p, status_rc[i], NVML_SUCCESS), \
		  .aux = p2p_names, .msg = OR_ERROR)
const struct fmt_field replay_p2p_fields[] = {
	CAP("read", 0), CAP("write", 1), CAP("nvlink", 2), CAP("atomics", 3), CAP("pci", 4),
	FMT_FIELD("common_ancestor", FMT_NAME, struct p2p, ancestor, FMT_RC(struct p2p, ancestor_rc, NS),
		  .aux = replay_ancestor_names, .msg = OR_ERROR),
	{ .key = NULL },
};

#define MIG(key, kind, m, absent, ...) FMT_FIELD(key, kind, struct mig, m, FMT_RC(struct mig, m##_rc, absent), __VA_ARGS__)
const struct fmt_field replay_mig_fields[] = {
	MIG("uuid", FMT_STR, uuid, NVML_SUCCESS, .flags = FMT_REQ),
	MIG("gpu_instance_id", FMT_UINT, gi, NS, FMT_U32),
	MIG("compute_instance_id", FMT_UINT, ci, NS, FMT_U32),
	{ .key = NULL },
};

static const struct replay_name clique_type_names[] = {
	{ "unicast_pointer", NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER },
	{ "multicast_pointer", NVML_GPU_FABRIC_CLIQUE_TYPE_MULTICAST_POINTER },
	{ "unicast_logical_endpoint", NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_LOGICAL_ENDPOINT },
	{ "multicast_logical_endpoint", NVML_GPU_FABRIC_CLIQUE_TYPE_MULTICAST_LOGICAL_ENDPOINT },
	{ NULL, 0 },
};

/* A clique's type: a name NVML gives it, or a number (a type named later). */
static const struct fmt_field clique_type = { .kind = FMT_NAME, .size = 1, .aux = clique_type_names,
					      .msg = "expected %s or a number 0-255" };
static int clique_type_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path,
			    void *out)
{
	long long n;
	(void)f;
	if (!json_is_integer(v))
		return fmt_value(c, &clique_type, v, path, out);
	if (replay_get_int(c->file, v, path, 0, 255, &n))
		return -1;
	*(unsigned char *)out = (unsigned char)n;
	return 0;
}

static json_t *clique_type_write(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	const unsigned char *type = in;
	(void)f;
	return replay_name_of(clique_type_names, *type) ? fmt_json(c, &clique_type, in) : json_integer(*type);
}

static const struct fmt_custom clique_type_custom = { clique_type_read, clique_type_write };

/* One of v4's cliques: {"type": NAME or a number, "id": N}. */
static const struct fmt_field clique_fields[] = {
	FMT_FIELD("type", FMT_CUSTOM, nvmlGpuFabricClique_v1_t, type, .flags = FMT_REQ, .aux = &clique_type_custom),
	FMT_FIELD("id", FMT_UINT, nvmlGpuFabricClique_v1_t, id, .flags = FMT_REQ, FMT_U32),
	{ .key = NULL },
};

/* "cliques": v4's typed cliques, at most NVML_GPU_FABRIC_CLIQUE_MAX. */
static int cliques_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	char p[PATH_LEN];
	struct replay_cliques *cl = out;
	(void)f;
	if (!json_is_array(v))
		return replay_bad(c->file, path, "expected an array of {\"type\", \"id\"} objects");
	if (json_array_size(v) > NVML_GPU_FABRIC_CLIQUE_MAX)
		return replay_bad(c->file, path, "more than %d cliques", NVML_GPU_FABRIC_CLIQUE_MAX);
	cl->v4 = true;
	for (cl->n = 0; cl->n < json_array_size(v); cl->n++) {
		json_t *o = json_array_get(v, cl->n);
		replay_item(p, path, cl->n);
		if (!json_is_object(o))
			return replay_bad(c->file, p, "expected an object with \"type\" and \"id\"");
		if (fmt_read(c, clique_fields, o, p, &cl->c[cl->n]))
			return -1;
	}
	return 0;
}

static json_t *cliques_write(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	const struct replay_cliques *cl = in;
	json_t *a = json_array();
	bool oom = !a;
	(void)f;
	for (unsigned int i = 0; a && i < cl->n && i < NVML_GPU_FABRIC_CLIQUE_MAX; i++)
		replay_append(&oom, a, fmt_write(c, clique_fields, &cl->c[i]));
	if (oom)
		json_decref(a);
	return oom ? NULL : a;
}

static const struct fmt_custom cliques_custom = { cliques_read, cliques_write };

#define FABRIC(key, kind, m, ...) FMT_FIELD(key, kind, struct replay_fabric, v3.m, __VA_ARGS__)
static const struct fmt_field fabric_fields[] = {
	FABRIC("state", FMT_UINT, state, .flags = FMT_REQ, .min = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED,
	       .max = NVML_GPU_FABRIC_STATE_COMPLETED),
	FABRIC("status", FMT_CODE, status),
	FABRIC("cluster_uuid", FMT_UUID, clusterUuid),
	FABRIC("clique_id", FMT_UINT, cliqueId, FMT_U32),
	FABRIC("health_mask", FMT_UINT, healthMask, FMT_U32),
	FABRIC("health_summary", FMT_UINT, healthSummary, FMT_U32),
	FMT_FIELD("cliques", FMT_CUSTOM, struct replay_fabric, cliques, .aux = &cliques_custom),
	{ .key = NULL },
};

static int nvlink_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out);
static int p2p_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out);
static int row_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out);
static int migs_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out);
#define WHOLE(k, fn) { .key = k, .kind = FMT_CUSTOM, .aux = &(const struct fmt_custom){ fn, NULL } }

#define DEV(key, kind, m, absent, ...) DEV_RC(key, kind, m, m##_rc, absent, __VA_ARGS__)
#define DEV_RC(key, kind, m, rc, absent, ...) \
	FMT_FIELD(key, kind, struct nvmlDevice_st, m, FMT_RC(struct nvmlDevice_st, rc, absent), __VA_ARGS__)
const struct fmt_field replay_dev_fields[] = {
	DEV("name", FMT_STR, name, NVML_SUCCESS),
	DEV("uuid", FMT_STR, uuid, NVML_SUCCESS, .flags = FMT_REQ),
	DEV("pci", FMT_CUSTOM, pci, NVML_SUCCESS, .flags = FMT_REQ, .aux = &pci_custom),
	DEV("cuda_compute_capability", FMT_PAIR, cc, NS, .max = INT_MAX, .msg = "expected [major, minor] or an error object"),
	DEV("mig_mode", FMT_PAIR, mig, NS, FMT_U32, .msg = "expected [current, pending] or an error object"),
	DEV("fabric", FMT_OBJ, fabric, NS, .aux = fabric_fields,
	    .msg = "expected an object with \"state\" or an error object"),
	DEV("bar1_total", FMT_UINT, bar1, NS, .max = LLONG_MAX),
	DEV("virtualization_mode", FMT_UINT, virt, NS, FMT_U32),
	/* NVML_DEVICE_QUERIES: answers shown as they are. */
#define QUERY_(fn, key, prop) DEV(key, FMT_UINT, q_##fn, NS, FMT_U32),
	NVML_DEVICE_QUERIES(QUERY_)
#undef QUERY_
	/* Placement: affinity (node scope), the memory's NUMA node, C2C. */
	DEV("cpu_affinity", FMT_CUSTOM, cpus, NS, .aux = &list_custom),
	DEV("memory_affinity", FMT_CUSTOM, mems, NS, .aux = &list_custom),
	DEV("numa_node_id", FMT_UINT, numa, NS, FMT_U32),
	DEV_RC("c2c_link_count", FMT_UINT, c2c[0], c2c_rc[0], NS, FMT_U32),
	DEV_RC("c2c_link_status", FMT_UINT, c2c[1], c2c_rc[1], NS, FMT_U32),
	DEV_RC("c2c_link_max_bw", FMT_UINT, c2c[2], c2c_rc[2], NS, FMT_U32),
	/* The device itself: its links, peers and MIG instances. */
	WHOLE("nvlink", nvlink_read),
	WHOLE("p2p", p2p_read),
	WHOLE("p2p_row", row_read),
	WHOLE("mig_devices", migs_read),
	{ .key = NULL },
};

#define SYS(key, kind, m, rc, absent, ...) \
	FMT_FIELD(key, kind, struct replay_system, m, FMT_RC(struct replay_system, rc, absent), __VA_ARGS__)
static const struct fmt_field conf_fields[] = {
	FMT_FIELD("environment", FMT_UINT, nvmlConfComputeSystemState_t, environment, FMT_U32),
	FMT_FIELD("cc_feature", FMT_UINT, nvmlConfComputeSystemState_t, ccFeature, FMT_U32),
	FMT_FIELD("devtools_mode", FMT_UINT, nvmlConfComputeSystemState_t, devToolsMode, FMT_U32),
	{ .key = NULL },
};
const struct fmt_field replay_sys_fields[] = {
	SYS("driver_version", FMT_STR, driver, driver_rc, NS),
	SYS("nvml_version", FMT_STR, nvml_version, nvml_version_rc, NS),
	SYS("cuda_driver_version", FMT_INT, cuda, cuda_rc, NS, .min = INT_MIN, .max = INT_MAX),
	SYS("conf_compute", FMT_OBJ, conf, conf_rc, NS, .aux = conf_fields, .msg = "expected an object or an error object"),
	SYS("device_count", FMT_UINT, count, count_rc, NVML_SUCCESS, .max = MAX_DEVICES),
	{ .key = NULL },
};

/* ------------------------------------------------------------ file reader */

/* "nvlink": entries of `repeat` (1) equal links, or {"error"} for all. */
static int nvlink_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *arr, const char *path, void *out)
{
	char p[PATH_LEN], q[PATH_LEN];
	struct nvmlDevice_st *d = out;
	struct link l;
	long long repeat = 1;
	int rc, r;
	(void)f;
	if (!json_is_array(arr))
		return replay_bad(c->file, path, "expected an array of link objects");
	if (!(d->links = malloc(MAX_LINKS * sizeof(l))))
		return replay_bad(c->file, path, "out of memory");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *e = json_array_get(arr, i), *rep = json_object_get(e, "repeat");
		memset(&l, 0, sizeof(l));
		replay_item(p, path, i);
		if (!json_is_object(e))
			return replay_bad(c->file, p, "expected an object");
		if (rep && replay_get_int(c->file, rep, replay_sub(q, p, "repeat"), 1, MAX_LINKS, &repeat))
			return -1;
		if ((r = fmt_error_object(c, e, p, &rc)) < 0 || (!r && fmt_read(c, replay_link_fields, e, p, &l)))
			return -1;
		if (r)
			l.state_rc = l.version_rc = l.type_rc = l.pci_rc = l.speed_rc = rc;
		if (repeat > MAX_LINKS - (long long)d->nlinks)
			return replay_bad(c->file, p, "more than %d links in all", MAX_LINKS);
		for (; repeat > 0; repeat--)
			d->links[d->nlinks++] = l;
		repeat = 1;
	}
	d->has_nvlink = true;
	return 0;
}

/* A "p2p" entry towards peer (ndev 0: one of nvml.p2p_answers, whose rows say whose it is). */
static int p2p_entry(const struct fmt_ctx *c, json_t *e, const char *path, unsigned int ndev, struct p2p *out)
{
	char p[PATH_LEN];
	long long peer;
	json_t *pv = json_object_get(e, "peer");
	for (int k = 0; k < REPLAY_P2P_CAPS; k++)
		out->status[k] = PNS;
	if (!json_is_object(e))
		return replay_bad(c->file, path, "expected an object");
	if (!ndev && pv)
		return replay_bad(c->file, path, "\"peer\" belongs to a device's \"p2p\" list");
	if (ndev && !pv)
		return replay_bad(c->file, path, "\"peer\" is required");
	/* A device may be its own peer: NVML answers for that pair too. */
	if (ndev && replay_get_int(c->file, pv, replay_sub(p, path, "peer"), 0, (long long)ndev - 1, &peer))
		return -1;
	out->peer = ndev ? (unsigned int)peer : 0;
	return fmt_read(c, replay_p2p_fields, e, path, out);
}

static int cmp_p2p(const void *a, const void *b)
{
	const struct p2p *x = a, *y = b;
	return x->peer < y->peer ? -1 : x->peer > y->peer;
}

static int p2p_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *arr, const char *path, void *out)
{
	char p[PATH_LEN];
	struct nvmlDevice_st *d = out;
	size_t n = json_array_size(arr);
	(void)f;
	if (json_is_array(arr) && n > g.ndev)
		return replay_bad(c->file, path, "more peers than the %u devices", g.ndev);
	if (fmt_array(c, arr, path, "peer objects", g.ndev, sizeof(*d->p2p), (void **)&d->p2p, &n))
		return -1;
	d->np2p = (unsigned int)n;
	for (size_t i = 0; i < n; i++)
		if (p2p_entry(c, json_array_get(arr, i), replay_item(p, path, i), g.ndev, &d->p2p[i]))
			return -1;
	if (n) /* an empty list has no array to sort */
		qsort(d->p2p, n, sizeof(*d->p2p), cmp_p2p);
	for (size_t i = 1; i < n; i++)
		if (d->p2p[i].peer == d->p2p[i - 1].peer)
			return replay_bad(c->file, path, "peer %u is listed twice", d->p2p[i].peer);
	return 0;
}

/*
 * A device's "p2p_row" (version 2): for peers 0..n-1 in order, the index of
 * its entry of nvml.p2p_answers or "-" for none, comma-separated, a run of
 * k equal ones written "x*k": "0*3,-,0*4" is 8 peers.  n*n pairs of a rack
 * cost a few bytes per device instead of an object per pair.
 */
static int row_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	struct nvmlDevice_st *d = out;
	const char *s = json_string_value(v), *at = s;
	size_t n = 0;
	(void)f;
	if (!s)
		return replay_bad(c->file, path, "expected a string such as \"0*3,-,0*4\"");
	if (!(d->row = malloc(((size_t)g.ndev + 1) * sizeof(*d->row))))
		return replay_bad(c->file, path, "out of memory");
	while (*at) {
		unsigned long value = P2P_NONE, run = 1;
		char *end = (char *)at + 1;
		if (*at != '-' && (*at < '0' || *at > '9'))
			return replay_bad(c->file, path, "expected an answer index or '-' at offset %zu", (size_t)(at - s));
		if (*at != '-' && (value = strtoul(at, &end, 10)) >= g.nanswers)
			return replay_bad(c->file, path, "answer %lu, but nvml.p2p_answers has %u", value, g.nanswers);
		if (*end == '*' && (end[1] < '1' || end[1] > '9'))
			return replay_bad(c->file, path, "expected a run length after '*'");
		if (*end == '*')
			run = strtoul(end + 1, &end, 10);
		if (run > g.ndev - n)
			return replay_bad(c->file, path, "more than the %u peers", g.ndev);
		while (run--)
			d->row[n++] = (uint16_t)value;
		if (*end && (*end != ',' || !end[1]))
			return replay_bad(c->file, path, "expected ',' at offset %zu", (size_t)(end - s));
		at = *end ? end + 1 : end;
	}
	if (n != g.ndev)
		return replay_bad(c->file, path, "%zu peers, but %u devices are listed", n, g.ndev);
	return 0;
}

/* A device's "mig_devices": its MIG instances, for a GPU in MIG mode. */
static int migs_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *arr, const char *path, void *out)
{
	struct nvmlDevice_st *d = out;
	char p[PATH_LEN];
	size_t n = json_array_size(arr);
	(void)f;
	if (json_is_array(arr) && n > 64)
		return replay_bad(c->file, path, "more than 64 MIG instances");
	if (fmt_array(c, arr, path, "MIG instance objects", 64, sizeof(*d->migs), (void **)&d->migs, &n))
		return -1;
	d->nmig = (unsigned int)n;
	g.any_mig = g.any_mig || n > 0;
	for (size_t k = 0; k < n; k++) {
		d->migs[k].parent = d->index;
		if (fmt_read(c, replay_mig_fields, json_array_get(arr, k), replay_item(p, path, k), &d->migs[k]))
			return -1;
	}
	return 0;
}

/* Devices by UUID, or with by_bus by bus id, ties by position, to find one
 * listed twice (the file is read by one thread). */
static int by_bus;

static int dev_key(const struct nvmlDevice_st *a, const struct nvmlDevice_st *b)
{
	struct dc_pci x, y;
	dc_pci_parse(a->pci.busId, sizeof(a->pci.busId), &x);
	dc_pci_parse(b->pci.busId, sizeof(b->pci.busId), &y);
	/* Case ignored, as CUDA_VISIBLE_DEVICES matches UUIDs. */
	return by_bus ? dc_pci_compare(&x, &y) : strcasecmp(a->uuid, b->uuid);
}

static int cmp_dev(const void *pa, const void *pb)
{
	const struct nvmlDevice_st *a = *(struct nvmlDevice_st *const *)pa, *b = *(struct nvmlDevice_st *const *)pb;
	int c = dev_key(a, b);
	return c ? c : a->index < b->index ? -1 : 1;
}

/* A GPU is listed once: the same UUID or bus id twice would show a device
 * and its copy, with NVLinks between them. */
static int check_unique_devices(const struct fmt_ctx *c, const char *path)
{
	char p[PATH_LEN], first[PATH_LEN], second[PATH_LEN];
	struct nvmlDevice_st **by = calloc(g.ndev + 1, sizeof(*by));
	int rc = by ? 0 : replay_bad(c->file, path, "out of memory");
	for (by_bus = 0; by && !rc && by_bus < 2; by_bus++) {
		size_t n = 0;
		for (unsigned int i = 0; i < g.ndev; i++)
			if (!g.devs[i].handle_rc && !(by_bus ? g.devs[i].pci_rc : g.devs[i].uuid_rc))
				by[n++] = &g.devs[i];
		qsort(by, n, sizeof(*by), cmp_dev);
		for (size_t k = 1; !rc && k < n; k++) {
			if (dev_key(by[k - 1], by[k]))
				continue;
			replay_item(first, path, by[k - 1]->index);
			replay_sub(p, replay_item(second, path, by[k]->index), by_bus ? "pci.bus_id" : "uuid");
			rc = replay_bad(c->file, p, "\"%s\" is also the %s of %s", by_bus ? by[k]->pci.busId : by[k]->uuid,
					by_bus ? "bus id" : "UUID", first);
		}
	}
	free(by);
	return rc;
}

static int read_devices(const struct fmt_ctx *c, json_t *arr, const char *path)
{
	char p[PATH_LEN];
	size_t n;
	if (fmt_array(c, arr, path, "devices", MAX_DEVICES, sizeof(*g.devs), (void **)&g.devs, &n))
		return -1;
	g.ndev = (unsigned int)n;
	for (size_t i = 0; i < n; i++) {
		struct nvmlDevice_st *d = &g.devs[i];
		json_t *o = json_array_get(arr, i);
		int r = fmt_error_object(c, o, replay_item(p, path, i), (int *)&d->handle_rc);
		d->index = (unsigned int)i;
		strcpy(d->name, "NVIDIA GPU");
		if (r < 0 || (!r && !json_is_object(o)))
			return r < 0 ? -1 : replay_bad(c->file, p, "expected a device object or an error object");
		if (!r && json_object_get(o, "p2p") && json_object_get(o, "p2p_row"))
			return replay_bad(c->file, p, "\"p2p\" and \"p2p_row\" both describe the peers; give one");
		if (!r && fmt_read(c, replay_dev_fields, o, p, d))
			return -1;
	}
	return check_unique_devices(c, path);
}

static int read_nvml(const struct fmt_ctx *c, json_t *nvml)
{
	char p[PATH_LEN];
	json_t *v;
	size_t n;
	if (!json_is_object(nvml))
		return replay_bad(c->file, "nvml", "expected an object");
	g.nvml_present = true;
	if (replay_library_read(c, nvml, "nvml", &g.lib) || g.lib.error)
		return g.lib.error ? 0 : -1; /* with an error, nothing else can be reached */
	/* A name dmaconn never calls hides nothing it could ask. */
	for (int id = 0; id < NVML_FN_COUNT; id++)
		g.fn_missing[id] = replay_library_lacks(&g.lib, fn_names[id]);
	if ((v = json_object_get(nvml, "p2p_answers"))) {
		if (json_array_size(v) > MAX_P2P_ANSWERS)
			return replay_bad(c->file, "nvml.p2p_answers", "more than %u answers", MAX_P2P_ANSWERS);
		if (fmt_array(c, v, "nvml.p2p_answers", "answer objects", MAX_P2P_ANSWERS, sizeof(*g.answers),
			      (void **)&g.answers, &n))
			return -1;
		g.nanswers = (unsigned int)n;
		for (size_t i = 0; i < n; i++)
			if (p2p_entry(c, json_array_get(v, i), replay_item(p, "nvml.p2p_answers", i), 0, &g.answers[i]))
				return -1;
	}
	if ((v = json_object_get(nvml, "devices")) && read_devices(c, v, "nvml.devices"))
		return -1;
	g.sys.count = g.ndev;
	if (fmt_read(c, replay_sys_fields, nvml, "nvml", &g.sys))
		return -1;
	if (g.sys.count > g.ndev)
		return replay_bad(c->file, "nvml.device_count", "%u, but %u devices are listed", g.sys.count, g.ndev);
	return 0;
}

/* What every call checks first: a usable file, the symbol, initialisation. */
static nvmlReturn_t enter(enum nvml_fn_id fn)
{
	if (!replay_loaded())
		return NVML_ERROR_UNKNOWN;
	if (g.fn_missing[fn])
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	if (!g.nvml_present || g.lib.error)
		return fn == NVML_FN_nvmlInit_v2 ? NVML_ERROR_LIBRARY_NOT_FOUND : NVML_ERROR_UNINITIALIZED;
	if (fn != NVML_FN_nvmlInit_v2 && atomic_load(&g_inits) == 0)
		return NVML_ERROR_UNINITIALIZED;
	return NVML_SUCCESS;
}

/* The device or MIG instance behind a handle this library gave out, or NULL. */
static struct nvmlDevice_st *dev_of(nvmlDevice_t h)
{
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)g.devs;
	size_t i = (p - base) / sizeof(*g.devs);
	if (!h || !g.devs || p < base || (p - base) % sizeof(*g.devs) || i >= g.sys.count || g.devs[i].handle_rc)
		return NULL;
	return &g.devs[i];
}

static struct mig *mig_of(nvmlDevice_t h)
{
	uintptr_t p = (uintptr_t)h;
	for (unsigned int i = 0; h && g.any_mig && i < g.sys.count; i++) {
		uintptr_t base = (uintptr_t)g.devs[i].migs;
		if (p >= base && p < base + g.devs[i].nmig * sizeof(struct mig) && (p - base) % sizeof(struct mig) == 0)
			return (struct mig *)h;
	}
	return NULL;
}

/* A link the device has (without "nvlink", as on PCIe-only GPUs, every link
 * answers NOT_SUPPORTED), or NULL (NVML's INVALID_ARGUMENT). */
static const struct link *link_of(const struct nvmlDevice_st *d, unsigned int ln)
{
	static const struct link unsupported = { .state_rc = NS, .version_rc = NS, .type_rc = NS, .pci_rc = NS, .speed_rc = NS };
	if (!d->has_nvlink)
		return ln < NVML_NVLINK_MAX_LINKS ? &unsupported : NULL;
	return ln < d->nlinks ? &d->links[ln] : NULL;
}

/* The pair's answers, or NULL when a handle is none of ours.  NVML answers
 * for a device paired with itself as for any pair; a peer the file says
 * nothing about answers status NS, ancestor NOT_SUPPORTED. */
static const struct p2p *pair_of(nvmlDevice_t h1, nvmlDevice_t h2)
{
	static const struct p2p none = { .status = { PNS, PNS, PNS, PNS, PNS }, .ancestor_rc = NS };
	struct nvmlDevice_st *d1 = dev_of(h1), *d2 = dev_of(h2);
	struct p2p key = { .peer = d2 ? d2->index : 0 };
	const struct p2p *p = NULL;
	if (!d1 || !d2)
		return NULL;
	if (d1->row)
		p = d1->row[d2->index] != P2P_NONE ? &g.answers[d1->row[d2->index]] : NULL;
	else
		p = d1->np2p ? bsearch(&key, d1->p2p, d1->np2p, sizeof(key), cmp_p2p) : NULL;
	return p ? p : &none;
}

static nvmlReturn_t put_str(const char *s, char *buf, unsigned int length)
{
	size_t n = strlen(s);
	if (length <= n)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n + 1);
	return NVML_SUCCESS;
}

void replay_nvml_mask(unsigned long *to, unsigned int words, const unsigned long *from, unsigned int from_words)
{
	memset(to, 0, sizeof(*to) * words);
	memcpy(to, from, sizeof(*to) * (words < from_words ? words : from_words));
}

/* Both ways, as kept and as the caller's struct, member by member (of one
 * size: a member whose type changes stops the build). */
#define MOVE(kept, theirs)                                                                                \
	do {                                                                                              \
		_Static_assert(sizeof(kept) == sizeof(theirs), #kept " and " #theirs " differ in size");  \
		memcpy(out ? (void *)&(theirs) : (void *)&(kept), out ? (void *)&(kept) : (void *)&(theirs), \
		       sizeof(kept));                                                                     \
	} while (0)
void replay_nvml_fabric(struct replay_fabric *f, void *info, int v, bool out)
{
	nvmlGpuFabricInfo_t *v1 = info;
	nvmlGpuFabricInfo_v4_t *v4 = info;
	nvmlGpuFabricInfo_v3_t k = f->v3;
	if (v == 2 || v == 3) {
		k.version = ((nvmlGpuFabricInfo_v3_t *)info)->version;
		memcpy(out ? info : &f->v3, out ? &k : info, v == 3 ? sizeof(k) : sizeof(nvmlGpuFabricInfo_v2_t));
		return;
	}
	if (out)
		memset(info, 0, v == 1 ? sizeof(*v1) : sizeof(*v4));
	MOVE(f->v3.clusterUuid, *(v == 1 ? &v1->clusterUuid : &v4->clusterUuid));
	MOVE(f->v3.status, *(v == 1 ? &v1->status : &v4->status));
	MOVE(f->v3.state, *(v == 1 ? &v1->state : &v4->state));
	if (v == 1) {
		MOVE(f->v3.cliqueId, v1->cliqueId);
		return;
	}
	MOVE(f->v3.healthMask, v4->healthMask);
	MOVE(f->v3.healthSummary, v4->healthSummary);
	MOVE(f->cliques.n, v4->numCliques);
	MOVE(f->cliques.c, v4->cliques);
	if (out)
		return;
	f->cliques.v4 = true;
	f->cliques.n = f->cliques.n > NVML_GPU_FABRIC_CLIQUE_MAX ? NVML_GPU_FABRIC_CLIQUE_MAX : f->cliques.n;
	for (unsigned int c = f->cliques.n; c-- > 0;)
		if (f->cliques.c[c].type == NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER)
			f->v3.cliqueId = f->cliques.c[c].id;
}

/* ------------------------------------------------------------- answers */

/*
 * The answer of a function, written from its row of nvml_functions.h: what
 * enter() checks (for the function id), then INVALID_ARGUMENT unless `find`
 * finds what the arguments' shape names (setting d, l, p or m) and `given`
 * holds, the recorded `code`, else the out arguments filled by `set`.
 * ANSWER_OF_fn is "given, code, set", aN the function's Nth argument.
 */
#define ANSWER(fn, params, id, find) ANSWER_WITH(fn, params, id, find, ANSWER_OF_##fn)
#define ANSWER_WITH(...) ANSWER_WITH_(__VA_ARGS__)
#define ANSWER_WITH_(fn, params, id, find, given, code, set) \
	static nvmlReturn_t replay_##fn DC_NAMED(params)    \
	{                                                     \
		struct nvmlDevice_st *d = NULL;               \
		const struct link *l = NULL;                  \
		const struct p2p *p = NULL;                   \
		struct mig *m = NULL;                         \
		nvmlReturn_t rc = enter(NVML_FN_##id);        \
		(void)d, (void)l, (void)p, (void)m;           \
		if (!rc && !((find) && (given)))              \
			rc = NVML_ERROR_INVALID_ARGUMENT;     \
		if (!rc && !(rc = (code)))                    \
			set;                                  \
		return rc;                                    \
	}
#define ANSWER_SYS(fn, params) ANSWER(fn, params, fn, 1)
#define ANSWER_INDEX(fn, params) ANSWER(fn, params, fn, 1)
#define ANSWER_DEV(fn, params) ANSWER(fn, params, fn, d = dev_of(a0))
#define ANSWER_DEV_MIG(fn, params) ANSWER(fn, params, fn, (m = mig_of(a0)) || (d = dev_of(a0)))
#define ANSWER_FIELDS ANSWER_DEV
#define ANSWER_LINK(fn, params) ANSWER(fn, params, fn, (d = dev_of(a0)) && (l = link_of(d, a1)))
#define ANSWER_PEER(fn, params) ANSWER(fn, params, fn, p = pair_of(a0, a1))
/* MIG instances answer as nvmlDeviceGetMigMode is there and fails. */
#define ANSWER_MIG_GPU(fn, params) ANSWER(fn, params, nvmlDeviceGetMigMode, d = dev_of(a0))
#define ANSWER_MIG(fn, params) ANSWER(fn, params, nvmlDeviceGetMigMode, m = mig_of(a0))
/* NVML_DEVICE_QUERIES: the device's field of the function's own. */
#define ANSWER_QUERY(fn, params) ANSWER_WITH(fn, params, fn, d = dev_of(a0), a1, d->q_##fn##_rc, *a1 = d->q_##fn)
/* Written out below. */
#define ANSWER_NONE(fn, params)
#define ANSWER_TEXT(fn, params)

static nvmlReturn_t replay_nvmlInit_v2(void)
{
	nvmlReturn_t rc = enter(NVML_FN_nvmlInit_v2);
	if (rc == NVML_SUCCESS && (rc = (nvmlReturn_t)g.lib.init) == NVML_SUCCESS)
		atomic_fetch_add(&g_inits, 1);
	return rc;
}

static nvmlReturn_t replay_nvmlShutdown(void)
{
	nvmlReturn_t rc = enter(NVML_FN_nvmlShutdown);
	unsigned int n = atomic_load(&g_inits);
	do {
		if (rc || n == 0)
			return rc ? rc : NVML_ERROR_UNINITIALIZED;
	} while (!atomic_compare_exchange_weak(&g_inits, &n, n - 1));
	return NVML_SUCCESS;
}

/* As libnvidia-ml 580 words them. */
static const char *replay_nvmlErrorString(nvmlReturn_t result)
{
	static const char *const text[] = {
		"Success", "Uninitialized", "Invalid Argument", "Not Supported", "Insufficient Permissions",
		"Already Initialized", "Not Found", "Insufficient Size", "Insufficient External Power",
		"Driver Not Loaded", "Timeout", "Interrupt Request Issue", "NVML Shared Library Not Found",
		"Function Not Found", "Corrupted infoROM", "GPU is lost", "GPU requires reset",
		"GPU access blocked by the operating system", "Driver/library version mismatch",
		"In use by another client", "Insufficient Memory", "No data", "vGPU ECC not supported",
		"Insufficient Resources", "Invalid Frequency", "Argument version mismatch",
		"Requested functionality has been deprecated", "System is not in ready state",
		"No supported GPUs were found", "Resource not in correct state to perform requested operation",
		"Reset type is not supported for given device",
	};
	return result >= 0 && (size_t)result < sizeof(text) / sizeof(text[0]) ? text[result] : "Unknown Error";
}

#define ANSWER_OF_nvmlSystemGetDriverVersion a0, g.sys.driver_rc, return put_str(g.sys.driver, a0, a1)
#define ANSWER_OF_nvmlSystemGetNVMLVersion a0, g.sys.nvml_version_rc, return put_str(g.sys.nvml_version, a0, a1)
#define ANSWER_OF_nvmlSystemGetCudaDriverVersion_v2 a0, g.sys.cuda_rc, *a0 = g.sys.cuda
#define ANSWER_OF_nvmlDeviceGetCount_v2 a0, g.sys.count_rc, *a0 = g.sys.count
#define ANSWER_OF_nvmlSystemGetConfComputeState a0, g.sys.conf_rc, *a0 = g.sys.conf
#define ANSWER_OF_nvmlDeviceGetHandleByIndex_v2 a0 < g.sys.count && a1, g.devs[a0].handle_rc, *a1 = &g.devs[a0]
#define ANSWER_OF_nvmlDeviceGetName a1, d->name_rc, return put_str(d->name, a1, a2)
/* A GPU's UUID, or a MIG instance's (a handle of its "mig_devices"). */
#define ANSWER_OF_nvmlDeviceGetUUID a1, m ? m->uuid_rc : d->uuid_rc, return put_str(m ? m->uuid : d->uuid, a1, a2)
#define ANSWER_OF_nvmlDeviceGetPciInfo_v3 a1, d->pci_rc, *a1 = d->pci
#define ANSWER_OF_nvmlDeviceGetCudaComputeCapability a1 && a2, d->cc_rc, (*a1 = d->cc[0], *a2 = d->cc[1])
#define ANSWER_OF_nvmlDeviceGetMigMode a1 && a2, d->mig_rc, (*a1 = d->mig[0], *a2 = d->mig[1])
#define ANSWER_OF_nvmlDeviceGetBAR1MemoryInfo a1, d->bar1_rc, (a1->bar1Total = a1->bar1Free = d->bar1, a1->bar1Used = 0)
#define ANSWER_OF_nvmlDeviceGetNumaNodeId a1, d->numa_rc, *a1 = d->numa
#define ANSWER_OF_nvmlDeviceGetVirtualizationMode a1, d->virt_rc, *a1 = (nvmlGpuVirtualizationMode_t)d->virt
/* The format keeps the node scope's affinity only (the one dmaconn asks). */
#define AFFINITY(m)                                                           \
	a1 && a2 && a3 <= 1, a3 == NVML_AFFINITY_SCOPE_NODE ? d->m##_rc : NS, \
	    replay_nvml_mask(a2, a1, d->m, REPLAY_LIST_WORDS)
#define ANSWER_OF_nvmlDeviceGetCpuAffinityWithinScope AFFINITY(cpus)
#define ANSWER_OF_nvmlDeviceGetMemoryAffinity AFFINITY(mems)
#define ANSWER_OF_nvmlDeviceGetGpuFabricInfoV                                                                  \
	a1, a1->version != nvmlGpuFabricInfo_v2 && a1->version != nvmlGpuFabricInfo_v3 ? NVML_ERROR_ARGUMENT_VERSION_MISMATCH \
											: d->fabric_rc,       \
	    replay_nvml_fabric(&d->fabric, a1, a1->version == nvmlGpuFabricInfo_v3 ? 3 : 2, true)
#define ANSWER_OF_nvmlDeviceGetGpuFabricInfo a1, d->fabric_rc, replay_nvml_fabric(&d->fabric, a1, 1, true)
/* v4 answers a fabric that lists "cliques"; a device without a fabric (an
 * error object) the same error; any other: FUNCTION_NOT_FOUND, as a driver
 * that predates v4. */
#define ANSWER_OF_nvmlDeviceGetGpuFabricInfo_v4                                                        \
	a1, d->fabric_rc ? d->fabric_rc : d->fabric.cliques.v4 ? NVML_SUCCESS : NVML_ERROR_FUNCTION_NOT_FOUND, \
	    replay_nvml_fabric(&d->fabric, a1, 4, true)
#define ANSWER_OF_nvmlDeviceGetNvLinkState a2, l->state_rc, *a2 = l->state
#define ANSWER_OF_nvmlDeviceGetNvLinkVersion a2, l->version_rc, *a2 = l->version
#define ANSWER_OF_nvmlDeviceGetNvLinkRemoteDeviceType a2, l->type_rc, *a2 = l->type
#define ANSWER_OF_nvmlDeviceGetNvLinkRemotePciInfo_v2 a2, l->pci_rc, *a2 = l->pci
/* NVML 580 answers OK for a capability index it does not know. */
#define ANSWER_OF_nvmlDeviceGetP2PStatus                                                     \
	a3, a2 >= 0 && a2 < REPLAY_P2P_CAPS ? p->status_rc[a2] : NVML_SUCCESS,               \
	    *a3 = a2 >= 0 && a2 < REPLAY_P2P_CAPS ? p->status[a2] : NVML_P2P_STATUS_OK
#define ANSWER_OF_nvmlDeviceGetTopologyCommonAncestor a2, p->ancestor_rc, *a2 = p->ancestor
/* The MIG queries answer from a device's "mig_devices"; a GPU without that
 * key answers NOT_SUPPORTED unless known not in MIG mode, as a recording
 * made before MIG instances were recorded cannot say more. */
#define ANSWER_OF_nvmlDeviceGetMaxMigDeviceCount \
	a1, d->migs || (!d->mig_rc && !d->mig[0]) ? NVML_SUCCESS : NS, *a1 = d->nmig
#define ANSWER_OF_nvmlDeviceGetMigDeviceHandleByIndex a2 && a1 < d->nmig, NVML_SUCCESS, *a2 = (nvmlDevice_t)&d->migs[a1]
#define ANSWER_OF_nvmlDeviceGetDeviceHandleFromMigDeviceHandle a1, NVML_SUCCESS, *a1 = (nvmlDevice_t)&g.devs[m->parent]
#define ANSWER_OF_nvmlDeviceGetGpuInstanceId a1, m->gi_rc, *a1 = m->gi
#define ANSWER_OF_nvmlDeviceGetComputeInstanceId a1, m->ci_rc, *a1 = m->ci

/* nvmlDeviceGetFieldValues: per-link state, version and speed, the link
 * count (entries not answering INVALID_ARGUMENT) and the active links to
 * NVSwitches; NVML answers fields of absent links NOT_SUPPORTED. */
static nvmlReturn_t field_value(const struct nvmlDevice_st *d, unsigned int id, unsigned int ln, unsigned int *x)
{
	const struct link *l = link_of(d, ln);
	bool count = id == NVML_FI_DEV_NVLINK_LINK_COUNT, to_switch = id == NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT;
	if (id >= NVML_FI_DEV_C2C_LINK_COUNT && id <= NVML_FI_DEV_C2C_LINK_GET_MAX_BW) {
		*x = d->c2c[id - NVML_FI_DEV_C2C_LINK_COUNT];
		return d->c2c_rc[id - NVML_FI_DEV_C2C_LINK_COUNT];
	}
	if (count || to_switch) {
		for (unsigned int i = 0; d->has_nvlink && i < d->nlinks; i++)
			*x += count ? d->links[i].state_rc != NVML_ERROR_INVALID_ARGUMENT
				    : !d->links[i].state_rc && d->links[i].state == NVML_FEATURE_ENABLED &&
						!d->links[i].type_rc && d->links[i].type == NVML_NVLINK_DEVICE_TYPE_SWITCH;
		return d->has_nvlink ? NVML_SUCCESS : NS;
	}
	if (!l)
		return NS;
	*x = id == NVML_FI_DEV_NVLINK_GET_STATE ? (unsigned int)l->state : id == NVML_FI_DEV_NVLINK_GET_VERSION ? l->version : l->speed;
	return id == NVML_FI_DEV_NVLINK_GET_STATE ? l->state_rc : id == NVML_FI_DEV_NVLINK_GET_VERSION ? l->version_rc : l->speed_rc;
}

static void field_values(const struct nvmlDevice_st *d, int count, nvmlFieldValue_t *values)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	for (int i = 0; i < count; i++) {
		nvmlFieldValue_t *v = &values[i];
		unsigned int x = 0, id = v->fieldId;
		if (id != NVML_FI_DEV_NVLINK_LINK_COUNT && id != NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT &&
		    id != NVML_FI_DEV_NVLINK_GET_SPEED && id != NVML_FI_DEV_NVLINK_GET_STATE &&
		    id != NVML_FI_DEV_NVLINK_GET_VERSION && (id < NVML_FI_DEV_C2C_LINK_COUNT || id > NVML_FI_DEV_C2C_LINK_GET_MAX_BW)) {
			/* A field the format does not describe: NVML leaves the rest
			 * of the entry alone for ids it does not know. */
			v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
			continue;
		}
		v->nvmlReturn = field_value(d, id, v->scopeId, &x);
		v->timestamp = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		v->latencyUsec = 0;
		v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
		memset(&v->value, 0, sizeof(v->value));
		v->value.uiVal = v->nvmlReturn ? 0 : x;
	}
}

#define ANSWER_OF_nvmlDeviceGetFieldValues a1 > 0 && a2, NVML_SUCCESS, field_values(d, a1, a2)
#define ANSWER_(fn, ret, params, required, args) ANSWER_##args(fn, params)
NVML_ALL_FUNCTIONS_ARGS(ANSWER_)
#undef ANSWER_

/* ------------------------------------------------------------------- ops */

int replay_nvml_table(void *table, char *err, size_t errlen)
{
	struct nvml_api *api = table;
	const char *library = DEFAULT_LIBRARY; /* "LIBRARY lacks FUNCTION" */
	memset(api, 0, sizeof(*api));
	if (!replay_loaded()) {
		snprintf(err, errlen, "%s", replay_load_failure());
		return -1;
	}
#define REPLAY_TABLE_(fn, ret, params, required) REPLAY_BIND(fn, required, g.fn_missing[NVML_FN_##fn], "an NVML library")
	NVML_FUNCTIONS(REPLAY_TABLE_)
#undef REPLAY_TABLE_
#define REPLAY_MIG_(fn, ret, params, required) api->fn = g.fn_missing[NVML_FN_nvmlDeviceGetMigMode] ? NULL : replay_##fn;
	NVML_MIG_FUNCTIONS(REPLAY_MIG_)
#undef REPLAY_MIG_
	return 0;
}

const char *replay_nvml_load_error(void)
{
	return !replay_loaded() ? replay_load_failure() : !g.nvml_present ? NOT_INSTALLED : g.lib.error;
}

/* The "nvml" section (replay_sections[]). */
int replay_nvml_read(const char *file, json_t *value)
{
	struct fmt_ctx c = replay_nvml_fmt;
	c.file = file;
	return read_nvml(&c, value);
}

json_t *replay_nvml_missing(void)
{
	json_t *arr = json_array();
	for (int i = 0; arr && replay_loaded() && i < NVML_FN_COUNT; i++)
		if (g.fn_missing[i])
			json_array_append_new(arr, json_string(fn_names[i]));
	return arr;
}

const char *replay_nvml_library(void)
{
	return replay_loaded() && g.lib.name ? g.lib.name : DEFAULT_LIBRARY;
}
