/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "level_zero" section: a stand-in Level Zero loader.  This file answers
 * the ze* functions dmaconn calls, with Level Zero's exact signatures, through
 * the function table replay_ze_table() fills, from the topology file
 * (docs/replay-format.md, "level_zero"); record_ze.c records the section
 * through the same description of it (the field tables below).
 *
 * The devices are shown as the file lists them: each card a root device,
 * its tiles its sub-devices.  A recording ("exposed": true) holds what the
 * runtime showed; how Intel's runtime applies ZE_AFFINITY_MASK and
 * ZE_FLAT_DEVICE_HIERARCHY to a node described physically is modelled by
 * the test stand-in (tests/replay_runtime.c), not here.
 *
 * The file is read once into the structures below, which are also the
 * handles zeInit shows; after that everything is read-only, so the
 * functions may be called from any thread.
 */
#include "replay_ze.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci.h"
#include "replay_internal.h"

#define MAX_CARDS 1024
#define MAX_ITEMS 65536 /* edges, p2p pairs, faults */
#define DEFAULT_NAME "Intel(R) Graphics"
#define NOT_INSTALLED ZE_LOADER_SONAME ": cannot open shared object file (replayed)"
#define BY_PLACE UINT32_MAX /* a vertex type the file leaves to the vertex's place */

static struct zfile z;

static atomic_bool inited; /* zeInit succeeded */

void replay_ze_release(void)
{
	atomic_store(&inited, false);
	for (int d = 0; d < z.drivers.n; d++) {
		free(z.drivers.v[d].nodes);
		free(z.drivers.v[d].edges.v);
		free(z.drivers.v[d].p2p.pairs.v);
		free(z.drivers.v[d].edge_errors.v);
	}
	free(z.drivers.v);
	replay_library_release(&z.lib);
	memset(&z, 0, sizeof(z));
}

/* ------------------------------------------------------------ the format */

/* The names of Level Zero's enumerations and flags: their constants' ends. */
#define ZN(prefix, name) { #name, prefix##name }
static const struct replay_name type_names[] = { ZN(ZE_DEVICE_TYPE_, GPU), ZN(ZE_DEVICE_TYPE_, CPU),
						 ZN(ZE_DEVICE_TYPE_, FPGA), ZN(ZE_DEVICE_TYPE_, MCA),
						 ZN(ZE_DEVICE_TYPE_, VPU), { NULL, 0 } };
static const struct replay_name device_flag_names[] = {
	ZN(ZE_DEVICE_PROPERTY_FLAG_, INTEGRATED), ZN(ZE_DEVICE_PROPERTY_FLAG_, SUBDEVICE),
	ZN(ZE_DEVICE_PROPERTY_FLAG_, ECC), ZN(ZE_DEVICE_PROPERTY_FLAG_, ONDEMANDPAGING), { NULL, 0 }
};
static const struct replay_name p2p_flag_names[] = { ZN(ZE_DEVICE_P2P_PROPERTY_FLAG_, ACCESS),
						     ZN(ZE_DEVICE_P2P_PROPERTY_FLAG_, ATOMICS), { NULL, 0 } };
static const struct replay_name vertex_type_names[] = {
	ZN(ZE_FABRIC_VERTEX_EXP_TYPE_, UNKNOWN), ZN(ZE_FABRIC_VERTEX_EXP_TYPE_, DEVICE),
	ZN(ZE_FABRIC_VERTEX_EXP_TYPE_, SUBDEVICE), ZN(ZE_FABRIC_VERTEX_EXP_TYPE_, SWITCH), { NULL, 0 }
};
static const struct replay_name bandwidth_unit_names[] = { ZN(ZE_BANDWIDTH_UNIT_, UNKNOWN),
							   ZN(ZE_BANDWIDTH_UNIT_, BYTES_PER_NANOSEC),
							   ZN(ZE_BANDWIDTH_UNIT_, BYTES_PER_CLOCK), { NULL, 0 } };
static const struct replay_name latency_unit_names[] = { ZN(ZE_LATENCY_UNIT_, UNKNOWN), ZN(ZE_LATENCY_UNIT_, NANOSEC),
							 ZN(ZE_LATENCY_UNIT_, CLOCK), ZN(ZE_LATENCY_UNIT_, HOP),
							 { NULL, 0 } };
static const struct replay_name duplexity_names[] = { ZN(ZE_FABRIC_EDGE_EXP_DUPLEXITY_, UNKNOWN),
						      ZN(ZE_FABRIC_EDGE_EXP_DUPLEXITY_, HALF_DUPLEX),
						      ZN(ZE_FABRIC_EDGE_EXP_DUPLEXITY_, FULL_DUPLEX), { NULL, 0 } };

/* ze_result_t is a uint32_t, which the int may alias. */
static int ze_parse(const char *name, int *code)
{
	return ze_result_parse(name, (ze_result_t *)code);
}

static const char *ze_name(int rc)
{
	const char *n = ze_result_short_name((ze_result_t)rc);
	return n ? n : "UNKNOWN";
}

static const struct replay_codes ze_codes = { ze_parse, "expected a ze_result_t name such as \"DEVICE_LOST\"",
					      "unknown ze_result_t", ZE_RESULT_ERROR_UNKNOWN };
const struct fmt_ctx replay_ze_fmt = { NULL, &ze_codes, ze_name, "Level Zero" };

/* A list: at most max items of size bytes, each read by item(); written
 * (where c.write is) as its ends, then its answer's error (answer[0]) or,
 * without one, its value (answer[1]). */
