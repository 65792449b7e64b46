/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intel detectors on oneAPI Level Zero.  The loader (libze_loader.so.1, or
 * the absolute path in DMACONN_ZE_LIBRARY) is loaded on first use and
 * initialised once with zeInit(ZE_INIT_FLAG_GPU_ONLY); under DMACONN_REPLAY
 * the replay component stands in for it, exporting the same functions.
 *
 * Devices are the GPU devices of every driver, in zeDriverGet and
 * zeDeviceGet order: the runtime has already applied ZE_AFFINITY_MASK and
 * ZE_FLAT_DEVICE_HIERARCHY (src/backends/level_zero/order_ze.c documents how), and that is the
 * list SYCL and PyTorch's xpu device ordinals are built from.
 *
 * xpu/p2p:    1 where zeDeviceGetP2PProperties(i, j) has both
 *             ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS and ..._ATOMICS.
 * xpu/xelink: the number of Xe Link connections between devices i and j:
 *             fabric edges of model "XeLink" between the fabric vertex of i
 *             and that of j, each counted once, where a vertex with
 *             sub-vertices (a card under COMPOSITE) counts the edges of its
 *             sub-vertices (its tiles).  Edges of model "MDFI" (the
 *             die-to-die link between tiles of one card) are reported in
 *             the pair's detail, never counted.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../internal.h"
#include "../../model/model.h"
#include "../../model/reasons.h"
#include "../../sysfs.h"
#include "order_ze.h"
#include "../../pci.h"
#include "../../replay_abi.h"
#include "../backend.h"
#include "ze_load.h"

#define WHY_SIZE DC_MODEL_WHY_SIZE
#define MAX_HANDLES 4096 /* drivers, devices, vertices or edges one call may list */

static pthread_mutex_t ze_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER; /* before ze_lock */
static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER; /* the model's facts asked on first need */

static void dc_ze_fork(int phase)
{
	static pthread_mutex_t *const locks[] = { &model_lock, &stage_lock, &ze_lock };
	dc_fork_locks(phase, locks, (int)(sizeof(locks) / sizeof(locks[0])));
}
static struct ze_api ze;
static int ze_state;       /* 0 not tried, 1 ready, -1 unusable (sticky) */
static int ze_live_inited; /* a real loader was initialised: it stays mapped */
static char ze_error[WHY_SIZE];

