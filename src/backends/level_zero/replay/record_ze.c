/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "level_zero" section of a recording: Level Zero's function table
 * wrapped as NVML's is (record_nvml.c), each answer kept in the structures
 * ze.c reads a file into (replay_ze.h), as it would read it, and written at
 * the end through ze.c's field tables.  The section holds what the runtime
 * showed ("exposed": true): root devices "C" in the order zeDeviceGet gave
 * them, their sub-devices "C.T", the fabric vertices of those devices and
 * the edges the detectors asked about.  To name the devices behind handles
 * the wrappers may ask the library more than the detectors did (the
 * sub-devices behind a count, the device of a vertex).
 */
#include "replay_ze.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

#define MAX_DRIVERS 64
#define MAX_KEPT 65536 /* of each list */

/* An object's keys, as their fields' indexes, in the order first answered
 * (a recording's order of keys). */
struct order {
	unsigned char at[8], n;
};

/* The keys of a device beyond its table's, of a vertex, of an edge and of
 * the section (a group of keys is named by its first field). */
enum { DEV_PROPS = 0, DEV_SUBS = 10, VX_PROPS = 0, EDGE_PROPS = 1 };
enum { TOP_INIT, TOP_DRIVERS_ERROR };

/* What the structures lack: the live handles, and the orders of keys. */
struct rnode {
	const void *h, *vh; /* the device's handle, its vertex's */
	struct order k, vk;
};
struct redge {
	const void *h;
	struct order k;
};

static struct {
	struct ze_api live;
	json_t *sec; /* the library; "exposed" where loaded */
	struct order k;
	ze_result_t init, drivers_rc;
	int ndrv;
	struct _ze_driver_handle_t drv[MAX_DRIVERS];
	struct rdrv {
		const void *h;
		bool vertices; /* listed: devices without a vertex say so */
		struct order k;
		struct rnode *n; /* by node */
		struct redge *e; /* by edge */
	} r[MAX_DRIVERS];
} z;

#define LOCK() pthread_mutex_lock(&replay_rec_lock)
#define UNLOCK() pthread_mutex_unlock(&replay_rec_lock)

static bool has(const struct order *o, int key)
{
	return memchr(o->at, key, o->n) != NULL;
}

/* key answered: in its place, or moved last. */
static void seen(struct order *o, int key, bool last)
{
	unsigned char *at = memchr(o->at, key, o->n);
	if (at && last) {
		memmove(at, at + 1, (size_t)(o->at + o->n - at - 1));
		o->n--;
		at = NULL;
	}
	if (!at && o->n < sizeof(o->at))
		o->at[o->n++] = (unsigned char)key;
}

/* The answer rc to key of an object, its code kept at *at: whether its value
 * is to be kept.  An error does not replace a success kept before (the
 * detector had its answer); last: a success after an error is written last. */
static bool answer(struct order *k, int key, ze_result_t rc, ze_result_t *at, bool last)
{
	if (rc && has(k, key) && !*at)
		return false;
	seen(k, key, last && !rc && *at);
	*at = rc;
	return !rc;
}

/* Room for item n of size bytes in the array *pv (a pointer, grown by 64),
 * zeroed: false when out of memory (noted). */
static bool grow(void *pv, int n, size_t size)
{
	char *v;
	memcpy(&v, pv, sizeof(v));
	if (n % 64 == 0) {
		char *g = n < MAX_KEPT ? realloc(v, ((size_t)n + 64) * size) : NULL;
		if (!g)
			return !(replay_rec_oom = true);
		memcpy(pv, &g, sizeof(g));
		v = g;
	}
	memset(v + (size_t)n * size, 0, size);
	return true;
}

/* A PCI address Level Zero gave, if it is one. */
static bool is_bus(uint32_t bus, uint32_t device, uint32_t function)
{
	return bus <= 0xff && device <= 0xff && function <= 7;
}

/* The node of a device handle (vertex: of a vertex handle), or NULL; what
 * the structures lack of a node.  Lock held. */
