/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node model: what a backend discovered about its vendor's devices, in
 * vendor-neutral terms -- identities, active links and their remote ends,
 * fabric membership, and per-pair peer capabilities and PCIe paths.  A
 * backend discovers once per process (again on dmaconn_detect_fresh) and
 * every view of that vendor (one per connection type) is computed from the
 * same model.
 *
 * Published models are shared read-only, reference-counted; facts that
 * cost (NVML's and Level Zero's per-pair facts, NVML's link rates, driver
 * version and placement) are stages of it (struct dc_stage), which the
 * backend's discovery asks on their first need under the backend's lock.
 * Views only read the model.
 */
#ifndef DMACONN_MODEL_H
#define DMACONN_MODEL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "../backends/backend.h"
#include "../linkmatrix.h"
#include "../order/order.h"

#define DC_MODEL_WHY_SIZE 768

/* Row-major index of the ordered pair (i, j) among n devices, computed in
 * size_t: n*n exceeds INT_MAX from 46,341 devices on. */
static inline size_t dc_pair_index(int i, int j, int n)
{
	return (size_t)i * (size_t)n + (size_t)j;
}

/* A switched fabric's registration of a device (NVLink/NVSwitch domains). */
enum dc_fabric_state {
	DC_FABRIC_NOT_SUPPORTED = 0,
	DC_FABRIC_NOT_STARTED = 1,
	DC_FABRIC_IN_PROGRESS = 2,
	DC_FABRIC_COMPLETED = 3
};

/* v4's clique types (NVIDIA's numbering). */
enum dc_clique_type {
	DC_CLIQUE_UNICAST_POINTER = 0,
	DC_CLIQUE_MULTICAST_POINTER = 1,
	DC_CLIQUE_UNICAST_LOGICAL_ENDPOINT = 2,
	DC_CLIQUE_MULTICAST_LOGICAL_ENDPOINT = 3
};
#define DC_FABRIC_CLIQUES 64

struct dc_fabric_facts {
	int known;          /* the vendor answered */
	unsigned int state; /* enum dc_fabric_state, or a value it does not name */
	int status;         /* the registration's vendor status code, 0 = success */
	unsigned char cluster[16];
	unsigned int clique;
	int health_known;   /* health_mask read (a v2 or v3 answer) */
	unsigned int health_mask;
	int summary_known;  /* health_summary read (a v3 or v4 answer) */
	unsigned char health_summary;
	int version;        /* the struct answered: 4, 3, 2, or 1 (the legacy one) */
	int ncliques;       /* v4's typed cliques, sorted by type then id */
	struct dc_clique {
		unsigned char type; /* enum dc_clique_type, or a value it does not name */
		unsigned int id;
	} cliques[DC_FABRIC_CLIQUES];
	unsigned int mc_clique; /* the clique multicast follows (see dc_fabric_mc_clique) */
};

/* Peer capability, as nvidia-smi's legend names it (OK, CNS, GNS, TNS, DR,
 * NS, U): chipset, GPU, topology not supported, disabled by registry, not
 * supported, unknown. */
enum dc_peer_status { DC_PEER_OK, DC_PEER_CNS, DC_PEER_GNS, DC_PEER_TNS, DC_PEER_DR, DC_PEER_NS, DC_PEER_U };
enum { DC_PEER_READ, DC_PEER_WRITE, DC_PEER_ATOMICS, DC_PEER_NVLINK, DC_PEER_CAPS };

/* A peer rule: whether each capability whose bit (1 << DC_PEER_READ...) is
 * in needs -- a connection type's .peer (connections.h) -- is OK in status. */
static inline int dc_peer_ok(unsigned int needs, const unsigned char status[DC_PEER_CAPS])
{
	int ok = 1;
	for (int c = 0; c < DC_PEER_CAPS; c++)
		ok = ok && (!(needs & (1u << c)) || status[c] == DC_PEER_OK);
	return ok;
}

/* PCIe path class of a pair, as `nvidia-smi topo -m` names it. */
enum dc_path { DC_PATH_UNKNOWN, DC_PATH_PIX, DC_PATH_PXB, DC_PATH_PHB, DC_PATH_NODE, DC_PATH_SYS };

/* ------------------------------------------------------------------------
 * Links by kind, for backends whose vendor describes every link of a device
 * with its remote end, rate and capabilities (KFD's io_links and p2p_links).
 * Vendor-neutral: the vendor's own codes are kept beside the kinds only to
 * be shown as they were read.
 */
enum dc_link_kind {
	DC_LINK_OTHER,          /* a kind named by vendor_type alone */
	DC_LINK_PCIE,
	DC_LINK_XGMI,           /* AMD Infinity Fabric between GPUs */
	DC_LINK_HYPERTRANSPORT
};

/* What a link's remote end is. */
enum dc_link_end { DC_END_OTHER, DC_END_DEVICE, DC_END_CPU };