/* Formats "<call> failed: ZE_RESULT_..." into why. */
static void call_failed(char *why, ze_result_t r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void call_failed(char *why, ze_result_t r, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	dc_call_failedv(why, WHY_SIZE, ze_result_describe(r, name, sizeof(name)), fmt, ap);
	va_end(ap);
}

/* Records the loader's table, or why it did not load (the message as the
 * replay gives it, without this backend's prefix). */
static void record(const char *library, const char *why)
{
	static const char prefix[] = "cannot load Level Zero: ";
	if (why && !strncmp(why, prefix, sizeof(prefix) - 1))
		why += sizeof(prefix) - 1;
	dc_record_table("level_zero", why ? NULL : &ze, library, why);
}

static const struct dc_library dc_ze_libraries[] = {
	{ "level_zero", ZE_LOADER_SONAME, "DMACONN_ZE_LIBRARY", "Level Zero", "is the Level Zero loader installed?" },
};

static int open_live(const char *path, char *why, size_t len)
{
	return ze_api_open(&ze, path, NULL, why, len);
}

static void record_live(const char *library, int rc, const char *why)
{
	record(library, rc ? why : NULL);
}

static int open_library(char *why, int *replayed)
{
	void *h;
	const struct dmaconn_replay_ops *ops;
	*replayed = 0;
	int replay = dc_replay_open(&h, &ops, why, WHY_SIZE);
	if (replay < 0)
		return -1;
	if (replay) {
		*replayed = 1;
		const char *load_error = ops->library_load_error("level_zero");
		if (load_error) {
			record(NULL, load_error);
			dlclose(h);
			/* Marked as NVML's and the KFD's absences are under replay. */
			snprintf(why, WHY_SIZE, "cannot load Level Zero: %.600s%s", load_error,
				 strstr(load_error, "(replayed)") ? "" : " (replayed)");
			return -1;
		}
		/* The component's table; its handle keeps the component mapped. */
		if (ops->table("level_zero", &ze, why, WHY_SIZE) != 0) {
			record(NULL, why);
			dlclose(h);
			return -1;
		}
		ze.handle = h;
		record(NULL, NULL);
		return 0;
	}
	return dc_open_live(&dc_ze_libraries[0], open_live, record_live, why, WHY_SIZE);
}

static int init_library(char *why)
{
	int replayed;
	if (open_library(why, &replayed) != 0)
		return -1;
	ze_result_t r = ze.zeInit(ZE_INIT_FLAG_GPU_ONLY);
	if (r != ZE_RESULT_SUCCESS) {
		call_failed(why, r, "zeInit");
		return -1;
	}
	ze_live_inited = !replayed;
	return 0;
}

/* Loads and initialises Level Zero once; 0 when usable, else -1 with the reason. */
static int ze_ready(char *why)
{
	return dc_init_once(&ze_lock, &ze_state, ze_error, init_library, why, WHY_SIZE);
}

static void dc_ze_forget(void);

static void dc_ze_shutdown(void)
{
	dc_ze_forget();
	pthread_mutex_lock(&ze_lock);
	/* Level Zero 1.4 has no way to undo zeInit, and a runtime unloaded
	 * under its own threads is not safe: a live loader stays mapped. */
	if (ze_live_inited)
		memset(&ze, 0, sizeof(ze));
	else
		ze_api_close(&ze);
	ze_state = 0;
	ze_live_inited = 0;
	ze_error[0] = '\0';
	pthread_mutex_unlock(&ze_lock);
}

/* ------------------------------------------------------------ enumeration */

/*
 * What discovery finds, once per process (and per device-exposing
 * environment), is a struct dc_model (src/model/model.h), shared read-only
 * by the views and reference-counted: identities, drivers and tiles, and
 * two stages asked on their first need by the functions below (the fabric,
 * the P2P properties), never by a view.
 */


/*
 * list_NAME(parent, &out, &count, &rc, why, call...): zeXxxGet(parent, &count,
 * NULL), then again into a malloc'd array (NULL when empty).  0, or -1 with
 * the reason and, when a call failed, its result in *rc.
 */
#define DEFINE_LIST(name, parent_t, handle_t, call)                                              \
	static int name(parent_t parent, handle_t **out, uint32_t *count, ze_result_t *rc, char *why, \
			const char *fmt, ...) __attribute__((format(printf, 6, 7)));                  \
	static int name(parent_t parent, handle_t **out, uint32_t *count, ze_result_t *rc, char *why, \
			const char *fmt, ...)                                                         \
	{                                                                                         \
		char what[256];                                                                   \
		va_list ap;                                                                       \
		va_start(ap, fmt);                                                                \
		vsnprintf(what, sizeof(what), fmt, ap);                                           \
		va_end(ap);                                                                       \
		*out = NULL;                                                                      \
		*count = 0;                                                                       \
		*rc = call(parent, count, NULL);                                                  \
		if (*rc == ZE_RESULT_SUCCESS && *count > MAX_HANDLES) {                           \
			snprintf(why, WHY_SIZE, "%s listed %u handles, more than dmaconn accepts", \
				 what, (unsigned int)*count);                                     \
			return -1;                                                                \
		}                                                                                 \
		if (*rc == ZE_RESULT_SUCCESS && *count) {                                         \
			if (!(*out = calloc(*count, sizeof(handle_t)))) {                         \
				snprintf(why, WHY_SIZE, "out of memory");                         \
				return -1;                                                        \
			}                                                                         \
			*rc = call(parent, count, *out);                                          \
		}                                                                                 \
		if (*rc != ZE_RESULT_SUCCESS) {                                                   \
			free(*out);                                                               \
			*out = NULL;                                                              \
			call_failed(why, *rc, "%s", what);                                        \
			return -1;                                                                \
		}                                                                                 \
		return 0;                                                                         \
	}

static ze_result_t driver_get(void *unused, uint32_t *count, ze_driver_handle_t *out)
{
	(void)unused;
	return ze.zeDriverGet(count, out);
}

DEFINE_LIST(list_drivers, void *, ze_driver_handle_t, driver_get)
DEFINE_LIST(list_devices, ze_driver_handle_t, ze_device_handle_t, ze.zeDeviceGet)
DEFINE_LIST(list_vertices, ze_driver_handle_t, ze_fabric_vertex_handle_t, ze.zeFabricVertexGetExp)
DEFINE_LIST(list_subvertices, ze_fabric_vertex_handle_t, ze_fabric_vertex_handle_t, ze.zeFabricVertexGetSubVerticesExp)


/* A GPU device as listed, before the model is sized. */
struct listed {
	ze_device_handle_t h;
	int driver, index; /* zeDriverGet and zeDeviceGet positions */
	ze_device_properties_t props;
};

/* Every GPU device of every driver, listed into *out; -1 with the reason. */
static int list_gpus(ze_driver_handle_t *drivers, uint32_t ndrivers, struct listed **out, int *n, char *why)
{
	ze_result_t rc;
	int cap = 0;
	*out = NULL;
	*n = 0;
	for (uint32_t d = 0; d < ndrivers; d++) {
		uint32_t count = 0;
		ze_device_handle_t *handles = NULL;
		if (list_devices(drivers[d], &handles, &count, &rc, why, "zeDeviceGet(driver %u)", d) != 0)
			return -1;
		for (uint32_t k = 0; k < count; k++) {
			ze_device_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES };
			ze_result_t r = ze.zeDeviceGetProperties(handles[k], &p);
			if (r != ZE_RESULT_SUCCESS) {
				call_failed(why, r, "zeDeviceGetProperties(driver %u, device %u)", d, k);
				free(handles);
				return -1;
			}
			if (p.type != ZE_DEVICE_TYPE_GPU)
				continue;
			if (*n == cap) {
				int ncap = cap ? cap * 2 : 8;
				struct listed *grown = ncap <= MAX_HANDLES ? realloc(*out, (size_t)ncap * sizeof(*grown)) : NULL;
				if (!grown) {
					snprintf(why, WHY_SIZE, "out of memory for %d devices", ncap);
					free(handles);
					return -1;
				}
				*out = grown;
				cap = ncap;
			}
			(*out)[(*n)++] = (struct listed){ handles[k], (int)d, (int)k, p };
		}
		free(handles);
	}
	return 0;
}

/* 1 when the loader has every fabric function, else 0 with *missing the first absent one. */
static int fabric_available(const char **missing)
{
#define FABRIC_PRESENT_(fn)                                                                   \
	if (!ze.fn) {                                                                         \
		*missing = #fn;                                                               \
		return 0;                                                                     \
	}
	ZE_FABRIC_FUNCTIONS(FABRIC_PRESENT_)
#undef FABRIC_PRESENT_
	return 1;
}

/* The model of the GPU devices of every driver, with their identities; NULL
 * with the reason. */