struct zlist {
	struct fmt_custom c;
	const char *what;
	size_t max, size;
	int (*item)(struct zctx *zc, json_t *v, const char *path, void *out);
	const struct fmt_field *ends, *answer;
};

/* A ZLIST from an array (the field's message names the items). */
static int read_list(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	const struct zlist *l = f->aux;
	char p[REPLAY_PATH_LEN];
	size_t n = json_array_size(v);
	if (!json_is_array(v) || n > l->max)
		return replay_bad(c->file, path, "expected an array of at most %zu %s", l->max, l->what);
	void *items = n ? calloc(n, l->size) : NULL;
	if (n && !items)
		return replay_bad(c->file, path, "out of memory");
	memcpy(out, &items, sizeof(items)); /* ZLIST's v, then n */
	memcpy((char *)out + sizeof(items), &(int){ (int)n }, sizeof(int));
	for (size_t i = 0; i < n; i++)
		if (l->item((struct zctx *)c, json_array_get(v, i), replay_item(p, path, i), (char *)items + i * l->size))
			return -1;
	return 0;
}

static json_t *write_list(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	const struct zlist *l = f->aux;
	const char *items;
	int n;
	json_t *a = json_array();
	memcpy(&items, in, sizeof(items));
	memcpy(&n, (const char *)in + sizeof(items), sizeof(n));
	for (int i = 0; a && i < n; i++) {
		const char *item = items + (size_t)i * l->size;
		ze_result_t rc;
		memcpy(&rc, item + l->answer[0].off, sizeof(rc));
		const struct fmt_field *v = &l->answer[rc || !l->answer[1].key ? 0 : 1];
		json_t *o = fmt_write(c, l->ends, item);
		replay_put(&replay_rec_oom, o, v->key, fmt_json(c, v, item + v->off));
		replay_append(&replay_rec_oom, a, o);
	}
	return a;
}

/* The first n fields of the object obj, present or not (their readers say
 * what an absent one lacks), then the others as fmt_read() reads them. */
static int read_fields(const struct fmt_ctx *c, const struct fmt_field *f, int n, json_t *obj, const char *path,
		       void *base)
{
	char p[REPLAY_PATH_LEN];
	for (const struct fmt_field *g = f; g < f + n; g++)
		if (fmt_value(c, g, json_object_get(obj, g->key), replay_sub(p, path, g->key), (char *)base + g->off))
			return -1;
	return fmt_read(c, f + n, obj, path, base);
}

/* A PCI address of ze_pci_address_ext_t's (or the vertex's) shape. */
static int read_bus(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	struct dc_pci a;
	if (!json_is_string(v) || dc_pci_parse(json_string_value(v), json_string_length(v) + 1, &a))
		return replay_bad(c->file, path, "%s", f->msg);
	memcpy(out, (uint32_t[4]){ a.domain, a.bus, a.device, a.function }, 4 * sizeof(uint32_t));
	return 0;
}

static json_t *write_bus(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	uint32_t p[4];
	char bus[DC_PCI_BUS_ID_SIZE];
	(void)c, (void)f;
	memcpy(p, in, sizeof(p));
	dc_pci_format(&(struct dc_pci){ p[0], p[1], p[2], p[3] }, bus);
	return json_string(bus);
}

static const struct fmt_custom bus_rw = { read_bus, write_bus };

/* An edge's model: a non-empty string that fits Level Zero's buffer (one
 * never answered is recorded as "unknown"). */
static int read_model(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) >= f->size)
		return replay_bad(c->file, path, "expected the edge's model, e.g. \"XeLink\" or \"MDFI\"");
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static json_t *write_model(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	size_t n = strnlen(in, f->size);
	(void)c;
	return n ? replay_text(in, n) : json_string("unknown");
}

/* The index of device id, "C" or "C.T", in d's nodes, or -1. */
static int node_by_id(const struct _ze_driver_handle_t *d, const char *id)
{
	char *end;
	long c = strtol(id, &end, 10), t;
	if (end == id || c < 0 || c >= d->ncards)
		return -1;
	if (!*end)
		return (int)c;
	if (*end != '.')
		return -1;
	id = end + 1;
	t = strtol(id, &end, 10);
	return end == id || *end || t < 0 || t >= d->nodes[c].nsub ? -1 : d->nodes[c].sub0 + (int)t;
}

/* A device of the driver being read or written, by its id. */
static int read_id(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	int n = json_is_string(v) ? node_by_id(((const struct zctx *)c)->d, json_string_value(v)) : -1;
	(void)f;
	if (n < 0)
		return replay_bad(c->file, path, "expected the id of a device of this driver, \"C\" or \"C.T\"");
	memcpy(out, &n, sizeof(n));
	return 0;
}

static json_t *write_id(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	int n;
	(void)f;
	memcpy(&n, in, sizeof(n));
	return json_string(((const struct zctx *)c)->d->nodes[n].id);
}

static const struct fmt_custom model_rw = { read_model, write_model }, id_rw = { read_id, write_id };

#define PCI(key, kind, member, ...) FMT_FIELD(key, kind, ze_pci_ext_properties_t, member, __VA_ARGS__)
const struct fmt_field replay_ze_pci_fields[] = {
	PCI("bus_id", FMT_CUSTOM, address, .aux = &bus_rw, .msg = "expected a PCI bus id such as \"0000:18:00.0\""),
	PCI("gen", FMT_INT, maxSpeed.genVersion, .min = -1, .max = INT32_MAX),
	PCI("width", FMT_INT, maxSpeed.width, .min = -1, .max = INT32_MAX),
	PCI("max_bandwidth", FMT_INT, maxSpeed.maxBandwidth, .min = -1, .max = INT64_MAX),
	{ .key = NULL },
};

