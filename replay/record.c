/*
 * The recorder of libdmaconn_replay.  While libdmaconn records
 * (dmaconn_record), each backend hands its vendor library's function table
 * to record_table(), which wraps it: every call goes on to the library (or
 * to the replay, when a replay is recorded) and its answer, errors
 * included, is kept in the shape of a version-1 topology file
 * (docs/replay-format.md).  A recording so holds exactly the answers the
 * detectors used.  This file keeps NVML's answers and writes the file;
 * record_ze.c keeps Level Zero's, files.c the sysfs files the detectors
 * read (record_file), and the NVIDIA PCI functions counted without NVML
 * come through record_pci_gpus.
 */
#include "dmaconn_replay.h"
#include "replay_internal.h"
#include "replay_ze.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "nvml_load.h"
#include "pci.h"

#define DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define MAX_HANDLES 8192 /* a power of two, above the devices a file may list */

pthread_mutex_t replay_rec_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------- values */

#define code_name(rc) replay_nvml_fmt.name(rc)

static json_t *err_obj(nvmlReturn_t rc)
{
	return json_pack("{s:s}", "error", code_name(rc));
}

/* An NVML string buffer, which need not be terminated; at most size - 1
 * characters, so that the file replays into the same buffer. */
static json_t *buffer_text(const char *buf, size_t size)
{
	return replay_text(buf, strnlen(buf, size ? size - 1 : 0));
}


/* key = v when rc is SUCCESS, else the error. */
#define note(obj, key, rc, v) replay_note((obj), (key), (v), (rc) ? err_obj(rc) : NULL)


static json_t *pci_json(const nvmlPciInfo_t *p)
{
	return fmt_json(&replay_nvml_fmt, &replay_link_fields[REPLAY_L_PCI], p);
}

