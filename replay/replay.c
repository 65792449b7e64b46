/*
 * The replay half of libdmaconn_replay: every NVML function dmaconn calls, as
 * the function table replay_nvml_bind() fills, answered from the topology
 * file named by DMACONN_REPLAY (docs/replay-format.md), with NVML's argument
 * checking and return codes so that the core runs the same code path as on
 * hardware.
 *
 * The file is read once, on first use, into plain C structures; after that
 * everything is read-only except the init count, so
 * the functions may be called from any number of threads.
 */
#include "dmaconn_replay.h"
#include "replay_internal.h"
#include "replay_ze.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "nvml_load.h"
#include "ze_load.h"
#include "pci.h"

#define FORMAT_VERSION 2
#define MAX_DEVICES REPLAY_MAX_DEVICES
#define MAX_LINKS 64
#define MAX_ENTRIES 4096 /* missing functions, environment, pci_gpus */
#define PATH_LEN REPLAY_PATH_LEN
#define DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define DEFAULT_NAME "NVIDIA GPU"
#define NOT_INSTALLED DEFAULT_LIBRARY ": cannot open shared object file: No such file or directory (replayed)"

/* ------------------------------------------------------------- functions */

enum fn_id {
#define FN_ENUM_(name, ret, params, required) FN_##name,
	NVML_FUNCTIONS(FN_ENUM_)
#undef FN_ENUM_
	FN_COUNT
};

static const char *const fn_names[FN_COUNT] = {
#define FN_NAME_(name, ret, params, required) [FN_##name] = #name,
	NVML_FUNCTIONS(FN_NAME_)
#undef FN_NAME_
};

/* ----------------------------------------------------------------- names */

const struct replay_name replay_p2p_names[] = {
	{ "OK", NVML_P2P_STATUS_OK },
	{ "CNS", NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED },
	{ "GNS", NVML_P2P_STATUS_GPU_NOT_SUPPORTED },
	{ "TNS", NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED },
	{ "DR", NVML_P2P_STATUS_DISABLED_BY_REGKEY },
	{ "NS", NVML_P2P_STATUS_NOT_SUPPORTED },
	{ "U", NVML_P2P_STATUS_UNKNOWN },
	{ NULL, 0 },
};

const struct replay_name replay_ancestor_names[] = {
	{ "INTERNAL", NVML_TOPOLOGY_INTERNAL },
	{ "SINGLE", NVML_TOPOLOGY_SINGLE },
	{ "MULTIPLE", NVML_TOPOLOGY_MULTIPLE },
	{ "HOSTBRIDGE", NVML_TOPOLOGY_HOSTBRIDGE },
	{ "NODE", NVML_TOPOLOGY_NODE },
	{ "SYSTEM", NVML_TOPOLOGY_SYSTEM },
	{ NULL, 0 },
};

const struct replay_name replay_remote_type_names[] = {
	{ "GPU", NVML_NVLINK_DEVICE_TYPE_GPU },
	{ "IBMNPU", NVML_NVLINK_DEVICE_TYPE_IBMNPU },
	{ "SWITCH", NVML_NVLINK_DEVICE_TYPE_SWITCH },
	{ "UNKNOWN", NVML_NVLINK_DEVICE_TYPE_UNKNOWN },
	{ NULL, 0 },
};


/* ------------------------------------------------------------------ data */

/* Each answer is a return code and, when that is NVML_SUCCESS, a value. */
struct link {
	nvmlReturn_t state_rc, version_rc, type_rc, pci_rc, speed_rc;
	nvmlEnableState_t state;
	unsigned int version, speed;
	nvmlIntNvLinkDeviceType_t type;
	nvmlPciInfo_t pci;
};

#define P2P_CAPS REPLAY_P2P_CAPS

struct p2p {
	unsigned int peer;
	nvmlReturn_t status_rc[P2P_CAPS];
	nvmlGpuP2PStatus_t status[P2P_CAPS];
	nvmlReturn_t ancestor_rc;
	nvmlGpuTopologyLevel_t ancestor;
};

#define P2P_NONE 0xffffu
#define MAX_P2P_ANSWERS 0xfff0u

/* A MIG instance of a GPU in MIG mode; its handle is a pointer to it. */
struct mig {
	unsigned int parent;
	nvmlReturn_t uuid_rc, gi_rc, ci_rc;
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	unsigned int gi, ci;
};

struct fabric {
	unsigned char uuid[NVML_GPU_FABRIC_UUID_LEN];
	nvmlReturn_t status;
	unsigned int clique, health, summary;
	nvmlGpuFabricState_t state;
};

/* Handles are pointers into the device array. */
struct nvmlDevice_st {
	unsigned int index;
	nvmlReturn_t handle_rc; /* the device is an error object */
	nvmlReturn_t name_rc, uuid_rc, pci_rc, cc_rc, mig_rc, fabric_rc, bar1_rc, virt_rc;
	unsigned long long bar1;
	unsigned int virt;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	nvmlPciInfo_t pci;
	int cc[2];
	unsigned int mig[2];
	struct fabric fabric;
	bool has_nvlink;
	unsigned int nlinks;
	struct link *links;
	unsigned int np2p;
	struct p2p *p2p; /* sorted by peer */
	uint16_t *row;   /* "p2p_row": per peer, its entry of nvml.p2p_answers, P2P_NONE for none */
	unsigned int nmig;
	struct mig *migs; /* "mig_devices" */
};

struct env_pin {
	char *name, *value; /* value NULL: pinned unset */
};

static struct replay {
	const char *load_error; /* NULL once the file loaded */
	bool nvml_present;	/* "nvml" key */
	char *library;		/* NULL: the default name */
	char *library_error;	/* "library": {"error": ...} */
	bool fn_missing[FN_COUNT];
	nvmlReturn_t init_rc, driver_rc, nvml_version_rc, cuda_rc, count_rc, conf_rc;
	nvmlConfComputeSystemState_t conf;
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	char nvml_version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
	int cuda;
	unsigned int count;	/* device_count's answer, or ndev */
	unsigned int ndev;
	struct nvmlDevice_st *devs;
	unsigned int nanswers;
	struct p2p *answers; /* nvml.p2p_answers, what "p2p_row" entries name */
	bool any_mig;        /* a device lists MIG instances */
	unsigned int nenv;
	struct env_pin *env;
	unsigned int ngpus;
	struct dc_pci *gpus;
} g;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static atomic_uint g_inits;

static void free_data(void)
{
	for (unsigned int i = 0; i < g.ndev; i++) {
		free(g.devs[i].links);
		free(g.devs[i].p2p);
		free(g.devs[i].row);
		free(g.devs[i].migs);
	}
	free(g.devs);
	free(g.answers);
	for (unsigned int i = 0; i < g.nenv; i++) {
		free(g.env[i].name);
		free(g.env[i].value);
	}
	free(g.env);
	free(g.gpus);
	free(g.library);
	free(g.library_error);
	for (const struct replay_section *sec = replay_sections; sec->key; sec++)
		sec->release();
	const char *keep = g.load_error;
	memset(&g, 0, sizeof(g));
	g.load_error = keep == NULL ? NULL : replay_err;
}

/* ------------------------------------------------------------ file reader */

struct ld {
	const char *file;
};

static int get_uint(struct ld *ld, json_t *v, const char *path, unsigned int *out)
{
	long long x = 0;
	if (replay_get_int(ld->file, v, path, 0, UINT_MAX, &x))
		return -1;
	*out = (unsigned int)x;
	return 0;
}

/* A string that fits an NVML buffer of `size` bytes with its terminator. */
static int get_str(struct ld *ld, json_t *v, const char *path, char *dst, size_t size)
{
	if (!json_is_string(v))
		return replay_bad(ld->file, path, "expected a string");
	size_t n = json_string_length(v);
	if (n >= size)
		return replay_bad(ld->file, path, "longer than NVML's %zu characters", size - 1);
	memcpy(dst, json_string_value(v), n + 1);
	return 0;
}


static int nvml_parse(const char *name, int *code)
{
	nvmlReturn_t rc;
	int r = nvml_return_parse(name, &rc);
	*code = (int)rc;
	return r;
}

static const struct replay_codes nvml_codes = { nvml_parse,
						"expected an NVML return code name such as \"NOT_SUPPORTED\"",
						"unknown NVML return code", NVML_ERROR_UNKNOWN };

/* "NOT_SUPPORTED", "SUCCESS": the names the format uses. */
static const char *nvml_name(int rc)
{
	const char *n = nvml_return_name((nvmlReturn_t)rc);
	if (!n)
		return "UNKNOWN";
	return strncmp(n, "NVML_ERROR_", 11) ? n + 5 : n + 11;
}

const struct fmt_ctx replay_nvml_fmt = { NULL, &nvml_codes, nvml_name, "NVML" };

static int get_code(struct ld *ld, json_t *v, const char *path, nvmlReturn_t *rc)
{
	int x, r = replay_get_code(ld->file, v, path, &nvml_codes, &x);
	*rc = (nvmlReturn_t)x;
	return r;
}

static int get_name(struct ld *ld, json_t *v, const char *path, const struct replay_name *t, const char *what,
		    int *out)
{
	if (!json_is_string(v) || replay_value_of(t, json_string_value(v), out))
		return replay_bad(ld->file, path, "expected %s or an error object", what);
	return 0;
}

/* {"error": NAME}: 1 with *rc its code; 0 when v is not an error object;
 * -1 when the name is bad.  SUCCESS gives no value, so it is refused. */