static struct dc_model *enumerate(char *why)
{
	ze_result_t rc;
	uint32_t ndrivers = 0;
	ze_driver_handle_t *drivers = NULL;
	struct listed *found = NULL;
	struct dc_model *m = NULL;
	int n = 0;
	if (list_drivers(NULL, &drivers, &ndrivers, &rc, why, "zeDriverGet") != 0 ||
	    list_gpus(drivers, ndrivers, &found, &n, why) != 0)
		goto out;
	if (!(m = dc_model_new(n, 1)) || !(m->groups = calloc((size_t)ndrivers + 1, sizeof(*m->groups)))) {
		dc_model_release(m);
		m = NULL;
		snprintf(why, WHY_SIZE, "out of memory for %d devices", n);
		goto out;
	}
	m->vendor_ok = 1;
	m->ngroups = (int)ndrivers;
	for (uint32_t d = 0; d < ndrivers; d++)
		m->groups[d] = drivers[d];
	for (int i = 0; i < n; i++) {
		const struct listed *z = &found[i];
		struct dc_device *dev = &m->devices[i];
		m->handles[i] = z->h;
		snprintf(dev->long_name, sizeof(dev->long_name), "%.*s",
			 (int)strnlen(z->props.name, sizeof(z->props.name)), z->props.name);
		dc_copy_text(m->ids[i].name, sizeof(m->ids[i].name), z->props.name, sizeof(z->props.name));
		dc_uuid_format(z->props.uuid.id, m->ids[i].uuid);
		dev->group = z->driver;
		dev->group_index = z->index;
		dev->tile_known = (z->props.flags & ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE) != 0;
		dev->tile = dev->tile_known ? z->props.subdeviceId : 0;
	}
	const char *missing = NULL;
	if (!fabric_available(&missing))
		m->fabric_stage.lacks = missing;
	if (!ze.zeDeviceGetP2PProperties)
		m->peer_stage.lacks = "zeDeviceGetP2PProperties";
out:
	free(drivers);
	free(found);
	return m;
}

/* PCI addresses and sub-device counts: identity only, so a failure is a
 * warning, not a reason to doubt the matrix. */
static void identify(struct dc_model *m)
{
	int pci_warned = 0, sub_warned = 0;
	for (int i = 0; i < m->n; i++) {
		struct dc_device *dev = &m->devices[i];
		if (ze.zeDevicePciGetPropertiesExt) {
			ze_pci_ext_properties_t p = { .stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES };
			ze_result_t r = ze.zeDevicePciGetPropertiesExt(m->handles[i], &p);
			if (r == ZE_RESULT_SUCCESS) {
				dev->node.has_pci = p.address.bus <= 0xff && p.address.device <= 0xff &&
						    p.address.function <= 7;
				dev->node.pci = (struct dc_pci){ p.address.domain, p.address.bus, p.address.device,
								 p.address.function };
				m->ids[i].pci = dev->node.pci;
			} else if (!pci_warned++) {
				call_failed(m->pci_why, r, "zeDevicePciGetPropertiesExt(device %d)", i);
			}
		}
		if (ze.zeDeviceGetSubDevices) {
			uint32_t count = 0;
			ze_result_t r = ze.zeDeviceGetSubDevices(m->handles[i], &count, NULL);
			if (r == ZE_RESULT_SUCCESS) {
				dev->tiles = (int)count;
			} else if (!sub_warned++) {
				call_failed(m->tiles_why, r, "zeDeviceGetSubDevices(device %d)", i);
			}
		}
	}
}

/* ------------------------------------------------- without Level Zero: sysfs */

/*
 * The Intel GPUs the kernel lists: PCI functions of vendor 0x8086 and class
 * VGA (0x0300) or display controller (0x0380), each with its tiles (the xe
 * driver's tile<N> directories, else i915's drm/card<N>/gt/gt<N>), read
 * through dc_read_file()/dc_list_dir(): below DMACONN_SYSFS_ROOT, or under
 * replay from the recording's sysfs files.
 */
struct names {
	char **items;
	int count;
};

static void names_free(struct names *n)
{
	dc_free_names(n->items, n->count);
	n->items = NULL;
	n->count = 0;
}

/* The entries of the directory `path` ("/sys/..."); 0, or -1 when it is absent. */
static int fs_list(const char *path, struct names *out)
{
	int n = dc_list_dir(path, &out->items);
	out->count = n > 0 ? n : 0;
	return n < 0 ? -1 : 0;
}