static json_t *fabric_json(nvmlGpuFabricState_t state, nvmlReturn_t status, const unsigned char *uuid,
			   unsigned int clique, const unsigned int *health, const unsigned char *summary)
{
	char u[DC_UUID_TEXT_SIZE];
	dc_uuid_format(uuid, u);
	json_t *o = json_pack("{s:i, s:s, s:s, s:I}", "state", (int)state, "status", code_name(status),
			      "cluster_uuid", u, "clique_id", (json_int_t)clique);
	if (o && ((health && json_object_set_new(o, "health_mask", json_integer(*health))) ||
		  (summary && json_object_set_new(o, "health_summary", json_integer(*summary))))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A field's value as an unsigned number, whatever its type. */
static unsigned int field_uint(const nvmlFieldValue_t *v)
{
	unsigned long long x;
	switch (v->valueType) {
	case 0: /* double */
		x = v->value.dVal > 0 ? (v->value.dVal < (double)UINT_MAX ? (unsigned long long)v->value.dVal : UINT_MAX)
				      : 0;
		break;
	case 2:
		x = v->value.ulVal;
		break;
	case 3:
		x = v->value.ullVal;
		break;
	case 4:
		x = v->value.sllVal > 0 ? (unsigned long long)v->value.sllVal : 0;
		break;
	case 5:
		x = v->value.siVal > 0 ? (unsigned long long)v->value.siVal : 0;
		break;
	case 6:
		x = v->value.usVal;
		break;
	default:
		x = v->value.uiVal;
	}
	return x > UINT_MAX ? UINT_MAX : (unsigned int)x;
}

/* ------------------------------------------------------- NVML's answers */


struct rdev {
	json_t *obj;				/* the device's answers, or its handle's error */
	json_t *links[NVML_NVLINK_MAX_LINKS];	/* per link, its answers */
	bool present[NVML_NVLINK_MAX_LINKS];	/* answered as a link the GPU has */
	long long switch_links;			/* NVSWITCH_CONNECTED_LINK_COUNT, -1 unknown */
	json_t *peers;				/* peer index -> its answers */
	json_t *migs;				/* its MIG instances' answers, by index */
	nvmlDevice_t mig_handles[64];		/* their handles */
};

static struct {
	struct nvml_api live; /* the table wrapped */
	json_t *sec;	      /* "nvml" */
	json_t *top;	      /* system answers, in the order asked */
	struct rdev *devs;
	unsigned int ndevs;  /* highest index answered + 1 */
	nvmlDevice_t keys[MAX_HANDLES];
	unsigned int index[MAX_HANDLES];
} n;

static size_t slot_of(nvmlDevice_t h)
{
	size_t s = ((uintptr_t)h >> 4) & (MAX_HANDLES - 1);
	while (n.keys[s] && n.keys[s] != h)
		s = (s + 1) & (MAX_HANDLES - 1);
	return s;
}

/* The device behind a handle NVML gave out, or NULL; lock held. */
static struct rdev *dev_of(nvmlDevice_t h)
{
	size_t s = h ? slot_of(h) : 0;
	return h && n.keys[s] ? &n.devs[n.index[s]] : NULL;
}

#define LOCK() pthread_mutex_lock(&replay_rec_lock)
#define UNLOCK() pthread_mutex_unlock(&replay_rec_lock)

static void note_dev(nvmlDevice_t h, const char *key, nvmlReturn_t rc, json_t *v)
{
	LOCK();
	struct rdev *d = dev_of(h);
	if (d)
		note(d->obj, key, rc, v);
	else
		json_decref(v);
	UNLOCK();
}

/* A link's answer, through the field the reader reads it with. */
static void note_link(nvmlDevice_t h, unsigned int ln, int key, nvmlReturn_t rc, const void *v, bool field)
{
	LOCK();
	struct rdev *d = dev_of(h);
	if (d && ln < NVML_NVLINK_MAX_LINKS) {
		if (!d->links[ln])
			d->links[ln] = json_object();
		d->present[ln] |= rc != (field ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT);
		fmt_note(&replay_nvml_fmt, d->links[ln], &replay_link_fields[key], rc, v);
	}
	UNLOCK();
}

static void note_pair(nvmlDevice_t h1, nvmlDevice_t h2, const char *key, nvmlReturn_t rc, json_t *v)
{
	LOCK();
	struct rdev *d = dev_of(h1), *e = dev_of(h2);
	if (d && e && (d->peers || (d->peers = json_object()))) {
		char peer[16];
		snprintf(peer, sizeof(peer), "%u", (unsigned int)(e - n.devs));
		json_t *p = json_object_get(d->peers, peer);
		if (!p)
			replay_put(&replay_rec_oom, d->peers, peer, p = json_object());
		note(p, key, rc, v);
	} else {
		json_decref(v);
	}
	UNLOCK();
}

static void note_top(const char *key, nvmlReturn_t rc, json_t *v)
{
	LOCK();
	note(n.top, key, rc, v);
	UNLOCK();
}

static nvmlReturn_t r_nvmlInit_v2(void)
{
	nvmlReturn_t rc = n.live.nvmlInit_v2();
	LOCK();
	replay_note(n.top, "init", json_string("SUCCESS"), rc ? json_string(code_name(rc)) : NULL);
	UNLOCK();
	return rc;
}

static nvmlReturn_t r_nvmlShutdown(void)
{
	return n.live.nvmlShutdown();
}

static const char *r_nvmlErrorString(nvmlReturn_t rc)
{
	return n.live.nvmlErrorString(rc);
}

static nvmlReturn_t r_nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
	nvmlReturn_t rc = n.live.nvmlSystemGetDriverVersion(buf, len);
	note_top("driver_version", rc, rc ? NULL : buffer_text(buf, len));
	return rc;
}

static nvmlReturn_t r_nvmlSystemGetNVMLVersion(char *buf, unsigned int len)
{
	nvmlReturn_t rc = n.live.nvmlSystemGetNVMLVersion(buf, len);
	note_top("nvml_version", rc, rc ? NULL : buffer_text(buf, len));
	return rc;
}

static nvmlReturn_t r_nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	nvmlReturn_t rc = n.live.nvmlSystemGetCudaDriverVersion_v2(v);
	note_top("cuda_driver_version", rc, rc ? NULL : json_integer(*v));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetCount_v2(unsigned int *count)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetCount_v2(count);
	note_top("device_count", rc, rc ? NULL : json_integer(*count));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetHandleByIndex_v2(i, h);
	/* Past the last device: what the replay answers past its list. */
	if (i >= REPLAY_MAX_DEVICES || rc == NVML_ERROR_INVALID_ARGUMENT || (!rc && !*h))
		return rc;
	LOCK();
	struct rdev *d = &n.devs[i];
	if (rc == NVML_SUCCESS) {
		size_t s = slot_of(*h);
		n.keys[s] = *h;
		n.index[s] = i;
	}
	if (!d->obj || (!rc && json_object_get(d->obj, "error"))) {
		json_decref(d->obj);
		d->obj = rc ? err_obj(rc) : json_object();
		d->switch_links = -1;
	}
	if (i >= n.ndevs)
		n.ndevs = i + 1;
	UNLOCK();
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetName(nvmlDevice_t h, char *buf, unsigned int len)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetName(h, buf, len);
	note_dev(h, "name", rc, rc ? NULL : buffer_text(buf, len));
	return rc;
}

