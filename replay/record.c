/*
 * The record half of libdmaconn_replay: asks NVML everything dmaconn may ask
 * and writes the answers, errors included, as a version-1 topology file
 * (docs/replay-format.md, "Recording").  Under DMACONN_REPLAY the questions go
 * to this library's own NVML functions, so that recording a replay
 * reproduces it.
 */
#include "dmaconn_replay.h"
#include "replay_internal.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "nvml_load.h"
#include "pci.h"
#include "sysfs.h"

#define DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define PROBE_FAILURES 16

/* nvmlValueType_t, for the speed field's value. */
enum {
	VALUE_DOUBLE = 0,
	VALUE_UINT = NVML_VALUE_TYPE_UNSIGNED_INT,
	VALUE_ULONG = 2,
	VALUE_ULONGLONG = 3,
	VALUE_SLONGLONG = 4,
	VALUE_SINT = 5,
	VALUE_USHORT = 6,
};

struct rec {
	struct nvml_api api;
	const struct dmaconn_replay_ops *ops; /* set under DMACONN_REPLAY */
	bool oom;
};

/* "NOT_SUPPORTED", "SUCCESS": the names the format uses. */
static const char *code_name(nvmlReturn_t rc)
{
	const char *n = nvml_return_name(rc);
	if (!n)
		return "UNKNOWN";
	return strncmp(n, "NVML_ERROR_", 11) ? n + 5 : n + 11;
}

static json_t *err_obj(nvmlReturn_t rc)
{
	return json_pack("{s:s}", "error", code_name(rc));
}

json_t *replay_text(const char *s, size_t n)
{
	json_t *v = json_stringn(s, n);
	if (v)
		return v;
	char *clean = malloc(n + 1);
	if (!clean)
		return NULL;
	for (size_t i = 0; i < n; i++)
		clean[i] = (unsigned char)s[i] < 0x80 && s[i] ? s[i] : '?';
	v = json_stringn(clean, n);
	free(clean);
	return v;
}

/* An NVML string buffer, which need not be terminated; at most size - 1
 * characters, so that the file replays into the same buffer. */
static json_t *buffer_text(const char *buf, size_t size)
{
	return replay_text(buf, strnlen(buf, size - 1));
}

/* ------------------------------------------------------------- the file */

