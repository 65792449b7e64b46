/* SPDX-License-Identifier: BSD-3-Clause */
#include "sysfs.h"

#include "backends/backend.h"
#include "internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_path(const char *full, char *buf, size_t len);

static int read_hex_file(const char *dir, const char *name, unsigned long *out)
{
	char path[4096], buf[64];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -1;
	if (read_path(path, buf, sizeof(buf)) <= 0)
		return -1;
	char *end;
	*out = strtoul(buf, &end, 16);
	return end == buf ? -1 : 0;
}

static int cmp_pci(const void *a, const void *b)
{
	return dc_pci_compare(a, b);
}

int dc_sysfs_nvidia_gpus(const char *root, struct dc_pci *out, int max)
{
	char dirpath[4096];
	if ((size_t)snprintf(dirpath, sizeof(dirpath), "%s/sys/bus/pci/devices", root ? root : "") >=
	    sizeof(dirpath))
		return 0;
	DIR *d = opendir(dirpath);
	if (!d)
		return 0;
	struct dc_pci *all = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct dc_pci p;
		if (e->d_name[0] == '.' || dc_pci_parse(e->d_name, sizeof(e->d_name), &p) != 0)
			continue;
		char dev[4096 + 256];
		snprintf(dev, sizeof(dev), "%s/%s", dirpath, e->d_name);
		unsigned long vendor, cls;
		if (read_hex_file(dev, "vendor", &vendor) || vendor != 0x10de ||
		    read_hex_file(dev, "class", &cls) || ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302))
			continue;
		if (dc_grow(&all, n, &cap, sizeof(*all), 16) != 0)
			break;
		all[n++] = p;
	}
	closedir(d);
	if (n > 1)
		qsort(all, (size_t)n, sizeof(*all), cmp_pci);
	for (int i = 0; i < n && i < max; i++)
		out[i] = all[i];
	free(all);
	return n;
}

