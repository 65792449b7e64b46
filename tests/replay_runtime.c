/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Level Zero half of the test stand-in (with replay_faults.c): it wraps
 * the Level Zero table of the real replay component with
 *
 *  - a model of how Intel's runtime shows a node that a hand-made file
 *    describes physically (no "exposed": true): ZE_AFFINITY_MASK and
 *    ZE_FLAT_DEVICE_HIERARCHY (pinned by the file unless
 *    DMACONN_REPLAY_LIVE_ENV is set), with the driver's
 *    "default_hierarchy", decide which cards and tiles are root devices,
 *    sub-devices and fabric vertices.  It is written from the rules listed
 *    in src/backends/level_zero/order_ze.c, independently of that code, so that the xpu tests
 *    check dmaconn's reading of the mask against a second one;
 *  - the file's injected failures, "level_zero.faults": a call fails with
 *    "error", narrowed by "driver", "device", "peer" (device ids "C" or
 *    "C.T" of the file) and "edge" (the driver's edge index), after "skip"
 *    matching calls, "times" times.
 *
 * The real component answers everything else from the file, with the
 * devices as the file lists them.
 */
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_abi.h"
#include "ze_load.h"

#define MAXD 4096 /* shown devices of all drivers */
#define MAXT 32

const char *stand_in_file(void);
int stand_in_ze_table(const struct dmaconn_replay_ops *real_ops, struct ze_api *api, char *err, size_t errlen);

enum fn {
#define FN_ENUM_(name, ret, params, required) F_##name,
	ZE_FUNCTIONS(FN_ENUM_)
#undef FN_ENUM_
	F_COUNT
};
static const char *const fn_names[F_COUNT] = {
#define FN_NAME_(name, ret, params, required) [F_##name] = #name,
	ZE_FUNCTIONS(FN_NAME_)
#undef FN_NAME_
};

static struct ze_api real;
static const struct dmaconn_replay_ops *ops;

/* ------------------------------------------------------------ the file */

struct fault {
	int fn;
	long long driver, edge; /* -1: any */
	char device[24], peer[24];
	ze_result_t error;
	long long skip, times, seen; /* times -1: always */
};

static struct {
	bool read, exposed;
	char hier[64][16]; /* per driver: "default_hierarchy", "" when none */
	json_t *edges[64]; /* per driver: the file's "edges" */
	int nfaults;
	struct fault *faults;
	json_t *root;
} f;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void read_file(void)
{
	if (f.read)
		return;
	f.read = true;
	const char *file = stand_in_file();
	f.root = file && *file ? json_load_file(file, 0, NULL) : NULL;
	json_t *ze = json_object_get(f.root, "level_zero");
	f.exposed = json_is_true(json_object_get(ze, "exposed"));
	json_t *drivers = json_object_get(ze, "drivers");
	for (size_t d = 0; d < json_array_size(drivers) && d < 64; d++) {
		const char *h = json_string_value(json_object_get(json_array_get(drivers, d), "default_hierarchy"));
		snprintf(f.hier[d], sizeof(f.hier[d]), "%s", h ? h : "");
		f.edges[d] = json_object_get(json_array_get(drivers, d), "edges");
	}
	json_t *list = json_object_get(ze, "faults");
	size_t n = json_array_size(list);
	f.faults = n ? calloc(n, sizeof(*f.faults)) : NULL;
	for (size_t i = 0; f.faults && i < n; i++) {
		json_t *o = json_array_get(list, i);
		struct fault *x = &f.faults[f.nfaults];
		const char *fn = json_string_value(json_object_get(o, "function"));
		const char *err = json_string_value(json_object_get(o, "error"));
		for (x->fn = 0; fn && x->fn < F_COUNT && strcmp(fn_names[x->fn], fn); x->fn++)
			;
		if (!fn || x->fn == F_COUNT || !err || ze_result_parse(err, &x->error))
			continue; /* the real component has no place for faults: not checked there */
		json_t *v;
		x->driver = (v = json_object_get(o, "driver")) ? json_integer_value(v) : -1;
		x->edge = (v = json_object_get(o, "edge")) ? json_integer_value(v) : -1;
		const char *dv = json_string_value(json_object_get(o, "device"));
		const char *pv = json_string_value(json_object_get(o, "peer"));
		snprintf(x->device, sizeof(x->device), "%s", dv ? dv : "");
		snprintf(x->peer, sizeof(x->peer), "%s", pv ? pv : "");
		x->skip = json_integer_value(json_object_get(o, "skip"));
		x->times = (v = json_object_get(o, "times")) ? json_integer_value(v) : -1;
		f.nfaults++;
	}
}

/* The error of the first active fault matching the call, counting it against each. */
static ze_result_t fault(int fn, long long driver, const char *device, const char *peer, long long edge)
{
	ze_result_t rc = ZE_RESULT_SUCCESS;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < f.nfaults; i++) {
		struct fault *x = &f.faults[i];
		if (x->fn != fn || (x->driver >= 0 && x->driver != driver) || (x->edge >= 0 && x->edge != edge) ||
		    (x->device[0] && (!device || strcmp(x->device, device))) ||
		    (x->peer[0] && (!peer || strcmp(x->peer, peer))))
			continue;
		x->seen++;
		if (!rc && x->seen > x->skip && (x->times < 0 || x->seen - x->skip <= x->times))
			rc = x->error;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* ------------------------------------------------------- what is shown */

enum { COMPOSITE, FLAT, COMBINED };

struct dev {
	void *h;      /* the real component's handle of the card or tile */
	int driver;
	char id[24];  /* "C" or "C.T" */
	bool root;    /* a root device (zeDeviceGet of COMPOSITE) */
	bool tile_root; /* a tile shown as a root device */
	bool is_card;
	int card;     /* index of its card's entry */
	int nsubs, subs[MAXT]; /* sub-devices shown, entries */
	void *vertex; /* its fabric vertex, or NULL */
};

static struct {
	bool built;
	ze_result_t rc;
	int ndrv;
	ze_driver_handle_t drv[64];
	int drv_index[64]; /* the file's driver index */
	int hier[64];
	int ndevs;
	struct dev devs[MAXD];
	int nlist[64], list[64][MAXD / 8]; /* zeDeviceGet's answer per shown driver: entries */
} s;

static const char *env(const char *name)
{
	const char *live = secure_getenv("DMACONN_REPLAY_LIVE_ENV"), *v;
	if (!(live && *live && strcmp(live, "0")) && ops->getenv(name, &v))
		return v;
	return secure_getenv(name);
}

static int hierarchy(const char *v, int dflt)
{
	return !v ? dflt : !strcmp(v, "COMPOSITE") ? COMPOSITE : !strcmp(v, "FLAT") ? FLAT
			   : !strcmp(v, "COMBINED")	 ? COMBINED
						 : dflt;
}

/* A number as std::stoul(s, nullptr, 0) reads it (blanks, then an optional
 * sign, 0x and 0 prefixes, trailing characters ignored), truncated to 32
 * bits; -1 without one. */
static long long number(const char *p, size_t len)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 63 ? len : 63), p);
	const char *q = buf;
	while (*q == ' ' || (*q >= '\t' && *q <= '\r'))
		q++;
	if (*q == '+' || *q == '-')
		q++;
	if (*q < '0' || *q > '9')
		return -1;
	return (long long)(uint32_t)strtoull(buf, NULL, 0);
}