/* The first line of the file `path` as a hexadecimal number; 0, or -1. */
static int fs_hex(const char *path, unsigned long *value)
{
	char buf[64];
	if (dc_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	char *end;
	*value = strtoul(buf, &end, 16);
	return end == buf ? -1 : 0;
}

/* How many names of n are prefix followed by a decimal number. */
static int count_numbered(const struct names *n, const char *prefix)
{
	int count = 0;
	size_t len = strlen(prefix);
	for (int i = 0; i < n->count; i++) {
		const char *s = n->items[i];
		if (strncmp(s, prefix, len) || !s[len])
			continue;
		const char *p = s + len;
		while (*p >= '0' && *p <= '9')
			p++;
		count += *p == '\0';
	}
	return count;
}

static int tiles_of(const char *dev)
{
	char path[512];
	struct names n;
	int tiles = 0;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", dev);
	if (fs_list(path, &n) == 0)
		tiles = count_numbered(&n, "tile");
	names_free(&n);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/drm", dev);
	if (tiles == 0 && fs_list(path, &n) == 0) {
		for (int i = 0; i < n.count && tiles == 0; i++) {
			struct names gts;
			if (strncmp(n.items[i], "card", 4))
				continue;
			snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/drm/%s/gt", dev, n.items[i]);
			if (fs_list(path, &gts) == 0)
				tiles = count_numbered(&gts, "gt");
			names_free(&gts);
		}
		names_free(&n);
	}
	return tiles > 1 ? tiles : 1;
}

struct zcard {
	struct dc_pci pci;
	int tiles;
	int integrated;
};

static int card_before(const struct zcard *x, const struct zcard *y, int discrete_first)
{
	if (discrete_first && x->integrated != y->integrated)
		return !x->integrated;
	return dc_pci_compare(&x->pci, &y->pci) < 0;
}

static int sysfs_cards(struct zcard **out)
{
	struct names devs;
	*out = NULL;
	if (fs_list("/sys/bus/pci/devices", &devs) != 0)
		return 0;
	struct zcard *cards = calloc((size_t)devs.count + 1, sizeof(*cards));
	int n = 0;
	for (int i = 0; cards && i < devs.count && n < MAX_HANDLES; i++) {
		struct dc_pci p;
		char path[512];
		unsigned long vendor, cls;
		if (dc_pci_parse(devs.items[i], 64, &p) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", devs.items[i]);
		if (fs_hex(path, &vendor) != 0 || vendor != 0x8086)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", devs.items[i]);
		if (fs_hex(path, &cls) != 0 || ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0380))
			continue;
		cards[n].pci = p;
		cards[n].tiles = tiles_of(devs.items[i]);
		/* Intel's integrated GPUs sit at 00:02.0. */
		cards[n].integrated = p.domain == 0 && p.bus == 0 && p.device == 2;
		n++;
	}
	names_free(&devs);
	/* compute-runtime's order: discrete first, then PCI; PCI alone with
	 * ZE_ENABLE_PCI_ID_DEVICE_ORDER=1.  Insertion sort: a node has few GPUs. */
	const char *pci_order = dc_getenv("ZE_ENABLE_PCI_ID_DEVICE_ORDER");
	int discrete_first = !(pci_order && !strcmp(pci_order, "1"));
	for (int i = 1; i < n; i++) {
		struct zcard c = cards[i];
		int k = i;
		for (; k > 0 && card_before(&c, &cards[k - 1], discrete_first); k--)
			cards[k] = cards[k - 1];
		cards[k] = c;
	}
	*out = cards;
	return n;
}

/* Without Level Zero (why says why): the Intel GPUs of sysfs, shown as the
 * runtime would show them (ZE_AFFINITY_MASK, ZE_FLAT_DEVICE_HIERARCHY; the
 * default hierarchy is FLAT when the first card has tiles, as on Data
 * Center GPU Max, and COMPOSITE otherwise, which shows single-tile cards
 * alike).  NULL when out of memory. */
static struct dc_model *fallback_model(const char *why)
{
	struct zcard *cards;
	int ncards = sysfs_cards(&cards);
	int *tiles = calloc((size_t)ncards + 1, sizeof(int));
	struct dc_ze_root *roots = NULL;
	struct dc_ze_device *devices = NULL;
	struct dc_model *m = NULL;
	int nroots = 0, ndevices = 0;
	if (!tiles)
		goto out;
	for (int c = 0; c < ncards; c++)
		tiles[c] = cards[c].tiles;
	enum dc_ze_hierarchy h = dc_ze_hierarchy(dc_getenv("ZE_FLAT_DEVICE_HIERARCHY"),
						 ncards && tiles[0] > 1 ? DC_ZE_FLAT : DC_ZE_COMPOSITE);
	if (dc_ze_expose(tiles, ncards, h, dc_getenv("ZE_AFFINITY_MASK"), &roots, &nroots, &devices, &ndevices))
		goto out;
	if (!(m = dc_model_new(ndevices, 1)))
		goto out;
	snprintf(m->why, sizeof(m->why), "%s", why);
	for (int i = 0; i < ndevices; i++) {
		struct dc_device *dev = &m->devices[i];
		dev->node.has_pci = 1;
		dev->node.pci = m->ids[i].pci = cards[devices[i].card].pci;
		dev->tile_known = devices[i].tile >= 0;
		dev->tile = dev->tile_known ? (unsigned int)devices[i].tile : 0;
	}
out:
	free(cards);
	free(tiles);
	free(roots);
	free(devices);
	return m;
}

static void model_release(void *m)
{
	dc_model_release(m);
}

/* Loads Level Zero and lists the devices, or counts them from sysfs (as
 * the environment of the discovery's key says); NULL when out of memory. */
static void *discover_model(void)
{
	char why[WHY_SIZE] = "";
	struct dc_model *m = NULL;
	if (ze_ready(why) == 0 && (m = enumerate(why)) != NULL) {
		identify(m);
		return m;
	}
	return fallback_model(why);
}

/* The last discovery, under model_lock. */
static struct dc_discovery ze_discovery =
	DC_DISCOVERY_OF(struct dc_model, &model_lock, discover_model, model_release);

/* The model to compute views from: discovered on first use, again for a
 * fresh detection or when the variables that expose devices read otherwise
 * (as for a detection over the whole node).  A new reference, or NULL. */
static struct dc_model *model_get(void)
{
	const char *mask = dc_getenv("ZE_AFFINITY_MASK"), *flat = dc_getenv("ZE_FLAT_DEVICE_HIERARCHY");
	const char *root = dc_config()->sysfs_root;
	size_t len = 16 + (mask ? strlen(mask) : 0) + (flat ? strlen(flat) : 0) + (root ? strlen(root) : 0);
	char *key = malloc(len);
	if (!key)
		return NULL;
	snprintf(key, len, "%c%s|%c%s|%s", mask ? '=' : '-', mask ? mask : "", flat ? '=' : '-', flat ? flat : "",
		 root ? root : "");
	struct dc_model *m = dc_discovery_get(&ze_discovery, key);
	free(key);
	return m;
}

DC_DISCOVERY_HOOKS(dc_ze, ze_discovery, model_get)

/* --------------------------------------------- the stages: asked on first need */

/* What the fabric says of one pair of devices, as the edges come (symmetric). */
struct tally {
	int xelink, mdfi;         /* edges of model "XeLink" and "MDFI" */
	uint64_t bw[3];           /* XeLink bandwidth summed by ze_bandwidth_unit_t */
	int bw_edges[3];          /* XeLink edges per bandwidth unit */
	uint32_t latency;         /* the lowest XeLink latency of a known unit */
	ze_latency_unit_t latency_unit;
	int duplexity;            /* of the XeLink edges: a ze_fabric_edge_exp_duplexity_t, or -1 when they differ */
};

/* The fabric as it is walked: the pairs' tallies and each device's endpoints. */
struct fabric {
	struct tally *pairs;      /* n*n */
	int *first;               /* per device: index of its first endpoint in endpoints[] (-1: no vertex) */
	int *count;               /* per device: its number of endpoints */
	ze_fabric_vertex_handle_t *endpoints;
	int nendpoints;
};

static void fabric_free(struct fabric *f)
{
	free(f->pairs);
	free(f->first);
	free(f->count);
	free(f->endpoints);
}

static int find_device(const struct dc_model *m, int driver, ze_device_handle_t h)
{
	for (int i = 0; i < m->n; i++)
		if (m->devices[i].group == driver && m->handles[i] == (void *)h)
			return i;
	return -1;
}

/* Each device's endpoints: the sub-vertices of its vertex, or the vertex. */
static int map_vertices(const struct dc_model *m, struct fabric *f, uint32_t d, char *why, ze_result_t *first_rc)
{
	uint32_t nv = 0;
	ze_fabric_vertex_handle_t *vertices = NULL;
	if (list_vertices(m->groups[d], &vertices, &nv, first_rc, why, "zeFabricVertexGetExp(driver %u)", d) != 0)
		return -1;
	int rc = 0;
	for (uint32_t k = 0; k < nv && rc == 0; k++) {
		ze_fabric_vertex_exp_properties_t vp = { .stype = ZE_STRUCTURE_TYPE_FABRIC_VERTEX_EXP_PROPERTIES };
		ze_result_t r = ze.zeFabricVertexGetPropertiesExp(vertices[k], &vp);
		if (r != ZE_RESULT_SUCCESS) {
			call_failed(why, r, "zeFabricVertexGetPropertiesExp(driver %u, vertex %u)", d, k);
			rc = -1;
			break;
		}
		if (vp.remote)
			continue;
		ze_device_handle_t dh = NULL;
		r = ze.zeFabricVertexGetDeviceExp(vertices[k], &dh);
		if (r == ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE || r == ZE_RESULT_EXP_ERROR_REMOTE_DEVICE)
			continue; /* a switch, or another node's device */
		if (r != ZE_RESULT_SUCCESS) {
			call_failed(why, r, "zeFabricVertexGetDeviceExp(driver %u, vertex %u)", d, k);
			rc = -1;
			break;
		}
		int i = find_device(m, (int)d, dh);
		if (i < 0 || f->first[i] >= 0)
			continue; /* not a device of ours (e.g. not a GPU), or seen */
		uint32_t nsub = 0;
		ze_fabric_vertex_handle_t *subs = NULL;
		ze_result_t sub_rc;
		if (list_subvertices(vertices[k], &subs, &nsub, &sub_rc, why, "zeFabricVertexGetSubVerticesExp(device %d)",
				     i) != 0) {
			rc = -1;
			break;
		}
		uint32_t add = nsub ? nsub : 1;
		ze_fabric_vertex_handle_t *grown =
			realloc(f->endpoints, ((size_t)f->nendpoints + add) * sizeof(*grown));
		if (!grown) {
			free(subs);
			snprintf(why, WHY_SIZE, "out of memory");
			rc = -1;
			break;
		}
		f->endpoints = grown;
		f->first[i] = f->nendpoints;
		f->count[i] = (int)add;
		for (uint32_t t = 0; t < add; t++)
			f->endpoints[f->nendpoints++] = nsub ? subs[t] : vertices[k];
		free(subs);
	}
	free(vertices);
	return rc;
}

static void add_edge(struct tally *p, const ze_fabric_edge_exp_properties_t *e)
{
	size_t mlen = strnlen(e->model, sizeof(e->model));
	if (mlen == 4 && !memcmp(e->model, "MDFI", 4)) {
		p->mdfi++;
		return;
	}
	if (mlen != 6 || memcmp(e->model, "XeLink", 6))
		return; /* multi-hop ("XeLink-MDFI") or unknown edges are not links */
	ze_bandwidth_unit_t bu = e->bandwidthUnit <= ZE_BANDWIDTH_UNIT_BYTES_PER_CLOCK ? e->bandwidthUnit
										     : ZE_BANDWIDTH_UNIT_UNKNOWN;
	p->bw[bu] += e->bandwidth;
	p->bw_edges[bu]++;
	if (e->latencyUnit >= ZE_LATENCY_UNIT_NANOSEC && e->latencyUnit <= ZE_LATENCY_UNIT_HOP &&
	    (p->latency_unit == ZE_LATENCY_UNIT_UNKNOWN ||
	     (p->latency_unit == e->latencyUnit && e->latency < p->latency))) {
		p->latency = e->latency;
		p->latency_unit = e->latencyUnit;
	}
	if (p->xelink == 0)
		p->duplexity = (int)e->duplexity;
	else if (p->duplexity != (int)e->duplexity)
		p->duplexity = -1;
	p->xelink++;
}

/* The edges between endpoint a of device i and endpoint b of device j. */
static int edges_between(struct tally *p, ze_fabric_vertex_handle_t a, ze_fabric_vertex_handle_t b, int i, int j,
			 char *why)
{
	uint32_t ne = 0;
	ze_fabric_edge_handle_t *edges = NULL;
	ze_result_t r = ze.zeFabricEdgeGetExp(a, b, &ne, NULL);
	if (r == ZE_RESULT_SUCCESS && ne > MAX_HANDLES)
		r = ZE_RESULT_ERROR_INVALID_SIZE;
	if (r == ZE_RESULT_SUCCESS && ne) {
		if (!(edges = calloc(ne, sizeof(*edges)))) {
			snprintf(why, WHY_SIZE, "out of memory");
			return -1;
		}
		r = ze.zeFabricEdgeGetExp(a, b, &ne, edges);
	}
	if (r != ZE_RESULT_SUCCESS) {
		free(edges);
		call_failed(why, r, "zeFabricEdgeGetExp(device %d, device %d)", i, j);
		return -1;
	}
	for (uint32_t k = 0; k < ne; k++) {
		ze_fabric_edge_exp_properties_t e = { .stype = ZE_STRUCTURE_TYPE_FABRIC_EDGE_EXP_PROPERTIES };
		r = ze.zeFabricEdgeGetPropertiesExp(edges[k], &e);
		if (r != ZE_RESULT_SUCCESS) {
			free(edges);
			call_failed(why, r, "zeFabricEdgeGetPropertiesExp(device %d, device %d, edge %u)", i, j, k);
			return -1;
		}
		add_edge(p, &e);
	}
	free(edges);
	return 0;
}

/* Walks the fabric of every pair of devices; -1 with the reason (*rc: the
 * failing result of the listing of vertices, when that failed). */
static int fabric_collect(const struct dc_model *m, struct fabric *f, char *why, ze_result_t *rc)
{
	int n = m->n;
	*rc = ZE_RESULT_SUCCESS;
	f->pairs = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*f->pairs));
	f->first = malloc(((size_t)n + 1) * sizeof(int));
	f->count = calloc((size_t)n + 1, sizeof(int));
	if (!f->pairs || !f->first || !f->count) {
		snprintf(why, WHY_SIZE, "out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++)
		f->first[i] = -1;
	for (int d = 0; d < m->ngroups; d++)
		if (map_vertices(m, f, (uint32_t)d, why, rc) != 0)
			return -1;
	for (int i = 0; i < n; i++) {
		for (int j = i + 1; j < n; j++) {
			if (f->first[i] < 0 || f->first[j] < 0 || m->devices[i].group != m->devices[j].group)
				continue;
			struct tally *p = &f->pairs[dc_pair_index(i, j, n)];
			for (int a = 0; a < f->count[i]; a++)
				for (int c = 0; c < f->count[j]; c++)
					if (edges_between(p, f->endpoints[f->first[i] + a], f->endpoints[f->first[j] + c],
							  i, j, why) != 0)
						return -1;
			f->pairs[dc_pair_index(j, i, n)] = *p;
		}
	}
	return 0;
}

/* A pair's tally in the model's terms. */
static struct dc_pair_links links_of(const struct tally *t)
{
	static const enum dc_bw_unit bw_units[3] = { [ZE_BANDWIDTH_UNIT_UNKNOWN] = DC_BW_UNKNOWN,
						     [ZE_BANDWIDTH_UNIT_BYTES_PER_NANOSEC] = DC_BW_BYTES_PER_NS,
						     [ZE_BANDWIDTH_UNIT_BYTES_PER_CLOCK] = DC_BW_BYTES_PER_CLOCK };
	struct dc_pair_links l = { .fabric = t->xelink, .die = t->mdfi, .latency = t->latency };
	for (int u = 0; u < 3; u++) {
		l.bw[bw_units[u]] = t->bw[u];
		l.bw_links[bw_units[u]] = t->bw_edges[u];
	}
	l.latency_unit = t->latency_unit == ZE_LATENCY_UNIT_NANOSEC ? DC_LATENCY_NS
			 : t->latency_unit == ZE_LATENCY_UNIT_CLOCK ? DC_LATENCY_CLOCK
			 : t->latency_unit == ZE_LATENCY_UNIT_HOP	    ? DC_LATENCY_HOP
								    : DC_LATENCY_UNKNOWN;
	l.duplex = t->duplexity == ZE_FABRIC_EDGE_EXP_DUPLEXITY_FULL_DUPLEX   ? DC_DUPLEX_FULL
		   : t->duplexity == ZE_FABRIC_EDGE_EXP_DUPLEXITY_HALF_DUPLEX ? DC_DUPLEX_HALF
		   : t->duplexity < 0					      ? DC_DUPLEX_MIXED
									      : DC_DUPLEX_UNKNOWN;
	return l;
}

/* The fabric stage: every pair's Xe Link and MDFI links into m->pair_links. */
static void ask_fabric(struct dc_model *m, struct dc_stage *st)
{
	struct fabric f = { 0 };
	ze_result_t rc;
	int n = m->n;
	st->failed = fabric_collect(m, &f, st->why, &rc) != 0;
	st->unsupported = st->failed && rc == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (!st->failed && !(m->pair_links = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*m->pair_links)))) {
		st->failed = 1;
		snprintf(st->why, sizeof(st->why), "out of memory");
	}
	for (size_t k = 0; !st->failed && k < dc_pair_index(n, 0, n); k++)
		m->pair_links[k] = links_of(&f.pairs[k]);
	fabric_free(&f);
}

