/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Without NVML, cuda detectors count the NVIDIA PCI functions in sysfs; more
 * than dmaconn accepts are cut to its limit with a warning that says so,
 * never silently.  The sysfs tree is written here, under DMACONN_SYSFS_ROOT.
 *
 * Every one of the 16.8 M zero pairs has a reason, and all share one cause:
 * its text is stored once (the same pointer on every pair), and the whole
 * detection stays within a bound of memory that grows as n*n ints, not as
 * n*n strings.  `test_fallback_cap N` writes N devices instead of 4,097.
 */
#include <ftw.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

enum { LIMIT = 4096 };

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%.500s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(int argc, char **argv)
{
	int FOUND = argc > 1 ? atoi(argv[1]) : LIMIT + 1;
	int kept = FOUND < LIMIT ? FOUND : LIMIT;
	char root[] = "/tmp/dmaconn-sysfs-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	char dir[512];
	const char *parts[] = { "/sys", "/sys/bus", "/sys/bus/pci", "/sys/bus/pci/devices" };
	for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
		snprintf(dir, sizeof(dir), "%s%s", root, parts[k]);
		CHECK_INT(mkdir(dir, 0755), 0);
	}
	int written = 0;
	for (int i = 0; i < FOUND; i++) {
		snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices/%04x:%02x:00.0", root, i / 256, i % 256);
		written += mkdir(dir, 0755) == 0 && write_file(dir, "vendor", "0x10de\n") == 0 &&
			   write_file(dir, "class", "0x030200\n") == 0;
	}
	CHECK_INT(written, FOUND);
	setenv("DMACONN_SYSFS_ROOT", root, 1);
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	unsetenv("DMACONN_REPLAY");
	unsetenv("CUDA_VISIBLE_DEVICES");
	setenv("DMACONN_QUIET", "1", 1);

	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "nvlink", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_size(r), kept);
	int said = 0;
	for (int k = 0; k < dmaconn_result_warning_count(r); k++) {
		const char *w = dmaconn_result_warning(r, k);
		said |= strstr(w, "4097 NVIDIA") && strstr(w, "first 4096");
	}
	CHECK_INT(said, FOUND > LIMIT);
	if (FOUND > LIMIT)
		CHECK_STR(dmaconn_result_device_get(r, LIMIT - 1, "pci_bus_id"), "000f:ff:00.0");

	/* One cause, one text: every pair refers to the same string. */
	const char *text = dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_REASON_TEXT);
	const char *code = dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_REASON);
	CHECK(text != NULL && code != NULL);
	long long shared = 0, pairs = 0;
	for (int i = 0; i < kept; i += 1 + kept / 64) {
		for (int j = 0; j < kept; j++) {
			if (i == j)
				continue;
			pairs++;
			shared += dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT) == text &&
				  dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON) == code;
		}
	}
	CHECK_INT(shared, pairs);
	CHECK_INT(dmaconn_result_pair_property_count(r, kept - 1, 0), 2);

	/* n*n pairs at a few bytes each (the matrix's int, the pair's list),
	 * not a string each: 4,096 devices took 7.9 GB that way.  Under
	 * valgrind the peak is valgrind's own. */
	struct rusage ru;
	CHECK_INT(getrusage(RUSAGE_SELF, &ru), 0);
	long long bound_kb = 64 * 1024 + (long long)kept * kept * 16 / 1024;
	if (!getenv("DMACONN_TEST_WRAPPER") && ru.ru_maxrss > bound_kb)
		fprintf(stderr, "peak RSS %ld KB, more than %lld KB for %d devices\n", ru.ru_maxrss, bound_kb, kept);
	CHECK(getenv("DMACONN_TEST_WRAPPER") || ru.ru_maxrss <= bound_kb);
	dmaconn_result_release(r);
	dmaconn_shutdown();
	nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return check_done("fallback_cap");
}