static int error_object(struct ld *ld, json_t *v, const char *path, nvmlReturn_t *rc)
{
	int x = 0, r = replay_error_object(ld->file, v, path, &nvml_codes, &x);
	if (r)
		*rc = (nvmlReturn_t)x;
	return r;
}

/*
 * The answer stored under obj[key]: 1 with *v the value to read (*rc =
 * SUCCESS); 0 with *rc the error object's code, or `absent` when the key is
 * missing; -1 on a bad error object.  path receives the key's path.
 */
static int answer(struct ld *ld, json_t *obj, const char *base, const char *key, char *path, nvmlReturn_t absent,
		  nvmlReturn_t *rc, json_t **v)
{
	replay_sub(path, base, key);
	*rc = absent;
	*v = json_object_get(obj, key);
	if (!*v)
		return 0;
	int e = error_object(ld, *v, path, rc);
	if (e)
		return e < 0 ? -1 : 0;
	*rc = NVML_SUCCESS;
	return 1;
}

/* The required key of an object (an answer that is no error object), or
 * NULL after replay_bad(). */
static json_t *member(struct ld *ld, json_t *v, const char *path, const char *key)
{
	json_t *m = json_is_object(v) ? json_object_get(v, key) : NULL;
	if (!json_is_object(v))
		replay_bad(ld->file, path, "expected an object with \"%s\" or an error object", key);
	else if (!m)
		replay_bad(ld->file, path, "\"%s\" is required", key);
	return m;
}

static int read_pci(struct ld *ld, json_t *v, const char *path, nvmlPciInfo_t *out)
{
	char p[PATH_LEN];
	struct dc_pci a;
	memset(out, 0, sizeof(*out));
	json_t *bus = member(ld, v, path, "bus_id");
	if (!bus)
		return -1;
	if (get_str(ld, bus, replay_sub(p, path, "bus_id"), out->busId, sizeof(out->busId)))
		return -1;
	if (dc_pci_parse(out->busId, sizeof(out->busId), &a))
		return replay_bad(ld->file, p, "\"%s\" is not a PCI bus id", out->busId);
	out->domain = a.domain;
	out->bus = a.bus;
	out->device = a.device;
	json_t *legacy = json_object_get(v, "bus_id_legacy");
	if (legacy) {
		struct dc_pci b;
		if (get_str(ld, legacy, replay_sub(p, path, "bus_id_legacy"), out->busIdLegacy, sizeof(out->busIdLegacy)))
			return -1;
		if (dc_pci_parse(out->busIdLegacy, sizeof(out->busIdLegacy), &b))
			return replay_bad(ld->file, p, "\"%s\" is not a PCI bus id", out->busIdLegacy);
	} else {
		/* The legacy form has a 4-digit domain by definition. */
		snprintf(out->busIdLegacy, sizeof(out->busIdLegacy), "%04X:%02X:%02X.%X", a.domain & 0xffffu,
			 a.bus & 0xffu, a.device & 0xffu, a.function & 0x7u);
	}
	json_t *id = json_object_get(v, "pci_device_id");
	if (id && get_uint(ld, id, replay_sub(p, path, "pci_device_id"), &out->pciDeviceId))
		return -1;
	json_t *ss = json_object_get(v, "pci_subsystem_id");
	if (ss && get_uint(ld, ss, replay_sub(p, path, "pci_subsystem_id"), &out->pciSubSystemId))
		return -1;
	return 0;
}

