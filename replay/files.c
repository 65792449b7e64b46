/*
 * "files": sysfs trees recorded for the detectors that read the kernel's
 * view (AMD's KFD topology), answered to the core through read_file and
 * list_dir.  The section is {"<absolute path>": "<contents>", ...}; the
 * directories are those the paths imply, each listing its children sorted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

#define FILES_MAX 16384           /* an 8-GPU MI300X in CPX mode has ~4,300 */
#define FILE_SIZE_MAX (64 * 1024) /* sysfs attributes are at most a page */
#define FILES_BYTES_MAX (64 * 1024 * 1024)
#define PATH_MAX_LEN 1024

struct file {
	char *path;
	char *data; /* NUL-terminated copy */
	size_t len;
};

struct dir {
	char *path;
	char **names; /* sorted */
	int count;
};

static struct file *files;
static int nfiles;
static struct dir *dirs;
static int ndirs;

void replay_files_release(void)
{
	for (int i = 0; i < nfiles; i++) {
		free(files[i].path);
		free(files[i].data);
	}
	for (int i = 0; i < ndirs; i++) {
		free(dirs[i].path);
		for (int k = 0; k < dirs[i].count; k++)
			free(dirs[i].names[k]);
		free(dirs[i].names);
	}
	free(files);
	free(dirs);
	files = NULL;
	dirs = NULL;
	nfiles = ndirs = 0;
}

/* An absolute path without empty, "." or ".." components. */
static const char *bad_path(const char *p)
{
	size_t len = strlen(p);
	if (p[0] != '/')
		return "is not an absolute path";
	if (len < 2 || len > PATH_MAX_LEN)
		return "has no name or is too long";
	if (p[len - 1] == '/')
		return "ends with '/'";
	for (const char *c = p; *c; c++) {
		if (c[0] != '/')
			continue;
		if (c[1] == '/')
			return "has an empty component";
		if (c[1] == '.' && (c[2] == '/' || !c[2] || (c[2] == '.' && (c[3] == '/' || !c[3]))))
			return "has a '.' or '..' component";
	}
	return NULL;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct file *)a)->path, ((const struct file *)b)->path);
}

/* The index of the file whose path is the first len bytes of p, or -1;
 * files sorted. */
