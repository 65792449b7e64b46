/* SPDX-License-Identifier: BSD-3-Clause */
/* --format slurm-topology: Slurm's topology/block lines (topology.conf(5),
 * TopologyPlugin=topology/block), one block per NVLink domain, from many
 * nodes' `dmaconn --json` documents: the files named on the command line
 * (a node is its file's name without ".json"), else every document on
 * standard input (one after another, each named by a "node: " before it as
 * pdsh and clush write, or by its devices' "host" as --mpi output has).  A domain is the NVSwitch fabric's cluster
 * UUID and clique, the multicast clique where the document gives one
 * (multicast_clique_id), as GPU feature discovery's nvidia.com/gpu.clique;
 * a node whose GPUs are in none, or in several, gets no block, and a
 * comment and a line on err say why.  The nodes of a block are a Slurm
 * hostlist expression ("tray[01-18]"). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "format.h"

struct st_node {
	char *name;
	char domain[160]; /* "uuid.clique", empty when none */
	char why[320];    /* why there is none */
	int gpus;
};

struct st {
	struct st_node *nodes;
	int n, cap;
	int failed; /* an input could not be used: exit status 1 */
	FILE *err;
};

/* A Slurm node name: what a hostlist expression holds without quoting. */
static int st_name_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return 0;
	return 1;
}

/* A property of device dev as text (an integer as decimal), "" when absent. */
static const char *st_prop(json_t *dev, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(dev, key);
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	return "";
}

/* Text for err and comments: no control character, at most len - 1 bytes. */
static void st_clean(char *out, size_t len, const char *s)
{
	size_t n = 0;
	for (; s && *s && n + 1 < len; s++)
		out[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	out[n] = '\0';
}

/* A new node called name: 0 (*out set), 1 when the name is taken (said on
 * err), -1 when out of memory. */
static int st_add(struct st *t, const char *name, struct st_node **out)
{
	for (int k = 0; k < t->n; k++)
		if (!strcmp(t->nodes[k].name, name)) {
			fprintf(t->err, "dmaconn: --format slurm-topology: node %s is given twice: its second document is "
				"left out\n", name);
			t->failed = 1;
			return 1;
		}
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		struct st_node *grown = realloc(t->nodes, (size_t)cap * sizeof(*grown));
		if (!grown)
			return -1;
		t->nodes = grown;
		t->cap = cap;
	}
	struct st_node *node = &t->nodes[t->n];
	memset(node, 0, sizeof(*node));
	if (!(node->name = strdup(name)))
		return -1;
	t->n++;
	*out = node;
	return 0;
}

/* The NVLink domain of the devices of r whose "host" is host (every device
 * when host is NULL): node->domain, else node->why. */