static json_t *nvml_pci_write(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	(void)f;
	const nvmlPciInfo_t *p = in;
	struct dc_pci legacy;
	json_t *o = json_object();
	bool oom = false;
	(void)c;
	replay_put(&oom, o, "bus_id", replay_text(p->busId, strnlen(p->busId, sizeof(p->busId) - 1)));
	/* An unusable legacy id is left for the reader to derive. */
	if (!dc_pci_parse(p->busIdLegacy, sizeof(p->busIdLegacy) - 1, &legacy))
		replay_put(&oom, o, "bus_id_legacy",
			   replay_text(p->busIdLegacy, strnlen(p->busIdLegacy, sizeof(p->busIdLegacy) - 1)));
	replay_put(&oom, o, "pci_device_id", json_integer(p->pciDeviceId));
	replay_put(&oom, o, "pci_subsystem_id", json_integer(p->pciSubSystemId));
	if (oom) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "8-4-4-4-12" hex groups, or 32 hex digits. */
static int parse_uuid(const char *s, unsigned char out[NVML_GPU_FABRIC_UUID_LEN])
{
	size_t len = strlen(s), pos = 0;
	bool hyphens = len == 36;
	if (len != 32 && !hyphens)
		return -1;
	for (int i = 0; i < NVML_GPU_FABRIC_UUID_LEN; i++) {
		if (hyphens && (pos == 8 || pos == 13 || pos == 18 || pos == 23) && s[pos++] != '-')
			return -1;
		int hi = dc_hexval((unsigned char)s[pos]), lo = dc_hexval((unsigned char)s[pos + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
		pos += 2;
	}
	return 0;
}

static int read_fabric(struct ld *ld, json_t *v, const char *path, struct fabric *f)
{
	char p[PATH_LEN];
	long long x;
	memset(f, 0, sizeof(*f));
	json_t *state = member(ld, v, path, "state");
	if (!state)
		return -1;
	if (replay_get_int(ld->file, state, replay_sub(p, path, "state"), NVML_GPU_FABRIC_STATE_NOT_SUPPORTED,
		    NVML_GPU_FABRIC_STATE_COMPLETED, &x))
		return -1;
	f->state = (nvmlGpuFabricState_t)x;
	json_t *status = json_object_get(v, "status");
	if (status && get_code(ld, status, replay_sub(p, path, "status"), &f->status))
		return -1;
	json_t *uuid = json_object_get(v, "cluster_uuid");
	if (uuid) {
		replay_sub(p, path, "cluster_uuid");
		if (!json_is_string(uuid) || parse_uuid(json_string_value(uuid), f->uuid))
			return replay_bad(ld->file, p, "expected a UUID, hyphenated or as 32 hex digits");
	}
	json_t *clique = json_object_get(v, "clique_id");
	if (clique && get_uint(ld, clique, replay_sub(p, path, "clique_id"), &f->clique))
		return -1;
	json_t *health = json_object_get(v, "health_mask");
	if (health && get_uint(ld, health, replay_sub(p, path, "health_mask"), &f->health))
		return -1;
	json_t *summary = json_object_get(v, "health_summary");
	if (summary && get_uint(ld, summary, replay_sub(p, path, "health_summary"), &f->summary))
		return -1;
	return 0;
}

static int nvml_pci_read(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	(void)f;
	struct ld ld = { c->file };
	return read_pci(&ld, v, path, out);
}

static json_t *nvml_pci_write(const struct fmt_ctx *c, const struct fmt_field *f, const void *in);
static const struct fmt_custom pci_custom = { nvml_pci_read, nvml_pci_write };

#define NS NVML_ERROR_NOT_SUPPORTED
#define LINK(key, kind, member, ...) FMT_FIELD(key, kind, struct link, member, FMT_RC(struct link, member##_rc, NS), __VA_ARGS__)
const struct fmt_field replay_link_fields[] = {
	[REPLAY_L_STATE] = LINK("state", FMT_UINT, state, .max = 1, .msg = "expected 0, 1 or an error object"),
	[REPLAY_L_VERSION] = LINK("version", FMT_UINT, version, FMT_U32),
	[REPLAY_L_TYPE] = LINK("remote_type", FMT_NAME, type, .aux = replay_remote_type_names,
			       .msg = "expected %s or an error object"),
	[REPLAY_L_PCI] = LINK("remote_pci", FMT_CUSTOM, pci, .aux = &pci_custom),
	[REPLAY_L_SPEED] = LINK("speed_mbps", FMT_UINT, speed, FMT_U32),
	{ .key = NULL },
};

/* One "nvlink" entry; *repeat receives how many links it describes. */
static int read_link(struct ld *ld, json_t *e, const char *path, struct link *l, long long *repeat)
{
	char p[PATH_LEN];
	struct fmt_ctx c = replay_nvml_fmt;
	int r, rc;
	memset(l, 0, sizeof(*l));
	*repeat = 1;
	c.file = ld->file;
	if (!json_is_object(e))
		return replay_bad(ld->file, path, "expected an object");
	json_t *rep = json_object_get(e, "repeat");
	if (rep && replay_get_int(ld->file, rep, replay_sub(p, path, "repeat"), 1, MAX_LINKS, repeat))
		return -1;
	if ((r = fmt_error_object(&c, e, path, &rc)) != 0) {
		l->state_rc = l->version_rc = l->type_rc = l->pci_rc = l->speed_rc = rc;
		return r < 0 ? -1 : 0;
	}
	return fmt_read(&c, replay_link_fields, e, path, l);
}

static int read_nvlink(struct ld *ld, json_t *arr, const char *path, struct nvmlDevice_st *d)
{
	char p[PATH_LEN];
	struct link links[MAX_LINKS];
	unsigned int n = 0;
	if (!json_is_array(arr))
		return replay_bad(ld->file, path, "expected an array of link objects");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		struct link l;
		long long repeat;
		if (read_link(ld, json_array_get(arr, i), replay_item(p, path, i), &l, &repeat))
			return -1;
		if (repeat > MAX_LINKS - (long long)n)
			return replay_bad(ld->file, p, "more than %d links in all", MAX_LINKS);
		while (repeat--)
			links[n++] = l;
	}
	d->has_nvlink = true;
	d->nlinks = n;
	if (n && !(d->links = malloc(n * sizeof(*d->links))))
		return replay_bad(ld->file, path, "out of memory");
	if (n)
		memcpy(d->links, links, n * sizeof(*d->links));
	return 0;
}

const char *const replay_p2p_caps_keys[P2P_CAPS] = { "read", "write", "nvlink", "atomics", "pci" };

static int read_p2p_entry(struct ld *ld, json_t *e, const char *path, unsigned int ndev, struct p2p *out)
{
	char p[PATH_LEN];
	json_t *v;
	long long peer;
	int r;
	if (!json_is_object(e))
		return replay_bad(ld->file, path, "expected an object");
	json_t *pv = json_object_get(e, "peer");
	if (!ndev) {
		/* An entry of nvml.p2p_answers: the rows say whose it is. */
		if (pv)
			return replay_bad(ld->file, path, "\"peer\" belongs to a device's \"p2p\" list");
	} else if (!pv) {
		return replay_bad(ld->file, path, "\"peer\" is required");
	} else if (replay_get_int(ld->file, pv, replay_sub(p, path, "peer"), 0, (long long)ndev - 1, &peer)) {
		/* A device may be its own peer: NVML answers for that pair too. */
		return -1;
	} else {
		out->peer = (unsigned int)peer;
	}
	for (int c = 0; c < P2P_CAPS; c++) {
		out->status[c] = NVML_P2P_STATUS_NOT_SUPPORTED;
		if ((r = answer(ld, e, path, replay_p2p_caps_keys[c], p, NVML_SUCCESS, &out->status_rc[c], &v)) < 0 ||
		    (r && get_name(ld, v, p, replay_p2p_names, "\"OK\", \"CNS\", \"GNS\", \"TNS\", \"DR\", \"NS\", \"U\"",
				   &out->status[c])))
			return -1;
	}
	if ((r = answer(ld, e, path, "common_ancestor", p, NVML_ERROR_NOT_SUPPORTED, &out->ancestor_rc, &v)) < 0 ||
	    (r && get_name(ld, v, p, replay_ancestor_names,
			   "\"INTERNAL\", \"SINGLE\", \"MULTIPLE\", \"HOSTBRIDGE\", \"NODE\", \"SYSTEM\"",
			   &out->ancestor)))
		return -1;
	return 0;
}

static int cmp_p2p(const void *a, const void *b)
{
	const struct p2p *x = a, *y = b;
	return x->peer < y->peer ? -1 : x->peer > y->peer;
}

static int read_p2p(struct ld *ld, json_t *arr, const char *path, struct nvmlDevice_st *d, unsigned int ndev)
{
	char p[PATH_LEN];
	if (!json_is_array(arr))
		return replay_bad(ld->file, path, "expected an array of peer objects");
	size_t n = json_array_size(arr);
	if (n > ndev)
		return replay_bad(ld->file, path, "more peers than the %u devices", ndev);
	if (!n)
		return 0;
	if (!(d->p2p = calloc(n, sizeof(*d->p2p))))
		return replay_bad(ld->file, path, "out of memory");
	d->np2p = (unsigned int)n;
	for (size_t i = 0; i < n; i++)
		if (read_p2p_entry(ld, json_array_get(arr, i), replay_item(p, path, i), ndev, &d->p2p[i]))
			return -1;
	qsort(d->p2p, n, sizeof(*d->p2p), cmp_p2p);
	for (size_t i = 1; i < n; i++)
		if (d->p2p[i].peer == d->p2p[i - 1].peer)
			return replay_bad(ld->file, path, "peer %u is listed twice", d->p2p[i].peer);
	return 0;
}

/* nvml.p2p_answers: the distinct P2P answers the rows of version 2 refer to. */
static int read_p2p_answers(struct ld *ld, json_t *arr, const char *path)
{
	char p[PATH_LEN];
	if (!json_is_array(arr))
		return replay_bad(ld->file, path, "expected an array of answer objects");
	size_t n = json_array_size(arr);
	if (n > MAX_P2P_ANSWERS)
		return replay_bad(ld->file, path, "more than %u answers", MAX_P2P_ANSWERS);
	if (n && !(g.answers = calloc(n, sizeof(*g.answers))))
		return replay_bad(ld->file, path, "out of memory");
	g.nanswers = (unsigned int)n;
	for (size_t i = 0; i < n; i++)
		if (read_p2p_entry(ld, json_array_get(arr, i), replay_item(p, path, i), 0, &g.answers[i]))
			return -1;
	return 0;
}

/*
 * A device's "p2p_row" (version 2): for peers 0..n-1 in order, the index of
 * its entry of nvml.p2p_answers or "-" for none, comma-separated, a run of
 * k equal ones written "x*k": "0*3,-,0*4" is 8 peers.  n*n pairs of a rack
 * cost a few bytes per device instead of an object per pair.
 */
static int read_p2p_row(struct ld *ld, json_t *v, const char *path, struct nvmlDevice_st *d, unsigned int ndev)
{
	if (!json_is_string(v))
		return replay_bad(ld->file, path, "expected a string such as \"0*3,-,0*4\"");
	if (!(d->row = malloc(((size_t)ndev + 1) * sizeof(*d->row))))
		return replay_bad(ld->file, path, "out of memory");
	const char *c = json_string_value(v);
	size_t at = 0;
	while (*c) {
		unsigned long value = P2P_NONE, run = 1;
		char *end;
		if (*c == '-') {
			end = (char *)c + 1;
		} else {
			if (*c < '0' || *c > '9')
				return replay_bad(ld->file, path, "expected an answer index or '-' at offset %zu",
						  (size_t)(c - json_string_value(v)));
			value = strtoul(c, &end, 10);
			if (value >= g.nanswers)
				return replay_bad(ld->file, path, "answer %lu, but nvml.p2p_answers has %u", value,
						  g.nanswers);
		}
		if (*end == '*') {
			const char *digits = end + 1;
			if (*digits < '1' || *digits > '9')
				return replay_bad(ld->file, path, "expected a run length after '*'");
			run = strtoul(digits, &end, 10);
		}
		if (run > ndev - at)
			return replay_bad(ld->file, path, "more than the %u peers", ndev);
		for (unsigned long k = 0; k < run; k++)
			d->row[at++] = (uint16_t)value;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return replay_bad(ld->file, path, "expected ',' at offset %zu", (size_t)(end - json_string_value(v)));
		c = end;
	}
	if (at != ndev)
		return replay_bad(ld->file, path, "%zu peers, but %u devices are listed", at, ndev);
	return 0;
}

/* A device's "mig_devices": its MIG instances, for a GPU in MIG mode. */
static int read_migs(struct ld *ld, json_t *arr, const char *path, struct nvmlDevice_st *d)
{
	char p[PATH_LEN];
	json_t *v;
	int r;
	if (!json_is_array(arr))
		return replay_bad(ld->file, path, "expected an array of MIG instance objects");
	size_t n = json_array_size(arr);
	if (n > 64)
		return replay_bad(ld->file, path, "more than 64 MIG instances");
	if (n && !(d->migs = calloc(n, sizeof(*d->migs))))
		return replay_bad(ld->file, path, "out of memory");
	d->nmig = (unsigned int)n;
	g.any_mig = g.any_mig || n > 0;
	for (size_t k = 0; k < n; k++) {
		struct mig *m = &d->migs[k];
		json_t *e = json_array_get(arr, k);
		const char *at = replay_item(p, path, k);
		char q[PATH_LEN], item[PATH_LEN];
		snprintf(item, sizeof(item), "%s", at);
		m->parent = d->index;
		if (!json_is_object(e))
			return replay_bad(ld->file, item, "expected an object");
		if ((r = answer(ld, e, item, "uuid", q, NVML_SUCCESS, &m->uuid_rc, &v)) < 0 ||
		    (r && get_str(ld, v, q, m->uuid, sizeof(m->uuid))))
			return -1;
		if (!v)
			return replay_bad(ld->file, item, "\"uuid\" is required");
		if ((r = answer(ld, e, item, "gpu_instance_id", q, NVML_ERROR_NOT_SUPPORTED, &m->gi_rc, &v)) < 0 ||
		    (r && get_uint(ld, v, q, &m->gi)))
			return -1;
		if ((r = answer(ld, e, item, "compute_instance_id", q, NVML_ERROR_NOT_SUPPORTED, &m->ci_rc, &v)) < 0 ||
		    (r && get_uint(ld, v, q, &m->ci)))
			return -1;
	}
	return 0;
}

static int read_device(struct ld *ld, json_t *o, const char *path, struct nvmlDevice_st *d, unsigned int ndev)
{
	char p[PATH_LEN], q[PATH_LEN];
	json_t *v;
	int r;
	if ((r = error_object(ld, o, path, &d->handle_rc)) != 0)
		return r < 0 ? -1 : 0;
	if (!json_is_object(o))
		return replay_bad(ld->file, path, "expected a device object or an error object");
	if ((r = answer(ld, o, path, "name", p, NVML_SUCCESS, &d->name_rc, &v)) < 0 ||
	    (r && get_str(ld, v, p, d->name, sizeof(d->name))))
		return -1;
	if (!v)
		strcpy(d->name, DEFAULT_NAME);
	if ((r = answer(ld, o, path, "uuid", p, NVML_SUCCESS, &d->uuid_rc, &v)) < 0 ||
	    (r && get_str(ld, v, p, d->uuid, sizeof(d->uuid))))
		return -1;
	if (!v)
		return replay_bad(ld->file, path, "\"uuid\" is required");
	if ((r = answer(ld, o, path, "pci", p, NVML_SUCCESS, &d->pci_rc, &v)) < 0 || (r && read_pci(ld, v, p, &d->pci)))
		return -1;
	if (!v)
		return replay_bad(ld->file, path, "\"pci\" is required");
	json_t *pair[2] = { NULL, NULL };
	const char *pair_keys[2] = { "cuda_compute_capability", "mig_mode" };
	nvmlReturn_t *pair_rc[2] = { &d->cc_rc, &d->mig_rc };
	for (int k = 0; k < 2; k++) {
		if ((r = answer(ld, o, path, pair_keys[k], p, NVML_ERROR_NOT_SUPPORTED, pair_rc[k], &v)) < 0)
			return -1;
		if (r && (!json_is_array(v) || json_array_size(v) != 2))
			return replay_bad(ld->file, p, "expected [%s] or an error object", k ? "current, pending" : "major, minor");
		if (r)
			pair[k] = v;
	}
	for (int i = 0; pair[0] && i < 2; i++) {
		long long x;
		if (replay_get_int(ld->file, json_array_get(pair[0], (size_t)i), replay_item(q, replay_sub(p, path, pair_keys[0]), (size_t)i), 0,
			    INT_MAX, &x))
			return -1;
		d->cc[i] = (int)x;
	}
	for (int i = 0; pair[1] && i < 2; i++)
		if (get_uint(ld, json_array_get(pair[1], (size_t)i), replay_item(q, replay_sub(p, path, pair_keys[1]), (size_t)i),
			     &d->mig[i]))
			return -1;
	if ((r = answer(ld, o, path, "fabric", p, NVML_ERROR_NOT_SUPPORTED, &d->fabric_rc, &v)) < 0 ||
	    (r && read_fabric(ld, v, p, &d->fabric)))
		return -1;
	long long x;
	if ((r = answer(ld, o, path, "bar1_total", p, NVML_ERROR_NOT_SUPPORTED, &d->bar1_rc, &v)) < 0 ||
	    (r && replay_get_int(ld->file, v, p, 0, LLONG_MAX, &x)))
		return -1;
	d->bar1 = r ? (unsigned long long)x : 0;
	if ((r = answer(ld, o, path, "virtualization_mode", p, NVML_ERROR_NOT_SUPPORTED, &d->virt_rc, &v)) < 0 ||
	    (r && get_uint(ld, v, p, &d->virt)))
		return -1;
	if ((v = json_object_get(o, "nvlink")) && read_nvlink(ld, v, replay_sub(p, path, "nvlink"), d))
		return -1;
	if ((v = json_object_get(o, "p2p")) && read_p2p(ld, v, replay_sub(p, path, "p2p"), d, ndev))
		return -1;
	if ((v = json_object_get(o, "p2p_row"))) {
		if (json_object_get(o, "p2p"))
			return replay_bad(ld->file, path, "\"p2p\" and \"p2p_row\" both describe the peers; give one");
		if (read_p2p_row(ld, v, replay_sub(p, path, "p2p_row"), d, ndev))
			return -1;
	}
	if ((v = json_object_get(o, "mig_devices")) && read_migs(ld, v, replay_sub(p, path, "mig_devices"), d))
		return -1;
	return 0;
}

/* Devices by UUID or by bus id, ties by position, to find one listed twice. */
static int dev_uuid_key(const struct nvmlDevice_st *a, const struct nvmlDevice_st *b)
{
	return strcmp(a->uuid, b->uuid);
}

static int dev_bus_key(const struct nvmlDevice_st *a, const struct nvmlDevice_st *b)
{
	struct dc_pci x, y;
	dc_pci_parse(a->pci.busId, sizeof(a->pci.busId), &x);
	dc_pci_parse(b->pci.busId, sizeof(b->pci.busId), &y);
	return dc_pci_compare(&x, &y);
}

static int cmp_dev_uuid(const void *pa, const void *pb)
{
	const struct nvmlDevice_st *a = *(struct nvmlDevice_st *const *)pa, *b = *(struct nvmlDevice_st *const *)pb;
	int c = dev_uuid_key(a, b);
	return c ? c : a->index < b->index ? -1 : 1;
}

static int cmp_dev_bus(const void *pa, const void *pb)
{
	const struct nvmlDevice_st *a = *(struct nvmlDevice_st *const *)pa, *b = *(struct nvmlDevice_st *const *)pb;
	int c = dev_bus_key(a, b);
	return c ? c : a->index < b->index ? -1 : 1;
}

/* A GPU is listed once: the same UUID or bus id twice would show a device
 * and its copy, with NVLinks between them. */
static int check_unique_devices(struct ld *ld, const char *path)
{
	char p[PATH_LEN], first[PATH_LEN], second[PATH_LEN];
	struct nvmlDevice_st **by = calloc(g.ndev + 1, sizeof(*by));
	if (!by)
		return replay_bad(ld->file, path, "out of memory");
	for (int bus = 0; bus < 2; bus++) {
		size_t n = 0;
		for (unsigned int i = 0; i < g.ndev; i++) {
			struct nvmlDevice_st *d = &g.devs[i];
			if (d->handle_rc == NVML_SUCCESS && (bus ? d->pci_rc : d->uuid_rc) == NVML_SUCCESS)
				by[n++] = d;
		}
		qsort(by, n, sizeof(*by), bus ? cmp_dev_bus : cmp_dev_uuid);
		for (size_t k = 1; k < n; k++) {
			if ((bus ? dev_bus_key : dev_uuid_key)(by[k - 1], by[k]) != 0)
				continue;
			replay_item(first, path, by[k - 1]->index);
			replay_item(second, path, by[k]->index);
			int rc = bus ? replay_bad(ld->file, replay_sub(p, second, "pci.bus_id"), "\"%s\" is also the bus id of %s",
					   by[k]->pci.busId, first)
				     : replay_bad(ld->file, replay_sub(p, second, "uuid"), "\"%s\" is also the UUID of %s", by[k]->uuid,
					   first);
			free(by);
			return rc;
		}
	}
	free(by);
	return 0;
}

static int read_devices(struct ld *ld, json_t *arr, const char *path)
{
	char p[PATH_LEN];
	if (!json_is_array(arr))
		return replay_bad(ld->file, path, "expected an array of devices");
	size_t n = json_array_size(arr);
	if (n > MAX_DEVICES)
		return replay_bad(ld->file, path, "%zu devices, more than the %d supported", n, MAX_DEVICES);
	if (n && !(g.devs = calloc(n, sizeof(*g.devs))))
		return replay_bad(ld->file, path, "out of memory");
	g.ndev = (unsigned int)n;
	for (size_t i = 0; i < n; i++) {
		g.devs[i].index = (unsigned int)i;
		if (read_device(ld, json_array_get(arr, i), replay_item(p, path, i), &g.devs[i], g.ndev))
			return -1;
	}
	return check_unique_devices(ld, path);
}

static int fn_lookup(const char *name)
{
	for (int i = 0; i < FN_COUNT; i++)
		if (!strcmp(fn_names[i], name))
			return i;
	return -1;
}

/* Checks a JSON array of at most MAX_ENTRIES and allocates as many elements
 * of size sz (NULL for none); -1 on error. */
static int read_list(struct ld *ld, json_t *arr, const char *path, const char *what, size_t sz, void **out,
		     unsigned int *n)
{
	*out = NULL;
	*n = 0;
	if (!json_is_array(arr))
		return replay_bad(ld->file, path, "expected an array of %s", what);
	size_t len = json_array_size(arr);
	if (len > MAX_ENTRIES)
		return replay_bad(ld->file, path, "%zu %s, more than the %d supported", len, what, MAX_ENTRIES);
	if (len && !(*out = calloc(len, sz)))
		return replay_bad(ld->file, path, "out of memory");
	*n = (unsigned int)len;
	return 0;
}

static int read_missing(struct ld *ld, json_t *arr, const char *path)
{
	char p[PATH_LEN];
	size_t n = json_array_size(arr);
	if (!json_is_array(arr))
		return replay_bad(ld->file, path, "expected an array of function names");
	if (n > MAX_ENTRIES)
		return replay_bad(ld->file, path, "%zu function names, more than the %d supported", n, MAX_ENTRIES);
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_array_get(arr, i);
		if (!json_is_string(v))
			return replay_bad(ld->file, replay_item(p, path, i), "expected a function name");
		/* A name dmaconn never calls hides nothing it could ask. */
		int id = fn_lookup(json_string_value(v));
		if (id >= 0)
			g.fn_missing[id] = true;
	}
	return 0;
}

static int read_library(struct ld *ld, json_t *v, const char *path)
{
	char p[PATH_LEN];
	if (json_is_string(v)) {
		if (!(g.library = strdup(json_string_value(v))))
			return replay_bad(ld->file, path, "out of memory");
		return 0;
	}
	json_t *e = json_is_object(v) ? json_object_get(v, "error") : NULL;
	if (!e)
		return replay_bad(ld->file, path, "expected a library name or {\"error\": \"loader message\"}");
	if (!json_is_string(e))
		return replay_bad(ld->file, replay_sub(p, path, "error"), "expected the loader's message");
	if (!(g.library_error = strdup(json_string_value(e))))
		return replay_bad(ld->file, path, "out of memory");
	return 0;
}

/* The version strings, cuda_driver_version and device_count. */
/* "conf_compute": nvmlSystemGetConfComputeState's three fields. */
static int read_conf_compute(struct ld *ld, json_t *v, const char *path)
{
	char p[PATH_LEN];
	static const char *const keys[] = { "environment", "cc_feature", "devtools_mode" };
	unsigned int *out[] = { &g.conf.environment, &g.conf.ccFeature, &g.conf.devToolsMode };
	if (!json_is_object(v))
		return replay_bad(ld->file, path, "expected an object or an error object");
	for (int k = 0; k < 3; k++) {
		json_t *x = json_object_get(v, keys[k]);
		if (x && get_uint(ld, x, replay_sub(p, path, keys[k]), out[k]))
			return -1;
	}
	return 0;
}

static int read_system(struct ld *ld, json_t *nvml)
{
	char p[PATH_LEN];
	json_t *v;
	int r;
	long long x;
	if ((r = answer(ld, nvml, "nvml", "driver_version", p, NVML_ERROR_NOT_SUPPORTED, &g.driver_rc, &v)) < 0 ||
	    (r && get_str(ld, v, p, g.driver, sizeof(g.driver))))
		return -1;
	if ((r = answer(ld, nvml, "nvml", "nvml_version", p, NVML_ERROR_NOT_SUPPORTED, &g.nvml_version_rc, &v)) < 0 ||
	    (r && get_str(ld, v, p, g.nvml_version, sizeof(g.nvml_version))))
		return -1;
	if ((r = answer(ld, nvml, "nvml", "cuda_driver_version", p, NVML_ERROR_NOT_SUPPORTED, &g.cuda_rc, &v)) < 0 ||
	    (r && replay_get_int(ld->file, v, p, INT_MIN, INT_MAX, &x)))
		return -1;
	g.cuda = r ? (int)x : 0;
	if ((r = answer(ld, nvml, "nvml", "conf_compute", p, NVML_ERROR_NOT_SUPPORTED, &g.conf_rc, &v)) < 0)
		return -1;
	if (r && read_conf_compute(ld, v, p))
		return -1;
	g.count = g.ndev;
	if ((r = answer(ld, nvml, "nvml", "device_count", p, NVML_SUCCESS, &g.count_rc, &v)) < 0 ||
	    (r && replay_get_int(ld->file, v, p, 0, MAX_DEVICES, &x)))
		return -1;
	if (r && x > g.ndev)
		return replay_bad(ld->file, p, "%lld, but %u devices are listed", x, g.ndev);
	if (r)
		g.count = (unsigned int)x;
	return 0;
}

static int read_nvml(struct ld *ld, json_t *nvml)
{
	json_t *v;
	if (!json_is_object(nvml))
		return replay_bad(ld->file, "nvml", "expected an object");
	g.nvml_present = true;
	if ((v = json_object_get(nvml, "library")) && read_library(ld, v, "nvml.library"))
		return -1;
	if (g.library_error)
		return 0; /* nothing else can be reached */
	if ((v = json_object_get(nvml, "missing_functions")) && read_missing(ld, v, "nvml.missing_functions"))
		return -1;
	g.init_rc = NVML_SUCCESS;
	if ((v = json_object_get(nvml, "init"))) {
		/* A bare name, or an error object like every other answer;
		 * here SUCCESS is a return code like the others. */
		json_t *e = json_is_object(v) ? json_object_get(v, "error") : NULL;
		if (get_code(ld, e ? e : v, e ? "nvml.init.error" : "nvml.init", &g.init_rc))
			return -1;
	}
	if ((v = json_object_get(nvml, "p2p_answers")) && read_p2p_answers(ld, v, "nvml.p2p_answers"))
		return -1;
	if ((v = json_object_get(nvml, "devices")) && read_devices(ld, v, "nvml.devices"))
		return -1;
	if (read_system(ld, nvml))
		return -1;
	return 0;
}

static int read_environment(struct ld *ld, json_t *env)
{
	char p[PATH_LEN];
	const char *key;
	json_t *v;
	if (!json_is_object(env))
		return replay_bad(ld->file, "environment", "expected an object of strings and nulls");
	if (json_object_size(env) > MAX_ENTRIES)
		return replay_bad(ld->file, "environment", "more than %d variables", MAX_ENTRIES);
	if (json_object_size(env) && !(g.env = calloc(json_object_size(env), sizeof(*g.env))))
		return replay_bad(ld->file, "environment", "out of memory");
	json_object_foreach(env, key, v) {
		if (!json_is_string(v) && !json_is_null(v))
			return replay_bad(ld->file, replay_sub(p, "environment", key), "expected a string or null");
		struct env_pin *e = &g.env[g.nenv++];
		if (!(e->name = strdup(key)) || (json_is_string(v) && !(e->value = strdup(json_string_value(v)))))
			return replay_bad(ld->file, "environment", "out of memory");
	}
	return 0;
}

static int read_pci_gpus(struct ld *ld, json_t *arr)
{
	char p[PATH_LEN];
	void *list;
	int r = read_list(ld, arr, "pci_gpus", "PCI bus ids", sizeof(*g.gpus), &list, &g.ngpus);
	g.gpus = list;
	if (r)
		return -1;
	for (unsigned int i = 0; i < g.ngpus; i++) {
		json_t *v = json_array_get(arr, i);
		if (!json_is_string(v) || dc_pci_parse(json_string_value(v), json_string_length(v) + 1, &g.gpus[i]))
			return replay_bad(ld->file, replay_item(p, "pci_gpus", i), "expected a PCI bus id such as \"0000:00:06.0\"");
	}
	return 0;
}

static int read_root(struct ld *ld, json_t *root)
{
	json_t *v;
	long long version;
	if (!json_is_object(root))
		return replay_bad(ld->file, "(top level)", "expected an object");
	if (!(v = json_object_get(root, "dmaconn_topology")))
		return replay_bad(ld->file, "(top level)", "\"dmaconn_topology\" is required: this is not a dmaconn topology file");
	if (!json_is_integer(v))
		return replay_bad(ld->file, "dmaconn_topology", "expected the format version, an integer");
	version = (long long)json_integer_value(v);
	if (version > FORMAT_VERSION)
		return replay_bad(ld->file, "dmaconn_topology", "version %lld is newer than this reader's %d", version,
			   FORMAT_VERSION);
	if (version < 1)
		return replay_bad(ld->file, "dmaconn_topology", "version %lld does not exist", version);
	if ((v = json_object_get(root, "environment")) && read_environment(ld, v))
		return -1;
	if ((v = json_object_get(root, "pci_gpus")) && read_pci_gpus(ld, v))
		return -1;
	if ((v = json_object_get(root, "nvml")) && read_nvml(ld, v))
		return -1;
	for (const struct replay_section *sec = replay_sections; sec->key; sec++)
		if ((v = json_object_get(root, sec->key)) && sec->read(ld->file, v))
			return -1;
	return 0;
}


/* The file libdmaconn passed (dmaconn_replay_use_file), fixed once loaded:
 * load() stores the file it read there. */
static pthread_mutex_t g_file_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_file;
static int g_file_loaded;

void replay_file(char *buf, size_t len)
{
	pthread_mutex_lock(&g_file_lock);
	const char *env = secure_getenv("DMACONN_REPLAY");
	snprintf(buf, len, "%s", g_file && *g_file ? g_file : env ? env : "");
	pthread_mutex_unlock(&g_file_lock);
}

int dmaconn_replay_use_file(const char *path)
{
	path = path ? path : "";
	pthread_mutex_lock(&g_file_lock);
	int rc = 0;
	if (g_file_loaded) {
		/* The file is read once per process: only the same one after that. */
		rc = g_file && !strcmp(g_file, path) ? 0 : -1;
	} else {
		char *copy = strdup(path);
		if (copy) {
			free(g_file);
			g_file = copy;
		}
		rc = copy ? 0 : -1;
	}
	pthread_mutex_unlock(&g_file_lock);
	return rc;
}

static void load(void)
{
	pthread_mutex_lock(&g_file_lock);
	g_file_loaded = 1;
	if (!g_file || !*g_file) {
		const char *env = secure_getenv("DMACONN_REPLAY");
		free(g_file);
		g_file = strdup(env ? env : "");
	}
	const char *file = g_file ? g_file : "";
	pthread_mutex_unlock(&g_file_lock);
	if (!*file) {
		snprintf(replay_err, sizeof(replay_err), "DMACONN_REPLAY is not set");
		g.load_error = replay_err;
		return;
	}
	FILE *f = fopen(file, "re");
	if (!f) {
		snprintf(replay_err, sizeof(replay_err), "%s: cannot open: %s", file, strerror(errno));
		g.load_error = replay_err;
		return;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		snprintf(replay_err, sizeof(replay_err), "%s: cannot open: %s", file, strerror(EISDIR));
		g.load_error = replay_err;
		return;
	}
	json_error_t je;
	json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	fclose(f);
	if (!root) {
		if (je.line > 0)
			snprintf(replay_err, sizeof(replay_err), "%s: line %d, column %d: %s", file, je.line, je.column,
				 je.text);
		else
			snprintf(replay_err, sizeof(replay_err), "%s: %s", file, je.text);
		g.load_error = replay_err;
		return;
	}
	struct ld ld = { file };
	if (read_root(&ld, root)) {
		g.load_error = replay_err;
		free_data();
	}
	json_decref(root);
}

static void load_nothing(void)
{
	snprintf(replay_err, sizeof(replay_err), "libdmaconn_replay is being unloaded");
	g.load_error = replay_err;
}

/* Frees the file's data when the library goes, so that leak checkers stay quiet. */
__attribute__((destructor)) static void release(void)
{
	pthread_once(&g_once, load_nothing);
	free_data();
	load_nothing();
	pthread_mutex_lock(&g_file_lock);
	free(g_file);
	g_file = NULL;
	pthread_mutex_unlock(&g_file_lock);
}

static bool loaded(void)
{
	pthread_once(&g_once, load);
	return g.load_error == NULL;
}

/* -------------------------------------------------------------- prologue */

/* What every call checks first: a usable file, the symbol, initialisation. */
static nvmlReturn_t enter(enum fn_id fn)
{
	if (!loaded())
		return NVML_ERROR_UNKNOWN;
	if (g.fn_missing[fn])
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	if (!g.nvml_present || g.library_error)
		return fn == FN_nvmlInit_v2 ? NVML_ERROR_LIBRARY_NOT_FOUND : NVML_ERROR_UNINITIALIZED;
	if (fn != FN_nvmlInit_v2 && atomic_load(&g_inits) == 0)
		return NVML_ERROR_UNINITIALIZED;
	return NVML_SUCCESS;
}


/* The device behind a handle this library gave out, or NULL. */
static struct nvmlDevice_st *dev_of(nvmlDevice_t h)
{
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)g.devs;
	if (!h || !g.devs || p < base || (p - base) % sizeof(*g.devs))
		return NULL;
	size_t i = (p - base) / sizeof(*g.devs);
	if (i >= g.count || g.devs[i].handle_rc != NVML_SUCCESS)
		return NULL;
	return &g.devs[i];
}