static int find_file_n(const char *p, size_t len)
{
	int lo = 0, hi = nfiles - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const char *q = files[mid].path;
		int c = strncmp(q, p, len);
		if (!c && q[len])
			c = 1; /* longer, hence after */
		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* (directory, child) pairs, sorted and grouped into dirs. */
struct edge {
	const char *dir;
	size_t dirlen;
	const char *child;
	size_t childlen;
};

static int cmp_edge(const void *pa, const void *pb)
{
	const struct edge *a = pa, *b = pb;
	size_t n = a->dirlen < b->dirlen ? a->dirlen : b->dirlen;
	int c = memcmp(a->dir, b->dir, n);
	if (c || a->dirlen != b->dirlen)
		return c ? c : a->dirlen < b->dirlen ? -1 : 1;
	n = a->childlen < b->childlen ? a->childlen : b->childlen;
	c = memcmp(a->child, b->child, n);
	if (c || a->childlen != b->childlen)
		return c ? c : a->childlen < b->childlen ? -1 : 1;
	return 0;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* The directories the file paths imply; 0, or -1 when out of memory. */
static int build_dirs(void)
{
	size_t nedges = 0;
	for (int i = 0; i < nfiles; i++)
		for (const char *c = files[i].path; *c; c++)
			nedges += *c == '/';
	struct edge *e = calloc(nedges + 1, sizeof(*e));
	if (!e)
		return -1;
	size_t k = 0;
	for (int i = 0; i < nfiles; i++) {
		const char *p = files[i].path;
		for (const char *c = p; *c; c++) {
			if (*c != '/')
				continue;
			const char *next = strchr(c + 1, '/');
			size_t dirlen = c == p ? 1 : (size_t)(c - p); /* "/" for the root */
			e[k++] = (struct edge){ p, dirlen, c + 1, next ? (size_t)(next - c - 1) : strlen(c + 1) };
		}
	}
	qsort(e, nedges, sizeof(*e), cmp_edge);
	dirs = calloc(nedges + 1, sizeof(*dirs));
	if (!dirs) {
		free(e);
		return -1;
	}
	for (size_t i = 0; i < nedges;) {
		size_t j = i;
		while (j < nedges && e[j].dirlen == e[i].dirlen && !memcmp(e[j].dir, e[i].dir, e[i].dirlen))
			j++;
		struct dir *d = &dirs[ndirs++];
		d->path = dup_n(e[i].dir, e[i].dirlen);
		d->names = calloc(j - i + 1, sizeof(char *));
		if (!d->path || !d->names) {
			free(e);
			return -1;
		}
		for (size_t m = i; m < j; m++) {
			if (m > i && !cmp_edge(&e[m], &e[m - 1]))
				continue; /* the same child, reached by several files */
			if (!(d->names[d->count++] = dup_n(e[m].child, e[m].childlen))) {
				free(e);
				return -1;
			}
		}
		i = j;
	}
	free(e);
	return 0;
}

int replay_files_read(const char *file, json_t *value)
{
	char where[PATH_MAX_LEN + 16];
	if (!json_is_object(value))
		return replay_bad(file, "files", "expected an object of absolute paths and their contents");
	size_t count = json_object_size(value);
	if (count > FILES_MAX)
		return replay_bad(file, "files", "%zu files, more than %d", count, FILES_MAX);
	replay_files_release();
	files = calloc(count + 1, sizeof(*files));
	if (!files)
		return replay_bad(file, "files", "out of memory");
	size_t total = 0;
	const char *path;
	json_t *contents;
	json_object_foreach(value, path, contents)
	{
		snprintf(where, sizeof(where), "files.\"%.*s\"", PATH_MAX_LEN, path);
		const char *why = bad_path(path);
		if (why)
			goto bad_path;
		if (!json_is_string(contents))
			goto bad_value;
		size_t len = json_string_length(contents);
		if (len > FILE_SIZE_MAX || (total += len) > FILES_BYTES_MAX)
			goto too_big;
		struct file *f = &files[nfiles];
		f->path = strdup(path);
		f->data = dup_n(json_string_value(contents), len);
		f->len = len;
		nfiles++;
		if (!f->path || !f->data)
			goto oom;
		continue;
	bad_path:
		replay_files_release();
		return replay_bad(file, where, "the path %s", why);
	bad_value:
		replay_files_release();
		return replay_bad(file, where, "expected the file's contents, a string");
	too_big:
		replay_files_release();
		return replay_bad(file, where, "larger than %d bytes (or the files together than %d)",
				  FILE_SIZE_MAX, FILES_BYTES_MAX);
	oom:
		replay_files_release();
		return replay_bad(file, "files", "out of memory");
	}
	if (nfiles > 1)
		qsort(files, (size_t)nfiles, sizeof(*files), cmp_file);
	/* A file cannot also be a directory: no file's path is the directory of
	 * another's ("/a" with "/a/b"), wherever they sort ("/a-x" between). */
	for (int i = 0; i < nfiles; i++) {
		const char *p = files[i].path;
		for (const char *c = strchr(p + 1, '/'); c; c = strchr(c + 1, '/')) {
			int k = find_file_n(p, (size_t)(c - p));
			if (k < 0)
				continue;
			snprintf(where, sizeof(where), "files.\"%.*s\"", PATH_MAX_LEN, files[k].path);
			replay_files_release();
			return replay_bad(file, where, "is a file, yet other paths are below it");
		}
	}
	if (build_dirs() != 0) {
		replay_files_release();
		return replay_bad(file, "files", "out of memory");
	}
	return 0;
}

int replay_files_read_file(const char *path, const char **data, size_t *len)
{
	if (!path)
		return 0;
	struct file key = { (char *)path, NULL, 0 };
	const struct file *f = nfiles ? bsearch(&key, files, (size_t)nfiles, sizeof(*files), cmp_file) : NULL;
	if (!f)
		return 0;
	*data = f->data;
	*len = f->len;
	return 1;
}

int replay_files_list_dir(const char *path, const char *const **names, int *count)
{
	for (int i = 0; path && i < ndirs; i++) {
		if (!strcmp(dirs[i].path, path)) {
			*names = (const char *const *)dirs[i].names;
			*count = dirs[i].count;
			return 1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- recording */

/* path -> contents, as the detectors read them while recording. */
static json_t *kept;

void replay_files_note(const char *path, const char *data, size_t len)
{
	json_t *v = path && data && bad_path(path) == NULL ? json_stringn(data, len) : NULL;
	pthread_mutex_lock(&replay_rec_lock);
	if (v && !kept && !(kept = json_object()))
		replay_rec_oom = true;
	if (v && kept && json_object_size(kept) < FILES_MAX)
		replay_put(&replay_rec_oom, kept, path, v);
	else
		json_decref(v); /* not text: no file the format can hold */
	pthread_mutex_unlock(&replay_rec_lock);
}

void replay_files_forget(void)
{
	pthread_mutex_lock(&replay_rec_lock);
	json_decref(kept);
	kept = NULL;
	pthread_mutex_unlock(&replay_rec_lock);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "files", sorted by path. */
void replay_files_record(json_t *root)
{
	pthread_mutex_lock(&replay_rec_lock);
	size_t n = json_object_size(kept), k = 0;
	const char **keys = n ? calloc(n, sizeof(*keys)) : NULL;
	const char *key;
	json_t *v;
	json_object_foreach(kept, key, v) {
		if (keys)
			keys[k++] = key;
	}
	if (keys) {
		qsort(keys, n, sizeof(*keys), cmp_key);
		json_t *obj = json_object();
		for (size_t i = 0; i < n; i++)
			replay_put(&replay_rec_oom, obj, keys[i], json_incref(json_object_get(kept, keys[i])));
		replay_put(&replay_rec_oom, root, "files", obj);
	} else if (n) {
		replay_rec_oom = true;
	}
	free(keys);
	pthread_mutex_unlock(&replay_rec_lock);
}

__attribute__((destructor)) static void files_release(void)
{
	replay_files_forget();
}