/* The tiles the mask enables on each card (tiles[c]: its count, 1 for none). */
static void apply_mask(const char *mask, int h, int ncards, const int *tiles, unsigned int *on)
{
	for (int c = 0; c < ncards; c++)
		on[c] = !mask || !*mask || !strcmp(mask, "default") ? (tiles[c] >= 32 ? ~0u : (1u << tiles[c]) - 1) : 0;
	if (!mask || !*mask || !strcmp(mask, "default"))
		return;
	for (const char *e = mask; *e || e == mask;) {
		const char *comma = strchr(e, ',');
		size_t elen = comma ? (size_t)(comma - e) : strlen(e);
		/* Its dot-separated parts, an empty last one dropped. */
		const char *part[4];
		size_t plen[4];
		int parts = 0;
		for (size_t pos = 0; pos <= elen && parts < 4;) {
			const char *dot = memchr(e + pos, '.', elen - pos);
			size_t end = dot ? (size_t)(dot - e) : elen;
			if (!dot && end == pos)
				break;
			part[parts] = e + pos;
			plen[parts++] = end - pos;
			pos = end + 1;
			if (!dot)
				break;
		}
		long long x = parts ? number(part[0], plen[0]) : -1;
		if (x >= 0 && h != COMPOSITE && parts == 1) {
			long long k = x;
			for (int c = 0; c < ncards; c++) {
				if (k < tiles[c]) {
					on[c] |= 1u << k;
					break;
				}
				k -= tiles[c];
			}
		} else if (x >= 0 && h == COMPOSITE && x < ncards && parts == 1) {
			on[x] |= tiles[x] >= 32 ? ~0u : (1u << tiles[x]) - 1;
		} else if (x >= 0 && h == COMPOSITE && x < ncards && parts == 2) {
			long long t = number(part[1], plen[1]);
			if (t >= 0 && t < tiles[x])
				on[x] |= 1u << t;
		}
		if (!comma)
			break;
		e = comma + 1;
	}
}