static void st_domain(struct st_node *node, json_t *devices, const char *host)
{
	char first[160] = "", buf[4][32];
	size_t k;
	json_t *dev;
	json_array_foreach(devices, k, dev)
	{
		if (host && strcmp(st_prop(dev, DMACONN_PROP_HOST, buf[0], sizeof(buf[0])), host))
			continue;
		const char *state = st_prop(dev, DMACONN_PROP_FABRIC_STATE, buf[0], sizeof(buf[0]));
		const char *status = st_prop(dev, DMACONN_PROP_FABRIC_STATUS, buf[1], sizeof(buf[1]));
		const char *cluster = st_prop(dev, DMACONN_PROP_CLUSTER_UUID, buf[2], sizeof(buf[2]));
		const char *clique = st_prop(dev, "multicast_clique_id", buf[3], sizeof(buf[3]));
		char bus[64], domain[160];
		if (!*clique)
			clique = st_prop(dev, DMACONN_PROP_CLIQUE_ID, buf[3], sizeof(buf[3]));
		st_clean(bus, sizeof(bus), st_prop(dev, DMACONN_PROP_PCI_BUS_ID, domain, sizeof(domain)));
		int uuid_ok = *cluster && strlen(cluster) < 64 && strspn(cluster, "0123456789abcdefABCDEF-") == strlen(cluster);
		int clique_ok = *clique && strlen(clique) < 16 && strspn(clique, "0123456789") == strlen(clique);
		int gpu = (int)node->gpus++;
		if (node->why[0])
			continue;
		if (!*state || !strcmp(state, "not_supported"))
			snprintf(node->why, sizeof(node->why), "GPU %d (%s) has no NVSwitch fabric (%s)", gpu, bus,
				 *state ? "fabric_state not_supported" : "no fabric facts");
		else if (strcmp(state, "completed"))
			snprintf(node->why, sizeof(node->why), "GPU %d (%s): NVSwitch fabric registration %s", gpu, bus,
				 state);
		else if (*status && strcmp(status, DMACONN_FABRIC_STATUS_SUCCESS))
			snprintf(node->why, sizeof(node->why), "GPU %d (%s): NVSwitch fabric registration completed with %s",
				 gpu, bus, status);
		else if (!uuid_ok || !clique_ok)
			snprintf(node->why, sizeof(node->why), "GPU %d (%s): no cluster UUID and clique id", gpu, bus);
		else if (strspn(cluster, "0-") == strlen(cluster))
			snprintf(node->why, sizeof(node->why), "GPU %d (%s): cluster UUID zero, not in a multi-node NVLink "
				 "domain", gpu, bus);
		else if (strspn(clique, "0") == strlen(clique))
			snprintf(node->why, sizeof(node->why), "GPU %d (%s): clique id 0, not in a multi-node NVLink "
				 "domain", gpu, bus);
		if (node->why[0])
			continue;
		snprintf(domain, sizeof(domain), "%s.%s", cluster, clique);
		if (!*first)
			snprintf(first, sizeof(first), "%s", domain);
		else if (strcmp(first, domain))
			snprintf(node->why, sizeof(node->why), "its GPUs are in different NVLink domains (%.120s, %.120s)", first,
				 domain);
	}
	if (!node->gpus && !node->why[0])
		snprintf(node->why, sizeof(node->why), "no NVIDIA GPU");
	if (!node->why[0])
		st_clean(node->domain, sizeof(node->domain), first);
	else
		st_clean(node->why, sizeof(node->why), node->why);
}

/* The cuda result whose devices say the most: cuda/multicast (it names the
 * multicast clique), cuda/nvlink, else another but cuda/verified. */
static json_t *st_result(json_t *doc)
{
	json_t *results = json_object_get(doc, "results"), *r, *best = NULL;
	int rank = 0;
	size_t k;
	json_array_foreach(results, k, r)
	{
		const char *type = json_string_value(json_object_get(r, "device_type"));
		const char *conn = json_string_value(json_object_get(r, "connection_type"));
		if (!type || !conn || strcmp(type, "cuda") || !strcmp(conn, "verified") ||
		    !json_is_array(json_object_get(r, "devices")))
			continue;
		int mine = !strcmp(conn, "multicast") ? 3 : !strcmp(conn, "nvlink") ? 2 : 1;
		if (mine > rank) {
			rank = mine;
			best = r;
		}
	}
	return best;
}