/* The peer stage: the P2P properties of every pair of devices of one driver
 * into m->peers, asked once per pair; the first failure voids them all. */
static void ask_peers(struct dc_model *m, struct dc_stage *st)
{
	int n = m->n;
	if (!m->peers && !(m->peers = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*m->peers)))) {
		st->nomem = 1;
		return;
	}
	for (int i = 0; i < n && !st->failed; i++) {
		for (int j = 0; j < n && !st->failed; j++) {
			if (i == j || m->devices[i].group != m->devices[j].group)
				continue;
			ze_device_p2p_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES };
			ze_result_t r = ze.zeDeviceGetP2PProperties(m->handles[i], m->handles[j], &p);
			if (r != ZE_RESULT_SUCCESS) {
				call_failed(st->why, r, "zeDeviceGetP2PProperties(device %d, device %d)", i, j);
				st->failed = 1;
				break;
			}
			struct dc_peer *peer = &m->peers[dc_pair_index(i, j, n)];
			unsigned char access = p.flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS ? DC_PEER_OK : DC_PEER_NS;
			peer->asked = 1;
			peer->status[DC_PEER_READ] = peer->status[DC_PEER_WRITE] = access;
			peer->status[DC_PEER_ATOMICS] = p.flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS ? DC_PEER_OK : DC_PEER_NS;
		}
	}
}