static nvmlReturn_t enter_device(enum fn_id fn, nvmlDevice_t h, struct nvmlDevice_st **d)
{
	nvmlReturn_t rc = enter(fn);
	if (rc)
		return rc;
	return (*d = dev_of(h)) ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

/* Every link of a device without "nvlink", as on PCIe-only GPUs. */
static const struct link unsupported_link = {
	.state_rc = NVML_ERROR_NOT_SUPPORTED,
	.version_rc = NVML_ERROR_NOT_SUPPORTED,
	.type_rc = NVML_ERROR_NOT_SUPPORTED,
	.pci_rc = NVML_ERROR_NOT_SUPPORTED,
	.speed_rc = NVML_ERROR_NOT_SUPPORTED,
};

/* A link the device has, or NULL (NVML's INVALID_ARGUMENT). */
static const struct link *link_of(const struct nvmlDevice_st *d, unsigned int ln)
{
	if (!d->has_nvlink)
		return ln < NVML_NVLINK_MAX_LINKS ? &unsupported_link : NULL;
	return ln < d->nlinks ? &d->links[ln] : NULL;
}

static nvmlReturn_t enter_link(enum fn_id fn, nvmlDevice_t h, unsigned int ln, const struct link **l)
{
	struct nvmlDevice_st *d;
	nvmlReturn_t rc = enter_device(fn, h, &d);
	if (rc)
		return rc;
	*l = link_of(d, ln);
	return *l ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t enter_pair(enum fn_id fn, nvmlDevice_t h1, nvmlDevice_t h2, const struct p2p **p)
{
	/* A peer the file says nothing about. */
	static const struct p2p none = {
		.status = { NVML_P2P_STATUS_NOT_SUPPORTED, NVML_P2P_STATUS_NOT_SUPPORTED,
			    NVML_P2P_STATUS_NOT_SUPPORTED, NVML_P2P_STATUS_NOT_SUPPORTED,
			    NVML_P2P_STATUS_NOT_SUPPORTED },
		.ancestor_rc = NVML_ERROR_NOT_SUPPORTED,
	};
	nvmlReturn_t rc = enter(fn);
	if (rc)
		return rc;
	/* NVML answers for a device paired with itself as for any pair. */
	struct nvmlDevice_st *d1 = dev_of(h1), *d2 = dev_of(h2);
	if (!d1 || !d2)
		return NVML_ERROR_INVALID_ARGUMENT;
	struct p2p key = { .peer = d2->index };
	if (d1->row)
		*p = d1->row[d2->index] != P2P_NONE ? &g.answers[d1->row[d2->index]] : NULL;
	else
		*p = d1->np2p ? bsearch(&key, d1->p2p, d1->np2p, sizeof(key), cmp_p2p) : NULL;
	if (!*p)
		*p = &none;
	return NVML_SUCCESS;
}

static nvmlReturn_t put_str(const char *s, char *buf, unsigned int length)
{
	size_t n = strlen(s);
	if (length <= n)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n + 1);
	return NVML_SUCCESS;
}

/* ---------------------------------------------------------- NVML: system */

static nvmlReturn_t replay_nvmlInit_v2(void)
{
	nvmlReturn_t rc = enter(FN_nvmlInit_v2);
	if (rc == NVML_SUCCESS && (rc = g.init_rc) == NVML_SUCCESS)
		atomic_fetch_add(&g_inits, 1);
	return rc;
}

static nvmlReturn_t replay_nvmlShutdown(void)
{
	nvmlReturn_t rc = enter(FN_nvmlShutdown);
	if (rc)
		return rc;
	unsigned int n = atomic_load(&g_inits);
	do {
		if (n == 0)
			return NVML_ERROR_UNINITIALIZED;
	} while (!atomic_compare_exchange_weak(&g_inits, &n, n - 1));
	return NVML_SUCCESS;
}

/* As libnvidia-ml 580 words them. */
static const struct {
	nvmlReturn_t code;
	const char *text;
} error_strings[] = {
	{ NVML_SUCCESS, "Success" },
	{ NVML_ERROR_UNINITIALIZED, "Uninitialized" },
	{ NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument" },
	{ NVML_ERROR_NOT_SUPPORTED, "Not Supported" },
	{ NVML_ERROR_NO_PERMISSION, "Insufficient Permissions" },
	{ NVML_ERROR_ALREADY_INITIALIZED, "Already Initialized" },
	{ NVML_ERROR_NOT_FOUND, "Not Found" },
	{ NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size" },
	{ NVML_ERROR_INSUFFICIENT_POWER, "Insufficient External Power" },
	{ NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded" },
	{ NVML_ERROR_TIMEOUT, "Timeout" },
	{ NVML_ERROR_IRQ_ISSUE, "Interrupt Request Issue" },
	{ NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found" },
	{ NVML_ERROR_FUNCTION_NOT_FOUND, "Function Not Found" },
	{ NVML_ERROR_CORRUPTED_INFOROM, "Corrupted infoROM" },
	{ NVML_ERROR_GPU_IS_LOST, "GPU is lost" },
	{ NVML_ERROR_RESET_REQUIRED, "GPU requires reset" },
	{ NVML_ERROR_OPERATING_SYSTEM, "GPU access blocked by the operating system" },
	{ NVML_ERROR_LIB_RM_VERSION_MISMATCH, "Driver/library version mismatch" },
	{ NVML_ERROR_IN_USE, "In use by another client" },
	{ NVML_ERROR_MEMORY, "Insufficient Memory" },
	{ NVML_ERROR_NO_DATA, "No data" },
	{ NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "vGPU ECC not supported" },
	{ NVML_ERROR_INSUFFICIENT_RESOURCES, "Insufficient Resources" },
	{ NVML_ERROR_FREQ_NOT_SUPPORTED, "Invalid Frequency" },
	{ NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "Argument version mismatch" },
	{ NVML_ERROR_DEPRECATED, "Requested functionality has been deprecated" },
	{ NVML_ERROR_NOT_READY, "System is not in ready state" },
	{ NVML_ERROR_GPU_NOT_FOUND, "No supported GPUs were found" },
	{ NVML_ERROR_INVALID_STATE, "Resource not in correct state to perform requested operation" },
	{ 30 /* NVML_ERROR_RESET_TYPE_NOT_SUPPORTED */, "Reset type is not supported for given device" },
	{ NVML_ERROR_UNKNOWN, "Unknown Error" },
};

static const char *replay_nvmlErrorString(nvmlReturn_t result)
{
	for (size_t i = 0; i < sizeof(error_strings) / sizeof(error_strings[0]); i++)
		if (error_strings[i].code == result)
			return error_strings[i].text;
	return "Unknown Error";
}

/*
 * The answer of a function: `enter` its prologue (SYSTEM or DEVICE, which
 * sets d), then INVALID_ARGUMENT unless `given`, the recorded `code`, else
 * the out arguments filled by `set`.
 */
#define ANSWER(fn, params, enter, given, code, set)              \
	static nvmlReturn_t replay_##fn params                   \
	{                                                        \
		struct nvmlDevice_st *d = NULL;                  \
		nvmlReturn_t rc = enter(fn);                     \
		(void)d;                                         \
		if (rc)                                          \
			return rc;                               \
		if (!(given))                                    \
			return NVML_ERROR_INVALID_ARGUMENT;      \
		if (code)                                        \
			return code;                             \
		set;                                             \
		return NVML_SUCCESS;                             \
	}
#define SYSTEM(fn) enter(FN_##fn)
#define DEVICE(fn) enter_device(FN_##fn, device, &d)
#define SYSTEM_ANSWER(fn, params, given, code, set) ANSWER(fn, params, SYSTEM, given, code, set)
#define DEVICE_ANSWER(fn, params, given, code, set) ANSWER(fn, params, DEVICE, given, code, set)
SYSTEM_ANSWER(nvmlSystemGetDriverVersion, (char *version, unsigned int length), version, g.driver_rc,
	      return put_str(g.driver, version, length))
SYSTEM_ANSWER(nvmlSystemGetNVMLVersion, (char *version, unsigned int length), version, g.nvml_version_rc,
	      return put_str(g.nvml_version, version, length))
SYSTEM_ANSWER(nvmlSystemGetCudaDriverVersion_v2, (int *cudaDriverVersion), cudaDriverVersion, g.cuda_rc,
	      *cudaDriverVersion = g.cuda)
SYSTEM_ANSWER(nvmlDeviceGetCount_v2, (unsigned int *deviceCount), deviceCount, g.count_rc, *deviceCount = g.count)

static nvmlReturn_t replay_nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	nvmlReturn_t rc = enter(FN_nvmlDeviceGetHandleByIndex_v2);
	if (rc)
		return rc;
	if (index >= g.count || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (g.devs[index].handle_rc)
		return g.devs[index].handle_rc;
	*device = &g.devs[index];
	return NVML_SUCCESS;
}

/* ---------------------------------------------------------- NVML: device */

DEVICE_ANSWER(nvmlDeviceGetName, (nvmlDevice_t device, char *name, unsigned int length), name, d->name_rc,
	      return put_str(d->name, name, length))
DEVICE_ANSWER(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t *pci), pci, d->pci_rc, *pci = d->pci)
DEVICE_ANSWER(nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t device, int *major, int *minor), major && minor,
	      d->cc_rc, (*major = d->cc[0], *minor = d->cc[1]))
DEVICE_ANSWER(nvmlDeviceGetMigMode, (nvmlDevice_t device, unsigned int *current, unsigned int *pending),
	      current && pending, d->mig_rc, (*current = d->mig[0], *pending = d->mig[1]))

DEVICE_ANSWER(nvmlDeviceGetBAR1MemoryInfo, (nvmlDevice_t device, nvmlBAR1Memory_t *bar1), bar1, d->bar1_rc,
	      (bar1->bar1Total = bar1->bar1Free = d->bar1, bar1->bar1Used = 0))
DEVICE_ANSWER(nvmlDeviceGetVirtualizationMode, (nvmlDevice_t device, nvmlGpuVirtualizationMode_t *mode), mode,
	      d->virt_rc, *mode = (nvmlGpuVirtualizationMode_t)d->virt)
SYSTEM_ANSWER(nvmlSystemGetConfComputeState, (nvmlConfComputeSystemState_t *state), state, g.conf_rc,
	      *state = g.conf)

/* A GPU's UUID, or a MIG instance's (a handle of its "mig_devices"). */
static nvmlReturn_t replay_mig_uuid(nvmlDevice_t device, char *uuid, unsigned int length, int *done);

static nvmlReturn_t replay_nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	struct nvmlDevice_st *d;
	int mig = 0;
	nvmlReturn_t rc = g.any_mig ? replay_mig_uuid(device, uuid, length, &mig) : NVML_SUCCESS;
	if (mig)
		return rc;
	rc = enter_device(FN_nvmlDeviceGetUUID, device, &d);
	if (rc)
		return rc;
	if (!uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	return d->uuid_rc ? d->uuid_rc : put_str(d->uuid, uuid, length);
}

static nvmlReturn_t replay_nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfo_v3_t *info)
{
	struct nvmlDevice_st *d;
	nvmlReturn_t rc = enter_device(FN_nvmlDeviceGetGpuFabricInfoV, device, &d);
	if (rc)
		return rc;
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned int version = info->version;
	if (version != nvmlGpuFabricInfo_v2 && version != nvmlGpuFabricInfo_v3)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (d->fabric_rc)
		return d->fabric_rc;
	const struct fabric *f = &d->fabric;
	nvmlGpuFabricInfo_v3_t v3 = { version, { 0 }, f->status, f->clique, f->state, f->health,
				      (unsigned char)f->summary };
	memcpy(v3.clusterUuid, f->uuid, sizeof(v3.clusterUuid));
	if (version == nvmlGpuFabricInfo_v3) {
		*info = v3;
	} else {
		/* The caller's struct is a v2 one: write no byte past it. */
		nvmlGpuFabricInfo_v2_t v2 = { version, { 0 }, f->status, f->clique, f->state, f->health };
		memcpy(v2.clusterUuid, f->uuid, sizeof(v2.clusterUuid));
		memcpy(info, &v2, sizeof(v2));
	}
	return NVML_SUCCESS;
}

static nvmlReturn_t replay_nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo)
{
	struct nvmlDevice_st *d;
	nvmlReturn_t rc = enter_device(FN_nvmlDeviceGetGpuFabricInfo, device, &d);
	if (rc)
		return rc;
	if (!gpuFabricInfo)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d->fabric_rc)
		return d->fabric_rc;
	nvmlGpuFabricInfo_t out = { { 0 }, d->fabric.status, d->fabric.clique, d->fabric.state };
	memcpy(out.clusterUuid, d->fabric.uuid, sizeof(out.clusterUuid));
	*gpuFabricInfo = out;
	return NVML_SUCCESS;
}

