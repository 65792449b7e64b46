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
#include <stdatomic.h>
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

#define WHY_SIZE 768
#define MAX_HANDLES 4096 /* drivers, devices, vertices or edges one call may list */

static pthread_mutex_t ze_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;  /* before ze_lock */
static pthread_mutex_t facts_lock = PTHREAD_MUTEX_INITIALIZER; /* the lazily asked facts */

static void dc_ze_fork(int phase)
{
	static pthread_mutex_t *const locks[] = { &topo_lock, &facts_lock, &ze_lock };
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
		const char *load_error = ops->library_load_error ? ops->library_load_error("level_zero") : NULL;
		if (load_error) {
			record(NULL, load_error);
			dlclose(h);
			/* Marked as NVML's and the KFD's absences are under replay. */
			snprintf(why, WHY_SIZE, "cannot load Level Zero: %.600s%s", load_error,
				 strstr(load_error, "(replayed)") ? "" : " (replayed)");
			return -1;
		}
		/* The component's table; its handle keeps the component mapped. */
		if (ops->ze_table(&ze, why, WHY_SIZE) != 0) {
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

struct zdev {
	ze_device_handle_t h;
	int driver, index; /* zeDriverGet and zeDeviceGet positions */
	ze_device_properties_t props;
	int has_pci;
	struct dc_pci pci;
	int subdevices; /* -1: unknown */
	int tile;       /* the tile this device is (-1: none or unknown), in sysfs fallbacks */
};

struct fabric;
static void fabric_free(struct fabric *f);

/*
 * What discovery found, once per process (and per device-exposing
 * environment when counted from sysfs): shared read-only by the views,
 * reference-counted.  The fabric and the P2P properties are asked by the
 * first view that needs them, under facts_lock, and kept.
 */
struct ze_topo {
	atomic_int refs;
	uint32_t ndrivers;
	ze_driver_handle_t *drivers;
	int n;
	struct zdev *devs;
	int from_ze;       /* devices come from Level Zero (else from sysfs, without handles) */
	char why[WHY_SIZE];     /* !from_ze: why Level Zero is unusable */
	char pci_why[WHY_SIZE]; /* a PCI property query failed ("" none) */
	char sub_why[WHY_SIZE]; /* a sub-device query failed ("" none) */
	int fabric_done, fabric_failed;
	ze_result_t fabric_rc;
	char fabric_why[WHY_SIZE];
	struct fabric *fabric;
	int p2p_done, p2p_failed;
	char p2p_why[WHY_SIZE];
	ze_device_p2p_property_flags_t *flags; /* n*n */
};

static void topo_release(void *p)
{
	struct ze_topo *t = p;
	if (!t || !dc_unref(&t->refs))
		return;
	if (t->fabric)
		fabric_free(t->fabric);
	free(t->fabric);
	free(t->flags);
	free(t->drivers);
	free(t->devs);
	free(t);
}

/* A view under way: the topology, its arrays borrowed. */
struct session {
	const char *label; /* "xpu/p2p" */
	struct ze_topo *t;
	uint32_t ndrivers;
	ze_driver_handle_t *drivers;
	int n;
	struct zdev *devs;
	int from_ze;
};

static void session_free(struct session *s)
{
	topo_release(s->t);
}

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

/* Every GPU device of every driver, with its identity. */
static int enumerate(struct ze_topo *s, char *why)
{
	ze_result_t rc;
	if (list_drivers(NULL, &s->drivers, &s->ndrivers, &rc, why, "zeDriverGet") != 0)
		return -1;
	int cap = 0;
	for (uint32_t d = 0; d < s->ndrivers; d++) {
		uint32_t count = 0;
		ze_device_handle_t *handles = NULL;
		if (list_devices(s->drivers[d], &handles, &count, &rc, why, "zeDeviceGet(driver %u)", d) != 0)
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
			if (s->n == cap) {
				int ncap = cap ? cap * 2 : 8;
				struct zdev *grown = ncap <= MAX_HANDLES ? realloc(s->devs, (size_t)ncap * sizeof(*grown)) : NULL;
				if (!grown) {
					snprintf(why, WHY_SIZE, "out of memory for %d devices", ncap);
					free(handles);
					return -1;
				}
				s->devs = grown;
				cap = ncap;
			}
			struct zdev *z = &s->devs[s->n++];
			memset(z, 0, sizeof(*z));
			z->h = handles[k];
			z->driver = (int)d;
			z->index = (int)k;
			z->props = p;
			z->subdevices = -1;
			z->tile = -1;
		}
		free(handles);
	}
	s->from_ze = 1;
	return 0;
}

/* PCI addresses and sub-device counts: identity only, so a failure is a
 * warning, not a reason to doubt the matrix. */
static void identify(struct ze_topo *s)
{
	int pci_warned = 0, sub_warned = 0;
	for (int i = 0; i < s->n; i++) {
		struct zdev *z = &s->devs[i];
		if (ze.zeDevicePciGetPropertiesExt) {
			ze_pci_ext_properties_t p = { .stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES };
			ze_result_t r = ze.zeDevicePciGetPropertiesExt(z->h, &p);
			if (r == ZE_RESULT_SUCCESS) {
				z->has_pci = p.address.bus <= 0xff && p.address.device <= 0xff && p.address.function <= 7;
				z->pci = (struct dc_pci){ p.address.domain, p.address.bus, p.address.device, p.address.function };
			} else if (!pci_warned++) {
				call_failed(s->pci_why, r, "zeDevicePciGetPropertiesExt(device %d)", i);
			}
		}
		if (ze.zeDeviceGetSubDevices) {
			uint32_t count = 0;
			ze_result_t r = ze.zeDeviceGetSubDevices(z->h, &count, NULL);
			if (r == ZE_RESULT_SUCCESS) {
				z->subdevices = (int)count;
			} else if (!sub_warned++) {
				call_failed(s->sub_why, r, "zeDeviceGetSubDevices(device %d)", i);
			}
		}
	}
}

static void set_identity(dmaconn_builder *b, const struct session *s)
{
	char buf[64];
	for (int i = 0; i < s->n; i++) {
		const struct zdev *z = &s->devs[i];
		if (s->from_ze) {
			char name[ZE_MAX_DEVICE_NAME];
			snprintf(name, sizeof(name), "%.*s", (int)strnlen(z->props.name, sizeof(z->props.name)),
				 z->props.name);
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_NAME, name);
		}
		if (z->has_pci) {
			dc_pci_format(&z->pci, buf);
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_PCI_BUS_ID, buf);
		}
		if (!s->from_ze) {
			if (z->tile >= 0) {
				snprintf(buf, sizeof(buf), "%d", z->tile);
				dmaconn_builder_set_device_property(b, i, DMACONN_PROP_TILE, buf);
			}
			continue;
		}
		dc_uuid_format(z->props.uuid.id, buf);
		dmaconn_builder_set_device_property(b, i, DMACONN_PROP_UUID, buf);
		snprintf(buf, sizeof(buf), "%d", z->driver);
		dmaconn_builder_set_device_property(b, i, DMACONN_PROP_LEVEL_ZERO_DRIVER, buf);
		snprintf(buf, sizeof(buf), "%d", z->index);
		dmaconn_builder_set_device_property(b, i, DMACONN_PROP_LEVEL_ZERO_INDEX, buf);
		if (z->props.flags & ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE) {
			snprintf(buf, sizeof(buf), "%u", z->props.subdeviceId);
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_TILE, buf);
		}
		if (z->subdevices > 0) {
			snprintf(buf, sizeof(buf), "%d", z->subdevices);
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_TILES, buf);
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

