/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verdict cache of "cuda"/"verified": the last verification's result,
 * so that the next process answers without running the helper, or even
 * starting NVML.  The key is read from /proc (below DMACONN_SYSFS_ROOT)
 * and from the files' metadata, never from NVML: the boot id, the driver version, each GPU's bus id
 * and UUID, CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER, the version of
 * dmaconn, and the helper and the CUDA driver library the helper loads, each
 * by path and by the identity of the file it resolves to (device, inode,
 * size, modification time).  The kernel does not show MIG mode there,
 * so an entry lives at most DC_VCACHE_MAX_AGE seconds.
 *
 * The file is DMACONN_CACHE_DIR, else $XDG_CACHE_HOME/dmaconn, else
 * ~/.cache/dmaconn, then "verified".  As ssh
 * does, a directory or file that is a symbolic link, is not ours, or that
 * others may write, is refused, and so is a directory above it that others
 * may write, unless sticky (dc_vcache_parents_ok); an entry is written to a
 * temporary file and renamed.  Anything unexpected means "no entry": verifying again is always
 * safe.
 *
 * The entry is JSON: {"dmaconn_verified": 2, "time": <seconds since the
 * epoch>, "key": [<line>, ...] (one per key component), "result": <the
 * result in the codec's form (src/codec.h), values exact>}.  An entry of
 * the line-based format 1 does not parse: no entry, and the next
 * verification replaces it.  Without Jansson there is no cache.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "internal.h"
#include "pci.h"
#include "sysfs.h"
#include "cache.h"
#include "verify/verify.h"

#define DC_VCACHE_MAX_AGE 3600 /* seconds; MIG mode is not in the key */
#define DC_VCACHE_MAX_BYTES (4u << 20)
#define DC_VCACHE_MAX_GPUS 256

static int dc_vcache_disabled;

void dmaconn_set_verify_cache(int enabled)
{
	__atomic_store_n(&dc_vcache_disabled, !enabled, __ATOMIC_RELAXED);
}

int dc_vcache_enabled(void)
{
	const char *e = secure_getenv("DMACONN_NO_CACHE");
	if (e && *e && strcmp(e, "0") != 0)
		return 0;
	return !__atomic_load_n(&dc_vcache_disabled, __ATOMIC_RELAXED);
}

/* The cache directory's path; -1 when none can be named. */
static int dc_vcache_dir(char *buf, size_t len)
{
	const char *d = secure_getenv("DMACONN_CACHE_DIR");
	int n;
	if (d && *d)
		n = snprintf(buf, len, "%s", d);
	else if ((d = secure_getenv("XDG_CACHE_HOME")) && d[0] == '/')
		n = snprintf(buf, len, "%s/dmaconn", d);
	else if ((d = secure_getenv("HOME")) && d[0] == '/')
		n = snprintf(buf, len, "%s/.cache/dmaconn", d);
	else
		return -1;
	return n > 0 && (size_t)n < len && buf[0] == '/' ? 0 : -1;
}

/* Ours, not a link, and nobody else may write it (ssh's rule). */
static int dc_vcache_safe(const struct stat *st, int want_dir)
{
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return 0;
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * Every directory above the cache directory, up to "/", as its real path
 * names them: owned by root or by us, and writable by nobody else unless it
 * is sticky (as /tmp is: others may add entries there, but neither remove nor
 * rename ours).  Otherwise someone could move the cache directory aside and
 * put their own in its place.  (ssh checks the directories above its files
 * likewise, without the sticky exception; a cache on /tmp is common, and the
 * directory itself must still be ours and private.)
 */
static int dc_vcache_parents_ok(const char *dir)
{
	char real[PATH_MAX];
	if (!realpath(dir, real))
		return 0;
	for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
		if (slash == real)
			slash[1] = '\0'; /* "/" itself */
		else
			*slash = '\0';
		struct stat st;
		if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
			return 0;
		if (st.st_uid != 0 && st.st_uid != geteuid())
			return 0;
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
			return 0;
		if (slash == real)
			break;
	}
	return 1;
}

static int dc_vcache_dir_ok(const char *dir)
{
	struct stat st;
	return lstat(dir, &st) == 0 && dc_vcache_safe(&st, 1) && dc_vcache_parents_ok(dir);
}

/* ------------------------------------------------------------------ key */

static int dc_vcache_add(char **key, size_t *len, size_t *cap, const char *name, const char *value)
{
	size_t need = *len + strlen(name) + strlen(value) + 3;
	if (need > *cap) {
		size_t ncap = *cap ? *cap * 2 : 512;
		while (ncap < need)
			ncap *= 2;
		char *g = realloc(*key, ncap);
		if (!g)
			return -1;
		*key = g;
		*cap = ncap;
	}
	/* One line per component: newlines inside a value become spaces. */
	int n = sprintf(*key + *len, "%s %s\n", name, value);
	for (int k = (int)strlen(name) + 1; k < n - 1; k++)
		if ((*key)[*len + (size_t)k] == '\n' || (*key)[*len + (size_t)k] == '\r')
			(*key)[*len + (size_t)k] = ' ';
	*len += (size_t)n;
	return 0;
}

static void dc_vcache_trim(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* The value of "Field:" in an information file, trimmed, or "". */
static void dc_vcache_field(const char *text, const char *field, char *out, size_t len)
{
	out[0] = '\0';
	const char *p = strstr(text, field);
	if (!p)
		return;
	p += strlen(field);
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strcspn(p, "\n");
	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p);
	dc_vcache_trim(out);
}

static int dc_vcache_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "<path> <device> <inode> <size> <mtime>" of the file path resolves to,
 * or "<path> missing": another file at the same path is another key. */
static void dc_vcache_identity(const char *path, char *out, size_t len)
{
	struct stat st;
	if (path[0] != '/' || stat(path, &st) != 0)
		snprintf(out, len, "%.3000s missing", path);
	else
		snprintf(out, len, "%.3000s %llx %llu %lld %lld.%09ld", path, (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			 (long)st.st_mtim.tv_nsec);
}

/* Whether dir holds a file named name: its path in out. */
static int dc_vcache_in_dir(const char *dir, size_t dirlen, const char *name, char *out, size_t len)
{
	struct stat st;
	if (dirlen == 0 || dir[0] != '/')
		return 0;
	int n = snprintf(out, len, "%.*s/%s", (int)dirlen, dir, name);
	return n > 0 && (size_t)n < len && stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * The CUDA driver library the helper loads: DMACONN_CUDA_LIBRARY, else
 * libcuda.so.1 where the dynamic linker would look first (LD_LIBRARY_PATH,
 * the paths ld.so.cache names, the system directories), else the bare name.
 */
static void dc_vcache_cuda_library(char *out, size_t len)
{
	const char *name = dc_verified_libraries[0].soname;
	const char *env = secure_getenv(dc_verified_libraries[0].override);
	if (env && env[0] == '/') {
		snprintf(out, len, "%s", env);
		return;
	}
	if (env && *env) {
		/* The helper refuses it: keyed as what it is, never a file. */
		snprintf(out, len, "relative:%s", env);
		return;
	}
	const char *ld = secure_getenv("LD_LIBRARY_PATH");
	for (const char *d = ld; d && *d; d += strcspn(d, ":"), d += *d == ':')
		if (dc_vcache_in_dir(d, strcspn(d, ":"), name, out, len))
			return;
	FILE *f = fopen("/etc/ld.so.cache", "rb");
	if (f) {
		/* Its strings are NUL-terminated: the first absolute path
		 * ending in "/libcuda.so.1" is what the linker would take. */
		char s[PATH_MAX];
		size_t k = 0;
		int c, found = 0;
		while (!found && (c = getc(f)) != EOF) {
			if (c != '\0') {
				s[k] = (char)c;
				k = k + 1 < sizeof(s) ? k + 1 : 0;
				continue;
			}
			s[k] = '\0';
			size_t sl = strlen(s), nl = strlen(name);
			found = s[0] == '/' && sl > nl && s[sl - nl - 1] == '/' && !strcmp(s + sl - nl, name) &&
				(size_t)snprintf(out, len, "%s", s) < len;
			k = 0;
		}
		fclose(f);
		if (found)
			return;
	}
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
					    "/usr/lib64", "/usr/lib", "/lib64", "/lib" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (dc_vcache_in_dir(dirs[i], strlen(dirs[i]), name, out, len))
			return;
	snprintf(out, len, "%s", name);
}

char *dc_vcache_key(void)
{
	char *key = NULL, buf[4096], val[512];
	size_t len = 0, cap = 0;
	int rc = 0;
	if (dc_read_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) < 0)
		return NULL; /* without it, an entry could outlive a reboot */
	dc_vcache_trim(buf);
	rc |= dc_vcache_add(&key, &len, &cap, "boot_id", buf);
	if (dc_read_file("/proc/driver/nvidia/version", buf, sizeof(buf)) < 0) {
		free(key);
		return NULL; /* no NVIDIA driver: nothing to cache */
	}
	buf[strcspn(buf, "\n")] = '\0';
	rc |= dc_vcache_add(&key, &len, &cap, "driver", buf);

	/* Each GPU, in bus order (the directory names are bus ids). */
	const char *root = secure_getenv("DMACONN_SYSFS_ROOT");
	char dirpath[PATH_MAX];
	snprintf(dirpath, sizeof(dirpath), "%s/proc/driver/nvidia/gpus", root && *root ? root : "");
	DIR *d = opendir(dirpath);
	char *names[DC_VCACHE_MAX_GPUS];
	int count = 0;
	for (struct dirent *e; d && (e = readdir(d)) && count < DC_VCACHE_MAX_GPUS;)
		if (e->d_name[0] != '.' && (names[count] = strdup(e->d_name)))
			count++;
	if (d)
		closedir(d);
	qsort(names, (size_t)count, sizeof(names[0]), dc_vcache_cmp);
	for (int i = 0; i < count; i++) {
		char path[512], uuid[128];
		snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%.200s/information", names[i]);
		if (dc_read_file(path, buf, sizeof(buf)) < 0)
			buf[0] = '\0';
		dc_vcache_field(buf, "GPU UUID:", uuid, sizeof(uuid));
		dc_vcache_field(buf, "Bus Location:", val, sizeof(val));
		char line[800];
		snprintf(line, sizeof(line), "%s %s %s", names[i], val[0] ? val : "-", uuid[0] ? uuid : "-");
		rc |= dc_vcache_add(&key, &len, &cap, "gpu", line);
		free(names[i]);
	}
	/* What the CUDA runtime shows and in which order: the variables of
	 * the backends of its type ("visible" those that hide devices). */
	for (const struct dc_backend *const *b = dc_backends; *b; b++)
		for (int k = 0; (*b)->type == DMACONN_DEVICE_CUDA && k < (*b)->nvisibility; k++) {
			const char *v = secure_getenv((*b)->visibility[k].name);
			rc |= dc_vcache_add(&key, &len, &cap, (*b)->visibility[k].hides ? "visible" : "order",
					    v ? v : "(unset)");
		}
	rc |= dc_vcache_add(&key, &len, &cap, "helper", dmaconn_version_string());
	/* Which helper and which CUDA driver library made the verdict. */
	char path[PATH_MAX];
	if (dc_verify_helper_path(path, sizeof(path)) != 0)
		snprintf(path, sizeof(path), "(none)");
	dc_vcache_identity(path, buf, sizeof(buf));
	rc |= dc_vcache_add(&key, &len, &cap, "helper_file", buf);
	dc_vcache_cuda_library(path, sizeof(path));
	dc_vcache_identity(path, buf, sizeof(buf));
	rc |= dc_vcache_add(&key, &len, &cap, "cuda_library", buf);
	if (rc) {
		free(key);
		return NULL;
	}
	return key ? key : strdup("");
}

/* ------------------------------------------------------------ encoding */

#define DC_VCACHE_FORMAT 2

/* The entry's text: its key one component a line, r exact.  NULL when out
 * of memory or r holds text that is not UTF-8 (nothing is cached then). */
static char *dc_vcache_encode(const char *key, const dmaconn_result *r)
{
	static const struct dc_codec exact = { DC_CODEC_EXACT, NULL };
	json_t *lines = json_array(), *res = dc_codec_result(&exact, r);
	int bad = !lines || !res;
	for (const char *p = key; !bad && *p;) {
		size_t n = strcspn(p, "\n");
		bad = json_array_append_new(lines, json_stringn(p, n)) != 0;
		p += n + (p[n] == '\n');
	}
	json_t *e = bad ? NULL
			: json_pack("{s:i, s:I, s:O, s:O}", "dmaconn_verified", DC_VCACHE_FORMAT, "time",
				    (json_int_t)time(NULL), "key", lines, "result", res);
	json_decref(lines);
	json_decref(res);
	char *text = e ? json_dumps(e, JSON_COMPACT) : NULL;
	json_decref(e);
	return text;
}

/* Whether an entry's "key" is key, line for line. */
static int dc_vcache_key_is(const json_t *lines, const char *key)
{
	size_t k = 0;
	const char *p = key;
	if (!json_is_array(lines))
		return 0;
	for (; *p; k++) {
		size_t n = strcspn(p, "\n");
		const json_t *line = json_array_get(lines, k);
		if (!json_is_string(line) || json_string_length(line) != n || memcmp(json_string_value(line), p, n))
			return 0;
		p += n + (p[n] == '\n');
	}
	return k == json_array_size(lines);
}

/* Fills b from the entry text if it is of this format, for key, fresh and
 * whole: 0; -1 otherwise, b untouched. */
static int dc_vcache_decode(const char *text, const char *key, dmaconn_builder *b)
{
	json_t *e = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	const json_t *format = json_object_get(e, "dmaconn_verified"), *when = json_object_get(e, "time"),
		     *res = json_object_get(e, "result");
	long long now = (long long)time(NULL), t = json_is_integer(when) ? json_integer_value(when) : -1;
	int rc = -1, unavailable = 0;
	char why[160];
	/* The header first (format, key, age), then the result, checked whole
	 * before anything is set. */
	if (json_is_integer(format) && json_integer_value(format) == DC_VCACHE_FORMAT &&
	    dc_vcache_key_is(json_object_get(e, "key"), key) && t >= 0 && t <= now &&
	    now - t <= DC_VCACHE_MAX_AGE && json_array_size(json_object_get(res, "matrix")) <= DC_VCACHE_MAX_GPUS &&
	    dc_codec_read(res, b, &unavailable, why, sizeof(why)) == 0) {
		if (unavailable)
			dc_builder_unavailable(b);
		rc = 0;
	}
	json_decref(e);
	return rc;
}

/* --------------------------------------------------------------- store */

int dc_vcache_store(const char *key, const dmaconn_result *r)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32], path[PATH_MAX + 16];
	if (!key || dc_vcache_dir(dir, sizeof(dir)) != 0)
		return -1;
	char *text = dc_vcache_encode(key, r);
	if (!text)
		return -1;
	int fd = -1;
	if ((mkdir(dir, 0700) == 0 || errno == EEXIST) && dc_vcache_dir_ok(dir)) {
		snprintf(path, sizeof(path), "%s/verified", dir);
		snprintf(tmp, sizeof(tmp), "%s/.verified.XXXXXX", dir);
		fd = mkstemp(tmp);
	}
	if (fd < 0) {
		free(text);
		return -1;
	}
	size_t len = strlen(text);
	text[len++] = '\n'; /* over the NUL: written by length */
	int bad = write(fd, text, len) != (ssize_t)len;
	free(text);
	bad |= fsync(fd) != 0;
	bad |= close(fd) != 0;
	if (bad || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- load */

/* Reads the entry if it is safe; NULL otherwise. */
static char *dc_vcache_read(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	if (dc_vcache_dir(dir, sizeof(dir)) != 0 || !dc_vcache_dir_ok(dir))
		return NULL;
	snprintf(path, sizeof(path), "%s/verified", dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *text = NULL;
	if (fstat(fd, &st) == 0 && dc_vcache_safe(&st, 0) && st.st_size > 0 &&
	    (size_t)st.st_size < DC_VCACHE_MAX_BYTES && (text = malloc((size_t)st.st_size + 1))) {
		ssize_t got = read(fd, text, (size_t)st.st_size);
		if (got != st.st_size) {
			free(text);
			text = NULL;
		} else {
			text[got] = '\0';
		}
	}
	close(fd);
	if (text && strlen(text) != (size_t)st.st_size) { /* a NUL inside */
		free(text);
		text = NULL;
	}
	return text;
}

int dc_vcache_load(const char *key, dmaconn_builder *b)
{
	if (!key)
		return -1;
	char *text = dc_vcache_read();
	int rc = text ? dc_vcache_decode(text, key, b) : -1;
	free(text);
	return rc;
}
