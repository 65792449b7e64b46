/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVIDIA detectors on NVML.  NVML is loaded on first use and initialised
 * once (nvmlInit_v2 is reference-counted by NVML, so this is safe before or
 * after the caller's own NVML use); it never touches the CUDA runtime or
 * driver, so a process may fork and initialise CUDA afterwards.
 *
 * Flow: discovery (once per process, src/model/model.h): load -> every NVML
 * device's identity, links, fabric and MIG mode.  Views (one detector over
 * the rows of src/model/connections.c): order the model's GPUs as CUDA would
 * (order.c) -> per visible device, its link facts -> dc_link_matrix() of
 * the row's link kinds; a peer rule adds the per-pair facts it asks once, a
 * domain rule the fabric facts; then the row's reasons.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../internal.h"
#include "../../linkmatrix.h"
#include "../../model/model.h"
#include "../../order/order.h"
#include "../../replay_abi.h"
#include "../../sysfs.h"
#include "../../model/reasons.h"
#include "../backend.h"
#include "nvml_load.h"

#define NVML_SONAME "libnvidia-ml.so.1"
#define WHY_SIZE 768

static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nvml_api nvml;
static int nvml_state; /* 0 not tried, 1 ready, -1 unusable (sticky) */
static char nvml_error[WHY_SIZE];

/* "Unknown Error (NVML_ERROR_UNKNOWN)", NVML's own words first. */
static void describe(nvmlReturn_t r, char *out, size_t len)
{
	const char *text = nvml.nvmlErrorString ? nvml.nvmlErrorString(r) : NULL;
	const char *name = nvml_return_name(r);
	char code[32];
	if (!name) {
		snprintf(code, sizeof(code), "NVML error %d", r);
		name = code;
	}
	if (text && *text)
		snprintf(out, len, "%.200s (%s)", text, name);
	else
		snprintf(out, len, "%s", name);
}

/* Formats "<call> failed: <error>" into why. */
static void call_failed(char *why, nvmlReturn_t r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void call_failed(char *why, nvmlReturn_t r, const char *fmt, ...)
{
	char err[256];
	va_list ap;
	describe(r, err, sizeof(err));
	va_start(ap, fmt);
	dc_call_failedv(why, WHY_SIZE, err, fmt, ap);
	va_end(ap);
}

static int open_replay(char *why)
{
	void *h;
	const struct dmaconn_replay_ops *ops;
	int replay = dc_replay_open(&h, &ops, why, WHY_SIZE);
	if (replay <= 0)
		return replay < 0 ? -1 : 1;
	const char *load_error = ops->library_load_error("nvml");
	if (load_error) {
		dc_record_table("nvml", NULL, NULL, load_error);
		dlclose(h);
		/* A recording stores the whole message: prefix and mark it once. */
		static const char prefix[] = "cannot load NVML: ";
		if (!strncmp(load_error, prefix, sizeof(prefix) - 1))
			load_error += sizeof(prefix) - 1;
		snprintf(why, WHY_SIZE, "%s%.600s%s", prefix, load_error,
			 strstr(load_error, "(replayed)") ? "" : " (replayed)");
		return -1;
	}
	/* The component's table; its handle keeps the component mapped. */
	if (ops->table("nvml", &nvml, why, WHY_SIZE) != 0) {
		dc_record_table("nvml", NULL, NULL, why);
		dlclose(h);
		return -1;
	}
	nvml.handle = h;
	dc_record_table("nvml", &nvml, NULL, NULL);
	return 0;
}

static const struct dc_library dc_nvml_libraries[] = {
	{ "nvml", NVML_SONAME, "DMACONN_NVML_LIBRARY", "NVML", "is the NVIDIA driver installed?" },
};

static int open_live(const char *path, char *why, size_t len)
{
	return nvml_api_open(&nvml, path, NULL, why, len);
}

static void record_live(const char *library, int rc, const char *why)
{
	dc_record_table("nvml", rc ? NULL : &nvml, library, why);
}

/* NVML, or its replay; a recording gets the table (or why none loaded). */
static int open_library(char *why)
{
	int rc = open_replay(why);
	if (rc <= 0)
		return rc;
	return dc_open_live(&dc_nvml_libraries[0], open_live, record_live, why, WHY_SIZE);
}

static int init_library(char *why)
{
	if (open_library(why) != 0)
		return -1;
	nvmlReturn_t r = nvml.nvmlInit_v2();
	if (r != NVML_SUCCESS)
		call_failed(why, r, "nvmlInit_v2");
	return r == NVML_SUCCESS ? 0 : -1;
}

/* Loads and initialises NVML once; 0 when usable, else -1 with the reason. */
static int nvml_ready(char *why)
{
	return dc_init_once(&nvml_lock, &nvml_state, nvml_error, init_library, why, WHY_SIZE);
}

/*
 * The NVML model, discovered once per process (src/model/model.h): every
 * NVML device's identity, links, fabric and MIG mode; the per-pair facts
 * and the driver's are stages of it, asked by discovery on their first
 * need (dc_model_stage).  model_lock orders discovery (taken before
 * nvml_lock); peer_lock guards the stages.
 */
static pthread_mutex_t model_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

static void *discover_model(void);
static void model_release(void *m)
{
	dc_model_release(m);
}

/* The last discovery, under model_lock. */
static struct dc_discovery nvml_discovery =
	DC_DISCOVERY_OF(struct dc_model, &model_lock, discover_model, model_release);

static void dc_nvml_fork(int phase)
{
	static pthread_mutex_t *const locks[] = { &model_lock, &peer_lock, &nvml_lock };
	dc_fork_locks(phase, locks, (int)(sizeof(locks) / sizeof(locks[0])));
}

static void dc_nvml_shutdown(void)
{
	dc_discovery_forget(&nvml_discovery);
	pthread_mutex_lock(&nvml_lock);
	if (nvml_state == 1 && nvml.nvmlShutdown)
		nvml.nvmlShutdown();
	nvml_api_close(&nvml);
	nvml_state = 0;
	nvml_error[0] = '\0';
	pthread_mutex_unlock(&nvml_lock);
}

/* ------------------------------------------------------------- discovery */

/* Whether the links' identities are asked in one batch per device: not when
 * DMACONN_NVML_NO_BATCH is set and not "0". */
static int nvml_batch(void)
{
	const char *v = dc_config_variable("DMACONN_NVML_NO_BATCH");
	return !v || !strcmp(v, "0");
}

/*
 * Runs fn(ctx, i) for i in [0, n), spread over threads: NVML is thread-safe
 * and most of its cost is per-device latency in the driver (attaching a GPU
 * on its first handle, the first NVLink query), which overlaps well.
 * DMACONN_NVML_THREADS bounds the threads (1 = serial, for comparison).
 */
struct parallel {
	void (*fn)(void *ctx, int i);
	void *ctx;
	int first, stride, n;
};

static void *parallel_worker(void *arg)
{
	const struct parallel *p = arg;
	for (int i = p->first; i < p->n; i += p->stride)
		p->fn(p->ctx, i);
	return NULL;
}

static void parallel_for(int n, void (*fn)(void *ctx, int i), void *ctx)
{
	enum { MAX_THREADS = 64 };
	const char *bound = dc_config_variable("DMACONN_NVML_THREADS");
	long threads = bound ? strtol(bound, NULL, 10) : MAX_THREADS;
	threads = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
	threads = threads > n ? n : threads;
	pthread_t tid[MAX_THREADS];
	int created[MAX_THREADS] = { 0 };
	struct parallel jobs[MAX_THREADS];
	for (int t = 0; t < threads; t++)
		jobs[t] = (struct parallel){ fn, ctx, t, (int)threads, n };
	for (int t = 1; t < threads; t++)
		created[t] = pthread_create(&tid[t], NULL, parallel_worker, &jobs[t]) == 0;
	/* Shares whose thread could not start run here, after our own. */
	for (int t = 0; t < threads; t++)
		if (!created[t])
			parallel_worker(&jobs[t]);
	for (int t = 1; t < threads; t++)
		if (created[t])
			pthread_join(tid[t], NULL);
}

struct identity_job {
	struct dc_model *m;
	char (*why)[WHY_SIZE]; /* per device; empty when it went well */
	int batch;             /* link states through nvmlDeviceGetFieldValues */
	nvmlReturn_t (*type_rc)[DC_MAX_LINKS]; /* per device, per active link: the remote-type answer */
};

static void query_gpu(struct dc_model *m, int index, int batch, nvmlReturn_t type_rc[DC_MAX_LINKS]);
static void query_place(nvmlDevice_t h, struct dc_place_facts *p);

/* The kernel's NUMA node of the GPU (a replay: as recorded), read once per
 * discovery for every view and the placement. */
static void set_numa_of(struct dc_gpu *g)
{
	char bus[DC_PCI_BUS_ID_SIZE];
	dc_pci_format(&g->pci, bus);
	g->numa_node = dc_sysfs_numa_node(bus);
}

/* One of NVML_DEVICE_QUERIES: its answer kept for the view, when NVML gives one. */
#define ASK_COUNT_(fn, key, prop) +1
_Static_assert(0 NVML_DEVICE_QUERIES(ASK_COUNT_) <= DC_DEVICE_ANSWERS, "more NVML_DEVICE_QUERIES than DC_DEVICE_ANSWERS");
#undef ASK_COUNT_
static void ask_query(struct dc_device *d, nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *), nvmlDevice_t h,
		      const char *property)
{
	unsigned int v;
	if (fn && d->nanswers < DC_DEVICE_ANSWERS && fn(h, &v) == NVML_SUCCESS)
		d->answers[d->nanswers++] = (struct dc_answer){ property, v };
}

