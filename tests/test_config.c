/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration is read once per detection (src/env.c): a variable
 * changed while a detection runs -- by a warning handler, another thread --
 * does not change what the rest of that detection sees, nested detections
 * share the outer one's, and the next detection reads afresh.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "backends/backend.h"
#include "check.h"
#include "internal.h"

/* What env.c needs of the rest of the library: a backend table whose one
 * library's override variable and tuning variables are read into the
 * configuration. */
static const struct dc_library libraries[] = {
	{ "nvml", "libnvidia-ml.so.1", "DMACONN_NVML_LIBRARY", "NVML", NULL },
};
static const char *const variables[] = { "DMACONN_NVML_THREADS", "DMACONN_NVML_NO_BATCH" };
static const struct dc_backend backend = {
	.name = "nvml", .type = DMACONN_DEVICE_CUDA, DC_LIBRARIES(libraries), DC_VARIABLES(variables)
};
const struct dc_backend *const dc_backends[] = { &backend, NULL };

int dc_fail(int err, const char *fmt, ...)
{
	(void)fmt;
	return err;
}

const char *dmaconn_version_string(void)
{
	return "test";
}

int dc_record_run(void)
{
	return 0;
}

int dc_record_enter(void)
{
	return 0;
}

void dc_record_leave(void)
{
}

const char *dmaconn_host_imex(char *text, size_t len)
{
	(void)text;
	(void)len;
	return NULL;
}

int main(void)
{
	setenv("DMACONN_SYSFS_ROOT", "/first", 1);
	setenv("DMACONN_NVML_THREADS", "3", 1);
	unsetenv("DMACONN_NVML_NO_BATCH");
	unsetenv("DMACONN_NVML_LIBRARY");

	dc_config_begin();
	CHECK_STR(dc_config()->sysfs_root, "/first");
	CHECK_STR(dc_config_variable("DMACONN_NVML_THREADS"), "3");
	CHECK(dc_config_variable("DMACONN_NVML_NO_BATCH") == NULL);
	/* A variable of no backend's is none of the configuration's. */
	setenv("DMACONN_NOT_A_BACKENDS", "1", 1);
	CHECK(dc_config_variable("DMACONN_NOT_A_BACKENDS") == NULL);

	/* Changed halfway: the detection keeps what it started with. */
	setenv("DMACONN_SYSFS_ROOT", "/second", 1);
	setenv("DMACONN_NVML_NO_BATCH", "1", 1);
	setenv("DMACONN_NVML_LIBRARY", "relative/libnvidia-ml.so.1", 1);
	CHECK_STR(dc_config()->sysfs_root, "/first");
	CHECK(dc_config_variable("DMACONN_NVML_NO_BATCH") == NULL);
	const char *path = "x";
	char why[256] = "";
	CHECK_INT(dc_library_override("DMACONN_NVML_LIBRARY", &path, why, sizeof(why)), 0);
	CHECK(path == NULL);

	/* A nested detection shares it, and ending it keeps the outer one's. */
	dc_config_begin();
	CHECK_STR(dc_config()->sysfs_root, "/first");
	dc_config_end();
	CHECK_STR(dc_config()->sysfs_root, "/first");
	dc_config_end();

	/* The next detection reads afresh. */
	dc_config_begin();
	CHECK_STR(dc_config()->sysfs_root, "/second");
	CHECK_STR(dc_config_variable("DMACONN_NVML_NO_BATCH"), "1");
	CHECK_INT(dc_library_override("DMACONN_NVML_LIBRARY", &path, why, sizeof(why)), -1);
	CHECK(strstr(why, "must be an absolute path") != NULL);
	dc_config_end();

	/* Empty is unset; outside a detection each call reads afresh. */
	setenv("DMACONN_SYSFS_ROOT", "", 1);
	CHECK(dc_config()->sysfs_root == NULL);
	setenv("DMACONN_SYSFS_ROOT", "/third", 1);
	CHECK_STR(dc_config()->sysfs_root, "/third");
	return check_done("config");
}
