/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether the node is ready for IMEX, NVIDIA's sharing of GPU memory between
 * nodes (dmaconn_host_imex): the driver's character device for IMEX channels
 * and a channel the caller may open.  Read through the file seam (sysfs.h),
 * so that a recording keeps it and a replay answers it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmaconn.h"
#include "sysfs.h"

#define DC_IMEX_DEVICE "nvidia-caps-imex-channels"
#define DC_IMEX_DIR "/dev/" DC_IMEX_DEVICE

/* The major number /proc/devices gives the IMEX channels' character device:
 * >= 0; -1 when it lists none; a negative errno below -1 is not used: the
 * file's own error goes to *err (0 when it was read). */
static long imex_major(int *err)
{
	char buf[16384];
	int n = dc_read_file("/proc/devices", buf, sizeof(buf));
	*err = n < 0 && n != -EFBIG ? -n : 0;
	if (*err)
		return -1;
	int chars = 0;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strcmp(line, "Character devices:")) {
			chars = 1;
			continue;
		}
		if (!*line || strchr(line, ':')) {
			chars = 0; /* "Block devices:" and what follows */
			continue;
		}
		char *end;
		long major = strtol(line, &end, 10);
		while (*end == ' ')
			end++;
		if (chars && end != line && major >= 0 && !strcmp(end, DC_IMEX_DEVICE))
			return major;
	}
	return -1;
}

/* "channelN" */
static int is_channel(const char *name)
{
	if (strncmp(name, "channel", 7) != 0 || !name[7])
		return 0;
	for (const char *p = name + 7; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static const char *say(char *text, size_t len, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static const char *say(char *text, size_t len, const char *reason, const char *fmt, ...)
{
	if (text && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(text, len, fmt, ap);
		va_end(ap);
	}
	return reason;
}

const char *dmaconn_host_imex(char *text, size_t len)
{
	int err = 0;
	long major = imex_major(&err);
	if (err)
		return say(text, len, DMACONN_REASON_IMEX_MODULE_MISSING,
			   "/proc/devices cannot be read (%s): the IMEX channels' device is unknown", strerror(err));
	if (major < 0)
		return say(text, len, DMACONN_REASON_IMEX_MODULE_MISSING,
			   "/proc/devices lists no " DC_IMEX_DEVICE ": the NVIDIA driver offers no IMEX channels "
			   "(not loaded, or older than R550)");
	char **names = NULL;
	int n = dc_list_dir(DC_IMEX_DIR, &names);
	const char *denied = NULL;
	char path[512];
	for (int k = 0; k < n; k++) {
		if (!is_channel(names[k]))
			continue;
		snprintf(path, sizeof(path), DC_IMEX_DIR "/%s", names[k]);
		if (dc_access(path) == 0) {
			say(text, len, NULL, "%s (major %ld) opens for reading and writing", path, major);
			dc_free_names(names, n);
			return NULL;
		}
		if (!denied)
			denied = names[k];
	}
	const char *reason;
	if (denied) {
		snprintf(path, sizeof(path), DC_IMEX_DIR "/%s", denied);
		reason = say(text, len, DMACONN_REASON_IMEX_CHANNEL_NO_PERMISSION,
			     "%s cannot be opened for reading and writing by this user", path);
	} else {
		reason = say(text, len, DMACONN_REASON_IMEX_CHANNEL_MISSING,
			     "no IMEX channel in " DC_IMEX_DIR "/ (major %ld): the administrator creates one "
			     "(mknod channel0 c %ld 0, or the driver's NVreg_CreateImexChannel0=1)", major, major);
	}
	dc_free_names(names, n > 0 ? n : 0);
	return reason;
}