/* Handle, PCI address, UUID, name and compute capability of NVML device i. */
static void identify(void *ctx, int idx)
{
	struct identity_job *job = ctx;
	unsigned int i = (unsigned int)idx;
	char *why = job->why[i];
	struct dc_gpu *g = &job->m->ids[i];
	nvmlDevice_t h = NULL;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "", uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
	nvmlPciInfo_t pci;
	nvmlReturn_t r;
	memset(&pci, 0, sizeof(pci));
	if ((r = nvml.nvmlDeviceGetHandleByIndex_v2(i, &h)) != NVML_SUCCESS) {
		call_failed(why, r, "nvmlDeviceGetHandleByIndex_v2(%u)", i);
		return;
	}
	if ((r = nvml.nvmlDeviceGetPciInfo_v3(h, &pci)) != NVML_SUCCESS) {
		call_failed(why, r, "nvmlDeviceGetPciInfo_v3(device %u)", i);
		return;
	}
	if (dc_pci_parse(pci.busId, sizeof(pci.busId), &g->pci) != 0 &&
	    dc_pci_parse(pci.busIdLegacy, sizeof(pci.busIdLegacy), &g->pci) != 0) {
		snprintf(why, WHY_SIZE, "nvmlDeviceGetPciInfo_v3(device %u) returned an unreadable bus id '%.32s'",
			 i, pci.busId);
		return;
	}
	if ((r = nvml.nvmlDeviceGetUUID(h, uuid, sizeof(uuid))) != NVML_SUCCESS) {
		call_failed(why, r, "nvmlDeviceGetUUID(device %u)", i);
		return;
	}
	if ((r = nvml.nvmlDeviceGetName(h, name, sizeof(name))) != NVML_SUCCESS) {
		call_failed(why, r, "nvmlDeviceGetName(device %u)", i);
		return;
	}
	dc_copy_text(g->uuid, sizeof(g->uuid), uuid, sizeof(uuid));
	dc_copy_text(g->name, sizeof(g->name), name, sizeof(name));
	set_numa_of(g);
	g->cc_major = g->cc_minor = -1;
	if (nvml.nvmlDeviceGetCudaComputeCapability) {
		r = nvml.nvmlDeviceGetCudaComputeCapability(h, &g->cc_major, &g->cc_minor);
		if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED) {
			call_failed(why, r, "nvmlDeviceGetCudaComputeCapability(device %u)", i);
			return;
		}
		if (r != NVML_SUCCESS)
			g->cc_major = g->cc_minor = -1;
	}
	/* The answers shown as they are (nvml_functions.h): none when not answered. */
	struct dc_device *d = &job->m->devices[i];
#define ASK_(fn, key, prop) ask_query(d, nvml.fn, h, prop);
	NVML_DEVICE_QUERIES(ASK_)
#undef ASK_
	job->m->handles[i] = h;
	/* The links, fabric and MIG mode in the same pass: a GPU's first NVLink
	 * query costs milliseconds in the driver, better spent while the other
	 * GPUs attach than after all of them have. */
	query_gpu(job->m, idx, job->batch, job->type_rc[i]);
}

/* A link whose remote type NVML could not give (the call is missing or "not
 * found") counts only when its address is a GPU's; one to no GPU may reach
 * an NVSwitch, so leaving it out must be said.  Needs every GPU's address. */
static void count_untyped(const struct dc_model *m, struct dc_device *d, const nvmlReturn_t *type_rc)
{
	for (int k = 0; !d->failed && k < d->node.nlinks; k++) {
		const struct dc_link *link = &d->node.links[k];
		if (link->remote != DC_REMOTE_GPU || type_rc[k] != NVML_ERROR_FUNCTION_NOT_FOUND)
			continue;
		int gpu = 0;
		for (int i = 0; i < m->n && !gpu; i++)
			gpu = dc_pci_equal(&link->remote_pci, &m->ids[i].pci);
		if (!gpu) {
			d->untyped++;
			d->untyped_rc = (int)type_rc[k];
		}
	}
}

/* The switch domain of a device from its fabric registration. */
static void domain_of(struct dc_device *d)
{
	struct dc_node *node = &d->node;
	const struct dc_fabric_facts *fb = &d->fabric;
	node->switch_usable = 1;
	if (!fb->known || fb->state == DC_FABRIC_NOT_SUPPORTED)
		return;
	int done = fb->state == DC_FABRIC_COMPLETED && fb->status == NVML_SUCCESS;
	node->switch_usable = done;
	node->has_domain = done;
	memcpy(node->cluster, fb->cluster, sizeof(node->cluster));
	node->clique = fb->clique;
}

/* Every NVML device into a new model; NULL with why (or out of memory). */
static struct dc_model *enumerate(char *why)
{
	unsigned int count = 0;
	nvmlReturn_t r = nvml.nvmlDeviceGetCount_v2(&count);
	if (r != NVML_SUCCESS) {
		call_failed(why, r, "nvmlDeviceGetCount_v2");
		return NULL;
	}
	if (count > 4096) {
		snprintf(why, WHY_SIZE, "nvmlDeviceGetCount_v2 reported %u devices, more than dmaconn accepts", count);
		return NULL;
	}
	struct dc_model *m = dc_model_new((int)count, 1);
	nvmlReturn_t(*type_rc)[DC_MAX_LINKS] = calloc(count + 1, sizeof(*type_rc));
	struct identity_job job = { m, calloc(count + 1, WHY_SIZE), nvml_batch(), type_rc };
	if (!m || !job.why || !type_rc) {
		free(job.why);
		free(type_rc);
		dc_model_release(m);
		snprintf(why, WHY_SIZE, "out of memory for %u devices", count);
		return NULL;
	}
	if (count)
		parallel_for((int)count, identify, &job);
	int rc = 0;
	for (unsigned int i = 0; i < count && rc == 0; i++) {
		if (job.why[i][0]) {
			snprintf(why, WHY_SIZE, "%s", job.why[i]);
			rc = -1;
		}
	}
	for (unsigned int i = 0; rc == 0 && i < count; i++) {
		count_untyped(m, &m->devices[i], type_rc[i]);
		domain_of(&m->devices[i]);
	}
	free(job.why);
	free(type_rc);
	if (rc != 0) {
		dc_model_release(m);
		return NULL;
	}
	m->vendor_ok = 1;
	m->peer_stage.lacks = nvml.nvmlDeviceGetP2PStatus ? NULL : "nvmlDeviceGetP2PStatus";
	return m;
}

/* N without NVML: NVIDIA PCI functions (sysfs, or the replay's record), at
 * most as many as NVML may report. */
static struct dc_model *fallback_model(const char *why)
{
	enum { MAX_FALLBACK = 4096 };
	struct dc_pci *pcis = calloc(MAX_FALLBACK, sizeof(*pcis));
	if (!pcis)
		return NULL;
	int n = 0;
	const struct dmaconn_replay_ops *ops = dc_replay_ops();
	if (ops) {
		char (*ids)[DMACONN_REPLAY_BUS_ID_SIZE] = calloc(MAX_FALLBACK, sizeof(*ids));
		n = ids ? ops->pci_gpus(ids, MAX_FALLBACK) : 0;
		for (int i = 0; i < n && i < MAX_FALLBACK; i++)
			dc_pci_parse(ids[i], sizeof(ids[i]), &pcis[i]);
		free(ids);
	} else {
		const char *root = dc_config()->sysfs_root;
		n = dc_sysfs_nvidia_gpus(root ? root : "", pcis, MAX_FALLBACK);
	}
	int found = n;
	n = n > MAX_FALLBACK ? MAX_FALLBACK : n;
	dc_record_pci_gpus(pcis, n);
	struct dc_model *m = dc_model_new(n, 0);
	if (m)
		m->found = found;
	for (int i = 0; m && i < n; i++) {
		m->ids[i].pci = pcis[i];
		set_numa_of(&m->ids[i]);
	}
	free(pcis);
	if (m)
		snprintf(m->why, sizeof(m->why), "%s", why);
	return m;
}

/* Loads NVML and discovers every device, or counts them without NVML
 * (from the tree below DMACONN_SYSFS_ROOT, the discovery's key). */
static void *discover_model(void)
{
	char why[WHY_SIZE];
	struct dc_model *m = NULL;
	if (nvml_ready(why) == 0)
		m = enumerate(why);
	return m ? m : fallback_model(why);
}

/* The model to compute views from: the process's discovery, made on first
 * use and again for a fresh detection or another DMACONN_SYSFS_ROOT.  A new
 * reference, or NULL when out of memory. */
static struct dc_model *model_get(void)
{
	return dc_discovery_get(&nvml_discovery, dc_config()->sysfs_root);
}

DC_DISCOVERY_HOOKS(dc_nvml, nvml_discovery, model_get)

/* ---------------------------------------------------------- link facts */

/* What every version of nvmlGpuFabricInfo says. */
static void fabric_set(struct dc_fabric_facts *f, nvmlGpuFabricState_t state, nvmlReturn_t status,
		       const unsigned char *cluster, unsigned int clique)
{
	f->state = state;
	f->status = (int)status;
	memcpy(f->cluster, cluster, sizeof(f->cluster));
	f->clique = clique;
}

/* v4: typed cliques; legacy clique_id is its first unicast pointer clique. */
static nvmlReturn_t query_fabric_v4(nvmlDevice_t h, struct dc_fabric_facts *f)
{
	nvmlGpuFabricInfo_v4_t v;
	memset(&v, 0, sizeof(v));
	nvmlReturn_t r = nvml.nvmlDeviceGetGpuFabricInfo_v4(h, &v);
	if (r != NVML_SUCCESS)
		return r;
	unsigned int n = v.numCliques > NVML_GPU_FABRIC_CLIQUE_MAX ? NVML_GPU_FABRIC_CLIQUE_MAX : v.numCliques;
	unsigned int unicast = 0;
	int found = 0;
	for (unsigned int c = 0; c < n; c++) {
		f->cliques[c].type = v.cliques[c].type;
		f->cliques[c].id = v.cliques[c].id;
		if (!found && v.cliques[c].type == NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER) {
			unicast = v.cliques[c].id;
			found = 1;
		}
	}
	f->ncliques = (int)n;
	fabric_set(f, v.state, v.status, v.clusterUuid, unicast);
	f->health_known = f->summary_known = 1;
	f->health_mask = v.healthMask;
	f->health_summary = v.healthSummary;
	f->version = 4;
	return r;
}

static nvmlReturn_t query_fabric(nvmlDevice_t h, struct dc_fabric_facts *f)
{
	memset(f, 0, sizeof(*f));
	nvmlReturn_t r = NVML_ERROR_NOT_SUPPORTED;
	/* A device without a fabric says so in any version; another failure
	 * (a driver without v4) falls back to the versioned query. */
	if (nvml.nvmlDeviceGetGpuFabricInfo_v4) {
		r = query_fabric_v4(h, f);
		if (r == NVML_SUCCESS || r == NVML_ERROR_NOT_SUPPORTED) {
			f->known = r == NVML_SUCCESS;
			f->mc_clique = dc_fabric_mc_clique(f);
			return r;
		}
		memset(f, 0, sizeof(*f));
		r = NVML_ERROR_NOT_SUPPORTED;
	}
	if (nvml.nvmlDeviceGetGpuFabricInfoV) {
		nvmlGpuFabricInfo_v3_t v;
		memset(&v, 0, sizeof(v));
		v.version = nvmlGpuFabricInfo_v3;
		r = nvml.nvmlDeviceGetGpuFabricInfoV(h, &v);
		if (r == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
			/* A driver that predates v3 takes the v2 layout, a prefix of v3. */
			memset(&v, 0, sizeof(v));
			v.version = nvmlGpuFabricInfo_v2;
			r = nvml.nvmlDeviceGetGpuFabricInfoV(h, &v);
		}
		if (r == NVML_SUCCESS) {
			fabric_set(f, v.state, v.status, v.clusterUuid, v.cliqueId);
			f->health_known = 1;
			f->health_mask = v.healthMask;
			f->summary_known = v.version == nvmlGpuFabricInfo_v3;
			f->health_summary = f->summary_known ? v.healthSummary : 0;
			f->version = f->summary_known ? 3 : 2;
		}
	} else if (nvml.nvmlDeviceGetGpuFabricInfo) {
		nvmlGpuFabricInfo_t v;
		memset(&v, 0, sizeof(v));
		r = nvml.nvmlDeviceGetGpuFabricInfo(h, &v);
		if (r == NVML_SUCCESS)
			fabric_set(f, v.state, v.status, v.clusterUuid, v.cliqueId);
		f->version = 1;
	}
	f->known = r == NVML_SUCCESS;
	f->mc_clique = dc_fabric_mc_clique(f);
	return r;
}