/* ---------------------------------------------------------- NVML: nvlink */

/* The answer of a per-link function: the link's code, else *out. */
#define LINK_ANSWER(fn, type, out, code, value)                                              \
	static nvmlReturn_t replay_##fn(nvmlDevice_t device, unsigned int link, type *out)   \
	{                                                                                    \
		const struct link *l;                                                        \
		nvmlReturn_t rc = enter_link(FN_##fn, device, link, &l);                     \
		if (rc)                                                                      \
			return rc;                                                           \
		if (!out)                                                                    \
			return NVML_ERROR_INVALID_ARGUMENT;                                  \
		if (l->code)                                                                 \
			return l->code;                                                      \
		*out = l->value;                                                             \
		return NVML_SUCCESS;                                                         \
	}
LINK_ANSWER(nvmlDeviceGetNvLinkState, nvmlEnableState_t, isActive, state_rc, state)
LINK_ANSWER(nvmlDeviceGetNvLinkVersion, unsigned int, version, version_rc, version)
LINK_ANSWER(nvmlDeviceGetNvLinkRemoteDeviceType, nvmlIntNvLinkDeviceType_t, pNvLinkDeviceType, type_rc, type)
LINK_ANSWER(nvmlDeviceGetNvLinkRemotePciInfo_v2, nvmlPciInfo_t, pci, pci_rc, pci)

/* NVML_FI_DEV_NVLINK_LINK_COUNT, or with `switch_only` NVSWITCH_CONNECTED_LINK_COUNT. */
static nvmlReturn_t field_link_count(const struct nvmlDevice_st *d, bool switch_only, unsigned int *out)
{
	if (!d->has_nvlink)
		return NVML_ERROR_NOT_SUPPORTED;
	*out = 0;
	for (unsigned int i = 0; i < d->nlinks; i++) {
		const struct link *l = &d->links[i];
		if (!switch_only)
			*out += l->state_rc != NVML_ERROR_INVALID_ARGUMENT;
		else
			*out += l->state_rc == NVML_SUCCESS && l->state == NVML_FEATURE_ENABLED &&
				l->type_rc == NVML_SUCCESS && l->type == NVML_NVLINK_DEVICE_TYPE_SWITCH;
	}
	return NVML_SUCCESS;
}

static nvmlReturn_t field_link(const struct nvmlDevice_st *d, unsigned int id, unsigned int ln, unsigned int *out)
{
	/* Unlike the link calls, NVML answers fields of absent links so. */
	const struct link *l = link_of(d, ln);
	if (!l)
		return NVML_ERROR_NOT_SUPPORTED;
	switch (id) {
	case NVML_FI_DEV_NVLINK_GET_STATE:
		*out = (unsigned int)l->state;
		return l->state_rc;
	case NVML_FI_DEV_NVLINK_GET_VERSION:
		*out = l->version;
		return l->version_rc;
	default:
		*out = l->speed;
		return l->speed_rc;
	}
}

static void field_value(const struct nvmlDevice_st *d, nvmlFieldValue_t *v, long long now)
{
	unsigned int x = 0;
	nvmlReturn_t rc;
	switch (v->fieldId) {
	case NVML_FI_DEV_NVLINK_LINK_COUNT:
		rc = field_link_count(d, false, &x);
		break;
	case NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT:
		rc = field_link_count(d, true, &x);
		break;
	case NVML_FI_DEV_NVLINK_GET_SPEED:
	case NVML_FI_DEV_NVLINK_GET_STATE:
	case NVML_FI_DEV_NVLINK_GET_VERSION:
		rc = field_link(d, v->fieldId, v->scopeId, &x);
		break;
	default:
		/* A field the format does not describe: NVML leaves the rest
		 * of the entry alone for ids it does not know. */
		v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
		return;
	}
	v->timestamp = now;
	v->latencyUsec = 0;
	v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
	v->nvmlReturn = rc;
	memset(&v->value, 0, sizeof(v->value));
	if (rc == NVML_SUCCESS)
		v->value.uiVal = x;
}

static nvmlReturn_t replay_nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
	struct nvmlDevice_st *d;
	nvmlReturn_t rc = enter_device(FN_nvmlDeviceGetFieldValues, device, &d);
	if (rc)
		return rc;
	if (valuesCount <= 0 || !values)
		return NVML_ERROR_INVALID_ARGUMENT;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	long long now = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	for (int i = 0; i < valuesCount; i++)
		field_value(d, &values[i], now);
	return NVML_SUCCESS;
}