struct dc_link_info {
	enum dc_link_kind kind;
	unsigned long long vendor_type; /* the vendor's code of the kind */
	enum dc_link_end end;
	int to;                         /* DC_END_DEVICE: the remote device's index in the model */
	unsigned long long to_node;     /* the remote end's node number in the vendor's topology */
	int indirect;                   /* a route through other devices or the host, not a link of its own */
	unsigned long long weight;      /* the vendor's distance (KFD: 15 per XGMI hop) */
	unsigned long long min_mbs;     /* MB/s of one link, 0 unknown */
	unsigned long long max_mbs;     /* MB/s of all the links to that end, 0 unknown or none direct */
	unsigned long long vendor_flags; /* the vendor's flags word, as read */
	unsigned char enabled, coherent, atomics_32, atomics_64, peer_dma;
};

/* A vendor's answer about a device that the views show as it is: an
 * integer property of the result (its key, a DMACONN_PROP_ constant). */
#define DC_DEVICE_ANSWERS 8
struct dc_answer {
	const char *property;
	long long value;
};

struct dc_device {
	int failed;                    /* a query of the device failed: why */
	char why[DC_MODEL_WHY_SIZE];
	int mig_known;
	unsigned int mig;              /* MIG mode enabled */
	struct dc_mig *migs;           /* in MIG mode: its instances (malloc'd) */
	int nmigs;
	int mig_rc;                    /* the vendor status that cut the listing short, 0 none */
	char mig_call[64];             /* the call that answered it */
	int fabric_rc;                 /* the fabric query's vendor status */
	struct dc_fabric_facts fabric;
	struct dc_node node;           /* active links, remote ends, switch domain */
	int untyped;                   /* active links to no GPU whose remote type is unknown */
	int untyped_rc;                /* the vendor status that left them unknown */
	int rate_known;                /* link rate below asked (NVML: the peer stage) */
	double link_gbps;              /* GB/s per direction per link, 0 unknown */
	const char *rate_source;       /* a static string */
	int links_read;                /* link states were read: down[] is valid */
	int ndown;                     /* links the GPU has that are not active */
	unsigned char down[DC_MAX_LINKS];
	unsigned long long up;         /* which of links 0-63 are active (links_read) */
	unsigned int speed[DC_MAX_LINKS]; /* per active link: NVML's speed in MB/s, 0 unknown */
	int bar1_known;
	unsigned long long bar1_total; /* bytes */
	int virt_known;
	unsigned int virt;             /* NVML's virtualization mode */
	int nanswers;                  /* answers shown as they are (below) */
	struct dc_answer answers[DC_DEVICE_ANSWERS];
	struct dc_place_facts place;   /* CPU and memory affinity, C2C (backend.h) */

	/* ---- Facts of a vendor topology read whole (KFD), vendor-neutral ---- */
	unsigned long long topo_node;  /* the device's node number in the vendor's topology */
	unsigned long long unique_id;  /* the vendor's 64-bit unique id, 0 none */
	unsigned long long isa_version; /* the instruction set as a number (KFD gfx_target_version), 0 none */
	unsigned long long pci_device_id;
	unsigned long long fabric_id;  /* the fabric (XGMI hive) it belongs to, 0 none */
	char topo_name[64];            /* the topology's name of the device, "" none */
	char product_name[128];        /* the marketing name, "" none */
	int partition, partitions;     /* its index among the partitions of its package, and their count */
	long host_cpu;                 /* the topology node of the CPU it hangs off, -1 unknown */
	struct dc_link_info *links;    /* every link the topology lists (malloc'd) */
	int nlinks;

	/* -- devices listed per driver, tiles (Level Zero fills these) -- */
	char long_name[256];           /* the vendor's name when it may exceed ids' ("" none) */
	int group;                     /* the vendor driver listing it (its position), -1 none */
	int group_index;               /* its position in that driver's list */
	int tile_known;
	unsigned int tile;             /* the tile of a card it is */
	int tiles;                     /* tiles it has, -1 unknown */
};

/* What the vendor says about the ordered pair of devices (a, b). */
struct dc_peer {
	unsigned char asked;
	unsigned char failed_cap;      /* DC_PEER_READ..., the query that failed */
	unsigned char status[DC_PEER_CAPS];
	unsigned char path_asked;
	unsigned char path;            /* enum dc_path */
	int rc;                        /* first failing capability query, 0 none */
	int path_rc;                   /* the PCIe path query's status */

	/* ---- The pair in a vendor topology read whole (KFD), vendor-neutral ---- */
	int link;                      /* index into a's links of the one to b (a direct link first), -1 none */
	int link_count;                /* direct links to b: -1 unknown, 0 reached through other devices */
	const char *count_source;      /* how link_count was read (a static string), NULL none */
	int hops;                      /* 0 unknown */
};

/* -- per-pair fabric links and staged facts (Level Zero fills these) -- */

/* A set of facts that costs, asked on its first need -- by the backend's
 * discovery, through dc_model_stage(), once per model; views only read it. */
struct dc_stage {
	const char *lacks;             /* a vendor function it needs that the library lacks (static), or NULL */
	int done;
	int failed;                    /* could not be asked: why */
	int nomem;                     /* ask ran out of memory (not kept: asked again) */
	int unsupported;               /* the vendor said the feature is not supported */
	char why[DC_MODEL_WHY_SIZE];
};

