/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "level_zero" section of a recording: Level Zero's function table
 * wrapped as NVML's is (record_nvml.c), each answer kept where the section
 * describes it (docs/replay-format.md, "level_zero"), written through the
 * field tables ze.c reads it with.  The section holds what the runtime
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

#include "pci.h"
#include "replay_internal.h"
#include "ze_load.h"

#define ZID 24
#define MAX_DRIVERS 64
#define MAX_KEPT 65536 /* handles of each kind */

struct kept {
	void *h;
	int driver;
	char id[ZID]; /* the device's ("C", "C.T"); "" for an edge */
	json_t *obj;  /* the device's object, the vertex's, or the edge's */
	bool ok;      /* a properties answer succeeded */
};

struct list {
	struct kept *v;
	int n;
};

static struct {
	struct ze_api live;
	json_t *sec;
	int ndrv;
	struct {
		ze_driver_handle_t h;
		json_t *obj;
		bool vertices; /* listed: devices without a vertex say so */
	} drv[MAX_DRIVERS];
	struct list devs, vtx, edges;
} z;

#define LOCK() pthread_mutex_lock(&replay_rec_lock)
#define UNLOCK() pthread_mutex_unlock(&replay_rec_lock)

static json_t *code(ze_result_t rc)
{
	return json_string(replay_ze_fmt.name((int)rc));
}


static void put(json_t *obj, const char *key, json_t *v)
{
	replay_put(&replay_rec_oom, obj, key, v);
}

/* obj's keys for the fields that lie in Level Zero's structure lz of size
 * bytes, read from it (not the answers' codes, nor the file's own objects). */
static void put_fields(json_t *obj, const struct fmt_field *f, const void *lz, size_t size)
{
	for (; f->key; f++)
		if (f->off + f->size <= size && f->kind != FMT_CUSTOM)
			put(obj, f->key, fmt_json(&replay_ze_fmt, f, (const char *)lz + f->off));
}

/* A PCI address Level Zero gave, if it is one. */
static json_t *bus_id(const ze_pci_address_ext_t *a)
{
	if (a->bus > 0xff || a->device > 0xff || a->function > 7)
		return NULL;
	return fmt_json(&replay_ze_fmt, fmt_find(replay_ze_pci_fields, "bus_id"), a);
}

static struct kept *find(struct list *l, const void *h)
{
	for (int i = 0; h && i < l->n; i++)
		if (l->v[i].h == h)
			return &l->v[i];
	return NULL;
}

static struct kept *keep(struct list *l, void *h, int driver, const char *id, json_t *obj)
{
	struct kept *k = find(l, h);
	if (k || !h)
		return k;
	if (l->n % 64 == 0) {
		struct kept *grown = l->n < MAX_KEPT ? realloc(l->v, ((size_t)l->n + 64) * sizeof(*grown)) : NULL;
		if (!grown) {
			replay_rec_oom = true;
			return NULL;
		}
		l->v = grown;
	}
	k = &l->v[l->n++];
	*k = (struct kept){ .h = h, .driver = driver, .obj = obj };
	snprintf(k->id, ZID, "%s", id ? id : "");
	return k;
}

/* The object of array arr at index i, made (with those before it) if need be. */
static json_t *slot(json_t *arr, size_t i)
{
	while (arr && json_array_size(arr) <= i)
		replay_append(&replay_rec_oom, arr, json_object());
	return json_array_get(arr, i);
}

/* The array obj[key], made if need be. */
static json_t *array(json_t *obj, const char *key)
{
	json_t *a = json_object_get(obj, key);
	if (!a)
		put(obj, key, a = json_array());
	return a;
}

/* A properties answer rc about h of list l, returned: a success fills the
 * kept object with fill(obj, p), a failure is kept at "error" as a result
 * name, the shape the reader takes (noted: a success kept before stays). */
static ze_result_t answered(struct list *l, const void *h, ze_result_t rc, bool noted,
			    void (*fill)(json_t *obj, const void *p), const void *p)
{
	LOCK();
	struct kept *k = find(l, h);
	if (k && rc && !(noted && k->ok))
		put(k->obj, "error", code(rc));
	else if (k && !rc && noted)
		json_object_del(k->obj, "error");
	if (k && !rc) {
		fill(k->obj, p);
		k->ok = true;
	}
	UNLOCK();
	return rc;
}

