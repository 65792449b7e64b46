/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A replay component that counts discoveries: it stands between libdmaconn
 * and libdmaconn_replay (DMACONN_REPLAY_LIBRARY names it), answers nothing
 * itself, and counts the calls that start a vendor's discovery --
 * nvmlDeviceGetCount_v2 (NVML), the listing of the KFD topology nodes (KFD)
 * and zeDriverGet's count of drivers (Level Zero), wrapped in the function
 * tables it hands on -- and what NVML's pairs cost (nvml_p2p: the calls of
 * nvmlDeviceGetP2PStatus, nvml_path: of nvmlDeviceGetTopologyCommonAncestor,
 * nvml_cc: of nvmlSystemGetConfComputeState) --
 * for test_discovery to read back through dmaconn_test_calls().
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "nvml_load.h"
#include "replay_abi.h"
#include "ze_load.h"

#define DC_TEST_EXPORT __attribute__((visibility("default")))

static atomic_int nvml_counts, kfd_lists, ze_drivers, nvml_p2p, nvml_path, nvml_cc;

static void *real(const char *symbol)
{
	void *h = dlopen(DMACONN_REPLAY_SONAME, RTLD_NOW | RTLD_NOLOAD);
	void *sym = h ? dlsym(h, symbol) : NULL;
	if (h)
		dlclose(h);
	return sym;
}

static nvmlReturn_t (*real_count)(unsigned int *count);
static ze_result_t (*real_driver_get)(uint32_t *count, ze_driver_handle_t *drivers);
static int (*real_table)(const char *which, void *api, char *err, size_t errlen);

static nvmlReturn_t (*real_p2p)(nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t *);
static nvmlReturn_t (*real_path)(nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t *);
static nvmlReturn_t (*real_cc)(nvmlConfComputeSystemState_t *);

static nvmlReturn_t count_p2p(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t cap, nvmlGpuP2PStatus_t *st)
{
	atomic_fetch_add(&nvml_p2p, 1);
	return real_p2p(a, b, cap, st);
}

static nvmlReturn_t count_path(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuTopologyLevel_t *level)
{
	atomic_fetch_add(&nvml_path, 1);
	return real_path(a, b, level);
}

static nvmlReturn_t count_cc(nvmlConfComputeSystemState_t *state)
{
	atomic_fetch_add(&nvml_cc, 1);
	return real_cc(state);
}

static nvmlReturn_t count_devices(unsigned int *count)
{
	atomic_fetch_add(&nvml_counts, 1);
	return real_count(count);
}

static ze_result_t count_drivers(uint32_t *count, ze_driver_handle_t *drivers)
{
	if (!drivers) /* the count, which a listing asks first */
		atomic_fetch_add(&ze_drivers, 1);
	return real_driver_get(count, drivers);
}

/* The component's tables, with the counted functions wrapped. */
static int table(const char *which, void *api, char *err, size_t errlen)
{
	int rc = real_table(which, api, err, errlen);
	struct nvml_api *nvml = api;
	struct ze_api *ze = api;
	if (rc == 0 && !strcmp(which, "nvml") && nvml->nvmlDeviceGetCount_v2) {
		real_count = nvml->nvmlDeviceGetCount_v2;
		nvml->nvmlDeviceGetCount_v2 = count_devices;
		real_p2p = nvml->nvmlDeviceGetP2PStatus;
		nvml->nvmlDeviceGetP2PStatus = real_p2p ? count_p2p : NULL;
		real_path = nvml->nvmlDeviceGetTopologyCommonAncestor;
		nvml->nvmlDeviceGetTopologyCommonAncestor = real_path ? count_path : NULL;
		real_cc = nvml->nvmlSystemGetConfComputeState;
		nvml->nvmlSystemGetConfComputeState = real_cc ? count_cc : NULL;
	} else if (rc == 0 && !strcmp(which, "level_zero") && ze->zeDriverGet) {
		real_driver_get = ze->zeDriverGet;
		ze->zeDriverGet = count_drivers;
	}
	return rc;
}

static struct dmaconn_replay_ops ops;
static int (*real_list_dir)(const char *path, const char *const **names, int *count);

static int list_dir(const char *path, const char *const **names, int *count)
{
	const char *tail = "/kfd/topology/nodes";
	size_t n = strlen(path), t = strlen(tail);
	if (n >= t && !strcmp(path + n - t, tail))
		atomic_fetch_add(&kfd_lists, 1);
	return real_list_dir(path, names, count);
}

DC_TEST_EXPORT const struct dmaconn_replay_ops *dmaconn_replay_ops(void);
DC_TEST_EXPORT const struct dmaconn_replay_ops *dmaconn_replay_ops(void)
{
	dmaconn_replay_ops_fn get;
	void *sym = real("dmaconn_replay_ops");
	memcpy(&get, &sym, sizeof(get));
	if (!ops.abi_version) {
		ops = *get();
		real_list_dir = ops.list_dir;
		ops.list_dir = list_dir;
		real_table = ops.table;
		ops.table = table;
	}
	return &ops;
}

/* Calls counted so far: "nvml", "kfd" or "level_zero"; -1 for another name. */
DC_TEST_EXPORT int dmaconn_test_calls(const char *vendor);
DC_TEST_EXPORT int dmaconn_test_calls(const char *vendor)
{
	if (!strcmp(vendor, "nvml"))
		return atomic_load(&nvml_counts);
	if (!strcmp(vendor, "kfd"))
		return atomic_load(&kfd_lists);
	if (!strcmp(vendor, "level_zero"))
		return atomic_load(&ze_drivers);
	if (!strcmp(vendor, "nvml_p2p"))
		return atomic_load(&nvml_p2p);
	if (!strcmp(vendor, "nvml_path"))
		return atomic_load(&nvml_path);
	if (!strcmp(vendor, "nvml_cc"))
		return atomic_load(&nvml_cc);
	return -1;
}
