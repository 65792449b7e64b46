/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The backend interface, in the spirit of hwloc's components: each vendor
 * file (nvml.c, kfd.c, level_zero.c) ends in one dc_backend descriptor, and
 * table.c is the only place that lists them.  The core iterates the table
 * for the built-in detectors, fork handling and shutdown, and names no
 * backend.
 */
#ifndef DMACONN_BACKEND_H
#define DMACONN_BACKEND_H

#include "dmaconn.h"

/*
 * What a vendor library says about where a device sits (dmaconn_placement,
 * src/placement.c): the CPUs and NUMA nodes it calls local, the NUMA node
 * of the device's own memory and its NVLink-C2C links.  Each *_rc is the
 * vendor's status of the answer (0: it answered; -1: never asked).
 */
#define DC_PLACE_CPU_WORDS 64 /* 4096 CPUs */
#define DC_PLACE_NODE_WORDS 16 /* 1024 NUMA nodes */
struct dc_place_facts {
	int cpus_rc;
	unsigned long cpus[DC_PLACE_CPU_WORDS];
	int mems_rc;
	unsigned long mems[DC_PLACE_NODE_WORDS];
	int numa_id_rc;
	unsigned int numa_id;          /* the NUMA node of the device's memory */
	int c2c_rc;                    /* the link count's */
	unsigned int c2c_links;
	int c2c_status_rc, c2c_bw_rc;
	unsigned int c2c_status, c2c_bw; /* 1 active; MB/s per link */
};

/*
 * A vendor library a backend dlopens: its name as a recording calls it, the
 * soname tried by default, the variable that overrides its path (read once
 * per detection into dc_config(), src/env.c) and, for messages, what it is
 * and a hint when it cannot be loaded.
 */
struct dc_library {
	const char *name;     /* "nvml", "level_zero", "rocm_smi" */
	const char *soname;   /* "libnvidia-ml.so.1" */
	const char *override; /* "DMACONN_NVML_LIBRARY" */
	const char *what;     /* "NVML" */
	const char *hint;     /* "is the NVIDIA driver installed?", or NULL */
};

/*
 * A variable of the vendor's runtime that decides which of the devices it
 * shows, or in which order.  A detection over the whole node
 * (dmaconn_detect_node) reads it unset when it hides devices, as node_value
 * when it has one (an order), else as it is.  A recording pins each one.
 */
struct dc_visibility {
	const char *name; /* "CUDA_VISIBLE_DEVICES" */
	int hides;
	const char *node_value; /* "PCI_BUS_ID", or NULL */
	/* 1 for another API's variable the vendor's runtime does not follow
	 * (GPU_DEVICE_ORDINAL is OpenCL's, not HIP's): pinned and hidden all
	 * the same, never named as one the order follows (dmaconn_variable). */
	int ignored;
};

struct dc_backend {
	const char *name; /* "nvml", "kfd", "level_zero" */
	dmaconn_device_type type;
	/* Where its facts come from, as the texts it leads to (reasons,
	 * warnings) name it: "NVML", "KFD topology", "Level Zero"; NULL for
	 * a backend that adds no devices of its own (dc_source_of). */
	const char *source;
	/*
	 * Whether the vendor's kernel driver is loaded (a user-space library
	 * alone says nothing about devices), looked for below root ("" for /)
	 * in the live tree; NULL for a backend that adds no devices of its own
	 * (dmaconn_driver_loaded, src/dmaconn.c).
	 */
	int (*present)(const char *root);
	/* The libraries it dlopens, and its runtime's visibility variables. */
	const struct dc_library *libraries;
	int nlibraries;
	const struct dc_visibility *visibility;
	int nvisibility;
	/* Its own tuning variables ("DMACONN_NVML_THREADS"), read once per
	 * detection into dc_config() like the libraries' overrides and read
	 * back through dc_config_variable() (src/env.c); none when NULL. */
	const char *const *variables;
	int nvariables;
	/*
	 * Discovers the vendor's devices into the backend's node model
	 * (src/model/model.h), once per process; fresh: discover again.  0, or
	 * a negative dmaconn error.  The views take the model the same way, so
	 * calling it is optional; NULL for a backend whose views still read
	 * the vendor themselves.
	 */
	int (*discover)(int fresh);
	/* Its views: the detector of every connection type it serves -- the
	 * rows of the connection table (src/model/connections.c) of its device
	 * type, or the rows that name it (dc_connection_next) -- registered
	 * in the table's order.  Each row's link filter, peer or domain rule,
	 * legend and reasons are the row's, not repeated here; the detector
	 * reads them through dc_connection_of(). */
	dmaconn_detector_fn detect;
	/* fork() handling: DC_FORK_PREPARE takes the backend's locks,
	 * DC_FORK_PARENT and DC_FORK_CHILD release them (internal.h). */
	void (*atfork)(int phase);
	/* Forgets what was discovered (dmaconn_clear_cache); NULL when the
	 * backend keeps nothing. */
	void (*forget)(void);
	/* Forgets what was discovered and unloads the vendor library. */
	void (*shutdown)(void);
	/* The facts of the n devices at PCI addresses bus_ids (a runtime's
	 * order, "dddd:bb:dd.f") from the backend's discovery; a device it
	 * does not know keeps out[i] untouched.  NULL for a backend without
	 * any.  Returns the kernel's NUMA node of each in numa[i] as discovery
	 * read it (dc_sysfs_numa_node), or leaves it. */
	void (*place)(const char *const *bus_ids, int n, struct dc_place_facts *out, int *numa);
};