static int add(void *h, int driver, const char *id, bool root, int card)
{
	if (s.ndevs == MAXD)
		return -1;
	struct dev *d = &s.devs[s.ndevs];
	memset(d, 0, sizeof(*d));
	d->h = h;
	d->driver = driver;
	snprintf(d->id, sizeof(d->id), "%s", id);
	d->root = d->is_card = root;
	d->card = card < 0 ? s.ndevs : card;
	return s.ndevs++;
}

static struct dev *dev_of(const void *h)
{
	for (int i = 0; h && i < s.ndevs; i++)
		if (s.devs[i].h == h)
			return &s.devs[i];
	return NULL;
}

/* Every physical device's vertex, from the real component's (all shown). */
static void vertices(ze_driver_handle_t drv)
{
	uint32_t n = 0;
	ze_fabric_vertex_handle_t v[MAXT * 4];
	if (!real.zeFabricVertexGetExp || real.zeFabricVertexGetExp(drv, &n, NULL) || n > MAXT * 4 ||
	    real.zeFabricVertexGetExp(drv, &n, v))
		return;
	for (uint32_t k = 0; k < n; k++) {
		ze_fabric_vertex_handle_t sub[MAXT];
		uint32_t ns = 0;
		ze_device_handle_t dh;
		struct dev *d;
		if (!real.zeFabricVertexGetDeviceExp(v[k], &dh) && (d = dev_of(dh)))
			d->vertex = v[k];
		if (real.zeFabricVertexGetSubVerticesExp(v[k], &ns, NULL) || ns > MAXT ||
		    real.zeFabricVertexGetSubVerticesExp(v[k], &ns, sub))
			continue;
		for (uint32_t t = 0; t < ns; t++)
			if (!real.zeFabricVertexGetDeviceExp(sub[t], &dh) && (d = dev_of(dh)))
				d->vertex = sub[t];
	}
}

/* What zeInit shows, once (lock held). */
static ze_result_t build(void)
{
	if (s.built)
		return s.rc;
	s.built = true;
	uint32_t nd = 0;
	ze_driver_handle_t drivers[64];
	if ((s.rc = real.zeDriverGet(&nd, NULL)) || nd > 64 || (s.rc = real.zeDriverGet(&nd, drivers)))
		return s.rc;
	for (uint32_t d = 0; d < nd; d++) {
		uint32_t nc = 0;
		ze_device_handle_t cards[1024];
		if (real.zeDeviceGet(drivers[d], &nc, NULL) || nc > 1024 || real.zeDeviceGet(drivers[d], &nc, cards))
			continue;
		int first = s.ndevs, tiles[1024];
		unsigned int on[1024];
		/* Every card and tile of the file, with its physical id. */
		for (uint32_t c = 0; c < nc; c++) {
			char id[24];
			uint32_t nt = 0;
			ze_device_handle_t sub[MAXT];
			snprintf(id, sizeof(id), "%u", c);
			int card = add(cards[c], (int)d, id, true, -1);
			if (card < 0 || real.zeDeviceGetSubDevices(cards[c], &nt, NULL) || nt > MAXT ||
			    real.zeDeviceGetSubDevices(cards[c], &nt, sub))
				nt = 0;
			tiles[c] = nt > 1 ? (int)nt : 1;
			for (uint32_t t = 0; card >= 0 && nt > 1 && t < nt; t++) {
				snprintf(id, sizeof(id), "%u.%u", c, t);
				int k = add(sub[t], (int)d, id, false, card);
				if (k >= 0)
					s.devs[card].subs[s.devs[card].nsubs++] = k;
			}
		}
		vertices(drivers[d]);
		int h = hierarchy(env("ZE_FLAT_DEVICE_HIERARCHY"), hierarchy(f.hier[d], COMPOSITE));
		apply_mask(env("ZE_AFFINITY_MASK"), h, (int)nc, tiles, on);
		int k = s.ndrv, *list = s.list[k], n = 0;
		for (int i = first, c = 0; i < s.ndevs; i++) {
			struct dev *card = &s.devs[i];
			if (!card->is_card)
				continue;
			int all = card->nsubs, kept = 0, sub[MAXT];
			for (int t = 0; t < all; t++)
				if (on[c] & (1u << t))
					sub[kept++] = card->subs[t];
			unsigned int enabled = on[c++];
			card->nsubs = 0;
			if (!enabled) {
				card->root = false;
				continue;
			}
			/* A card keeping one tile is that tile, but under COMBINED. */
			if (kept == 1 && all > 1 && h != COMBINED) {
				card->root = false;
				s.devs[sub[0]].root = s.devs[sub[0]].tile_root = true;
				list[n++] = sub[0];
				continue;
			}
			memcpy(card->subs, sub, sizeof(int) * (size_t)kept);
			card->nsubs = kept;
			if (h == COMPOSITE || !kept)
				list[n++] = i;
			for (int t = 0; h != COMPOSITE && t < kept; t++)
				list[n++] = sub[t];
		}
		if (n) {
			s.drv[k] = drivers[d];
			s.drv_index[k] = (int)d;
			s.hier[k] = h;
			s.nlist[k] = n;
			s.ndrv++;
		}
	}
	s.rc = s.ndrv ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
	return s.rc;
}