/* The answers of a MIG instance the detectors were handed, or NULL; lock held. */
static json_t *mig_obj(nvmlDevice_t h)
{
	for (unsigned int i = 0; h && n.devs && i < n.ndevs; i++)
		for (size_t k = 0; n.devs[i].migs && k < json_array_size(n.devs[i].migs); k++)
			if (n.devs[i].mig_handles[k] == h)
				return json_array_get(n.devs[i].migs, k);
	return NULL;
}

/* A MIG instance's answer; false when h is no MIG handle. */
static bool note_mig(nvmlDevice_t h, const char *key, nvmlReturn_t rc, json_t *v)
{
	LOCK();
	json_t *m = mig_obj(h);
	if (m)
		note(m, key, rc, v);
	UNLOCK();
	return m != NULL;
}

static nvmlReturn_t r_nvmlDeviceGetUUID(nvmlDevice_t h, char *buf, unsigned int len)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetUUID(h, buf, len);
	json_t *v = rc ? NULL : buffer_text(buf, len);
	if (!note_mig(h, "uuid", rc, v))
		note_dev(h, "uuid", rc, v);
	return rc;
}

/* MIG: the instances found (an index NVML answers NOT_FOUND has none) and
 * their UUIDs and instance ids, as "mig_devices" of their GPU. */
static nvmlReturn_t r_nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned int *count)
{
	return n.live.nvmlDeviceGetMaxMigDeviceCount(h, count);
}

static nvmlReturn_t r_nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned int k, nvmlDevice_t *mig)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetMigDeviceHandleByIndex(h, k, mig);
	if (rc || !*mig)
		return rc;
	LOCK();
	struct rdev *d = dev_of(h);
	if (d && (d->migs || (d->migs = json_array()))) {
		size_t at = json_array_size(d->migs);
		for (size_t e = 0; e < at; e++)
			if (d->mig_handles[e] == *mig)
				at = SIZE_MAX;
		if (at < 64) {
			d->mig_handles[at] = *mig;
			replay_append(&replay_rec_oom, d->migs, json_object());
		}
	}
	UNLOCK();
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t *h)
{
	return n.live.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(mig, h);
}