static int driver_of(ze_driver_handle_t h)
{
	for (int d = 0; h && d < z.ndrv; d++)
		if (z.drv[d].h == h)
			return d;
	return -1;
}

/* Takes the lock for a driver's list answer rc, its failure kept at key:
 * the driver's index, or -1 (unknown, or rc failed). */
static int driver_answer(ze_driver_handle_t h, ze_result_t rc, const char *key)
{
	LOCK();
	int d = driver_of(h);
	if (d >= 0 && rc)
		put(z.drv[d].obj, key, code(rc));
	return rc ? -1 : d;
}

/* ----------------------------------------------------------- the wrappers */

static ze_result_t r_zeInit(ze_init_flags_t flags)
{
	ze_result_t rc = z.live.zeInit(flags);
	LOCK();
	replay_note(z.sec, "init", json_string("SUCCESS"), rc ? fmt_error(&replay_ze_fmt, rc) : NULL);
	UNLOCK();
	return rc;
}

static ze_result_t r_zeDriverGet(uint32_t *count, ze_driver_handle_t *list)
{
	ze_result_t rc = z.live.zeDriverGet(count, list);
	LOCK();
	if (rc)
		put(z.sec, "drivers_error", code(rc));
	for (uint32_t k = 0; !rc && list && count && k < *count && k < MAX_DRIVERS; k++) {
		if (k >= (uint32_t)z.ndrv) {
			z.drv[k].obj = json_pack("{s:[], s:{s:[], s:[], s:[], s:[]}}", "devices", "p2p", "same_card",
						 "xelink", "other", "pairs");
			z.ndrv = (int)k + 1;
		}
		z.drv[k].h = list[k];
	}
	UNLOCK();
	return rc;
}

static ze_result_t r_zeDeviceGet(ze_driver_handle_t drv, uint32_t *count, ze_device_handle_t *list)
{
	ze_result_t rc = z.live.zeDeviceGet(drv, count, list);
	int d = driver_answer(drv, rc, "devices_error");
	for (uint32_t c = 0; d >= 0 && list && count && c < *count; c++) {
		char id[ZID];
		snprintf(id, sizeof(id), "%u", c);
		keep(&z.devs, list[c], d, id, slot(json_object_get(z.drv[d].obj, "devices"), c));
	}
	UNLOCK();
	return rc;
}

static ze_result_t r_zeDeviceGetSubDevices(ze_device_handle_t h, uint32_t *count, ze_device_handle_t *list)
{
	ze_result_t rc = z.live.zeDeviceGetSubDevices(h, count, list);
	uint32_t n = !rc && count ? *count : 0;
	ze_device_handle_t subs[REPLAY_MAX_TILES];
	/* The sub-devices behind a count, to name them. */
	if (n > REPLAY_MAX_TILES)
		n = REPLAY_MAX_TILES;
	if (n && z.live.zeDeviceGetSubDevices(h, &n, subs) != ZE_RESULT_SUCCESS)
		n = 0;
	LOCK();
	struct kept *card = find(&z.devs, h);
	if (card && strchr(card->id, '.') == NULL) {
		if (rc)
			replay_note(card->obj, "subdevices", NULL, fmt_error(&replay_ze_fmt, rc));
		else if (n && !json_is_array(json_object_get(card->obj, "subdevices")))
			put(card->obj, "subdevices", json_array());
		json_t *arr = json_object_get(card->obj, "subdevices");
		for (uint32_t t = 0; json_is_array(arr) && t < n; t++) {
			char id[ZID + 16];
			snprintf(id, sizeof(id), "%.8s.%u", card->id, t);
			keep(&z.devs, subs[t], card->driver, id, slot(arr, t));
		}
	}
	UNLOCK();
	return rc;
}

static void device_props(json_t *obj, const void *p)
{
	put_fields(obj, replay_ze_device_fields, p, sizeof(ze_device_properties_t));
}

static ze_result_t r_zeDeviceGetProperties(ze_device_handle_t h, ze_device_properties_t *p)
{
	return answered(&z.devs, h, z.live.zeDeviceGetProperties(h, p), true, device_props, p);
}