/* "pci": zeDevicePciGetPropertiesExt's answer. */
static int read_pci(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	struct zpci *pci = out;
	int rc, r = fmt_error_object(c, v, path, &rc);
	(void)f;
	if (r)
		return r < 0 ? -1 : (pci->rc = (ze_result_t)rc, 0);
	if (!json_is_object(v))
		return replay_bad(c->file, path, "expected {\"bus_id\": ...} or an error object");
	pci->p.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
	pci->p.maxSpeed = (ze_pci_speed_ext_t){ -1, -1, -1 };
	pci->has = true;
	return read_fields(c, replay_ze_pci_fields, 1, v, path, &pci->p);
}

static json_t *write_pci(const struct fmt_ctx *c, const struct fmt_field *f, const void *in)
{
	const struct zpci *pci = in;
	(void)f;
	return pci->rc ? fmt_error(c, (int)pci->rc) : fmt_write(c, replay_ze_pci_fields, &pci->p);
}

#define VTX(key, kind, member, ...) FMT_FIELD(key, kind, struct zvertex, member, __VA_ARGS__)
const struct fmt_field replay_ze_vertex_fields[] = {
	VTX("type", FMT_NAME, p.type, .aux = vertex_type_names, .flags = FMT_FIRST),
	VTX("remote", FMT_BOOL, p.remote),
	VTX("bus_id", FMT_CUSTOM, p.address, .aux = &bus_rw, .msg = "expected a PCI bus id"),
	[ZE_VX_ERROR] = VTX("error", FMT_CODE, rc, .flags = FMT_FAIL),
	[ZE_VX_SUBS] = VTX("subvertices_error", FMT_CODE, sub_rc, .flags = FMT_FAIL),
	{ .key = NULL },
};

/* "vertex": false, true or its answers. */
static int read_vertex(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	struct zvertex *vx = out;
	(void)f;
	if (json_is_boolean(v)) {
		vx->shown = json_is_true(v);
		return 0;
	}
	if (!json_is_object(v))
		return replay_bad(c->file, path, "expected true, false or an object");
	vx->has_pci = json_object_get(v, "bus_id") != NULL;
	return fmt_read(c, replay_ze_vertex_fields, v, path, vx);
}

static const struct fmt_custom pci_rw = { read_pci, write_pci }, vertex_r = { read_vertex, NULL };

enum { DEV_UUID = 2, DEV_FIELDS = 11 };
#define DEV(key, kind, member, ...) FMT_FIELD(key, kind, znode, member, __VA_ARGS__)
const struct fmt_field replay_ze_device_fields[DEV_FIELDS] = {
	DEV("error", FMT_CODE, props_rc, .flags = FMT_FAIL),
	DEV("name", FMT_STR, props.name, .msg = "expected a string of at most %d characters"),
	[DEV_UUID] = DEV("uuid", FMT_UUID, props.uuid, .flags = FMT_LOOSE),
	DEV("vendor_id", FMT_UINT, props.vendorId, FMT_U32),
	DEV("device_id", FMT_UINT, props.deviceId, FMT_U32),
	DEV("type", FMT_NAME, props.type, .aux = type_names, .flags = FMT_FIRST),
	DEV("flags", FMT_FLAGS, props.flags, .aux = device_flag_names),
	DEV("subdevice_id", FMT_UINT, props.subdeviceId, FMT_U32),
	[ZE_DEV_PCI] = DEV("pci", FMT_CUSTOM, pci, .aux = &pci_rw),
	[ZE_DEV_VERTEX] = DEV("vertex", FMT_CUSTOM, vx, .aux = &vertex_r),
	{ .key = NULL },
};

/* A card (card NULL) or one of its tiles; its tiles. */
static int read_node(struct zctx *zc, json_t *o, const char *path, znode *node, const znode *card)
{
	char p[REPLAY_PATH_LEN];
	struct fmt_field f[DEV_FIELDS];
	if (!json_is_object(o))
		return replay_bad(zc->c.file, path, "expected a device object");
	node->props.type = ZE_DEVICE_TYPE_GPU;
	node->props.vendorId = 0x8086;
	snprintf(node->props.name, sizeof(node->props.name), "%s", DEFAULT_NAME);
	node->vx.shown = true;
	node->vx.p.type = BY_PLACE;
	if (card) {
		/* A tile's address and UUID default to its card's, the UUID with
		 * its last byte marked by the tile. */
		node->props = card->props;
		node->props.flags = z.exposed ? 0 : ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE;
		node->props.subdeviceId = (uint32_t)node->tile;
		node->props.uuid.id[15] ^= (uint8_t)(node->tile + 1);
		node->pci = card->pci;
	}
	/* A card of a physical description that answers needs its UUID. */
	memcpy(f, replay_ze_device_fields, sizeof(f));
	if (!card && !z.exposed && !json_object_get(o, "error"))
		f[DEV_UUID].flags |= FMT_REQ;
	if (fmt_read(&zc->c, f, o, path, node))
		return -1;
	if (!card && !node->pci.has && node->pci.rc == ZE_RESULT_SUCCESS)
		node->pci.rc = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* nothing to answer with */
	json_t *v = json_object_get(o, "subdevices");
	if (!v)
		return 0;
	replay_sub(p, path, "subdevices");
	if (card)
		return replay_bad(zc->c.file, p, "a tile has no tiles of its own");
	int rc, r = fmt_error_object(&zc->c, v, p, &rc);
	if (r)
		return r < 0 ? -1 : (node->sub_rc = (ze_result_t)rc, 0);
	size_t n = json_array_size(v);
	if (!json_is_array(v))
		return replay_bad(zc->c.file, p, "expected an array of tiles or an error object");
	if (n > REPLAY_MAX_TILES)
		return replay_bad(zc->c.file, p, "%zu tiles, more than the %d supported", n, REPLAY_MAX_TILES);
	if (n == 1 && !z.exposed)
		return replay_bad(zc->c.file, p, "a card has no tiles or at least two (a single-tile card lists none)");
	node->sub0 = zc->d->nnodes;
	node->nsub = (int)n;
	zc->d->nnodes += (int)n;
	for (size_t t = 0; t < n; t++) {
		znode *tile = &zc->d->nodes[node->sub0 + (int)t];
		char q[REPLAY_PATH_LEN];
		*tile = (znode){ .driver = node->driver, .card = node->card, .tile = (int)t };
		snprintf(tile->id, sizeof(tile->id), "%d.%zu", node->card, t);
		if (read_node(zc, json_array_get(v, t), replay_item(q, p, t), tile, node))
			return -1;
	}
	return 0;
}

