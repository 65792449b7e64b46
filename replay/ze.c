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
 * the test stand-in (tests/replay_faults.c), not here.
 *
 * The file is read once; after zeInit everything is read-only, so the
 * functions may be called from any thread.
 */
#include "replay_ze.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pci.h"
#include "replay_internal.h"
#include "ze_load.h"


#define ZID 24                /* "4095.31" and more */
#define MAX_CARDS 1024
#define MAX_TILES REPLAY_MAX_TILES
#define MAX_ITEMS 65536       /* edges, p2p pairs, faults */
#define ZPATH REPLAY_PATH_LEN
#define DEFAULT_NAME "Intel(R) Graphics"
#define NOT_INSTALLED ZE_LOADER_SONAME ": cannot open shared object file (replayed)"

/* ------------------------------------------------------------- functions */

enum ze_fn {
#define ZFN_ENUM_(name, ret, params, required) ZFN_##name,
	ZE_FUNCTIONS(ZFN_ENUM_)
#undef ZFN_ENUM_
	ZFN_COUNT
};

static const char *const zfn_names[ZFN_COUNT] = {
#define ZFN_NAME_(name, ret, params, required) [ZFN_##name] = #name,
	ZE_FUNCTIONS(ZFN_NAME_)
#undef ZFN_NAME_
};

/* ----------------------------------------------------------------- names */