static nvmlReturn_t r_nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned int *id)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetGpuInstanceId(mig, id);
	note_mig(mig, "gpu_instance_id", rc, rc ? NULL : json_integer(*id));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetComputeInstanceId(nvmlDevice_t mig, unsigned int *id)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetComputeInstanceId(mig, id);
	note_mig(mig, "compute_instance_id", rc, rc ? NULL : json_integer(*id));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t *pci)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetPciInfo_v3(h, pci);
	note_dev(h, "pci", rc, rc ? NULL : pci_json(pci));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetCudaComputeCapability(h, major, minor);
	note_dev(h, "cuda_compute_capability", rc, rc ? NULL : json_pack("[ii]", *major, *minor));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int *current, unsigned int *pending)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetMigMode(h, current, pending);
	note_dev(h, "mig_mode", rc, rc ? NULL : json_pack("[II]", (json_int_t)*current, (json_int_t)*pending));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t h, nvmlGpuFabricInfo_v3_t *v)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetGpuFabricInfoV(h, v);
	json_t *o = NULL;
	if (!rc && v->version == nvmlGpuFabricInfo_v3) {
		o = fabric_json(v->state, v->status, v->clusterUuid, v->cliqueId, &v->healthMask, &v->healthSummary);
	} else if (!rc) {
		const nvmlGpuFabricInfo_v2_t *v2 = (const nvmlGpuFabricInfo_v2_t *)(const void *)v;
		o = fabric_json(v2->state, v2->status, v2->clusterUuid, v2->cliqueId, &v2->healthMask, NULL);
	}
	/* A version the driver does not know is no fact about the GPU. */
	if (rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
		note_dev(h, "fabric", rc, o);
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetGpuFabricInfo(nvmlDevice_t h, nvmlGpuFabricInfo_t *f)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetGpuFabricInfo(h, f);
	note_dev(h, "fabric", rc, rc ? NULL : fabric_json(f->state, f->status, f->clusterUuid, f->cliqueId, NULL, NULL));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t h, nvmlBAR1Memory_t *m)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetBAR1MemoryInfo(h, m);
	note_dev(h, "bar1_total", rc, rc ? NULL : json_integer((json_int_t)m->bar1Total));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetVirtualizationMode(nvmlDevice_t h, nvmlGpuVirtualizationMode_t *mode)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetVirtualizationMode(h, mode);
	note_dev(h, "virtualization_mode", rc, rc ? NULL : json_integer(*mode));
	return rc;
}

static nvmlReturn_t r_nvmlSystemGetConfComputeState(nvmlConfComputeSystemState_t *cc)
{
	nvmlReturn_t rc = n.live.nvmlSystemGetConfComputeState(cc);
	note_top("conf_compute", rc,
		 rc ? NULL
		    : json_pack("{s:I, s:I, s:I}", "environment", (json_int_t)cc->environment, "cc_feature",
				(json_int_t)cc->ccFeature, "devtools_mode", (json_int_t)cc->devToolsMode));
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetNvLinkState(nvmlDevice_t h, unsigned int ln, nvmlEnableState_t *s)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetNvLinkState(h, ln, s);
	nvmlEnableState_t on = rc ? NVML_FEATURE_DISABLED : *s != NVML_FEATURE_DISABLED;
	note_link(h, ln, REPLAY_L_STATE, rc, &on, false);
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetNvLinkVersion(nvmlDevice_t h, unsigned int ln, unsigned int *v)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetNvLinkVersion(h, ln, v);
	note_link(h, ln, REPLAY_L_VERSION, rc, v, false);
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t h, unsigned int ln,
							  nvmlIntNvLinkDeviceType_t *t)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetNvLinkRemoteDeviceType(h, ln, t);
	note_link(h, ln, REPLAY_L_TYPE, rc, t, false);
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t h, unsigned int ln, nvmlPciInfo_t *pci)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetNvLinkRemotePciInfo_v2(h, ln, pci);
	note_link(h, ln, REPLAY_L_PCI, rc, pci, false);
	return rc;
}