static json_t *rec_recorded(const char *tool)
{
	char host[256] = "unknown", date[32] = "";
	struct utsname u;
	struct tm tm;
	time_t now = time(NULL);
	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = '\0';
	if (gmtime_r(&now, &tm))
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (json_object_set_new(o, "tool", replay_text(tool, strlen(tool))) ||
	    json_object_set_new(o, "host", replay_text(host, strlen(host))) ||
	    json_object_set_new(o, "date", json_string(date)) ||
	    json_object_set_new(o, "kernel", uname(&u) == 0 ? replay_text(u.release, strlen(u.release)) : json_null())) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void put_env(struct rec *r, json_t *env, const char *name)
{
	const char *v = NULL;
	if (!r->ops || !r->ops->getenv(name, &v))
		v = secure_getenv(name);
	replay_put(&r->oom, env, name, v ? replay_text(v, strlen(v)) : json_null());
}

static json_t *rec_environment(struct rec *r)
{
	json_t *env = json_object();
#define RECORD_ENV_(name) put_env(r, env, #name);
	DMACONN_ORDERING_ENV(RECORD_ENV_)
#undef RECORD_ENV_
	return env;
}

static json_t *rec_pci_gpus(struct rec *r)
{
	json_t *arr = json_array();
	char id[DC_PCI_BUS_ID_SIZE];
	if (r->ops) {
		int n = r->ops->pci_gpus(NULL, 0);
		char(*ids)[DMACONN_REPLAY_BUS_ID_SIZE] = n > 0 ? calloc((size_t)n, sizeof(*ids)) : NULL;
		if (n > 0 && !ids)
			r->oom = true;
		int got = ids ? r->ops->pci_gpus(ids, n) : 0;
		for (int i = 0; i < got && i < n; i++)
			replay_append(&r->oom, arr, json_string(ids[i]));
		free(ids);
		return arr;
	}
	const char *root = secure_getenv("DMACONN_SYSFS_ROOT");
	if (!root)
		root = "";
	int n = dc_sysfs_nvidia_gpus(root, NULL, 0);
	if (n > REPLAY_MAX_DEVICES)
		n = REPLAY_MAX_DEVICES;
	struct dc_pci *gpus = n > 0 ? calloc((size_t)n, sizeof(*gpus)) : NULL;
	if (n > 0 && !gpus)
		r->oom = true;
	/* The list may shrink between the two scans. */
	int got = gpus ? dc_sysfs_nvidia_gpus(root, gpus, n) : 0;
	for (int i = 0; i < got && i < n; i++) {
		dc_pci_format(&gpus[i], id);
		replay_append(&r->oom, arr, json_string(id));
	}
	free(gpus);
	return arr;
}

/* ---------------------------------------------------------------- devices */

typedef nvmlReturn_t (*text_fn)(nvmlDevice_t, char *, unsigned int);

static json_t *rec_text(text_fn fn, nvmlDevice_t h, unsigned int size)
{
	char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE > NVML_DEVICE_UUID_V2_BUFFER_SIZE ? NVML_DEVICE_NAME_V2_BUFFER_SIZE
										  : NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	memset(buf, 0, sizeof(buf));
	if (size > sizeof(buf))
		size = sizeof(buf);
	nvmlReturn_t rc = fn(h, buf, size);
	return rc ? err_obj(rc) : buffer_text(buf, size);
}

static json_t *pci_json(const nvmlPciInfo_t *p)
{
	struct dc_pci legacy;
	json_t *o = json_object();
	if (!o || json_object_set_new(o, "bus_id", buffer_text(p->busId, sizeof(p->busId))))
		goto fail;
	/* An unusable legacy id is left for the reader to derive. */
	if (!dc_pci_parse(p->busIdLegacy, sizeof(p->busIdLegacy) - 1, &legacy) &&
	    json_object_set_new(o, "bus_id_legacy", buffer_text(p->busIdLegacy, sizeof(p->busIdLegacy))))
		goto fail;
	if (json_object_set_new(o, "pci_device_id", json_integer(p->pciDeviceId)) ||
	    json_object_set_new(o, "pci_subsystem_id", json_integer(p->pciSubSystemId)))
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *rec_pci(struct rec *r, nvmlDevice_t h)
{
	nvmlPciInfo_t p;
	memset(&p, 0, sizeof(p));
	nvmlReturn_t rc = r->api.nvmlDeviceGetPciInfo_v3(h, &p);
	return rc ? err_obj(rc) : pci_json(&p);
}

static json_t *rec_cc(struct rec *r, nvmlDevice_t h)
{
	int major = 0, minor = 0;
	nvmlReturn_t rc = r->api.nvmlDeviceGetCudaComputeCapability(h, &major, &minor);
	return rc ? err_obj(rc) : json_pack("[ii]", major, minor);
}

static json_t *rec_mig(struct rec *r, nvmlDevice_t h)
{
	unsigned int current = 0, pending = 0;
	nvmlReturn_t rc = r->api.nvmlDeviceGetMigMode(h, &current, &pending);
	return rc ? err_obj(rc) : json_pack("[II]", (json_int_t)current, (json_int_t)pending);
}

static json_t *fabric_json(nvmlGpuFabricState_t state, nvmlReturn_t status, const unsigned char *uuid,
			   unsigned int clique, const unsigned int *health, const unsigned char *summary)
{
	char u[40];
	snprintf(u, sizeof(u), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", uuid[0],
		 uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8], uuid[9], uuid[10], uuid[11],
		 uuid[12], uuid[13], uuid[14], uuid[15]);
	json_t *o = json_pack("{s:i, s:s, s:s, s:I}", "state", (int)state, "status", code_name(status),
			      "cluster_uuid", u, "clique_id", (json_int_t)clique);
	if (o && ((health && json_object_set_new(o, "health_mask", json_integer(*health))) ||
		  (summary && json_object_set_new(o, "health_summary", json_integer(*summary))))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The versioned call (v3, then v2), falling back to the legacy one where
 * the versioned one is missing or knows neither version. */
static json_t *rec_fabric(struct rec *r, nvmlDevice_t h)
{
	nvmlReturn_t rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (r->api.nvmlDeviceGetGpuFabricInfoV) {
		nvmlGpuFabricInfo_v3_t v3;
		memset(&v3, 0, sizeof(v3));
		v3.version = nvmlGpuFabricInfo_v3;
		if ((rc = r->api.nvmlDeviceGetGpuFabricInfoV(h, &v3)) == NVML_SUCCESS)
			return fabric_json(v3.state, v3.status, v3.clusterUuid, v3.cliqueId, &v3.healthMask,
					   &v3.healthSummary);
	}
	if (r->api.nvmlDeviceGetGpuFabricInfoV && rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
		nvmlGpuFabricInfo_v2_t v2;
		memset(&v2, 0, sizeof(v2));
		v2.version = nvmlGpuFabricInfo_v2;
		if ((rc = r->api.nvmlDeviceGetGpuFabricInfoV(h, (nvmlGpuFabricInfo_v3_t *)&v2)) == NVML_SUCCESS)
			return fabric_json(v2.state, v2.status, v2.clusterUuid, v2.cliqueId, &v2.healthMask, NULL);
	}
	if (r->api.nvmlDeviceGetGpuFabricInfo && rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
		nvmlGpuFabricInfo_t f;
		memset(&f, 0, sizeof(f));
		if ((rc = r->api.nvmlDeviceGetGpuFabricInfo(h, &f)) == NVML_SUCCESS)
			return fabric_json(f.state, f.status, f.clusterUuid, f.cliqueId, NULL, NULL);
	}
	return err_obj(rc);
}

static unsigned long long field_value(const nvmlFieldValue_t *v)
{
	switch (v->valueType) {
	case VALUE_DOUBLE:
		if (!(v->value.dVal > 0))
			return 0;
		return v->value.dVal < (double)UINT_MAX ? (unsigned long long)v->value.dVal : UINT_MAX;
	case VALUE_ULONG:
		return v->value.ulVal;
	case VALUE_ULONGLONG:
		return v->value.ullVal;
	case VALUE_SLONGLONG:
		return v->value.sllVal > 0 ? (unsigned long long)v->value.sllVal : 0;
	case VALUE_SINT:
		return v->value.siVal > 0 ? (unsigned long long)v->value.siVal : 0;
	case VALUE_USHORT:
		return v->value.usVal;
	default:
		return v->value.uiVal;
	}
}

/* One per-link field: the call's failure or the entry's, else *v. */
static nvmlReturn_t ask_field(const struct nvml_api *api, nvmlDevice_t h, unsigned int id, unsigned int ln,
			      json_t **v)
{
	nvmlFieldValue_t fv;
	memset(&fv, 0, sizeof(fv));
	fv.fieldId = id;
	fv.scopeId = ln;
	nvmlReturn_t rc = api->nvmlDeviceGetFieldValues(h, 1, &fv);
	if (!rc)
		rc = fv.nvmlReturn;
	if (!rc) {
		unsigned long long x = field_value(&fv);
		*v = json_integer((json_int_t)(x > UINT_MAX ? UINT_MAX : x));
	}
	return rc;
}

/* The answers about one link, in the order of the format's keys. */
enum { L_STATE, L_VERSION, L_TYPE, L_PCI, L_SPEED, L_COUNT };
static const char *const link_keys[L_COUNT] = { "state", "version", "remote_type", "remote_pci", "speed_mbps" };

struct link_answers {
	bool asked[L_COUNT];
	bool field[L_COUNT]; /* answered by nvmlDeviceGetFieldValues */
	nvmlReturn_t rc[L_COUNT];
	json_t *v[L_COUNT];
};

static void ask_link(struct rec *r, nvmlDevice_t h, unsigned int ln, struct link_answers *a)
{
	const struct nvml_api *api = &r->api;
	nvmlEnableState_t state = 0;
	unsigned int version = 0;
	nvmlIntNvLinkDeviceType_t type = 0;
	nvmlPciInfo_t pci;
	memset(a, 0, sizeof(*a));
	memset(&pci, 0, sizeof(pci));
	a->asked[L_STATE] = true;
	if (!(a->rc[L_STATE] = api->nvmlDeviceGetNvLinkState(h, ln, &state)))
		a->v[L_STATE] = json_integer(state != NVML_FEATURE_DISABLED);
	if (api->nvmlDeviceGetNvLinkVersion) {
		a->asked[L_VERSION] = true;
		if (!(a->rc[L_VERSION] = api->nvmlDeviceGetNvLinkVersion(h, ln, &version)))
			a->v[L_VERSION] = json_integer(version);
	} else if (api->nvmlDeviceGetFieldValues) {
		/* The replay answers the version field from "version" too. */
		a->asked[L_VERSION] = a->field[L_VERSION] = true;
		a->rc[L_VERSION] = ask_field(api, h, NVML_FI_DEV_NVLINK_GET_VERSION, ln, &a->v[L_VERSION]);
	}
	if ((a->asked[L_TYPE] = api->nvmlDeviceGetNvLinkRemoteDeviceType != NULL) &&
	    !(a->rc[L_TYPE] = api->nvmlDeviceGetNvLinkRemoteDeviceType(h, ln, &type))) {
		const char *name = replay_name_of(replay_remote_type_names, type);
		a->v[L_TYPE] = json_string(name ? name : "UNKNOWN");
	}
	a->asked[L_PCI] = true;
	if (!(a->rc[L_PCI] = api->nvmlDeviceGetNvLinkRemotePciInfo_v2(h, ln, &pci)))
		a->v[L_PCI] = pci_json(&pci);
	if ((a->asked[L_SPEED] = a->field[L_SPEED] = api->nvmlDeviceGetFieldValues != NULL))
		a->rc[L_SPEED] = ask_field(api, h, NVML_FI_DEV_NVLINK_GET_SPEED, ln, &a->v[L_SPEED]);
	for (int k = 0; k < L_COUNT; k++)
		if (a->asked[k] && !a->rc[k] && !a->v[k])
			r->oom = true;
}

/*
 * One "nvlink" entry: {"error": X} when every call answered X.  *absent:
 * the answers are those of a link the GPU does not have (INVALID_ARGUMENT,
 * NOT_SUPPORTED for fields), which is also how links past the last entry
 * replay.
 */
static json_t *rec_link(struct rec *r, nvmlDevice_t h, unsigned int ln, bool *absent)
{
	struct link_answers a;
	ask_link(r, h, ln, &a);
	*absent = true;
	for (int k = 0; k < L_COUNT; k++)
		*absent = *absent && (!a.asked[k] || a.rc[k] == (a.field[k] ? NVML_ERROR_NOT_SUPPORTED
									     : NVML_ERROR_INVALID_ARGUMENT));
	bool same = a.rc[L_STATE] != NVML_SUCCESS;
	for (int k = 0; k < L_COUNT; k++)
		same = same && (!a.asked[k] || a.rc[k] == a.rc[L_STATE]);
	json_t *o = same ? err_obj(a.rc[L_STATE]) : json_object();
	for (int k = 0; k < L_COUNT; k++) {
		if (same || !a.asked[k])
			json_decref(a.v[k]);
		else
			replay_put(&r->oom, o, link_keys[k], a.rc[k] ? err_obj(a.rc[k]) : a.v[k]);
	}
	return o;
}

/*
 * Every link up to NVML's maximum, less the trailing ones the GPU does not
 * have (links past the last entry replay as such), with runs of identical
 * links folded into "repeat".  A device whose every link is NOT_SUPPORTED
 * gets no "nvlink", which replays the same.
 */
static void rec_nvlink(struct rec *r, json_t *dev, nvmlDevice_t h)
{
	json_t *links[NVML_NVLINK_MAX_LINKS];
	bool absent[NVML_NVLINK_MAX_LINKS];
	unsigned int n = NVML_NVLINK_MAX_LINKS, unsupported = 0;
	json_t *unsup = err_obj(NVML_ERROR_NOT_SUPPORTED);
	if (!unsup)
		r->oom = true;
	for (unsigned int ln = 0; ln < n; ln++) {
		links[ln] = rec_link(r, h, ln, &absent[ln]);
		unsupported += json_equal(links[ln], unsup);
	}
	json_decref(unsup);
	while (n && absent[n - 1])
		json_decref(links[--n]);
	if (unsupported < NVML_NVLINK_MAX_LINKS) {
		json_t *arr = json_array();
		for (unsigned int i = 0, j; i < n; i = j) {
			for (j = i + 1; j < n && json_equal(links[j], links[i]); j++)
				;
			json_t *e = links[i];
			if (j - i > 1) {
				e = json_object();
				if (json_object_set_new(e, "repeat", json_integer(j - i)) || json_object_update(e, links[i]))
					r->oom = true;
			} else {
				json_incref(e);
			}
			replay_append(&r->oom, arr, e);
		}
		replay_put(&r->oom, dev, "nvlink", arr);
	}
	for (unsigned int ln = 0; ln < n; ln++)
		json_decref(links[ln]);
}

static json_t *rec_peer(struct rec *r, nvmlDevice_t h, nvmlDevice_t peer_h, unsigned int peer)
{
	json_t *o = json_object();
	replay_put(&r->oom, o, "peer", json_integer(peer));
	for (int c = 0; r->api.nvmlDeviceGetP2PStatus && c < REPLAY_P2P_CAPS; c++) {
		nvmlGpuP2PStatus_t s = 0;
		nvmlReturn_t rc = r->api.nvmlDeviceGetP2PStatus(h, peer_h, c, &s);
		const char *name = replay_name_of(replay_p2p_names, s);
		replay_put(&r->oom, o, replay_p2p_caps_keys[c], rc ? err_obj(rc) : json_string(name ? name : "U"));
	}
	if (r->api.nvmlDeviceGetTopologyCommonAncestor) {
		nvmlGpuTopologyLevel_t level = 0;
		nvmlReturn_t rc = r->api.nvmlDeviceGetTopologyCommonAncestor(h, peer_h, &level);
		const char *name = replay_name_of(replay_ancestor_names, level);
		/* A level the format cannot name replays as NVML's generic failure. */
		replay_put(&r->oom, o, "common_ancestor",
		    rc ? err_obj(rc) : name ? json_string(name) : err_obj(NVML_ERROR_UNKNOWN));
	}
	return o;
}

/* BAR1 size and virtualization mode: what bears on peer access over PCIe. */
static void rec_pcie_facts(struct rec *r, json_t *o, nvmlDevice_t h)
{
	nvmlReturn_t rc;
	if (r->api.nvmlDeviceGetBAR1MemoryInfo) {
		nvmlBAR1Memory_t bar1;
		memset(&bar1, 0, sizeof(bar1));
		rc = r->api.nvmlDeviceGetBAR1MemoryInfo(h, &bar1);
		replay_put(&r->oom, o, "bar1_total", rc ? err_obj(rc) : json_integer((json_int_t)bar1.bar1Total));
	}
	if (r->api.nvmlDeviceGetVirtualizationMode) {
		nvmlGpuVirtualizationMode_t mode = 0;
		rc = r->api.nvmlDeviceGetVirtualizationMode(h, &mode);
		replay_put(&r->oom, o, "virtualization_mode", rc ? err_obj(rc) : json_integer(mode));
	}
}

static json_t *rec_device(struct rec *r, nvmlDevice_t *h, unsigned int n, unsigned int i)
{
	const struct nvml_api *api = &r->api;
	json_t *o = json_object();
	replay_put(&r->oom, o, "name", rec_text(api->nvmlDeviceGetName, h[i], NVML_DEVICE_NAME_V2_BUFFER_SIZE));
	replay_put(&r->oom, o, "uuid", rec_text(api->nvmlDeviceGetUUID, h[i], NVML_DEVICE_UUID_V2_BUFFER_SIZE));
	replay_put(&r->oom, o, "pci", rec_pci(r, h[i]));
	if (api->nvmlDeviceGetCudaComputeCapability)
		replay_put(&r->oom, o, "cuda_compute_capability", rec_cc(r, h[i]));
	if (api->nvmlDeviceGetMigMode)
		replay_put(&r->oom, o, "mig_mode", rec_mig(r, h[i]));
	if (api->nvmlDeviceGetGpuFabricInfoV || api->nvmlDeviceGetGpuFabricInfo)
		replay_put(&r->oom, o, "fabric", rec_fabric(r, h[i]));
	rec_pcie_facts(r, o, h[i]);
	rec_nvlink(r, o, h[i]);
	if (api->nvmlDeviceGetP2PStatus || api->nvmlDeviceGetTopologyCommonAncestor) {
		json_t *arr = json_array();
		/* Every pair, a device with itself included: NVML answers that too. */
		for (unsigned int j = 0; j < n; j++)
			if (h[j])
				replay_append(&r->oom, arr, rec_peer(r, h[i], h[j], j));
		replay_put(&r->oom, o, "p2p", arr);
	}
	return o;
}

/* ------------------------------------------------------------------ NVML */

typedef nvmlReturn_t (*sys_text_fn)(char *, unsigned int);

static json_t *rec_sys_text(sys_text_fn fn, unsigned int size)
{
	char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE > NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE
			 ? NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
			 : NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
	memset(buf, 0, sizeof(buf));
	if (size > sizeof(buf))
		size = sizeof(buf);
	nvmlReturn_t rc = fn(buf, size);
	return rc ? err_obj(rc) : buffer_text(buf, size);
}

/*
 * The handles of every device, NULL where NVML refused (hrc says why).  When
 * the count failed, indices are probed up to the first INVALID_ARGUMENT, as
 * the replay of such a file answers; a long run of other failures ends the
 * probe and is dropped.
 */
static unsigned int get_handles(struct rec *r, unsigned int count, bool counted, nvmlDevice_t *h, nvmlReturn_t *hrc)
{
	unsigned int n = 0, failing = 0;
	for (unsigned int i = 0; i < (counted ? count : REPLAY_MAX_DEVICES); i++) {
		hrc[i] = r->api.nvmlDeviceGetHandleByIndex_v2(i, &h[i]);
		if (!counted && hrc[i] == NVML_ERROR_INVALID_ARGUMENT)
			break;
		if (hrc[i])
			h[i] = NULL;
		n = i + 1;
		failing = hrc[i] ? failing + 1 : 0;
		if (!counted && failing == PROBE_FAILURES)
			return n - failing;
	}
	return n;
}

static void rec_devices(struct rec *r, json_t *nvml)
{
	unsigned int count = 0;
	nvmlReturn_t rc = r->api.nvmlDeviceGetCount_v2(&count);
	replay_put(&r->oom, nvml, "device_count", rc ? err_obj(rc) : json_integer(count));
	if (count > REPLAY_MAX_DEVICES)
		count = REPLAY_MAX_DEVICES;
	nvmlDevice_t *h = calloc(REPLAY_MAX_DEVICES, sizeof(*h));
	nvmlReturn_t *hrc = calloc(REPLAY_MAX_DEVICES, sizeof(*hrc));
	json_t *devs = json_array();
	if (!h || !hrc) {
		r->oom = true;
	} else {
		/* Every handle first: the P2P answers need the peers'. */
		unsigned int n = get_handles(r, count, rc == NVML_SUCCESS, h, hrc);
		for (unsigned int i = 0; i < n; i++)
			replay_append(&r->oom, devs, h[i] ? rec_device(r, h, n, i) : err_obj(hrc[i]));
	}
	free(h);
	free(hrc);
	replay_put(&r->oom, nvml, "devices", devs);
}

static void rec_nvml_answers(struct rec *r, json_t *nvml)
{
	const struct nvml_api *api = &r->api;
	json_t *missing = json_array();
#define RECORD_MISSING_(fn, ret, params, required) \
	if (!api->fn)                              \
		replay_append(&r->oom, missing, json_string(#fn));
	NVML_FUNCTIONS(RECORD_MISSING_)
#undef RECORD_MISSING_
	replay_put(&r->oom, nvml, "missing_functions", missing);
	nvmlReturn_t rc = api->nvmlInit_v2();
	replay_put(&r->oom, nvml, "init", json_string(code_name(rc)));
	if (rc)
		return; /* every other call would answer UNINITIALIZED */
	if (api->nvmlSystemGetDriverVersion)
		replay_put(&r->oom, nvml, "driver_version",
		    rec_sys_text(api->nvmlSystemGetDriverVersion, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE));
	if (api->nvmlSystemGetNVMLVersion)
		replay_put(&r->oom, nvml, "nvml_version",
		    rec_sys_text(api->nvmlSystemGetNVMLVersion, NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE));
	if (api->nvmlSystemGetCudaDriverVersion_v2) {
		int v = 0;
		rc = api->nvmlSystemGetCudaDriverVersion_v2(&v);
		replay_put(&r->oom, nvml, "cuda_driver_version", rc ? err_obj(rc) : json_integer(v));
	}
	if (api->nvmlSystemGetConfComputeState) {
		nvmlConfComputeSystemState_t cc;
		memset(&cc, 0, sizeof(cc));
		rc = api->nvmlSystemGetConfComputeState(&cc);
		replay_put(&r->oom, nvml, "conf_compute",
			   rc ? err_obj(rc)
			      : json_pack("{s:I, s:I, s:I}", "environment", (json_int_t)cc.environment, "cc_feature",
					  (json_int_t)cc.ccFeature, "devtools_mode", (json_int_t)cc.devToolsMode));
	}
	rec_devices(r, nvml);
	if (api->nvmlShutdown)
		api->nvmlShutdown();
}

/* "nvml": the library or why it failed to load, then its answers. */
static json_t *rec_nvml(struct rec *r, const char *library)
{
	char why[1024] = "";
	const char *load_error = NULL;
	json_t *nvml = json_object();
	if (r->ops) {
		load_error = r->ops->nvml_load_error();
		library = replay_nvml_library();
		if (!load_error && replay_nvml_bind(&r->api, library, why, sizeof(why)))
			load_error = why;
	} else if (nvml_api_open(&r->api, library, NULL, why, sizeof(why))) {
		load_error = why;
	}
	if (load_error) {
		json_t *e = json_object();
		replay_put(&r->oom, e, "error", replay_text(load_error, strlen(load_error)));
		replay_put(&r->oom, nvml, "library", e);
		return nvml;
	}
	replay_put(&r->oom, nvml, "library", replay_text(library, strlen(library)));
	rec_nvml_answers(r, nvml);
	if (!r->ops)
		nvml_api_close(&r->api);
	return nvml;
}

static int write_file(json_t *root, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	int bad = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 || fputc('\n', f) == EOF;
	int saved = errno;
	if (fclose(f) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(saved ? saved : EIO));
		return -1;
	}
	return 0;
}

static int record(const char *path, const char *tool, char *err, size_t errlen)
{
	struct rec r;
	const char *library = DEFAULT_LIBRARY;
	memset(&r, 0, sizeof(r));
	if (!path || !*path) {
		snprintf(err, errlen, "no file to record to");
		return -1;
	}
	if (replay_active()) {
		r.ops = dmaconn_replay_ops();
		const char *why = r.ops->load_error();
		if (why) {
			snprintf(err, errlen, "%s", why);
			return -1;
		}
	} else {
		const char *env = secure_getenv("DMACONN_NVML_LIBRARY");
		if (env && *env && env[0] != '/') {
			snprintf(err, errlen, "DMACONN_NVML_LIBRARY must be an absolute path, not \"%s\"", env);
			return -1;
		}
		if (env && *env)
			library = env;
	}
	if (!tool || !*tool)
		tool = "dmaconn";
	json_t *root = json_object();
	replay_put(&r.oom, root, "dmaconn_topology", json_integer(1));
	replay_put(&r.oom, root, "description", json_string("recorded by dmaconn"));
	replay_put(&r.oom, root, "recorded", rec_recorded(tool));
	replay_put(&r.oom, root, "environment", rec_environment(&r));
	replay_put(&r.oom, root, "pci_gpus", rec_pci_gpus(&r));
	replay_put(&r.oom, root, "nvml", rec_nvml(&r, library));
	for (const struct replay_section *sec = replay_sections; sec->key; sec++)
		sec->record(root);
	int rc = -1;
	if (r.oom)
		snprintf(err, errlen, "out of memory while recording");
	else
		rc = write_file(root, path, err, errlen);
	json_decref(root);
	return rc;
}

void replay_put(bool *oom, json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v))
		*oom = true;
}

void replay_append(bool *oom, json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v))
		*oom = true;
}

int replay_active(void)
{
	char file[8];
	replay_file(file, sizeof(file));
	return file[0] != '\0';
}

int dmaconn_replay_record(const char *path, const char *tool, char *err, size_t errlen)
{
	char msg[1024] = "";
	int rc = record(path, tool, msg, sizeof(msg));
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return rc;
}
