/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_driver_loaded(): each device type asks its backends' presence
 * checks (struct dc_backend.present), below DMACONN_SYSFS_ROOT: the NVIDIA
 * driver's /proc entry, the KFD device or its topology, an Intel DRM card.
 * A tree holding one vendor's driver shows that vendor alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

static char root[64];

/* Makes root/path and its parents (a file when data is given). */
static void make(const char *path, const char *data)
{
	char full[512];
	snprintf(full, sizeof(full), "%s/%s", root, path);
	for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(full, 0700);
		*p = '/';
	}
	if (!data) {
		mkdir(full, 0700);
		return;
	}
	FILE *f = fopen(full, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(data, f);
		fclose(f);
	}
}

static void expect(int cuda, int rocm, int xpu)
{
	CHECK_INT(dmaconn_driver_loaded(DMACONN_DEVICE_CUDA), cuda);
	CHECK_INT(dmaconn_driver_loaded(DMACONN_DEVICE_ROCM), rocm);
	CHECK_INT(dmaconn_driver_loaded(DMACONN_DEVICE_XPU), xpu);
}

static void fresh_root(void)
{
	snprintf(root, sizeof(root), "/tmp/dmaconn-backend-table-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	setenv("DMACONN_SYSFS_ROOT", root, 1);
}

static void drop_root(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), 0);
}

/* One tree per case: its files (a path ending in "/" is a directory), and
 * the types whose driver it shows. */
static const struct {
	const char *files[2], *data[2];
	int cuda, rocm, xpu;
} cases[] = {
	{ { NULL, NULL }, { NULL, NULL }, 0, 0, 0 },
	/* A DRM card of another vendor, and an Intel render node (no card),
	 * are no Intel GPU. */
	{ { "sys/class/drm/card0/device/vendor", "sys/class/drm/renderD128/device/vendor" },
	  { "0x10de\n", "0x8086\n" }, 0, 0, 0 },
	{ { "proc/driver/nvidia/", NULL }, { NULL, NULL }, 1, 0, 0 },
	{ { "dev/kfd", NULL }, { "", NULL }, 0, 1, 0 },
	{ { "sys/class/kfd/kfd/topology/nodes/", NULL }, { NULL, NULL }, 0, 1, 0 },
	{ { "sys/class/drm/card1/device/vendor", NULL }, { "0x8086\n", NULL }, 0, 0, 1 },
};

int main(void)
{
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fresh_root();
		for (int f = 0; f < 2 && cases[k].files[f]; f++) {
			const char *path = cases[k].files[f];
			int dir = path[strlen(path) - 1] == '/';
			char name[256];
			snprintf(name, sizeof(name), "%.*s", (int)strlen(path) - dir, path);
			make(name, dir ? NULL : cases[k].data[f]);
		}
		expect(cases[k].cuda, cases[k].rocm, cases[k].xpu);
		drop_root();
	}
	unsetenv("DMACONN_SYSFS_ROOT");
	return check_done("test_backend_table");
}