/* N without Level Zero: the Intel GPUs of sysfs, shown as the runtime would
 * show them (ZE_AFFINITY_MASK, ZE_FLAT_DEVICE_HIERARCHY; the default
 * hierarchy is FLAT when the first card has tiles, as on Data Center GPU
 * Max, and COMPOSITE otherwise, which shows single-tile cards alike). */
static int fallback_devices(struct ze_topo *s)
{
	struct zcard *cards;
	int ncards = sysfs_cards(&cards);
	int *tiles = calloc((size_t)ncards + 1, sizeof(int));
	struct dc_ze_root *roots = NULL;
	struct dc_ze_device *devices = NULL;
	int nroots = 0, ndevices = 0, rc = -1;
	if (!tiles)
		goto out;
	for (int c = 0; c < ncards; c++)
		tiles[c] = cards[c].tiles;
	enum dc_ze_hierarchy h = dc_ze_hierarchy(dc_getenv("ZE_FLAT_DEVICE_HIERARCHY"),
						 ncards && tiles[0] > 1 ? DC_ZE_FLAT : DC_ZE_COMPOSITE);
	if (dc_ze_expose(tiles, ncards, h, dc_getenv("ZE_AFFINITY_MASK"), &roots, &nroots, &devices, &ndevices))
		goto out;
	free(s->devs);
	s->devs = calloc((size_t)ndevices + 1, sizeof(*s->devs));
	if (!s->devs)
		goto out;
	for (int i = 0; i < ndevices; i++) {
		s->devs[i].has_pci = 1;
		s->devs[i].pci = cards[devices[i].card].pci;
		s->devs[i].tile = devices[i].tile;
	}
	s->n = ndevices;
	s->from_ze = 0;
	rc = 0;
out:
	free(cards);
	free(tiles);
	free(roots);
	free(devices);
	return rc;
}

