/*
 * The "level_zero" section: a stand-in Level Zero loader.  This file answers
 * the ze* functions dmaconn calls, with Level Zero's exact signatures, through
 * the function table replay_ze_table() fills, from the topology file
 * (docs/replay-format.md, "level_zero"); record_ze.c records the section.
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
#include "ze_load.h"

#define ZID 24 /* "4095.31" and more */
#define MAX_CARDS 1024
#define MAX_ITEMS 65536 /* edges, p2p pairs, faults */
#define ZPATH REPLAY_PATH_LEN
#define DEFAULT_NAME "Intel(R) Graphics"
#define NOT_INSTALLED ZE_LOADER_SONAME ": cannot open shared object file (replayed)"
#define BY_PLACE UINT32_MAX /* a vertex type the file leaves to the vertex's place */

/* ----------------------------------------------------------------- names */

const struct replay_name ze_type_names[] = {
	{ "GPU", ZE_DEVICE_TYPE_GPU }, { "CPU", ZE_DEVICE_TYPE_CPU }, { "FPGA", ZE_DEVICE_TYPE_FPGA },
	{ "MCA", ZE_DEVICE_TYPE_MCA }, { "VPU", ZE_DEVICE_TYPE_VPU }, { NULL, 0 },
};
const struct replay_name ze_device_flag_names[] = {
	{ "INTEGRATED", ZE_DEVICE_PROPERTY_FLAG_INTEGRATED }, { "SUBDEVICE", ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE },
	{ "ECC", ZE_DEVICE_PROPERTY_FLAG_ECC },		      { "ONDEMANDPAGING", ZE_DEVICE_PROPERTY_FLAG_ONDEMANDPAGING },
	{ NULL, 0 },
};
const struct replay_name ze_p2p_flag_names[] = {
	{ "ACCESS", ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS }, { "ATOMICS", ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS }, { NULL, 0 },
};
const struct replay_name ze_vertex_type_names[] = {
	{ "UNKNOWN", ZE_FABRIC_VERTEX_EXP_TYPE_UNKNOWN },     { "DEVICE", ZE_FABRIC_VERTEX_EXP_TYPE_DEVICE },
	{ "SUBDEVICE", ZE_FABRIC_VERTEX_EXP_TYPE_SUBDEVICE }, { "SWITCH", ZE_FABRIC_VERTEX_EXP_TYPE_SWITCH },
	{ NULL, 0 },
};
const struct replay_name ze_bandwidth_unit_names[] = {
	{ "UNKNOWN", ZE_BANDWIDTH_UNIT_UNKNOWN },
	{ "BYTES_PER_NANOSEC", ZE_BANDWIDTH_UNIT_BYTES_PER_NANOSEC },
	{ "BYTES_PER_CLOCK", ZE_BANDWIDTH_UNIT_BYTES_PER_CLOCK },
	{ NULL, 0 },
};
const struct replay_name ze_latency_unit_names[] = {
	{ "UNKNOWN", ZE_LATENCY_UNIT_UNKNOWN }, { "NANOSEC", ZE_LATENCY_UNIT_NANOSEC },
	{ "CLOCK", ZE_LATENCY_UNIT_CLOCK },     { "HOP", ZE_LATENCY_UNIT_HOP },
	{ NULL, 0 },
};
const struct replay_name ze_duplexity_names[] = {
	{ "UNKNOWN", ZE_FABRIC_EDGE_EXP_DUPLEXITY_UNKNOWN },
	{ "HALF_DUPLEX", ZE_FABRIC_EDGE_EXP_DUPLEXITY_HALF_DUPLEX },
	{ "FULL_DUPLEX", ZE_FABRIC_EDGE_EXP_DUPLEXITY_FULL_DUPLEX },
	{ NULL, 0 },
};

/* ------------------------------------------------------------------ data */

/*
 * What the file says, as the handles zeInit shows: a device handle points at
 * a card or a tile, a vertex handle at the vertex member of one, an edge
 * handle at an edge, a driver handle at a driver.  Each object starts with
 * Level Zero's own structure of its properties, ready to be copied out.
 */
typedef struct _ze_device_handle_t znode;
typedef struct _ze_fabric_edge_handle_t zedge;

struct _ze_fabric_vertex_handle_t {
	char unused;
};

struct _ze_device_handle_t {
	ze_device_properties_t props;
	char id[ZID];	      /* "3" for card 3, "3.1" for its tile 1 */
	int driver, card, tile; /* tile -1 for a card */
	ze_result_t props_rc, sub_rc;
	struct zpci {
		ze_pci_ext_properties_t p;
		ze_result_t rc;
		bool has; /* an address to answer with */
	} pci;
	struct zvertex {
		ze_fabric_vertex_exp_properties_t p; /* type BY_PLACE unless the file names one */
		bool has_pci;			     /* else the device's address */
		ze_result_t rc, sub_rc;		     /* its properties, its sub-vertices */
	} vx;
	bool vertex; /* shown with a fabric vertex */
	int nsub;
	znode *subs; /* a card's tiles */
	struct _ze_fabric_vertex_handle_t vh;
};

struct _ze_fabric_edge_handle_t {
	ze_fabric_edge_exp_properties_t p;
	const znode *a, *b;
	ze_result_t rc; /* its properties' answer; an edge error's */
};

struct zpair {
	char from[ZID], to[ZID];
	ze_result_t rc;
	uint32_t flags;
};

enum { REL_SAME_CARD, REL_XELINK, REL_OTHER, REL_COUNT };
static const char *const rel_keys[REL_COUNT] = { "same_card", "xelink", "other" };