/* One node's document (name: from its file, or NULL); source names it in messages. */
static int st_document(struct st *t, json_t *doc, const char *name, const char *source)
{
	char shown[300], buf[64];
	st_clean(shown, sizeof(shown), source);
	if (!json_is_object(doc) || json_integer_value(json_object_get(doc, "version")) != 1 ||
	    !json_is_array(json_object_get(doc, "results"))) {
		fprintf(t->err, "dmaconn: --format slurm-topology: %s is not a dmaconn --json document of version 1\n",
			shown);
		t->failed = 1;
		return 0;
	}
	json_t *r = st_result(doc), *devices = json_object_get(r, "devices"), *dev;
	const char *error = json_string_value(json_object_get(doc, "error"));
	/* --mpi output: the devices of each host are a node. */
	size_t k;
	int hosts = 0;
	json_array_foreach(devices, k, dev)
	{
		const char *host = st_prop(dev, DMACONN_PROP_HOST, buf, sizeof(buf));
		int seen = !*host;
		for (size_t m = 0; m < k && !seen; m++)
			seen = !strcmp(st_prop(json_array_get(devices, m), DMACONN_PROP_HOST, buf, sizeof(buf)), host);
		if (seen)
			continue;
		hosts++;
		char host_copy[80];
		snprintf(host_copy, sizeof(host_copy), "%s", host);
		if (!st_name_ok(host_copy)) {
			st_clean(host_copy, sizeof(host_copy), host);
			fprintf(t->err, "dmaconn: --format slurm-topology: %s: host %s is not a Slurm node name: left out\n",
				shown, host_copy);
			t->failed = 1;
			continue;
		}
		struct st_node *node = NULL;
		int rc = st_add(t, host_copy, &node);
		if (rc < 0)
			return -1;
		if (rc == 0)
			st_domain(node, devices, host_copy);
	}
	if (hosts)
		return 0;
	if (!name) {
		fprintf(t->err, "dmaconn: --format slurm-topology: %s names no node: give each node's document as a file "
			"named after the node, or after \"node: \" as pdsh and clush write\n", shown);
		t->failed = 1;
		return 0;
	}
	struct st_node *node = NULL;
	int rc = st_add(t, name, &node);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (error)
		snprintf(node->why, sizeof(node->why), "its detection failed: %s", error);
	if (error)
		st_clean(node->why, sizeof(node->why), node->why);
	else if (!r)
		snprintf(node->why, sizeof(node->why), "no NVIDIA GPU result in its document");
	else
		st_domain(node, devices, NULL);
	return 0;
}

/* A node's name from its file: the base name without ".json". */
static int st_file_name(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);
	if (n > 5 && !strcmp(base + n - 5, ".json"))
		n -= 5;
	if (n + 1 > len)
		return -1;
	memcpy(out, base, n);
	out[n] = '\0';
	return st_name_ok(out) ? 0 : -1;
}