/* Per-link state, version and speed, and the count of links to NVSwitches
 * (which the replay derives from the links: see write_links). */
static nvmlReturn_t r_nvmlDeviceGetFieldValues(nvmlDevice_t h, int count, nvmlFieldValue_t *values)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetFieldValues(h, count, values);
	for (int i = 0; values && i < count; i++) {
		const nvmlFieldValue_t *v = &values[i];
		nvmlReturn_t erc = rc ? rc : v->nvmlReturn;
		unsigned int x = erc ? 0 : field_uint(v);
		int key = v->fieldId == NVML_FI_DEV_NVLINK_GET_STATE     ? REPLAY_L_STATE
			  : v->fieldId == NVML_FI_DEV_NVLINK_GET_VERSION ? REPLAY_L_VERSION
			  : v->fieldId == NVML_FI_DEV_NVLINK_GET_SPEED   ? REPLAY_L_SPEED
									 : -1;
		if (key >= 0) {
			x = key == REPLAY_L_STATE ? x != 0 : x;
			note_link(h, v->scopeId, key, erc, &x, true);
		} else if (v->fieldId == NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT && !erc) {
			LOCK();
			struct rdev *d = dev_of(h);
			if (d)
				d->switch_links = x;
			UNLOCK();
		}
	}
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetP2PStatus(nvmlDevice_t h1, nvmlDevice_t h2, nvmlGpuP2PCapsIndex_t c,
					     nvmlGpuP2PStatus_t *s)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetP2PStatus(h1, h2, c, s);
	if (c >= 0 && c < REPLAY_P2P_CAPS) {
		const char *name = rc ? NULL : replay_name_of(replay_p2p_names, *s);
		note_pair(h1, h2, replay_p2p_caps_keys[c], rc, rc ? NULL : json_string(name ? name : "U"));
	}
	return rc;
}

static nvmlReturn_t r_nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t h1, nvmlDevice_t h2,
							  nvmlGpuTopologyLevel_t *level)
{
	nvmlReturn_t rc = n.live.nvmlDeviceGetTopologyCommonAncestor(h1, h2, level);
	const char *name = rc ? NULL : replay_name_of(replay_ancestor_names, *level);
	/* A level the format cannot name replays as NVML's generic failure; the
	 * path is the pair's, whichever GPU is asked first. */
	for (int k = 0; k < 2; k++)
		note_pair(k ? h2 : h1, k ? h1 : h2, "common_ancestor", rc || name ? rc : NVML_ERROR_UNKNOWN,
			  name ? json_string(name) : NULL);
	return rc;
}

static void nvml_forget(void)
{
	for (unsigned int i = 0; n.devs && i < REPLAY_MAX_DEVICES; i++) {
		json_decref(n.devs[i].obj);
		json_decref(n.devs[i].peers);
		json_decref(n.devs[i].migs);
		for (int l = 0; l < NVML_NVLINK_MAX_LINKS; l++)
			json_decref(n.devs[i].links[l]);
	}
	free(n.devs);
	json_decref(n.sec);
	json_decref(n.top);
	memset(&n, 0, sizeof(n));
}