struct _ze_driver_handle_t {
	int ncards, nnodes;
	znode *nodes; /* the cards, then their tiles */
	int nedges, npairs, nedge_errors;
	zedge *edges, *edge_errors; /* zeFabricEdgeGetExp's failures, by pair */
	struct zpair *pairs;
	uint32_t rel[REL_COUNT];
	ze_result_t vertices_rc, devices_rc; /* zeFabricVertexGetExp's and zeDeviceGet's answers */
};

static struct {
	bool present, exposed;
	char *library, *library_error;
	char **missing;
	int nmissing, ndrivers;
	ze_result_t init_rc, drivers_rc; /* zeInit's and zeDriverGet's answers */
	struct _ze_driver_handle_t *drivers;
} z;

static atomic_bool inited; /* zeInit succeeded */

void replay_ze_release(void)
{
	atomic_store(&inited, false);
	for (int d = 0; d < z.ndrivers; d++) {
		free(z.drivers[d].nodes);
		free(z.drivers[d].edges);
		free(z.drivers[d].pairs);
		free(z.drivers[d].edge_errors);
	}
	free(z.drivers);
	for (int i = 0; i < z.nmissing; i++)
		free(z.missing[i]);
	free(z.missing);
	free(z.library);
	free(z.library_error);
	memset(&z, 0, sizeof(z));
}
/* ------------------------------------------------------------ file reader */

struct ld {
	const char *file;
	struct _ze_driver_handle_t *d;
	int driver;
};

static int get_u32(struct ld *ld, json_t *v, const char *path, uint32_t *out)
{
	long long val;
	if (replay_get_int(ld->file, v, path, 0, UINT32_MAX, &val))
		return -1;
	*out = (uint32_t)val;
	return 0;
}

static int ze_parse(const char *name, int *code)
{
	ze_result_t rc;
	int r = ze_result_parse(name, &rc);
	*code = (int)rc;
	return r;
}

static const struct replay_codes ze_codes = { ze_parse, "expected a ze_result_t name such as \"DEVICE_LOST\"",
					      "unknown ze_result_t", ZE_RESULT_ERROR_UNKNOWN };

static int get_code(struct ld *ld, json_t *v, const char *path, ze_result_t *rc)
{
	int code, r = replay_get_code(ld->file, v, path, &ze_codes, &code);
	*rc = (ze_result_t)code;
	return r;
}

/* {"error": NAME}: 1 with *rc its code; 0 when v is not an error object; -1 on a bad one. */
static int error_object(struct ld *ld, json_t *v, const char *path, ze_result_t *rc)
{
	int code = 0, r = replay_error_object(ld->file, v, path, &ze_codes, &code);
	if (r)
		*rc = (ze_result_t)code;
	return r;
}

/* obj[key], when present, a failure's name: 0 (*rc set), or -1. */
static int opt_code(struct ld *ld, json_t *obj, const char *key, const char *path, ze_result_t *rc)
{
	char p[ZPATH];
	json_t *v = json_object_get(obj, key);
	if (!v)
		return 0;
	if (get_code(ld, v, replay_sub(p, path, key), rc))
		return -1;
	return *rc == ZE_RESULT_SUCCESS ? replay_bad(ld->file, p, "SUCCESS is not an error") : 0;
}

static int get_name(struct ld *ld, json_t *v, const char *path, const struct replay_name *t, uint32_t *out)
{
	int value;
	if (json_is_string(v) && !replay_value_of(t, json_string_value(v), &value)) {
		*out = (uint32_t)value;
		return 0;
	}
	char list[256] = "";
	size_t len = 0;
	for (const struct replay_name *e = t; e->name && len < sizeof(list); e++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s\"%s\"", len ? ", " : "", e->name);
	return replay_bad(ld->file, path, "expected one of %s", list);
}

/* An array of flag names, or'ed. */
static int get_flags(struct ld *ld, json_t *v, const char *path, const struct replay_name *t, uint32_t *out)
{
	char p[ZPATH];
	*out = 0;
	if (!json_is_array(v))
		return replay_bad(ld->file, path, "expected an array of flag names");
	for (size_t i = 0; i < json_array_size(v); i++) {
		uint32_t f;
		if (get_name(ld, json_array_get(v, i), replay_item(p, path, i), t, &f))
			return -1;
		*out |= f;
	}
	return 0;
}

/* 32 hex digits, hyphens anywhere ignored. */
static int get_uuid(struct ld *ld, json_t *v, const char *path, uint8_t out[16])
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	int n = 0;
	for (; s && *s && n <= 32; s++) {
		if (*s == '-')
			continue;
		int h = dc_hexval((unsigned char)*s);
		if (h < 0)
			break;
		if (n < 32)
			out[n / 2] = (uint8_t)(n % 2 ? (out[n / 2] | h) : h << 4);
		n++;
	}
	if (!s || *s || n != 32)
		return replay_bad(ld->file, path, "expected a UUID of 32 hex digits (hyphens allowed)");
	return 0;
}

