/*
 * "files": sysfs trees recorded for the detectors that read the kernel's
 * view (AMD's KFD topology), answered to the core through read_file and
 * list_dir.  The section is {"<absolute path>": "<contents>", ...}; the
 * directories are those the paths imply, each listing its children sorted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci.h"
#include "replay_internal.h"

#define FILES_MAX       16384       /* an 8-GPU MI300X in CPX mode has ~4,300 */
#define FILE_SIZE_MAX   (64 * 1024) /* sysfs attributes are at most a page */
#define FILES_BYTES_MAX (64 * 1024 * 1024)
#define PATH_MAX_LEN    1024

/*
 * Every file and directory is a node, sorted by directory and then name: one
 * binary search finds a file, and a directory's children lie together, their
 * names at the same indices of names[].  A node's directory is the first dlen
 * bytes of path, a key of the section ("" for the root); its name lies in
 * arena, in a copy of the path whose '/'s are NULs.  A file's data is its
 * string in the section, or its bytes decoded into arena; a directory's NULL.
 */
struct node {
	const char *path, *name, *data;
	size_t dlen, len;
};
static json_t *section;
static struct node *nodes;
static const char **names;
static char *arena;
static size_t nnodes;

void replay_files_release(void)
{
	json_decref(section);
	free(nodes);
	free(names);
	free(arena);
	section = NULL;
	nodes = NULL;
	names = NULL;
	arena = NULL;
	nnodes = 0;
}

/* An absolute path without empty, "." or ".." components. */
static const char *files_bad_path(const char *p)
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

static int files_cmp(const struct node *a, const struct node *b, int by_name)
{
	int c = memcmp(a->path, b->path, a->dlen < b->dlen ? a->dlen : b->dlen);
	if (!c && a->dlen != b->dlen)
		c = a->dlen < b->dlen ? -1 : 1;
	return c || !by_name ? c : strcmp(a->name, b->name);
}

/* A file before the directories that share its path, to find them. */
static int files_order(const void *pa, const void *pb)
{
	const struct node *a = pa, *b = pb;
	int c = files_cmp(a, b, 1);
	return c ? c : (b->data != NULL) - (a->data != NULL);
}