/* ------------------------------------------------------------- NVML: p2p */

static nvmlReturn_t replay_nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,
				    nvmlGpuP2PStatus_t *p2pStatus)
{
	const struct p2p *p;
	nvmlReturn_t rc = enter_pair(FN_nvmlDeviceGetP2PStatus, device1, device2, &p);
	if (rc)
		return rc;
	if (!p2pStatus)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* NVML 580 answers OK for a capability index it does not know. */
	if (p2pIndex < 0 || p2pIndex >= P2P_CAPS) {
		*p2pStatus = NVML_P2P_STATUS_OK;
		return NVML_SUCCESS;
	}
	if (p->status_rc[p2pIndex])
		return p->status_rc[p2pIndex];
	*p2pStatus = p->status[p2pIndex];
	return NVML_SUCCESS;
}

static nvmlReturn_t replay_nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
						 nvmlGpuTopologyLevel_t *pathInfo)
{
	const struct p2p *p;
	nvmlReturn_t rc = enter_pair(FN_nvmlDeviceGetTopologyCommonAncestor, device1, device2, &p);
	if (rc)
		return rc;
	if (!pathInfo)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (p->ancestor_rc)
		return p->ancestor_rc;
	*pathInfo = p->ancestor;
	return NVML_SUCCESS;
}

