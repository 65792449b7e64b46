/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn: which accelerators can issue load/store and atomic operations on
 * each other's memory, over what link, and how many links.
 *
 * Error rule, stated once: every function returning int returns DMACONN_OK (0)
 * on success or a negative dmaconn_error code; dmaconn_strerror() names it and
 * dmaconn_last_error() gives the calling thread's detailed message for the
 * last failure.  Functions returning pointers return NULL on failure.
 *
 * The library never aborts and never prints except through the warning sink
 * (see dmaconn_set_warning_handler).  It never loads or initialises the CUDA
 * runtime or driver.
 */
#ifndef DMACONN_H
#define DMACONN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DMACONN_BUILDING) && defined(__GNUC__)
#define DMACONN_EXTERN __attribute__((visibility("default")))
#else
#define DMACONN_EXTERN
#endif

#define DMACONN_VERSION_MAJOR 0
#define DMACONN_VERSION_MINOR 1
#define DMACONN_VERSION_PATCH 0
#define DMACONN_VERSION_HEX                                                     \
	((DMACONN_VERSION_MAJOR << 16) | (DMACONN_VERSION_MINOR << 8) |         \
	 DMACONN_VERSION_PATCH)

/* The run-time library's version, e.g. "0.1.0". */
DMACONN_EXTERN const char *dmaconn_version_string(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

#define DMACONN_ERRORS(X)                                                       \
	X(OK, 0, "success")                                                     \
	X(EINVAL, -1, "invalid argument")                                       \
	X(ENODETECTOR, -2, "no DMA connectivity detector for this pair")        \
	X(ENOMEM, -3, "out of memory")                                          \
	X(EEXIST, -4, "a detector is already registered for this pair")         \
	X(EDETECTOR, -5, "the detector failed")                                 \
	X(EREPLAY, -6, "the replay file cannot be used")                        \
	X(EBUSY, -7, "detection of this pair is already running on this thread") \
	X(ERANGE, -8, "index out of range")                                     \
	X(EUNAVAILABLE, -9, "optional component not available")                 \
	X(ENOENT, -10, "no such property")

typedef enum dmaconn_error {
#define DMACONN_ERROR_ENUM_(name, value, text) DMACONN_##name = value,
	DMACONN_ERRORS(DMACONN_ERROR_ENUM_)
#undef DMACONN_ERROR_ENUM_
} dmaconn_error;

/* A static string for an error code; never NULL ("unknown error" for others). */
DMACONN_EXTERN const char *dmaconn_strerror(int err);

/* The code's name as a static string, e.g. "DMACONN_EINVAL" for
 * DMACONN_EINVAL; never NULL ("DMACONN_EUNKNOWN" for a code not listed). */
DMACONN_EXTERN const char *dmaconn_err_name(int err);

/* The calling thread's message for its last failed call, e.g. "no DMA
 * connectivity detector for cuda over bogus".  Never NULL; valid until the
 * thread's next dmaconn call. */
DMACONN_EXTERN const char *dmaconn_last_error(void);

/* ------------------------------------------------------------------------ */
/* Device types                                                              */

typedef enum dmaconn_device_type {
	DMACONN_DEVICE_CUDA = 1, /* "cuda": NVIDIA GPUs, ordered as CUDA shows them */
	DMACONN_DEVICE_ROCM = 2, /* "rocm": AMD GPUs, ordered as HIP shows them */
	DMACONN_DEVICE_XPU = 3   /* "xpu": Intel GPUs, ordered as Level Zero shows them */
} dmaconn_device_type;

/* "cuda", "rocm", "xpu"; NULL for an unknown value. */
DMACONN_EXTERN const char *dmaconn_device_type_name(dmaconn_device_type type);

/* Parses "cuda", "rocm" or "xpu" (case-insensitive).  DMACONN_EINVAL otherwise. */
DMACONN_EXTERN int dmaconn_device_type_parse(const char *name, dmaconn_device_type *out);

/* What describes a built-in connection type (dmaconn_connection_text). */
typedef enum dmaconn_connection_text_kind {
	DMACONN_CONNECTION_VALUE = 0, /* what matrix[i][j] is (Markdown, as README's table of detectors) */
	DMACONN_CONNECTION_SOURCE = 1, /* what it is read from (Markdown) */
	DMACONN_CONNECTION_TITLE = 2,  /* the heading of its section of --topo */
	DMACONN_CONNECTION_PATHS = 3,  /* --topo's legend of the path table */
	DMACONN_CONNECTION_CAPS = 4,   /* --topo's heading of the pair lines */
	DMACONN_CONNECTION_STATUS = 5, /* --topo's legend after the pair lines */
	DMACONN_CONNECTION_TORCH = 6,  /* the c10 DeviceType name dmaconn.torch registers it under */
	DMACONN_CONNECTION_TEXTS = 7
} dmaconn_connection_text_kind;

/* A static text of the built-in connection type (type, connection); NULL
 * for a pair that is not built in, or a text it has none of. */
DMACONN_EXTERN const char *dmaconn_connection_text(dmaconn_device_type type, const char *connection,
						   dmaconn_connection_text_kind kind);

/* 1 when the kernel driver of a vendor of `type` is loaded (below
 * DMACONN_SYSFS_ROOT when set), else 0: a user-space library alone says
 * nothing about devices.  1 for a type whose vendors say no such thing. */
DMACONN_EXTERN int dmaconn_driver_loaded(dmaconn_device_type type);

/* ------------------------------------------------------------------------ */
/* Detection                                                                 */

/* An immutable, reference-counted detection result. */
typedef struct dmaconn_result dmaconn_result;

/*
 * Detects DMA connectivity between the devices of `type` over `connection`
 * ("nvlink", ...).  The first successful result for each pair is cached for
 * the process; concurrent first calls detect once and all get that result.
 * The built-in detectors of one vendor share one discovery of its devices
 * (NVML, the KFD topology, Level Zero), made on first use.
 *
 * On success *out holds a new reference that the caller owns and releases
 * with dmaconn_result_release().  Vendor-library problems are not errors:
 * they become warnings in the result, whose matrix then assumes no
 * connectivity.  Errors: DMACONN_EINVAL, DMACONN_ENODETECTOR (unregistered
 * pair), DMACONN_EREPLAY (the replay file is unusable),
 * DMACONN_EDETECTOR (a user detector failed), DMACONN_ENOMEM.
 */
DMACONN_EXTERN int dmaconn_detect(dmaconn_device_type type, const char *connection,
				  dmaconn_result **out);

/*
 * As dmaconn_detect(), but never starts work on the devices: a detector
 * that would ("cuda"/"verified", whose detection runs a kernel on every
 * pair of GPUs in a helper process) answers from its verdict cache or, when
 * that has no valid verdict, with zeros and the reason "not_verified" in
 * each pair's properties; such an answer is not kept by the registry, so a
 * later dmaconn_detect() of the pair still verifies.  Other detectors
 * answer exactly as with dmaconn_detect().  This is the call for code that
 * enumerates every detector (dmaconn_list_detectors) and must stay cheap,
 * as the dmaconn CLI does without -c; dmaconn_detect() and
 * dmaconn_detect_fresh() of ("cuda", "verified") are the explicit requests
 * to verify (fresh: ignoring the verdict cache).  Errors as dmaconn_detect().
 */
DMACONN_EXTERN int dmaconn_detect_passive(dmaconn_device_type type, const char *connection,
					  dmaconn_result **out);

/*
 * The verdict cache of "cuda"/"verified": the last verification's result in
 * $DMACONN_CACHE_DIR, else $XDG_CACHE_HOME/dmaconn, else ~/.cache/dmaconn
 * (file "verified"), valid for one hour on the same boot, driver, GPUs (bus
 * ids and UUIDs), CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER and dmaconn
 * version; a directory or file that is a symbolic link, not the caller's or
 * writable by others is ignored.  On by default; off with
 * DMACONN_NO_CACHE=1 or dmaconn_set_verify_cache(0) (then nothing is read
 * or written).  Call it before detecting.
 */
DMACONN_EXTERN void dmaconn_set_verify_cache(int enabled);

/* As dmaconn_detect(), but always detects afresh -- the vendor is
 * discovered again -- and replaces the cached result (references to the old
 * one stay valid until released). */
DMACONN_EXTERN int dmaconn_detect_fresh(dmaconn_device_type type, const char *connection,
					dmaconn_result **out);

/* Drops every cached result and what the built-in detectors discovered
 * (held references stay valid): the next detection discovers again. */
DMACONN_EXTERN void dmaconn_clear_cache(void);

/*
 * As dmaconn_detect_fresh(), but over every device of the node: the built-in
 * detectors ignore the variables that hide devices (CUDA_VISIBLE_DEVICES,
 * ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL,
 * ZE_AFFINITY_MASK, live or pinned by a replay file) and order devices as
 * CUDA_DEVICE_ORDER=PCI_BUS_ID would.  The result is neither cached nor
 * announced: its warnings stay in it, none goes to the warning sink.  For
 * combining what processes that each see some of a node's devices detected
 * (libdmaconn_mpi does).  Errors as dmaconn_detect().
 */
DMACONN_EXTERN int dmaconn_detect_node(dmaconn_device_type type, const char *connection,
				       dmaconn_result **out);

/*
 * The identity of the node detectors describe, which multi-node detection
 * tells nodes apart by: with a replay file (DMACONN_REPLAY or
 * dmaconn_set_replay_file), its "host" (or "replay:" and the file's
 * absolute path when it names none, so that different files are different
 * nodes); otherwise gethostname().  Never
 * NULL; the string belongs to the calling thread and stays valid until its
 * next call of this function.
 */
DMACONN_EXTERN const char *dmaconn_host_id(void);

/*
 * Whether this node may share GPU memory with other nodes' GPUs through
 * NVIDIA IMEX, what multi-node multicast (and every fabric handle) needs:
 * NULL when the driver registered the "nvidia-caps-imex-channels"
 * character device (/proc/devices) and a channel device
 * (/dev/nvidia-caps-imex-channels/channelN) exists that the caller may
 * open for reading and writing; otherwise the reason, never NULL then:
 * DMACONN_REASON_IMEX_MODULE_MISSING, DMACONN_REASON_IMEX_CHANNEL_MISSING or
 * DMACONN_REASON_IMEX_CHANNEL_NO_PERMISSION (a static string).  text, when
 * not NULL, gets one line saying what was found (the channel, or what is
 * missing).  Read afresh on each call, below DMACONN_SYSFS_ROOT or from a
 * replay's "files"; dmaconn_record() keeps what it read.  Whether IMEX is
 * needed at all is the caller's question: within one node it never is.
 */
DMACONN_EXTERN const char *dmaconn_host_imex(char *text, size_t len);

/*
 * The multi-node merge (docs/multinode.md), the one that libdmaconn_mpi
 * and Python's dmaconn.global_matrix() use: each rank writes a record of
 * what it detects, the job gathers the records by any means, and every
 * rank merges them into the same result.
 *
 * dmaconn_rank_record() detects (type, connection) and writes this rank's
 * record as JSON into *json (free it with dmaconn_record_free()): its host
 * identity (dmaconn_host_id()), `domain` when >= 0 (what tells ranks of one
 * host apart, e.g. MPI's shared-memory domain; < 0: the host alone names the
 * node), the detection's matrix, devices and warnings, or its error (a
 * failed detection is recorded, not returned), and with
 * DMACONN_RECORD_NODE_VIEW a detection over every device of the node
 * (dmaconn_detect_node()).  DMACONN_EINVAL for bad arguments,
 * DMACONN_ENOMEM.
 *
 * dmaconn_merge() merges count records (records[r] is rank r's, NUL-ended
 * JSON; NULL or unreadable: a rank that contributed nothing, with a
 * warning) into one result over every contributed device, rank 0's first.
 * Warnings about rank `me` also go to the warning sink (-1: none does).
 * *out is a new reference.  Errors as dmaconn_result_build().
 */
#define DMACONN_RECORD_NODE_VIEW 1u
DMACONN_EXTERN int dmaconn_rank_record(dmaconn_device_type type, const char *connection, unsigned flags,
				       int domain, char **json);
DMACONN_EXTERN void dmaconn_record_free(char *json);
DMACONN_EXTERN int dmaconn_merge(dmaconn_device_type type, const char *connection,
				 const char *const *records, int count, int me, dmaconn_result **out);

/*
 * Whether a GPU is in a multi-node NVLink domain, from its properties as text
 * (a result's, or a --json document's; NULL when absent): fabric_state,
 * fabric_status, cluster_uuid and a clique id (clique_id, or
 * multicast_clique_id for multicast objects).  The rule dmaconn_merge()
 * applies across nodes (docs/multinode.md), and the one place it is
 * written: its NVSwitch fabric registration completed successfully, with a
 * non-zero cluster UUID and a non-zero clique id.  DMACONN_DOMAIN_MEMBER,
 * with the UUID's 16 bytes in cluster and the clique in clique (either may be
 * NULL), or the first condition it fails, in the order below.
 */
typedef enum dmaconn_domain_status {
	DMACONN_DOMAIN_MEMBER = 0,
	DMACONN_DOMAIN_NO_FABRIC = 1,      /* no fabric_state, or not_supported */
	DMACONN_DOMAIN_NOT_REGISTERED = 2, /* registration not completed */
	DMACONN_DOMAIN_FAILED = 3,         /* completed without success */
	DMACONN_DOMAIN_NO_ID = 4,          /* no cluster UUID (32 hex digits) and clique id (decimal) */
	DMACONN_DOMAIN_ZERO_CLUSTER = 5,   /* the all-zero cluster UUID: one node's fabric */
	DMACONN_DOMAIN_ZERO_CLIQUE = 6     /* clique id 0 */
} dmaconn_domain_status;
DMACONN_EXTERN dmaconn_domain_status dmaconn_nvlink_domain(const char *fabric_state, const char *fabric_status,
							  const char *cluster_uuid, const char *clique_id,
							  unsigned char cluster[16], unsigned int *clique);

/* Takes another reference; returns r. */
DMACONN_EXTERN dmaconn_result *dmaconn_result_retain(dmaconn_result *r);

/* Releases a reference; the last one frees the result.  Accepts NULL. */
DMACONN_EXTERN void dmaconn_result_release(dmaconn_result *r);

/* Accessors.  Strings and arrays they return belong to the result and live
 * as long as it does. */
DMACONN_EXTERN dmaconn_device_type dmaconn_result_device_type(const dmaconn_result *r);
DMACONN_EXTERN const char *dmaconn_result_connection_type(const dmaconn_result *r);

/* N, the number of devices (0 when none are visible or none could be counted). */
DMACONN_EXTERN int dmaconn_result_size(const dmaconn_result *r);

/* The N*N matrix, row-major: m[i*N+j] is the connectivity from device i to
 * device j; 0 means none, the diagonal is 0.  NULL when N is 0. */
DMACONN_EXTERN const int *dmaconn_result_matrix(const dmaconn_result *r);

/* m[i][j], or 0 when i or j is out of range. */
DMACONN_EXTERN int dmaconn_result_get(const dmaconn_result *r, int i, int j);

/* Warnings raised while detecting, in order. */
DMACONN_EXTERN int dmaconn_result_warning_count(const dmaconn_result *r);
DMACONN_EXTERN const char *dmaconn_result_warning(const dmaconn_result *r, int k);

/* 1 when the detection could not run: the vendor's library or driver did
 * not answer (no loadable NVML, nvmlInit_v2 failing, no driver, a call
 * failing midway so that the detector gave up; a replay of such a node
 * too), so the devices were counted without it (0 or more,
 * from sysfs) and every pair is 0; a warning says why.  Such a result
 * describes no connectivity, not the absence of it.  0 otherwise. */
DMACONN_EXTERN int dmaconn_result_unavailable(const dmaconn_result *r);

/*
 * Properties.  Each place that has them (a result's device i and pair i -> j
 * below; the placement's node, device i, NIC n and link (i, n); a verify
 * result's pair i -> j) has the same four accessors, named after the place
 * and given the object and the place's indices (none for the node):
 *   ..._property_count(obj, place)      how many (0 for a place out of range);
 *   ..._property_key(obj, place, k)     the k-th key, in a stable order,
 *   ..._property_value(obj, place, k)   and its value (NULL out of range);
 *   ..._get(obj, place, key)            the value of key, or NULL.
 * Keys and values are strings that the object owns for as long as it lives.
 */

/*
 * Per-device properties, as key/value strings, in a stable order.  Device i
 * is the runtime's ordinal i (CUDA ordinal for "cuda").  Every detector sets
 * "name", "pci_bus_id" (lower-case "dddd:bb:dd.f") and "uuid" where known;
 * cuda detectors add "nvml_index" and, where NVML reports them,
 * "minor_number", "nvlink_switch_links", "fabric_state", "fabric_status", "cluster_uuid",
 * "clique_id" and "mig".
 */
DMACONN_EXTERN int dmaconn_result_device_property_count(const dmaconn_result *r, int i);
DMACONN_EXTERN const char *dmaconn_result_device_property_key(const dmaconn_result *r, int i, int k);
DMACONN_EXTERN const char *dmaconn_result_device_property_value(const dmaconn_result *r, int i, int k);
DMACONN_EXTERN const char *dmaconn_result_device_get(const dmaconn_result *r, int i, const char *key);

/*
 * Per-pair properties (i -> j), as key/value strings in a stable order, for
 * detectors that describe more than a number: "cuda"/"p2p" sets "read",
 * "write", "atomics" and "nvlink" (nvidia-smi's OK, CNS, GNS, TNS, NS, DR,
 * U), "path" (NV#, PIX, PXB, PHB, NODE, SYS as `nvidia-smi topo -m` names
 * them), and, over NVLink, "nvlink_links", "nvlink_gbps" and
 * "nvlink_rate_source".
 */
DMACONN_EXTERN int dmaconn_result_pair_property_count(const dmaconn_result *r, int i, int j);
DMACONN_EXTERN const char *dmaconn_result_pair_property_key(const dmaconn_result *r, int i, int j, int k);
DMACONN_EXTERN const char *dmaconn_result_pair_property_value(const dmaconn_result *r, int i, int j, int k);
DMACONN_EXTERN const char *dmaconn_result_pair_get(const dmaconn_result *r, int i, int j, const char *key);
/*
 * Every pair's property list at once, for callers that walk all n*n pairs
 * (a rack of 576 GPUs has 331,200, most with the same properties):
 * out[i * n + j] gets an identifier of the list of pair i -> j, for `count`
 * >= n*n entries.  Two pairs with the same identifier have the same keys and
 * values in the same order; 0 means no property.  Identifiers mean
 * something only within one result.  Returns DMACONN_OK, or
 * DMACONN_EINVAL (NULL r or out) or DMACONN_ERANGE (count below n*n).
 */
DMACONN_EXTERN int dmaconn_result_pair_lists(const dmaconn_result *r, unsigned int *out, size_t count);

/* ------------------------------------------------------------------------ */
/* Properties                                                                */

/*
 * The keys the built-in detectors (and libdmaconn_mpi) set are declared
 * once, in dmaconn_props.h: a DMACONN_PROP_ constant for each, with its
 * type, scope, unit and one line of documentation.  Values are strings in
 * the result (dmaconn_result_device_get); a key's type says what the text
 * holds, and the typed getters below read it.
 */
#include "dmaconn_props.h"

/* How a property's value reads: X(NAME, value, name, JSON type).  The JSON
 * type is the value's in `dmaconn --json` and Python's results (null where
 * the text does not read as its type); keys not declared are strings. */
#define DMACONN_PROPERTY_TYPES(X)                                                       \
	X(STRING, 0, "string", "string")    /* text */                                  \
	X(INT, 1, "int", "integer")         /* decimal integer */                       \
	X(NUMBER, 2, "number", "number")    /* decimal number, finite */                \
	X(BOOL, 3, "bool", "boolean")       /* "yes"/"true"/"1", "no"/"false"/"0" */    \
	X(HEX, 4, "hex", "string")          /* hexadecimal integer, "0x" optional */    \
	X(LIST, 5, "list", "string")        /* decimal integers: "3,7" */               \
	X(VERSION, 6, "version", "string")  /* decimal integers: "9.0" */               \
	/* a decimal integer that version 1 of the JSON document writes as a            \
	 * string, as it always has */                                                  \
	X(INT_STRING, 7, "int_string", "string")                                         \
	/* typed cliques, "type:id" comma-separated ("multicast_pointer:7");          \
	 * in JSON a list of {"type", "id"} */                                          \
	X(CLIQUES, 8, "cliques", "array")                                              \
	/* values of numbered items, as runs of items with one value:                  \
	 * "0-4:53125,5:26562" */                                                       \
	X(RUNS, 9, "runs", "string")

typedef enum dmaconn_property_type {
#define DMACONN_PROPERTY_TYPE_ENUM_(name, value, text, json) DMACONN_TYPE_##name = value,
	DMACONN_PROPERTY_TYPES(DMACONN_PROPERTY_TYPE_ENUM_)
#undef DMACONN_PROPERTY_TYPE_ENUM_
} dmaconn_property_type;

/* Whether a property belongs to a device or to a pair i -> j. */
typedef enum dmaconn_property_scope {
	DMACONN_SCOPE_DEVICE = 1,
	DMACONN_SCOPE_PAIR = 2
} dmaconn_property_scope;

/* The declared properties, in the order of dmaconn_props.h: their number,
 * and the key of the k-th (NULL when k is out of range). */
DMACONN_EXTERN int dmaconn_property_count(void);
DMACONN_EXTERN const char *dmaconn_property_key(int k);
/* The type of `key`: DMACONN_TYPE_STRING for a key not declared (a user
 * detector's) and for NULL. */
DMACONN_EXTERN dmaconn_property_type dmaconn_property_type_of(const char *key);
/* The scope of `key`, or 0 when it is not declared. */
DMACONN_EXTERN int dmaconn_property_scope_of(const char *key);
/* The unit ("" when none) and the documentation line of `key`; NULL when
 * it is not declared.  Static strings. */
DMACONN_EXTERN const char *dmaconn_property_unit(const char *key);
DMACONN_EXTERN const char *dmaconn_property_doc(const char *key);
/* A type's name ("int", ...) and its JSON type ("integer", "number",
 * "boolean", "string"); NULL for an unknown value.  Static strings. */
DMACONN_EXTERN const char *dmaconn_property_type_name(dmaconn_property_type type);
DMACONN_EXTERN const char *dmaconn_property_json_type(dmaconn_property_type type);

/*
 * Reading a value as its key's type, for values held apart from a result
 * (a dmaconn_verify_result's, a JSON document's).  DMACONN_OK with *out
 * set, or: DMACONN_EINVAL (NULL argument, a key whose type is not the one
 * asked for, or a value that does not read as it: empty, surrounding
 * space, trailing text, out of range).  *out is left alone on failure.
 *   _int:    DMACONN_TYPE_INT, INT_STRING (decimal) and HEX (base 16);
 *   _number: DMACONN_TYPE_NUMBER, and the integer types;
 *   _bool:   DMACONN_TYPE_BOOL, *out 1 or 0;
 *   _list:   DMACONN_TYPE_LIST and VERSION: the integers in order, at most
 *            `max` of them into out; *count gets how many there are.
 */
DMACONN_EXTERN int dmaconn_property_read_int(const char *key, const char *value, long long *out);
DMACONN_EXTERN int dmaconn_property_read_number(const char *key, const char *value, double *out);
DMACONN_EXTERN int dmaconn_property_read_bool(const char *key, const char *value, int *out);
DMACONN_EXTERN int dmaconn_property_read_list(const char *key, const char *value, long long *out,
					      int max, int *count);
/* DMACONN_TYPE_RUNS ("0-4:53125,5:26562"): out[k] gets item k's value, 0 for
 * an item the text does not name, for k below `max`; *count gets one more
 * than the highest item named (0 for ""). Items must ascend; values >= 0. */
DMACONN_EXTERN int dmaconn_property_read_runs(const char *key, const char *value, long long *out, int max,
					      int *count);

/*
 * Typed getters: the property `key` of device i (or of the pair i -> j),
 * read as dmaconn_property_read_*() reads it.  DMACONN_OK with *out set;
 * else *out is left alone and the return says why:
 *   DMACONN_EINVAL  NULL r, key or out; a key of another type (the _str
 *                   getters take every key); a value that does not read
 *                   as its type (xgmi_links "unknown");
 *   DMACONN_ERANGE  i or j out of range (or i == j for a pair);
 *   DMACONN_ENOENT  the device or pair has no such property.
 * Strings belong to the result.
 */
DMACONN_EXTERN int dmaconn_result_device_int(const dmaconn_result *r, int i, const char *key,
					     long long *out);
DMACONN_EXTERN int dmaconn_result_device_number(const dmaconn_result *r, int i, const char *key,
						double *out);
DMACONN_EXTERN int dmaconn_result_device_bool(const dmaconn_result *r, int i, const char *key,
					      int *out);
DMACONN_EXTERN int dmaconn_result_device_str(const dmaconn_result *r, int i, const char *key,
					     const char **out);
DMACONN_EXTERN int dmaconn_result_device_list(const dmaconn_result *r, int i, const char *key,
					      long long *out, int max, int *count);
DMACONN_EXTERN int dmaconn_result_pair_int(const dmaconn_result *r, int i, int j, const char *key,
					   long long *out);
DMACONN_EXTERN int dmaconn_result_pair_number(const dmaconn_result *r, int i, int j, const char *key,
					      double *out);
DMACONN_EXTERN int dmaconn_result_pair_bool(const dmaconn_result *r, int i, int j, const char *key,
					    int *out);
DMACONN_EXTERN int dmaconn_result_pair_str(const dmaconn_result *r, int i, int j, const char *key,
					   const char **out);
DMACONN_EXTERN int dmaconn_result_pair_list(const dmaconn_result *r, int i, int j, const char *key,
					    long long *out, int max, int *count);

/* The values of fabric_state and fabric_status that make a device's NVSwitch
 * links usable: registered with the fabric manager, successfully. */
#define DMACONN_FABRIC_STATE_COMPLETED "completed"
#define DMACONN_FABRIC_STATUS_SUCCESS "NVML_SUCCESS"

/*
 * Pairs of "cuda"/"verified" (value 1 where read, write, 32- and 64-bit
 * atomics were each proven by a kernel with the data checked).  For each
 * capability C of read, write, atomics_32 and atomics_64: "C_advertised"
 * ("yes"/"no": what the CUDA driver claims -- peer access for read and
 * write, native atomics for the atomics) and "C_verified" ("yes", "no", or
 * "not_run" when no kernel ran).
 */

/*
 * Whether a "verified" pair passed: DMACONN_PROP_VERIFIED is "pass" and
 * read, write, 32- and 64-bit atomics are each "yes" (proven, not merely
 * not refuted).  The one rule behind the matrix's 1, for whatever reads
 * verdicts (a result, a `dmaconn --json` document): get(key, ctx) answers
 * the pair's property `key`, or NULL when it has none.  1 or 0.
 */
DMACONN_EXTERN int dmaconn_verified_passed(const char *(*get)(const char *key, void *ctx), void *ctx);

/* dmaconn_verified_passed() on pair (i, j) of r: 1 or 0 (0 too for a bad
 * index or a NULL result). */
DMACONN_EXTERN int dmaconn_result_pair_verified(const dmaconn_result *r, int i, int j);

/*
 * Why a pair is 0: in the cuda, rocm and xpu connection types, every
 * off-diagonal pair whose value is 0 carries DMACONN_PROP_REASON, a code
 * below, and DMACONN_PROP_REASON_TEXT, one line for people; in cuda/nvlink,
 * so does a pair with links that lost some its peers have (nvlink_down,
 * naming the links: DMACONN_PROP_NVLINK_DOWN_LINKS).  Each code is
 * given only when the machine showed it.  The cuda nvlink and p2p codes are
 * checked in this order: MIG, confidential computing, NVSwitch fabric
 * (registration, health), peer access disabled by the driver, then for a
 * driver status other than OK what the kernel shows on the PCIe path (a
 * virtual machine, ACS redirection, IOMMU translation, BAR1), then the
 * status itself (CNS, TNS, GNS, NS), then NVLink (down links, none).  The
 * rocm codes come from the KFD topology's links, the xpu ones from Level
 * Zero's peer properties and fabric.  cuda/multicast gives the first cause
 * of GPU i, then of GPU j (each GPU's own is its multicast_reason), in this
 * order: MIG, compute capability below 9.0 (gpu_not_supported), a driver
 * without the multicast API, confidential computing, the NVSwitch fabric
 * (not started, in progress, failed with its status named, no NVSwitch),
 * its health (route unhealthy, incorrect configuration); then for two
 * capable GPUs, another cluster UUID or multicast clique (different_clique).
 */
#define DMACONN_REASON_NOT_VERIFIED "not_verified"           /* no (valid) cached verdict */
#define DMACONN_REASON_NOT_RECORDED "not_verified_in_recording" /* replay without a verdict */
#define DMACONN_REASON_VERIFY_FAILED "verification_failed"   /* checked, and wrong or unusable */
#define DMACONN_REASON_VERIFY_HUNG "verification_hung"       /* the pair's check timed out */
#define DMACONN_REASON_NO_PEER "no_peer_access"              /* the CUDA driver reports none */
#define DMACONN_REASON_MIG "mig_enabled"                     /* either GPU is in MIG mode */
#define DMACONN_REASON_FABRIC_NOT_REGISTERED "fabric_not_registered" /* NVSwitch fabric */
#define DMACONN_REASON_FABRIC_IN_PROGRESS "fabric_in_progress"
#define DMACONN_REASON_FABRIC_FAILED "fabric_failed"         /* registration ended in an error */
#define DMACONN_REASON_DISABLED_BY_DRIVER "peer_disabled_by_driver" /* DR */
#define DMACONN_REASON_CHIPSET_NOT_SUPPORTED "chipset_not_supported" /* CNS, with the path */
#define DMACONN_REASON_TOPOLOGY_NOT_SUPPORTED "topology_not_supported" /* TNS, with the path */
#define DMACONN_REASON_GPU_NOT_SUPPORTED "gpu_not_supported" /* GNS */
#define DMACONN_REASON_NOT_SUPPORTED "peer_not_supported"   /* NS */
#define DMACONN_REASON_NO_NVLINK "no_nvlink"                 /* no active NVLink between them */
#define DMACONN_REASON_NVLINK_DOWN "nvlink_down"             /* links of a GPU are not active */
#define DMACONN_REASON_FABRIC_UNHEALTHY "fabric_unhealthy"   /* NVSwitch fabric health mask */
#define DMACONN_REASON_CONFIDENTIAL_COMPUTING "confidential_computing" /* CC on */
#define DMACONN_REASON_VIRTUAL_MACHINE "virtual_machine"     /* emulated root complex */
#define DMACONN_REASON_ACS_REDIRECT "acs_redirect"           /* PCIe ACS on a bridge of the path */
#define DMACONN_REASON_IOMMU_TRANSLATING "iommu_translating" /* the IOMMU translates DMA */
#define DMACONN_REASON_BAR1_TOO_SMALL "bar1_too_small"       /* at most the legacy 256 MiB */
#define DMACONN_REASON_NO_LINK "no_link"                     /* rocm: the kernel lists no link */
#define DMACONN_REASON_NO_XGMI "no_xgmi"                     /* rocm: no (direct) XGMI link */
#define DMACONN_REASON_PCIE_ATOMICS "pcie_atomics_not_routed" /* rocm: no PCIe atomics on the path */
#define DMACONN_REASON_LINK_DISABLED "link_disabled"         /* rocm: the kernel's link is disabled */
#define DMACONN_REASON_NO_XELINK "no_xelink"                 /* xpu: no XeLink edge */
#define DMACONN_REASON_NO_NVSWITCH "no_nvswitch"             /* multicast: not NVSwitch-attached */
#define DMACONN_REASON_FABRIC_NOT_STARTED "fabric_not_started" /* multicast: fabric manager not started */
#define DMACONN_REASON_DIFFERENT_CLIQUE "different_clique"   /* multicast: another cluster or clique */
#define DMACONN_REASON_DRIVER_WITHOUT_MULTICAST "driver_without_multicast" /* multicast: driver before R530 */
/* Multi-node multicast (cuda/multicast under libdmaconn_mpi): a pair of
 * different nodes, named with the rank, host and bus id that caused it. */
#define DMACONN_REASON_DIFFERENT_CLUSTER "different_cluster" /* not one cluster UUID (or none) */
#define DMACONN_REASON_IMEX_MODULE_MISSING "imex_module_missing" /* no nvidia-caps-imex-channels */
#define DMACONN_REASON_IMEX_CHANNEL_MISSING "imex_channel_missing" /* no channel device */
#define DMACONN_REASON_IMEX_CHANNEL_NO_PERMISSION "imex_channel_no_permission" /* may not open it */
#define DMACONN_REASON_UNKNOWN "unknown"                     /* nothing known explains it */

/* ------------------------------------------------------------------------ */
/* Placement: NICs, CPUs and memory near each device                        */

/*
 * Where to place work beside each device of a type: the RDMA-capable NICs
 * (every device of /sys/class/infiniband: InfiniBand, RoCE, EFA and other
 * verbs devices) sorted nearest first with the GPUDirect RDMA mechanism each
 * could use, and the CPUs and NUMA nodes local to the device, with its
 * NVLink-C2C links.  Read from sysfs and NVML (a replay file's "files" and
 * "nvml" sections when one is replayed); CUDA is never initialised and no
 * root is needed: what cannot be read is said (a reason), never assumed.
 *
 * Devices are in the runtime's order, as dmaconn_detect() numbers them (the
 * same visibility variables apply).  On success *out holds a new placement
 * that the caller owns and frees with dmaconn_placement_free(); it is not
 * cached.  Errors: DMACONN_EINVAL, DMACONN_EREPLAY (the replay file is
 * unusable), DMACONN_ENOMEM.  A vendor library that does not answer is not
 * an error: its facts are missing and a warning says why.
 */
typedef struct dmaconn_placement dmaconn_placement;

DMACONN_EXTERN int dmaconn_placement_detect(dmaconn_device_type type, dmaconn_placement **out);
/* Frees p; accepts NULL. */
DMACONN_EXTERN void dmaconn_placement_free(dmaconn_placement *p);

/* Accessors.  Strings they return belong to p and live as long as it does;
 * an index out of range gives NULL (or 0 for a count, -1 for an index). */
DMACONN_EXTERN dmaconn_device_type dmaconn_placement_device_type(const dmaconn_placement *p);
/* N, the number of devices. */
DMACONN_EXTERN int dmaconn_placement_size(const dmaconn_placement *p);
/* The number of NICs of the node (0: see DMACONN_PLACE_NICS_REASON). */
DMACONN_EXTERN int dmaconn_placement_nic_count(const dmaconn_placement *p);

/* Facts of the node (DMACONN_PLACE_* keys below), in a stable order. */
DMACONN_EXTERN const char *dmaconn_placement_get(const dmaconn_placement *p, const char *key);
DMACONN_EXTERN int dmaconn_placement_property_count(const dmaconn_placement *p);
DMACONN_EXTERN const char *dmaconn_placement_property_key(const dmaconn_placement *p, int k);
DMACONN_EXTERN const char *dmaconn_placement_property_value(const dmaconn_placement *p, int k);

/* Facts of device i (0 <= i < N). */
DMACONN_EXTERN const char *dmaconn_placement_device_get(const dmaconn_placement *p, int i, const char *key);
DMACONN_EXTERN int dmaconn_placement_device_property_count(const dmaconn_placement *p, int i);
DMACONN_EXTERN const char *dmaconn_placement_device_property_key(const dmaconn_placement *p, int i, int k);
DMACONN_EXTERN const char *dmaconn_placement_device_property_value(const dmaconn_placement *p, int i, int k);

/* Facts of NIC n (0 <= n < dmaconn_placement_nic_count()); NICs are in the
 * order of their names. */
DMACONN_EXTERN const char *dmaconn_placement_nic_get(const dmaconn_placement *p, int n, const char *key);
DMACONN_EXTERN int dmaconn_placement_nic_property_count(const dmaconn_placement *p, int n);
DMACONN_EXTERN const char *dmaconn_placement_nic_property_key(const dmaconn_placement *p, int n, int k);
DMACONN_EXTERN const char *dmaconn_placement_nic_property_value(const dmaconn_placement *p, int n, int k);

/* Device i's NICs nearest first: the index of its rank-th NIC (0 <= rank <
 * nic_count), or -1.  Nearest: by path class (PIX, PXB, C2C, PHB, NODE, SYS,
 * then a pair without a known path), then GPUDirect RDMA usable before not,
 * then by name. */
DMACONN_EXTERN int dmaconn_placement_device_nic(const dmaconn_placement *p, int i, int rank);

/* Facts of the pair (device i, NIC n): DMACONN_PROP_PATH, DMACONN_PLACE_GDR... */
DMACONN_EXTERN const char *dmaconn_placement_link_get(const dmaconn_placement *p, int i, int n, const char *key);
DMACONN_EXTERN int dmaconn_placement_link_property_count(const dmaconn_placement *p, int i, int n);
DMACONN_EXTERN const char *dmaconn_placement_link_property_key(const dmaconn_placement *p, int i, int n, int k);
DMACONN_EXTERN const char *dmaconn_placement_link_property_value(const dmaconn_placement *p, int i, int n, int k);

/* The class of the path between NICs a and b, as `nvidia-smi topo -m`'s NIC
 * rows give it (PIX, PXB, PHB, NODE, SYS; a static string); NULL when a ==
 * b, out of range, or a place is unknown. */
DMACONN_EXTERN const char *dmaconn_placement_nic_path(const dmaconn_placement *p, int a, int b);

/* Warnings raised while detecting, in order (also sent to the sink). */
DMACONN_EXTERN int dmaconn_placement_warning_count(const dmaconn_placement *p);
DMACONN_EXTERN const char *dmaconn_placement_warning(const dmaconn_placement *p, int k);

/*
 * Keys of the node.  The GPUDirect RDMA mechanisms, judged without CUDA
 * (docs/placement.md gives the rules): DMACONN_PLACE_DMABUF "yes", "no" or
 * "unknown" with DMACONN_PLACE_DMABUF_REASON (one line); the peer-memory
 * module loaded, if any ("nvidia_peermem", "nv_peer_mem", "nv_mem_nc";
 * rocm: "amdkfd").
 */
#define DMACONN_PLACE_DMABUF "dmabuf"
#define DMACONN_PLACE_DMABUF_REASON "dmabuf_reason"
#define DMACONN_PLACE_PEERMEM_MODULE "peermem_module"
/* The farthest path class at which GPUDirect RDMA is used: "C2C", NCCL's
 * default NCCL_NET_GDR_LEVEL (PATH_P2C with NCCL_NET_GDR_C2C=1): PIX, PXB
 * and C2C are within it, PHB, NODE and SYS beyond. */
#define DMACONN_PLACE_GDR_LEVEL "gdr_level"
/* Why the node has no NIC: a DMACONN_NICS_REASON_* code, and its text. */
#define DMACONN_PLACE_NICS_REASON "nics_reason"
#define DMACONN_PLACE_NICS_REASON_TEXT "nics_reason_text"
/* The node's CPUs as NCCL's topology file names them (its <cpu arch vendor
 * familyid modelid>), from the kernel's CPU modalias: "x86_64", "arm64" or
 * "ppc64"; on x86 the vendor's CPUID name ("GenuineIntel", "AuthenticAMD",
 * "CentaurHauls", "  Shanghai  ", "HygonGenuine") and the family and model
 * (integers).  Absent where the kernel does not say. */
#define DMACONN_PLACE_CPU_ARCH "cpu_arch"
#define DMACONN_PLACE_CPU_VENDOR "cpu_vendor"
#define DMACONN_PLACE_CPU_FAMILY "cpu_family"
#define DMACONN_PLACE_CPU_MODEL "cpu_model"

/*
 * Keys of a device, besides DMACONN_PROP_PCI_BUS_ID, DMACONN_PROP_UUID and
 * DMACONN_PROP_NUMA_NODE (the kernel's, "-1" where it gives none).
 * CPU side: the CPU-bearing NUMA node local to the device, its CPUs in list
 * form ("0-55,112-167"), and where they come from ("sysfs": the device's
 * numa_node and local_cpulist; "nvml": NVML's affinity where sysfs says -1).
 */
#define DMACONN_PLACE_CPU_NUMA_NODE "cpu_numa_node"
#define DMACONN_PLACE_CPUSET "cpuset"
#define DMACONN_PLACE_CPU_SOURCE "cpu_source"        /* "sysfs", "nvml" */
/* The device's own memory as the kernel shows it: the NUMA node of its
 * memory and the mode, DMACONN_MEMORY_* (a "memory_only" node is never a CPU
 * binding target). */
#define DMACONN_PLACE_MEMORY_NUMA_NODE "memory_numa_node"
#define DMACONN_PLACE_MEMORY_MODE "memory_mode"
#define DMACONN_MEMORY_ONLY "memory_only" /* NUMA mode: a CPU-less node of device memory */
#define DMACONN_MEMORY_CDMM "cdmm"        /* coherent, but driver-managed: no NUMA node */
#define DMACONN_MEMORY_NONE "none"        /* device memory not in the OS (PCIe devices) */
/* NVLink-C2C (NVML field values NVML_FI_DEV_C2C_LINK_COUNT, _GET_STATUS and
 * _GET_MAX_BW, asked with scope 0): the links present, their status
 * ("active", "inactive") and bandwidth in MB/s per link; the status and
 * bandwidth only where there are links. */
#define DMACONN_PLACE_C2C_LINKS "c2c_links"
#define DMACONN_PLACE_C2C_STATUS "c2c_status"
#define DMACONN_PLACE_C2C_MAX_BW_MBS "c2c_max_bw_mbs"
/* The PCIe root complex, as Kubernetes DRA's resource.kubernetes.io/pcieRoot
 * spells it ("pci0000:00"), and the bridges from the root port down to the
 * device ("0000:15:01.0,0000:16:00.0,0000:17:00.0"); set for NICs too,
 * absent where the device is not found in /sys/devices. */
#define DMACONN_PLACE_PCIE_ROOT "pcie_root"
#define DMACONN_PLACE_PCI_PATH "pci_path"
/* A ready binding: numactl's arguments ("--cpunodebind=0 --membind=0") and
 * the value for Slurm's --cpu-bind ("mask_cpu:0x..."). */
#define DMACONN_PLACE_NUMACTL "numactl"
#define DMACONN_PLACE_SLURM_CPU_BIND "slurm_cpu_bind"

/* Keys of a NIC, besides DMACONN_PROP_NAME ("mlx5_0"), DMACONN_PROP_PCI_BUS_ID
 * (absent for a device without a PCI function: rxe, siw), DMACONN_PROP_NUMA_NODE
 * and DMACONN_PLACE_PCIE_ROOT. */
#define DMACONN_PLACE_NETDEV "netdev"         /* "ens1np0", comma-separated; absent without one */
#define DMACONN_PLACE_LINK_LAYER "link_layer" /* port 1's: "InfiniBand", "Ethernet" */
#define DMACONN_PLACE_PORT_STATE "port_state" /* port 1's: "ACTIVE", "DOWN", ... */
#define DMACONN_PLACE_PORT_RATE "port_rate"   /* port 1's: "400 Gb/sec (4X NDR)" */
#define DMACONN_PLACE_NODE_GUID "node_guid"   /* "a088:c203:00b2:3c4e" */

/*
 * Keys of a (device, NIC) pair: DMACONN_PROP_PATH, the class of the path
 * (PIX, PXB, PHB, NODE, SYS, as `nvidia-smi topo -m`; C2C where the NIC
 * hangs off the CPU the GPU reaches over active NVLink-C2C and no NIC is
 * nearer over PCIe, as NCCL counts it; absent when either place in
 * /sys/devices is unknown), DMACONN_PLACE_PCIE_PATH (the PCIe class alone),
 * DMACONN_PLACE_GDR
 * (DMACONN_GDR_*), DMACONN_PLACE_GDR_MODULE (the peer-memory module when
 * gdr is "peermem") and, when gdr is "none", DMACONN_PROP_REASON (a
 * DMACONN_GDR_REASON_* code) with DMACONN_PROP_REASON_TEXT.
 */
#define DMACONN_PLACE_PCIE_PATH "pcie_path"
#define DMACONN_PLACE_GDR "gdr"
#define DMACONN_PLACE_GDR_MODULE "gdr_module"
#define DMACONN_GDR_DMABUF "dmabuf"
#define DMACONN_GDR_PEERMEM "peermem"
#define DMACONN_GDR_NONE "none"
#define DMACONN_GDR_REASON_NO_MECHANISM "no_gdr_mechanism"  /* no dmabuf, no peer-memory module */
#define DMACONN_GDR_REASON_UNKNOWN "gdr_mechanism_unknown"  /* dmabuf unknown, no module */
#define DMACONN_GDR_REASON_PATH "path_beyond_gdr_level"     /* farther than DMACONN_PLACE_GDR_LEVEL */
#define DMACONN_GDR_REASON_ACS_REDIRECT "acs_redirect"      /* a bridge of the path redirects */
#define DMACONN_GDR_REASON_ACS_UNKNOWN "acs_unknown"        /* a bridge's ACS unreadable (no root) */
#define DMACONN_GDR_REASON_IOMMU "iommu_translating"        /* the GPU's IOMMU group translates DMA */
/* DMACONN_PLACE_NICS_REASON's codes. */
#define DMACONN_NICS_REASON_NONE "no_rdma_nic"       /* ib_core loaded, /sys/class/infiniband empty */
#define DMACONN_NICS_REASON_NO_CLASS "no_rdma_class" /* no device listed, no ib_core module loaded */

/* The placement's keys (the DMACONN_PLACE_* above, in their order): their
 * number, and the k-th (NULL when k is out of range).  Each one's type is
 * dmaconn_property_type_of()'s: DMACONN_TYPE_INT for the NUMA nodes, the CPU
 * family and model and NVLink-C2C's link count and bandwidth, else
 * DMACONN_TYPE_STRING.  Static strings. */
DMACONN_EXTERN int dmaconn_placement_key_count(void);
DMACONN_EXTERN const char *dmaconn_placement_key(int k);

/* ------------------------------------------------------------------------ */
/* Detectors                                                                 */

/* What a detector fills in.  Only valid during the detector's call. */
typedef struct dmaconn_builder dmaconn_builder;

/* Sets N and zeroes the matrix; call once, before the other setters. */
DMACONN_EXTERN int dmaconn_builder_set_size(dmaconn_builder *b, int n);
/* Sets m[i][j] (i != j; values on the diagonal are refused). */
DMACONN_EXTERN int dmaconn_builder_set(dmaconn_builder *b, int i, int j, int value);
/* Sets (or replaces) a device property; key and value are copied, as valid
 * UTF-8 without control characters (other bytes become U+FFFD). */
DMACONN_EXTERN int dmaconn_builder_set_device_property(dmaconn_builder *b, int i,
						       const char *key, const char *value);
/* Sets (or replaces) a property of the pair i -> j (i != j), copied likewise. */
DMACONN_EXTERN int dmaconn_builder_set_pair_property(dmaconn_builder *b, int i, int j,
						     const char *key, const char *value);
/* Raises a warning: stored in the result and sent to the warning sink when
 * the detector returns.  Warnings of one cause (the same fmt; for "%s" the
 * same message) are stored and sent once, the first with "(and N more like
 * it)". */
DMACONN_EXTERN int dmaconn_builder_warn(dmaconn_builder *b, const char *fmt, ...)
#ifdef __GNUC__
	__attribute__((format(printf, 2, 3)))
#endif
	;
/* Stores a warning in the result without sending it to the sink (one that
 * was reported already, e.g. by another process); message is copied. */
DMACONN_EXTERN int dmaconn_builder_add_warning(dmaconn_builder *b, const char *message);
/* For a detector that cannot produce a result: records the message that
 * dmaconn_last_error() gives after the failed detection and returns err (a
 * negative DMACONN_E* code; DMACONN_EDETECTOR when err is not negative),
 * for the detector to return.  The detection then fails with
 * DMACONN_EDETECTOR, or with err itself when it is DMACONN_ENOMEM or
 * DMACONN_EREPLAY.  Call it on the detector's thread. */
DMACONN_EXTERN int dmaconn_builder_fail(dmaconn_builder *b, int err, const char *fmt, ...)
#ifdef __GNUC__
	__attribute__((format(printf, 3, 4)))
#endif
	;

/*
 * A detector: fills b for its pair and returns DMACONN_OK.  A non-zero
 * return makes dmaconn_detect() fail with DMACONN_EDETECTOR and caches
 * nothing.  Detectors may run on any thread, one at a time per pair.
 */
typedef int (*dmaconn_detector_fn)(dmaconn_builder *b, void *user_data);

/* Registers fn for (type, connection).  connection is copied; user_data is
 * passed to fn unchanged and owned by the caller.  DMACONN_EEXIST when the
 * pair already has a detector (built-in ones included). */
DMACONN_EXTERN int dmaconn_register_detector(dmaconn_device_type type, const char *connection,
					     dmaconn_detector_fn fn, void *user_data);

/* Removes a detector registered at run time and its cached result.
 * DMACONN_ENODETECTOR when there is none; built-in detectors stay. */
DMACONN_EXTERN int dmaconn_unregister_detector(dmaconn_device_type type, const char *connection);

/* Lists the registered pairs in registration order (built-in ones first).
 * Returns how many there are; fills at most max entries of types and
 * connections (whose strings stay valid until dmaconn_shutdown()). */
DMACONN_EXTERN int dmaconn_list_detectors(dmaconn_device_type *types, const char **connections,
					  int max);

/* Builds a result with fn, once, outside the registry: nothing is
 * registered or cached, fn's warnings go to the sink as a detector's do.
 * *out is a new reference the caller releases.  Errors as dmaconn_detect()
 * for a failing detector, DMACONN_EINVAL for a bad argument. */
DMACONN_EXTERN int dmaconn_result_build(dmaconn_device_type type, const char *connection,
					dmaconn_detector_fn fn, void *user_data,
					dmaconn_result **out);

/* ------------------------------------------------------------------------ */
/* Record and replay                                                         */

/*
 * Writes every vendor-library answer the detectors use on this node (or, with
 * a replay file, in the replayed file) to `path`, in the versioned JSON
 * format of docs/replay-format.md, with the device-ordering environment.
 * Replaying such a file (DMACONN_REPLAY, or dmaconn_set_replay_file) makes
 * every detector answer from it.  Needs the optional replay component (libdmaconn_replay, found beside this
 * library or through DMACONN_REPLAY_LIBRARY): DMACONN_EUNAVAILABLE without
 * it; DMACONN_EREPLAY when the file cannot be written.  Other threads'
 * detections wait while it records (it loads the vendor libraries afresh);
 * DMACONN_EBUSY inside a detector or a warning handler.
 */
DMACONN_EXTERN int dmaconn_record(const char *path);

/*
 * Replays `path` (a file in the format of docs/replay-format.md) as if
 * DMACONN_REPLAY named it, without touching the environment; NULL or ""
 * goes back to DMACONN_REPLAY.  Threading rule: call it before the first
 * detection, recording or dmaconn_host_id(), while no other thread uses
 * dmaconn.  A replay file is read once per process, so once one is loaded
 * only the same path is accepted.  Errors: DMACONN_EINVAL (path longer than
 * 4095 bytes), DMACONN_EBUSY (another file is already replayed).
 */
DMACONN_EXTERN int dmaconn_set_replay_file(const char *path);

/* ------------------------------------------------------------------------ */
/* Functional check                                                          */

/*
 * Proves peer access by doing it: a helper process (spawned, never forked,
 * so the caller stays CUDA-free) loads the CUDA driver and, for every
 * ordered pair of visible devices, asks the driver (cuDeviceCanAccessPeer,
 * cuDeviceGetP2PAttribute), enables peer access, runs a kernel that stores,
 * loads and atomically adds on the peer's memory and checks every value,
 * then measures copy bandwidth (best of three 64 MiB peer copies, decimal
 * GB/s) and latency (median event-timed duration of a 4-byte peer copy).
 * Only DMACONN_DEVICE_CUDA is supported.  timeout_ms bounds the whole run
 * (0: 120000).  The helper is DMACONN_VERIFY_HELPER (an absolute path) or
 * the one installed beside the library; it loads libcuda.so.1 (or the
 * absolute path in DMACONN_CUDA_LIBRARY), the real driver even when
 * DMACONN_REPLAY is set.  Where the cuda/p2p detector disagrees with what
 * was measured, a warning says so.
 *
 * On success *out is a new result the caller frees with
 * dmaconn_verify_result_free().  A helper that cannot run, crashes or times
 * out is not an error: every pair then fails with the reason.  Errors:
 * DMACONN_EINVAL, DMACONN_EUNAVAILABLE (no verifier for this device type),
 * DMACONN_ENOMEM.
 */
typedef struct dmaconn_verify_result dmaconn_verify_result;

/*
 * The same check as a dmaconn_result (connection type "verify"), which the
 * result's accessors, the CLI's JSON and the verdict cache's codec all read:
 * device i has "pci_bus_id" as the CUDA driver names it (where known); the
 * matrix is 1 where the pair passed, 0 otherwise; each pair i != j has
 * "status" ("pass", "fail" or "no_peer") and then the helper's properties
 * (those of dmaconn_verify_pair_get()); the warnings are the run's.  Errors
 * as dmaconn_verify().  *out is a new reference the caller releases.  New
 * code should use this one: the dmaconn_verify_* functions below stay for
 * existing callers, as a view of this same result (dmaconn_verify() holds
 * it; its pair accessors leave out "status", which
 * dmaconn_verify_status_of() gives).
 */
DMACONN_EXTERN int dmaconn_verify_run(dmaconn_device_type type, int timeout_ms, dmaconn_result **out);

typedef enum dmaconn_verify_status {
	DMACONN_VERIFY_PASS = 0,    /* load, store and atomics checked */
	DMACONN_VERIFY_FAIL = 1,    /* tried, and something was wrong */
	DMACONN_VERIFY_NO_PEER = 2  /* the driver reports no peer access */
} dmaconn_verify_status;

DMACONN_EXTERN int dmaconn_verify(dmaconn_device_type type, int timeout_ms,
				  dmaconn_verify_result **out);
DMACONN_EXTERN void dmaconn_verify_result_free(dmaconn_verify_result *v);
DMACONN_EXTERN int dmaconn_verify_size(const dmaconn_verify_result *v);
/* Status of i -> j; DMACONN_VERIFY_NO_PEER on the diagonal,
 * DMACONN_VERIFY_FAIL for out-of-range pairs. */
DMACONN_EXTERN dmaconn_verify_status dmaconn_verify_status_of(const dmaconn_verify_result *v,
							      int i, int j);
/* Properties of i -> j ("reason", "can_access_peer", "native_atomics",
 * "performance_rank", "gbps", "latency_us", ...), or NULL. */
DMACONN_EXTERN const char *dmaconn_verify_pair_get(const dmaconn_verify_result *v, int i, int j, const char *key);
DMACONN_EXTERN int dmaconn_verify_pair_property_count(const dmaconn_verify_result *v, int i, int j);
DMACONN_EXTERN const char *dmaconn_verify_pair_property_key(const dmaconn_verify_result *v, int i, int j, int k);
DMACONN_EXTERN const char *dmaconn_verify_pair_property_value(const dmaconn_verify_result *v, int i, int j, int k);
/* Warnings of the run (helper failures, disagreements with NVML). */
DMACONN_EXTERN int dmaconn_verify_warning_count(const dmaconn_verify_result *v);
DMACONN_EXTERN const char *dmaconn_verify_warning(const dmaconn_verify_result *v, int k);

/*
 * Progress of every verification of this process (dmaconn_verify() and the
 * cuda/verified detector when it runs the helper): fn is called from the
 * verifying thread with the ordered pairs reported so far and the pairs to
 * check, first when the helper starts on the pairs, then after each pair.
 * NULL (the default) calls nothing.  fn must not call dmaconn.
 */
typedef void (*dmaconn_verify_progress_fn)(int done, int total, void *user_data);
DMACONN_EXTERN void dmaconn_set_verify_progress(dmaconn_verify_progress_fn fn, void *user_data);

/* ------------------------------------------------------------------------ */
/* Warnings                                                                  */

/*
 * Where warnings go.  By default each is written to stderr as one line
 * "dmaconn: warning: <message>", unless DMACONN_QUIET is set to a non-empty
 * value other than "0".  A handler replaces that; NULL restores it.  The
 * handler may be called from any thread that detects, from several at once,
 * and may call dmaconn (dmaconn_shutdown excepted: it does nothing there).
 * Once this returns, no other thread still runs a handler it replaced,
 * unless it is called from inside a handler or a detector.
 */
typedef void (*dmaconn_warning_fn)(const char *message, void *user_data);
DMACONN_EXTERN void dmaconn_set_warning_handler(dmaconn_warning_fn fn, void *user_data);

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                  */

/*
 * Drops the cache, run-time detectors and the warning handler, shuts down
 * the vendor libraries dmaconn initialised (nvmlShutdown) and unloads them.
 * Optional: without it, the library keeps NVML initialised and loaded until
 * the process exits.  Not to be called while another thread uses dmaconn.
 * Inside a detector or a warning handler it does nothing (the caller's
 * detection still uses what it would free); dmaconn_last_error() says so.
 */
DMACONN_EXTERN void dmaconn_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