static znode *node_of(const void *h, bool vertex)
{
	for (int d = 0; h && d < z.ndrv; d++)
		for (int i = 0; i < z.drv[d].nnodes; i++)
			if ((vertex ? z.r[d].n[i].vh : z.r[d].n[i].h) == h)
				return &z.drv[d].nodes[i];
	return NULL;
}
#define R(node) (&z.r[(node)->driver].n[(node) - z.drv[(node)->driver].nodes])

/* The edge of an edge handle with its driver's index at *d, or NULL; lock held. */
static zedge *edge_of(const void *h, int *d)
{
	for (*d = 0; h && *d < z.ndrv; ++*d)
		for (int i = 0; i < z.drv[*d].edges.n; i++)
			if (z.r[*d].e[i].h == h)
				return &z.drv[*d].edges.v[i];
	return NULL;
}

static int driver_of(ze_driver_handle_t h)
{
	for (int d = 0; h && d < z.ndrv; d++)
		if (z.r[d].h == h)
			return d;
	return -1;
}

/* A new node of driver d (its handle h unless another node has it): card
 * card, tile tile (-1: the card itself); its index, or -1. */
static int add_node(int d, const void *h, int card, int tile)
{
	struct _ze_driver_handle_t *drv = &z.drv[d];
	int i = drv->nnodes;
	if (!grow(&drv->nodes, i, sizeof(znode)) || !grow(&z.r[d].n, i, sizeof(struct rnode)))
		return -1;
	drv->nnodes++;
	drv->nodes[i] = (znode){ .driver = d, .card = card, .tile = tile };
	z.r[d].n[i].h = node_of(h, false) ? NULL : h;
	if (tile < 0)
		snprintf(drv->nodes[i].id, ZID, "%d", card);
	else
		snprintf(drv->nodes[i].id, ZID, "%d.%d", card, tile);
	return i;
}

/* Driver d's answer rc to a list, its failure kept at the driver's field
 * key: d, or -1 (unknown, or rc failed). */
static int listed(int d, ze_result_t rc, int key)
{
	if (d >= 0 && rc) {
		const struct fmt_field *f = &replay_ze_driver_fields[key];
		memcpy((char *)&z.drv[d] + f->off, &rc, sizeof(rc));
		seen(&z.r[d].k, key, false);
	}
	return rc ? -1 : d;
}

/* ----------------------------------------------------- what is kept of each */

static void keep_drivers(ze_result_t rc, const uint32_t *count, const ze_driver_handle_t *list)
{
	if (rc) {
		z.drivers_rc = rc;
		seen(&z.k, TOP_DRIVERS_ERROR, false);
	}
	for (uint32_t k = 0; !rc && list && count && k < *count && k < MAX_DRIVERS; k++) {
		if (k >= (uint32_t)z.ndrv) {
			seen(&z.r[k].k, ZE_DRV_DEVICES, false);
			seen(&z.r[k].k, ZE_DRV_P2P, false);
			z.ndrv = (int)k + 1;
		}
		z.r[k].h = list[k];
	}
}

static void keep_cards(int d, const uint32_t *count, const ze_device_handle_t *list)
{
	for (uint32_t c = 0; d >= 0 && list && count && c < *count; c++)
		if ((int)c >= z.drv[d].ncards && add_node(d, list[c], (int)c, -1) >= 0)
			z.drv[d].ncards++;
}