/* ----------------------------------------------------------------- table */

/* ------------------------------------------------------------ NVML: MIG */

/* The MIG queries answer from a device's "mig_devices"; a GPU without that
 * key answers NOT_SUPPORTED, as a recording made before MIG instances were
 * recorded cannot say more.  They are there as long as nvmlDeviceGetMigMode
 * is. */
static struct mig *mig_of(nvmlDevice_t h)
{
	uintptr_t p = (uintptr_t)h;
	for (unsigned int i = 0; h && i < g.count; i++) {
		struct nvmlDevice_st *d = &g.devs[i];
		uintptr_t base = (uintptr_t)d->migs;
		if (d->nmig && p >= base && p < base + d->nmig * sizeof(*d->migs) && (p - base) % sizeof(*d->migs) == 0)
			return (struct mig *)h;
	}
	return NULL;
}

/* A GPU lists its instances when it has "mig_devices" or is known not in MIG mode. */
static nvmlReturn_t mig_count_rc(const struct nvmlDevice_st *d)
{
	return d->migs || (d->mig_rc == NVML_SUCCESS && d->mig[0] == 0) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

/* Present, and failing by injected faults, as nvmlDeviceGetMigMode is. */
#define MIG_GPU(fn) enter_device(FN_nvmlDeviceGetMigMode, device, &d)
ANSWER(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t device, unsigned int *count), MIG_GPU, count, mig_count_rc(d),
       *count = d->nmig)