static int read_pci(struct ld *ld, json_t *v, const char *path, znode *node)
{
	char p[ZPATH];
	int r = error_object(ld, v, path, &node->pci.rc);
	if (r)
		return r < 0 ? -1 : 0;
	if (!json_is_object(v))
		return replay_bad(ld->file, path, "expected {\"bus_id\": ...} or an error object");
	json_t *bus = json_object_get(v, "bus_id");
	struct dc_pci a;
	if (!json_is_string(bus) || dc_pci_parse(json_string_value(bus), json_string_length(bus) + 1, &a))
		return replay_bad(ld->file, replay_sub(p, path, "bus_id"), "expected a PCI bus id such as \"0000:18:00.0\"");
	ze_pci_ext_properties_t *pci = &node->pci.p;
	pci->stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
	pci->address = (ze_pci_address_ext_t){ a.domain, a.bus, a.device, a.function };
	pci->maxSpeed = (ze_pci_speed_ext_t){ -1, -1, -1 };
	long long val;
	json_t *e;
	if ((e = json_object_get(v, "gen"))) {
		if (replay_get_int(ld->file, e, replay_sub(p, path, "gen"), -1, INT32_MAX, &val))
			return -1;
		pci->maxSpeed.genVersion = (int32_t)val;
	}
	if ((e = json_object_get(v, "width"))) {
		if (replay_get_int(ld->file, e, replay_sub(p, path, "width"), -1, INT32_MAX, &val))
			return -1;
		pci->maxSpeed.width = (int32_t)val;
	}
	if ((e = json_object_get(v, "max_bandwidth"))) {
		if (replay_get_int(ld->file, e, replay_sub(p, path, "max_bandwidth"), -1, INT64_MAX, &val))
			return -1;
		pci->maxSpeed.maxBandwidth = val;
	}
	node->pci.has = true;
	return 0;
}

static int read_vertex(struct ld *ld, json_t *v, const char *path, znode *node)
{
	char p[ZPATH];
	node->vertex = true;
	node->vx.p.type = BY_PLACE;
	if (!v)
		return 0;
	if (json_is_boolean(v)) {
		node->vertex = json_is_true(v);
		return 0;
	}
	if (!json_is_object(v))
		return replay_bad(ld->file, path, "expected true, false or an object");
	json_t *e;
	if ((e = json_object_get(v, "type")) && get_name(ld, e, replay_sub(p, path, "type"), ze_vertex_type_names, &node->vx.p.type))
		return -1;
	if ((e = json_object_get(v, "remote"))) {
		if (!json_is_boolean(e))
			return replay_bad(ld->file, replay_sub(p, path, "remote"), "expected true or false");
		node->vx.p.remote = json_is_true(e);
	}
	if ((e = json_object_get(v, "bus_id"))) {
		struct dc_pci a;
		if (!json_is_string(e) || dc_pci_parse(json_string_value(e), json_string_length(e) + 1, &a))
			return replay_bad(ld->file, replay_sub(p, path, "bus_id"), "expected a PCI bus id");
		node->vx.has_pci = true;
		node->vx.p.address = (ze_fabric_vertex_pci_exp_address_t){ a.domain, a.bus, a.device, a.function };
	}
	if (opt_code(ld, v, "error", path, &node->vx.rc) ||
	    opt_code(ld, v, "subvertices_error", path, &node->vx.sub_rc))
		return -1;
	return 0;
}

static int read_node(struct ld *ld, json_t *o, const char *path, znode *node, const znode *card);

static int read_subdevices(struct ld *ld, json_t *v, const char *path, znode *card)
{
	char p[ZPATH];
	int r = error_object(ld, v, path, &card->sub_rc);
	if (r)
		return r < 0 ? -1 : 0;
	if (!json_is_array(v))
		return replay_bad(ld->file, path, "expected an array of tiles or an error object");
	size_t n = json_array_size(v);
	if (n > REPLAY_MAX_TILES)
		return replay_bad(ld->file, path, "%zu tiles, more than the %d supported", n, REPLAY_MAX_TILES);
	if (n == 1 && !z.exposed)
		return replay_bad(ld->file, path, "a card has no tiles or at least two (a single-tile card lists none)");
	card->subs = &ld->d->nodes[ld->d->nnodes];
	ld->d->nnodes += (int)n;
	card->nsub = (int)n;
	for (size_t t = 0; t < n; t++) {
		znode *tile = &card->subs[t];
		tile->card = card->card;
		tile->driver = ld->driver;
		tile->tile = (int)t;
		snprintf(tile->id, sizeof(tile->id), "%d.%zu", card->card, t);
		if (read_node(ld, json_array_get(v, t), replay_item(p, path, t), tile, card))
			return -1;
	}
	return 0;
}

