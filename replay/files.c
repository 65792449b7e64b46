/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "files": sysfs trees recorded for the detectors that read the kernel's
 * view, answered to the core through read_file and list_dir.  Each file, and
 * each directory the paths imply, is a node, sorted by directory and then
 * name: one binary search finds a file, and a directory's children lie
 * together, their names at the same indices of names[].  A node's directory
 * is the first dlen bytes of path, a key of the section ("" for the root);
 * its name lies in arena, in a copy of the path whose '/'s are NULs.  Data is
 * a file's string in the section, or its bytes decoded into arena.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci.h"
#include "replay_internal.h"

#define FILES_MAX       16384       /* an 8-GPU MI300X in CPX mode has ~4,300 */
#define FILE_SIZE_MAX   DMACONN_REPLAY_FILE_MAX
#define FILES_BYTES_MAX (64 * 1024 * 1024)
#define PATH_MAX_LEN    1024

struct node {
	const char *path, *name, *data; /* data NULL for a directory */
	size_t dlen, len;
};
static struct {
	json_t *section;
	struct node *nodes; /* one block with names and arena */
	const char **names;
	char *arena;
	size_t n;
} fs;

void replay_files_release(void)
{
	json_decref(fs.section);
	free(fs.nodes);
	memset(&fs, 0, sizeof(fs));
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
	for (const char *c = p; c; c = strchr(c + 1, '/')) {
		if (c[1] == '/')
			return "has an empty component";
		if (c[1] == '.' && (c[2] == '/' || !c[2] || (c[2] == '.' && (c[3] == '/' || !c[3]))))
			return "has a '.' or '..' component";
	}
	return NULL;
}

/* By directory, then name, then a file before the directories of its path;
 * a key without a name stands for its whole directory. */
static int files_cmp(const void *pa, const void *pb)
{
	const struct node *a = pa, *b = pb;
	int c = memcmp(a->path, b->path, a->dlen < b->dlen ? a->dlen : b->dlen);
	c = c ? c : a->dlen < b->dlen ? -1 : a->dlen > b->dlen;
	c = c || !a->name || !b->name ? c : strcmp(a->name, b->name);
	return c || !a->name || !b->name ? c : (b->data != NULL) - (a->data != NULL);
}

int replay_files_read(const char *file, json_t *value)
{
	char where[PATH_MAX_LEN + 16];
	if (!json_is_object(value))
		return replay_bad(file, "files", "expected an object of absolute paths and their contents");
	size_t count = json_object_size(value), total = 0, nodes = 1, size = 1, hex_bytes = 0, used = 0;
	if (count > FILES_MAX)
		return replay_bad(file, "files", "%zu files, more than %d", count, FILES_MAX);
	replay_files_release();
	const char *path, *below = NULL, *above = NULL;
	json_t *contents;
	json_object_foreach(value, path, contents)
	{
		size_t plen = strnlen(path, PATH_MAX_LEN + 1), n = json_string_length(json_object_get(contents, "hex"));
		size += plen + 2;
		hex_bytes += n / 2;
		for (size_t i = 0; i < plen; i++)
			nodes += path[i] == '/'; /* a node per component */
	}
	fs.section = json_incref(value);
	/* The files' bytes are checked against their limit before they go to arena. */
	fs.nodes = malloc(nodes * (sizeof(*fs.nodes) + sizeof(*fs.names)) + size +
			  (hex_bytes < FILES_BYTES_MAX ? hex_bytes : FILES_BYTES_MAX));
	if (!fs.nodes)
		return replay_bad(file, "files", "out of memory");
	fs.names = (const char **)(fs.nodes + nodes);
	fs.arena = (char *)(fs.names + nodes);
	json_object_foreach(value, path, contents)
	{
		snprintf(where, sizeof(where), "files.\"%.*s\"", PATH_MAX_LEN, path);
		const char *why = files_bad_path(path);
		if (why)
			return replay_bad(file, where, "the path %s", why);
		json_t *hex = json_object_get(contents, "hex"); /* a binary file (PCI config space) */
		if (!json_is_string(contents) && !json_is_string(hex))
			return replay_bad(file, where, "expected the file's contents, a string or {\"hex\": \"...\"}");
		const char *s = json_string_value(hex ? hex : contents);
		size_t n = json_string_length(hex ? hex : contents), len = hex ? n / 2 : n, plen = strlen(path);
		if (len > FILE_SIZE_MAX || (total += len) > FILES_BYTES_MAX)
			return replay_bad(file, where, "larger than %d bytes (or the files together than %d)",
					  FILE_SIZE_MAX, FILES_BYTES_MAX);
		char *segs = fs.arena + used, *bytes = segs + plen + 1;
		if (hex && (n % 2 || strspn(s, "0123456789abcdefABCDEF") < n))
			return replay_bad(file, where, "\"hex\" must be pairs of hex digits");
		for (size_t i = 0; hex && i < len; i++)
			bytes[i] = (char)(dc_hexval((unsigned char)s[2 * i]) << 4 |
					  dc_hexval((unsigned char)s[2 * i + 1]));
		bytes[hex ? len : 0] = '\0'; /* for text, an empty string never read */
		used += plen + 2 + (hex ? len : 0);
		for (size_t i = 0; i <= plen; i++) {
			segs[i] = path[i] == '/' ? '\0' : path[i];
			if (path[i] == '/')
				fs.nodes[fs.n++] = (struct node){ path, segs + i + 1, NULL, i, len };
		}
		fs.nodes[fs.n - 1].data = hex ? bytes : s; /* the last component is the file */
	}
	qsort(fs.nodes, fs.n, sizeof(*fs.nodes), files_cmp);
	/* Drops the directories found twice.  One that is also a file refuses the
	 * section, naming the file above the first path below a file by strcmp,
	 * as a check of the sorted paths' prefixes did. */
	size_t w = 0;
	for (size_t i = 0; i < fs.n; i++) {
		struct node *last = w ? &fs.nodes[w - 1] : NULL, *n = &fs.nodes[i], probe = *n;
		probe.data = last ? last->data : NULL; /* the same path, file or not */
		if (!last || files_cmp(last, &probe)) {
			fs.names[w] = n->name;
			fs.nodes[w++] = *n;
		} else if (last->data && (!below || strcmp(n->path, below) < 0)) {
			below = n->path, above = last->path;
		}
	}
	fs.n = w;
	snprintf(where, sizeof(where), "files.\"%.*s\"", PATH_MAX_LEN, above ? above : "");
	if (above)
		return replay_bad(file, where, "is a file, yet other paths are below it");
	return 0;
}