static ze_result_t r_zeDevicePciGetPropertiesExt(ze_device_handle_t h, ze_pci_ext_properties_t *p)
{
	ze_result_t rc = z.live.zeDevicePciGetPropertiesExt(h, p);
	json_t *bus = rc ? NULL : bus_id(&p->address), *v = NULL;
	ze_result_t krc = !rc && !bus ? ZE_RESULT_ERROR_UNKNOWN : rc;
	json_decref(bus);
	if (!krc)
		v = fmt_write(&replay_ze_fmt, replay_ze_pci_fields, p);
	LOCK();
	struct kept *k = find(&z.devs, h);
	if (k)
		replay_note(k->obj, "pci", v, krc ? fmt_error(&replay_ze_fmt, krc) : NULL);
	else
		json_decref(v);
	UNLOCK();
	return rc;
}

static ze_result_t r_zeDeviceGetP2PProperties(ze_device_handle_t a, ze_device_handle_t b, ze_device_p2p_properties_t *p)
{
	ze_result_t rc = z.live.zeDeviceGetP2PProperties(a, b, p);
	LOCK();
	struct kept *ka = find(&z.devs, a), *kb = find(&z.devs, b);
	if (ka && kb && ka->driver == kb->driver) {
		json_t *pairs = json_object_get(json_object_get(z.drv[ka->driver].obj, "p2p"), "pairs"), *e = NULL;
		for (size_t i = 0; i < json_array_size(pairs) && !e; i++) {
			json_t *x = json_array_get(pairs, i);
			if (!strcmp(json_string_value(json_object_get(x, "from")), ka->id) &&
			    !strcmp(json_string_value(json_object_get(x, "to")), kb->id))
				e = x;
		}
		if (!e)
			replay_append(&replay_rec_oom, pairs, e = json_pack("{s:s, s:s}", "from", ka->id, "to", kb->id));
		if (e && (rc == ZE_RESULT_SUCCESS || !json_object_get(e, "flags"))) {
			json_object_del(e, rc ? "flags" : "error");
			put(e, rc ? "error" : "flags", rc ? code(rc) : fmt_json(&replay_ze_fmt, replay_ze_p2p_flags, &p->flags));
		}
	}
	UNLOCK();
	return rc;
}

/* A vertex of one of the kept devices: its "vertex" object. */
static void keep_vertex(ze_fabric_vertex_handle_t v)
{
	ze_device_handle_t dh = NULL;
	if (find(&z.vtx, v) || z.live.zeFabricVertexGetDeviceExp(v, &dh) != ZE_RESULT_SUCCESS)
		return;
	struct kept *dev = find(&z.devs, dh);
	if (!dev)
		return;
	json_t *o = json_object_get(dev->obj, "vertex");
	if (!json_is_object(o))
		put(dev->obj, "vertex", o = json_object());
	keep(&z.vtx, v, dev->driver, dev->id, o);
}

static ze_result_t r_zeFabricVertexGetExp(ze_driver_handle_t drv, uint32_t *count, ze_fabric_vertex_handle_t *list)
{
	ze_result_t rc = z.live.zeFabricVertexGetExp(drv, count, list);
	int d = driver_answer(drv, rc, "vertices_error");
	if (d >= 0)
		z.drv[d].vertices = true;
	for (uint32_t k = 0; d >= 0 && list && count && k < *count; k++)
		keep_vertex(list[k]);
	UNLOCK();
	return rc;
}

static ze_result_t r_zeFabricVertexGetSubVerticesExp(ze_fabric_vertex_handle_t v, uint32_t *count,
						       ze_fabric_vertex_handle_t *list)
{
	ze_result_t rc = z.live.zeFabricVertexGetSubVerticesExp(v, count, list);
	LOCK();
	struct kept *k = find(&z.vtx, v);
	if (k && rc)
		put(k->obj, "subvertices_error", code(rc));
	for (uint32_t t = 0; k && !rc && list && count && t < *count; t++)
		keep_vertex(list[t]);
	UNLOCK();
	return rc;
}

static void vertex_props(json_t *obj, const void *in)
{
	const ze_fabric_vertex_exp_properties_t *p = in;
	const ze_fabric_vertex_pci_exp_address_t *a = &p->address;
	json_t *bus = bus_id(&(ze_pci_address_ext_t){ a->domain, a->bus, a->device, a->function });
	put_fields(obj, replay_ze_vertex_fields, p, sizeof(*p));
	if (bus)
		put(obj, "bus_id", bus);
}

static ze_result_t r_zeFabricVertexGetPropertiesExp(ze_fabric_vertex_handle_t v, ze_fabric_vertex_exp_properties_t *p)
{
	return answered(&z.vtx, v, z.live.zeFabricVertexGetPropertiesExp(v, p), false, vertex_props, p);
}