static int shown_driver(ze_driver_handle_t h)
{
	for (int k = 0; h && k < s.ndrv; k++)
		if (s.drv[k] == h)
			return k;
	return -1;
}

/* Answers a list query with up to *count of n entries. */
static ze_result_t answer(uint32_t *count, void **out, int n, void *const *items)
{
	if (!count)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*count == 0 || !out) {
		if (*count && !out)
			return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
		*count = (uint32_t)n;
		return ZE_RESULT_SUCCESS;
	}
	uint32_t k = 0;
	for (; k < *count && k < (uint32_t)n; k++)
		out[k] = items[k];
	*count = k;
	return ZE_RESULT_SUCCESS;
}

static bool model(void)
{
	return !f.exposed;
}

/* ------------------------------------------------------------ wrappers */

/* What the stand-in shows in place of the real component's answer (the
 * call's fault, if any, already answered). */
static ze_result_t m_zeInit(ze_init_flags_t flags)
{
	ze_result_t rc = real.zeInit(flags);
	if (rc || !model())
		return rc;
	pthread_mutex_lock(&lock);
	rc = build();
	pthread_mutex_unlock(&lock);
	return rc;
}

static ze_result_t m_zeDriverGet(uint32_t *count, ze_driver_handle_t *list)
{
	ze_result_t rc;
	if (!model())
		return real.zeDriverGet(count, list);
	if ((rc = real.zeDriverGet(count ? &(uint32_t){ 0 } : NULL, NULL)))
		return rc;
	return answer(count, (void **)list, s.ndrv, (void *const *)s.drv);
}

static int driver_index(ze_driver_handle_t h)
{
	int k = shown_driver(h);
	return k >= 0 ? s.drv_index[k] : -1;
}

static ze_result_t m_zeDeviceGet(ze_driver_handle_t drv, uint32_t *count, ze_device_handle_t *list)
{
	int k = shown_driver(drv);
	if (!model() || k < 0)
		return real.zeDeviceGet(drv, count, list);
	void *items[MAXD / 8];
	for (int i = 0; i < s.nlist[k]; i++)
		items[i] = s.devs[s.list[k][i]].h;
	return answer(count, (void **)list, s.nlist[k], items);
}

static ze_result_t m_zeDeviceGetProperties(ze_device_handle_t h, ze_device_properties_t *p)
{
	ze_result_t rc = real.zeDeviceGetProperties(h, p);
	const struct dev *d = dev_of(h);
	if (!rc && model() && d && d->tile_root) {
		p->flags &= ~(uint32_t)ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE;
		p->subdeviceId = 0;
	}
	return rc;
}

