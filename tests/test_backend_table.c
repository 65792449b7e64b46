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

int main(void)
{
	/* Nothing: no vendor. */
	fresh_root();
	expect(0, 0, 0);
	/* A DRM card of another vendor is no Intel GPU. */
	make("sys/class/drm/card0/device/vendor", "0x10de\n");
	make("sys/class/drm/renderD128/device/vendor", "0x8086\n");
	expect(0, 0, 0);
	drop_root();

	fresh_root();
	make("proc/driver/nvidia", NULL);
	expect(1, 0, 0);
	drop_root();

	fresh_root();
	make("dev/kfd", "");
	expect(0, 1, 0);
	drop_root();

	fresh_root();
	make("sys/class/kfd/kfd/topology/nodes", NULL);
	expect(0, 1, 0);
	drop_root();

	fresh_root();
	make("sys/class/drm/card1/device/vendor", "0x8086\n");
	expect(0, 0, 1);
	drop_root();

	unsetenv("DMACONN_SYSFS_ROOT");
	return check_done("test_backend_table");
}