/* A card (card NULL) or one of its tiles. */
static int read_node(struct ld *ld, json_t *o, const char *path, znode *node, const znode *card)
{
	char p[ZPATH];
	json_t *v;
	if (!json_is_object(o))
		return replay_bad(ld->file, path, "expected a device object");
	node->props.type = ZE_DEVICE_TYPE_GPU;
	node->props.vendorId = 0x8086;
	snprintf(node->props.name, sizeof(node->props.name), "%s", card ? card->props.name : DEFAULT_NAME);
	if (card) {
		node->props.deviceId = card->props.deviceId;
		node->props.vendorId = card->props.vendorId;
		node->props.type = card->props.type;
		node->props.flags = z.exposed ? 0 : ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE;
		node->props.subdeviceId = (uint32_t)node->tile;
		/* A tile's address and UUID default to its card's, the UUID with
		 * its last byte marked by the tile. */
		node->props.uuid = card->props.uuid;
		node->props.uuid.id[15] ^= (uint8_t)(node->tile + 1);
		node->pci = card->pci;
	}
	if ((v = json_object_get(o, "error")) && get_code(ld, v, replay_sub(p, path, "error"), &node->props_rc))
		return -1;
	if (v && node->props_rc == ZE_RESULT_SUCCESS)
		return replay_bad(ld->file, p, "SUCCESS is not an error");
	if ((v = json_object_get(o, "name"))) {
		if (!json_is_string(v) || json_string_length(v) >= ZE_MAX_DEVICE_NAME)
			return replay_bad(ld->file, replay_sub(p, path, "name"), "expected a string of at most %d characters",
					  ZE_MAX_DEVICE_NAME - 1);
		memcpy(node->props.name, json_string_value(v), json_string_length(v) + 1);
	}
	if ((v = json_object_get(o, "uuid"))) {
		if (get_uuid(ld, v, replay_sub(p, path, "uuid"), node->props.uuid.id))
			return -1;
	} else if (!card && !z.exposed && node->props_rc == ZE_RESULT_SUCCESS) {
		return replay_bad(ld->file, path, "\"uuid\" is required");
	}
	if ((v = json_object_get(o, "vendor_id")) && get_u32(ld, v, replay_sub(p, path, "vendor_id"), &node->props.vendorId))
		return -1;
	if ((v = json_object_get(o, "device_id")) && get_u32(ld, v, replay_sub(p, path, "device_id"), &node->props.deviceId))
		return -1;
	if ((v = json_object_get(o, "type")) && get_name(ld, v, replay_sub(p, path, "type"), ze_type_names, &node->props.type))
		return -1;
	if ((v = json_object_get(o, "flags")) &&
	    get_flags(ld, v, replay_sub(p, path, "flags"), ze_device_flag_names, &node->props.flags))
		return -1;
	if ((v = json_object_get(o, "subdevice_id")) &&
	    get_u32(ld, v, replay_sub(p, path, "subdevice_id"), &node->props.subdeviceId))
		return -1;
	if ((v = json_object_get(o, "pci")) && read_pci(ld, v, replay_sub(p, path, "pci"), node))
		return -1;
	if (!card && !node->pci.has && node->pci.rc == ZE_RESULT_SUCCESS)
		node->pci.rc = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* nothing to answer with */
	if (read_vertex(ld, json_object_get(o, "vertex"), replay_sub(p, path, "vertex"), node))
		return -1;
	if ((v = json_object_get(o, "subdevices"))) {
		if (card)
			return replay_bad(ld->file, replay_sub(p, path, "subdevices"), "a tile has no tiles of its own");
		if (read_subdevices(ld, v, replay_sub(p, path, "subdevices"), node))
			return -1;
	}
	return 0;
}

/* The node named id ("C" or "C.T") of driver d, or NULL. */
static const znode *node_by_id(const struct _ze_driver_handle_t *d, const char *id)
{
	char *end;
	long c = strtol(id, &end, 10);
	if (end == id || c < 0 || c >= d->ncards)
		return NULL;
	const znode *card = &d->nodes[c];
	if (!*end)
		return card;
	if (*end != '.')
		return NULL;
	const char *t = end + 1;
	long tile = strtol(t, &end, 10);
	if (end == t || *end || tile < 0 || tile >= card->nsub)
		return NULL;
	return &card->subs[tile];
}

static int get_id(struct ld *ld, json_t *v, const char *path, const struct _ze_driver_handle_t *d, char out[ZID],
		  const znode **node)
{
	const znode *n = json_is_string(v) ? node_by_id(d, json_string_value(v)) : NULL;
	if (!n)
		return replay_bad(ld->file, path, "expected the id of a device of this driver, \"C\" or \"C.T\"");
	snprintf(out, ZID, "%s", n->id);
	if (node)
		*node = n;
	return 0;
}

static int read_edge(struct ld *ld, json_t *o, const char *path, const struct _ze_driver_handle_t *d, zedge *e)
{
	char p[ZPATH], id[ZID];
	json_t *v;
	if (!json_is_object(o))
		return replay_bad(ld->file, path, "expected an edge object");
	if (get_id(ld, json_object_get(o, "a"), replay_sub(p, path, "a"), d, id, &e->a) ||
	    get_id(ld, json_object_get(o, "b"), replay_sub(p, path, "b"), d, id, &e->b))
		return -1;
	if (e->a == e->b)
		return replay_bad(ld->file, path, "an edge joins two different vertices");
	ze_fabric_edge_exp_properties_t *pr = &e->p;
	pr->stype = ZE_STRUCTURE_TYPE_FABRIC_EDGE_EXP_PROPERTIES;
	v = json_object_get(o, "model");
	if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) >= ZE_MAX_FABRIC_EDGE_MODEL_EXP_SIZE)
		return replay_bad(ld->file, replay_sub(p, path, "model"), "expected the edge's model, e.g. \"XeLink\" or \"MDFI\"");
	memcpy(pr->model, json_string_value(v), json_string_length(v) + 1);
	if ((v = json_object_get(o, "bandwidth")) && get_u32(ld, v, replay_sub(p, path, "bandwidth"), &pr->bandwidth))
		return -1;
	if ((v = json_object_get(o, "bandwidth_unit")) &&
	    get_name(ld, v, replay_sub(p, path, "bandwidth_unit"), ze_bandwidth_unit_names, &pr->bandwidthUnit))
		return -1;
	if ((v = json_object_get(o, "latency")) && get_u32(ld, v, replay_sub(p, path, "latency"), &pr->latency))
		return -1;
	if ((v = json_object_get(o, "latency_unit")) &&
	    get_name(ld, v, replay_sub(p, path, "latency_unit"), ze_latency_unit_names, &pr->latencyUnit))
		return -1;
	if ((v = json_object_get(o, "duplexity")) &&
	    get_name(ld, v, replay_sub(p, path, "duplexity"), ze_duplexity_names, &pr->duplexity))
		return -1;
	if ((v = json_object_get(o, "uuid")) && get_uuid(ld, v, replay_sub(p, path, "uuid"), pr->uuid.id))
		return -1;
	return opt_code(ld, o, "error", path, &e->rc);
}

