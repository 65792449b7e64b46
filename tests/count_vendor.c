/*
 * A replay component that counts discoveries: it stands between libdmaconn
 * and libdmaconn_replay (DMACONN_REPLAY_LIBRARY names it), answers nothing
 * itself, and counts the calls that start a vendor's discovery --
 * nvmlDeviceGetCount_v2 (NVML), the listing of the KFD topology nodes (KFD)
 * and zeDriverGet's count of drivers (Level Zero) -- for test_discovery to read back through
 * dmaconn_test_calls().  Every other symbol resolves to libdmaconn_replay,
 * this library's dependency.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "nvml_api.h"
#include "replay_abi.h"
#include "ze_api.h"

#define DC_TEST_EXPORT __attribute__((visibility("default")))

static atomic_int nvml_counts, kfd_lists, ze_drivers;

static void *real(const char *symbol)
{
	void *h = dlopen(DMACONN_REPLAY_SONAME, RTLD_NOW | RTLD_NOLOAD);
	void *sym = h ? dlsym(h, symbol) : NULL;
	if (h)
		dlclose(h);
	return sym;
}

DC_TEST_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
DC_TEST_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	nvmlReturn_t (*fn)(unsigned int *);
	void *sym = real("nvmlDeviceGetCount_v2");
	memcpy(&fn, &sym, sizeof(fn));
	atomic_fetch_add(&nvml_counts, 1);
	return fn(count);
}

DC_TEST_EXPORT ze_result_t zeDriverGet(uint32_t *count, ze_driver_handle_t *drivers);
DC_TEST_EXPORT ze_result_t zeDriverGet(uint32_t *count, ze_driver_handle_t *drivers)
{
	ze_result_t (*fn)(uint32_t *, ze_driver_handle_t *);
	void *sym = real("zeDriverGet");
	memcpy(&fn, &sym, sizeof(fn));
	if (!drivers) /* the count, which a listing asks first */
		atomic_fetch_add(&ze_drivers, 1);
	return fn(count, drivers);
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
	return -1;
}
