/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVML's recorder (the "nvml" section's record_table): the function table
 * handed over is wrapped, and each answer, errors included, is kept in the
 * structures the reader reads a file into (replay_nvml.h), then written
 * through the reader's field tables (docs/replay-format.md).
 */
#include "replay_internal.h"
#include "replay_nvml.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HANDLES 8192 /* a power of two, above the devices a file may list */
#define F (&replay_nvml_fmt)
#define LOCK() pthread_mutex_lock(&replay_rec_lock)
#define UNLOCK() pthread_mutex_unlock(&replay_rec_lock)

/* A field's value as an unsigned number, whatever its type. */
static unsigned int field_uint(const nvmlFieldValue_t *v)
{
	const nvmlValue_t *x = &v->value;
	int t = v->valueType;
	double d = t == 0 ? x->dVal
		   : t == 2 ? (double)x->ulVal
		   : t == 3 ? (double)x->ullVal
		   : t == 4 ? (double)x->sllVal
		   : t == 5 ? (double)x->siVal
		   : t == 6 ? (double)x->usVal
			    : (double)x->uiVal;
	return d > 0 ? (d < (double)UINT_MAX ? (unsigned int)d : UINT_MAX) : 0;
}

/* ------------------------------------------------------- NVML's answers */

/*
 * An object answered: the reader's structure (replay_nvml.c reads a file into the
 * same) holds its answers, and kept which of its fields were answered, in
 * the order first answered (a recording's order of keys).
 */
struct kept {
	unsigned char order[32], n;
	uint32_t seen, ok; /* per field: answered; a success kept */
};

struct rdev {
	bool answered;		 /* its handle was asked for */
	struct nvmlDevice_st d;	 /* handle_rc: its handle's error */
	struct kept k;
	int fabric_lacks;	 /* of the fabric kept, the last keys its struct lacks */
	long long switch_links;	 /* NVSWITCH_CONNECTED_LINK_COUNT, -1 unknown */
	bool present[NVML_NVLINK_MAX_LINKS]; /* answered as a link the GPU has */
	struct rlink {
		struct link l;
		struct kept k;
	} *links; /* NVML_NVLINK_MAX_LINKS of them, once one is answered */
	struct rpeer {
		struct p2p p;
		struct kept k;
	} *peers; /* by peer index, npeers of them, once one is answered */
	unsigned int npeers, nmigs;
	struct rmig {
		struct mig m;
		struct kept k;
		nvmlDevice_t h;
	} *migs; /* the MIG instances found, at most 64 */
};