static int read_p2p(struct ld *ld, json_t *o, const char *path, struct _ze_driver_handle_t *d)
{
	char p[ZPATH], q[ZPATH];
	json_t *v;
	if (!json_is_object(o))
		return replay_bad(ld->file, path, "expected an object");
	for (int r = 0; r < REL_COUNT; r++)
		if ((v = json_object_get(o, rel_keys[r])) &&
		    get_flags(ld, v, replay_sub(p, path, rel_keys[r]), ze_p2p_flag_names, &d->rel[r]))
			return -1;
	if (!(v = json_object_get(o, "pairs")))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > MAX_ITEMS)
		return replay_bad(ld->file, replay_sub(p, path, "pairs"), "expected an array of at most %d pairs", MAX_ITEMS);
	size_t n = json_array_size(v);
	if (n && !(d->pairs = calloc(n, sizeof(*d->pairs))))
		return replay_bad(ld->file, path, "out of memory");
	d->npairs = (int)n;
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(v, i);
		struct zpair *pr = &d->pairs[i];
		replay_item(q, replay_sub(p, path, "pairs"), i);
		if (!json_is_object(e))
			return replay_bad(ld->file, q, "expected {\"from\", \"to\", \"flags\" or \"error\"}");
		if (get_id(ld, json_object_get(e, "from"), replay_sub(p, q, "from"), d, pr->from, NULL) ||
		    get_id(ld, json_object_get(e, "to"), replay_sub(p, q, "to"), d, pr->to, NULL))
			return -1;
		int r = error_object(ld, e, q, &pr->rc);
		if (r < 0)
			return -1;
		json_t *f = json_object_get(e, "flags");
		if (!r && !f)
			return replay_bad(ld->file, q, "\"flags\" or \"error\" is required");
		if (f && get_flags(ld, f, replay_sub(p, q, "flags"), ze_p2p_flag_names, &pr->flags))
			return -1;
	}
	return 0;
}

static int read_driver(struct ld *ld, json_t *o, const char *path, struct _ze_driver_handle_t *d)
{
	char p[ZPATH];
	json_t *v;
	if (!json_is_object(o))
		return replay_bad(ld->file, path, "expected a driver object");
	d->rel[REL_SAME_CARD] = d->rel[REL_XELINK] =
		ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS | ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS;
	if ((v = json_object_get(o, "default_hierarchy"))) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";
		if (strcmp(s, "COMPOSITE") && strcmp(s, "FLAT") && strcmp(s, "COMBINED"))
			return replay_bad(ld->file, replay_sub(p, path, "default_hierarchy"),
					  "expected \"COMPOSITE\", \"FLAT\" or \"COMBINED\"");
	}
	v = json_object_get(o, "devices");
	if (v && (!json_is_array(v) || json_array_size(v) > MAX_CARDS))
		return replay_bad(ld->file, replay_sub(p, path, "devices"), "expected an array of at most %d devices", MAX_CARDS);
	size_t n = v ? json_array_size(v) : 0, nodes = n;
	for (size_t c = 0; c < n; c++) {
		json_t *s = json_object_get(json_array_get(v, c), "subdevices");
		nodes += json_array_size(s) <= REPLAY_MAX_TILES ? json_array_size(s) : 0;
	}
	if (nodes && !(d->nodes = calloc(nodes, sizeof(*d->nodes))))
		return replay_bad(ld->file, path, "out of memory");
	d->ncards = d->nnodes = (int)n;
	ld->d = d;
	for (size_t c = 0; c < n; c++) {
		znode *card = &d->nodes[c];
		card->card = (int)c;
		card->driver = ld->driver;
		card->tile = -1;
		snprintf(card->id, sizeof(card->id), "%zu", c);
		char q[ZPATH];
		if (read_node(ld, json_array_get(v, c), replay_item(q, replay_sub(p, path, "devices"), c), card, NULL))
			return -1;
	}
	/* A tile has a vertex only where its card has one. */
	for (int t = d->ncards; t < d->nnodes; t++)
		d->nodes[t].vertex &= d->nodes[d->nodes[t].card].vertex;
	if ((v = json_object_get(o, "edges"))) {
		if (!json_is_array(v) || json_array_size(v) > MAX_ITEMS)
			return replay_bad(ld->file, replay_sub(p, path, "edges"), "expected an array of at most %d edges", MAX_ITEMS);
		size_t ne = json_array_size(v);
		if (ne && !(d->edges = calloc(ne, sizeof(*d->edges))))
			return replay_bad(ld->file, path, "out of memory");
		d->nedges = (int)ne;
		for (size_t e = 0; e < ne; e++) {
			char q[ZPATH];
			if (read_edge(ld, json_array_get(v, e), replay_item(q, replay_sub(p, path, "edges"), e), d, &d->edges[e]))
				return -1;
		}
	}
	if ((v = json_object_get(o, "p2p")) && read_p2p(ld, v, replay_sub(p, path, "p2p"), d))
		return -1;
	if ((v = json_object_get(o, "vertices_error")) &&
	    get_code(ld, v, replay_sub(p, path, "vertices_error"), &d->vertices_rc))
		return -1;
	if (opt_code(ld, o, "devices_error", path, &d->devices_rc))
		return -1;
	/* zeFabricEdgeGetExp failing between two vertices: {"a", "b", "error"}. */
	if (!(v = json_object_get(o, "edge_errors")))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > MAX_ITEMS)
		return replay_bad(ld->file, replay_sub(p, path, "edge_errors"), "expected an array of at most %d failures",
				  MAX_ITEMS);
	size_t nerr = json_array_size(v);
	if (nerr && !(d->edge_errors = calloc(nerr, sizeof(*d->edge_errors))))
		return replay_bad(ld->file, path, "out of memory");
	d->nedge_errors = (int)nerr;
	for (size_t i = 0; i < nerr; i++) {
		char q[ZPATH], id[ZID];
		zedge *e = &d->edge_errors[i];
		json_t *o2 = json_array_get(v, i);
		replay_item(q, replay_sub(p, path, "edge_errors"), i);
		if (!json_is_object(o2) || !json_object_get(o2, "error"))
			return replay_bad(ld->file, q, "expected {\"a\", \"b\", \"error\"}");
		if (get_id(ld, json_object_get(o2, "a"), replay_sub(p, q, "a"), d, id, &e->a) ||
		    get_id(ld, json_object_get(o2, "b"), replay_sub(p, q, "b"), d, id, &e->b) ||
		    opt_code(ld, o2, "error", q, &e->rc))
			return -1;
	}
	return 0;
}