/* "devices": the cards, then their tiles, in one array. */
static int read_devices(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	struct _ze_driver_handle_t *d = ((struct zctx *)c)->d;
	char p[REPLAY_PATH_LEN];
	size_t n = json_array_size(v), nodes = n;
	(void)f, (void)out;
	if (!json_is_array(v) || n > MAX_CARDS)
		return replay_bad(c->file, path, "expected an array of at most %d devices", MAX_CARDS);
	for (size_t i = 0; i < n; i++) {
		size_t t = json_array_size(json_object_get(json_array_get(v, i), "subdevices"));
		nodes += t <= REPLAY_MAX_TILES ? t : 0;
	}
	if (nodes && !(d->nodes = calloc(nodes, sizeof(*d->nodes))))
		return replay_bad(c->file, path, "out of memory");
	d->ncards = d->nnodes = (int)n;
	for (size_t i = 0; i < n; i++) {
		znode *card = &d->nodes[i];
		card->driver = (int)(d - z.drivers.v);
		card->card = (int)i;
		card->tile = -1;
		snprintf(card->id, sizeof(card->id), "%zu", i);
		if (read_node((struct zctx *)c, json_array_get(v, i), replay_item(p, path, i), card, NULL))
			return -1;
	}
	/* A tile has a vertex only where its card has one. */
	for (int t = d->ncards; t < d->nnodes; t++)
		d->nodes[t].vx.shown &= d->nodes[d->nodes[t].card].vx.shown;
	return 0;
}

#define EDGE(key, kind, member, ...) FMT_FIELD(key, kind, zedge, member, __VA_ARGS__)
const struct fmt_field replay_ze_edge_ends[] = {
	EDGE("a", FMT_CUSTOM, a, .aux = &id_rw), EDGE("b", FMT_CUSTOM, b, .aux = &id_rw), { .key = NULL }
};
#define ends replay_ze_edge_ends
const struct fmt_field replay_ze_edge_fields[] = {
	EDGE("model", FMT_CUSTOM, p.model, .aux = &model_rw),
	EDGE("bandwidth", FMT_UINT, p.bandwidth, FMT_U32),
	EDGE("bandwidth_unit", FMT_NAME, p.bandwidthUnit, .aux = bandwidth_unit_names, .flags = FMT_FIRST),
	EDGE("latency", FMT_UINT, p.latency, FMT_U32),
	EDGE("latency_unit", FMT_NAME, p.latencyUnit, .aux = latency_unit_names, .flags = FMT_FIRST),
	EDGE("duplexity", FMT_NAME, p.duplexity, .aux = duplexity_names, .flags = FMT_FIRST),
	EDGE("uuid", FMT_UUID, p.uuid, .flags = FMT_LOOSE),
	[ZE_EDGE_ERROR] = EDGE("error", FMT_CODE, rc, .flags = FMT_FAIL),
	{ .key = NULL },
};
#define EDGE_ERROR (replay_ze_edge_fields + ZE_EDGE_ERROR)

static int read_edge(struct zctx *zc, json_t *o, const char *path, void *out)
{
	zedge *e = out;
	if (!json_is_object(o))
		return replay_bad(zc->c.file, path, "expected an edge object");
	if (read_fields(&zc->c, ends, 2, o, path, e))
		return -1;
	if (e->a == e->b)
		return replay_bad(zc->c.file, path, "an edge joins two different vertices");
	e->p.stype = ZE_STRUCTURE_TYPE_FABRIC_EDGE_EXP_PROPERTIES;
	return read_fields(&zc->c, replay_ze_edge_fields, 1, o, path, e);
}

/* An edge error: {"a", "b", "error"}. */
static int read_edge_error(struct zctx *zc, json_t *o, const char *path, void *out)
{
	if (!json_is_object(o) || !json_object_get(o, "error"))
		return replay_bad(zc->c.file, path, "expected {\"a\", \"b\", \"error\"}");
	return read_fields(&zc->c, ends, 2, o, path, out) || fmt_read(&zc->c, EDGE_ERROR, o, path, out) ? -1 : 0;
}