static struct {
	struct nvml_api live; /* the table wrapped */
	json_t *sec;	      /* "nvml": its library */
	struct replay_system sys;
	struct kept sysk;
	nvmlReturn_t init;
	bool init_seen;
	struct rdev *devs;
	unsigned int ndevs; /* highest index answered + 1 */
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

/* A MIG instance the detectors were handed, or NULL; lock held. */
static struct rmig *mig_of(nvmlDevice_t h)
{
	for (unsigned int i = 0; h && n.devs && i < n.ndevs; i++)
		for (unsigned int k = 0; k < n.devs[i].nmigs; k++)
			if (n.devs[i].migs[k].h == h)
				return &n.devs[i].migs[k];
	return NULL;
}

/* The index of the field of fields at offset at (every member kept has
 * one), or -1: none among the first 32, the most a struct kept tracks. */
static int key_of(const struct fmt_field *fields, size_t at)
{
	for (int key = 0; key < 32 && fields[key].key; key++)
		if (fields[key].off == at)
			return key;
	return -1;
}

/* The answer (rc; v, the value, on success) to the member at `at` of base,
 * kept as the reader reads its field: an error does not replace a success
 * kept before (the detector had its answer); a string is copied up to its
 * NUL. */
static void keep(struct kept *k, const struct fmt_field *fields, void *base, size_t at, nvmlReturn_t rc, const void *v)
{
	int key = key_of(fields, at);
	if (!k || key < 0)
		return;
	const struct fmt_field *f = &fields[key];
	uint32_t bit = 1u << key;
	if (rc && (k->ok & bit))
		return;
	if (!(k->seen & bit))
		k->order[k->n++] = (unsigned char)key;
	k->seen |= bit;
	k->ok |= rc ? 0 : bit;
	memcpy((char *)base + f->rc - 1, &rc, sizeof(rc));
	size_t len = rc ? 0 : f->kind == FMT_STR ? strnlen(v, f->size - 1u) : f->size;
	if (!rc)
		memcpy((char *)base + f->off, v, len);
	if (!rc && f->kind == FMT_STR)
		((char *)base + f->off)[len] = '\0';
}

/* The answer to field f kept in base; the fields kept, in the order
 * answered (NULL when out of memory). */
static json_t *kept_answer(const struct fmt_field *f, const void *base)
{
	int rc;
	memcpy(&rc, (const char *)base + f->rc - 1, sizeof(rc));
	return fmt_answer(F, f, rc, (const char *)base + f->off);
}

static json_t *kept_json(const struct kept *k, const struct fmt_field *fields, const void *base)
{
	json_t *o = json_object();
	for (int i = 0; o && i < k->n; i++)
		replay_put(&replay_rec_oom, o, fields[k->order[i]].key, kept_answer(&fields[k->order[i]], base));
	replay_rec_oom = replay_rec_oom || !o;
	return o;
}

/* An answer to member m of the system, of device h, of MIG instance h (if
 * known); keep_dev(): with the lock held. */
#define AT(type, m) offsetof(struct type, m)
#define AT_I(type, m, i) (AT(type, m) + (size_t)(i) * sizeof(((struct type *)0)->m[0]))
#define note_top(m, rc, v) (LOCK(), keep(&n.sysk, replay_sys_fields, &n.sys, AT(replay_system, m), rc, v), UNLOCK())
#define note_dev(h, m, rc, v) (LOCK(), keep_dev(dev_of(h), AT(nvmlDevice_st, m), rc, v), UNLOCK())
#define note_mig(h, m, rc, v) (LOCK(), keep_mig(mig_of(h), AT(mig, m), rc, v), UNLOCK())
#define keep_dev(x, at, rc, v) keep((x) ? &(x)->k : NULL, replay_dev_fields, (x) ? &(x)->d : NULL, at, rc, v)
#define keep_mig(x, at, rc, v) keep((x) ? &(x)->k : NULL, replay_mig_fields, (x) ? &(x)->m : NULL, at, rc, v)

/* A link's answer; `field` from nvmlDeviceGetFieldValues, which answers
 * NOT_SUPPORTED (or, past the links a driver knows, INVALID_ARGUMENT) for a
 * link the GPU lacks where the link calls answer INVALID_ARGUMENT: links
 * asked up to NVML_NVLINK_MAX_LINKS of a GPU with fewer are not written. */
static void note_link(nvmlDevice_t h, unsigned int ln, size_t at, nvmlReturn_t rc, const void *v, bool field)
{
	LOCK();
	struct rdev *d = dev_of(h);
	if (d && ln < NVML_NVLINK_MAX_LINKS && (d->links || (d->links = calloc(NVML_NVLINK_MAX_LINKS, sizeof(*d->links))))) {
		d->present[ln] |= rc != NVML_ERROR_INVALID_ARGUMENT && (!field || rc != NVML_ERROR_NOT_SUPPORTED);
		keep(&d->links[ln].k, replay_link_fields, &d->links[ln].l, at, rc, v);
	} else {
		replay_rec_oom = replay_rec_oom || (d && ln < NVML_NVLINK_MAX_LINKS);
	}
	UNLOCK();
}

static void note_pair(nvmlDevice_t h1, nvmlDevice_t h2, size_t at, nvmlReturn_t rc, const void *v)
{
	LOCK();
	struct rdev *d = dev_of(h1), *e = dev_of(h2);
	unsigned int j = e ? (unsigned int)(e - n.devs) : 0;
	if (d && e && j >= d->npeers) {
		unsigned int grow = j + 1 > 2 * d->npeers ? j + 1 : 2 * d->npeers;
		struct rpeer *more = realloc(d->peers, grow * sizeof(*more));
		if (more) {
			memset(more + d->npeers, 0, (grow - d->npeers) * sizeof(*more));
			d->peers = more;
			d->npeers = grow;
		}
	}
	if (d && e && j < d->npeers)
		keep(&d->peers[j].k, replay_p2p_fields, &d->peers[j].p, at, rc, v);
	replay_rec_oom = replay_rec_oom || (d && e && j >= d->npeers);
	UNLOCK();
}

static void note_init(nvmlReturn_t rc)
{
	LOCK();
	n.init = rc && n.init_seen && !n.init ? NVML_SUCCESS : rc;
	n.init_seen = true;
	UNLOCK();
}

static void note_handle(nvmlReturn_t rc, unsigned int i, nvmlDevice_t *h)
{
	/* Past the last device: what the replay answers past its list. */
	if (i >= REPLAY_MAX_DEVICES || rc == NVML_ERROR_INVALID_ARGUMENT || (!rc && !*h))
		return;
	LOCK();
	struct rdev *d = &n.devs[i];
	if (rc == NVML_SUCCESS) {
		size_t s = slot_of(*h);
		n.keys[s] = *h;
		n.index[s] = i;
	}
	if (!d->answered || (!rc && d->d.handle_rc)) {
		d->answered = true;
		d->d.handle_rc = rc;
		memset(&d->k, 0, sizeof(d->k));
		d->switch_links = -1;
	}
	n.ndevs = i >= n.ndevs ? i + 1 : n.ndevs;
	UNLOCK();
}

/* MIG: the instances found (an index NVML answers NOT_FOUND has none) and
 * their UUIDs and instance ids, as "mig_devices" of their GPU. */
static void note_mig_handle(nvmlReturn_t rc, nvmlDevice_t h, nvmlDevice_t *mig)
{
	if (rc || !*mig)
		return;
	LOCK();
	struct rdev *d = dev_of(h);
	unsigned int at = d && (d->migs || (d->migs = calloc(64, sizeof(*d->migs)))) ? d->nmigs : 64;
	for (unsigned int e = 0; at < 64 && e < d->nmigs; e++)
		at = d->migs[e].h == *mig ? 64 : at;
	if (at < 64)
		d->migs[d->nmigs++].h = *mig;
	replay_rec_oom = replay_rec_oom || (d && !d->migs);
	UNLOCK();
}

static void note_uuid(nvmlReturn_t rc, nvmlDevice_t h, const char *buf)
{
	LOCK();
	if (mig_of(h))
		keep_mig(mig_of(h), AT(mig, uuid), rc, buf);
	else
		keep_dev(dev_of(h), AT(nvmlDevice_st, uuid), rc, buf);
	UNLOCK();
}

/* The fabric as the struct of version v gave it (replay_nvml_fabric());
 * older structs lack the last keys (health_summary, then health_mask).  A
 * version the driver does not know, or a driver without v4, is no fact
 * about the GPU. */
static void note_fabric(nvmlReturn_t rc, nvmlDevice_t h, void *info, int v)
{
	struct replay_fabric f;
	memset(&f, 0, sizeof(f));
	if (v == 4 ? rc && rc != NVML_ERROR_NOT_SUPPORTED : v != 1 && rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
		return;
	if (!rc)
		replay_nvml_fabric(&f, info, v, false);
	LOCK();
	struct rdev *d = dev_of(h);
	if (d && !rc)
		d->fabric_lacks = v == 1 ? 2 : v == 2;
	keep_dev(d, AT(nvmlDevice_st, fabric), rc, &f);
	UNLOCK();
}

/* An affinity answer of the node scope, kept as its mask (written in the
 * kernel's list form). */
static void note_list(nvmlDevice_t h, size_t at, nvmlReturn_t rc, unsigned int size, const unsigned long *set)
{
	unsigned long mask[REPLAY_LIST_WORDS] = { 0 };
	if (!rc)
		replay_nvml_mask(mask, REPLAY_LIST_WORDS, set, size);
	LOCK();
	keep_dev(dev_of(h), at, rc, mask);
	UNLOCK();
}

/* A level the format cannot name replays as NVML's generic failure; the
 * path is the pair's, whichever GPU is asked first. */
static void note_ancestor(nvmlReturn_t rc, nvmlDevice_t h1, nvmlDevice_t h2, const nvmlGpuTopologyLevel_t *level)
{
	nvmlReturn_t kept = rc || replay_name_of(replay_ancestor_names, *level) ? rc : NVML_ERROR_UNKNOWN;
	note_pair(h1, h2, AT(p2p, ancestor), kept, level);
	note_pair(h2, h1, AT(p2p, ancestor), kept, level);
}

/* Per-link state, version and speed, and the count of links to NVSwitches
 * (which the replay derives from the links: see write_links). */
static void note_fields(nvmlReturn_t rc, nvmlDevice_t h, int count, const nvmlFieldValue_t *values)
{
	for (int i = 0; values && i < count; i++) {
		const nvmlFieldValue_t *v = &values[i];
		nvmlReturn_t erc = rc ? rc : v->nvmlReturn;
		unsigned int x = erc ? 0 : field_uint(v), id = v->fieldId;
		bool c2c = id >= NVML_FI_DEV_C2C_LINK_COUNT && id <= NVML_FI_DEV_C2C_LINK_GET_MAX_BW;
		size_t at = id == NVML_FI_DEV_NVLINK_GET_STATE	 ? AT(link, state)
			    : id == NVML_FI_DEV_NVLINK_GET_VERSION ? AT(link, version)
			    : id == NVML_FI_DEV_NVLINK_GET_SPEED	 ? AT(link, speed)
								 : SIZE_MAX; /* no link's */
		x = at == AT(link, state) ? x != 0 : x;
		if (at != SIZE_MAX) {
			note_link(h, v->scopeId, at, erc, &x, true);
		} else if (c2c) {
			LOCK();
			keep_dev(dev_of(h), AT_I(nvmlDevice_st, c2c, id - NVML_FI_DEV_C2C_LINK_COUNT), erc, &x);
			UNLOCK();
		} else if (id == NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT && !erc) {
			LOCK();
			if (dev_of(h))
				dev_of(h)->switch_links = x;
			UNLOCK();
		}
	}
}

/*
 * The wrapper of each function, from its row of nvml_functions.h: the live
 * call, then KEEP_OF_fn notes its answer (rc; aN the Nth argument).
 */
#define KEEP_OF_nvmlInit_v2 note_init(rc)
#define KEEP_OF_nvmlShutdown (void)0
#define KEEP_OF_nvmlSystemGetDriverVersion note_top(driver, rc, a0)
#define KEEP_OF_nvmlSystemGetNVMLVersion note_top(nvml_version, rc, a0)
#define KEEP_OF_nvmlSystemGetCudaDriverVersion_v2 note_top(cuda, rc, a0)
#define KEEP_OF_nvmlDeviceGetCount_v2 note_top(count, rc, a0)
#define KEEP_OF_nvmlSystemGetConfComputeState note_top(conf, rc, a0)
#define KEEP_OF_nvmlDeviceGetHandleByIndex_v2 note_handle(rc, a0, a1)
#define KEEP_OF_nvmlDeviceGetName note_dev(a0, name, rc, a1)
#define KEEP_OF_nvmlDeviceGetUUID note_uuid(rc, a0, a1)
#define KEEP_OF_nvmlDeviceGetPciInfo_v3 note_dev(a0, pci, rc, a1)
#define KEEP_OF_nvmlDeviceGetCudaComputeCapability note_dev(a0, cc, rc, rc ? NULL : ((int[2]){ *a1, *a2 }))
#define KEEP_OF_nvmlDeviceGetMigMode \
	note_dev(a0, mig, rc, rc ? NULL : ((unsigned int[2]){ *a1, *a2 }))
#define KEEP_OF_nvmlDeviceGetBAR1MemoryInfo note_dev(a0, bar1, rc, rc ? NULL : &a1->bar1Total)
#define KEEP_OF_nvmlDeviceGetNumaNodeId note_dev(a0, numa, rc, a1)
#define KEEP_OF_nvmlDeviceGetCpuAffinityWithinScope \
	a3 == NVML_AFFINITY_SCOPE_NODE ? note_list(a0, AT(nvmlDevice_st, cpus), rc, a1, a2) : (void)0
#define KEEP_OF_nvmlDeviceGetMemoryAffinity \
	a3 == NVML_AFFINITY_SCOPE_NODE ? note_list(a0, AT(nvmlDevice_st, mems), rc, a1, a2) : (void)0
#define KEEP_OF_nvmlDeviceGetVirtualizationMode note_dev(a0, virt, rc, a1)
#define KEEP_OF_nvmlDeviceGetGpuFabricInfoV note_fabric(rc, a0, a1, !rc && a1->version == nvmlGpuFabricInfo_v3 ? 3 : 2)
#define KEEP_OF_nvmlDeviceGetGpuFabricInfo note_fabric(rc, a0, a1, 1)
#define KEEP_OF_nvmlDeviceGetGpuFabricInfo_v4 note_fabric(rc, a0, a1, 4)
#define KEEP_OF_nvmlDeviceGetMaxMigDeviceCount (void)a0
#define KEEP_OF_nvmlDeviceGetMigDeviceHandleByIndex note_mig_handle(rc, a0, a2)
#define KEEP_OF_nvmlDeviceGetDeviceHandleFromMigDeviceHandle (void)a0
#define KEEP_OF_nvmlDeviceGetGpuInstanceId note_mig(a0, gi, rc, a1)
#define KEEP_OF_nvmlDeviceGetComputeInstanceId note_mig(a0, ci, rc, a1)
#define KEEP_OF_nvmlDeviceGetNvLinkState \
	note_link(a0, a1, AT(link, state), rc, &(nvmlEnableState_t){ !rc && *a2 != NVML_FEATURE_DISABLED }, false)
#define KEEP_OF_nvmlDeviceGetNvLinkVersion note_link(a0, a1, AT(link, version), rc, a2, false)
#define KEEP_OF_nvmlDeviceGetNvLinkRemoteDeviceType note_link(a0, a1, AT(link, type), rc, a2, false)
#define KEEP_OF_nvmlDeviceGetNvLinkRemotePciInfo_v2 note_link(a0, a1, AT(link, pci), rc, a2, false)
#define KEEP_OF_nvmlDeviceGetP2PStatus \
	(a2 >= 0 && a2 < REPLAY_P2P_CAPS ? note_pair(a0, a1, AT_I(p2p, status, a2), rc, a3) : (void)0)
#define KEEP_OF_nvmlDeviceGetTopologyCommonAncestor note_ancestor(rc, a0, a1, a2)
#define KEEP_OF_nvmlDeviceGetFieldValues note_fields(rc, a0, a1, a2)
#define RECORD_WRAP(fn, params, named, passed) RECORD_KEEP(fn, named, passed, KEEP_OF_##fn)
#define RECORD_KEEP(fn, named, passed, keep)      \
	static nvmlReturn_t r_##fn named          \
	{                                         \
		nvmlReturn_t rc = n.live.fn passed; \
		keep;                             \
		return rc;                        \
	}
#define RECORD_NONE(fn, params) RECORD_WRAP(fn, params, (void), ())
#define RECORD_TEXT(fn, params)                     \
	static const char *r_##fn DC_NAMED(params)  \
	{                                           \
		return n.live.fn DC_PASSED(params); \
	}
#define RECORD_ANY(fn, params) RECORD_WRAP(fn, params, DC_NAMED(params), DC_PASSED(params))
#define RECORD_SYS RECORD_ANY
#define RECORD_INDEX RECORD_ANY
#define RECORD_DEV RECORD_ANY
#define RECORD_DEV_MIG RECORD_ANY
#define RECORD_LINK RECORD_ANY
#define RECORD_FIELDS RECORD_ANY
#define RECORD_PEER RECORD_ANY
#define RECORD_MIG_GPU RECORD_ANY
#define RECORD_MIG RECORD_ANY
/* NVML_DEVICE_QUERIES: the answer under the device's field of the function's own. */
#define RECORD_QUERY(fn, params) \
	RECORD_KEEP(fn, DC_NAMED(params), DC_PASSED(params), note_dev(a0, q_##fn, rc, a1))
#define RECORD_(fn, ret, params, required, args) RECORD_##args(fn, params)
NVML_ALL_FUNCTIONS_ARGS(RECORD_)
#undef RECORD_

static void nvml_forget(void)
{
	for (unsigned int i = 0; n.devs && i < REPLAY_MAX_DEVICES; i++)
		free(n.devs[i].links), free(n.devs[i].peers), free(n.devs[i].migs);
	free(n.devs);
	json_decref(n.sec);
	memset(&n, 0, sizeof(n));
}

/* The table of a loaded NVML (or why none loaded) becomes the recorded one. */
void replay_nvml_record_table(void *table, const char *library, const char *load_error)
{
	struct nvml_api *api = table;
	LOCK();
	nvml_forget();
	n.sec = json_object();
	bool wrap = !replay_record_unwrapped(n.sec, api, library, load_error, replay_library_section("nvml"));
	if (wrap && !(n.devs = calloc(REPLAY_MAX_DEVICES, sizeof(*n.devs)))) {
		replay_library_record(n.sec, NULL, "out of memory", NULL);
	} else if (wrap) {
		json_t *missing = json_array();
		n.live = *api;
		NVML_FUNCTIONS(REPLAY_WRAP)
		/* The MIG queries are optional everywhere: none is "missing". */
		NVML_MIG_FUNCTIONS(REPLAY_WRAP_PRESENT)
		replay_library_record(n.sec, library ? library : replay_nvml_library(), NULL, missing);
	}
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

static bool link_up(json_t *l)
{
	return l && json_integer_value(json_object_get(l, "state")) == 1;
}

/*
 * "nvlink": the links up to the last one the GPU has (those past it replay
 * as absent), runs of equal links folded into "repeat"; none when every
 * answer was NOT_SUPPORTED.  The replay counts links to NVSwitches from the
 * links' remote types: where NVML's count covers every link that is up,
 * links whose type was not asked are switch links.
 */
static void write_links(struct rdev *d, json_t *obj)
{
	json_t *links[NVML_NVLINK_MAX_LINKS] = { NULL };
	int last = -1, up = 0, typed = 0;
	for (int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		if (d->links && d->links[l].k.n)
			links[l] = kept_json(&d->links[l].k, replay_link_fields, &d->links[l].l);
		last = d->present[l] ? l : last;
		up += link_up(links[l]);
		typed += link_up(links[l]) && json_object_get(links[l], "remote_type");
	}
	for (int l = 0; d->switch_links >= 0 && d->switch_links == up && typed < up && l <= last; l++)
		if (link_up(links[l]) && !json_object_get(links[l], "remote_type"))
			replay_put(&replay_rec_oom, links[l], "remote_type", json_string("SWITCH"));
	json_t *arr = json_array(), *unsup = fmt_error(F, NVML_ERROR_NOT_SUPPORTED), *prev = NULL;
	bool all_unsupported = true;
	long long run = 0;
	for (int l = 0; l <= last + 1; l++) {
		json_t *e = l <= last ? (links[l] ? link_entry(links[l]) : json_object()) : NULL;
		all_unsupported = all_unsupported && (!e || json_equal(e, unsup));
		if (prev && e && json_equal(prev, e)) {
			run++;
			json_decref(e);
			continue;
		}
		if (prev && run > 1) {
			json_t *r = json_pack("{s:I}", "repeat", run);
			replay_rec_oom = replay_rec_oom || !r || json_object_update(r, prev);
			json_decref(prev);
			prev = r;
		}
		if (prev)
			replay_append(&replay_rec_oom, arr, prev);
		prev = e;
		run = 1;
	}
	json_decref(unsup);
	for (int l = 0; l < NVML_NVLINK_MAX_LINKS; l++)
		json_decref(links[l]);
	if (last >= 0 && !all_unsupported)
		replay_put(&replay_rec_oom, obj, "nvlink", arr);
	else
		json_decref(arr);
}

/*
 * "p2p_row" (version 2): each peer's answers as an index into the one
 * nvml.p2p_answers list (answers, a string -> index object, and list, the
 * array), runs of equal ones folded: n*n pairs of a rack take a few bytes
 * per device instead of an object per pair.
 */
static void write_peers(struct rdev *d, json_t *obj, json_t *answers, json_t *list)
{
	size_t len = 0, cap = (size_t)n.ndevs * 24 + 1; /* "16777215*4096," at most per peer */
	char *row = d->peers ? calloc(cap, 1) : NULL;
	long long prev = -2, run = 0;
	for (unsigned int j = 0; row && j <= n.ndevs; j++) {
		long long at = -1;
		if (j < n.ndevs) {
			json_t *p = j < d->npeers && d->peers[j].k.n ? kept_json(&d->peers[j].k, replay_p2p_fields, &d->peers[j].p)
							     : NULL;
			char *key = p ? json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
			json_t *known = key ? json_object_get(answers, key) : NULL;
			replay_rec_oom = replay_rec_oom || (p && !key);
			at = known ? json_integer_value(known) : key ? (long long)json_array_size(list) : -1;
			if (key && !known) {
				replay_put(&replay_rec_oom, answers, key, json_integer(at));
				replay_append(&replay_rec_oom, list, json_incref(p));
			}
			free(key);
			json_decref(p);
			if (at == prev) {
				run++;
				continue;
			}
		}
		if (run > 0 && prev < 0)
			len += (size_t)snprintf(row + len, cap - len, "%s-", len ? "," : "");
		else if (run > 0)
			len += (size_t)snprintf(row + len, cap - len, "%s%lld", len ? "," : "", prev);
		if (run > 1)
			len += (size_t)snprintf(row + len, cap - len, "*%lld", run);
		prev = at;
		run = 1;
	}
	if (d->peers)
		replay_put(&replay_rec_oom, obj, "p2p_row", row ? json_string(row) : NULL);
	free(row);
}

/* A device as the detectors saw it: the fabric as the struct asked (v4's
 * cliques, the keys older structs lack), its links, peers, MIG instances. */
static json_t *write_device(struct rdev *d, json_t *answers, json_t *list)
{
	static const char *const last[] = { "health_summary", "health_mask" };
	if (!d->answered || d->d.handle_rc)
		return fmt_error(F, d->answered ? d->d.handle_rc : NVML_ERROR_UNKNOWN);
	json_t *o = kept_json(&d->k, replay_dev_fields, &d->d), *fabric = json_object_get(o, "fabric"), *migs;
	if (fabric && !json_object_get(fabric, "error") && !d->d.fabric.cliques.v4)
		json_object_del(fabric, "cliques");
	for (int k = 0; fabric && !json_object_get(fabric, "error") && k < d->fabric_lacks; k++)
		json_object_del(fabric, last[k]);
	for (const struct fmt_field *f = replay_dev_fields; o && f->key; f++)
		if ((f->flags & FMT_REQ) && !json_object_get(o, f->key))
			replay_put(&replay_rec_oom, o, f->key, fmt_error(F, NVML_ERROR_UNKNOWN));
	write_links(d, o);
	write_peers(d, o, answers, list);
	if (d->nmigs)
		replay_put(&replay_rec_oom, o, "mig_devices", migs = json_array());
	for (unsigned int k = 0; d->nmigs && k < d->nmigs; k++)
		replay_append(&replay_rec_oom, migs, kept_json(&d->migs[k].k, replay_mig_fields, &d->migs[k].m));
	return o;
}

/* "nvml", in the format's order of keys; lock held. */
static json_t *write_nvml(void)
{
	json_t *sec = n.sec ? json_deep_copy(n.sec) : NULL;
	if (!n.devs)
		return sec;
	if (n.init_seen)
		replay_put(&replay_rec_oom, sec, "init", json_string(F->name(n.init)));
	for (const struct fmt_field *f = replay_sys_fields; f->key; f++)
		if (n.sysk.seen & 1u << (f - replay_sys_fields))
			replay_put(&replay_rec_oom, sec, f->key, kept_answer(f, &n.sys));
	/* As many devices as NVML counted, each as the detectors saw it. */
	int key = key_of(replay_sys_fields, AT(replay_system, count));
	bool asked = key >= 0 && (n.sysk.seen & 1u << key);
	unsigned int count = asked && !n.sys.count_rc ? n.sys.count : 0;
	unsigned int total = n.ndevs > count ? n.ndevs : count;
	json_t *devs = json_array(), *answers = json_object(), *list = json_array();
	for (unsigned int i = 0; i < total && i < REPLAY_MAX_DEVICES; i++)
		replay_append(&replay_rec_oom, devs, write_device(&n.devs[i], answers, list));
	if (json_array_size(list))
		replay_put(&replay_rec_oom, sec, "p2p_answers", list);
	else
		json_decref(list);
	json_decref(answers);
	replay_put(&replay_rec_oom, sec, "devices", devs);
	return sec;
}

/* "nvml" into a recording. */
void replay_nvml_record(json_t *root)
{
	LOCK();
	json_t *nvml = write_nvml();
	UNLOCK();
	if (nvml)
		replay_put(&replay_rec_oom, root, "nvml", nvml);
}

void replay_nvml_record_begin(void)
{
	LOCK();
	nvml_forget();
	UNLOCK();
}

__attribute__((destructor)) static void nvml_record_release(void)
{
	replay_nvml_record_begin();
}