/* The remote end of active link l, or -1 with the reason; *type_rc gets the
 * answer of nvmlDeviceGetNvLinkRemoteDeviceType (FUNCTION_NOT_FOUND when
 * NVML lacks it). */
static int remote_of(nvmlDevice_t h, const char *bus, unsigned int l, struct dc_link *link,
		     nvmlReturn_t *type_rc, char *why)
{
	nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
	nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
	if (nvml.nvmlDeviceGetNvLinkRemoteDeviceType)
		r = nvml.nvmlDeviceGetNvLinkRemoteDeviceType(h, l, &type);
	*type_rc = r;
	if (r == NVML_SUCCESS && type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
		link->remote = DC_REMOTE_SWITCH;
		return 0;
	}
	if (r == NVML_SUCCESS && type != NVML_NVLINK_DEVICE_TYPE_GPU) {
		link->remote = DC_REMOTE_OTHER; /* a CPU, an NPU, or unknown */
		return 0;
	}
	if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_FUNCTION_NOT_FOUND) {
		call_failed(why, r, "nvmlDeviceGetNvLinkRemoteDeviceType(GPU %s, link %u)", bus, l);
		return -1;
	}
	/* A GPU, or a driver that cannot say: the remote's address decides.
	 * Without the type, only an address that is a GPU counts. */
	nvmlPciInfo_t pci;
	memset(&pci, 0, sizeof(pci));
	r = nvml.nvmlDeviceGetNvLinkRemotePciInfo_v2(h, l, &pci);
	if (r == NVML_ERROR_NOT_SUPPORTED) {
		link->remote = DC_REMOTE_OTHER;
		return 0;
	}
	if (r != NVML_SUCCESS) {
		call_failed(why, r, "nvmlDeviceGetNvLinkRemotePciInfo_v2(GPU %s, link %u)", bus, l);
		return -1;
	}
	if (dc_pci_parse(pci.busId, sizeof(pci.busId), &link->remote_pci) != 0 &&
	    dc_pci_parse(pci.busIdLegacy, sizeof(pci.busIdLegacy), &link->remote_pci) != 0) {
		snprintf(why, WHY_SIZE,
			 "nvmlDeviceGetNvLinkRemotePciInfo_v2(GPU %s, link %u) returned an unreadable bus id '%.32s'",
			 bus, l, pci.busId);
		return -1;
	}
	link->remote = DC_REMOTE_GPU;
	return 0;
}

enum { LINK_ABSENT, LINK_DOWN, LINK_UP };

/* NVML's speed of link l of device h in MB/s, 0 where it gives none. */
static unsigned int link_speed(nvmlDevice_t h, unsigned int l)
{
	nvmlFieldValue_t fv;
	memset(&fv, 0, sizeof(fv));
	fv.fieldId = NVML_FI_DEV_NVLINK_GET_SPEED;
	fv.scopeId = l;
	if (!nvml.nvmlDeviceGetFieldValues || nvml.nvmlDeviceGetFieldValues(h, 1, &fv) != NVML_SUCCESS ||
	    fv.nvmlReturn != NVML_SUCCESS)
		return 0;
	return fv.value.uiVal;
}

/*
 * The state of every link of device h in one nvmlDeviceGetFieldValues
 * round trip, plus its count of links to NVSwitches, then the speeds of
 * its active links in a second one.  Returns the number of link indices answered (states[] filled;
 * speeds[] in MB/s, 0 where NVML gave none), or -1 when the batch cannot be
 * trusted and the caller must ask link by link (which names any error
 * precisely).
 */
static int batch_states(nvmlDevice_t h, int states[NVML_NVLINK_MAX_LINKS], unsigned int speeds[NVML_NVLINK_MAX_LINKS],
			int *switch_links)
{
	if (!nvml.nvmlDeviceGetFieldValues)
		return -1;
	nvmlFieldValue_t fv[NVML_NVLINK_MAX_LINKS + 1];
	memset(fv, 0, sizeof(fv));
	for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		fv[l].fieldId = NVML_FI_DEV_NVLINK_GET_STATE;
		fv[l].scopeId = l;
	}
	fv[NVML_NVLINK_MAX_LINKS].fieldId = NVML_FI_DEV_NVSWITCH_CONNECTED_LINK_COUNT;
	if (nvml.nvmlDeviceGetFieldValues(h, NVML_NVLINK_MAX_LINKS + 1, fv) != NVML_SUCCESS)
		return -1;
	int n = 0;
	for (; n < NVML_NVLINK_MAX_LINKS; n++) {
		nvmlReturn_t r = fv[n].nvmlReturn;
		if (r == NVML_ERROR_INVALID_ARGUMENT)
			break;
		if (r == NVML_ERROR_NOT_SUPPORTED)
			states[n] = LINK_ABSENT;
		else if (r == NVML_SUCCESS)
			states[n] = fv[n].value.uiVal == NVML_FEATURE_ENABLED ? LINK_UP : LINK_DOWN;
		else
			return -1;
	}
	const nvmlFieldValue_t *sw = &fv[NVML_NVLINK_MAX_LINKS];
	*switch_links = sw->nvmlReturn == NVML_SUCCESS ? (int)sw->value.uiVal : -1;
	/* The speeds of the active links only, in a second batch: each field
	 * NVML answers costs a driver round trip, and a GPU without NVLink (or
	 * with most ports spare) would pay for every port. */
	nvmlFieldValue_t sp[NVML_NVLINK_MAX_LINKS];
	int k = 0;
	for (int l = 0; l < n; l++)
		if (states[l] == LINK_UP) {
			memset(&sp[k], 0, sizeof(sp[k]));
			sp[k].fieldId = NVML_FI_DEV_NVLINK_GET_SPEED;
			sp[k++].scopeId = (unsigned int)l;
		}
	if (k && nvml.nvmlDeviceGetFieldValues(h, k, sp) == NVML_SUCCESS)
		for (int i = 0; i < k; i++)
			speeds[sp[i].scopeId] = sp[i].nvmlReturn == NVML_SUCCESS ? sp[i].value.uiVal : 0;
	return n;
}

/* Fills node with device h's active links (type_rc[k]: the remote-type
 * answer for node->links[k]); -1 with the reason. */
static int query_links(nvmlDevice_t h, const char *bus, struct dc_device *dev, int batch,
		       nvmlReturn_t type_rc[DC_MAX_LINKS], char *why)
{
	struct dc_node *node = &dev->node;
	int states[NVML_NVLINK_MAX_LINKS], switch_links = -1;
	unsigned int speeds[NVML_NVLINK_MAX_LINKS] = { 0 };
	int n = batch ? batch_states(h, states, speeds, &switch_links) : -1;
	int ask_speed = n < 0; /* link by link, as the states */
	if (n < 0) {
		for (n = 0; n < NVML_NVLINK_MAX_LINKS; n++) {
			nvmlEnableState_t active = NVML_FEATURE_DISABLED;
			nvmlReturn_t r = nvml.nvmlDeviceGetNvLinkState(h, (unsigned int)n, &active);
			if (r == NVML_ERROR_INVALID_ARGUMENT)
				break; /* past the device's last link */
			if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED) {
				call_failed(why, r, "nvmlDeviceGetNvLinkState(GPU %s, link %d)", bus, n);
				return -1;
			}
			states[n] = r != NVML_SUCCESS ? LINK_ABSENT
						      : active == NVML_FEATURE_ENABLED ? LINK_UP : LINK_DOWN;
		}
	}
	int up = 0, down = 0;
	dev->up = 0;
	for (int l = 0; l < n; l++) {
		up += states[l] == LINK_UP;
		if (states[l] == LINK_UP && l < 64)
			dev->up |= 1ULL << l;
		if (states[l] == LINK_UP && l < DC_MAX_LINKS)
			dev->speed[l] = ask_speed ? link_speed(h, (unsigned int)l) : speeds[l];
		if (states[l] == LINK_DOWN && down < DC_MAX_LINKS)
			dev->down[down++] = (unsigned char)l;
	}
	dev->ndown = down;
	dev->links_read = 1;
	/* Every link is up and NVML counts as many NVSwitch links: all of them
	 * go to switches, and asking each link's remote would only repeat it. */
	int all_switch = down == 0 && up > 0 && switch_links == up;
	for (int l = 0; l < n; l++) {
		if (states[l] != LINK_UP)
			continue;
		struct dc_link *link = &node->links[node->nlinks];
		memset(link, 0, sizeof(*link));
		type_rc[node->nlinks] = NVML_SUCCESS;
		if (all_switch)
			link->remote = DC_REMOTE_SWITCH;
		else if (remote_of(h, bus, (unsigned int)l, link, &type_rc[node->nlinks], why) != 0)
			return -1;
		node->nlinks++;
	}
	return 0;
}



/* Where the GPU sits (dmaconn_placement): the CPUs and memory nodes NVML
 * calls local (node scope), its memory's NUMA node, its C2C links. */
static void query_place(nvmlDevice_t h, struct dc_place_facts *p)
{
	p->cpus_rc = p->mems_rc = p->numa_id_rc = p->c2c_rc = p->c2c_status_rc = p->c2c_bw_rc = -1;
	if (nvml.nvmlDeviceGetCpuAffinityWithinScope)
		p->cpus_rc = nvml.nvmlDeviceGetCpuAffinityWithinScope(h, DC_PLACE_CPU_WORDS, p->cpus,
								      NVML_AFFINITY_SCOPE_NODE);
	if (nvml.nvmlDeviceGetMemoryAffinity)
		p->mems_rc = nvml.nvmlDeviceGetMemoryAffinity(h, DC_PLACE_NODE_WORDS, p->mems,
							      NVML_AFFINITY_SCOPE_NODE);
	if (nvml.nvmlDeviceGetNumaNodeId)
		p->numa_id_rc = nvml.nvmlDeviceGetNumaNodeId(h, &p->numa_id);
	if (!nvml.nvmlDeviceGetFieldValues)
		return;
	nvmlFieldValue_t fv[3];
	memset(fv, 0, sizeof(fv));
	fv[0].fieldId = NVML_FI_DEV_C2C_LINK_COUNT;
	fv[1].fieldId = NVML_FI_DEV_C2C_LINK_GET_STATUS;
	fv[2].fieldId = NVML_FI_DEV_C2C_LINK_GET_MAX_BW;
	if (nvml.nvmlDeviceGetFieldValues(h, 3, fv) != NVML_SUCCESS)
		return;
	int *rc[3] = { &p->c2c_rc, &p->c2c_status_rc, &p->c2c_bw_rc };
	unsigned int *val[3] = { &p->c2c_links, &p->c2c_status, &p->c2c_bw };
	for (int k = 0; k < 3; k++) {
		*rc[k] = fv[k].nvmlReturn;
		*val[k] = fv[k].nvmlReturn == NVML_SUCCESS ? fv[k].value.uiVal : 0;
	}
}