#define PAIR(key, kind, member, ...) FMT_FIELD(key, kind, struct zpair, member, __VA_ARGS__)
static const struct fmt_field pair_ends[] = {
	PAIR("from", FMT_CUSTOM, from, .aux = &id_rw), PAIR("to", FMT_CUSTOM, to, .aux = &id_rw), { .key = NULL }
};
static const struct fmt_field pair_fields[] = {
	PAIR("error", FMT_CODE, rc, .flags = FMT_FAIL),
	PAIR("flags", FMT_FLAGS, flags, .aux = p2p_flag_names),
	{ .key = NULL },
};

static int read_pair(struct zctx *zc, json_t *o, const char *path, void *out)
{
	if (!json_is_object(o))
		return replay_bad(zc->c.file, path, "expected {\"from\", \"to\", \"flags\" or \"error\"}");
	if (read_fields(&zc->c, pair_ends, 2, o, path, out) || fmt_read(&zc->c, pair_fields, o, path, out))
		return -1;
	if (!json_object_get(o, "error") && !json_object_get(o, "flags"))
		return replay_bad(zc->c.file, path, "\"flags\" or \"error\" is required");
	return 0;
}

static int read_hierarchy(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out)
{
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	(void)f, (void)out;
	if (strcmp(s, "COMPOSITE") && strcmp(s, "FLAT") && strcmp(s, "COMBINED"))
		return replay_bad(c->file, path, "expected \"COMPOSITE\", \"FLAT\" or \"COMBINED\"");
	return 0;
}

static const struct fmt_custom hierarchy_r = { read_hierarchy, NULL }, devices_r = { read_devices, NULL };
static const struct zlist edge_list = { { read_list, NULL }, "edges", MAX_ITEMS, sizeof(zedge), read_edge, NULL, NULL },
			  pair_list = { { read_list, write_list }, "pairs", MAX_ITEMS, sizeof(struct zpair), read_pair,
					pair_ends, pair_fields },
			  edge_error_list = { { read_list, write_list }, "failures", MAX_ITEMS, sizeof(zedge),
					      read_edge_error, ends, EDGE_ERROR };

#define P2P(key, member) FMT_FIELD(key, FMT_FLAGS, struct zp2p, member, .aux = p2p_flag_names)
static const struct fmt_field p2p_fields[] = {
	P2P("same_card", rel[REL_SAME_CARD]), P2P("xelink", rel[REL_XELINK]), P2P("other", rel[REL_OTHER]),
	FMT_FIELD("pairs", FMT_CUSTOM, struct zp2p, pairs, .aux = &pair_list),
	{ .key = NULL },
};

#define DRV(key, kind, member, ...) FMT_FIELD(key, kind, struct _ze_driver_handle_t, member, __VA_ARGS__)
const struct fmt_field replay_ze_driver_fields[] = {
	DRV("default_hierarchy", FMT_CUSTOM, ncards, .aux = &hierarchy_r),
	[ZE_DRV_DEVICES] = DRV("devices", FMT_CUSTOM, nodes, .aux = &devices_r),
	[ZE_DRV_EDGES] = DRV("edges", FMT_CUSTOM, edges, .aux = &edge_list),
	[ZE_DRV_P2P] = DRV("p2p", FMT_OBJ, p2p, .aux = p2p_fields),
	[ZE_DRV_VERTICES_ERROR] = DRV("vertices_error", FMT_CODE, vertices_rc),
	[ZE_DRV_DEVICES_ERROR] = DRV("devices_error", FMT_CODE, devices_rc, .flags = FMT_FAIL),
	[ZE_DRV_EDGE_ERRORS] = DRV("edge_errors", FMT_CUSTOM, edge_errors, .aux = &edge_error_list),
	{ .key = NULL },
};

/* A pair's entry with its place in the file, to find one listed twice. */
struct zpair_at {
	int from, to, k;
};

static int cmp_pair_at(const void *pa, const void *pb)
{
	const struct zpair_at *a = pa, *b = pb;
	if (a->from != b->from)
		return (a->from > b->from) - (a->from < b->from);
	if (a->to != b->to)
		return (a->to > b->to) - (a->to < b->to);
	return (a->k > b->k) - (a->k < b->k);
}

/* A pair listed twice would answer as its first entry says, the second
 * never read: refused, as NVML's peers listed twice are. */
static int pairs_once(const struct zctx *zc, const struct _ze_driver_handle_t *d, const char *path)
{
	int n = d->p2p.pairs.n, twice = -1;
	struct zpair_at *at = n > 1 ? calloc((size_t)n, sizeof(*at)) : NULL;
	if (n > 1 && !at)
		return replay_bad(zc->c.file, path, "out of memory");
	for (int k = 0; k < n && at; k++)
		at[k] = (struct zpair_at){ d->p2p.pairs.v[k].from, d->p2p.pairs.v[k].to, k };
	if (at)
		qsort(at, (size_t)n, sizeof(*at), cmp_pair_at);
	for (int k = 1; k < n; k++)
		if (at[k].from == at[k - 1].from && at[k].to == at[k - 1].to && (twice < 0 || at[k].k < twice))
			twice = at[k].k;
	free(at);
	if (twice < 0)
		return 0;
	char p[REPLAY_PATH_LEN], q[REPLAY_PATH_LEN], r[REPLAY_PATH_LEN];
	const struct zpair *e = &d->p2p.pairs.v[twice];
	return replay_bad(zc->c.file, replay_item(r, replay_sub(q, replay_sub(p, path, "p2p"), "pairs"), (size_t)twice),
			  "the pair \"%s\" -> \"%s\" is listed twice", d->nodes[e->from].id, d->nodes[e->to].id);
}