/* Every backend, in registration order, NULL-terminated (table.c). */
extern const struct dc_backend *const dc_backends[];

#define DC_COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* .libraries and .nlibraries of a descriptor, from a static array; the
 * same for .visibility and .variables. */
#define DC_LIBRARIES(l) .libraries = (l), .nlibraries = DC_COUNT_OF(l)
#define DC_VISIBILITY(v) .visibility = (v), .nvisibility = DC_COUNT_OF(v)
#define DC_VARIABLES(v)  .variables = (v), .nvariables = DC_COUNT_OF(v)

/* The library of any backend whose override variable is var, or NULL; its
 * index among all the backends' libraries in *index (src/env.c). */
const struct dc_library *dc_library_of(const char *var, int *index);
/* The visibility variable name of any backend, or NULL. */
const struct dc_visibility *dc_visibility_of(const char *name);
/* The source of the first backend of type that has one (its texts' word
 * for where the type's facts come from), or "?" (src/dmaconn.c). */
const char *dc_source_of(dmaconn_device_type type);
/* Whether path exists below root ("" for /), in the live tree. */
int dc_live_exists(const char *root, const char *path);

/* The descriptor fields of backend `name`, whose functions are
 * prefix##_discover, _fork, _forget, _shutdown, _present and _detect (its
 * views), whose libraries are the array prefix##_libraries and visibility
 * variables prefix##_visibility; a descriptor may set more (.place). */
#define DC_BACKEND_FIELDS(name_, type_, prefix)                                                        \
	.name = (name_), .type = (type_), .present = prefix##_present, DC_LIBRARIES(prefix##_libraries), \
	DC_VISIBILITY(prefix##_visibility), .discover = prefix##_discover, .detect = prefix##_detect,      \
	.atfork = prefix##_fork, .forget = prefix##_forget, .shutdown = prefix##_shutdown

/* An atfork of a backend whose state is guarded by locks: taken in the order
 * given before fork, released in reverse after it (dmaconn.c). */
#include <pthread.h>
#include <stddef.h>
void dc_fork_locks(int phase, pthread_mutex_t *const *locks, int n);

/*
 * A backend's last discovery (its struct dc_model), shared by
 * reference: made on first use, made again for a fresh detection or when
 * the one kept was made under another key (the variables it depends on), and
 * dropped by forget (the views keep the references they hold).  The hooks
 * take and give the backend's own type as void pointers.  The functions are
 * the core's (src/discovery.c).
 */
struct dc_discovery {
	pthread_mutex_t *lock; /* guards cur; the backend's, for its fork handling */
	void *cur;             /* the discovery kept, or NULL */
	char *key;             /* the key cur was made under, or NULL */
	size_t refs_at;        /* offset of its atomic_int reference count */
	/* A new discovery (the backend reads what its key stands for itself),
	 * holding one reference; NULL out of memory. */
	void *(*make)(void);
	/* Drops a reference (NULL: nothing); the last one frees (dc_unref). */
	void (*release)(void *cur);
};

/* A new reference to the discovery for key (made when needed, see above), or
 * NULL when none could be made. */
void *dc_discovery_get(struct dc_discovery *d, const char *key);
/* Drops the discovery kept. */
void dc_discovery_forget(struct dc_discovery *d);
/* A dc_backend.discover over got, a dc_discovery_get() answer: drops it,
 * DMACONN_OK when there was one, else DMACONN_ENOMEM. */
int dc_discovery_made(struct dc_discovery *d, void *got);

/* A view's model: when the replay (if any) is usable, get()'s new
 * reference; else NULL with *rc the negative dmaconn error (the replay's,
 * or out of memory). */
struct dc_model;
struct dc_model *dc_view_model(struct dc_model *(*get)(void), int *rc);

/* The dc_discovery of a backend's type, counted by its member refs. */
#define DC_DISCOVERY_OF(type, lock_, make_, release_) \
	{ .lock = (lock_), .refs_at = offsetof(type, refs), .make = (make_), .release = (release_) }

/* A backend's prefix##_forget and prefix##_discover over its dc_discovery d,
 * which get() takes a reference to. */
#define DC_DISCOVERY_HOOKS(prefix, d, get)                     \
	static void prefix##_forget(void)                      \
	{                                                      \
		dc_discovery_forget(&(d));                     \
	}                                                      \
	static int prefix##_discover(int fresh)                \
	{                                                      \
		if (fresh)                                     \
			prefix##_forget();                     \
		return dc_discovery_made(&(d), get());         \
	}

/* A backend's prefix##_detect (dc_backend.detect): every view of a model
 * backend is the row the detector is registered for, computed by view over
 * get()'s model (dc_connection_view, src/model/connections.h). */
#define DC_MODEL_DETECTOR(prefix, get, view)                                 \
	static int prefix##_detect(dmaconn_builder *b, void *user_data)       \
	{                                                                     \
		(void)user_data;                                              \
		return dc_connection_view(b, get, view);                      \
	}

#endif