/* The table of a loaded NVML (or why none loaded) becomes the recorded one. */
static void record_nvml(struct nvml_api *api, const char *library, const char *load_error)
{
	char why[1024];
	LOCK();
	nvml_forget();
	n.sec = json_object();
	n.top = json_object();
	if (!api && !library && replay_active() && !dmaconn_replay_ops()->nvml_load_error()) {
		/* The replayed library lacked a required function: so it is recorded. */
		library = replay_nvml_library();
		replay_put(&replay_rec_oom, n.sec, "library", replay_text(library, strlen(library)));
		replay_put(&replay_rec_oom, n.sec, "missing_functions", replay_nvml_missing());
		UNLOCK();
		return;
	}
	if (!api || !(n.devs = calloc(REPLAY_MAX_DEVICES, sizeof(*n.devs)))) {
		snprintf(why, sizeof(why), "%s", api ? "out of memory" : load_error ? load_error : "not loaded");
		json_t *e = json_object();
		replay_put(&replay_rec_oom, e, "error", replay_text(why, strlen(why)));
		replay_put(&replay_rec_oom, n.sec, "library", e);
		UNLOCK();
		return;
	}
	library = library ? library : replay_nvml_library();
	replay_put(&replay_rec_oom, n.sec, "library", replay_text(library, strlen(library)));
	json_t *missing = json_array();
	n.live = *api;
	NVML_FUNCTIONS(REPLAY_WRAP)
	/* The MIG queries are optional everywhere: none is "missing". */
	NVML_MIG_FUNCTIONS(REPLAY_WRAP_PRESENT)
	replay_put(&replay_rec_oom, n.sec, "missing_functions", missing);
	UNLOCK();
}

/* -------------------------------------------------------- NVML, written */

/* A link whose every answer is the same error is written as that error. */
static json_t *link_entry(json_t *l)
{
	const char *key, *same = NULL;
	json_t *v;
	bool one = json_object_size(l) > 0;
	json_object_foreach(l, key, v) {
		const char *e = json_string_value(json_object_get(v, "error"));
		one = one && e && (!same || !strcmp(same, e));
		same = e;
	}
	return one ? json_pack("{s:s}", "error", same) : json_incref(l);
}

/*
 * "nvlink": the links up to the last one the GPU has (those past it replay
 * as absent), runs of equal links folded into "repeat"; none when every
 * answer was NOT_SUPPORTED.  The replay counts links to NVSwitches from the
 * links' remote types: where NVML's count covers every link that is up,
 * links whose type was not asked are switch links.
 */
static void write_links(struct rdev *d)
{
	int last = -1, up = 0, typed = 0;
	for (int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		json_t *lk = d->links[l];
		if (d->present[l])
			last = l;
		if (lk && json_integer_value(json_object_get(lk, "state")) == 1) {
			up++;
			typed += json_object_get(lk, "remote_type") != NULL;
		}
	}
	if (d->switch_links >= 0 && d->switch_links == up && typed < up)
		for (int l = 0; l <= last; l++)
			if (d->links[l] && json_integer_value(json_object_get(d->links[l], "state")) == 1 &&
			    !json_object_get(d->links[l], "remote_type"))
				replay_put(&replay_rec_oom, d->links[l], "remote_type", json_string("SWITCH"));
	json_t *arr = json_array(), *unsup = json_pack("{s:s}", "error", "NOT_SUPPORTED");
	bool all_unsupported = true;
	json_t *prev = NULL;
	long long run = 0;
	for (int l = 0; l <= last + 1; l++) {
		json_t *e = l <= last ? (d->links[l] ? link_entry(d->links[l]) : json_object()) : NULL;
		if (e)
			all_unsupported = all_unsupported && json_equal(e, unsup);
		if (prev && e && json_equal(prev, e)) {
			run++;
			json_decref(e);
			continue;
		}
		if (prev && run > 1) {
			json_t *r = json_pack("{s:I}", "repeat", run);
			if (!r || json_object_update(r, prev))
				replay_rec_oom = true;
			json_decref(prev);
			prev = r;
		}
		if (prev)
			replay_append(&replay_rec_oom, arr, prev);
		prev = e;
		run = 1;
	}
	json_decref(unsup);
	if (last >= 0 && !all_unsupported)
		replay_put(&replay_rec_oom, d->obj, "nvlink", arr);
	else
		json_decref(arr);
}

/*
 * "p2p_row" (version 2): each peer's answers as an index into the one
 * nvml.p2p_answers list (answers, a string -> index object, and list, the
 * array), runs of equal ones folded: n*n pairs of a rack take a few bytes
 * per device instead of an object per pair.
 */