/* Loads Level Zero and lists the devices, or counts them from sysfs (as
 * the environment of the discovery's key says); NULL when out of memory. */
static void *discover_topo(void)
{
	struct ze_topo *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	atomic_init(&t->refs, 1);
	if (ze_ready(t->why) == 0 && enumerate(t, t->why) == 0) {
		identify(t);
		return t;
	}
	free(t->drivers);
	t->drivers = NULL;
	t->ndrivers = 0;
	if (fallback_devices(t) != 0) {
		topo_release(t);
		return NULL;
	}
	return t;
}

/* The last discovery, under topo_lock. */
static struct dc_discovery ze_discovery =
	DC_DISCOVERY_OF(struct ze_topo, &topo_lock, discover_topo, topo_release);

/* The topology to compute views from: discovered on first use, again for a
 * fresh detection or when the variables that expose devices read otherwise
 * (as for a detection over the whole node).  A new reference, or NULL. */
static struct ze_topo *topo_get(void)
{
	const char *mask = dc_getenv("ZE_AFFINITY_MASK"), *flat = dc_getenv("ZE_FLAT_DEVICE_HIERARCHY");
	const char *root = dc_config()->sysfs_root;
	size_t len = 16 + (mask ? strlen(mask) : 0) + (flat ? strlen(flat) : 0) + (root ? strlen(root) : 0);
	char *key = malloc(len);
	if (!key)
		return NULL;
	snprintf(key, len, "%c%s|%c%s|%s", mask ? '=' : '-', mask ? mask : "", flat ? '=' : '-', flat ? flat : "",
		 root ? root : "");
	struct ze_topo *t = dc_discovery_get(&ze_discovery, key);
	free(key);
	return t;
}

DC_DISCOVERY_HOOKS(dc_ze, ze_discovery, topo_get)

/*
 * Takes the topology and sizes the result.  Returns 1 when the view can go
 * on, 0 when Level Zero is unusable (one warning raised, the result sized
 * from sysfs, all zero), or a negative dmaconn error.
 */
static int session_begin(dmaconn_builder *b, struct session *s)
{
	int rc = dc_replay_check();
	if (rc != DMACONN_OK)
		return rc;
	struct ze_topo *t = s->t = topo_get();
	if (!t)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	s->ndrivers = t->ndrivers;
	s->drivers = t->drivers;
	s->n = t->n;
	s->devs = t->devs;
	s->from_ze = t->from_ze;
	if (dmaconn_builder_set_size(b, s->n) != DMACONN_OK)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	if (t->from_ze) {
		if (t->pci_why[0])
			dmaconn_builder_warn(b, "%s: %s; PCI bus ids are unknown", s->label, t->pci_why);
		if (t->sub_why[0])
			dmaconn_builder_warn(b, "%s: %s; tile counts are unknown", s->label, t->sub_why);
		set_identity(b, s);
		return 1;
	}
	set_identity(b, s);
	dc_builder_unavailable(b);
	dmaconn_builder_warn(b, "%s: %s; assuming no DMA connectivity (%d device%s counted without Level Zero)",
			     s->label, t->why, s->n, s->n == 1 ? "" : "s");
	return 0;
}