int replay_files_read_file(const char *path, const char **data, size_t *len)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	struct node key = { path, slash ? slash + 1 : "", "", slash ? (size_t)(slash - path) : 0, 0 };
	const struct node *n = slash && fs.n ? bsearch(&key, fs.nodes, fs.n, sizeof(key), files_cmp) : NULL;
	if (!n)
		return 0;
	*data = n->data;
	*len = n->len;
	return 1;
}

int replay_files_list_dir(const char *path, const char *const **names, int *count)
{
	struct node key = { path, NULL, NULL, path && strcmp(path, "/") ? strlen(path) : 0, 0 };
	const struct node *n = path && *path && fs.n ? bsearch(&key, fs.nodes, fs.n, sizeof(key), files_cmp) : NULL,
			  *end = n;
	while (n && n > fs.nodes && !files_cmp(n - 1, &key))
		n--;
	while (end && end < fs.nodes + fs.n && !files_cmp(end, &key))
		end++;
	if (!n)
		return 0;
	*names = fs.names + (n - fs.nodes);
	*count = (int)(end - n);
	return 1;
}

/* ------------------------------------------------------------- recording */

/* path -> contents, as the detectors read them while recording. */
static json_t *kept;

void replay_files_note(const char *path, const char *data, size_t len)
{
	/* Text as a string; anything else (NUL bytes, not UTF-8: PCI config
	 * space) as {"hex": "..."}. */
	int ok = path && data && !files_bad_path(path);
	json_t *v = ok && !memchr(data, '\0', len) ? json_stringn(data, len) : NULL;
	char *hex = ok && !v ? calloc(2 * len + 1, 1) : NULL;
	for (size_t i = 0; hex && i < len; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)data[i]);
	if (hex)
		v = json_pack("{s:s}", "hex", hex);
	free(hex);
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

/* "files", sorted by path: Jansson sorts the keys as it writes them, and the
 * object read back keeps their order. */
void replay_files_record(json_t *root)
{
	pthread_mutex_lock(&replay_rec_lock);
	char *text = json_object_size(kept) ? json_dumps(kept, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	if (json_object_size(kept))
		replay_put(&replay_rec_oom, root, "files", text ? json_loads(text, 0, NULL) : NULL);
	free(text);
	pthread_mutex_unlock(&replay_rec_lock);
}