static ze_result_t m_zeDeviceGetSubDevices(ze_device_handle_t h, uint32_t *count, ze_device_handle_t *list)
{
	ze_result_t rc;
	const struct dev *d = dev_of(h);
	if (!model() || !d)
		return real.zeDeviceGetSubDevices(h, count, list);
	if ((rc = real.zeDeviceGetSubDevices(h, &(uint32_t){ 0 }, NULL)))
		return rc;
	void *items[MAXT];
	for (int t = 0; t < d->nsubs; t++)
		items[t] = s.devs[d->subs[t]].h;
	return answer(count, (void **)list, d->nsubs, items);
}

static struct dev *dev_of_vertex(const void *v)
{
	for (int i = 0; v && i < s.ndevs; i++)
		if (s.devs[i].vertex == v)
			return &s.devs[i];
	return NULL;
}

static ze_result_t m_zeFabricVertexGetExp(ze_driver_handle_t drv, uint32_t *count, ze_fabric_vertex_handle_t *list)
{
	ze_result_t rc;
	int k = shown_driver(drv);
	if (!model() || k < 0)
		return real.zeFabricVertexGetExp(drv, count, list);
	if ((rc = real.zeFabricVertexGetExp(drv, &(uint32_t){ 0 }, NULL)))
		return rc;
	/* The vertices of the devices zeDeviceGet shows. */
	void *items[MAXD / 8];
	int n = 0;
	for (int i = 0; i < s.nlist[k]; i++)
		if (s.devs[s.list[k][i]].vertex)
			items[n++] = s.devs[s.list[k][i]].vertex;
	return answer(count, (void **)list, n, items);
}

static ze_result_t m_zeFabricVertexGetSubVerticesExp(ze_fabric_vertex_handle_t v, uint32_t *count,
						      ze_fabric_vertex_handle_t *list)
{
	ze_result_t rc;
	const struct dev *d = dev_of_vertex(v);
	if (!model() || !d)
		return real.zeFabricVertexGetSubVerticesExp(v, count, list);
	if ((rc = real.zeFabricVertexGetSubVerticesExp(v, &(uint32_t){ 0 }, NULL)))
		return rc;
	/* Under FLAT the runtime shows no sub-vertices. */
	void *items[MAXT];
	int n = 0;
	int k = 0;
	while (k < s.ndrv && s.drv_index[k] != d->driver)
		k++;
	for (int t = 0; k < s.ndrv && s.hier[k] != FLAT && t < d->nsubs; t++)
		if (s.devs[d->subs[t]].vertex)
			items[n++] = s.devs[d->subs[t]].vertex;
	return answer(count, (void **)list, n, items);
}

static ze_result_t m_zeFabricVertexGetPropertiesExp(ze_fabric_vertex_handle_t v, ze_fabric_vertex_exp_properties_t *p)
{
	ze_result_t rc = real.zeFabricVertexGetPropertiesExp(v, p);
	const struct dev *d = dev_of_vertex(v);
	if (!rc && model() && d && d->tile_root && p->type == ZE_FABRIC_VERTEX_EXP_TYPE_SUBDEVICE)
		p->type = ZE_FABRIC_VERTEX_EXP_TYPE_DEVICE;
	return rc;
}

/* Edge handles seen, with their index among the file's edges of their driver. */
struct edge_seen {
	void *h;
	int driver, index;
};
static struct edge_seen edges[4096];
static int nedges;