/* ------------------------------------------------------------- the fabric */

/* What the fabric says about one pair of devices (symmetric). */
struct link_facts {
	int xelink, mdfi;         /* edges of model "XeLink" and "MDFI" */
	uint64_t bw[3];           /* XeLink bandwidth summed by ze_bandwidth_unit_t */
	int bw_edges[3];          /* XeLink edges per bandwidth unit */
	uint32_t latency;         /* the lowest XeLink latency of a known unit */
	ze_latency_unit_t latency_unit;
	int duplexity;            /* of the XeLink edges: a ze_fabric_edge_exp_duplexity_t, or -1 when they differ */
};

struct fabric {
	int n;
	struct link_facts *pairs; /* n*n */
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

static int find_device(const struct session *s, int driver, ze_device_handle_t h)
{
	for (int i = 0; i < s->n; i++)
		if (s->devs[i].driver == driver && s->devs[i].h == h)
			return i;
	return -1;
}

/* Each device's endpoints: the sub-vertices of its vertex, or the vertex. */
static int map_vertices(const struct session *s, struct fabric *f, uint32_t d, char *why, ze_result_t *first_rc)
{
	uint32_t nv = 0;
	ze_fabric_vertex_handle_t *vertices = NULL;
	if (list_vertices(s->drivers[d], &vertices, &nv, first_rc, why, "zeFabricVertexGetExp(driver %u)", d) != 0)
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
		int i = find_device(s, (int)d, dh);
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

static void add_edge(struct link_facts *p, const ze_fabric_edge_exp_properties_t *e)
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
static int edges_between(struct link_facts *p, ze_fabric_vertex_handle_t a, ze_fabric_vertex_handle_t b, int i,
			 int j, char *why)
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

/* Collects the fabric facts of every pair of devices; -1 with the reason
 * (*rc: the failing result, when a call failed). */
static int fabric_collect(const struct session *s, struct fabric *f, char *why, ze_result_t *rc)
{
	int n = s->n;
	memset(f, 0, sizeof(*f));
	*rc = ZE_RESULT_SUCCESS;
	f->n = n;
	f->pairs = calloc((size_t)n * (size_t)n + 1, sizeof(*f->pairs));
	f->first = malloc(((size_t)n + 1) * sizeof(int));
	f->count = calloc((size_t)n + 1, sizeof(int));
	if (!f->pairs || !f->first || !f->count) {
		snprintf(why, WHY_SIZE, "out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++)
		f->first[i] = -1;
	for (uint32_t d = 0; d < s->ndrivers; d++)
		if (map_vertices(s, f, d, why, rc) != 0)
			return -1;
	for (int i = 0; i < n; i++) {
		for (int j = i + 1; j < n; j++) {
			if (f->first[i] < 0 || f->first[j] < 0 || s->devs[i].driver != s->devs[j].driver)
				continue;
			struct link_facts *p = &f->pairs[(size_t)i * (size_t)n + (size_t)j];
			for (int a = 0; a < f->count[i]; a++)
				for (int c = 0; c < f->count[j]; c++)
					if (edges_between(p, f->endpoints[f->first[i] + a], f->endpoints[f->first[j] + c],
							  i, j, why) != 0)
						return -1;
			f->pairs[(size_t)j * (size_t)n + (size_t)i] = *p;
		}
	}
	return 0;
}

/* The fabric facts of the session's topology, asked once; NULL with why
 * and *rc when they could not be collected. */
static const struct fabric *topo_fabric(const struct session *s, char *why, ze_result_t *rc)
{
	struct ze_topo *t = s->t;
	pthread_mutex_lock(&facts_lock);
	if (!t->fabric_done) {
		t->fabric = calloc(1, sizeof(*t->fabric));
		if (!t->fabric) {
			t->fabric_failed = 1;
			t->fabric_rc = ZE_RESULT_SUCCESS;
			snprintf(t->fabric_why, sizeof(t->fabric_why), "out of memory");
		} else {
			t->fabric_failed = fabric_collect(s, t->fabric, t->fabric_why, &t->fabric_rc) != 0;
		}
		t->fabric_done = 1;
	}
	pthread_mutex_unlock(&facts_lock);
	snprintf(why, WHY_SIZE, "%s", t->fabric_why);
	*rc = t->fabric_rc;
	return t->fabric_failed ? NULL : t->fabric;
}

static const struct link_facts *pair_of(const struct fabric *f, int i, int j)
{
	return &f->pairs[(size_t)i * (size_t)f->n + (size_t)j];
}

/* The pair's fabric detail: path, Xe Link bandwidth, latency and duplexity, MDFI. */
static void fabric_detail(dmaconn_builder *b, const struct fabric *f, int i, int j)
{
	const struct link_facts *p = pair_of(f, i, j);
	char buf[64];
	if (p->xelink > 0) {
		snprintf(buf, sizeof(buf), "XL%d", p->xelink);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PATH, buf);
		snprintf(buf, sizeof(buf), "%d", p->xelink);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_LINKS, buf);
		/* Design bandwidth; 1 byte per nanosecond is 1 GB/s. */
		if (p->bw_edges[ZE_BANDWIDTH_UNIT_BYTES_PER_NANOSEC] == p->xelink) {
			snprintf(buf, sizeof(buf), "%.1f", (double)p->bw[ZE_BANDWIDTH_UNIT_BYTES_PER_NANOSEC]);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_GBPS, buf);
		} else if (p->bw_edges[ZE_BANDWIDTH_UNIT_BYTES_PER_CLOCK] == p->xelink) {
			snprintf(buf, sizeof(buf), "%llu bytes/clock",
				 (unsigned long long)p->bw[ZE_BANDWIDTH_UNIT_BYTES_PER_CLOCK]);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_BANDWIDTH, buf);
		}
		if (p->latency_unit != ZE_LATENCY_UNIT_UNKNOWN) {
			const char *unit = p->latency_unit == ZE_LATENCY_UNIT_NANOSEC ? "ns"
					   : p->latency_unit == ZE_LATENCY_UNIT_CLOCK ? (p->latency == 1 ? "clock" : "clocks")
					   : (p->latency == 1 ? "hop" : "hops");
			snprintf(buf, sizeof(buf), "%u %s", p->latency, unit);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_LATENCY, buf);
		}
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_XELINK_DUPLEXITY,
						  p->duplexity == ZE_FABRIC_EDGE_EXP_DUPLEXITY_FULL_DUPLEX   ? "full"
						  : p->duplexity == ZE_FABRIC_EDGE_EXP_DUPLEXITY_HALF_DUPLEX ? "half"
						  : p->duplexity < 0					     ? "mixed"
												     : "unknown");
	} else if (p->mdfi > 0) {
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_PATH, "MDFI");
	}
	if (p->mdfi > 0) {
		snprintf(buf, sizeof(buf), "%d", p->mdfi);
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_MDFI_LINKS, buf);
	}
}