ANSWER(nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t device, unsigned int index, nvmlDevice_t *mig), MIG_GPU,
       mig && index < d->nmig, NVML_SUCCESS, *mig = (nvmlDevice_t)&d->migs[index])

static nvmlReturn_t replay_nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t *device)
{
	nvmlReturn_t rc = enter(FN_nvmlDeviceGetMigMode);
	struct mig *m = rc ? NULL : mig_of(mig);
	if (rc || !m || !device)
		return rc ? rc : NVML_ERROR_INVALID_ARGUMENT;
	*device = (nvmlDevice_t)&g.devs[m->parent];
	return NVML_SUCCESS;
}

/* nvmlDeviceGetUUID on a MIG handle; other handles go to the device's. */
static nvmlReturn_t replay_mig_uuid(nvmlDevice_t device, char *uuid, unsigned int length, int *done)
{
	struct mig *m = mig_of(device);
	*done = m != NULL;
	if (!m)
		return NVML_SUCCESS;
	nvmlReturn_t rc = enter(FN_nvmlDeviceGetUUID);
	if (rc)
		return rc;
	if (!uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	return m->uuid_rc ? m->uuid_rc : put_str(m->uuid, uuid, length);
}

/* A MIG instance's GPU (ci 0) or compute (ci 1) instance id. */
static nvmlReturn_t replay_mig_id(nvmlDevice_t mig, unsigned int *id, int ci)
{
	nvmlReturn_t rc = enter(FN_nvmlDeviceGetMigMode);
	struct mig *m = rc ? NULL : mig_of(mig);
	if (rc || !m || !id)
		return rc ? rc : NVML_ERROR_INVALID_ARGUMENT;
	if (ci ? m->ci_rc : m->gi_rc)
		return ci ? m->ci_rc : m->gi_rc;
	*id = ci ? m->ci : m->gi;
	return NVML_SUCCESS;
}

static nvmlReturn_t replay_nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned int *id)
{
	return replay_mig_id(mig, id, 0);
}

static nvmlReturn_t replay_nvmlDeviceGetComputeInstanceId(nvmlDevice_t mig, unsigned int *id)
{
	return replay_mig_id(mig, id, 1);
}

int replay_nvml_bind(struct nvml_api *api, const char *library, char *err, size_t errlen)
{
	memset(api, 0, sizeof(*api));
	if (!loaded()) {
		snprintf(err, errlen, "%s", g.load_error);
		return -1;
	}
#define REPLAY_TABLE_(fn, ret, params, required)                                                   \
	if (!g.fn_missing[FN_##fn]) {                                                              \
		api->fn = replay_##fn;                                                             \
	} else if (required) {                                                                     \
		snprintf(err, errlen, "%s lacks %s (not an NVML library?)", library, #fn);         \
		memset(api, 0, sizeof(*api));                                                      \
		return -1;                                                                         \
	}
	NVML_FUNCTIONS(REPLAY_TABLE_)
#undef REPLAY_TABLE_
#define REPLAY_MIG_(fn, ret, params, required) api->fn = g.fn_missing[FN_nvmlDeviceGetMigMode] ? NULL : replay_##fn;
	NVML_MIG_FUNCTIONS(REPLAY_MIG_)
#undef REPLAY_MIG_
	return 0;
}

static int op_nvml_table(struct nvml_api *api, char *err, size_t errlen)
{
	return replay_nvml_bind(api, DEFAULT_LIBRARY, err, errlen);
}

/* ------------------------------------------------------------------- ops */

static const char *op_load_error(void)
{
	loaded();
	return g.load_error;
}

static int op_getenv(const char *name, const char **value)
{
	if (!loaded() || !name)
		return 0;
	for (unsigned int i = 0; i < g.nenv; i++)
		if (!strcmp(g.env[i].name, name)) {
			if (value)
				*value = g.env[i].value;
			return 1;
		}
	return 0;
}

static const char *op_nvml_load_error(void)
{
	if (!loaded())
		return g.load_error;
	if (!g.nvml_present)
		return NOT_INSTALLED;
	return g.library_error;
}

static int op_pci_gpus(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int max)
{
	if (!loaded())
		return 0;
	for (unsigned int i = 0; bus_ids && i < g.ngpus && (int)i < max; i++)
		dc_pci_format(&g.gpus[i], bus_ids[i]);
	return (int)g.ngpus;
}

json_t *replay_nvml_missing(void)
{
	json_t *arr = json_array();
	for (int i = 0; arr && loaded() && i < FN_COUNT; i++)
		if (g.fn_missing[i])
			json_array_append_new(arr, json_string(fn_names[i]));
	return arr;
}

const char *replay_nvml_library(void)
{
	return loaded() && g.library ? g.library : DEFAULT_LIBRARY;
}

const struct dmaconn_replay_ops *dmaconn_replay_ops(void)
{
	static const struct dmaconn_replay_ops ops = {
		.abi_version = DMACONN_REPLAY_ABI_VERSION,
		.load_error = op_load_error,
		.getenv = op_getenv,
		.nvml_load_error = op_nvml_load_error,
		.nvml_table = op_nvml_table,
		.ze_table = replay_ze_table,
		.pci_gpus = op_pci_gpus,
		.read_file = replay_files_read_file,
		.list_dir = replay_files_list_dir,
		.library_load_error = replay_library_load_error,
		.host = replay_host,
		.record_begin = replay_record_begin,
		.record_table = replay_record_table,
		.record_write = replay_record_write,
		.record_file = replay_files_note,
		.record_pci_gpus = replay_record_pci_gpus,
		.verification = replay_verification,
	};
	return &ops;
}

#ifdef DMACONN_FUZZING
static void fuzz_no_load(void)
{
}

/*
 * fuzz/fuzz_replay.c's entry points, compiled only into that target: parses
 * data as a topology file into the structures above (0 when accepted, -1
 * when refused; the tables then answer from them), and frees them.
 */
REPLAY_EXPORT int dmaconn_replay_fuzz_load(const char *data, size_t len);
REPLAY_EXPORT void dmaconn_replay_fuzz_release(void);
int dmaconn_replay_fuzz_load(const char *data, size_t len)
{
	pthread_once(&g_once, fuzz_no_load); /* never read DMACONN_REPLAY */
	json_error_t je;
	json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return -1;
	struct ld ld = { "fuzz" };
	int rc = read_root(&ld, root);
	json_decref(root);
	g.load_error = rc ? replay_err : NULL;
	return rc;
}

void dmaconn_replay_fuzz_release(void)
{
	free_data();
}
#endif