static void keep_tiles(znode *card, ze_result_t rc, ze_device_handle_t h, const uint32_t *count)
{
	uint32_t n = !rc && count ? *count : 0;
	ze_device_handle_t subs[REPLAY_MAX_TILES];
	/* The sub-devices behind a count, to name them. */
	if (n > REPLAY_MAX_TILES)
		n = REPLAY_MAX_TILES;
	if (n && z.live.zeDeviceGetSubDevices(h, &n, subs) != ZE_RESULT_SUCCESS)
		n = 0;
	if (!card || card->tile >= 0 || !(rc || n) || !answer(&R(card)->k, DEV_SUBS, rc, &card->sub_rc, false))
		return;
	int d = card->driver, at = (int)(card - z.drv[d].nodes), c = card->card;
	if (!card->nsub)
		card->sub0 = z.drv[d].nnodes;
	/* Tiles are added after the card's last (none kept between). */
	for (uint32_t t = (uint32_t)card->nsub; t < n && card->sub0 + card->nsub == z.drv[d].nnodes; t++) {
		int i = add_node(d, subs[t], c, (int)t);
		card = &z.drv[d].nodes[at]; /* the nodes may have moved */
		card->nsub += i >= 0;
	}
}

/* An address that is none is kept as an error. */
static void keep_pci(znode *n, ze_result_t rc, const ze_pci_ext_properties_t *p)
{
	ze_result_t krc = !rc && !is_bus(p->address.bus, p->address.device, p->address.function) ? ZE_RESULT_ERROR_UNKNOWN
												   : rc;
	if (n && answer(&R(n)->k, ZE_DEV_PCI, krc, &n->pci.rc, false))
		n->pci.p = *p;
}

static void keep_pair(znode *na, znode *nb, ze_result_t rc, const ze_device_p2p_properties_t *p)
{
	if (!na || !nb || na->driver != nb->driver)
		return;
	struct _ze_driver_handle_t *drv = &z.drv[na->driver];
	int from = (int)(na - drv->nodes), to = (int)(nb - drv->nodes), k = 0;
	while (k < drv->p2p.pairs.n && (drv->p2p.pairs.v[k].from != from || drv->p2p.pairs.v[k].to != to))
		k++;
	if (k == drv->p2p.pairs.n && grow(&drv->p2p.pairs.v, k, sizeof(struct zpair)))
		drv->p2p.pairs.v[drv->p2p.pairs.n++] = (struct zpair){ from, to, rc, 0 };
	/* An error does not replace the flags kept before. */
	struct zpair *e = k < drv->p2p.pairs.n ? &drv->p2p.pairs.v[k] : NULL;
	if (e && (!rc || e->rc))
		*e = (struct zpair){ from, to, rc, rc ? 0 : p->flags };
}

/* A vertex of one of the kept devices: its "vertex" object. */
static void keep_vertex(ze_fabric_vertex_handle_t v)
{
	ze_device_handle_t dh = NULL;
	if (node_of(v, true) || z.live.zeFabricVertexGetDeviceExp(v, &dh) != ZE_RESULT_SUCCESS)
		return;
	znode *n = node_of(dh, false);
	struct rnode *r = n ? R(n) : NULL;
	if (r && !r->vh)
		r->vh = v;
	if (r)
		seen(&r->k, ZE_DEV_VERTEX, false);
}

/* Driver d's vertices listed (d -1: none), or a vertex n's (its failure rc). */
static void keep_vertices(int d, znode *n, ze_result_t rc, const uint32_t *count, const ze_fabric_vertex_handle_t *list)
{
	if (d >= 0)
		z.r[d].vertices = true;
	if (n && rc) {
		n->vx.sub_rc = rc;
		seen(&R(n)->vk, ZE_VX_SUBS, false);
	}
	for (uint32_t k = 0; (n || d >= 0) && !rc && list && count && k < *count; k++)
		keep_vertex(list[k]);
}

/* A vertex's or an edge's properties: its error and its answer are both
 * kept; a vertex's address only if it is one, an edge's model if it has one. */
static void keep_vertex_properties(znode *n, ze_result_t rc, const ze_fabric_vertex_exp_properties_t *p)
{
	if (n && rc)
		n->vx.rc = rc;
	if (n && !rc) {
		ze_fabric_vertex_pci_exp_address_t had = n->vx.p.address;
		bool bus = is_bus(p->address.bus, p->address.device, p->address.function);
		n->vx.p = *p;
		n->vx.p.address = bus ? p->address : had;
		n->vx.has_pci |= bus;
	}
	if (n)
		seen(&R(n)->vk, rc ? ZE_VX_ERROR : VX_PROPS, false);
}