/* What bears on peer access over PCIe: BAR1 size and virtualization mode
 * (optional; a failing query leaves the fact unknown). */
static void query_host_facts(nvmlDevice_t h, struct dc_device *f)
{
	if (nvml.nvmlDeviceGetBAR1MemoryInfo) {
		nvmlBAR1Memory_t bar1;
		memset(&bar1, 0, sizeof(bar1));
		if (nvml.nvmlDeviceGetBAR1MemoryInfo(h, &bar1) == NVML_SUCCESS) {
			f->bar1_known = 1;
			f->bar1_total = bar1.bar1Total;
		}
	}
	if (nvml.nvmlDeviceGetVirtualizationMode) {
		nvmlGpuVirtualizationMode_t mode = NVML_GPU_VIRTUALIZATION_MODE_NONE;
		if (nvml.nvmlDeviceGetVirtualizationMode(h, &mode) == NVML_SUCCESS) {
			f->virt_known = 1;
			f->virt = (unsigned int)mode;
		}
	}
}

/*
 * The MIG instances of device h (NVML index `index`), in MIG mode: each a
 * CUDA device that CUDA_VISIBLE_DEVICES may name by its UUID, or by its
 * GPU's UUID and its GPU and compute instance ids.  A failing query ends
 * the listing (f->mig_rc says why); an instance whose parent NVML names
 * otherwise is left out.
 */
static void query_migs(struct dc_device *f, nvmlDevice_t h, int index)
{
	enum { MAX_MIGS = 64 }; /* 7 on today's GPUs */
	unsigned int max = 0;
	nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
	snprintf(f->mig_call, sizeof(f->mig_call), "nvmlDeviceGetMaxMigDeviceCount");
	if (nvml.nvmlDeviceGetMaxMigDeviceCount && nvml.nvmlDeviceGetMigDeviceHandleByIndex)
		r = nvml.nvmlDeviceGetMaxMigDeviceCount(h, &max);
	if (r != NVML_SUCCESS) {
		f->mig_rc = (int)r;
		return;
	}
	max = max > MAX_MIGS ? MAX_MIGS : max;
	if (!(f->migs = calloc(max + 1, sizeof(*f->migs)))) {
		f->mig_rc = NVML_ERROR_MEMORY;
		return;
	}
	for (unsigned int k = 0; k < max; k++) {
		nvmlDevice_t mh = NULL, parent = NULL;
		char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
		r = nvml.nvmlDeviceGetMigDeviceHandleByIndex(h, k, &mh);
		if (r == NVML_ERROR_NOT_FOUND)
			continue; /* no instance at this index */
		snprintf(f->mig_call, sizeof(f->mig_call), "nvmlDeviceGetMigDeviceHandleByIndex");
		if (r == NVML_SUCCESS) {
			snprintf(f->mig_call, sizeof(f->mig_call), "nvmlDeviceGetUUID");
			r = nvml.nvmlDeviceGetUUID(mh, uuid, sizeof(uuid));
		}
		if (r != NVML_SUCCESS) {
			f->mig_rc = (int)r;
			return;
		}
		if (nvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle &&
		    nvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(mh, &parent) == NVML_SUCCESS && parent != h)
			continue;
		struct dc_mig *mig = &f->migs[f->nmigs];
		dc_copy_text(mig->uuid, sizeof(mig->uuid), uuid, sizeof(uuid));
		if (strncmp(mig->uuid, "MIG-", 4) != 0)
			continue;
		unsigned int gi = 0, ci = 0;
		mig->parent = index;
		mig->gi = nvml.nvmlDeviceGetGpuInstanceId && nvml.nvmlDeviceGetGpuInstanceId(mh, &gi) == NVML_SUCCESS
				  ? (int)(gi & 0xffffff) : -1;
		mig->ci = nvml.nvmlDeviceGetComputeInstanceId &&
				  nvml.nvmlDeviceGetComputeInstanceId(mh, &ci) == NVML_SUCCESS
				  ? (int)(ci & 0xffffff) : -1;
		f->nmigs++;
	}
}

/* Links, fabric and MIG mode of NVML device `index` (its identity known);
 * type_rc[k]: the remote-type answer for its active link k. */
static void query_gpu(struct dc_model *m, int index, int batch, nvmlReturn_t type_rc[DC_MAX_LINKS])
{
	const struct dc_gpu *g = &m->ids[index];
	struct dc_device *f = &m->devices[index];
	nvmlDevice_t h = m->handles[index];
	char bus[DC_PCI_BUS_ID_SIZE];
	dc_pci_format(&g->pci, bus);
	f->node.has_pci = 1;
	f->node.pci = g->pci;
	if (nvml.nvmlDeviceGetMigMode) {
		unsigned int pending = 0;
		nvmlReturn_t r = nvml.nvmlDeviceGetMigMode(h, &f->mig, &pending);
		if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED) {
			call_failed(f->why, r, "nvmlDeviceGetMigMode(GPU %s)", bus);
			f->failed = 1;
			return;
		}
		f->mig_known = r == NVML_SUCCESS;
		if (f->mig_known && f->mig) {
			f->node.isolated = 1;
			query_migs(f, h, index);
			return;
		}
	}
	nvmlReturn_t fabric_rc = query_fabric(h, &f->fabric);
	f->fabric_rc = (int)fabric_rc;
	if (fabric_rc != NVML_SUCCESS && fabric_rc != NVML_ERROR_NOT_SUPPORTED) {
		call_failed(f->why, fabric_rc, "%s(GPU %s)",
			    nvml.nvmlDeviceGetGpuFabricInfoV ? "nvmlDeviceGetGpuFabricInfoV"
							     : "nvmlDeviceGetGpuFabricInfo", bus);
		f->failed = 1;
		return;
	}
	f->failed = query_links(h, bus, f, batch, type_rc, f->why) != 0;
}

/* --------------------------------------------------------------- views */

static const char *const fabric_states[] = { "not_supported", "not_started", "in_progress",
					     DMACONN_FABRIC_STATE_COMPLETED };

/* A view under way: its row, the model and the visible GPUs in CUDA's order. */
struct session {
	const struct dc_connection *row;
	const char *label; /* "cuda/nvlink" */
	struct dc_model *m;
	int nslots;
	struct dc_slot *slots;
	struct dc_mc_cause *cause; /* a domain rule's: each GPU's cause, for the reasons */
};

static void session_free(struct session *s)
{
	free(s->slots);
	free(s->cause);
}

static void fabric_properties(dmaconn_builder *b, int ordinal, const struct dc_fabric_facts *f)
{
	static const char *const summaries[] = { "not_supported", "healthy", "unhealthy", "limited_capacity" };
	char buf[64];
	if (!f->known)
		return;
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_FABRIC_STATE,
					    f->state < 4 ? fabric_states[f->state] : "unknown");
	/* 0: every field of the mask "not supported". */
	if (f->health_known && f->health_mask && f->state != DC_FABRIC_NOT_SUPPORTED) {
		snprintf(buf, sizeof(buf), "0x%x", f->health_mask);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_FABRIC_HEALTH_MASK, buf);
	}
	if (f->summary_known && f->health_summary != NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED &&
	    f->state != DC_FABRIC_NOT_SUPPORTED)
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_FABRIC_HEALTH_SUMMARY,
						    f->health_summary < 4 ? summaries[f->health_summary] : "unknown");
	if (f->state != DC_FABRIC_COMPLETED)
		return;
	const char *status = nvml_return_name((nvmlReturn_t)f->status);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_FABRIC_STATUS, status ? status : "unknown");
	dc_uuid_format(f->cluster, buf);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_CLUSTER_UUID, buf);
	snprintf(buf, sizeof(buf), "%u", f->clique);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_CLIQUE_ID, buf);
}

/* The GPU's NUMA node as discovery read it, where the kernel gives one. */
static void set_numa_node(dmaconn_builder *b, int ordinal, const struct dc_gpu *g)
{
	char buf[32];
	if (g->numa_node < 0)
		return;
	snprintf(buf, sizeof(buf), "%d", g->numa_node);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NUMA_NODE, buf);
}

/* The answers discovery keeps as they are, each an integer property. */
static void set_answers(dmaconn_builder *b, int ordinal, const struct dc_device *d)
{
	char buf[32];
	for (int k = 0; k < d->nanswers; k++) {
		snprintf(buf, sizeof(buf), "%lld", d->answers[k].value);
		dmaconn_builder_set_device_property(b, ordinal, d->answers[k].property, buf);
	}
}

static void set_identity(dmaconn_builder *b, const struct session *s, int ordinal)
{
	const struct dc_slot *slot = &s->slots[ordinal];
	if (slot->index >= 0) {
		const struct dc_gpu *g = &s->m->ids[slot->index];
		char bus[DC_PCI_BUS_ID_SIZE], num[32];
		dc_pci_format(&g->pci, bus);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NAME, g->name);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PCI_BUS_ID, bus);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_UUID, g->uuid);
		set_numa_node(b, ordinal, g);
		if (s->m->vendor_ok) {
			snprintf(num, sizeof(num), "%d", slot->index);
			dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NVML_INDEX, num);
		}
		if (s->m->vendor_ok)
			set_answers(b, ordinal, &s->m->devices[slot->index]);
		if (g->cc_major >= 0) {
			snprintf(num, sizeof(num), "%d.%d", g->cc_major, g->cc_minor);
			dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_COMPUTE_CAPABILITY, num);
		}
	} else {
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_UUID, slot->uuid);
		if (slot->index == DC_SLOT_MIG)
			dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_MIG, "instance");
		if (slot->index == DC_SLOT_MIG && slot->parent >= 0) {
			/* CUDA gives a MIG device its GPU's PCI address; the
			 * name is the GPU's (CUDA adds the MIG profile). */
			const struct dc_gpu *g = &s->m->ids[slot->parent];
			char bus[DC_PCI_BUS_ID_SIZE];
			dc_pci_format(&g->pci, bus);
			dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NAME, g->name);
			dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_PCI_BUS_ID, bus);
			dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_MIG_PARENT_UUID, g->uuid);
			set_numa_node(b, ordinal, g);
		}
	}
}