static int read_names(struct ld *ld, json_t *v, const char *path)
{
	char p[ZPATH];
	if (!json_is_array(v) || json_array_size(v) > 4096)
		return replay_bad(ld->file, path, "expected an array of function names");
	size_t n = json_array_size(v);
	if (n && !(z.missing = calloc(n, sizeof(*z.missing))))
		return replay_bad(ld->file, path, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(v, i);
		if (!json_is_string(e))
			return replay_bad(ld->file, replay_item(p, path, i), "expected a function name");
		if (!(z.missing[i] = strdup(json_string_value(e))))
			return replay_bad(ld->file, path, "out of memory");
		z.nmissing = (int)i + 1;
	}
	return 0;
}

int replay_ze_read(const char *file, json_t *value)
{
	struct ld ld = { file, NULL, 0 };
	char p[ZPATH];
	json_t *v;
	replay_ze_release();
	if (!json_is_object(value))
		return replay_bad(file, "level_zero", "expected an object");
	z.present = true;
	if ((v = json_object_get(value, "library"))) {
		json_t *e = json_is_object(v) ? json_object_get(v, "error") : NULL;
		if (json_is_string(v))
			z.library = strdup(json_string_value(v));
		else if (json_is_string(e))
			z.library_error = strdup(json_string_value(e));
		else
			return replay_bad(file, "level_zero.library",
					  "expected the loader's name or {\"error\": \"loader message\"}");
		if (!z.library && !z.library_error)
			return replay_bad(file, "level_zero.library", "out of memory");
		if (z.library_error)
			return 0; /* nothing else can be reached */
	}
	if ((v = json_object_get(value, "missing_functions")) && read_names(&ld, v, "level_zero.missing_functions"))
		return -1;
	if (opt_code(&ld, value, "drivers_error", "level_zero", &z.drivers_rc))
		return -1;
	z.init_rc = ZE_RESULT_SUCCESS;
	if ((v = json_object_get(value, "init"))) {
		json_t *e = json_is_object(v) ? json_object_get(v, "error") : NULL;
		if (get_code(&ld, e ? e : v, e ? "level_zero.init.error" : "level_zero.init", &z.init_rc))
			return -1;
	}
	if ((v = json_object_get(value, "exposed"))) {
		if (!json_is_boolean(v))
			return replay_bad(file, "level_zero.exposed", "expected true or false");
		z.exposed = json_is_true(v);
	}
	if ((v = json_object_get(value, "drivers"))) {
		if (!json_is_array(v) || json_array_size(v) > 64)
			return replay_bad(file, "level_zero.drivers", "expected an array of at most 64 drivers");
		size_t n = json_array_size(v);
		if (n && !(z.drivers = calloc(n, sizeof(*z.drivers))))
			return replay_bad(file, "level_zero.drivers", "out of memory");
		z.ndrivers = (int)n;
		for (size_t d = 0; d < n; d++) {
			ld.driver = (int)d;
			if (read_driver(&ld, json_array_get(v, d), replay_item(p, "level_zero.drivers", d), &z.drivers[d]))
				return -1;
		}
	}
	return 0;
}

const char *replay_ze_library(void)
{
	return z.library ? z.library : ZE_LOADER_SONAME;
}

const char *replay_ze_load_error(void)
{
	return z.present ? z.library_error : NOT_INSTALLED;
}

static int ze_hidden(const char *symbol)
{
	for (int i = 0; symbol && i < z.nmissing; i++)
		if (!strcmp(z.missing[i], symbol))
			return 1;
	return 0;
}

/* -------------------------------------------------------------- prologue */

static bool usable(void)
{
	return dmaconn_replay_ops()->load_error() == NULL && z.present && !z.library_error;
}

/* What every call but zeInit checks first; fn is the function's name. */
static ze_result_t enter(const char *fn)
{
	if (!usable())
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (ze_hidden(fn))
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	return atomic_load(&inited) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
}

/* The Level Zero name of the replay_ze* function calling. */
#define FN (__func__ + sizeof("replay_") - 1)

/* h when it points at one of the n items of size bytes at base, else NULL. */
static void *among(const void *h, const void *base, int n, size_t size)
{
	uintptr_t p = (uintptr_t)h, b = (uintptr_t)base;
	return h && base && p >= b && (p - b) % size == 0 && (p - b) / size < (size_t)n ? (void *)h : NULL;
}

/* The object a handle names (a vertex handle: its device), or NULL.  A
 * driver without devices is not shown. */
static void *drv_of(const void *h)
{
	struct _ze_driver_handle_t *d = among(h, z.drivers, z.ndrivers, sizeof(*d));
	return d && d->ncards ? d : NULL;
}

static void *dev_of(const void *h)
{
	for (int d = 0; d < z.ndrivers; d++)
		if (among(h, z.drivers[d].nodes, z.drivers[d].nnodes, sizeof(znode)))
			return (void *)h;
	return NULL;
}

static void *vtx_of(const void *h)
{
	znode *n = h ? dev_of((const void *)((uintptr_t)h - offsetof(znode, vh))) : NULL;
	return n && n->vertex ? n : NULL;
}

static void *edge_of(const void *h)
{
	for (int d = 0; d < z.ndrivers; d++)
		if (among(h, z.drivers[d].edges, z.drivers[d].nedges, sizeof(zedge)))
			return (void *)h;
	return NULL;
}