static void keep_edge_properties(zedge *e, int d, ze_result_t rc, const ze_fabric_edge_exp_properties_t *p)
{
	if (e && rc)
		e->rc = rc;
	if (e && !rc) {
		char model[sizeof(e->p.model)];
		memcpy(model, e->p.model, sizeof(model));
		e->p = *p;
		if (!strnlen(p->model, sizeof(p->model)))
			memcpy(e->p.model, model, sizeof(model));
	}
	if (e)
		seen(&z.r[d].e[e - z.drv[d].edges.v].k, rc ? ZE_EDGE_ERROR : EDGE_PROPS, false);
}

static void keep_edges(znode *na, znode *nb, ze_result_t rc, const uint32_t *count, const ze_fabric_edge_handle_t *list)
{
	int da = 0, other;
	struct _ze_driver_handle_t *drv = na && nb && na->driver == nb->driver ? &z.drv[da = na->driver] : NULL;
	zedge ends = { .a = na && drv ? (int)(na - drv->nodes) : 0, .b = nb && drv ? (int)(nb - drv->nodes) : 0, .rc = rc };
	if (drv && rc && grow(&drv->edge_errors.v, drv->edge_errors.n, sizeof(zedge))) {
		drv->edge_errors.v[drv->edge_errors.n++] = ends;
		seen(&z.r[da].k, ZE_DRV_EDGE_ERRORS, false);
	}
	for (uint32_t e = 0; drv && !rc && list && count && e < *count; e++) {
		int i = drv->edges.n;
		if (edge_of(list[e], &other) || !grow(&drv->edges.v, i, sizeof(zedge)) ||
		    !grow(&z.r[da].e, i, sizeof(struct redge)))
			continue;
		drv->edges.v[drv->edges.n++] = (zedge){ .a = ends.a, .b = ends.b };
		z.r[da].e[i].h = list[e];
		seen(&z.r[da].k, ZE_DRV_EDGES, false);
	}
}

/* ----------------------------------------------------------- the wrappers */

/*
 * A wrapper, written from its row of ze_functions.h: the live call, then,
 * the lock taken, the objects its arguments' shape names (a driver's index
 * d, a node n, nodes na and nb, an edge e of driver d) and KEEP_OF_fn, aN
 * being the Nth argument and rc the answer.
 */
#define RECORD(fn, params, ...)                               \
	static ze_result_t r_##fn DC_NAMED(params)            \
	{                                                     \
		ze_result_t rc = z.live.fn DC_PASSED(params); \
		LOCK();                                       \
		__VA_ARGS__;                                  \
		KEEP_OF_##fn;                                 \
		UNLOCK();                                     \
		return rc;                                    \
	}
#define RECORD_INIT(fn, params) RECORD(fn, params, (void)0)
#define RECORD_LOADER RECORD_INIT
#define RECORD_DRIVER(fn, params) RECORD(fn, params, int d = driver_of(a0))
#define RECORD_DEVICE(fn, params) RECORD(fn, params, znode *n = node_of(a0, false))
#define RECORD_VERTEX(fn, params) RECORD(fn, params, znode *n = node_of(a0, true))
#define RECORD_EDGE(fn, params) RECORD(fn, params, int d; zedge *e = edge_of(a0, &d))
#define RECORD_DEVICE_PAIR(fn, params) RECORD(fn, params, znode *na = node_of(a0, false), *nb = node_of(a1, false))
#define RECORD_VERTEX_PAIR(fn, params) RECORD(fn, params, znode *na = node_of(a0, true), *nb = node_of(a1, true))

