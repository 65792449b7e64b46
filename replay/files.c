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
#include "model/host.h"
#include "pci.h"
#include "sysfs.h"

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

/* The bytes that pairs of hex digits spell, NUL-terminated; NULL when s is
 * not such pairs (or out of memory). */
static char *hex_decode(const char *s, size_t n)
{
	if (n % 2)
		return NULL;
	char *out = malloc(n / 2 + 1);
	for (size_t i = 0; out && i < n / 2; i++) {
		int hi = dc_hexval((unsigned char)s[2 * i]), lo = dc_hexval((unsigned char)s[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			free(out);
			return NULL;
		}
		out[i] = (char)(hi << 4 | lo);
	}
	if (out)
		out[n / 2] = '\0';
	return out;
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
		/* A binary file (PCI config space) is {"hex": "..."}. */
		json_t *hex = json_is_object(contents) ? json_object_get(contents, "hex") : NULL;
		if (!json_is_string(contents) && !json_is_string(hex))
			goto bad_value;
		size_t len = hex ? json_string_length(hex) / 2 : json_string_length(contents);
		if (len > FILE_SIZE_MAX || (total += len) > FILES_BYTES_MAX)
			goto too_big;
		struct file *f = &files[nfiles];
		f->path = strdup(path);
		f->data = hex ? hex_decode(json_string_value(hex), json_string_length(hex))
			      : dup_n(json_string_value(contents), len);
		f->len = len;
		if (f->path && hex && !f->data) {
			free(f->path);
			goto bad_hex;
		}
		nfiles++;
		if (!f->path || !f->data)
			goto oom;
		continue;
	bad_path:
		replay_files_release();
		return replay_bad(file, where, "the path %s", why);
	bad_value:
		replay_files_release();
		return replay_bad(file, where, "expected the file's contents, a string or {\"hex\": \"...\"}");
	bad_hex:
		replay_files_release();
		return replay_bad(file, where, "\"hex\" must be pairs of hex digits");
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

#define KFD_NODES "/sys/class/kfd/kfd/topology/nodes"

struct rec_files {
	json_t *obj;
	const char *root;
	int count;
	size_t bytes;
};

/* Adds the file at path (as read below root) when it exists and fits. */
static void rec_add(struct rec_files *r, const char *path, char *buf, size_t len)
{
	if (r->count >= FILES_MAX)
		return;
	int n = dc_sysfs_read_at(r->root, path, buf, len);
	if (n < 0 || r->bytes + (size_t)n > FILES_BYTES_MAX)
		return;
	json_t *s = json_stringn(buf, (size_t)n);
	if (s && json_object_set_new(r->obj, path, s) == 0) {
		r->count++;
		r->bytes += (size_t)n;
	}
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int cmp_numeric(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);
	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

/* The numeric entries of dir, in numeric order; count (0 when missing). */
static int rec_list(struct rec_files *r, const char *dir, char ***names)
{
	int n = dc_sysfs_list_at(r->root, dir, names);
	if (n <= 0)
		return 0;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (is_number((*names)[i]) && strlen((*names)[i]) < 10)
			(*names)[k++] = (*names)[i];
		else
			free((*names)[i]);
	}
	qsort(*names, (size_t)k, sizeof(char *), cmp_numeric);
	return k;
}

/* Adds a binary file (PCI config space) as {"hex": "..."}. */
static void rec_add_hex(struct rec_files *r, const char *path, char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	if (r->count >= FILES_MAX)
		return;
	int n = dc_sysfs_read_at(r->root, path, buf, len);
	char *hex = n > 0 && r->bytes + (size_t)n <= FILES_BYTES_MAX ? malloc(2 * (size_t)n + 1) : NULL;
	if (!hex)
		return;
	for (int i = 0; i < n; i++) {
		hex[2 * i] = digits[(unsigned char)buf[i] >> 4];
		hex[2 * i + 1] = digits[(unsigned char)buf[i] & 15];
	}
	hex[2 * n] = '\0';
	json_t *o = json_pack("{s:s}", "hex", hex);
	free(hex);
	if (o && json_object_set_new(r->obj, path, o) == 0) {
		r->count++;
		r->bytes += (size_t)n;
	}
}

static const char *host_root;
static int host_read(const char *path, char *buf, size_t len)
{
	return dc_sysfs_read_at(host_root, path, buf, len);
}
static int host_list(const char *path, char ***names)
{
	return dc_sysfs_list_at(host_root, path, names);
}

/* What the reasons for zeros read (src/model/host.c): the DMI vendor and
 * product, the first processor's flags, and for every NVIDIA GPU its IOMMU
 * group's type and the config space of each PCI function from its root bus
 * down to it. */
static void record_host(struct rec_files *r, char *buf, size_t len)
{
	static const char *const dmi[] = { "/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name" };
	for (size_t k = 0; k < sizeof(dmi) / sizeof(dmi[0]); k++)
		rec_add(r, dmi[k], buf, len);
	int n = dc_sysfs_read_at(r->root, "/proc/cpuinfo", buf, len);
	if ((n > 0 || n == -EFBIG) && r->count < FILES_MAX) {
		/* Only the first processor's flags: the rest is not read. */
		char *flags = !strncmp(buf, "flags", 5) ? buf : strstr(buf, "\nflags");
		if (flags) {
			flags += *flags == '\n';
			size_t fl = strcspn(flags, "\n");
			json_t *v = json_stringn(flags, fl);
			if (v && json_object_set_new(r->obj, "/proc/cpuinfo", v) == 0)
				r->count++;
		}
	}
	struct dc_pci gpus[64];
	int ngpus = dc_sysfs_nvidia_gpus(r->root, gpus, 64);
	ngpus = ngpus > 64 ? 64 : ngpus;
	char ids[64][DC_PCI_BUS_ID_SIZE];
	const char *idp[64];
	for (int i = 0; i < ngpus; i++) {
		dc_pci_format(&gpus[i], ids[i]);
		idp[i] = ids[i];
	}
	struct dc_pci_chain *chains = calloc((size_t)ngpus + 1, sizeof(*chains));
	if (!chains)
		return;
	host_root = r->root;
	struct dc_fs fs = { host_read, host_list };
	dc_host_chains(&fs, idp, ngpus, chains);
	for (int i = 0; i < ngpus; i++) {
		char path[1200];
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group/type", ids[i]);
		rec_add(r, path, buf, len);
		for (int k = 1; k < chains[i].depth; k++) {
			char dir[1100];
			dc_host_dir(&chains[i], k, dir, sizeof(dir));
			snprintf(path, sizeof(path), "%s/config", dir);
			if (!json_object_get(r->obj, path))
				rec_add_hex(r, path, buf, len);
		}
	}
	free(chains);
}

/* What the KFD detectors read: every node's properties and name, its links'
 * properties, and the DRM product name of its render node; and what the
 * reasons for zeros read (record_host). */
static void record_live(json_t *root)
{
	const char *sysroot = secure_getenv("DMACONN_SYSFS_ROOT");
	struct rec_files r = { json_object(), sysroot && *sysroot ? sysroot : "", 0, 0 };
	char *buf = malloc(FILE_SIZE_MAX + 1);
	char **nodes = NULL;
	if (!r.obj || !buf)
		goto out;
	int nn = rec_list(&r, KFD_NODES, &nodes);
	for (int i = 0; i < nn; i++) {
		char path[512];
		static const char *const kinds[] = { "io_links", "p2p_links" };
		snprintf(path, sizeof(path), KFD_NODES "/%s/properties", nodes[i]);
		rec_add(&r, path, buf, FILE_SIZE_MAX + 1);
		const char *minor = json_string_value(json_object_get(r.obj, path));
		minor = minor ? strstr(minor, "\ndrm_render_minor ") : NULL;
		snprintf(path, sizeof(path), KFD_NODES "/%s/name", nodes[i]);
		rec_add(&r, path, buf, FILE_SIZE_MAX + 1);
		if (minor) {
			snprintf(path, sizeof(path), "/sys/class/drm/renderD%lu/device/product_name",
				 strtoul(minor + 18, NULL, 10));
			rec_add(&r, path, buf, FILE_SIZE_MAX + 1);
		}
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			char dir[256], **links = NULL;
			snprintf(dir, sizeof(dir), KFD_NODES "/%s/%s", nodes[i], kinds[k]);
			int nl = rec_list(&r, dir, &links);
			for (int l = 0; l < nl; l++) {
				snprintf(path, sizeof(path), "%s/%s/properties", dir, links[l]);
				rec_add(&r, path, buf, FILE_SIZE_MAX + 1);
			}
			dc_free_names(links, nl);
		}
	}
	dc_free_names(nodes, nn);
	record_host(&r, buf, FILE_SIZE_MAX + 1);
	if (r.count)
		json_object_set(root, "files", r.obj);
out:
	free(buf);
	json_decref(r.obj);
}

void replay_files_record(json_t *root)
{
	if (!replay_active()) {
		record_live(root);
		return;
	}
	if (!nfiles)
		return;
	json_t *obj = json_object();
	for (int i = 0; obj && i < nfiles; i++)
		json_object_set_new(obj, files[i].path, json_stringn(files[i].data, files[i].len));
	if (obj)
		json_object_set_new(root, "files", obj);
}