static int read_driver(struct zctx *zc, json_t *o, const char *path, void *out)
{
	struct _ze_driver_handle_t *d = zc->d = out;
	if (!json_is_object(o))
		return replay_bad(zc->c.file, path, "expected a driver object");
	d->p2p.rel[REL_SAME_CARD] = d->p2p.rel[REL_XELINK] =
		ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS | ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS;
	return fmt_read(&zc->c, replay_ze_driver_fields, o, path, d) || pairs_once(zc, d, path) ? -1 : 0;
}

static const struct zlist driver_list = { { read_list, NULL }, "drivers", 64, sizeof(struct _ze_driver_handle_t),
				      read_driver, NULL, NULL };

#define TOP(key, kind, member, ...) FMT_FIELD(key, kind, struct zfile, member, __VA_ARGS__)
static const struct fmt_field top_fields[] = {
	TOP("drivers_error", FMT_CODE, drivers_rc, .flags = FMT_FAIL),
	TOP("exposed", FMT_BOOL, exposed),
	TOP("drivers", FMT_CUSTOM, drivers, .aux = &driver_list),
	{ .key = NULL },
};

int replay_ze_read(const char *file, json_t *value)
{
	struct zctx zc = { replay_ze_fmt, NULL };
	replay_ze_release();
	zc.c.file = file;
	if (!json_is_object(value))
		return replay_bad(file, "level_zero", "expected an object");
	z.present = true;
	if (replay_library_read(&zc.c, value, "level_zero", &z.lib) || z.lib.error)
		return z.lib.error ? 0 : -1; /* with an error, nothing else can be reached */
	return fmt_read(&zc.c, top_fields, value, "level_zero", &z);
}

const char *replay_ze_library(void)
{
	return z.lib.name ? z.lib.name : ZE_LOADER_SONAME;
}

json_t *replay_ze_missing(void)
{
	return replay_library_missing(&z.lib);
}

const char *replay_ze_load_error(void)
{
	return z.present ? z.lib.error : NOT_INSTALLED;
}

/* -------------------------------------------------------------- prologue */

static bool usable(void)
{
	return dmaconn_replay_ops()->load_error() == NULL && z.present && !z.lib.error;
}

/* h when it points at one of the n items of size bytes at base, else NULL. */
static void *among(const void *h, const void *base, int n, size_t size)
{
	uintptr_t p = (uintptr_t)h, b = (uintptr_t)base;
	return h && base && p >= b && (p - b) % size == 0 && (p - b) / size < (size_t)n ? (void *)h : NULL;
}

/* The object a handle names (a vertex handle: its device), or NULL.  A
 * driver without devices is not shown; the loader has no handle. */
static void *file_of(const void *h)
{
	(void)h;
	return &z;
}

static void *drv_of(const void *h)
{
	struct _ze_driver_handle_t *d = among(h, z.drivers.v, z.drivers.n, sizeof(*d));
	return d && d->ncards ? d : NULL;
}

static void *dev_of(const void *h)
{
	for (int d = 0; d < z.drivers.n; d++)
		if (among(h, z.drivers.v[d].nodes, z.drivers.v[d].nnodes, sizeof(znode)))
			return (void *)h;
	return NULL;
}

static void *vtx_of(const void *h)
{
	znode *n = h ? dev_of((const void *)((uintptr_t)h - offsetof(znode, vh))) : NULL;
	return n && n->vx.shown ? n : NULL;
}

static void *edge_of(const void *h)
{
	for (int d = 0; d < z.drivers.n; d++)
		if (among(h, z.drivers.v[d].edges.v, z.drivers.v[d].edges.n, sizeof(zedge)))
			return (void *)h;
	return NULL;
}

/* What every call but zeInit checks first, fn being the function's name. */
static ze_result_t entry(const char *fn)
{
	return !usable()			   ? ZE_RESULT_ERROR_UNINITIALIZED
	       : replay_library_lacks(&z.lib, fn) ? ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
	       : !atomic_load(&inited)		   ? ZE_RESULT_ERROR_UNINITIALIZED
						   : ZE_RESULT_SUCCESS;
}

/*
 * entry(), then that of() finds the object of handle h, that out is not
 * NULL and that the object has no failure to answer at offset rc_at (0:
 * none; checked before out when early).  The object, or NULL with *rc.
 */
static void *enter(const char *fn, void *(*of)(const void *), const void *h, const void *out, size_t rc_at,
		   bool early, ze_result_t *rc)
{
	char *o = NULL;
	ze_result_t own = ZE_RESULT_SUCCESS;
	if ((*rc = entry(fn)))
		return NULL;
	if (!(o = of(h))) {
		*rc = h ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
		return NULL;
	}
	if (rc_at)
		memcpy(&own, o + rc_at, sizeof(own));
	*rc = early && own ? own : !out ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : own;
	return *rc ? NULL : o;
}

/*
 * The answer of a function, written from its row of ze_functions.h: the
 * prologue its arguments' shape names, then ANSWER_OF_fn, aN being its Nth
 * argument.  A shape of one handle (h, its object's type, how of() finds it
 * and which argument is out) finds o; its ANSWER_OF_fn is "rc, early, body",
 * rc and early as enter() takes them.  A shape of two handles finds a and
 * b (both, else the handles are wrong); its ANSWER_OF_fn is the body.
 */