const struct replay_name ze_type_names[] = {
	{ "GPU", ZE_DEVICE_TYPE_GPU }, { "CPU", ZE_DEVICE_TYPE_CPU }, { "FPGA", ZE_DEVICE_TYPE_FPGA },
	{ "MCA", ZE_DEVICE_TYPE_MCA }, { "VPU", ZE_DEVICE_TYPE_VPU }, { NULL, 0 },
};
const struct replay_name ze_device_flag_names[] = {
	{ "INTEGRATED", ZE_DEVICE_PROPERTY_FLAG_INTEGRATED },
	{ "SUBDEVICE", ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE },
	{ "ECC", ZE_DEVICE_PROPERTY_FLAG_ECC },
	{ "ONDEMANDPAGING", ZE_DEVICE_PROPERTY_FLAG_ONDEMANDPAGING },
	{ NULL, 0 },
};
const struct replay_name ze_p2p_flag_names[] = {
	{ "ACCESS", ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS },
	{ "ATOMICS", ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS },
	{ NULL, 0 },
};
const struct replay_name ze_vertex_type_names[] = {
	{ "UNKNOWN", ZE_FABRIC_VERTEX_EXP_TYPE_UNKNOWN }, { "DEVICE", ZE_FABRIC_VERTEX_EXP_TYPE_DEVICE },
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

/* A card or a tile as the file describes it. */
struct znode {
	char id[ZID]; /* "3" for card 3, "3.1" for its tile 1 */
	int card, tile; /* tile -1 for a card */
	ze_result_t props_rc;
	char name[ZE_MAX_DEVICE_NAME];
	uint8_t uuid[16];
	uint32_t vendor, device_id, type, flags, subdevice_id;
	ze_result_t pci_rc;
	bool has_pci;
	ze_pci_ext_properties_t pci;
	ze_result_t sub_rc;
	int nsub;
	struct znode *subs; /* cards only */
	bool vertex;        /* has a fabric vertex */
	int vertex_type;    /* a ze_fabric_vertex_exp_type_t, or -1: by its place */
	bool vertex_remote;
	bool vertex_has_pci;
	ze_fabric_vertex_pci_exp_address_t vertex_pci;
	ze_result_t vertex_rc, subvertices_rc; /* the vertex's properties, its sub-vertices */
};

struct zedge {
	const struct znode *a, *b;
	ze_fabric_edge_exp_properties_t props;
	ze_result_t rc; /* its properties' answer */
};

struct zpair {
	char from[ZID], to[ZID];
	ze_result_t rc;
	uint32_t flags;
};

enum { REL_SAME_CARD, REL_XELINK, REL_OTHER, REL_COUNT };
static const char *const rel_keys[REL_COUNT] = { "same_card", "xelink", "other" };

struct zdriver {
	int ncards;
	struct znode *cards;
	int nedges;
	struct zedge *edges;
	uint32_t rel[REL_COUNT];
	int npairs;
	struct zpair *pairs;
	ze_result_t vertices_rc; /* zeFabricVertexGetExp's answer */
	ze_result_t devices_rc;  /* zeDeviceGet's */
	int nedge_errors;        /* zeFabricEdgeGetExp's failures, by pair */
	struct zedge *edge_errors;
};

static struct {
	bool present;
	char *library;
	char *library_error;
	bool fn_missing[ZFN_COUNT];
	char **missing;
	int nmissing;
	ze_result_t init_rc;
	bool exposed;
	int ndrivers;
	struct zdriver *drivers;
	ze_result_t drivers_rc; /* zeDriverGet's answer */
} z;

/* What zeInit shows: handles are pointers into these arrays. */
struct _ze_driver_handle_t {
	int driver; /* index into z.drivers */
	int ndevs, *devs; /* zeDeviceGet's answer: indices into x.devs */
	int nvtx, *vtx;   /* zeFabricVertexGetExp's answer: indices into x.vtx */
};

struct _ze_device_handle_t {
	const struct znode *node;
	int driver;
	bool root;
	int nsubs, *subs; /* indices into x.devs */
	int vertex;       /* index into x.vtx, or -1 */
};

struct _ze_fabric_vertex_handle_t {
	int dev;
	int nsubs, *subs; /* indices into x.vtx */
};

struct _ze_fabric_edge_handle_t {
	int driver, index;
};

static struct {
	ze_result_t rc; /* zeInit's lasting answer once shown */
	bool done;
	int ndrv;
	struct _ze_driver_handle_t *drv;
	int ndevs, capdevs;
	struct _ze_device_handle_t *devs;
	int nvtx, capvtx;
	struct _ze_fabric_vertex_handle_t *vtx;
	int nedges;
	struct _ze_fabric_edge_handle_t *edges; /* every edge of every driver, in order */
	int *edge_first;                         /* per driver: its first edge in edges[] */
} x;

static pthread_mutex_t x_lock = PTHREAD_MUTEX_INITIALIZER;

static void free_nodes(struct znode *nodes, int n)
{
	for (int i = 0; nodes && i < n; i++)
		free(nodes[i].subs);
	free(nodes);
}

static void free_shown(void)
{
	for (int i = 0; i < x.ndrv; i++) {
		free(x.drv[i].devs);
		free(x.drv[i].vtx);
	}
	for (int i = 0; i < x.ndevs; i++)
		free(x.devs[i].subs);
	for (int i = 0; i < x.nvtx; i++)
		free(x.vtx[i].subs);
	free(x.drv);
	free(x.devs);
	free(x.vtx);
	free(x.edges);
	free(x.edge_first);
	memset(&x, 0, sizeof(x));
}

static bool inited; /* zeInit succeeded; under x_lock */

void replay_ze_release(void)
{
	pthread_mutex_lock(&x_lock);
	free_shown();
	inited = false;
	pthread_mutex_unlock(&x_lock);
	for (int d = 0; d < z.ndrivers; d++) {
		free_nodes(z.drivers[d].cards, z.drivers[d].ncards);
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

static int read_pci(struct ld *ld, json_t *v, const char *path, struct znode *node)
{
	char p[ZPATH];
	int r = error_object(ld, v, path, &node->pci_rc);
	if (r)
		return r < 0 ? -1 : 0;
	if (!json_is_object(v))
		return replay_bad(ld->file, path, "expected {\"bus_id\": ...} or an error object");
	json_t *bus = json_object_get(v, "bus_id");
	struct dc_pci a;
	if (!json_is_string(bus) || dc_pci_parse(json_string_value(bus), json_string_length(bus) + 1, &a))
		return replay_bad(ld->file, replay_sub(p, path, "bus_id"), "expected a PCI bus id such as \"0000:18:00.0\"");
	ze_pci_ext_properties_t *pci = &node->pci;
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
	node->has_pci = true;
	return 0;
}

static int read_vertex(struct ld *ld, json_t *v, const char *path, struct znode *node)
{
	char p[ZPATH];
	node->vertex = true;
	node->vertex_type = -1;
	if (!v)
		return 0;
	if (json_is_boolean(v)) {
		node->vertex = json_is_true(v);
		return 0;
	}
	if (!json_is_object(v))
		return replay_bad(ld->file, path, "expected true, false or an object");
	json_t *e;
	uint32_t t;
	if ((e = json_object_get(v, "type"))) {
		if (get_name(ld, e, replay_sub(p, path, "type"), ze_vertex_type_names, &t))
			return -1;
		node->vertex_type = (int)t;
	}
	if ((e = json_object_get(v, "remote"))) {
		if (!json_is_boolean(e))
			return replay_bad(ld->file, replay_sub(p, path, "remote"), "expected true or false");
		node->vertex_remote = json_is_true(e);
	}
	if ((e = json_object_get(v, "bus_id"))) {
		struct dc_pci a;
		if (!json_is_string(e) || dc_pci_parse(json_string_value(e), json_string_length(e) + 1, &a))
			return replay_bad(ld->file, replay_sub(p, path, "bus_id"), "expected a PCI bus id");
		node->vertex_has_pci = true;
		node->vertex_pci = (ze_fabric_vertex_pci_exp_address_t){ a.domain, a.bus, a.device, a.function };
	}
	if (opt_code(ld, v, "error", path, &node->vertex_rc) ||
	    opt_code(ld, v, "subvertices_error", path, &node->subvertices_rc))
		return -1;
	return 0;
}

static int read_node(struct ld *ld, json_t *o, const char *path, struct znode *node, const struct znode *card);

static int read_subdevices(struct ld *ld, json_t *v, const char *path, struct znode *card)
{
	char p[ZPATH];
	int r = error_object(ld, v, path, &card->sub_rc);
	if (r)
		return r < 0 ? -1 : 0;
	if (!json_is_array(v))
		return replay_bad(ld->file, path, "expected an array of tiles or an error object");
	size_t n = json_array_size(v);
	if (n > MAX_TILES)
		return replay_bad(ld->file, path, "%zu tiles, more than the %d supported", n, MAX_TILES);
	if (n == 1 && !z.exposed)
		return replay_bad(ld->file, path, "a card has no tiles or at least two (a single-tile card lists none)");
	if (n && !(card->subs = calloc(n, sizeof(*card->subs))))
		return replay_bad(ld->file, path, "out of memory");
	card->nsub = (int)n;
	for (size_t t = 0; t < n; t++) {
		struct znode *tile = &card->subs[t];
		tile->card = card->card;
		tile->tile = (int)t;
		snprintf(tile->id, sizeof(tile->id), "%d.%zu", card->card, t);
		if (read_node(ld, json_array_get(v, t), replay_item(p, path, t), tile, card))
			return -1;
	}
	return 0;
}

/* A card (card NULL) or one of its tiles. */
static int read_node(struct ld *ld, json_t *o, const char *path, struct znode *node, const struct znode *card)
{
	char p[ZPATH];
	json_t *v;
	if (!json_is_object(o))
		return replay_bad(ld->file, path, "expected a device object");
	node->type = ZE_DEVICE_TYPE_GPU;
	node->vendor = 0x8086;
	snprintf(node->name, sizeof(node->name), "%s", card ? card->name : DEFAULT_NAME);
	if (card) {
		node->device_id = card->device_id;
		node->vendor = card->vendor;
		node->type = card->type;
		node->flags = z.exposed ? 0 : ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE;
		node->subdevice_id = (uint32_t)node->tile;
		/* A tile's address and UUID default to its card's, the UUID with
		 * its last byte marked by the tile. */
		memcpy(node->uuid, card->uuid, sizeof(node->uuid));
		node->uuid[15] ^= (uint8_t)(node->tile + 1);
		node->has_pci = card->has_pci;
		node->pci_rc = card->pci_rc;
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
		memcpy(node->name, json_string_value(v), json_string_length(v) + 1);
	}
	if ((v = json_object_get(o, "uuid"))) {
		if (get_uuid(ld, v, replay_sub(p, path, "uuid"), node->uuid))
			return -1;
	} else if (!card && !z.exposed && node->props_rc == ZE_RESULT_SUCCESS) {
		return replay_bad(ld->file, path, "\"uuid\" is required");
	}
	if ((v = json_object_get(o, "vendor_id")) && get_u32(ld, v, replay_sub(p, path, "vendor_id"), &node->vendor))
		return -1;
	if ((v = json_object_get(o, "device_id")) && get_u32(ld, v, replay_sub(p, path, "device_id"), &node->device_id))
		return -1;
	if ((v = json_object_get(o, "type")) && get_name(ld, v, replay_sub(p, path, "type"), ze_type_names, &node->type))
		return -1;
	if ((v = json_object_get(o, "flags")) &&
	    get_flags(ld, v, replay_sub(p, path, "flags"), ze_device_flag_names, &node->flags))
		return -1;
	if ((v = json_object_get(o, "subdevice_id")) &&
	    get_u32(ld, v, replay_sub(p, path, "subdevice_id"), &node->subdevice_id))
		return -1;
	if ((v = json_object_get(o, "pci")) && read_pci(ld, v, replay_sub(p, path, "pci"), node))
		return -1;
	if (!card && !node->has_pci && node->pci_rc == ZE_RESULT_SUCCESS)
		node->pci_rc = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* nothing to answer with */
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
static const struct znode *node_by_id(const struct zdriver *d, const char *id)
{
	char *end;
	long c = strtol(id, &end, 10);
	if (end == id || c < 0 || c >= d->ncards)
		return NULL;
	const struct znode *card = &d->cards[c];
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

static int get_id(struct ld *ld, json_t *v, const char *path, const struct zdriver *d, char out[ZID],
		  const struct znode **node)
{
	const struct znode *n = json_is_string(v) ? node_by_id(d, json_string_value(v)) : NULL;
	if (!n)
		return replay_bad(ld->file, path, "expected the id of a device of this driver, \"C\" or \"C.T\"");
	snprintf(out, ZID, "%s", n->id);
	if (node)
		*node = n;
	return 0;
}

static int read_edge(struct ld *ld, json_t *o, const char *path, const struct zdriver *d, struct zedge *e)
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
	ze_fabric_edge_exp_properties_t *pr = &e->props;
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

static int read_p2p(struct ld *ld, json_t *o, const char *path, struct zdriver *d)
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

static int read_driver(struct ld *ld, json_t *o, const char *path, struct zdriver *d)
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
	size_t n = v ? json_array_size(v) : 0;
	if (n && !(d->cards = calloc(n, sizeof(*d->cards))))
		return replay_bad(ld->file, path, "out of memory");
	d->ncards = (int)n;
	for (size_t c = 0; c < n; c++) {
		struct znode *card = &d->cards[c];
		card->card = (int)c;
		card->tile = -1;
		snprintf(card->id, sizeof(card->id), "%zu", c);
		char q[ZPATH];
		if (read_node(ld, json_array_get(v, c), replay_item(q, replay_sub(p, path, "devices"), c), card, NULL))
			return -1;
	}
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
		struct zedge *e = &d->edge_errors[i];
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

static int zfn_lookup(const char *name)
{
	for (int i = 0; i < ZFN_COUNT; i++)
		if (!strcmp(zfn_names[i], name))
			return i;
	return -1;
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
		int id = zfn_lookup(z.missing[i]);
		if (id >= 0)
			z.fn_missing[id] = true;
	}
	return 0;
}

int replay_ze_read(const char *file, json_t *value)
{
	struct ld ld = { file };
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
		for (size_t d = 0; d < n; d++)
			if (read_driver(&ld, json_array_get(v, d), replay_item(p, "level_zero.drivers", d), &z.drivers[d]))
				return -1;
	}
	return 0;
}

const char *replay_ze_library(void)
{
	return z.library ? z.library : ZE_LOADER_SONAME;
}

const char *replay_ze_load_error(void)
{
	if (!z.present)
		return NOT_INSTALLED;
	return z.library_error;
}

static int ze_hidden(const char *symbol)
{
	if (!symbol)
		return 0;
	for (int i = 0; i < z.nmissing; i++)
		if (!strcmp(z.missing[i], symbol))
			return 1;
	return 0;
}

/* ------------------------------------------------------------ showing */

static int new_dev(const struct znode *node, int driver, bool root)
{
	if (x.ndevs == x.capdevs) {
		int ncap = x.capdevs ? x.capdevs * 2 : 16;
		struct _ze_device_handle_t *grown = realloc(x.devs, (size_t)ncap * sizeof(*grown));
		if (!grown)
			return -1;
		x.devs = grown;
		x.capdevs = ncap;
	}
	struct _ze_device_handle_t *dev = &x.devs[x.ndevs];
	memset(dev, 0, sizeof(*dev));
	dev->node = node;
	dev->driver = driver;
	dev->root = root;
	dev->vertex = -1;
	return x.ndevs++;
}

static int new_vtx(int dev)
{
	if (x.nvtx == x.capvtx) {
		int ncap = x.capvtx ? x.capvtx * 2 : 16;
		struct _ze_fabric_vertex_handle_t *grown = realloc(x.vtx, (size_t)ncap * sizeof(*grown));
		if (!grown)
			return -1;
		x.vtx = grown;
		x.capvtx = ncap;
	}
	memset(&x.vtx[x.nvtx], 0, sizeof(x.vtx[x.nvtx]));
	x.vtx[x.nvtx].dev = dev;
	return x.nvtx++;
}

static int push(int **list, int *n, int value)
{
	int *grown = realloc(*list, ((size_t)*n + 1) * sizeof(int));
	if (!grown)
		return -1;
	grown[(*n)++] = value;
	*list = grown;
	return 0;
}

/* Vertices for device dev and its sub-devices (x.devs may move: indices only). */
static int make_vertices(int dev)
{
	if (!x.devs[dev].node->vertex)
		return 0;
	int v = new_vtx(dev);
	if (v < 0)
		return -1;
	x.devs[dev].vertex = v;
	for (int k = 0; k < x.devs[dev].nsubs; k++) {
		int s = x.devs[dev].subs[k];
		if (!x.devs[s].node->vertex)
			continue;
		int sv = new_vtx(s);
		if (sv < 0 || push(&x.vtx[v].subs, &x.vtx[v].nsubs, sv))
			return -1;
		x.devs[s].vertex = sv;
	}
	return 0;
}

/* One driver as the file lists it: each card a root device, its tiles its
 * sub-devices. */
static int show_driver(int d, struct _ze_driver_handle_t *out)
{
	const struct zdriver *zd = &z.drivers[d];
	out->driver = d;
	for (int c = 0; c < zd->ncards; c++) {
		int r = new_dev(&zd->cards[c], d, true);
		if (r < 0 || push(&out->devs, &out->ndevs, r))
			return -1;
		for (int t = 0; t < zd->cards[c].nsub; t++) {
			int s = new_dev(&zd->cards[c].subs[t], d, false);
			if (s < 0 || push(&x.devs[r].subs, &x.devs[r].nsubs, s))
				return -1;
		}
		if (make_vertices(r) || (x.devs[r].vertex >= 0 && push(&out->vtx, &out->nvtx, x.devs[r].vertex)))
			return -1;
	}
	return 0;
}

/* Builds what zeInit shows, once; x_lock held. */
static ze_result_t show(void)
{
	if (x.done)
		return x.rc;
	free_shown();
	x.done = true;
	x.rc = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	if (z.ndrivers && (!(x.drv = calloc((size_t)z.ndrivers, sizeof(*x.drv))) ||
			   !(x.edge_first = calloc((size_t)z.ndrivers, sizeof(int)))))
		return x.rc;
	int nedges = 0;
	for (int d = 0; d < z.ndrivers; d++)
		nedges += z.drivers[d].nedges;
	if (nedges && !(x.edges = calloc((size_t)nedges, sizeof(*x.edges))))
		return x.rc;
	for (int d = 0; d < z.ndrivers; d++) {
		x.edge_first[d] = x.nedges;
		for (int e = 0; e < z.drivers[d].nedges; e++)
			x.edges[x.nedges++] = (struct _ze_fabric_edge_handle_t){ d, e };
	}
	/* A driver left without devices does not initialise (the runtime
	 * reports none), and a loader without drivers fails zeInit. */
	for (int d = 0; d < z.ndrivers; d++) {
		struct _ze_driver_handle_t *drv = &x.drv[x.ndrv];
		memset(drv, 0, sizeof(*drv));
		if (show_driver(d, drv)) {
			free(drv->devs);
			free(drv->vtx);
			return x.rc;
		}
		if (drv->ndevs)
			x.ndrv++;
		else {
			free(drv->devs);
			free(drv->vtx);
		}
	}
	x.rc = x.ndrv ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
	return x.rc;
}

/* -------------------------------------------------------------- prologue */

static bool file_loaded(void)
{
	return dmaconn_replay_ops()->load_error() == NULL;
}

/* What every call but zeInit checks first. */
static ze_result_t enter(enum ze_fn fn)
{
	if (!file_loaded() || !z.present || z.library_error)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (z.fn_missing[fn])
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	pthread_mutex_lock(&x_lock);
	bool ok = inited;
	pthread_mutex_unlock(&x_lock);
	return ok ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
}

static struct _ze_driver_handle_t *drv_of(ze_driver_handle_t h)
{
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)x.drv;
	if (!h || !x.drv || p < base || (p - base) % sizeof(*x.drv) || (p - base) / sizeof(*x.drv) >= (size_t)x.ndrv)
		return NULL;
	return h;
}

static struct _ze_device_handle_t *dev_of(ze_device_handle_t h)
{
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)x.devs;
	if (!h || !x.devs || p < base || (p - base) % sizeof(*x.devs) || (p - base) / sizeof(*x.devs) >= (size_t)x.ndevs)
		return NULL;
	return h;
}

static struct _ze_fabric_vertex_handle_t *vtx_of(ze_fabric_vertex_handle_t h)
{
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)x.vtx;
	if (!h || !x.vtx || p < base || (p - base) % sizeof(*x.vtx) || (p - base) / sizeof(*x.vtx) >= (size_t)x.nvtx)
		return NULL;
	return h;
}