enum dc_bw_unit { DC_BW_UNKNOWN, DC_BW_BYTES_PER_NS, DC_BW_BYTES_PER_CLOCK, DC_BW_UNITS };
enum dc_latency_unit { DC_LATENCY_UNKNOWN, DC_LATENCY_NS, DC_LATENCY_CLOCK, DC_LATENCY_HOP };
enum dc_duplex { DC_DUPLEX_UNKNOWN, DC_DUPLEX_HALF, DC_DUPLEX_FULL, DC_DUPLEX_MIXED };

/* The links joining a pair of devices over a fabric, by kind. */
struct dc_pair_links {
	int fabric;                    /* scale-up links between packages (Xe Link) */
	int die;                       /* die-to-die links between tiles of one package (MDFI) */
	unsigned long long bw[DC_BW_UNITS]; /* the fabric links' bandwidth, summed by unit */
	int bw_links[DC_BW_UNITS];     /* fabric links per bandwidth unit */
	unsigned int latency;          /* the lowest fabric link latency of a known unit */
	enum dc_latency_unit latency_unit;
	enum dc_duplex duplex;         /* of the fabric links (MIXED: they differ) */
};

struct dc_model {
	atomic_int refs;
	int vendor_ok;                 /* the vendor library answered; else why */
	char why[DC_MODEL_WHY_SIZE];
	int n;
	int found;                     /* devices found, when more than the n kept */
	struct dc_gpu *ids;            /* identities, in the vendor's order */
	struct dc_device *devices;     /* NULL when !vendor_ok */
	void **handles;                /* the backend's per-device handles */
	struct dc_peer *peers;         /* n*n, NULL until a view needs them */
	int cc_asked;                  /* its state asked (once, whatever NVML answered) */
	int cc_known;                  /* confidential computing state read */
	unsigned int cc_on;            /* ccFeature ENABLED (peer access) */
	unsigned int cc_feature;       /* NVML's ccFeature: 0 disabled, 1 enabled, 2 bare-metal secure AI */
	struct dc_stage place_stage;   /* fills devices' place (for the placement) */
	struct dc_stage driver_stage;  /* fills cc_* and the driver facts below */
	int driver_rc;                 /* the driver version's vendor status */
	char driver[80];               /* "580.65.06" */
	int driver_fabric_v;           /* the library has NVML's nvmlDeviceGetGpuFabricInfoV (R550 on) */

	/* -- identity warnings, per-pair fabric links and facts asked on first
	 * need by the backend's discovery (Level Zero fills these) -- */
	void **groups;                 /* the backend's per-driver handles */
	int ngroups;
	char pci_why[DC_MODEL_WHY_SIZE];   /* a PCI address query failed ("" none) */
	char tiles_why[DC_MODEL_WHY_SIZE]; /* a tile count query failed ("" none) */
	struct dc_stage fabric_stage;      /* fills pair_links */
	struct dc_pair_links *pair_links;  /* n*n, symmetric */
	struct dc_stage peer_stage;        /* fills peers (Level Zero: READ, WRITE, ATOMICS; NVML: every
					    * capability and path, devices' rates, cc_*) */
};

/* The clique a device's multicast objects follow: v4's first multicast
 * pointer clique, else its first multicast logical-endpoint clique, else
 * the legacy clique id. */
unsigned int dc_fabric_mc_clique(const struct dc_fabric_facts *f);

/* "unicast_pointer", ...; NULL for a type NVIDIA has not named. */
const char *dc_clique_type_name(unsigned int type);

/* Copies the text src (at most srclen bytes, up to a NUL) into dst of len
 * bytes, NUL-terminated, cut where needed at a UTF-8 character boundary. */
void dc_copy_text(char *dst, size_t len, const char *src, size_t srclen);

/* A model for n devices, all zero (ids' compute capabilities -1); NULL when
 * out of memory.  with_facts: also devices and handles. */
struct dc_model *dc_model_new(int n, int with_facts);
/* Accepts NULL. */
void dc_model_release(struct dc_model *m);

/* Asks the facts of stage st of model m once: ask(m, st) under lock (the
 * backend's, which its fork handling takes); later calls find them asked.
 * 0 when they are in, -1 when st says why not, -2 out of memory (st->nomem:
 * asked again on the next call, st not to be read). */
int dc_model_stage(struct dc_model *m, struct dc_stage *st, pthread_mutex_t *lock,
		   void (*ask)(struct dc_model *m, struct dc_stage *st));
/* The same for a stage asked per device, which costs per pair: ask(m, st,
 * want) fills what the model lacks of the devices k with want[k] (n flags)
 * and of the pairs among them, and keeps what it asked, so that a later
 * call for other devices asks only those (a process that sees one GPU of
 * eight asks nothing of the other seven).  Returns as dc_model_stage. */
int dc_model_stage_devices(struct dc_model *m, struct dc_stage *st, pthread_mutex_t *lock,
			   void (*ask)(struct dc_model *m, struct dc_stage *st, const unsigned char *want),
			   const unsigned char *want);

#endif