/* ------------------------------------------------ files as detectors see them */

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static int join_root(const char *root, const char *path, char *out, size_t len)
{
	if (!path || path[0] != '/')
		return -EINVAL;
	int n = snprintf(out, len, "%s%s", root ? root : "", path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int dc_sysfs_read_at(const char *root, const char *path, char *buf, size_t len)
{
	char full[4096];
	int rc = join_root(root, path, full, sizeof(full));
	if (rc)
		return rc;
	return read_path(full, buf, len);
}

static int read_path(const char *full, char *buf, size_t len)
{
	if (!buf || len == 0)
		return -EINVAL;
	/* A tree under DMACONN_SYSFS_ROOT may hold anything: only regular files
	 * are read (a FIFO would block forever, a device never end), never
	 * through a symbolic link (one to a private file would have its first
	 * line quoted in a parse warning), and never more than len - 1 bytes. */
	int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	int bad = 0;
	if (fstat(fd, &st) != 0)
		bad = -errno;
	else if (!S_ISREG(st.st_mode))
		bad = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (bad) {
		close(fd);
		return bad;
	}
	size_t got = 0;
	int err = 0;
	for (;;) {
		if (got == len - 1) {
			/* Full: one more byte tells a file that fits from one that does not. */
			char extra;
			ssize_t r = read(fd, &extra, 1);
			err = r > 0 ? -EFBIG : r < 0 ? -errno : 0;
			break;
		}
		ssize_t r = read(fd, buf + got, len - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return err ? err : (int)got;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void dc_free_names(char **names, int count)
{
	for (int i = 0; names && i < count; i++)
		free(names[i]);
	free(names);
}

int dc_sysfs_list_at(const char *root, const char *path, char ***names)
{
	char full[4096];
	*names = NULL;
	int rc = join_root(root, path, full, sizeof(full));
	if (rc)
		return rc;
	DIR *d = opendir(full);
	if (!d)
		return -errno;
	char **all = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (dc_grow(&all, n, &cap, sizeof(*all), 16) != 0)
			goto oom;
		if (!(all[n] = strdup(e->d_name)))
			goto oom;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(all, (size_t)n, sizeof(*all), cmp_names);
	*names = all;
	return n;
oom:
	closedir(d);
	dc_free_names(all, n);
	return -ENOMEM;
}

#ifdef DMACONN_BUILDING
/* The replay-aware readers, in libdmaconn only (the replay component has no
 * replay of its own to consult). */
#include "replay_abi.h"

static int replaying(const struct dmaconn_replay_ops **ops)
{
	const char *file = dc_replay_file();
	if (!file || !*file)
		return 0;
	*ops = dc_replay_ops();
	return 1;
}

static const char *live_root(void)
{
	const char *root = secure_getenv("DMACONN_SYSFS_ROOT");
	return root && *root ? root : "";
}

static int read_file(const char *path, char *buf, size_t len)
{
	const struct dmaconn_replay_ops *ops = NULL;
	if (!replaying(&ops))
		return dc_sysfs_read_at(live_root(), path, buf, len);
	/* A replay that cannot be loaded has no files: never the live ones. */
	const char *data;
	size_t size;
	if (!buf || len == 0)
		return -EINVAL;
	if (!ops || !ops->read_file || !path || !ops->read_file(path, &data, &size)) {
		buf[0] = '\0';
		return -ENOENT;
	}
	/* As on the file system: a file that does not fit gives its first len - 1 bytes. */
	size_t n = size > len - 1 ? len - 1 : size;
	memcpy(buf, data, n);
	buf[n] = '\0';
	return size > len - 1 ? -EFBIG : (int)size;
}

/* A file too large for its reader's buffer is kept as its first
 * DMACONN_REPLAY_FILE_MAX bytes (the most a recording keeps of a file, more
 * than any reader takes): its replay then answers as it did. */
static void record_large(const char *path)
{
	char *big = malloc(DMACONN_REPLAY_FILE_MAX + 1);
	int n = big ? read_file(path, big, DMACONN_REPLAY_FILE_MAX + 1) : -ENOMEM;
	if (n >= 0 || n == -EFBIG)
		dc_record_file(path, big, n >= 0 ? (size_t)n : DMACONN_REPLAY_FILE_MAX);
	free(big);
}

/* A recording keeps what was read. */
int dc_read_file(const char *path, char *buf, size_t len)
{
	int n = read_file(path, buf, len);
	if (n >= 0)
		dc_record_file(path, buf, (size_t)n);
	else if (n == -EFBIG && dc_recording())
		record_large(path);
	return n;
}

int dc_list_dir(const char *path, char ***names)
{
	const struct dmaconn_replay_ops *ops = NULL;
	*names = NULL;
	if (!replaying(&ops))
		return dc_sysfs_list_at(live_root(), path, names);
	const char *const *recorded;
	int count = 0;
	if (!ops || !ops->list_dir || !path || !ops->list_dir(path, &recorded, &count))
		return -ENOENT;
	char **all = calloc((size_t)count + 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (int i = 0; i < count; i++) {
		if (!(all[i] = strdup(recorded[i]))) {
			dc_free_names(all, i);
			return -ENOMEM;
		}
	}
	if (count > 1)
		qsort(all, (size_t)count, sizeof(*all), cmp_names);
	*names = all;
	return count;
}

#define DC_ACCESS_OK "access: ok"

int dc_access(const char *path)
{
	char answer[256];
	const struct dmaconn_replay_ops *ops = NULL;
	if (replaying(&ops)) {
		int n = dc_read_file(path, answer, sizeof(answer));
		if (n < 0 && n != -EFBIG)
			return n;
		answer[strcspn(answer, "\n")] = '\0';
		return !strcmp(answer, DC_ACCESS_OK) ? 0 : -EACCES;
	}
	char full[4096];
	int rc = join_root(live_root(), path, full, sizeof(full));
	if (rc)
		return rc;
	/* As open(2) would judge it: the effective ids. */
	rc = faccessat(AT_FDCWD, full, R_OK | W_OK, AT_EACCESS) == 0 ? 0 : -errno;
	if (rc == -ENOENT || rc == -ENOTDIR)
		return -ENOENT;
	if (rc == 0)
		snprintf(answer, sizeof(answer), "%s\n", DC_ACCESS_OK);
	else
		snprintf(answer, sizeof(answer), "access: denied (%s)\n", strerror(-rc));
	dc_record_file(path, answer, strlen(answer));
	return rc ? -EACCES : 0;
}
#endif

int dc_sysfs_numa_node(const char *bus_id)
{
	char path[96], buf[32], *end;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bus_id);
	if (dc_read_file(path, buf, sizeof(buf)) <= 0)
		return -2;
	long node = strtol(buf, &end, 10);
	if (end == buf || (*end && *end != '\n') || node < -1 || node > 65535)
		return -2;
	return (int)node;
}

int dc_live_exists(const char *root, const char *path)
{
	char full[4096];
	struct stat st;
	int n = snprintf(full, sizeof(full), "%s%s", root, path);
	return n > 0 && (size_t)n < sizeof(full) && stat(full, &st) == 0;
}