static ze_result_t m_zeFabricEdgeGetExp(ze_fabric_vertex_handle_t a, ze_fabric_vertex_handle_t b, uint32_t *count,
					ze_fabric_edge_handle_t *list)
{
	const struct dev *da = dev_of_vertex(a), *db = dev_of_vertex(b);
	ze_result_t rc = real.zeFabricEdgeGetExp(a, b, count, list);
	if (rc || !list || !count || !da || !db)
		return rc;
	/* The real component gives the edges joining a and b in the file's order. */
	json_t *fe = f.edges[da->driver];
	uint32_t k = 0;
	pthread_mutex_lock(&lock);
	for (size_t e = 0; e < json_array_size(fe) && k < *count; e++) {
		const char *x = json_string_value(json_object_get(json_array_get(fe, e), "a"));
		const char *y = json_string_value(json_object_get(json_array_get(fe, e), "b"));
		if (!x || !y || !((!strcmp(x, da->id) && !strcmp(y, db->id)) || (!strcmp(x, db->id) && !strcmp(y, da->id))))
			continue;
		int seen = 0;
		for (int i = 0; i < nedges; i++)
			seen |= edges[i].h == list[k];
		if (!seen && nedges < 4096)
			edges[nedges++] = (struct edge_seen){ list[k], da->driver, (int)e };
		k++;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* The fault of a call on devices (or vertices) a and b, either NULL. */
static ze_result_t fault_on(int fn, const struct dev *a, const struct dev *b)
{
	return fault(fn, a ? a->driver : -1, a ? a->id : NULL, b ? b->id : NULL, -1);
}

/* The fault of a call on an edge: its driver's, by its index there. */
static ze_result_t fault_on_edge(int fn, const void *e)
{
	long long driver = -1, index = -1;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nedges; i++)
		if (edges[i].h == e) {
			driver = edges[i].driver;
			index = edges[i].index;
		}
	pthread_mutex_unlock(&lock);
	return fault(fn, driver, NULL, NULL, index);
}

/*
 * A wrapper, written from the function's row of ze_functions.h: the fault
 * its arguments' shape names (a driver by its index in the file, devices
 * and vertices by their ids, an edge by its index), else SHOWN_fn, what the
 * stand-in shows: m_fn above, or the real component's answer.
 */
#define FAULT_INIT(fn) fault(F_##fn, -1, NULL, NULL, -1)
#define FAULT_LOADER FAULT_INIT
#define FAULT_DRIVER(fn) fault(F_##fn, model() ? driver_index(a0) : -1, NULL, NULL, -1)
#define FAULT_DEVICE(fn) fault_on(F_##fn, dev_of(a0), NULL)
#define FAULT_DEVICE_PAIR(fn) fault_on(F_##fn, dev_of(a0), dev_of(a1))
#define FAULT_VERTEX(fn) fault_on(F_##fn, dev_of_vertex(a0), NULL)
#define FAULT_VERTEX_PAIR(fn) fault_on(F_##fn, dev_of_vertex(a0), dev_of_vertex(a1))
#define FAULT_EDGE(fn) fault_on_edge(F_##fn, a0)
#define SHOWN_zeInit m_zeInit
#define SHOWN_zeDriverGet m_zeDriverGet
#define SHOWN_zeDeviceGet m_zeDeviceGet
#define SHOWN_zeDeviceGetProperties m_zeDeviceGetProperties
#define SHOWN_zeDeviceGetSubDevices m_zeDeviceGetSubDevices
#define SHOWN_zeDevicePciGetPropertiesExt real.zeDevicePciGetPropertiesExt
#define SHOWN_zeDeviceGetP2PProperties real.zeDeviceGetP2PProperties
#define SHOWN_zeFabricVertexGetExp m_zeFabricVertexGetExp
#define SHOWN_zeFabricVertexGetSubVerticesExp m_zeFabricVertexGetSubVerticesExp
#define SHOWN_zeFabricVertexGetPropertiesExp m_zeFabricVertexGetPropertiesExp
#define SHOWN_zeFabricVertexGetDeviceExp real.zeFabricVertexGetDeviceExp
#define SHOWN_zeFabricEdgeGetExp m_zeFabricEdgeGetExp
#define SHOWN_zeFabricEdgeGetPropertiesExp real.zeFabricEdgeGetPropertiesExp
#define WRAPPER_(fn, ret, params, required, shape)        \
	static ze_result_t w_##fn DC_NAMED(params)        \
	{                                                 \
		ze_result_t rc = FAULT_##shape(fn);       \
		return rc ? rc : SHOWN_##fn DC_PASSED(params); \
	}
ZE_FUNCTIONS_ARGS(WRAPPER_)
#undef WRAPPER_

/* The real component's Level Zero table, each function present wrapped. */
int stand_in_ze_table(const struct dmaconn_replay_ops *real_ops, struct ze_api *api, char *err, size_t errlen)
{
	int rc = real_ops->table("level_zero", api, err, errlen);
	if (rc)
		return rc;
	ops = real_ops;
	pthread_mutex_lock(&lock);
	read_file();
	pthread_mutex_unlock(&lock);
	real = *api;
#define WRAP_(fn, ret, params, required) api->fn = api->fn ? w_##fn : NULL;
	ZE_FUNCTIONS(WRAP_)
#undef WRAP_
	return 0;
}

__attribute__((destructor)) static void release(void)
{
	free(f.faults);
	json_decref(f.root);
}