/* The model's fabric and peer facts, asked on their first need. */
static int model_fabric(struct dc_model *m)
{
	return dc_model_stage(m, &m->fabric_stage, &stage_lock, ask_fabric);
}

static int model_peers(struct dc_model *m)
{
	return dc_model_stage(m, &m->peer_stage, &stage_lock, ask_peers);
}

/* ------------------------------------------------------------ detectors */

/* The views below read the model only: what a stage lacks is asked through
 * it (model_fabric, model_peers), never from the vendor here. */

/* Sets device i's property key to the decimal v. */
static void set_number(dmaconn_builder *b, int i, const char *key, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", v);
	dmaconn_builder_set_device_property(b, i, key, buf);
}

static void set_identity(dmaconn_builder *b, const struct dc_model *m)
{
	char buf[64];
	for (int i = 0; i < m->n; i++) {
		const struct dc_device *d = &m->devices[i];
		if (m->vendor_ok)
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_NAME, d->long_name);
		if (d->node.has_pci) {
			dc_pci_format(&d->node.pci, buf);
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_PCI_BUS_ID, buf);
		}
		if (m->vendor_ok) {
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_UUID, m->ids[i].uuid);
			set_number(b, i, DMACONN_PROP_LEVEL_ZERO_DRIVER, d->group);
			set_number(b, i, DMACONN_PROP_LEVEL_ZERO_INDEX, d->group_index);
		}
		if (d->tile_known)
			set_number(b, i, DMACONN_PROP_TILE, d->tile);
		if (m->vendor_ok && d->tiles > 0)
			set_number(b, i, DMACONN_PROP_TILES, d->tiles);
	}
}