/* Every MIG instance the model lists, for CUDA_VISIBLE_DEVICES; *n of them
 * (NULL with *n 0 when none or out of memory). */
static struct dc_mig *mig_list(const struct dc_model *m, int *n)
{
	int total = 0;
	*n = 0;
	for (int i = 0; m->devices && i < m->n; i++)
		total += m->devices[i].nmigs;
	struct dc_mig *all = total ? calloc((size_t)total, sizeof(*all)) : NULL;
	for (int i = 0; all && i < m->n; i++)
		for (int k = 0; k < m->devices[i].nmigs; k++)
			all[(*n)++] = m->devices[i].migs[k];
	return all;
}

/* A GPU in MIG mode whose instances NVML could not list: a MIG entry that
 * names one of them ends the list, and that must be said. */
static void warn_mig_listing(dmaconn_builder *b, const struct session *s)
{
	const char *visible = dc_getenv("CUDA_VISIBLE_DEVICES");
	if (!visible || !strstr(visible, "MIG-") || !s->m->devices)
		return;
	for (int i = 0; i < s->m->n; i++) {
		const struct dc_device *f = &s->m->devices[i];
		if (!f->mig_known || !f->mig || f->mig_rc == NVML_SUCCESS)
			continue;
		char err[WHY_SIZE], bus[DC_PCI_BUS_ID_SIZE];
		dc_pci_format(&s->m->ids[i].pci, bus);
		if (f->mig_rc == NVML_ERROR_FUNCTION_NOT_FOUND)
			snprintf(err, sizeof(err), "NVML lacks the MIG device queries");
		else
			call_failed(err, (nvmlReturn_t)f->mig_rc, "%s(GPU %s)", f->mig_call, bus);
		dmaconn_builder_warn(b,
				     "%s: cannot list the MIG instances of GPU %s: %s; a CUDA_VISIBLE_DEVICES "
				     "entry naming one ends the list",
				     s->label, bus, err);
	}
}

/* Orders the model's GPUs into s->slots and sizes the result; -1 when out of memory. */
static int place(dmaconn_builder *b, struct session *s, int uuids_known, int warn_guess)
{
	int guessed = 0, nmigs = 0;
	struct dc_mig *migs = mig_list(s->m, &nmigs);
	s->nslots = dc_cuda_visible(s->m->ids, s->m->n, migs, nmigs, uuids_known, dc_getenv("CUDA_DEVICE_ORDER"),
				    dc_getenv("CUDA_VISIBLE_DEVICES"), &s->slots, &guessed);
	free(migs);
	if (uuids_known)
		warn_mig_listing(b, s);
	if (s->nslots < 0 || dmaconn_builder_set_size(b, s->nslots) != DMACONN_OK)
		return -1;
	for (int i = 0; i < s->nslots; i++)
		set_identity(b, s, i);
	if (guessed && warn_guess)
		dmaconn_builder_warn(b,
				     "%s: the GPUs differ and CUDA_DEVICE_ORDER is FASTEST_FIRST; ordinals assume "
				     "CUDA ranks higher compute capability first, then PCI bus id (set "
				     "CUDA_DEVICE_ORDER=PCI_BUS_ID for an order that is certain)",
				     s->label);
	return 0;
}

/*
 * Places the visible GPUs of the session's model.  Returns 1 when the view
 * can go on, 0 when NVML is unusable (one warning raised, the result sized
 * from sysfs, all zero), or a negative dmaconn error.
 */
static int session_begin(dmaconn_builder *b, struct session *s)
{
	if (s->m->vendor_ok)
		return place(b, s, 1, 1) == 0 ? 1 : dc_fail(DMACONN_ENOMEM, "out of memory");
	if (place(b, s, 0, 0) != 0)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	dc_builder_unavailable(b);
	dmaconn_builder_warn(b, "%s: %s; assuming no DMA connectivity (%d device%s counted without NVML)",
			     s->label, s->m->why, s->nslots, s->nslots == 1 ? "" : "s");
	if (s->m->found > s->m->n)
		dmaconn_builder_warn(b, "%s: found %d NVIDIA PCI devices, more than dmaconn accepts; counting the "
				     "first %d by bus id", s->label, s->m->found, s->m->n);
	return 0;
}

/* NVML's speed of each active link that has one, as runs of links at one
 * speed: "0-17:26562", "0-4:53125,5:26562,6-17:53125". */
static void set_link_speeds(dmaconn_builder *b, int ordinal, const struct dc_device *f)
{
	char list[DC_MAX_LINKS * 20];
	size_t o = 0;
	for (int l = 0; l < DC_MAX_LINKS && o + 24 < sizeof(list);) {
		int run = l;
		if (!f->speed[l]) {
			l++;
			continue;
		}
		while (run + 1 < DC_MAX_LINKS && f->speed[run + 1] == f->speed[l])
			run++;
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%d", o ? "," : "", l);
		if (run > l)
			o += (size_t)snprintf(list + o, sizeof(list) - o, "-%d", run);
		o += (size_t)snprintf(list + o, sizeof(list) - o, ":%u", f->speed[l]);
		l = run + 1;
	}
	if (o)
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NVLINK_SPEEDS_MBPS, list);
}

/* The apply phase: properties and warnings of GPU `ordinal`, in order. */
static void apply_gpu(dmaconn_builder *b, const struct session *s, int ordinal, const struct dc_device *f)
{
	const struct dc_slot *slot = &s->slots[ordinal];
	char bus[DC_PCI_BUS_ID_SIZE], num[16];
	if (slot->index < 0) {
		dmaconn_builder_warn(b,
				     "%s: device %d is MIG instance %s (CUDA_VISIBLE_DEVICES); MIG instances "
				     "have no peer DMA, so its row and column are 0",
				     s->label, ordinal, slot->uuid);
		return;
	}
	dc_pci_format(&s->m->ids[slot->index].pci, bus);
	if (f->mig_known)
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_MIG, f->mig ? "enabled" : "disabled");
	if (f->mig_known && f->mig) {
		dmaconn_builder_warn(b,
				     "%s: GPU %d (%s) is in MIG mode; MIG instances have no peer DMA, so its "
				     "row and column are 0",
				     s->label, ordinal, bus);
		return;
	}
	if (f->failed)
		return;
	if (f->untyped) {
		char err[WHY_SIZE];
		if (nvml.nvmlDeviceGetNvLinkRemoteDeviceType)
			call_failed(err, (nvmlReturn_t)f->untyped_rc, "nvmlDeviceGetNvLinkRemoteDeviceType");
		else
			snprintf(err, sizeof(err), "NVML lacks nvmlDeviceGetNvLinkRemoteDeviceType");
		dmaconn_builder_warn(b,
				     "%s: GPU %d (%s): %d active NVLink%s lead%s to no GPU and %s, so whether "
				     "%s an NVSwitch is unknown; not counting %s",
				     s->label, ordinal, bus, f->untyped, f->untyped == 1 ? "" : "s",
				     f->untyped == 1 ? "s" : "", err, f->untyped == 1 ? "it reaches" : "they reach",
				     f->untyped == 1 ? "it" : "them");
	}
	fabric_properties(b, ordinal, &f->fabric);
	const struct dc_node *node = &f->node;
	int sw = dc_switch_links(node);
	snprintf(num, sizeof(num), "%d", node->nlinks);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NVLINK_ACTIVE_LINKS, num);
	snprintf(num, sizeof(num), "%d", sw);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NVLINK_SWITCH_LINKS, num);
	if (f->links_read && f->ndown > 0) {
		char list[DC_MAX_LINKS * 4];
		size_t o = 0;
		for (int k = 0; k < f->ndown && o + 5 < sizeof(list); k++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%u", k ? "," : "", f->down[k]);
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_NVLINK_INACTIVE_LINKS, list);
	}
	set_link_speeds(b, ordinal, f);

	const struct dc_fabric_facts *fb = &f->fabric;
	if (!fb->known || fb->state == DC_FABRIC_NOT_SUPPORTED || node->switch_usable || sw == 0)
		return;
	char detail[300];
	if (fb->state == DC_FABRIC_COMPLETED) {
		char err[256];
		describe((nvmlReturn_t)fb->status, err, sizeof(err));
		snprintf(detail, sizeof(detail), "failed: %s", err);
	} else {
		snprintf(detail, sizeof(detail), "is %s", fb->state < 4 ? fabric_states[fb->state] : "in an unknown state");
	}
	dmaconn_builder_warn(b,
			     "%s: GPU %d (%s): NVSwitch fabric registration %s (is the fabric manager "
			     "running?); counting none of its %d NVSwitch links",
			     s->label, ordinal, bus, detail, sw);
}

/* Collects every visible GPU's link facts into nodes and computes the
 * NVLink matrix into m; -1 with the reason (warning raised by the caller). */
static int collect(dmaconn_builder *b, const struct session *s, struct dc_node *nodes, int *m,
		   char *why)
{
	struct dc_device mig_instance;
	int failed = -1;
	for (int i = 0; i < s->nslots; i++) {
		const struct dc_device *f = &mig_instance;
		if (s->slots[i].index >= 0) {
			f = &s->m->devices[s->slots[i].index];
		} else {
			memset(&mig_instance, 0, sizeof(mig_instance));
			mig_instance.node.isolated = 1;
		}
		apply_gpu(b, s, i, f);
		nodes[i] = f->node;
		if (f->failed && failed < 0)
			failed = s->slots[i].index;
	}
	if (failed >= 0)
		snprintf(why, WHY_SIZE, "%s", s->m->devices[failed].why);
	else
		dc_link_matrix(nodes, s->nslots, s->row->links, m);
	return failed >= 0 ? -1 : 0;
}

/* The host's reasons for what a view found, told which links of each GPU
 * are active (a link NVML does not support is neither active nor down). */
static int view_reasons(dmaconn_builder *b, const struct session *s)
{
	unsigned long long *up = calloc((size_t)s->nslots + 1, sizeof(*up));
	if (!up)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	for (int i = 0; i < s->nslots; i++)
		if (s->slots[i].index >= 0 && s->m->devices[s->slots[i].index].links_read)
			up[i] = s->m->devices[s->slots[i].index].up;
	dc_reasons_of(b, s->row, up, s->cause);
	free(up);
	return DMACONN_OK;
}

typedef int view_body(dmaconn_builder *b, struct session *s, struct dc_node *nodes, int *m);
static view_body links_body, p2p_body, multicast_body;