static void write_peers(struct rdev *d, json_t *answers, json_t *list)
{
	if (!d->peers)
		return;
	size_t len = 0, cap = 64;
	char *row = malloc(cap);
	long long prev = -2, run = 0;
	for (unsigned int j = 0; row && j <= n.ndevs; j++) {
		long long at = -1;
		if (j < n.ndevs) {
			char peer[16];
			snprintf(peer, sizeof(peer), "%u", j);
			json_t *p = json_object_get(d->peers, peer);
			char *key = p ? json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
			json_t *known = key ? json_object_get(answers, key) : NULL;
			if (p && !key)
				replay_rec_oom = true;
			if (key && !known) {
				at = (long long)json_array_size(list);
				replay_put(&replay_rec_oom, answers, key, json_integer(at));
				replay_append(&replay_rec_oom, list, json_incref(p));
			} else if (known) {
				at = json_integer_value(known);
			}
			free(key);
			if (at == prev) {
				run++;
				continue;
			}
		}
		if (run > 0) {
			char item[48];
			int w = prev < 0 ? snprintf(item, sizeof(item), "%s-", len ? "," : "")
					 : snprintf(item, sizeof(item), "%s%lld", len ? "," : "", prev);
			if (run > 1)
				w += snprintf(item + w, sizeof(item) - (size_t)w, "*%lld", run);
			if (len + (size_t)w + 1 > cap) {
				char *grown = realloc(row, cap = 2 * cap + (size_t)w);
				if (!grown) {
					free(row);
					row = NULL;
					break;
				}
				row = grown;
			}
			memcpy(row + len, item, (size_t)w + 1);
			len += (size_t)w;
		}
		prev = at;
		run = 1;
	}
	if (!row) {
		replay_rec_oom = true;
		return;
	}
	replay_put(&replay_rec_oom, d->obj, "p2p_row", json_string(row));
	free(row);
}

static void write_migs(struct rdev *d)
{
	if (d->migs && json_array_size(d->migs))
		replay_put(&replay_rec_oom, d->obj, "mig_devices", json_incref(d->migs));
}