/* Every document of the text (one after another), as from standard input. */
static int st_stream(struct st *t, const char *text, size_t len, const char *source)
{
	size_t at = 0;
	int count = 0;
	for (;;) {
		while (at < len && isspace((unsigned char)text[at]))
			at++;
		if (at >= len)
			break;
		/* "tray01: {...}": a line as pdsh and clush prefix it, naming the node. */
		char name[80] = "", where[160];
		const char *colon = text[at] != '{' ? memchr(text + at, ':', len - at) : NULL;
		size_t n = colon ? (size_t)(colon - (text + at)) : 0;
		if (colon && n < sizeof(name) && !memchr(text + at, '\n', n)) {
			memcpy(name, text + at, n);
			name[n] = '\0';
			at += n + 1;
			while (at < len && (text[at] == ' ' || text[at] == '\t'))
				at++;
		}
		snprintf(where, sizeof(where), "%s, document %d%s%s", source, ++count, *name ? " of " : "", name);
		st_clean(where, sizeof(where), where);
		if (*name && !st_name_ok(name)) {
			fprintf(t->err, "dmaconn: --format slurm-topology: %s: not a Slurm node name\n", where);
			t->failed = 1;
			return 0;
		}
		json_error_t jerr;
		json_t *doc = json_loadb(text + at, len - at, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
		if (!doc) {
			fprintf(t->err, "dmaconn: --format slurm-topology: %s: %s\n", where, jerr.text);
			t->failed = 1;
			return 0;
		}
		int rc = st_document(t, doc, *name ? name : NULL, where);
		json_decref(doc);
		if (rc)
			return rc;
		at += jerr.position > 0 ? (size_t)jerr.position : len - at;
	}
	if (!count) {
		fprintf(t->err, "dmaconn: --format slurm-topology: %s holds no document\n", source);
		t->failed = 1;
	}
	return 0;
}

/* No document of one node comes near this. */
#define ST_MAX_INPUT ((size_t)1 << 30)

/* Reads all of fd; NULL when it cannot (errno set: EFBIG past ST_MAX_INPUT). */
static char *st_read(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *text = malloc(cap);
	while (text) {
		ssize_t got = read(fd, text + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				break;
			int e = errno;
			free(text);
			errno = e;
			return NULL;
		}
		n += (size_t)got;
		if (n < cap)
			continue;
		char *grown = cap < ST_MAX_INPUT ? realloc(text, cap * 2) : NULL;
		if (!grown) {
			free(text);
			errno = cap < ST_MAX_INPUT ? ENOMEM : EFBIG;
			return NULL;
		}
		text = grown;
		cap *= 2;
	}
	*len = n;
	return text;
}

/* A document's file, refusing what is not a regular file (a FIFO would
 * wait for a writer, a device could be read without end); -1, errno set. */
static int st_open(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* A name as a hostlist sees it: prefix, then a trailing number. */
struct st_host {
	const char *name;
	size_t prefix; /* length before the trailing digits */
	size_t width;  /* of the trailing digits, 0 when none */
	int padded;    /* they start with a 0: the width is part of the name */
	unsigned long long value;
};

static int st_host_order(const void *a, const void *b)
{
	const struct st_host *x = a, *y = b;
	size_t p = x->prefix < y->prefix ? x->prefix : y->prefix;
	int c = strncmp(x->name, y->name, p);
	if (c || x->prefix != y->prefix)
		return c ? c : x->prefix < y->prefix ? -1 : 1;
	if ((x->width > 0) != (y->width > 0))
		return x->width ? 1 : -1;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->width < y->width ? -1 : x->width > y->width;
}

/*
 * names as one Slurm hostlist expression: "tray[01-18],gpu-a".  A bracket
 * holds numbers of one prefix, written at one width where any starts with
 * a 0 (Slurm pads each to the width of the range's first), else as they are.
 */
static void st_hostlist(FILE *out, const char **names, int n)
{
	struct st_host *h = calloc((size_t)n + 1, sizeof(*h));
	if (!h) {
		for (int k = 0; k < n; k++)
			fprintf(out, k ? ",%s" : "%s", names[k]);
		return;
	}
	for (int k = 0; k < n; k++) {
		size_t len = strlen(names[k]), p = len;
		while (p > 0 && isdigit((unsigned char)names[k][p - 1]))
			p--;
		h[k].name = names[k];
		h[k].prefix = len - p > 0 && len - p <= 18 ? p : len;
		h[k].width = len - h[k].prefix;
		h[k].value = h[k].width ? strtoull(names[k] + p, NULL, 10) : 0;
		h[k].padded = h[k].width > 1 && names[k][h[k].prefix] == '0';
	}
	qsort(h, (size_t)n, sizeof(*h), st_host_order);
	for (int k = 0; k < n;) {
		/* The group: fixed at a width once a padded number is in it. */
		size_t fixed = h[k].padded ? h[k].width : 0, widest = h[k].width;
		int end = k + 1;
		for (; end < n && h[k].width && h[end].width && h[end].prefix == h[k].prefix &&
		       !strncmp(h[end].name, h[k].name, h[k].prefix);
		     end++) {
			if (fixed ? h[end].width != fixed : h[end].padded && widest != h[end].width)
				break;
			if (h[end].padded)
				fixed = h[end].width;
			widest = h[end].width > widest ? h[end].width : widest;
		}
		fputs(k ? "," : "", out);
		if (end - k == 1) {
			fputs(h[k].name, out);
			k = end;
			continue;
		}
		fprintf(out, "%.*s[", (int)h[k].prefix, h[k].name);
		for (int a = k; a < end;) {
			int b = a, w = fixed ? (int)fixed : 1;
			while (b + 1 < end && h[b + 1].value == h[b].value + 1)
				b++;
			fprintf(out, "%s%0*llu", a > k ? "," : "", w, h[a].value);
			if (b > a)
				fprintf(out, "-%0*llu", w, h[b].value);
			a = b + 1;
		}
		fputc(']', out);
		k = end;
	}
	free(h);
}

int dc_format_slurm_topology(FILE *out, FILE *err, const struct dc_format_input *in)
{
	struct st t = { .err = err };
	int oom = 0;
	for (int f = 0; !oom && f < (in->nfiles ? in->nfiles : 1); f++) {
		const char *path = in->nfiles ? in->files[f] : "-";
		int from_stdin = !strcmp(path, "-");
		char shown[300], name[80];
		st_clean(shown, sizeof(shown), from_stdin ? "standard input" : path);
		int fd = from_stdin ? STDIN_FILENO : st_open(path);
		size_t len = 0;
		char *text = fd >= 0 ? st_read(fd, &len) : NULL;
		if (!text) {
			fprintf(err, "dmaconn: --format slurm-topology: cannot read %s: %s\n", shown,
				errno == EINVAL ? "not a regular file" : strerror(errno));
			t.failed = 1;
		} else if (from_stdin) {
			oom = st_stream(&t, text, len, shown) != 0;
		} else if (st_file_name(path, name, sizeof(name)) != 0) {
			fprintf(err, "dmaconn: --format slurm-topology: %s: its name is not a Slurm node name (the node is "
				"its file's name without .json): left out\n", shown);
			t.failed = 1;
		} else {
			json_error_t jerr;
			json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
			if (!doc) {
				fprintf(err, "dmaconn: --format slurm-topology: %s: %s\n", shown, jerr.text);
				t.failed = 1;
			} else {
				oom = st_document(&t, doc, name, shown) != 0;
			}
			json_decref(doc);
		}
		free(text);
		if (fd >= 0 && !from_stdin)
			close(fd);
	}
	const char **names = calloc((size_t)t.n + 1, sizeof(*names));
	char *done = calloc((size_t)t.n + 1, 1);
	if (oom || !names || !done) {
		fputs("dmaconn: out of memory\n", err);
		t.failed = 1;
	} else {
		int blocks = 0, smallest = 0, largest = 0;
		fprintf(out, "# dmaconn: Slurm topology/block (topology.conf, TopologyPlugin=topology/block): one block "
			"per NVLink domain of %d node%s\n", t.n, t.n == 1 ? "" : "s");
		for (int k = 0; k < t.n; k++) {
			if (done[k] || !t.nodes[k].domain[0])
				continue;
			int count = 0, gpus = 0;
			for (int m = k; m < t.n; m++)
				if (!done[m] && !strcmp(t.nodes[m].domain, t.nodes[k].domain)) {
					names[count++] = t.nodes[m].name;
					gpus += t.nodes[m].gpus;
					done[m] = 1;
				}
			const char *dot = strrchr(t.nodes[k].domain, '.');
			int cluster = (int)(dot - t.nodes[k].domain);
			fprintf(out, "# dmaconn: NVLink domain %d: cluster %.*s, clique %s: %d node%s, %d GPU%s\n", ++blocks,
				cluster, t.nodes[k].domain, dot + 1, count, count == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s");
			fprintf(out, "BlockName=nvl_%.*s_%s Nodes=", cluster, t.nodes[k].domain, dot + 1);
			st_hostlist(out, names, count);
			fputc('\n', out);
			if (!smallest || count < smallest)
				smallest = count;
			if (count > largest)
				largest = count;
		}
		/* Without BlockSizes, Slurm takes the first block's node count as
		 * the base block size, aggregates 1, 2, 4, 8 and 16 blocks, and
		 * refuses to start when a block has fewer nodes than the base:
		 * domains of different sizes (a rack not full) say the same
		 * levels over the smallest domain. */
		if (smallest != largest)
			fprintf(out, "# dmaconn: BlockSizes: Slurm's default levels over the smallest domain's %d node%s "
				"(every block must hold at least the base block size)\nBlockSizes=%d,%d,%d,%d,%d\n",
				smallest, smallest == 1 ? "" : "s", smallest, 2 * smallest, 4 * smallest, 8 * smallest,
				16 * smallest);
		for (int k = 0; k < t.n; k++) {
			if (t.nodes[k].domain[0])
				continue;
			fprintf(out, "# dmaconn: node %s has no NVLink domain, so no block: %s\n", t.nodes[k].name,
				t.nodes[k].why);
			fprintf(err, "dmaconn: --format slurm-topology: node %s has no NVLink domain, so no block: %s\n",
				t.nodes[k].name, t.nodes[k].why);
		}
	}
	for (int k = 0; k < t.n; k++)
		free(t.nodes[k].name);
	free(t.nodes);
	free(names);
	free(done);
	return t.failed;
}