/*
 * The view of row computed from the model alone: the body of what the
 * row counts, over an open session with its scratch arrays, then the row's
 * reasons for what it found.  The detector passes the discovered model;
 * tests pass one they filled.
 */
int dc_nvml_view_of_model(dmaconn_builder *b, struct dc_model *model, const struct dc_connection *row);
int dc_nvml_view_of_model(dmaconn_builder *b, struct dc_model *model, const struct dc_connection *row)
{
	static view_body *const bodies[] = {
		[DC_COUNTS_LINKS] = links_body, [DC_COUNTS_PEER] = p2p_body, [DC_COUNTS_DOMAIN] = multicast_body
	};
	if (!row || (size_t)row->counts >= sizeof(bodies) / sizeof(bodies[0]) || !bodies[row->counts])
		return dc_fail(DMACONN_EINVAL, "NVML has no view of this connection type");
	struct session s = { .row = row, .label = row->label, .m = model };
	int rc = session_begin(b, &s);
	if (rc <= 0) {
		session_free(&s);
		if (rc == 0)
			dc_reasons_of(b, row, NULL, NULL);
		return rc < 0 ? rc : DMACONN_OK;
	}
	struct dc_node *nodes = calloc((size_t)s.nslots + 1, sizeof(*nodes));
	int *m = calloc(dc_pair_index(s.nslots, 0, s.nslots) + 1, sizeof(int));
	rc = nodes && m ? bodies[row->counts](b, &s, nodes, m) : dc_fail(DMACONN_ENOMEM, "out of memory");
	if (rc == DMACONN_OK)
		rc = view_reasons(b, &s);
	free(nodes);
	free(m);
	session_free(&s);
	return rc;
}

DC_MODEL_DETECTOR(dc_nvml, model_get, dc_nvml_view_of_model)

/* A link filter: the links of the row's kinds, each pair's count. */
static int links_body(dmaconn_builder *b, struct session *s, struct dc_node *nodes, int *m)
{
	char why[WHY_SIZE];
	int n = s->nslots;
	if (collect(b, s, nodes, m, why) != 0) {
		dmaconn_builder_warn(b, "%s: %s; assuming no NVLink connectivity", s->label, why);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	int *sw = malloc(((size_t)n + 1) * sizeof(*sw));
	if (!sw)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		sw[i] = dc_switch_links(&nodes[i]);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			int v = i != j ? m[dc_pair_index(i, j, n)] : 0;
			if (v <= 0)
				continue;
			dmaconn_builder_set(b, i, j, v);
			/* What the switches do not carry joins the two directly:
			 * said where any link does, so that a drawing can tell. */
			long direct = v;
			if (s->row->links & DC_LINKS_TO(DC_REMOTE_SWITCH))
				direct -= dc_switch_between(&nodes[i], sw[i], &nodes[j], sw[j]);
			if (direct > 0) {
				char num[24];
				snprintf(num, sizeof(num), "%ld", direct);
				dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_NVLINK_DIRECT_LINKS, num);
			}
		}
	}
	free(sw);
	return DMACONN_OK;
}

/* ------------------------------------------------------------------ p2p */

/* nvidia-smi's legend (enum dc_peer_status). */
static const char *p2p_name(int st)
{
	static const char *const names[] = { "OK", "CNS", "GNS", "TNS", "DR", "NS", "U" };
	return st >= 0 && st < 7 ? names[st] : "U";
}

/* The model's PCIe path class of an NVML common ancestor. */
static unsigned char path_of(nvmlGpuTopologyLevel_t level)
{
	switch (level) {
	case NVML_TOPOLOGY_INTERNAL:
	case NVML_TOPOLOGY_SINGLE:
		return DC_PATH_PIX;
	case NVML_TOPOLOGY_MULTIPLE:
		return DC_PATH_PXB;
	case NVML_TOPOLOGY_HOSTBRIDGE:
		return DC_PATH_PHB;
	case NVML_TOPOLOGY_NODE:
		return DC_PATH_NODE;
	case NVML_TOPOLOGY_SYSTEM:
		return DC_PATH_SYS;
	}
	return DC_PATH_UNKNOWN;
}

/* `nvidia-smi topo -m`'s name for a path class. */
static const char *path_name(unsigned char path)
{
	static const char *const names[] = { "?", "PIX", "PXB", "PHB", "NODE", "SYS" };
	return path < sizeof(names) / sizeof(names[0]) ? names[path] : "?";
}

/*
 * GB/s per direction of one NVLink of device h: NVML's per-link speed field
 * where the driver reports it, else the NVLink generation's signalling rate.
 */
static double link_rate(nvmlDevice_t h, const char **source)
{
	for (unsigned int l = 0; nvml.nvmlDeviceGetFieldValues && l < NVML_NVLINK_MAX_LINKS; l++) {
		nvmlFieldValue_t fv;
		memset(&fv, 0, sizeof(fv));
		fv.fieldId = NVML_FI_DEV_NVLINK_GET_SPEED;
		fv.scopeId = l;
		if (nvml.nvmlDeviceGetFieldValues(h, 1, &fv) != NVML_SUCCESS || fv.nvmlReturn != NVML_SUCCESS)
			break;
		if (fv.value.uiVal > 0) {
			*source = "nvml_speed_field";
			return fv.value.uiVal / 1000.0;
		}
	}
	/* Per-direction GB/s per link of each NVLink generation; NVLink 6
	 * doubles the links (36), not the rate of one (3.6 TB/s per GPU both ways). */
	static const double per_version[] = {
		[NVML_NVLINK_VERSION_1_0] = 20, [NVML_NVLINK_VERSION_2_0] = 25, [NVML_NVLINK_VERSION_2_2] = 25,
		[NVML_NVLINK_VERSION_3_0] = 25, [NVML_NVLINK_VERSION_3_1] = 25, [NVML_NVLINK_VERSION_4_0] = 25,
		[NVML_NVLINK_VERSION_5_0] = 50, [NVML_NVLINK_VERSION_6_0] = 50,
	};
	for (unsigned int l = 0; nvml.nvmlDeviceGetNvLinkVersion && l < NVML_NVLINK_MAX_LINKS; l++) {
		unsigned int v = 0;
		nvmlReturn_t r = nvml.nvmlDeviceGetNvLinkVersion(h, l, &v);
		if (r == NVML_ERROR_INVALID_ARGUMENT)
			break;
		if (r == NVML_SUCCESS && v > 0 && v < sizeof(per_version) / sizeof(per_version[0])) {
			*source = "nvlink_version";
			return per_version[v];
		}
	}
	*source = "unknown";
	return 0;
}

static const struct {
	nvmlGpuP2PCapsIndex_t index;
	const char *key;
} p2p_caps[] = { { NVML_P2P_CAPS_INDEX_READ, DMACONN_PROP_READ },
		 { NVML_P2P_CAPS_INDEX_WRITE, DMACONN_PROP_WRITE },
		 { NVML_P2P_CAPS_INDEX_ATOMICS, DMACONN_PROP_ATOMICS },
		 { NVML_P2P_CAPS_INDEX_NVLINK, DMACONN_PROP_NVLINK } };

/*
 * The pair stage (discovery's, asked by the views that need it, through
 * dc_model_stage_devices under peer_lock, for the devices they show):
 * every P2P status between those devices that have peers (neither failed
 * nor isolated), each one's per-link NVLink rate and PCIe facts, the
 * confidential computing state, and the PCIe path of each pair that NVLink
 * does not join both ways.  What was asked is kept (asked, path_asked,
 * rate_known): a device the process does not see costs nothing.
 */
struct pair_job {
	struct dc_model *m;
	const unsigned char *want; /* n flags: the devices asked for */
	size_t *path_pairs;        /* pair index (a < b) of the pairs whose PCIe path is asked */
	int npath_pairs;
};

static int has_peers(const struct dc_model *m, int k)
{
	return !m->devices[k].failed && !m->devices[k].node.isolated;
}

/* Row a: every P2P status from device a not asked yet, and its per-link
 * NVLink rate. */
static void ask_pair_row(void *ctx, int a)
{
	const struct pair_job *job = ctx;
	struct dc_model *m = job->m;
	if (!job->want[a] || !has_peers(m, a))
		return;
	struct dc_device *d = &m->devices[a];
	nvmlDevice_t ha = m->handles[a];
	if (!d->rate_known) {
		d->rate_source = "unknown";
		d->link_gbps = d->node.nlinks ? link_rate(ha, &d->rate_source) : 0;
		query_host_facts(ha, d);
		d->rate_known = 1;
	}
	for (int b = 0; b < m->n; b++) {
		struct dc_peer *p = &m->peers[dc_pair_index(a, b, m->n)];
		if (a == b || !job->want[b] || !has_peers(m, b) || p->asked)
			continue;
		nvmlReturn_t rc = NVML_SUCCESS;
		for (int c = 0; c < DC_PEER_CAPS && rc == NVML_SUCCESS; c++) {
			nvmlGpuP2PStatus_t st = NVML_P2P_STATUS_OK; /* what an answer leaves unset reads as */
			rc = nvml.nvmlDeviceGetP2PStatus(ha, m->handles[b], p2p_caps[c].index, &st);
			p->status[c] = st >= 0 && st < 7 ? (unsigned char)st : DC_PEER_U;
			if (rc != NVML_SUCCESS)
				p->failed_cap = (unsigned char)c;
		}
		p->rc = (int)rc;
		p->asked = 1;
	}
}

/* The PCIe path of the k-th unordered pair that needs one, asked from the
 * lower index, kept on both sides.  Spread over threads by pair rather
 * than by row: each call can take NVML ~17 ms. */
static void ask_pair_path(void *ctx, int k)
{
	const struct pair_job *job = ctx;
	struct dc_model *m = job->m;
	int n = m->n, a = (int)(job->path_pairs[k] / (size_t)n), b = (int)(job->path_pairs[k] % (size_t)n);
	struct dc_peer *p = &m->peers[dc_pair_index(a, b, n)], *q = &m->peers[dc_pair_index(b, a, n)];
	nvmlGpuTopologyLevel_t level = NVML_TOPOLOGY_SYSTEM;
	nvmlReturn_t rc = nvml.nvmlDeviceGetTopologyCommonAncestor(m->handles[a], m->handles[b], &level);
	p->path_rc = q->path_rc = (int)rc;
	p->path = q->path = rc == NVML_SUCCESS ? path_of(level) : DC_PATH_UNKNOWN;
	p->path_asked = q->path_asked = 1;
}

/* The confidential computing state, asked once (peer_lock held) by the
 * first stage that needs it: asked again after a failure, it could be
 * written while a view that staged before reads it. */