#define KEEP_OF_zeInit answer(&z.k, TOP_INIT, rc, &z.init, false)
#define KEEP_OF_zeDriverGet keep_drivers(rc, a0, a1)
#define KEEP_OF_zeDeviceGet keep_cards(listed(d, rc, ZE_DRV_DEVICES_ERROR), a1, a2)
#define KEEP_OF_zeDeviceGetProperties \
	(n && answer(&R(n)->k, DEV_PROPS, rc, &n->props_rc, true) ? (void)(n->props = *a1) : (void)0)
#define KEEP_OF_zeDeviceGetSubDevices keep_tiles(n, rc, a0, a1)
#define KEEP_OF_zeDevicePciGetPropertiesExt keep_pci(n, rc, a1)
#define KEEP_OF_zeDeviceGetP2PProperties keep_pair(na, nb, rc, a2)
#define KEEP_OF_zeFabricVertexGetExp keep_vertices(listed(d, rc, ZE_DRV_VERTICES_ERROR), NULL, rc, a1, a2)
#define KEEP_OF_zeFabricVertexGetSubVerticesExp keep_vertices(-1, n, rc, a1, a2)
#define KEEP_OF_zeFabricVertexGetPropertiesExp keep_vertex_properties(n, rc, a1)
#define KEEP_OF_zeFabricVertexGetDeviceExp (void)n
#define KEEP_OF_zeFabricEdgeGetExp keep_edges(na, nb, rc, a2, a3)
#define KEEP_OF_zeFabricEdgeGetPropertiesExp keep_edge_properties(e, d, rc, a1)
#define RECORD_(fn, ret, params, required, shape) RECORD_##shape(fn, params)
ZE_FUNCTIONS_ARGS(RECORD_)
#undef RECORD_

/* ---------------------------------------------------------- the writing */

static void put(json_t *obj, const struct fmt_field *f, const struct fmt_ctx *c, const void *base)
{
	replay_put(&replay_rec_oom, obj, f->key, fmt_json(c, f, (const char *)base + f->off));
}

/* The fields from to last of a table into obj. */
static void put_range(json_t *obj, const struct fmt_field *fields, int from, int last, const struct fmt_ctx *c,
		      const void *base)
{
	for (int i = from; i <= last; i++)
		put(obj, &fields[i], c, base);
}

static json_t *vertex_json(const struct rnode *r, const znode *n, const struct fmt_ctx *c)
{
	json_t *o = json_object();
	for (int i = 0; o && i < r->vk.n; i++)
		put_range(o, replay_ze_vertex_fields, r->vk.at[i],
			  r->vk.at[i] == VX_PROPS ? 1 + n->vx.has_pci : r->vk.at[i], c, &n->vx);
	return o;
}

/* Node i of driver d as its answers were kept, tiles and vertex included. */
static json_t *node_json(int d, int i, const struct fmt_ctx *c)
{
	const znode *n = &z.drv[d].nodes[i];
	const struct rnode *r = &z.r[d].n[i];
	json_t *o = json_object(), *v;
	for (int k = 0; o && k < r->k.n; k++) {
		int key = r->k.at[k];
		if (key == DEV_PROPS)
			put_range(o, replay_ze_device_fields, !n->props_rc, n->props_rc ? 0 : ZE_DEV_PCI - 1, c, n);
		else if (key == DEV_SUBS && n->sub_rc)
			replay_put(&replay_rec_oom, o, "subdevices", fmt_error(c, (int)n->sub_rc));
		else if (key == DEV_SUBS) {
			replay_put(&replay_rec_oom, o, "subdevices", v = json_array());
			for (int t = 0; v && t < n->nsub; t++)
				replay_append(&replay_rec_oom, v, node_json(d, n->sub0 + t, c));
		} else if (key == ZE_DEV_VERTEX)
			replay_put(&replay_rec_oom, o, "vertex", vertex_json(r, n, c));
		else
			put(o, &replay_ze_device_fields[key], c, n);
	}
	if (z.r[d].vertices && !has(&r->k, ZE_DEV_VERTEX))
		replay_put(&replay_rec_oom, o, "vertex", json_false());
	return o;
}