/* ------------------------------------------------------------ detectors */

/* A view: body over an open session, then the host's reasons for what it
 * found (p2p: for peer access). */
static int with_session(dmaconn_builder *b, const char *label, int p2p,
			int (*body)(dmaconn_builder *, struct session *))
{
	struct session s = { .label = label };
	int rc = session_begin(b, &s);
	if (rc > 0)
		rc = body(b, &s);
	session_free(&s);
	if (rc < 0)
		return rc;
	dc_reasons_vendor(b, 0, p2p);
	return DMACONN_OK;
}

static int xelink_body(dmaconn_builder *b, struct session *s)
{
	char why[WHY_SIZE];
	const char *missing;
	if (!fabric_available(&missing)) {
		dmaconn_builder_warn(b,
				     "%s: the Level Zero loader lacks %s (the fabric topology extension "
				     "ZE_experimental_fabric); assuming no Xe Link connectivity",
				     s->label, missing);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	ze_result_t rc;
	const struct fabric *f = topo_fabric(s, why, &rc);
	if (!f) {
		dmaconn_builder_warn(b, "%s: %s; assuming no Xe Link connectivity", s->label, why);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	for (int i = 0; i < s->n; i++) {
		for (int j = 0; j < s->n; j++) {
			if (i == j)
				continue;
			dmaconn_builder_set(b, i, j, pair_of(f, i, j)->xelink);
			fabric_detail(b, f, i, j);
		}
	}
	return DMACONN_OK;
}

static int dc_ze_detect_xelink(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return with_session(b, "xpu/xelink", 0, xelink_body);
}

static const char *flags_name(ze_device_p2p_property_flags_t flags)
{
	int access = (flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS) != 0;
	int atomics = (flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS) != 0;
	return access && atomics ? "ACCESS|ATOMICS" : access ? "ACCESS" : atomics ? "ATOMICS" : "none";
}

static int p2p_body(dmaconn_builder *b, struct session *s)
{
	char why[WHY_SIZE];
	int n = s->n;
	if (!ze.zeDeviceGetP2PProperties) {
		dmaconn_builder_warn(b, "%s: the Level Zero loader lacks zeDeviceGetP2PProperties; assuming no peer access",
				     s->label);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	struct ze_topo *t = s->t;
	pthread_mutex_lock(&facts_lock);
	if (!t->p2p_done && (t->flags = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*t->flags)))) {
		/* Asked once per pair; the first failure voids them all. */
		for (int i = 0; i < n && !t->p2p_failed; i++) {
			for (int j = 0; j < n && !t->p2p_failed; j++) {
				if (i == j || s->devs[i].driver != s->devs[j].driver)
					continue;
				ze_device_p2p_properties_t p = { .stype = ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES };
				ze_result_t r = ze.zeDeviceGetP2PProperties(s->devs[i].h, s->devs[j].h, &p);
				if (r != ZE_RESULT_SUCCESS) {
					call_failed(t->p2p_why, r, "zeDeviceGetP2PProperties(device %d, device %d)", i, j);
					t->p2p_failed = 1;
				}
				t->flags[dc_pair_index(i, j, n)] = p.flags;
			}
		}
		t->p2p_done = 1;
	}
	pthread_mutex_unlock(&facts_lock);
	const ze_device_p2p_property_flags_t *flags = t->flags;
	if (!flags)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	if (t->p2p_failed) {
		dmaconn_builder_warn(b, "%s: %s; assuming no peer access", s->label, t->p2p_why);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j || s->devs[i].driver != s->devs[j].driver)
				continue;
			ze_device_p2p_property_flags_t fl = flags[dc_pair_index(i, j, n)];
			int access = (fl & ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS) != 0;
			int atomics = (fl & ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS) != 0;
			dmaconn_builder_set(b, i, j, access && atomics);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_READ, access ? "OK" : "NS");
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_WRITE, access ? "OK" : "NS");
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_ATOMICS, atomics ? "OK" : "NS");
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_P2P_FLAGS, flags_name(fl));
		}
	}

	/* The fabric adds paths and bandwidths to the pairs; a node without it
	 * (no extension, or a driver that does not support it) simply has none. */
	const char *missing;
	if (!fabric_available(&missing))
		return DMACONN_OK;
	ze_result_t rc;
	const struct fabric *f = topo_fabric(s, why, &rc);
	if (!f) {
		if (rc != ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
			dmaconn_builder_warn(b, "%s: %s; Xe Link paths and bandwidths are unknown", s->label, why);
	} else {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j)
					fabric_detail(b, f, i, j);
	}
	return DMACONN_OK;
}

static int dc_ze_detect_p2p(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	return with_session(b, "xpu/p2p", 1, p2p_body);
}

static const struct dc_view dc_ze_views[] = {
	{ "p2p", dc_ze_detect_p2p },
	{ "xelink", dc_ze_detect_xelink },
};

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
	{ "ZE_AFFINITY_MASK", 1, NULL },
	{ "ZE_FLAT_DEVICE_HIERARCHY", 0, NULL },
};

const struct dc_backend dc_backend_level_zero = { DC_BACKEND_FIELDS("level_zero", DMACONN_DEVICE_XPU, dc_ze) };