static void ask_cc(struct dc_model *model)
{
	if (model->cc_asked)
		return;
	model->cc_asked = 1;
	if (nvml.nvmlSystemGetConfComputeState) {
		nvmlConfComputeSystemState_t cc;
		memset(&cc, 0, sizeof(cc));
		if (nvml.nvmlSystemGetConfComputeState(&cc) == NVML_SUCCESS) {
			model->cc_known = 1;
			model->cc_on = cc.ccFeature == NVML_CC_SYSTEM_FEATURE_ENABLED;
			model->cc_feature = cc.ccFeature;
		}
	}
}

/* The pairs NVLink joins (any kind of link) into links, n*n. */
static int nvlinked(const struct dc_model *m, int *links)
{
	int n = m->n;
	struct dc_node *nodes = calloc((size_t)n + 1, sizeof(*nodes));
	if (!nodes)
		return -1;
	for (int k = 0; k < n; k++) {
		nodes[k] = m->devices[k].node;
		nodes[k].isolated = !has_peers(m, k);
	}
	dc_link_matrix(nodes, n, DC_LINKS_TO(DC_REMOTE_GPU) | DC_LINKS_TO(DC_REMOTE_SWITCH), links);
	free(nodes);
	return 0;
}

static void ask_pairs(struct dc_model *m, struct dc_stage *st, const unsigned char *want)
{
	int n = m->n;
	struct pair_job job = { m, want, NULL, 0 };
	int *links = NULL;
	if (st->lacks)
		return;
	if ((!m->peers && !(m->peers = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*m->peers)))) ||
	    !(job.path_pairs = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*job.path_pairs))) ||
	    !(links = calloc(dc_pair_index(n, 0, n) + 1, sizeof(*links))) || nvlinked(m, links) != 0) {
		st->nomem = 1;
		goto out;
	}
	ask_cc(m);
	parallel_for(n, ask_pair_row, &job);
	for (int a = 0; nvml.nvmlDeviceGetTopologyCommonAncestor && a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (want[a] && want[b] && has_peers(m, a) && has_peers(m, b) &&
			    !m->peers[dc_pair_index(a, b, n)].path_asked &&
			    (links[dc_pair_index(a, b, n)] == 0 || links[dc_pair_index(b, a, n)] == 0))
				job.path_pairs[job.npath_pairs++] = dc_pair_index(a, b, n);
	parallel_for(job.npath_pairs, ask_pair_path, &job);
out:
	free(links);
	free(job.path_pairs);
}

/* The views read the model only: the stages above are asked through
 * dc_model_stage, never by a view itself. */

/* The model's facts about ordinals i -> j. */
static const struct dc_peer *peer_of(const struct session *s, int i, int j)
{
	return &s->m->peers[dc_pair_index(s->slots[i].index, s->slots[j].index, s->m->n)];
}

struct p2p_job {
	const struct session *s;
	const int *m;
};

/*
 * The texts a p2p view sets on its pairs, each stored once in the result
 * (dc_builder_intern) and formatted once per value: a rack has n*n pairs
 * and a handful of distinct facts.
 */
struct p2p_text {
	dmaconn_builder *b;
	const char *key_caps[DC_PEER_CAPS], *key_path, *key_links, *key_gbps, *key_source;
	const char *status[7], *paths[6], *question;
	const char *nv[DC_MAX_LINKS + 1], *num[DC_MAX_LINKS + 1]; /* "NV#", "#" */
	int gbps_links;
	double gbps_rate;
	const char *gbps, *source_from, *source;
};

static const char *p2p_intern_int(struct p2p_text *t, const char **cache, const char *fmt, int v)
{
	char buf[32];
	if (v >= 0 && v <= DC_MAX_LINKS && cache[v])
		return cache[v];
	if (!strcmp(fmt, "NV"))
		snprintf(buf, sizeof(buf), "NV%d", v);
	else
		snprintf(buf, sizeof(buf), "%d", v);
	const char *x = dc_builder_intern(t->b, buf);
	if (v >= 0 && v <= DC_MAX_LINKS)
		cache[v] = x;
	return x;
}

static int p2p_text_init(struct p2p_text *t, dmaconn_builder *b)
{
	memset(t, 0, sizeof(*t));
	t->b = b;
	int ok = 1;
	for (int c = 0; c < DC_PEER_CAPS; c++)
		ok = ok && (t->key_caps[c] = dc_builder_intern(b, p2p_caps[c].key));
	for (int k = 0; k < 7; k++)
		ok = ok && (t->status[k] = dc_builder_intern(b, p2p_name(k)));
	for (int k = 0; k < 6; k++)
		ok = ok && (t->paths[k] = dc_builder_intern(b, path_name((unsigned char)k)));
	ok = ok && (t->question = dc_builder_intern(b, "?"));
	ok = ok && (t->key_path = dc_builder_intern(b, DMACONN_PROP_PATH));
	ok = ok && (t->key_links = dc_builder_intern(b, DMACONN_PROP_NVLINK_LINKS));
	ok = ok && (t->key_gbps = dc_builder_intern(b, DMACONN_PROP_NVLINK_GBPS));
	ok = ok && (t->key_source = dc_builder_intern(b, DMACONN_PROP_NVLINK_RATE_SOURCE));
	return ok ? 0 : -1;
}

/* Properties, matrix value and warnings of the pair i -> j (serially, in
 * order); -1 when out of memory. */
static int p2p_apply(struct p2p_text *t, const struct p2p_job *job, int i, int j, int *ancestor_warned)
{
	dmaconn_builder *b = t->b;
	const struct session *s = job->s;
	int n = s->nslots, links = job->m[dc_pair_index(i, j, n)];
	const struct dc_peer *p = peer_of(s, i, j);
	const struct dc_device *d = &s->m->devices[s->slots[i].index];
	const char *keys[DC_PEER_CAPS + 4], *values[DC_PEER_CAPS + 4];
	int count = 0;
	for (int c = 0; c < DC_PEER_CAPS; c++) {
		keys[count] = t->key_caps[c];
		values[count++] = t->status[p->status[c] < 7 ? p->status[c] : DC_PEER_U];
	}
	const char *path = t->question;
	/* Read only without NVLink: the pairs the stage asked. */
	int path_rc = links == 0 && p->path_asked ? p->path_rc : NVML_ERROR_NOT_SUPPORTED;
	if (links > 0) {
		path = p2p_intern_int(t, t->nv, "NV", links);
	} else if (path_rc == NVML_SUCCESS) {
		path = t->paths[p->path < 6 ? p->path : 0];
	} else if (path_rc != NVML_ERROR_NOT_SUPPORTED && !*ancestor_warned) {
		char err[WHY_SIZE];
		call_failed(err, (nvmlReturn_t)path_rc, "nvmlDeviceGetTopologyCommonAncestor(GPU %d, GPU %d)",
			    i < j ? i : j, i < j ? j : i);
		dmaconn_builder_warn(b, "%s: %s; PCIe path classes are unknown", s->label, err);
		*ancestor_warned = 1;
	}
	keys[count] = t->key_path;
	values[count++] = path;
	if (links > 0) {
		keys[count] = t->key_links;
		values[count++] = p2p_intern_int(t, t->num, "", links);
		if (d->link_gbps > 0) {
			if (!t->gbps || t->gbps_links != links || t->gbps_rate != d->link_gbps) {
				char buf[64];
				snprintf(buf, sizeof(buf), "%.1f", links * d->link_gbps);
				t->gbps = dc_builder_intern(b, buf);
				t->gbps_links = links;
				t->gbps_rate = d->link_gbps;
			}
			keys[count] = t->key_gbps;
			values[count++] = t->gbps;
		}
		if (!t->source || t->source_from != d->rate_source) {
			t->source = dc_builder_intern(b, d->rate_source);
			t->source_from = d->rate_source;
		}
		keys[count] = t->key_source;
		values[count++] = t->source;
	}
	for (int e = 0; e < count; e++)
		if (!values[e])
			return -1;
	if (dc_builder_set_pair_list(b, i, j, keys, values, count) != DMACONN_OK)
		return -1;
	const unsigned char *st = p->status;
	int ok = dc_peer_ok(s->row->peer, st);
	dmaconn_builder_set(b, i, j, ok);
	if ((links > 0 && !ok) || (links == 0 && st[DC_PEER_NVLINK] == DC_PEER_OK)) {
		char bus[DC_PCI_BUS_ID_SIZE];
		dc_pci_format(&s->m->ids[s->slots[i].index].pci, bus);
		if (links > 0)
			dmaconn_builder_warn(b,
					     "%s: GPU %d (%s) -> GPU %d: %d NVLinks are active but NVML reports peer "
					     "read %s, write %s, atomics %s (P2P disabled by the driver or a VM?)",
					     s->label, i, bus, j, links, p2p_name(st[0]), p2p_name(st[1]),
					     p2p_name(st[2]));
		else
			dmaconn_builder_warn(b, "%s: GPU %d (%s) -> GPU %d: NVML reports NVLink P2P OK but no "
					     "active NVLink joins them", s->label, i, bus, j);
	}
	return 0;
}

/* The device facts that bear on peer access over PCIe, as read. */
static void p2p_device_facts(dmaconn_builder *b, const struct session *s, int i)
{
	static const char *const modes[] = { "none", "passthrough", "vgpu", "host_vgpu", "host_vsga" };
	const struct dc_device *d = &s->m->devices[s->slots[i].index];
	char buf[32];
	if (d->bar1_known) {
		snprintf(buf, sizeof(buf), "%llu", d->bar1_total >> 20);
		dmaconn_builder_set_device_property(b, i, DMACONN_PROP_BAR1_MIB, buf);
	}
	if (d->virt_known)
		dmaconn_builder_set_device_property(b, i, DMACONN_PROP_VIRTUALIZATION_MODE,
						    d->virt < 5 ? modes[d->virt] : "unknown");
	if (s->m->cc_known)
		dmaconn_builder_set_device_property(b, i, DMACONN_PROP_CONFIDENTIAL_COMPUTING,
						    s->m->cc_on ? "on" : "off");
}