/* enter(fn), then the object of handle h (of() finds it), or NULL with *rc. */
static void *enter_h(const char *fn, void *(*of)(const void *), const void *h, ze_result_t *rc)
{
	void *o = NULL;
	if (!(*rc = enter(fn)) && !(o = of(h)))
		*rc = h ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return o;
}

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

/* *dst = *src, but for the caller's stype and pNext. */
#define ZE_COPY(dst, src)                                  \
	do {                                               \
		ze_structure_type_t stype_ = (dst)->stype; \
		void *next_ = (dst)->pNext;                \
		*(dst) = *(src);                           \
		(dst)->stype = stype_;                     \
		(dst)->pNext = next_;                      \
	} while (0)

/* ------------------------------------------------------ Level Zero: core */

static ze_result_t replay_zeInit(ze_init_flags_t flags)
{
	if (!usable())
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (flags > (ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (z.init_rc != ZE_RESULT_SUCCESS)
		return z.init_rc;
	/* A loader whose drivers have no devices fails (the runtime reports none). */
	for (int d = 0; d < z.ndrivers; d++)
		if (z.drivers[d].ncards) {
			atomic_store(&inited, true);
			return ZE_RESULT_SUCCESS;
		}
	return ZE_RESULT_ERROR_UNINITIALIZED;
}

static ze_result_t replay_zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
	ze_result_t rc = enter(FN);
	if (rc || (rc = z.drivers_rc))
		return rc;
	ZE_LIST(pCount, phDrivers, z.ndrivers, z.drivers[i].ncards, &z.drivers[i]);
}

static ze_result_t replay_zeDeviceGet(ze_driver_handle_t hDriver, uint32_t *pCount, ze_device_handle_t *phDevices)
{
	ze_result_t rc;
	struct _ze_driver_handle_t *d = enter_h(FN, drv_of, hDriver, &rc);
	if (rc || (rc = d->devices_rc))
		return rc;
	ZE_LIST(pCount, phDevices, d->ncards, true, &d->nodes[i]);
}

static ze_result_t replay_zeDeviceGetProperties(ze_device_handle_t hDevice, ze_device_properties_t *pDeviceProperties)
{
	ze_result_t rc;
	znode *n = enter_h(FN, dev_of, hDevice, &rc);
	if (rc)
		return rc;
	if (!pDeviceProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (n->props_rc)
		return n->props_rc;
	ZE_COPY(pDeviceProperties, &n->props);
	/* A tile of a physical description shown as a root device is no
	 * sub-device to the caller, as in the runtime. */
	if (!z.exposed && n->tile < 0) {
		pDeviceProperties->flags &= ~(uint32_t)ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE;
		pDeviceProperties->subdeviceId = 0;
	}
	return ZE_RESULT_SUCCESS;
}

static ze_result_t replay_zeDeviceGetSubDevices(ze_device_handle_t hDevice, uint32_t *pCount, ze_device_handle_t *phSubdevices)
{
	ze_result_t rc;
	znode *n = enter_h(FN, dev_of, hDevice, &rc);
	if (rc)
		return rc;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (n->sub_rc)
		return n->sub_rc;
	ZE_LIST(pCount, phSubdevices, n->nsub, true, &n->subs[i]);
}

static ze_result_t replay_zeDevicePciGetPropertiesExt(ze_device_handle_t hDevice, ze_pci_ext_properties_t *pPciProperties)
{
	ze_result_t rc;
	znode *n = enter_h(FN, dev_of, hDevice, &rc);
	if (rc)
		return rc;
	if (!pPciProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (n->pci.rc)
		return n->pci.rc;
	ZE_COPY(pPciProperties, &n->pci.p);
	return ZE_RESULT_SUCCESS;
}

/* An XeLink edge joins a and b, or their tiles. */
static bool joined_by_xelink(const struct _ze_driver_handle_t *d, const znode *a, const znode *b)
{
	for (int e = 0; e < d->nedges; e++) {
		const zedge *ed = &d->edges[e];
		if (strcmp(ed->p.model, "XeLink"))
			continue;
		bool in_a = ed->a == a, in_b = ed->b == b, rin_a = ed->b == a, rin_b = ed->a == b;
		for (int s = 0; s < a->nsub; s++) {
			in_a |= ed->a == &a->subs[s];
			rin_a |= ed->b == &a->subs[s];
		}
		for (int s = 0; s < b->nsub; s++) {
			in_b |= ed->b == &b->subs[s];
			rin_b |= ed->a == &b->subs[s];
		}
		if ((in_a && in_b) || (rin_a && rin_b))
			return true;
	}
	return false;
}

static ze_result_t replay_zeDeviceGetP2PProperties(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
						   ze_device_p2p_properties_t *pP2PProperties)
{
	ze_result_t rc = enter(FN);
	if (rc)
		return rc;
	znode *a = dev_of(hDevice), *b = dev_of(hPeerDevice);
	if (!a || !b)
		return (hDevice && hPeerDevice) ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pP2PProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (a->driver != b->driver)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	const struct _ze_driver_handle_t *d = &z.drivers[a->driver];
	/* The pair's own entry, then its cards', then the pair's relation. */
	for (int pass = 0; pass < 2; pass++) {
		const char *from = pass ? d->nodes[a->card].id : a->id, *to = pass ? d->nodes[b->card].id : b->id;
		for (int k = 0; k < d->npairs; k++) {
			const struct zpair *p = &d->pairs[k];
			if (strcmp(p->from, from) || strcmp(p->to, to))
				continue;
			if (p->rc)
				return p->rc;
			pP2PProperties->flags = p->flags;
			return ZE_RESULT_SUCCESS;
		}
	}
	int rel = a->card == b->card ? REL_SAME_CARD : joined_by_xelink(d, a, b) ? REL_XELINK : REL_OTHER;
	pP2PProperties->flags = d->rel[rel];
	return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------- Level Zero: fabric */

static ze_result_t replay_zeFabricVertexGetExp(ze_driver_handle_t hDriver, uint32_t *pCount, ze_fabric_vertex_handle_t *phVertices)
{
	ze_result_t rc;
	struct _ze_driver_handle_t *d = enter_h(FN, drv_of, hDriver, &rc);
	if (rc)
		return rc;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (d->vertices_rc)
		return d->vertices_rc;
	ZE_LIST(pCount, phVertices, d->ncards, d->nodes[i].vertex, &d->nodes[i].vh);
}

static ze_result_t replay_zeFabricVertexGetSubVerticesExp(ze_fabric_vertex_handle_t hVertex, uint32_t *pCount,
							  ze_fabric_vertex_handle_t *phSubvertices)
{
	ze_result_t rc;
	znode *n = enter_h(FN, vtx_of, hVertex, &rc);
	if (rc)
		return rc;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (n->vx.sub_rc)
		return n->vx.sub_rc;
	ZE_LIST(pCount, phSubvertices, n->nsub, n->subs[i].vertex, &n->subs[i].vh);
}

static ze_result_t replay_zeFabricVertexGetPropertiesExp(ze_fabric_vertex_handle_t hVertex,
							 ze_fabric_vertex_exp_properties_t *pVertexProperties)
{
	ze_result_t rc;
	znode *n = enter_h(FN, vtx_of, hVertex, &rc);
	if (rc)
		return rc;
	if (!pVertexProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (n->vx.rc)
		return n->vx.rc;
	ze_fabric_vertex_exp_properties_t p = n->vx.p;
	const ze_pci_address_ext_t *a = &n->pci.p.address;
	memcpy(p.uuid.id, n->props.uuid.id, sizeof(p.uuid.id));
	if (p.type == BY_PLACE)
		p.type = n->tile < 0 ? ZE_FABRIC_VERTEX_EXP_TYPE_DEVICE : ZE_FABRIC_VERTEX_EXP_TYPE_SUBDEVICE;
	if (!n->vx.has_pci)
		p.address = n->pci.has ? (ze_fabric_vertex_pci_exp_address_t){ a->domain, a->bus, a->device, a->function }
				       : (ze_fabric_vertex_pci_exp_address_t){ 0, 0, 0, 0 };
	ZE_COPY(pVertexProperties, &p);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t replay_zeFabricVertexGetDeviceExp(ze_fabric_vertex_handle_t hVertex, ze_device_handle_t *phDevice)
{
	ze_result_t rc;
	znode *n = enter_h(FN, vtx_of, hVertex, &rc);
	if (rc)
		return rc;
	if (!phDevice)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (n->vx.p.type == ZE_FABRIC_VERTEX_EXP_TYPE_SWITCH)
		return ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE;
	if (n->vx.p.remote)
		return ZE_RESULT_EXP_ERROR_REMOTE_DEVICE;
	*phDevice = n;
	return ZE_RESULT_SUCCESS;
}

static bool joins(const zedge *e, const znode *a, const znode *b)
{
	return (e->a == a && e->b == b) || (e->a == b && e->b == a);
}

static ze_result_t replay_zeFabricEdgeGetExp(ze_fabric_vertex_handle_t hVertexA, ze_fabric_vertex_handle_t hVertexB,
					     uint32_t *pCount, ze_fabric_edge_handle_t *phEdges)
{
	ze_result_t rc = enter(FN);
	if (rc)
		return rc;
	znode *a = vtx_of(hVertexA), *b = vtx_of(hVertexB);
	if (!a || !b)
		return (hVertexA && hVertexB) ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	const struct _ze_driver_handle_t *d = &z.drivers[a->driver];
	int n = a->driver == b->driver ? d->nedges : 0;
	/* The recorded failure between a and b, if any. */
	for (int k = 0; a->driver == b->driver && k < d->nedge_errors; k++)
		if (d->edge_errors[k].a == a && d->edge_errors[k].b == b)
			return d->edge_errors[k].rc;
	/* Physical edges join two vertices both ways. */
	ZE_LIST(pCount, phEdges, n, joins(&d->edges[i], a, b), &d->edges[i]);
}

static ze_result_t replay_zeFabricEdgeGetPropertiesExp(ze_fabric_edge_handle_t hEdge,
						       ze_fabric_edge_exp_properties_t *pEdgeProperties)
{
	ze_result_t rc;
	zedge *e = enter_h(FN, edge_of, hEdge, &rc);
	if (rc || (rc = e->rc))
		return rc;
	if (!pEdgeProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	ZE_COPY(pEdgeProperties, &e->p);
	return ZE_RESULT_SUCCESS;
}

/* This component's answers as Level Zero's function table, less the
 * functions the recorded loader lacked. */
int replay_ze_table(struct ze_api *api, char *err, size_t errlen)
{
	memset(api, 0, sizeof(*api));
#define REPLAY_TABLE_(fn, ret, params, required)                                                       \
	if (!ze_hidden(#fn)) {                                                                         \
		api->fn = replay_##fn;                                                                 \
	} else if (required) {                                                                         \
		snprintf(err, errlen, "%s lacks %s (not a Level Zero loader?)", ZE_LOADER_SONAME, #fn); \
		memset(api, 0, sizeof(*api));                                                          \
		return -1;                                                                             \
	}
	ZE_FUNCTIONS(REPLAY_TABLE_)
#undef REPLAY_TABLE_
	return 0;
}