/* "nvml", in the format's order of keys; lock held. */
static json_t *write_nvml(void)
{
	static const char *const order[] = { "init", "driver_version", "nvml_version", "cuda_driver_version",
					     "conf_compute", "device_count" };
	if (!n.sec)
		return NULL;
	json_t *sec = json_deep_copy(n.sec);
	if (!n.devs)
		return sec;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		if (json_object_get(n.top, order[k]))
			replay_put(&replay_rec_oom, sec, order[k], json_incref(json_object_get(n.top, order[k])));
	/* As many devices as NVML counted, each as the detectors saw it. */
	json_int_t count = json_integer_value(json_object_get(n.top, "device_count"));
	unsigned int total = n.ndevs > count ? n.ndevs : (unsigned int)count;
	json_t *devs = json_array(), *answers = json_object(), *list = json_array();
	for (unsigned int i = 0; i < total && i < REPLAY_MAX_DEVICES; i++) {
		struct rdev *d = &n.devs[i];
		if (!d->obj) {
			replay_append(&replay_rec_oom, devs, err_obj(NVML_ERROR_UNKNOWN));
			continue;
		}
		if (!json_object_get(d->obj, "error")) {
			if (!json_object_get(d->obj, "uuid"))
				replay_put(&replay_rec_oom, d->obj, "uuid", err_obj(NVML_ERROR_UNKNOWN));
			if (!json_object_get(d->obj, "pci"))
				replay_put(&replay_rec_oom, d->obj, "pci", err_obj(NVML_ERROR_UNKNOWN));
			write_links(d);
			write_peers(d, answers, list);
			write_migs(d);
		}
		replay_append(&replay_rec_oom, devs, json_incref(d->obj));
	}
	if (json_array_size(list))
		replay_put(&replay_rec_oom, sec, "p2p_answers", list);
	else
		json_decref(list);
	json_decref(answers);
	replay_put(&replay_rec_oom, sec, "devices", devs);
	return sec;
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
	bool oom = false;
	replay_put(&oom, o, "tool", replay_text(tool, strlen(tool)));
	replay_put(&oom, o, "host", replay_text(host, strlen(host)));
	replay_put(&oom, o, "date", json_string(date));
	replay_put(&oom, o, "kernel", uname(&u) == 0 ? replay_text(u.release, strlen(u.release)) : json_null());
	if (oom) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The variables that decide device order, as the detectors read them. */
static json_t *rec_environment(bool *oom)
{
	const struct dmaconn_replay_ops *ops = replay_active() ? dmaconn_replay_ops() : NULL;
	json_t *env = json_object();
#define RECORD_ENV_(name)                                                                    \
	{                                                                                    \
		const char *v = NULL;                                                        \
		if (!ops || !ops->getenv(#name, &v))                                         \
			v = secure_getenv(#name);                                            \
		replay_put(oom, env, #name, v ? replay_text(v, strlen(v)) : json_null());    \
	}
	DMACONN_ORDERING_ENV(RECORD_ENV_)
#undef RECORD_ENV_
	return env;
}

/* The NVIDIA PCI functions the count without NVML found, while recording. */
static json_t *pci_kept;

void replay_record_pci_gpus(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int count)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < count && i < REPLAY_MAX_DEVICES; i++)
		replay_append(&replay_rec_oom, arr, json_string(bus_ids[i]));
	LOCK();
	json_decref(pci_kept);
	pci_kept = arr;
	UNLOCK();
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

void replay_record_begin(void)
{
	LOCK();
	nvml_forget();
	json_decref(pci_kept);
	pci_kept = NULL;
	replay_rec_oom = false;
	UNLOCK();
	replay_ze_record_begin();
	replay_files_forget();
}

void replay_record_table(const char *vendor, void *table, const char *library, const char *load_error)
{
	if (vendor && !strcmp(vendor, "nvml"))
		record_nvml(table, library, load_error);
	else if (vendor && !strcmp(vendor, "level_zero"))
		replay_ze_record_table(table, library, load_error);
}

int replay_record_write(const char *path, const char *tool, char *err, size_t errlen)
{
	if (!path || !*path) {
		snprintf(err, errlen, "no file to record to");
		return -1;
	}
	if (replay_active() && dmaconn_replay_ops()->load_error()) {
		snprintf(err, errlen, "%s", dmaconn_replay_ops()->load_error());
		return -1;
	}
	bool oom = false;
	json_t *root = json_object();
	replay_put(&oom, root, "dmaconn_topology", json_integer(2));
	replay_put(&oom, root, "description", json_string("recorded by dmaconn"));
	replay_put(&oom, root, "recorded", rec_recorded(tool && *tool ? tool : "dmaconn"));
	replay_put(&oom, root, "environment", rec_environment(&oom));
	LOCK();
	replay_put(&oom, root, "pci_gpus", pci_kept ? json_incref(pci_kept) : json_array());
	json_t *nvml = write_nvml();
	oom = oom || replay_rec_oom;
	UNLOCK();
	if (nvml)
		replay_put(&oom, root, "nvml", nvml);
	for (const struct replay_section *sec = replay_sections; sec->key; sec++)
		sec->record(root);
	int rc = -1;
	if (oom || replay_rec_oom)
		snprintf(err, errlen, "out of memory while recording");
	else
		rc = write_file(root, path, err, errlen);
	json_decref(root);
	return rc;
}

__attribute__((destructor)) static void record_release(void)
{
	LOCK();
	nvml_forget();
	json_decref(pci_kept);
	pci_kept = NULL;
	UNLOCK();
}

int replay_active(void)
{
	char file[8];
	replay_file(file, sizeof(file));
	return file[0] != '\0';
}