/* The pair's fabric detail: path, Xe Link bandwidth, latency and duplexity, MDFI. */
static void fabric_detail(dmaconn_builder *b, const struct dc_model *m, int i, int j)
{
	const struct dc_pair_links *p = &m->pair_links[dc_pair_index(i, j, m->n)];
	char buf[64];
	if (p->fabric > 0) {
		snprintf(buf, sizeof(buf), "XL%d", p->fabric);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PATH, buf);
		snprintf(buf, sizeof(buf), "%d", p->fabric);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_LINKS, buf);
		/* Design bandwidth; 1 byte per nanosecond is 1 GB/s. */
		if (p->bw_links[DC_BW_BYTES_PER_NS] == p->fabric) {
			snprintf(buf, sizeof(buf), "%.1f", (double)p->bw[DC_BW_BYTES_PER_NS]);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_GBPS, buf);
		} else if (p->bw_links[DC_BW_BYTES_PER_CLOCK] == p->fabric) {
			snprintf(buf, sizeof(buf), "%llu bytes/clock", p->bw[DC_BW_BYTES_PER_CLOCK]);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_BANDWIDTH, buf);
		}
		if (p->latency_unit != DC_LATENCY_UNKNOWN) {
			const char *unit = p->latency_unit == DC_LATENCY_NS	 ? "ns"
					   : p->latency_unit == DC_LATENCY_CLOCK ? (p->latency == 1 ? "clock" : "clocks")
										 : (p->latency == 1 ? "hop" : "hops");
			snprintf(buf, sizeof(buf), "%u %s", p->latency, unit);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_LATENCY, buf);
		}
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_DUPLEXITY,
						  p->duplex == DC_DUPLEX_FULL	 ? "full"
						  : p->duplex == DC_DUPLEX_HALF	 ? "half"
						  : p->duplex == DC_DUPLEX_MIXED ? "mixed"
										 : "unknown");
	} else if (p->die > 0) {
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PATH, "MDFI");
	}
	if (p->die > 0) {
		snprintf(buf, sizeof(buf), "%d", p->die);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_MDFI_LINKS, buf);
	}
}

typedef int view_body(dmaconn_builder *b, const struct dc_connection *row, struct dc_model *m);