/* A peer rule: the row's capabilities from NVML's per-pair statuses. */
static int p2p_body(dmaconn_builder *b, struct session *s, struct dc_node *nodes, int *m)
{
	char why[WHY_SIZE];
	int n = s->nslots, ancestor_warned = 0;
	if (s->m->peer_stage.lacks) {
		dmaconn_builder_warn(b, "%s: NVML lacks %s; assuming no peer access", s->label,
				     s->m->peer_stage.lacks);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	if (collect(b, s, nodes, m, why) != 0) {
		dmaconn_builder_warn(b, "%s: %s; assuming no peer access", s->label, why);
		dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
		return DMACONN_OK;
	}
	unsigned char *want = calloc((size_t)s->m->n + 1, 1);
	for (int i = 0; want && i < n; i++)
		if (s->slots[i].index >= 0)
			want[s->slots[i].index] = 1;
	int staged = want ? dc_model_stage_devices(s->m, &s->m->peer_stage, &peer_lock, ask_pairs, want) : -2;
	free(want);
	if (staged != 0)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	/* Any failing status call voids them all: no pair shows half an answer. */
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j || nodes[i].isolated || nodes[j].isolated)
				continue;
			const struct dc_peer *p = peer_of(s, i, j);
			if (p->rc != NVML_SUCCESS) {
				call_failed(why, (nvmlReturn_t)p->rc, "nvmlDeviceGetP2PStatus(GPU %d -> GPU %d, %s)", i, j,
					    p2p_caps[p->failed_cap].key);
				dmaconn_builder_warn(b, "%s: %s; assuming no peer access", s->label, why);
				dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
				return DMACONN_OK;
			}
		}
	}
	struct p2p_text text;
	struct p2p_job job = { s, m };
	if (p2p_text_init(&text, b) != 0)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		if (!nodes[i].isolated)
			p2p_device_facts(b, s, i);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && !nodes[i].isolated && !nodes[j].isolated &&
			    p2p_apply(&text, &job, i, j, &ancestor_warned) != 0)
				return dc_fail(DMACONN_ENOMEM, "out of memory");
	return DMACONN_OK;
}

/* ------------------------------------------------------------ multicast */

/* The first driver branch with CUDA's multicast objects (CUDA 12.1). */
#define MC_DRIVER_BRANCH 530

/*
 * The driver stage (discovery's, asked on the multicast view's first need,
 * through dc_model_stage under peer_lock): the confidential computing
 * state, the version nvmlSystemGetDriverVersion reports (read from the
 * kernel driver; unlike nvmlSystemGetCudaDriverVersion, it loads no
 * libcuda), and whether the library has nvmlDeviceGetGpuFabricInfoV (R550 on).
 */
static void ask_driver(struct dc_model *model, struct dc_stage *st)
{
	(void)st;
	ask_cc(model);
	model->driver_rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (nvml.nvmlSystemGetDriverVersion)
		model->driver_rc = (int)nvml.nvmlSystemGetDriverVersion(model->driver, sizeof(model->driver));
	model->driver[sizeof(model->driver) - 1] = '\0';
	model->driver_fabric_v = nvml.nvmlDeviceGetGpuFabricInfoV != NULL;
}

/* Whether the driver has the multicast API, from the driver stage: its
 * version, else the library's newer fabric query. */
static int mc_driver(const struct dc_model *model, char *text, size_t len)
{
	if (model->driver_rc == NVML_SUCCESS) {
		char *end;
		long branch = strtol(model->driver, &end, 10);
		if (end != model->driver && branch >= MC_DRIVER_BRANCH)
			return 1;
		snprintf(text, len, "driver %.40s predates R%d (CUDA 12.1), the first with multicast objects",
			 model->driver, MC_DRIVER_BRANCH);
		return 0;
	}
	if (model->driver_fabric_v)
		return 1;
	char err[256];
	describe((nvmlReturn_t)model->driver_rc, err, sizeof(err));
	snprintf(text, len, "the driver version is unknown (nvmlSystemGetDriverVersion: %s), so whether it has "
		 "multicast objects (R%d on) is too", err, MC_DRIVER_BRANCH);
	return 0;
}

/* The v4 and multicast facts of a device's fabric registration. */
static void mc_fabric_properties(dmaconn_builder *b, int ordinal, const struct dc_fabric_facts *f)
{
	char buf[DC_FABRIC_CLIQUES * 40];
	if (!f->known)
		return;
	snprintf(buf, sizeof(buf), "v%d", f->version);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_FABRIC_INFO_VERSION, buf);
	if (f->version == 4) {
		size_t o = 0;
		buf[0] = '\0';
		for (int c = 0; c < f->ncliques && o < sizeof(buf); c++) {
			const char *type = dc_clique_type_name(f->cliques[c].type);
			if (type)
				o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s:%u", o ? "," : "", type,
						      f->cliques[c].id);
			else
				o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%u:%u", o ? "," : "",
						      f->cliques[c].type, f->cliques[c].id);
		}
		dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_FABRIC_CLIQUES, buf);
	}
	if (f->state != DC_FABRIC_COMPLETED)
		return;
	snprintf(buf, sizeof(buf), "%u", f->mc_clique);
	dmaconn_builder_set_device_property(b, ordinal, DMACONN_PROP_MULTICAST_CLIQUE_ID, buf);
}

/* GPU i's multicast capability, its properties and its cause (NULL: capable). */
static const char *mc_device(dmaconn_builder *b, const struct session *s, int i, int driver, const char *driver_text,
			     char *text, size_t len)
{
	const struct dc_slot *slot = &s->slots[i];
	struct dc_mc_facts facts;
	memset(&facts, 0, sizeof(facts));
	facts.mig = 1;
	facts.cc_major = facts.cc_minor = -1;
	if (slot->index >= 0) {
		const struct dc_device *f = &s->m->devices[slot->index];
		const struct dc_gpu *g = &s->m->ids[slot->index];
		char num[16];
		facts.mig = f->mig_known && f->mig;
		facts.cc_major = g->cc_major;
		facts.cc_minor = g->cc_minor;
		facts.driver = driver;
		facts.driver_text = driver_text;
		/* Any mode but disabled: none documents multicast across GPUs. */
		facts.cc_on = s->m->cc_known && s->m->cc_feature != NVML_CC_SYSTEM_FEATURE_DISABLED;
		facts.cc_feature = s->m->cc_feature;
		facts.switch_links = dc_switch_links(&f->node);
		facts.fabric = (struct dc_mc_fabric){ f->fabric.known, f->fabric.state, f->fabric.status,
						      f->fabric.health_known, f->fabric.health_mask };
		facts.status = nvml_return_name((nvmlReturn_t)f->fabric.status);
		if (f->mig_known)
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_MIG, f->mig ? "enabled" : "disabled");
		if (!facts.mig) {
			fabric_properties(b, i, &f->fabric);
			mc_fabric_properties(b, i, &f->fabric);
			snprintf(num, sizeof(num), "%d", facts.switch_links);
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_NVLINK_SWITCH_LINKS, num);
		}
		if (s->m->cc_known)
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_CONFIDENTIAL_COMPUTING,
							    s->m->cc_on ? "on" : "off");
	}
	const char *code = dc_multicast_cause(&facts, i, text, len);
	dmaconn_builder_set_device_property(b, i, DMACONN_PROP_MULTICAST_SUPPORTED, code ? "0" : "1");
	if (code)
		dmaconn_builder_set_device_property(b, i, DMACONN_PROP_MULTICAST_REASON, code);
	return code;
}

/* The fabric of a capable GPU (a GPU of the model: MIG instances are not). */
static const struct dc_fabric_facts *mc_fabric(const struct session *s, int i)
{
	return &s->m->devices[s->slots[i].index].fabric;
}

/* A domain rule: pairs of capable GPUs in one cluster and multicast clique, 1. */
static int multicast_body(dmaconn_builder *b, struct session *s, struct dc_node *nodes, int *m)
{
	int n = s->nslots;
	(void)nodes;
	(void)m;
	for (int i = 0; i < n; i++) {
		int index = s->slots[i].index;
		if (index >= 0 && s->m->devices[index].failed) {
			dmaconn_builder_warn(b, "%s: %s; assuming no multicast", s->label, s->m->devices[index].why);
			dc_builder_unavailable(b); /* gave up: nothing said of the pairs */
			return DMACONN_OK;
		}
	}
	struct dc_mc_cause *cause = s->cause = calloc((size_t)n + 1, sizeof(*cause));
	if (!cause)
		return dc_fail(DMACONN_ENOMEM, "out of memory");
	char driver_text[DC_MC_TEXT];
	dc_model_stage(s->m, &s->m->driver_stage, &peer_lock, ask_driver); /* never fails */
	int driver = mc_driver(s->m, driver_text, sizeof(driver_text));
	for (int i = 0; i < n; i++)
		cause[i].code = mc_device(b, s, i, driver, driver_text, cause[i].text, sizeof(cause[i].text));
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && !cause[i].code && !cause[j].code &&
			    dc_same_fabric_domain(mc_fabric(s, i)->cluster, mc_fabric(s, i)->mc_clique,
						  mc_fabric(s, j)->cluster, mc_fabric(s, j)->mc_clique))
				dmaconn_builder_set(b, i, j, 1);
	return DMACONN_OK;
}

/* The place stage: each device's placement facts. */
static void ask_place(struct dc_model *m, struct dc_stage *st)
{
	(void)st;
	for (int k = 0; k < m->n; k++)
		if (m->handles[k])
			query_place(m->handles[k], &m->devices[k].place);
}

/* dc_backend.place: the facts discovery read for the GPUs at bus_ids (a MIG
 * instance's are its GPU's). */
static void dc_nvml_place(const char *const *bus_ids, int n, struct dc_place_facts *out, int *numa)
{
	struct dc_model *m = model_get();
	/* A stage asked on the placement's first use: four NVML calls a GPU
	 * that no connection type needs. */
	if (m && m->devices && m->handles)
		dc_model_stage(m, &m->place_stage, &peer_lock, ask_place); /* never fails */
	for (int i = 0; m && i < n; i++) {
		struct dc_pci pci;
		if (!bus_ids[i] || dc_pci_parse(bus_ids[i], strlen(bus_ids[i]), &pci) != 0)
			continue;
		for (int k = 0; k < m->n; k++) {
			if (!dc_pci_equal(&m->ids[k].pci, &pci))
				continue;
			if (m->devices)
				out[i] = m->devices[k].place;
			numa[i] = m->ids[k].numa_node;
			break;
		}
	}
	dc_model_release(m);
}

/* dc_backend.present: the NVIDIA driver's /proc entry. */
static int dc_nvml_present(const char *root)
{
	return dc_live_exists(root, "/proc/driver/nvidia");
}

/* What CUDA reads (CUDA_DEVICE_ORDER orders only; over the whole node, in
 * the order of PCI bus ids, as NVML lists them). */
static const struct dc_visibility dc_nvml_visibility[] = {
	{ "CUDA_VISIBLE_DEVICES", 1, NULL, 0 },
	{ "CUDA_DEVICE_ORDER", 0, "PCI_BUS_ID", 0 },
};

/* The threads of a discovery (1 = serial, for comparison) and whether the
 * links' identities are asked in one batch. */
static const char *const dc_nvml_variables[] = { "DMACONN_NVML_THREADS", "DMACONN_NVML_NO_BATCH" };

const struct dc_backend dc_backend_nvml = { DC_BACKEND_FIELDS("nvml", DMACONN_DEVICE_CUDA, dc_nvml), .source = "NVML",
					    .place = dc_nvml_place, DC_VARIABLES(dc_nvml_variables) };