static json_t *driver_json(int d)
{
	struct zctx zc = { replay_ze_fmt, &z.drv[d] };
	const struct rdrv *r = &z.r[d];
	json_t *o = json_object(), *a;
	for (int k = 0; o && k < r->k.n; k++) {
		int key = r->k.at[k];
		if (key != ZE_DRV_DEVICES && key != ZE_DRV_EDGES) {
			put(o, &replay_ze_driver_fields[key], &zc.c, &z.drv[d]);
			continue;
		}
		replay_put(&replay_rec_oom, o, replay_ze_driver_fields[key].key, a = json_array());
		for (int i = 0; a && key == ZE_DRV_DEVICES && i < z.drv[d].nnodes; i++)
			if (z.drv[d].nodes[i].tile < 0)
				replay_append(&replay_rec_oom, a, node_json(d, i, &zc.c));
		for (int i = 0; a && key == ZE_DRV_EDGES && i < z.drv[d].edges.n; i++) {
			const zedge *e = &z.drv[d].edges.v[i];
			json_t *eo = fmt_write(&zc.c, replay_ze_edge_ends, e);
			put(eo, &replay_ze_edge_fields[0], &zc.c, e);
			for (int g = 0; eo && g < r->e[i].k.n; g++)
				put_range(eo, replay_ze_edge_fields, r->e[i].k.at[g],
					  r->e[i].k.at[g] == EDGE_PROPS ? ZE_EDGE_ERROR - 1 : ZE_EDGE_ERROR, &zc.c, e);
			replay_append(&replay_rec_oom, a, eo);
		}
	}
	return o;
}

/* --------------------------------------------------------------- the table */

static void forget(void)
{
	for (int d = 0; d < z.ndrv; d++) {
		free(z.drv[d].nodes);
		free(z.drv[d].edges.v);
		free(z.drv[d].p2p.pairs.v);
		free(z.drv[d].edge_errors.v);
		free(z.r[d].n);
		free(z.r[d].e);
	}
	json_decref(z.sec);
	memset(&z, 0, sizeof(z));
}

void replay_ze_record_begin(void)
{
	LOCK();
	forget();
	UNLOCK();
}

void replay_ze_record_table(void *table, const char *library, const char *load_error)
{
	struct ze_api *api = table;
	LOCK();
	forget();
	z.sec = json_object();
	if (!replay_record_unwrapped(z.sec, api, library, load_error, replay_library_section("level_zero"))) {
		json_t *missing = json_array();
		z.live = *api;
		ZE_FUNCTIONS(REPLAY_WRAP)
		replay_library_record(z.sec, library ? library : replay_ze_library(), NULL, missing);
		replay_put(&replay_rec_oom, z.sec, "exposed", json_true());
	}
	UNLOCK();
}

/* The section as kept, devices without a vertex marked where vertices were listed. */
void replay_ze_record(json_t *root)
{
	LOCK();
	if (z.sec) {
		json_t *sec = json_deep_copy(z.sec), *drivers = json_array();
		for (int k = 0; k < z.k.n; k++)
			replay_put(&replay_rec_oom, sec, z.k.at[k] == TOP_INIT ? "init" : "drivers_error",
				   z.k.at[k] == TOP_INIT && !z.init ? json_string("SUCCESS")
				   : z.k.at[k] == TOP_INIT	    ? fmt_error(&replay_ze_fmt, (int)z.init)
								    : json_string(replay_ze_fmt.name((int)z.drivers_rc)));
		for (int d = 0; d < z.ndrv; d++)
			replay_append(&replay_rec_oom, drivers, driver_json(d));
		if (json_object_get(z.sec, "exposed"))
			replay_put(&replay_rec_oom, sec, "drivers", drivers);
		else
			json_decref(drivers);
		if (!replay_rec_oom)
			json_object_set_new(root, "level_zero", sec);
		else
			json_decref(sec);
	}
	UNLOCK();
}

__attribute__((destructor)) static void record_ze_release(void)
{
	LOCK();
	forget();
	UNLOCK();
}
