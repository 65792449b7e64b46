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
 * ~/.cache/dmaconn, then "verified"; its text is line-based (below).  As ssh
 * does, a directory or file that is a symbolic link, is not ours, or that
 * others may write, is refused, and so is a directory above it that others
 * may write, unless sticky (dc_vcache_parents_ok); an entry is written to a
 * temporary file and renamed.  Anything unexpected means "no entry": verifying again is always
 * safe.
 *
 *   dmaconn-verified 1
 *   time <seconds since the epoch>
 *   key <line>          (one per key component)
 *   size <n>
 *   device <i> <key> <value>
 *   value <i> <j> <value>
 *   pair <i> <j> <key> <value>
 *   warning <value>
 *   end
 * Values are %XX-escaped where they are not printable ASCII other than
 * space and '%'.
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

#include "internal.h"
#include "pci.h"
#include "sysfs.h"
#include "verify/cache.h"
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
	static const char name[] = "libcuda.so.1";
	const char *env = secure_getenv("DMACONN_CUDA_LIBRARY");
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
			size_t sl = strlen(s), nl = sizeof(name) - 1;
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
	const char *v = secure_getenv("CUDA_VISIBLE_DEVICES");
	rc |= dc_vcache_add(&key, &len, &cap, "visible", v ? v : "(unset)");
	v = secure_getenv("CUDA_DEVICE_ORDER");
	rc |= dc_vcache_add(&key, &len, &cap, "order", v ? v : "(unset)");
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

static void dc_vcache_put(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p <= ' ' || *p == '%' || *p >= 0x7f)
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
	}
}

/* --------------------------------------------------------------- store */

int dc_vcache_store(const char *key, const dmaconn_result *r)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32], path[PATH_MAX + 16];
	if (!key || dc_vcache_dir(dir, sizeof(dir)) != 0)
		return -1;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	if (!dc_vcache_dir_ok(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/verified", dir);
	snprintf(tmp, sizeof(tmp), "%s/.verified.XXXXXX", dir);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	fprintf(f, "dmaconn-verified 1\ntime %lld\n", (long long)time(NULL));
	for (const char *p = key; *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(f, "key ");
		fwrite(p, 1, n, f);
		fputc('\n', f);
		p += n + (p[n] == '\n');
	}
	int n = dmaconn_result_size(r);
	fprintf(f, "size %d\n", n);
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < dmaconn_result_device_property_count(r, i); k++) {
			fprintf(f, "device %d ", i);
			dc_vcache_put(f, dmaconn_result_device_property_key(r, i, k));
			fputc(' ', f);
			dc_vcache_put(f, dmaconn_result_device_property_value(r, i, k));
			fputc('\n', f);
		}
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			fprintf(f, "value %d %d %d\n", i, j, dmaconn_result_get(r, i, j));
			for (int k = 0; k < dmaconn_result_pair_property_count(r, i, j); k++) {
				fprintf(f, "pair %d %d ", i, j);
				dc_vcache_put(f, dmaconn_result_pair_property_key(r, i, j, k));
				fputc(' ', f);
				dc_vcache_put(f, dmaconn_result_pair_property_value(r, i, j, k));
				fputc('\n', f);
			}
		}
	}
	for (int k = 0; k < dmaconn_result_warning_count(r); k++) {
		fputs("warning ", f);
		dc_vcache_put(f, dmaconn_result_warning(r, k));
		fputc('\n', f);
	}
	fputs("end\n", f);
	int bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
	bad |= fclose(f) != 0;
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

static int dc_vcache_index(const char *s, int n, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v >= n)
		return -1;
	*out = (int)v;
	return 0;
}