static int xelink_body(dmaconn_builder *b, const struct dc_connection *row, struct dc_model *m)
{
	const char *label = row->label;
	const struct dc_stage *st = &m->fabric_stage;
	if (st->lacks) {
		dmaconn_builder_warn(b,
				     "%s: the Level Zero loader lacks %s (the fabric topology extension "
				     "ZE_experimental_fabric); assuming no Xe Link connectivity",
				     label, st->lacks);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	if (model_fabric(m) != 0) {
		dmaconn_builder_warn(b, "%s: %s; assuming no Xe Link connectivity", label, st->why);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	for (int i = 0; i < m->n; i++) {
		for (int j = 0; j < m->n; j++) {
			if (i == j)
				continue;
			dmaconn_builder_set(b, i, j, m->pair_links[dc_pair_index(i, j, m->n)].fabric);
			fabric_detail(b, m, i, j);
		}
	}
	return DMACONN_OK;
}

static const char *flags_name(int access, int atomics)
{
	return access && atomics ? "ACCESS|ATOMICS" : access ? "ACCESS" : atomics ? "ATOMICS" : "none";
}

static int p2p_body(dmaconn_builder *b, const struct dc_connection *row, struct dc_model *m)
{
	const char *label = row->label;
	const struct dc_stage *st = &m->peer_stage;
	int n = m->n;
	if (st->lacks) {
		dmaconn_builder_warn(b, "%s: the Level Zero loader lacks %s; assuming no peer access", label, st->lacks);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	int rc = model_peers(m);
	if (rc == -2)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	if (rc != 0) {
		dmaconn_builder_warn(b, "%s: %s; assuming no peer access", label, st->why);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			const struct dc_peer *p = &m->peers[dc_pair_index(i, j, n)];
			if (i == j || !p->asked)
				continue;
			int access = p->status[DC_PEER_READ] == DC_PEER_OK;
			int atomics = p->status[DC_PEER_ATOMICS] == DC_PEER_OK;
			dmaconn_builder_set(b, i, j, dc_peer_ok(row->peer, p->status));
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_READ, access ? "OK" : "NS");
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_WRITE,
							  p->status[DC_PEER_WRITE] == DC_PEER_OK ? "OK" : "NS");
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ATOMICS, atomics ? "OK" : "NS");
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_P2P_FLAGS, flags_name(access, atomics));
		}
	}

	/* The fabric adds paths and bandwidths to the pairs; a node without it
	 * (no extension, or a driver that does not support it) simply has none. */
	if (m->fabric_stage.lacks)
		return DMACONN_OK;
	if (model_fabric(m) != 0) {
		if (!m->fabric_stage.unsupported)
			dmaconn_builder_warn(b, "%s: %s; Xe Link paths and bandwidths are unknown", label,
					     m->fabric_stage.why);
	} else {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j)
					fabric_detail(b, m, i, j);
	}
	return DMACONN_OK;
}

/*
 * The view of row (a link filter: the Xe Links of each pair; a peer rule:
 * the P2P properties row->peer needs) computed from the model m alone:
 * sized from it, then, when Level Zero answered, the pairs (else one
 * warning, all zero), then the row's reasons for what it found.  The
 * detector below passes the discovered model; tests pass one they filled.
 */
int dc_ze_view_of_model(dmaconn_builder *b, struct dc_model *m, const struct dc_connection *row);
int dc_ze_view_of_model(dmaconn_builder *b, struct dc_model *m, const struct dc_connection *row)
{
	static view_body *const bodies[] = { [DC_COUNTS_LINKS] = xelink_body, [DC_COUNTS_PEER] = p2p_body };
	if (!row || (size_t)row->counts >= sizeof(bodies) / sizeof(bodies[0]) || !bodies[row->counts])
		return dc_fail(DMACONN_EINVAL, "Level Zero has no view of this connection type");
	const char *label = row->label;
	int rc = DMACONN_OK;
	if (dmaconn_builder_set_size(b, m->n) != DMACONN_OK)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	if (m->vendor_ok) {
		if (m->pci_why[0])
			dmaconn_builder_warn(b, "%s: %s; PCI bus ids are unknown", label, m->pci_why);
		if (m->tiles_why[0])
			dmaconn_builder_warn(b, "%s: %s; tile counts are unknown", label, m->tiles_why);
		set_identity(b, m);
		rc = bodies[row->counts](b, row, m);
	} else {
		set_identity(b, m);
		dc_builder_unavailable(b);
		dmaconn_builder_warn(b, "%s: %s; assuming no DMA connectivity (%d device%s counted without Level Zero)",
				     label, m->why, m->n, m->n == 1 ? "" : "s");
	}
	if (rc < 0)
		return rc;
	dc_reasons_of(b, row, NULL, NULL);
	return DMACONN_OK;
}

DC_MODEL_DETECTOR(dc_ze, model_get, dc_ze_view_of_model)

/* dc_backend.present: an Intel GPU (PCI vendor 0x8086) behind one of the
 * DRM cards. */
static int dc_ze_present(const char *root)
{
	char dir[4096];
	int n = snprintf(dir, sizeof(dir), "%s/sys/class/drm", root);
	if (n <= 0 || (size_t)n >= sizeof(dir))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d)) != NULL) {
		const char *num = e->d_name + 4;
		if (strncmp(e->d_name, "card", 4) || !*num || strspn(num, "0123456789") != strlen(num))
			continue;
		char path[4096 + 300], vendor[16] = "";
		snprintf(path, sizeof(path), "%s/%s/device/vendor", dir, e->d_name);
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			ssize_t got = read(fd, vendor, sizeof(vendor) - 1);
			vendor[got > 0 ? got : 0] = '\0';
			found = !strncmp(vendor, "0x8086", 6);
		}
		close(fd);
	}
	closedir(d);
	return found;
}

/* What Intel's runtime reads (the hierarchy shapes the devices, kept over
 * the whole node). */
static const struct dc_visibility dc_ze_visibility[] = {
	{ "ZE_AFFINITY_MASK", 1, NULL, 0 },
	{ "ZE_FLAT_DEVICE_HIERARCHY", 0, NULL, 0 },
};

const struct dc_backend dc_backend_level_zero = { DC_BACKEND_FIELDS("level_zero", DMACONN_DEVICE_XPU, dc_ze),
						  .source = "Level Zero" };