/* The first node not before key. */
static size_t files_find(const struct node *key, int by_name)
{
	size_t lo = 0, hi = nnodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (files_cmp(&nodes[mid], key, by_name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Refuses the section, keeping nothing of it. */
#define FILES_FAIL(...) return (replay_files_release(), replay_bad(file, __VA_ARGS__))

int replay_files_read(const char *file, json_t *value)
{
	char where[PATH_MAX_LEN + 16];
	if (!json_is_object(value))
		return replay_bad(file, "files", "expected an object of absolute paths and their contents");
	size_t count = json_object_size(value), total = 0, cap = 1, size = 1, used = 0;
	if (count > FILES_MAX)
		return replay_bad(file, "files", "%zu files, more than %d", count, FILES_MAX);
	replay_files_release();
	const char *path;
	json_t *contents;
	json_object_foreach(value, path, contents)
	{
		size_t plen = strnlen(path, PATH_MAX_LEN + 1), n = json_string_length(json_object_get(contents, "hex"));
		size += plen + 2 + (n / 2 < FILE_SIZE_MAX ? n / 2 : FILE_SIZE_MAX);
		for (size_t i = 0; i < plen; i++)
			cap += path[i] == '/'; /* a node per component */
	}
	section = json_incref(value);
	if (!(nodes = calloc(cap, sizeof(*nodes))) || !(arena = malloc(size)))
		FILES_FAIL("files", "out of memory");
	json_object_foreach(value, path, contents)
	{
		snprintf(where, sizeof(where), "files.\"%.*s\"", PATH_MAX_LEN, path);
		const char *why = files_bad_path(path);
		if (why)
			FILES_FAIL(where, "the path %s", why);
		json_t *hex = json_object_get(contents, "hex"); /* a binary file (PCI config space) */
		if (!json_is_string(contents) && !json_is_string(hex))
			FILES_FAIL(where, "expected the file's contents, a string or {\"hex\": \"...\"}");
		const char *s = json_string_value(hex ? hex : contents);
		size_t n = json_string_length(hex ? hex : contents), len = hex ? n / 2 : n, plen = strlen(path);
		if (len > FILE_SIZE_MAX || (total += len) > FILES_BYTES_MAX)
			FILES_FAIL(where, "larger than %d bytes (or the files together than %d)", FILE_SIZE_MAX,
				   FILES_BYTES_MAX);
		char *segs = arena + used, *bytes = segs + plen + 1;
		for (size_t i = 0; hex && i < len; i++) {
			int hi = dc_hexval((unsigned char)s[2 * i]), lo = dc_hexval((unsigned char)s[2 * i + 1]);
			if (hi < 0 || lo < 0)
				FILES_FAIL(where, "\"hex\" must be pairs of hex digits");
			bytes[i] = (char)(hi << 4 | lo);
		}
		if (hex && n % 2)
			FILES_FAIL(where, "\"hex\" must be pairs of hex digits");
		bytes[hex ? len : 0] = '\0';
		used += plen + 2 + (hex ? len : 0);
		for (size_t i = 0; i <= plen; i++)
			segs[i] = path[i] == '/' ? '\0' : path[i];
		size_t dlen = (size_t)(strrchr(path, '/') - path);
		for (size_t i = 0; i <= dlen; i++)
			if (path[i] == '/')
				nodes[nnodes++] =
					(struct node){ path, segs + i + 1, i == dlen ? hex ? bytes : s : NULL, i, len };
	}
	qsort(nodes, nnodes, sizeof(*nodes), files_order);
	/* Drops the directories found twice.  One that is also a file refuses the
	 * section, naming the file above the first path below a file by strcmp,
	 * as a check of the sorted paths' prefixes found it. */
	const char *below = NULL, *above = NULL;
	size_t w = 0;
	for (size_t i = 0; i < nnodes; i++) {
		if (!w || files_cmp(&nodes[w - 1], &nodes[i], 1))
			nodes[w++] = nodes[i];
		else if (nodes[w - 1].data && (!below || strcmp(nodes[i].path, below) < 0))
			below = nodes[i].path, above = nodes[w - 1].path;
	}
	nnodes = w;
	if (above) {
		snprintf(where, sizeof(where), "files.\"%.*s\"", PATH_MAX_LEN, above);
		FILES_FAIL(where, "is a file, yet other paths are below it");
	}
	if (!(names = calloc(nnodes + 1, sizeof(*names))))
		FILES_FAIL("files", "out of memory");
	for (size_t i = 0; i < nnodes; i++)
		names[i] = nodes[i].name;
	return 0;
}

int replay_files_read_file(const char *path, const char **data, size_t *len)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash)
		return 0;
	struct node key = { path, slash + 1, NULL, (size_t)(slash - path), 0 };
	size_t i = files_find(&key, 1);
	if (i == nnodes || files_cmp(&nodes[i], &key, 1) || !nodes[i].data)
		return 0;
	*data = nodes[i].data;
	*len = nodes[i].len;
	return 1;
}

int replay_files_list_dir(const char *path, const char *const **list, int *count)
{
	if (!path || !*path)
		return 0;
	struct node key = { path, "", NULL, strcmp(path, "/") ? strlen(path) : 0, 0 };
	size_t i = files_find(&key, 0), end = i;
	while (end < nnodes && !files_cmp(&nodes[end], &key, 0))
		end++;
	if (end == i)
		return 0;
	*list = names + i;
	*count = (int)(end - i);
	return 1;
}

/* ------------------------------------------------------------- recording */

/* path -> contents, as the detectors read them while recording. */
static json_t *kept;

/* A file's contents as the section holds them: text as a string, anything
 * else (NUL bytes, not UTF-8: PCI config space) as {"hex": "..."}. */
static json_t *files_contents(const char *data, size_t len)
{
	json_t *text = memchr(data, '\0', len) ? NULL : json_stringn(data, len);
	char *hex = text ? NULL : calloc(2 * len + 1, 1);
	for (size_t i = 0; hex && i < len; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)data[i]);
	if (hex)
		text = json_pack("{s:s}", "hex", hex);
	free(hex);
	return text;
}

void replay_files_note(const char *path, const char *data, size_t len)
{
	json_t *v = path && data && !files_bad_path(path) ? files_contents(data, len) : NULL;
	pthread_mutex_lock(&replay_rec_lock);
	if (v && !kept && !(kept = json_object()))
		replay_rec_oom = true;
	if (v && kept && json_object_size(kept) < FILES_MAX)
		replay_put(&replay_rec_oom, kept, path, v);
	else
		json_decref(v);
	pthread_mutex_unlock(&replay_rec_lock);
}

/* Also when the component is unloaded, for leak checkers. */
__attribute__((destructor)) void replay_files_forget(void)
{
	pthread_mutex_lock(&replay_rec_lock);
	json_decref(kept);
	kept = NULL;
	pthread_mutex_unlock(&replay_rec_lock);
}

/* "files", sorted by path: Jansson sorts the keys as it writes them, and an
 * object read back keeps its keys' order. */
void replay_files_record(json_t *root)
{
	pthread_mutex_lock(&replay_rec_lock);
	char *text = json_object_size(kept) ? json_dumps(kept, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	if (json_object_size(kept))
		replay_put(&replay_rec_oom, root, "files", text ? json_loads(text, 0, NULL) : NULL);
	free(text);
	pthread_mutex_unlock(&replay_rec_lock);
}