int dc_vcache_load(const char *key, dmaconn_builder *b)
{
	if (!key)
		return -1;
	char *text = dc_vcache_read();
	if (!text)
		return -1;
	int rc = -1, n = -1, ended = 0;
	size_t keylen = 0, want = strlen(key);
	long long when = -1;
	char *save = NULL;
	char *line = strtok_r(text, "\n", &save);
	if (!line || strcmp(line, "dmaconn-verified 1") != 0)
		goto out;
	/* Header first, checked whole before anything is built. */
	while ((line = strtok_r(NULL, "\n", &save))) {
		if (!strncmp(line, "time ", 5)) {
			char *end;
			when = strtoll(line + 5, &end, 10);
			if (*end)
				goto out;
		} else if (!strncmp(line, "key ", 4)) {
			size_t l = strlen(line + 4);
			if (keylen + l + 1 > want || strncmp(key + keylen, line + 4, l) != 0 ||
			    key[keylen + l] != '\n')
				goto out;
			keylen += l + 1;
		} else if (!strncmp(line, "size ", 5)) {
			if (dc_vcache_index(line + 5, DC_VCACHE_MAX_GPUS + 1, &n) != 0)
				goto out;
			break;
		} else {
			goto out;
		}
	}
	long long now = (long long)time(NULL);
	if (n < 0 || keylen != want || when < 0 || when > now || now - when > DC_VCACHE_MAX_AGE)
		goto out;
	/* The body: parse all of it, then commit to the builder. */
	char *body = save;
	size_t bodylen = body ? strlen(body) : 0;
	/* Every pair's value exactly once: a size that does not match the
	 * values is corrupt, not a node of unverified devices. */
	unsigned char *seen = calloc((size_t)n * (size_t)n + 1, 1);
	int values = 0;
	if (!seen)
		goto out;
	for (int pass = 0; pass < 2; pass++) {
		char *copy = NULL;
		if (pass == 0) {
			if (!(copy = strndup(body ? body : "", bodylen)))
				goto out;
		}
		char *s2 = NULL, *cur = pass == 0 ? copy : body;
		if (pass == 1 && dmaconn_builder_set_size(b, n) != DMACONN_OK)
			goto out;
		ended = 0;
		for (char *l = strtok_r(cur, "\n", &s2); l; l = strtok_r(NULL, "\n", &s2)) {
			char *f[6] = { 0 };
			int nf = 0;
			char *s3 = NULL;
			for (char *t = strtok_r(l, " ", &s3); t && nf < 6; t = strtok_r(NULL, " ", &s3))
				f[nf++] = t;
			int i, j, ok = 1;
			if (ended) {
				ok = 0;
			} else if (nf == 1 && !strcmp(f[0], "end")) {
				ended = 1;
			} else if (nf == 4 && !strcmp(f[0], "device")) {
				ok = dc_vcache_index(f[1], n, &i) == 0 && dc_percent_decode(f[2]) == 0 &&
				     dc_percent_decode(f[3]) == 0;
				if (ok && pass)
					dmaconn_builder_set_device_property(b, i, f[2], f[3]);
			} else if (nf == 4 && !strcmp(f[0], "value")) {
				int v;
				ok = dc_vcache_index(f[1], n, &i) == 0 && dc_vcache_index(f[2], n, &j) == 0 &&
				     i != j && dc_vcache_index(f[3], 2, &v) == 0;
				if (ok && !pass) {
					ok = !seen[(size_t)i * (size_t)n + (size_t)j];
					seen[(size_t)i * (size_t)n + (size_t)j] = 1;
					values++;
				}
				if (ok && pass)
					dmaconn_builder_set(b, i, j, v);
			} else if (nf == 5 && !strcmp(f[0], "pair")) {
				ok = dc_vcache_index(f[1], n, &i) == 0 && dc_vcache_index(f[2], n, &j) == 0 &&
				     i != j && dc_percent_decode(f[3]) == 0 && dc_percent_decode(f[4]) == 0;
				if (ok && pass)
					dmaconn_builder_set_pair_property(b, i, j, f[3], f[4]);
			} else if (nf == 2 && !strcmp(f[0], "warning")) {
				ok = dc_percent_decode(f[1]) == 0;
				if (ok && pass)
					dmaconn_builder_add_warning(b, f[1]);
			} else {
				ok = 0;
			}
			if (!ok) {
				free(copy);
				free(seen);
				goto out; /* only possible in pass 0 */
			}
		}
		free(copy);
		if (!ended || values != n * (n - 1)) {
			free(seen);
			goto out;
		}
	}
	free(seen);
	rc = 0;
out:
	free(text);
	return rc;
}