#define ANSWER_ONE(fn, params, type, of, h, out) ANSWER_ONE_(fn, params, type, of, h, out, ANSWER_OF_##fn)
#define ANSWER_ONE_(...) ANSWER_ONE__(__VA_ARGS__)
#define ANSWER_ONE__(fn, params, type, of, h, out, rc_at, early, ...) \
	static ze_result_t replay_##fn DC_NAMED(params)              \
	{                                                             \
		ze_result_t rc;                                       \
		type *o = enter(#fn, of, h, out, rc_at, early, &rc);  \
		if (!o)                                               \
			return rc;                                    \
		__VA_ARGS__;                                          \
	}
#define ANSWER_TWO(fn, params, of)                                                                      \
	static ze_result_t replay_##fn DC_NAMED(params)                                                 \
	{                                                                                               \
		ze_result_t rc = entry(#fn);                                                            \
		znode *a = rc ? NULL : of(a0), *b = rc ? NULL : of(a1);                                 \
		if (!rc && (!a || !b))                                                                  \
			rc = a0 && a1 ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE; \
		if (rc)                                                                                 \
			return rc;                                                                      \
		ANSWER_OF_##fn;                                                                         \
	}
#define ANSWER_INIT(fn, params) /* written out below */
#define ANSWER_LOADER(fn, params) ANSWER_ONE(fn, params, struct zfile, file_of, NULL, a0)
#define ANSWER_DRIVER(fn, params) ANSWER_ONE(fn, params, struct _ze_driver_handle_t, drv_of, a0, a1)
#define ANSWER_DEVICE(fn, params) ANSWER_ONE(fn, params, znode, dev_of, a0, a1)
#define ANSWER_VERTEX(fn, params) ANSWER_ONE(fn, params, znode, vtx_of, a0, a1)
#define ANSWER_EDGE(fn, params) ANSWER_ONE(fn, params, zedge, edge_of, a0, a1)
#define ANSWER_DEVICE_PAIR(fn, params) ANSWER_TWO(fn, params, dev_of)
#define ANSWER_VERTEX_PAIR(fn, params) ANSWER_TWO(fn, params, vtx_of)
#define RC(type, member) offsetof(type, member)

/* Level Zero's count/list protocol over the items i < n for which keep
 * holds: a count of 0 asks how many, else up to *count handles are written. */
#define ZE_LIST(count, out, n, keep, handle)                                          \
	do {                                                                          \
		if (!(count) || (*(count) && !(out)))                                 \
			return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                  \
		uint32_t k_ = 0;                                                      \
		for (int i = 0; i < (n) && (!*(count) || k_ < *(count)); i++)        \
			if (keep) {                                                   \
				if (*(count))                                         \
					(out)[k_] = (handle);                         \
				k_++;                                                 \
			}                                                             \
		*(count) = k_;                                                        \
		return ZE_RESULT_SUCCESS;                                             \
	} while (0)

/* Level Zero's properties structure src (size bytes) into dst, but for the
 * caller's stype and pNext, which begin every one. */
static ze_result_t copy_out(void *dst, const void *src, size_t size)
{
	size_t head = offsetof(ze_device_properties_t, pNext) + sizeof(void *);
	memcpy((char *)dst + head, (const char *)src + head, size - head);
	return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------ Level Zero */

static ze_result_t replay_zeInit(ze_init_flags_t flags)
{
	if (!usable())
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (flags > (ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (z.lib.init != ZE_RESULT_SUCCESS)
		return (ze_result_t)z.lib.init;
	/* A loader whose drivers have no devices fails (the runtime reports none). */
	for (int d = 0; d < z.drivers.n; d++)
		if (z.drivers.v[d].ncards) {
			atomic_store(&inited, true);
			return ZE_RESULT_SUCCESS;
		}
	return ZE_RESULT_ERROR_UNINITIALIZED;
}

static ze_result_t device_properties(const znode *n, ze_device_properties_t *out)
{
	copy_out(out, &n->props, sizeof(n->props));
	/* A tile of a physical description shown as a root device is no
	 * sub-device to the caller, as in the runtime. */
	if (!z.exposed && n->tile < 0) {
		out->flags &= ~(uint32_t)ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE;
		out->subdeviceId = 0;
	}
	return ZE_RESULT_SUCCESS;
}

/* Whether node i is n or one of its tiles. */
static bool is_or_in(const struct _ze_driver_handle_t *d, int i, const znode *n)
{
	return &d->nodes[i] == n || (i >= n->sub0 && i < n->sub0 + n->nsub);
}

/* An XeLink edge joins a and b, or their tiles. */
static bool joined_by_xelink(const struct _ze_driver_handle_t *d, const znode *a, const znode *b)
{
	for (int e = 0; e < d->edges.n; e++) {
		const zedge *ed = &d->edges.v[e];
		bool in_a = is_or_in(d, ed->a, a), in_b = is_or_in(d, ed->b, b), rin_a = is_or_in(d, ed->b, a),
		     rin_b = is_or_in(d, ed->a, b);
		if (!strcmp(ed->p.model, "XeLink") && ((in_a && in_b) || (rin_a && rin_b)))
			return true;
	}
	return false;
}

static ze_result_t p2p_properties(const znode *a, const znode *b, ze_device_p2p_properties_t *out)
{
	if (!out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (a->driver != b->driver)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	const struct _ze_driver_handle_t *d = &z.drivers.v[a->driver];
	/* The pair's own entry, then its cards', then the pair's relation. */
	for (int pass = 0; pass < 2; pass++) {
		int from = pass ? a->card : (int)(a - d->nodes), to = pass ? b->card : (int)(b - d->nodes);
		for (int k = 0; k < d->p2p.pairs.n; k++) {
			const struct zpair *p = &d->p2p.pairs.v[k];
			if (p->from != from || p->to != to)
				continue;
			if (!p->rc)
				out->flags = p->flags;
			return p->rc;
		}
	}
	int rel = a->card == b->card ? REL_SAME_CARD : joined_by_xelink(d, a, b) ? REL_XELINK : REL_OTHER;
	out->flags = d->p2p.rel[rel];
	return ZE_RESULT_SUCCESS;
}

static ze_result_t vertex_properties(const znode *n, ze_fabric_vertex_exp_properties_t *out)
{
	ze_fabric_vertex_exp_properties_t p = n->vx.p;
	const ze_pci_address_ext_t *a = &n->pci.p.address;
	memcpy(p.uuid.id, n->props.uuid.id, sizeof(p.uuid.id));
	if (p.type == BY_PLACE)
		p.type = n->tile < 0 ? ZE_FABRIC_VERTEX_EXP_TYPE_DEVICE : ZE_FABRIC_VERTEX_EXP_TYPE_SUBDEVICE;
	if (!n->vx.has_pci)
		p.address = n->pci.has ? (ze_fabric_vertex_pci_exp_address_t){ a->domain, a->bus, a->device, a->function }
				       : (ze_fabric_vertex_pci_exp_address_t){ 0, 0, 0, 0 };
	return copy_out(out, &p, sizeof(p));
}

static ze_result_t edges_between(const znode *a, const znode *b, uint32_t *count, ze_fabric_edge_handle_t *out)
{
	const struct _ze_driver_handle_t *d = &z.drivers.v[a->driver];
	int n = a->driver == b->driver ? d->edges.n : 0, ia = (int)(a - d->nodes), ib = (int)(b - d->nodes);
	/* The recorded failure between a and b, if any. */
	for (int k = 0; a->driver == b->driver && k < d->edge_errors.n; k++)
		if (d->edge_errors.v[k].a == ia && d->edge_errors.v[k].b == ib)
			return d->edge_errors.v[k].rc;
	/* Physical edges join two vertices both ways. */
	ZE_LIST(count, out, n, (d->edges.v[i].a == ia && d->edges.v[i].b == ib) ||
				   (d->edges.v[i].a == ib && d->edges.v[i].b == ia), &d->edges.v[i]);
}

/* A card's tile t. */
#define TILE(n, t) (&z.drivers.v[(n)->driver].nodes[(n)->sub0 + (t)])

#define ANSWER_OF_zeDriverGet \
	RC(struct zfile, drivers_rc), true, ZE_LIST(a0, a1, o->drivers.n, o->drivers.v[i].ncards, &o->drivers.v[i])
#define ANSWER_OF_zeDeviceGet \
	RC(struct _ze_driver_handle_t, devices_rc), true, ZE_LIST(a1, a2, o->ncards, true, &o->nodes[i])
#define ANSWER_OF_zeDeviceGetProperties RC(znode, props_rc), false, return device_properties(o, a1)
#define ANSWER_OF_zeDeviceGetSubDevices RC(znode, sub_rc), false, ZE_LIST(a1, a2, o->nsub, true, TILE(o, i))
#define ANSWER_OF_zeDevicePciGetPropertiesExt RC(znode, pci.rc), false, return copy_out(a1, &o->pci.p, sizeof(o->pci.p))
#define ANSWER_OF_zeDeviceGetP2PProperties return p2p_properties(a, b, a2)
#define ANSWER_OF_zeFabricVertexGetExp \
	RC(struct _ze_driver_handle_t, vertices_rc), false, ZE_LIST(a1, a2, o->ncards, o->nodes[i].vx.shown, &o->nodes[i].vh)
#define ANSWER_OF_zeFabricVertexGetSubVerticesExp \
	RC(znode, vx.sub_rc), false, ZE_LIST(a1, a2, o->nsub, TILE(o, i)->vx.shown, &TILE(o, i)->vh)
#define ANSWER_OF_zeFabricVertexGetPropertiesExp RC(znode, vx.rc), false, return vertex_properties(o, a1)
#define ANSWER_OF_zeFabricVertexGetDeviceExp                                                       \
	0, false,                                                                                  \
		return o->vx.p.type == ZE_FABRIC_VERTEX_EXP_TYPE_SWITCH ? ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE \
		       : o->vx.p.remote ? ZE_RESULT_EXP_ERROR_REMOTE_DEVICE                         \
					: (*a1 = o, ZE_RESULT_SUCCESS)
#define ANSWER_OF_zeFabricEdgeGetExp return edges_between(a, b, a2, a3)
#define ANSWER_OF_zeFabricEdgeGetPropertiesExp RC(zedge, rc), true, return copy_out(a1, &o->p, sizeof(o->p))
#define ANSWER_(fn, ret, params, required, shape) ANSWER_##shape(fn, params)
ZE_FUNCTIONS_ARGS(ANSWER_)
#undef ANSWER_

/* This component's answers as Level Zero's function table, less the
 * functions the recorded loader lacked. */
int replay_ze_table(void *table, char *err, size_t errlen)
{
	struct ze_api *api = table;
	const char *library = ZE_LOADER_SONAME;
	memset(api, 0, sizeof(*api));
#define ZE_BIND_(fn, ret, params, required) REPLAY_BIND(fn, required, replay_library_lacks(&z.lib, #fn), "a Level Zero loader")
	ZE_FUNCTIONS(ZE_BIND_)
#undef ZE_BIND_
	return 0;
}