static struct _ze_fabric_edge_handle_t *edge_of(ze_fabric_edge_handle_t h)
{
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)x.edges;
	if (!h || !x.edges || p < base || (p - base) % sizeof(*x.edges) ||
	    (p - base) / sizeof(*x.edges) >= (size_t)x.nedges)
		return NULL;
	return h;
}

static ze_result_t enter_device(enum ze_fn fn, ze_device_handle_t h, struct _ze_device_handle_t **dev)
{
	ze_result_t rc = enter(fn);
	if (rc)
		return rc;
	if (!(*dev = dev_of(h)))
		return h ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t enter_vertex(enum ze_fn fn, ze_fabric_vertex_handle_t h, struct _ze_fabric_vertex_handle_t **v)
{
	ze_result_t rc = enter(fn);
	if (rc)
		return rc;
	if (!(*v = vtx_of(h)))
		return h ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	return ZE_RESULT_SUCCESS;
}

/* Copies up to *count of the n indices into out (handles of base). */
#define ANSWER_LIST(count, out, n, list, base)                                          \
	do {                                                                            \
		if (*(count) == 0 || !(out)) {                                          \
			if (*(count) != 0 && !(out))                                    \
				return ZE_RESULT_ERROR_INVALID_NULL_POINTER;            \
			*(count) = (uint32_t)(n);                                       \
			return ZE_RESULT_SUCCESS;                                       \
		}                                                                       \
		uint32_t k_ = 0;                                                        \
		for (; k_ < *(count) && k_ < (uint32_t)(n); k_++)                       \
			(out)[k_] = &(base)[(list)[k_]];                                \
		*(count) = k_;                                                          \
		return ZE_RESULT_SUCCESS;                                               \
	} while (0)

/* ------------------------------------------------------ Level Zero: core */

static ze_result_t replay_zeInit(ze_init_flags_t flags)
{
	if (!file_loaded() || !z.present || z.library_error)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (flags > (ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	ze_result_t rc;
	if (z.init_rc != ZE_RESULT_SUCCESS)
		return z.init_rc;
	pthread_mutex_lock(&x_lock);
	rc = show();
	inited = rc == ZE_RESULT_SUCCESS;
	pthread_mutex_unlock(&x_lock);
	return rc;
}

static ze_result_t replay_zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
	ze_result_t rc = enter(ZFN_zeDriverGet);
	if (rc || (rc = z.drivers_rc))
		return rc;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (*pCount == 0 || !phDrivers) {
		if (*pCount != 0)
			return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
		*pCount = (uint32_t)x.ndrv;
		return ZE_RESULT_SUCCESS;
	}
	uint32_t k = 0;
	for (; k < *pCount && k < (uint32_t)x.ndrv; k++)
		phDrivers[k] = &x.drv[k];
	*pCount = k;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t replay_zeDeviceGet(ze_driver_handle_t hDriver, uint32_t *pCount, ze_device_handle_t *phDevices)
{
	ze_result_t rc = enter(ZFN_zeDeviceGet);
	if (rc)
		return rc;
	struct _ze_driver_handle_t *drv = drv_of(hDriver);
	if (!drv)
		return hDriver ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if ((rc = z.drivers[drv->driver].devices_rc))
		return rc;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	ANSWER_LIST(pCount, phDevices, drv->ndevs, drv->devs, x.devs);
}

static ze_result_t replay_zeDeviceGetProperties(ze_device_handle_t hDevice, ze_device_properties_t *pDeviceProperties)
{
	struct _ze_device_handle_t *dev;
	ze_result_t rc = enter_device(ZFN_zeDeviceGetProperties, hDevice, &dev);
	if (rc)
		return rc;
	if (!pDeviceProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	const struct znode *n = dev->node;
	if (n->props_rc)
		return n->props_rc;
	ze_device_properties_t *p = pDeviceProperties;
	void *next = p->pNext;
	ze_structure_type_t stype = p->stype;
	memset(p, 0, sizeof(*p));
	p->stype = stype;
	p->pNext = next;
	p->type = n->type;
	p->vendorId = n->vendor;
	p->deviceId = n->device_id;
	p->flags = n->flags;
	p->subdeviceId = n->subdevice_id;
	/* A tile shown as a root device (a card keeping one tile) is no
	 * sub-device to the caller, as in the runtime. */
	if (!z.exposed && dev->root) {
		p->flags &= ~(uint32_t)ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE;
		p->subdeviceId = 0;
	}
	memcpy(p->uuid.id, n->uuid, sizeof(p->uuid.id));
	snprintf(p->name, sizeof(p->name), "%s", n->name);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t replay_zeDeviceGetSubDevices(ze_device_handle_t hDevice, uint32_t *pCount, ze_device_handle_t *phSubdevices)
{
	struct _ze_device_handle_t *dev;
	ze_result_t rc = enter_device(ZFN_zeDeviceGetSubDevices, hDevice, &dev);
	if (rc)
		return rc;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (dev->node->sub_rc)
		return dev->node->sub_rc;
	ANSWER_LIST(pCount, phSubdevices, dev->nsubs, dev->subs, x.devs);
}

static ze_result_t replay_zeDevicePciGetPropertiesExt(ze_device_handle_t hDevice, ze_pci_ext_properties_t *pPciProperties)
{
	struct _ze_device_handle_t *dev;
	ze_result_t rc = enter_device(ZFN_zeDevicePciGetPropertiesExt, hDevice, &dev);
	if (rc)
		return rc;
	if (!pPciProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (dev->node->pci_rc)
		return dev->node->pci_rc;
	pPciProperties->address = dev->node->pci.address;
	pPciProperties->maxSpeed = dev->node->pci.maxSpeed;
	return ZE_RESULT_SUCCESS;
}

/* The physical nodes a shown device stands for (itself and its sub-devices). */
static bool joined_by_xelink(const struct zdriver *zd, const struct _ze_device_handle_t *a,
			     const struct _ze_device_handle_t *b)
{
	for (int e = 0; e < zd->nedges; e++) {
		const struct zedge *ed = &zd->edges[e];
		if (strcmp(ed->props.model, "XeLink"))
			continue;
		bool in_a = ed->a == a->node, in_b = ed->b == b->node, rin_a = ed->b == a->node, rin_b = ed->a == b->node;
		for (int s = 0; s < a->nsubs; s++) {
			in_a |= ed->a == x.devs[a->subs[s]].node;
			rin_a |= ed->b == x.devs[a->subs[s]].node;
		}
		for (int s = 0; s < b->nsubs; s++) {
			in_b |= ed->b == x.devs[b->subs[s]].node;
			rin_b |= ed->a == x.devs[b->subs[s]].node;
		}
		if ((in_a && in_b) || (rin_a && rin_b))
			return true;
	}
	return false;
}

static const char *card_id(const struct znode *n, char buf[ZID])
{
	snprintf(buf, ZID, "%d", n->card);
	return buf;
}

static ze_result_t replay_zeDeviceGetP2PProperties(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
				     ze_device_p2p_properties_t *pP2PProperties)
{
	ze_result_t rc = enter(ZFN_zeDeviceGetP2PProperties);
	if (rc)
		return rc;
	struct _ze_device_handle_t *a = dev_of(hDevice), *b = dev_of(hPeerDevice);
	if (!a || !b)
		return (hDevice && hPeerDevice) ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pP2PProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (a->driver != b->driver)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	const struct zdriver *zd = &z.drivers[a->driver];
	char ca[ZID], cb[ZID];
	/* The pair's own entry, then its cards', then the pair's relation. */
	for (int pass = 0; pass < 2; pass++) {
		const char *from = pass ? card_id(a->node, ca) : a->node->id;
		const char *to = pass ? card_id(b->node, cb) : b->node->id;
		for (int k = 0; k < zd->npairs; k++) {
			const struct zpair *p = &zd->pairs[k];
			if (strcmp(p->from, from) || strcmp(p->to, to))
				continue;
			if (p->rc)
				return p->rc;
			pP2PProperties->flags = p->flags;
			return ZE_RESULT_SUCCESS;
		}
	}
	int rel = a->node->card == b->node->card ? REL_SAME_CARD
		  : joined_by_xelink(zd, a, b)    ? REL_XELINK
						  : REL_OTHER;
	pP2PProperties->flags = zd->rel[rel];
	return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------- Level Zero: fabric */

static ze_result_t replay_zeFabricVertexGetExp(ze_driver_handle_t hDriver, uint32_t *pCount, ze_fabric_vertex_handle_t *phVertices)
{
	ze_result_t rc = enter(ZFN_zeFabricVertexGetExp);
	if (rc)
		return rc;
	struct _ze_driver_handle_t *drv = drv_of(hDriver);
	if (!drv)
		return hDriver ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (z.drivers[drv->driver].vertices_rc)
		return z.drivers[drv->driver].vertices_rc;
	ANSWER_LIST(pCount, phVertices, drv->nvtx, drv->vtx, x.vtx);
}

static ze_result_t replay_zeFabricVertexGetSubVerticesExp(ze_fabric_vertex_handle_t hVertex, uint32_t *pCount,
					    ze_fabric_vertex_handle_t *phSubvertices)
{
	struct _ze_fabric_vertex_handle_t *v;
	ze_result_t rc = enter_vertex(ZFN_zeFabricVertexGetSubVerticesExp, hVertex, &v);
	if (rc)
		return rc;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	/* Under FLAT the runtime shows no sub-vertices. */
	if (x.devs[v->dev].node->subvertices_rc)
		return x.devs[v->dev].node->subvertices_rc;
	ANSWER_LIST(pCount, phSubvertices, v->nsubs, v->subs, x.vtx);
}

static ze_result_t replay_zeFabricVertexGetPropertiesExp(ze_fabric_vertex_handle_t hVertex,
					   ze_fabric_vertex_exp_properties_t *pVertexProperties)
{
	struct _ze_fabric_vertex_handle_t *v;
	ze_result_t rc = enter_vertex(ZFN_zeFabricVertexGetPropertiesExp, hVertex, &v);
	if (rc)
		return rc;
	if (!pVertexProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	const struct _ze_device_handle_t *dev = &x.devs[v->dev];
	const struct znode *n = dev->node;
	if (n->vertex_rc)
		return n->vertex_rc;
	ze_fabric_vertex_exp_properties_t *p = pVertexProperties;
	memcpy(p->uuid.id, n->uuid, sizeof(p->uuid.id));
	p->type = n->vertex_type >= 0 ? (uint32_t)n->vertex_type
		  : dev->root	      ? ZE_FABRIC_VERTEX_EXP_TYPE_DEVICE
				      : ZE_FABRIC_VERTEX_EXP_TYPE_SUBDEVICE;
	p->remote = n->vertex_remote;
	if (n->vertex_has_pci)
		p->address = n->vertex_pci;
	else if (n->has_pci)
		p->address = (ze_fabric_vertex_pci_exp_address_t){ n->pci.address.domain, n->pci.address.bus,
								   n->pci.address.device, n->pci.address.function };
	else
		memset(&p->address, 0, sizeof(p->address));
	return ZE_RESULT_SUCCESS;
}

static ze_result_t replay_zeFabricVertexGetDeviceExp(ze_fabric_vertex_handle_t hVertex, ze_device_handle_t *phDevice)
{
	struct _ze_fabric_vertex_handle_t *v;
	ze_result_t rc = enter_vertex(ZFN_zeFabricVertexGetDeviceExp, hVertex, &v);
	if (rc)
		return rc;
	if (!phDevice)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	const struct znode *n = x.devs[v->dev].node;
	if (n->vertex_type == ZE_FABRIC_VERTEX_EXP_TYPE_SWITCH)
		return ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE;
	if (n->vertex_remote)
		return ZE_RESULT_EXP_ERROR_REMOTE_DEVICE;
	*phDevice = &x.devs[v->dev];
	return ZE_RESULT_SUCCESS;
}

/* The recorded failure of zeFabricEdgeGetExp between a and b, if any. */
static ze_result_t edge_error(const struct _ze_device_handle_t *a, const struct _ze_device_handle_t *b)
{
	const struct zdriver *zd = &z.drivers[a->driver];
	for (int k = 0; a->driver == b->driver && k < zd->nedge_errors; k++)
		if (zd->edge_errors[k].a == a->node && zd->edge_errors[k].b == b->node)
			return zd->edge_errors[k].rc;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t replay_zeFabricEdgeGetExp(ze_fabric_vertex_handle_t hVertexA, ze_fabric_vertex_handle_t hVertexB,
			       uint32_t *pCount, ze_fabric_edge_handle_t *phEdges)
{
	ze_result_t rc = enter(ZFN_zeFabricEdgeGetExp);
	if (rc)
		return rc;
	struct _ze_fabric_vertex_handle_t *va = vtx_of(hVertexA), *vb = vtx_of(hVertexB);
	if (!va || !vb)
		return (hVertexA && hVertexB) ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	const struct _ze_device_handle_t *a = &x.devs[va->dev], *b = &x.devs[vb->dev];
	if ((rc = edge_error(a, b)))
		return rc;
	if (!pCount)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	uint32_t n = 0;
	if (a->driver == b->driver) {
		const struct zdriver *zd = &z.drivers[a->driver];
		/* Physical edges join two vertices both ways. */
		for (int e = 0; e < zd->nedges; e++) {
			const struct zedge *ed = &zd->edges[e];
			if (!((ed->a == a->node && ed->b == b->node) || (ed->a == b->node && ed->b == a->node)))
				continue;
			if (*pCount != 0 && phEdges) {
				if (n >= *pCount)
					break;
				phEdges[n] = &x.edges[x.edge_first[a->driver] + e];
			}
			n++;
		}
	}
	if (*pCount != 0 && !phEdges)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*pCount = n;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t replay_zeFabricEdgeGetPropertiesExp(ze_fabric_edge_handle_t hEdge,
					 ze_fabric_edge_exp_properties_t *pEdgeProperties)
{
	ze_result_t rc = enter(ZFN_zeFabricEdgeGetPropertiesExp);
	if (rc)
		return rc;
	struct _ze_fabric_edge_handle_t *e = edge_of(hEdge);
	if (!e)
		return hEdge ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if ((rc = z.drivers[e->driver].edges[e->index].rc))
		return rc;
	if (!pEdgeProperties)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	const ze_fabric_edge_exp_properties_t *src = &z.drivers[e->driver].edges[e->index].props;
	ze_fabric_edge_exp_properties_t *p = pEdgeProperties;
	p->uuid = src->uuid;
	memcpy(p->model, src->model, sizeof(p->model));
	p->bandwidth = src->bandwidth;
	p->bandwidthUnit = src->bandwidthUnit;
	p->latency = src->latency;
	p->latencyUnit = src->latencyUnit;
	p->duplexity = src->duplexity;
	return ZE_RESULT_SUCCESS;
}

/* This component's answers as Level Zero's function table, less the
 * functions the recorded loader lacked. */
static int ze_bind(struct ze_api *api, const char *library, char *err, size_t errlen)
{
	memset(api, 0, sizeof(*api));
#define REPLAY_TABLE_(fn, ret, params, required)                                                   \
	if (!ze_hidden(#fn)) {                                                                     \
		api->fn = replay_##fn;                                                             \
	} else if (required) {                                                                     \
		snprintf(err, errlen, "%s lacks %s (not a Level Zero loader?)", library, #fn);     \
		memset(api, 0, sizeof(*api));                                                      \
		return -1;                                                                         \
	}
	ZE_FUNCTIONS(REPLAY_TABLE_)
#undef REPLAY_TABLE_
	return 0;
}

int replay_ze_table(struct ze_api *api, char *err, size_t errlen)
{
	return ze_bind(api, ZE_LOADER_SONAME, err, errlen);
}