static ze_result_t r_zeFabricVertexGetDeviceExp(ze_fabric_vertex_handle_t v, ze_device_handle_t *dh)
{
	return z.live.zeFabricVertexGetDeviceExp(v, dh);
}

static ze_result_t r_zeFabricEdgeGetExp(ze_fabric_vertex_handle_t a, ze_fabric_vertex_handle_t b, uint32_t *count,
					ze_fabric_edge_handle_t *list)
{
	ze_result_t rc = z.live.zeFabricEdgeGetExp(a, b, count, list);
	LOCK();
	struct kept *ka = find(&z.vtx, a), *kb = find(&z.vtx, b);
	json_t *drv = ka && kb && ka->driver == kb->driver ? z.drv[ka->driver].obj : NULL;
	if (drv && rc)
		replay_append(&replay_rec_oom, array(drv, "edge_errors"),
			      json_pack("{s:s, s:s, s:o}", "a", ka->id, "b", kb->id, "error", code(rc)));
	for (uint32_t e = 0; drv && !rc && list && count && e < *count; e++) {
		if (find(&z.edges, list[e]))
			continue;
		json_t *o = json_pack("{s:s, s:s, s:s}", "a", ka->id, "b", kb->id, "model", "unknown");
		replay_append(&replay_rec_oom, array(drv, "edges"), o);
		keep(&z.edges, list[e], ka->driver, NULL, o);
	}
	UNLOCK();
	return rc;
}

static void edge_props(json_t *obj, const void *in)
{
	const ze_fabric_edge_exp_properties_t *p = in;
	json_t *model = replay_text(p->model, strnlen(p->model, sizeof(p->model)));
	if (json_string_length(model))
		put(obj, "model", model);
	else
		json_decref(model);
	put_fields(obj, replay_ze_edge_fields, p, sizeof(*p));
}

static ze_result_t r_zeFabricEdgeGetPropertiesExp(ze_fabric_edge_handle_t e, ze_fabric_edge_exp_properties_t *p)
{
	return answered(&z.edges, e, z.live.zeFabricEdgeGetPropertiesExp(e, p), false, edge_props, p);
}

/* --------------------------------------------------------------- the table */

static void forget(void)
{
	for (int d = 0; d < z.ndrv; d++)
		json_decref(z.drv[d].obj);
	json_decref(z.sec);
	free(z.devs.v);
	free(z.vtx.v);
	free(z.edges.v);
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
	if (!api && !library && replay_active() && !replay_ze_load_error()) {
		/* The replayed loader lacked a required function: so it is recorded. */
		replay_library_record(z.sec, replay_ze_library(), NULL, replay_ze_missing());
	} else if (!api) {
		replay_library_record(z.sec, NULL, load_error ? load_error : "not loaded", NULL);
	} else {
		json_t *missing = json_array();
		z.live = *api;
		ZE_FUNCTIONS(REPLAY_WRAP)
		replay_library_record(z.sec, library ? library : replay_ze_library(), NULL, missing);
		put(z.sec, "exposed", json_true());
	}
	UNLOCK();
}

/* The section as kept, devices without a vertex marked where vertices were listed. */
void replay_ze_record(json_t *root)
{
	LOCK();
	if (z.sec) {
		bool loaded = json_object_get(z.sec, "exposed") != NULL;
		json_t *sec = json_deep_copy(z.sec), *drivers = loaded ? json_array() : NULL;
		for (int d = 0; d < z.ndrv; d++) {
			json_t *devs = json_object_get(z.drv[d].obj, "devices");
			for (size_t c = 0; z.drv[d].vertices && c < json_array_size(devs); c++) {
				json_t *dev = json_array_get(devs, c);
				json_t *subs = json_object_get(dev, "subdevices");
				if (!json_object_get(dev, "vertex"))
					put(dev, "vertex", json_false());
				for (size_t t = 0; json_is_array(subs) && t < json_array_size(subs); t++)
					if (!json_object_get(json_array_get(subs, t), "vertex"))
						put(json_array_get(subs, t), "vertex", json_false());
			}
			replay_append(&replay_rec_oom, drivers, json_incref(z.drv[d].obj));
		}
		if (drivers)
			put(sec, "drivers", drivers);
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
