/* SPDX-License-Identifier: BSD-3-Clause */
/* dmaconn: print the DMA connectivity matrices of this machine (or of a
 * recording).  Uses the public API only, plus the optional recorder; JSON
 * goes out through Jansson, one element at a time, so that large results
 * never sit in memory twice. */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../src/codec.h"
#include "../src/mpi/dmaconn_mpi_cli.h"
#include "check.h"
#include "cli.h"
#include "cli_json.h"
#include "record_verify.h"
#include "dmaconn.h"
#include "format.h"
#include "place.h"
#include "topo.h"

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

static const char short_usage[] =
	"Usage: dmaconn [-d TYPE -c CONNECTION] [--json] [--all] [--replay FILE] ...;"
	" try 'dmaconn --help'\n";

static const char help_text[] =
	"Usage: dmaconn [-d TYPE -c CONNECTION] [--format FORMAT | --json] [--replay FILE] [--all]\n"
	"       dmaconn --topo [-d TYPE] | --verify [-d TYPE] [--timeout SECONDS]\n"
	"       dmaconn --nics [-d TYPE] | --bind DEVICE [-d TYPE]\n"
	"       dmaconn --record FILE [--verify] [--replay FILE]\n"
	"       mpirun -np K dmaconn --mpi [-d TYPE -c CONNECTION] [--json]\n"
	"       dmaconn check --expect FILE | --expect-links N | --fully-connected\n"
	"                     [-d TYPE -c CONNECTION] [--match position|identity] [--verify]\n"
	"       dmaconn --list | --help | --version\n"
	"\n"
	"Shows which accelerators can issue load/store and atomic operations on each\n"
	"other's memory: an N x N matrix per detector, 0 for no DMA connectivity,\n"
	"otherwise a connection-specific value (the number of links for nvlink).\n"
	"Without -d/-c the detectors of every vendor whose kernel driver is loaded\n"
	"run (under --replay: every vendor the recording holds devices of).\n"
	"\n"
	"  -d, --device-type TYPE  cuda, rocm or xpu (with -c; alone with --topo,\n"
	"                          --verify or --explain)\n"
	"  -c, --connection CONN   connection type, e.g. nvlink (with -d; --list lists\n"
	"                          them); cuda/verified runs the helper's kernel on\n"
	"                          every pair (or answers from its cache); other runs\n"
	"                          never start GPU work\n"
	"  -a, --all               every registered detector, drivers loaded or not\n"
	"  -j, --json              one JSON object on standard output, errors included\n"
	"  -f, --format FORMAT     text (the default), json (as --json), dot, prometheus,\n"
	"                          nfd, slurm or nccl-xml; slurm-topology [FILE...]\n"
	"                          reads nodes' --json documents; see --format help\n"
	"  -l, --list              list the registered detectors\n"
	"  -t, --topo              a `nvidia-smi topo -m`-like table with each pair's\n"
	"                          peer capabilities (p2p of each vendor a bare run\n"
	"                          shows; -d selects the type)\n"
	"      --nics              each GPU's RDMA NICs nearest first, with the GPUDirect\n"
	"                          RDMA mechanism each can use (or why none), and its\n"
	"                          CPUs, NUMA nodes and NVLink-C2C links (of the first\n"
	"                          vendor a bare run shows; -d selects the type)\n"
	"      --bind DEVICE       the numactl and srun (Slurm CPU mask) prefixes that run\n"
	"                          a process on the CPUs and memory local to DEVICE\n"
	"                          (its index, UUID or PCI bus id)\n"
	"  -v, --verify            prove peer load/store/atomics by running a kernel on\n"
	"                          every pair, in a helper process; measures GB/s\n"
	"      --timeout SECONDS   bound --verify (default 120)\n"
	"      --no-cache          -c verified verifies again and keeps no verdict\n"
	"      --explain           why each pair is 0 or lost NVLinks, one line a pair:\n"
	"                          for -d TYPE -c CONN, each connection of -d TYPE, or\n"
	"                          every detector that finds devices (--json: a list)\n"
	"      --record FILE       write this node's vendor-library answers to FILE (with\n"
	"                          --verify: and cuda/verified's verdict)\n"
	"      --replay FILE       answer every detector from FILE instead of the hardware\n"
	"      --mpi               across the ranks of an MPI job: rank 0 prints the matrix\n"
	"                          over every rank's devices, with a rank/host legend\n"
	"                          (needs libdmaconn_mpi; see docs/multinode.md)\n"
	"  -q, --quiet             no warnings on standard error (JSON keeps them)\n"
	"  -h, --help              this help\n"
	"  -V, --version           the version\n"
	"\n";

/* After the variables' paragraph (cli_help). */
static const char help_end[] =
	"`dmaconn check` compares this node with a good node's --json output, or with\n"
	"a rule, and exits as a Nagios plugin: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN\n"
	"(`dmaconn check --help`).\n"
	"Exit status: 0 when detection ran (warnings included), 1 when it could not\n"
	"(or --verify found a failing pair or checked none), 2 for bad arguments.\n";

/* Appends the variables of kind read for type to out (at *at, len bytes):
 * "A, B<last>C", or nothing when there are none. */
static void cli_variables(char *out, size_t len, size_t *at, dmaconn_device_type type, dmaconn_variable_kind kind,
			  const char *last)
{
	int n = 0;
	while (dmaconn_variable(type, kind, n))
		n++;
	for (int k = 0; k < n && *at < len; k++) {
		const char *sep = k == n - 1 ? last : ", ";
		int w = snprintf(out + *at, len - *at, "%s%s", k ? sep : "", dmaconn_variable(type, kind, k));
		*at += w > 0 ? (size_t)w : 0;
	}
}

/* The same for every device type that reads some, ", " between types, each
 * followed by " (TYPE)" when named. */
static void cli_all_variables(char *out, size_t len, size_t *at, dmaconn_variable_kind kind, const char *last,
			      int named)
{
	int first = 1;
	for (int t = 1; dmaconn_device_type_name((dmaconn_device_type)t) && *at < len; t++) {
		dmaconn_device_type type = (dmaconn_device_type)t;
		if (!dmaconn_variable(type, kind, 0))
			continue;
		if (!first)
			*at += (size_t)snprintf(out + *at, len - *at, ", ");
		first = 0;
		cli_variables(out, len, at, type, kind, last);
		if (named && *at < len)
			*at += (size_t)snprintf(out + *at, len - *at, " (%s)", dmaconn_device_type_name(type));
	}
}

/*
 * The help: help_text, the paragraph of the variables read (the backends'
 * visibility variables of each device type and their libraries' overrides,
 * filled to 78 columns) and help_end, into out (len bytes, truncated).
 */
static void cli_help(char *out, size_t len)
{
	char para[4096];
	size_t at = 0;
	at += (size_t)snprintf(para, sizeof(para), "Device order follows ");
	cli_all_variables(para, sizeof(para), &at, DMACONN_VARIABLE_VISIBILITY, " and ", 1);
	if (at < sizeof(para))
		at += (size_t)snprintf(para + at, sizeof(para) - at,
				       ".  Also read: DMACONN_QUIET, DMACONN_REPLAY, DMACONN_SYSFS_ROOT, the vendor "
				       "libraries' paths (");
	cli_all_variables(para, sizeof(para), &at, DMACONN_VARIABLE_LIBRARY, ", ", 0);
	if (at < sizeof(para))
		snprintf(para + at, sizeof(para) - at, ") and the others in README.md.");
	/* Filled: each line ends at the last space within 78 columns. */
	size_t n = (size_t)snprintf(out, len, "%s", help_text);
	const char *rest = para;
	while (*rest && n < len) {
		size_t cut = strlen(rest);
		if (cut > 78) {
			cut = 78;
			while (cut > 0 && rest[cut] != ' ')
				cut--;
			if (!cut)
				cut = strcspn(rest, " ");
		}
		size_t end = cut;
		while (end > 0 && rest[end - 1] == ' ')
			end--;
		int w = snprintf(out + n, len - n, "%.*s\n", (int)end, rest);
		n += w > 0 ? (size_t)w : 0;
		rest += cut;
		while (*rest == ' ')
			rest++;
	}
	if (n < len)
		snprintf(out + n, len - n, "%s", help_end);
}

struct cli;
static int cli_format_write(struct cli *c, const char *replay, int mpi, const char *error);

/* Whether the last run writes nothing on standard output by design (--record). */
static int cli_silent;

/* What one run of the command line has said so far. */
struct cli {
	int json, quiet;
	const struct dc_format *format; /* NULL for text and json */
	/* Detect every device of the node, whatever hides some from this
	 * process (--format slurm: gres.conf describes the node). */
	int node;
	dmaconn_result **kept;          /* with a format: every result shown */
	int nkept;
	struct timespec start; /* of the detection, for --format */
	json_t *doc; /* with --json: the one object standard output receives */
	/* Its results, written element by element (cli_json_result_write): the
	 * "results" array holds their positions here. */
	dmaconn_result **results;
	int nresults;
	char last_error[1024]; /* the last error said, so that none is said twice */
};

static void cli_ignore_warning(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
}

static int cli_quiet_env(void)
{
	const char *q = secure_getenv("DMACONN_QUIET");
	return q && *q && strcmp(q, "0");
}

/* ------------------------------------------------------------------ JSON */

char *cli_utf8_fix(const char *s)
{
	return dc_codec_utf8_clean(s, 0);
}

char *cli_text_fix(const char *s)
{
	return dc_codec_utf8_clean(s, 1);
}

int cli_utf8_char(const unsigned char *p, const unsigned char *end, unsigned *cp)
{
	return dc_codec_utf8_char(p, end, cp);
}

json_t *cli_json_string(const char *s)
{
	if (!s)
		return json_null();
	char *fixed = cli_utf8_fix(s);
	json_t *v = json_string(fixed ? fixed : s);
	free(fixed);
	return v ? v : json_string("\xef\xbf\xbd");
}

/* The version of the JSON document's shape (docs/json-output.md,
 * docs/dmaconn.schema.json): raised when a member changes meaning. */
#define CLI_JSON_VERSION 1

/* Property values as the codec types them (src/codec.h), what is not UTF-8
 * replaced. */
static const struct dc_codec cli_codec = { 0, cli_utf8_fix };

/* A property's value set on obj as the codec types it (placement keys
 * included); a repeated property keeps its first value, as in the Python
 * binding. */
void cli_json_first(json_t *obj, const char *key, const char *value)
{
	(void)dc_codec_set_first(&cli_codec, obj, key, value);
}

/* The document --json writes, made on first use: {"version", "dmaconn_version", ...}. */
static json_t *cli_doc(struct cli *c)
{
	if (!c->doc) {
		c->doc = json_object();
		json_object_set_new(c->doc, "version", json_integer(CLI_JSON_VERSION));
		json_object_set_new(c->doc, "dmaconn_version", cli_json_string(dmaconn_version_string()));
	}
	return c->doc;
}

/* The document's "results" array, made on first use. */
static json_t *cli_doc_results(struct cli *c)
{
	json_t *doc = cli_doc(c);
	json_t *a = json_object_get(doc, "results");
	if (!a) {
		a = json_array();
		json_object_set_new(doc, "results", a);
	}
	return a;
}

#define CLI_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY)

static void cli_json_write_result(const dmaconn_result *r);

/* Drops the document and the results it refers to. */
static void cli_doc_drop(struct cli *c)
{
	json_decref(c->doc);
	c->doc = NULL;
	for (int k = 0; k < c->nresults; k++)
		dmaconn_result_release(c->results[k]);
	free(c->results);
	c->results = NULL;
	c->nresults = 0;
}

/* Adds r to the document's "results" (a reference, written with the document). */
static void cli_doc_add_result(struct cli *c, const dmaconn_result *r)
{
	json_t *a = cli_doc_results(c);
	dmaconn_result **grown = realloc(c->results, ((size_t)c->nresults + 1) * sizeof(*grown));
	if (!grown)
		return;
	c->results = grown;
	c->results[c->nresults] = dmaconn_result_retain((dmaconn_result *)r);
	json_array_append_new(a, json_integer(c->nresults++));
}

/*
 * Writes the document on standard output, once, and drops it.  Jansson
 * writes every member but the results, which are written element by
 * element: a rack's result has n*n pairs, too many for a tree in memory.
 * The output is what json_dumpf would write for the whole tree.
 */
static void cli_doc_write(struct cli *c)
{
	if (!c->doc)
		return;
	const char *key;
	json_t *value;
	int first = 1;
	putchar('{');
	json_object_foreach(c->doc, key, value) {
		json_t *k = json_string(key);
		if (!first)
			putchar(',');
		first = 0;
		json_dumpf(k, stdout, CLI_JSON_FLAGS);
		json_decref(k);
		putchar(':');
		if (strcmp(key, "results") != 0 || !json_is_array(value)) {
			json_dumpf(value, stdout, CLI_JSON_FLAGS);
			continue;
		}
		putchar('[');
		for (size_t e = 0; e < json_array_size(value); e++) {
			json_t *item = json_array_get(value, e);
			json_int_t at = json_is_integer(item) ? json_integer_value(item) : -1;
			if (e)
				putchar(',');
			if (at >= 0 && at < c->nresults)
				cli_json_write_result(c->results[at]);
			else
				json_dumpf(item, stdout, CLI_JSON_FLAGS);
		}
		putchar(']');
	}
	puts("}");
	cli_doc_drop(c);
}

/* r's warnings as a JSON array. */
static json_t *cli_json_warnings(const dmaconn_result *r)
{
	json_t *a = json_array();
	for (int k = 0; k < dmaconn_result_warning_count(r); k++)
		json_array_append_new(a, cli_json_string(dmaconn_result_warning(r, k)));
	return a;
}

/* A pair's properties as the members that follow "from" and "to" in its
 * object: "" or ",\"read\":\"OK\",...".  malloc'd; NULL when out of memory. */
static char *cli_json_pair_members(const dmaconn_result *r, int i, int j)
{
	json_t *p = dc_codec_pair(&cli_codec, r, i, j);
	if (!p)
		return NULL;
	json_object_del(p, "from");
	json_object_del(p, "to");
	char *text = json_dumps(p, CLI_JSON_FLAGS);
	json_decref(p);
	if (!text)
		return NULL;
	/* "{...}" less its braces, after a comma; "{}": nothing. */
	size_t len = strlen(text);
	if (len <= 2) {
		text[0] = '\0';
	} else {
		text[0] = ',';
		text[len - 1] = '\0';
	}
	return text;
}

/* The members of each property list, written once per list (pairs with
 * the same list number have the same properties): the distinct list
 * numbers, sorted, and the text of each as first written. */
struct cli_pair_texts {
	unsigned int *ids;
	char **texts;
	size_t n;
};

static int cli_compare_ids(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;
	return (x > y) - (x < y);
}

/* The lists of the nn pairs' list numbers ids (0: no properties). */
static void cli_pair_texts_init(struct cli_pair_texts *t, const unsigned int *ids, size_t nn)
{
	t->n = 0;
	t->texts = NULL;
	if (!(t->ids = malloc((nn ? nn : 1) * sizeof(*t->ids))))
		return;
	for (size_t at = 0; at < nn; at++)
		if (ids[at])
			t->ids[t->n++] = ids[at];
	qsort(t->ids, t->n, sizeof(*t->ids), cli_compare_ids);
	size_t distinct = 0;
	for (size_t k = 0; k < t->n; k++)
		if (!distinct || t->ids[k] != t->ids[distinct - 1])
			t->ids[distinct++] = t->ids[k];
	t->n = distinct;
	if (!(t->texts = calloc(distinct ? distinct : 1, sizeof(*t->texts))))
		t->n = 0;
}

static void cli_pair_texts_free(struct cli_pair_texts *t)
{
	for (size_t k = 0; k < t->n; k++)
		free(t->texts[k]);
	free(t->ids);
	free(t->texts);
}

/* The members of list id, written from pair (i, j) the first time; NULL
 * when out of memory. */
static const char *cli_pair_text(struct cli_pair_texts *t, const dmaconn_result *r, int i, int j,
				 unsigned int id)
{
	const unsigned int *at = t->n ? bsearch(&id, t->ids, t->n, sizeof(*t->ids), cli_compare_ids) : NULL;
	if (!at)
		return NULL;
	char **text = &t->texts[at - t->ids];
	if (!*text)
		*text = cli_json_pair_members(r, i, j);
	return *text;
}

/*
 * One result as the object documented in docs/json-output.md
 * ("device_type", "connection_type", "matrix", "devices", "pairs",
 * "warnings"), written element by element: its memory is that of one
 * device or pair at a time, and of each distinct pair property list.
 */
static void cli_json_write_result(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	json_t *v = cli_json_string(dmaconn_device_type_name(dmaconn_result_device_type(r)));
	fputs("{\"device_type\":", stdout);
	json_dumpf(v, stdout, CLI_JSON_FLAGS);
	json_decref(v);
	v = cli_json_string(dmaconn_result_connection_type(r));
	fputs(",\"connection_type\":", stdout);
	json_dumpf(v, stdout, CLI_JSON_FLAGS);
	json_decref(v);
	fputs(",\"matrix\":[", stdout);
	for (int i = 0; i < n; i++) {
		if (i)
			putchar(',');
		putchar('[');
		for (int j = 0; j < n; j++)
			printf(j ? ",%d" : "%d", dmaconn_result_get(r, i, j));
		putchar(']');
	}
	fputs("],\"devices\":[", stdout);
	for (int i = 0; i < n; i++) {
		if (i)
			putchar(',');
		v = dc_codec_device(&cli_codec, r, i);
		json_dumpf(v ? v : json_null(), stdout, CLI_JSON_FLAGS);
		json_decref(v);
	}
	fputs("],\"pairs\":[", stdout);
	size_t nn = (size_t)n * (size_t)n;
	unsigned int *ids = nn ? malloc(nn * sizeof(*ids)) : NULL;
	struct cli_pair_texts texts = { 0 };
	if (ids && dmaconn_result_pair_lists(r, ids, nn) == DMACONN_OK) {
		cli_pair_texts_init(&texts, ids, nn);
		int first = 1;
		for (size_t at = 0; at < nn; at++) {
			if (!ids[at])
				continue;
			int i = (int)(at / (size_t)n), j = (int)(at % (size_t)n);
			const char *members = cli_pair_text(&texts, r, i, j, ids[at]);
			printf("%s{\"from\":%d,\"to\":%d%s}", first ? "" : ",", i, j, members ? members : "");
			first = 0;
		}
	}
	cli_pair_texts_free(&texts);
	free(ids);
	fputs("],\"warnings\":", stdout);
	v = cli_json_warnings(r);
	json_dumpf(v, stdout, CLI_JSON_FLAGS);
	json_decref(v);
	putchar('}');
}

/* ---------------------------------------------------------------- errors */

/* An error, said once: on standard error and, with --json, as the
 * document's "error" and "exit_status" (the last error wins). */
static void cli_error(struct cli *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cli_error(struct cli *c, int status, const char *fmt, ...)
{
	char msg[sizeof(c->last_error)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!strcmp(msg, c->last_error))
		return;
	snprintf(c->last_error, sizeof(c->last_error), "%s", msg);
	/* A message may quote what a file holds: no control of it reaches the
	 * terminal (the JSON string escapes them). */
	char *shown = cli_text_fix(msg);
	fprintf(stderr, "dmaconn: %s\n", shown ? shown : msg);
	free(shown);
	if (status == EXIT_USAGE)
		fputs(short_usage, stderr);
	if (c->json) {
		json_t *doc = cli_doc(c);
		json_object_set_new(doc, "error", cli_json_string(msg));
		json_object_set_new(doc, "exit_status", json_integer(status));
	}
}

/* A usage error: exit status 2. */
#define cli_usage_error(c, ...) (cli_error((c), EXIT_USAGE, __VA_ARGS__), EXIT_USAGE)


/* ------------------------------------------------------------------ text */

/* The matrix, a row per line. */
static void cli_text_matrix(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	for (int i = 0; i < n; i++) {
		putchar('[');
		for (int j = 0; j < n; j++)
			printf(j ? ", %d" : "%d", dmaconn_result_get(r, i, j));
		puts("]");
	}
}

static void cli_text_result(const dmaconn_result *r, const char *replay)
{
	int n = dmaconn_result_size(r);
	printf("%s/%s", dmaconn_device_type_name(dmaconn_result_device_type(r)),
	       dmaconn_result_connection_type(r));
	if (replay)
		printf(" (replay of %s)", replay);
	printf(": %d device%s\n", n, n == 1 ? "" : "s");
	cli_text_matrix(r);
	for (int i = 0; i < n; i++) {
		const char *name = dmaconn_result_device_get(r, i, "name");
		const char *bus = dmaconn_result_device_get(r, i, "pci_bus_id");
		const char *uuid = dmaconn_result_device_get(r, i, "uuid");
		printf("  %d: %s", i, name && *name ? name : "(unknown)");
		if (bus)
			printf(", %s", bus);
		if (uuid && *uuid)
			printf(", %s", uuid);
		putchar('\n');
	}
}

/* A result's warnings on standard error, unless quiet (the library's own
 * printing is off: a result a bare run leaves out must not speak). */
static void cli_say_warnings(const struct cli *c, const dmaconn_result *r)
{
	for (int k = 0; !c->quiet && k < dmaconn_result_warning_count(r); k++)
		fprintf(stderr, "dmaconn: warning: %s\n", dmaconn_result_warning(r, k));
}

/* ---------------------------------------------------------------- verify */

/* Progress of a verification, on a terminal only: "pairs done/total" on one
 * line of standard error, rewritten as pairs finish, erased at the end. */
static int cli_progress_shown;

static void cli_progress(int done, int total, void *user_data)
{
	(void)user_data;
	fprintf(stderr, "\rdmaconn: verifying: %d/%d pairs", done, total);
	fflush(stderr);
	cli_progress_shown = 1;
}

void cli_progress_end(void)
{
	if (!cli_progress_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	cli_progress_shown = 0;
}

static int cli_verify(struct cli *c, dmaconn_device_type type, int timeout_ms)
{
	dmaconn_result *v = NULL;
	int rc = dmaconn_verify_run(type, timeout_ms, &v);
	cli_progress_end();
	if (rc != DMACONN_OK) {
		cli_error(c, EXIT_FAILED, "%s", dmaconn_last_error());
		return EXIT_FAILED;
	}
	const char *tname = dmaconn_device_type_name(type);
	int n = dmaconn_result_size(v), failed = 0, checked = 0;
	for (int k = 0; !c->quiet && k < dmaconn_result_warning_count(v); k++)
		fprintf(stderr, "dmaconn: warning: %s\n", dmaconn_result_warning(v, k));
	/* Nothing checked proves nothing: a missing or failing helper, or fewer
	 * than two devices, must not read as a pass. */
	char none[128] = "";
	if (n < 2)
		snprintf(none, sizeof(none), "%s verify: no pair of devices was checked", tname);
	json_t *pairs = c->json ? json_array() : NULL;
	if (!c->json) {
		printf("%s verify: %d device%s\n", tname, n, n == 1 ? "" : "s");
	}
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const char *st = dmaconn_result_pair_get(v, i, j, "status");
			int pass = st && !strcmp(st, "pass");
			failed += !st || !strcmp(st, "fail");
			checked++;
			if (c->json) {
				/* {"from", "to", "status", the helper's properties}. */
				json_t *p = dc_codec_pair(&cli_codec, v, i, j);
				json_array_append_new(pairs, p ? p : json_null());
				continue;
			}
			const char *gbps = dmaconn_result_pair_get(v, i, j, "gbps");
			const char *lat = dmaconn_result_pair_get(v, i, j, "latency_us");
			const char *why = dmaconn_result_pair_get(v, i, j, "reason");
			printf("  GPU%d -> GPU%d: %s", i, j, st ? st : "fail");
			if (pass && gbps)
				printf(", %s GB/s", gbps);
			if (pass && lat)
				printf(", %s us one-way", lat);
			if (!pass && why && *why)
				printf(" (%s)", why);
			putchar('\n');
		}
	}
	if (c->json) {
		json_t *w = cli_json_warnings(v);
		if (*none)
			json_array_append_new(w, json_string(none));
		json_t *o = json_object();
		json_object_set_new(o, "device_type", cli_json_string(tname));
		json_object_set_new(o, "pairs", pairs);
		json_object_set_new(o, "warnings", w);
		json_object_set_new(cli_doc(c), "verify", o);
	}
	dmaconn_result_release(v);
	/* The run's outcome, as an error (with --json: "error" and
	 * "exit_status", as every failure is). */
	if (failed)
		cli_error(c, EXIT_FAILED, "%s verify: %d of %d pair%s failed", tname, failed, checked,
			  checked == 1 ? "" : "s");
	else if (!checked)
		cli_error(c, EXIT_FAILED, "%s", *none ? none : "no pair of devices was checked");
	return failed || !checked ? EXIT_FAILED : 0;
}

/* ------------------------------------------------------------- detection */

/* --topo's multicast section under the cuda table. */
static void cli_topo_multicast(void)
{
	dmaconn_result *mc = NULL;
	if (dmaconn_detect_passive(DMACONN_DEVICE_CUDA, "multicast", &mc) != DMACONN_OK)
		return;
	cli_text_topo_multicast(mc);
	dmaconn_result_release(mc);
}

/* A warning's text after its "type/connection: " label (all of it without one). */
static const char *cli_unlabelled(const char *w)
{
	const char *colon = strstr(w, ": "), *slash = strchr(w, '/');
	return colon && slash && slash < colon && !memchr(w, ' ', (size_t)(colon - w)) ? colon + 2 : w;
}

/* The placement of the devices of shown (a result whose warnings were
 * said), its warnings said but those shown said already under another
 * connection's name (the placement reads the vendor's first view); NULL
 * (after a warning) when it cannot be had. */
static dmaconn_placement *cli_placement(const struct cli *c, const dmaconn_result *shown)
{
	dmaconn_placement *p = NULL;
	if (dmaconn_placement_detect(dmaconn_result_device_type(shown), &p) != DMACONN_OK) {
		if (!c->quiet)
			fprintf(stderr, "dmaconn: warning: no NIC, CPU or NUMA facts: %s\n", dmaconn_last_error());
		return NULL;
	}
	for (int k = 0; !c->quiet && k < dmaconn_placement_warning_count(p); k++) {
		const char *w = dmaconn_placement_warning(p, k);
		int said = 0;
		for (int j = 0; !said && j < dmaconn_result_warning_count(shown); j++)
			said = !strcmp(cli_unlabelled(w), cli_unlabelled(dmaconn_result_warning(shown, j)));
		if (!said)
			fprintf(stderr, "dmaconn: warning: %s\n", w);
	}
	return p;
}

/* --topo's table of r, with the NICs and affinities of its devices where
 * the placement describes the same devices. */
static void cli_topo_print(const struct cli *c, const dmaconn_result *r, const char *replay)
{
	dmaconn_placement *p = dmaconn_result_size(r) ? cli_placement(c, r) : NULL;
	cli_text_topo(r, p, replay);
	dmaconn_placement_free(p);
}

/* One result, after *printed others; *printed counts it. */
static void cli_print(struct cli *c, dmaconn_result *r, int topo, const char *replay, int *printed)
{
	cli_say_warnings(c, r);
	if (c->format) {
		dmaconn_result **k = realloc(c->kept, (size_t)(c->nkept + 1) * sizeof(*k));
		if (k) {
			c->kept = k;
			c->kept[c->nkept++] = dmaconn_result_retain(r);
		} else {
			cli_error(c, EXIT_FAILED, "out of memory");
		}
	} else if (c->json) {
		cli_doc_add_result(c, r);
	} else {
		if (*printed)
			putchar('\n');
		if (topo)
			cli_topo_print(c, r, replay);
		if (topo && dmaconn_result_device_type(r) == DMACONN_DEVICE_CUDA)
			cli_topo_multicast();
		if (!topo)
			cli_text_result(r, replay);
	}
	++*printed;
}

static int cli_unverified(const dmaconn_result *r);

/* --explain's lines (or JSON entries) for one result; how many. */
static int cli_explain_result(const dmaconn_result *r, json_t *list)
{
	int n = dmaconn_result_size(r), lines = 0;
	const char *tn = dmaconn_device_type_name(dmaconn_result_device_type(r));
	const char *conn = dmaconn_result_connection_type(r);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			const char *code = i == j ? NULL : dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON);
			const char *text = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT);
			if (!code)
				continue;
			lines++;
			if (!list) {
				printf("%s/%s %d -> %d: %s: %s\n", tn, conn, i, j, code, text ? text : "");
				continue;
			}
			json_t *e = json_object();
			json_object_set_new(e, "device_type", cli_json_string(tn));
			json_object_set_new(e, "connection_type", cli_json_string(conn));
			json_object_set_new(e, "from", json_integer(i));
			json_object_set_new(e, "to", json_integer(j));
			json_object_set_new(e, "reason", cli_json_string(code));
			json_object_set_new(e, "reason_text", cli_json_string(text ? text : ""));
			json_array_append_new(list, e);
		}
	return lines;
}

/*
 * --explain: the reason of every pair that has one (each 0, and a cuda/nvlink
 * pair that lost links), alone; with --json, the
 * document's "explain" list of them.  -d TYPE -c CONN explains that
 * detector (cuda/verified then verifies, as -c verified does); -d TYPE
 * alone each of that type's, and neither every detector that finds
 * devices, both without GPU work (cuda/verified from its cache, as a bare
 * run).
 */
static int cli_explain(struct cli *c, int count, const dmaconn_device_type *types, const char **conns,
		       const char *type_name, dmaconn_device_type type, const char *conn)
{
	json_t *list = c->json ? json_array() : NULL;
	int lines = 0, status = 0;
	for (int k = 0; k < count && !status; k++) {
		if ((type_name && types[k] != type) || (conn && strcmp(conns[k], conn) != 0))
			continue;
		dmaconn_result *r = NULL;
		int rc = conn ? dmaconn_detect(types[k], conns[k], &r) : dmaconn_detect_passive(types[k], conns[k], &r);
		cli_progress_end();
		if (rc != DMACONN_OK) {
			cli_error(c, EXIT_FAILED, "%s", dmaconn_last_error());
			status = EXIT_FAILED;
			break;
		}
		if (conn || (dmaconn_result_size(r) > 0 && !cli_unverified(r))) {
			cli_say_warnings(c, r);
			lines += cli_explain_result(r, list);
		}
		if (conn && types[k] == DMACONN_DEVICE_CUDA && dc_cli_verified_nothing(r)) {
			cli_error(c, EXIT_FAILED, "cuda/verified: no pair was verified");
			status = EXIT_FAILED;
		}
		dmaconn_result_release(r);
	}
	if (list)
		json_object_set_new(cli_doc(c), "explain", list);
	else if (!lines && !status && conn)
		printf("%s/%s: no pair is 0 or lost links: nothing to explain\n", dmaconn_device_type_name(type), conn);
	else if (!lines && !status)
		printf("no pair is 0 or lost links: nothing to explain\n");
	return status;
}

/* One detection, of the node's every device where the run describes the
 * node (struct cli's node): never GPU work where passive is asked, and
 * cuda/verified's helper sees what this process sees, so it stays as asked. */
static int cli_detect(const struct cli *c, dmaconn_device_type type, const char *conn, int passive,
		      dmaconn_result **r)
{
	if (c->node && strcmp(conn, "verified") != 0)
		return dmaconn_detect_node(type, conn, r);
	return passive ? dmaconn_detect_passive(type, conn, r) : dmaconn_detect(type, conn, r);
}

/* -d/-c or --topo: one detector, one result. */
static int cli_one(struct cli *c, dmaconn_device_type type, const char *conn, int topo, const char *replay)
{
	dmaconn_result *r = NULL;
	if (c->json)
		cli_doc_results(c); /* present, if empty, when detection fails */
	int rc = cli_detect(c, type, conn, 0, &r);
	cli_progress_end();
	if (rc != DMACONN_OK) {
		cli_error(c, EXIT_FAILED, "%s", dmaconn_last_error());
		return EXIT_FAILED;
	}
	int printed = 0;
	cli_print(c, r, topo, replay, &printed);
	/* Fail closed: zeros from a verification that checked nothing are no answer. */
	int status = 0;
	if (type == DMACONN_DEVICE_CUDA && dc_cli_verified_nothing(r)) {
		cli_error(c, EXIT_FAILED, "cuda/verified: no pair was verified");
		status = EXIT_FAILED;
	}
	dmaconn_result_release(r);
	return status;
}

/* A passive cuda/verified answer without any verdict: a bare run shows it
 * not at all (--all does). */
static int cli_unverified(const dmaconn_result *r)
{
	if (strcmp(dmaconn_result_connection_type(r), "verified") != 0)
		return 0;
	int n = dmaconn_result_size(r);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			const char *v = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_VERIFIED);
			if (v && strcmp(v, "not_verified") != 0)
				return 0;
		}
	return 1;
}


/* No -d/-c: every detector of each vendor that has a driver loaded (under
 * replay: of each vendor the recording holds devices of), or every
 * detector with --all.  A replay that cannot be used ends the run. */
static int cli_all(struct cli *c, int count, const dmaconn_device_type *types, const char **conns,
		   int all, const char *replay)
{
	int status = 0, printed = 0, fatal = 0;
	dmaconn_result **results = calloc((size_t)count + 1, sizeof(*results));
	char *done = calloc((size_t)count + 1, 1);
	if (!results || !done) {
		free(results);
		free(done);
		cli_error(c, EXIT_FAILED, "out of memory");
		return EXIT_FAILED;
	}
	if (c->json)
		cli_doc_results(c);
	for (int i = 0; i < count && !fatal; i++) {
		if (done[i])
			continue;
		/* A vendor's detectors together: whether it is shown depends on all. */
		int shown = all || (!replay && dmaconn_driver_loaded(types[i]));
		for (int k = i; k < count && !fatal; k++) {
			if (types[k] != types[i])
				continue;
			done[k] = 1;
			if (!all && !replay && !shown)
				continue;
			/* Passive: listing every detector never starts GPU work
			 * (cuda/verified answers from its cache or not at all). */
			int rc = cli_detect(c, types[k], conns[k], 1, &results[k]);
			if (rc == DMACONN_OK) {
				shown |= dmaconn_result_size(results[k]) > 0;
				continue;
			}
			fatal = rc == DMACONN_EREPLAY;
			cli_error(c, EXIT_FAILED, "%s", dmaconn_last_error());
			status = EXIT_FAILED;
		}
		for (int k = i; k < count; k++) {
			if (results[k] && shown && !fatal && (all || !cli_unverified(results[k])))
				cli_print(c, results[k], 0, replay, &printed);
			dmaconn_result_release(results[k]);
			results[k] = NULL;
		}
	}
	free(results);
	free(done);
	if (!c->json && !c->format && !printed && !status) {
		puts("no accelerators found");
	}
	return status;
}

/* The connection --topo shows of type: the one whose legend explains a path
 * table (the connection table's, dmaconn_connection_text). */
static int cli_topo_connection(dmaconn_device_type type, const char *conn)
{
	return dmaconn_connection_text(type, conn, DMACONN_CONNECTION_PATHS) != NULL;
}

/* --topo without -d: that table of each vendor a bare run shows (its
 * kernel driver loaded; under replay, devices in the recording). */
static int cli_topo(struct cli *c, int count, const dmaconn_device_type *types, const char **conns,
		    const char *replay)
{
	int status = 0, printed = 0;
	if (c->json)
		cli_doc_results(c);
	for (int k = 0; k < count && !status; k++) {
		if (!cli_topo_connection(types[k], conns[k]) || (!replay && !dmaconn_driver_loaded(types[k])))
			continue;
		dmaconn_result *r = NULL;
		if (dmaconn_detect(types[k], conns[k], &r) != DMACONN_OK) {
			cli_error(c, EXIT_FAILED, "%s", dmaconn_last_error());
			status = EXIT_FAILED;
			break;
		}
		if (!replay || dmaconn_result_size(r) > 0)
			cli_print(c, r, 1, replay, &printed);
		dmaconn_result_release(r);
	}
	if (!c->json && !printed && !status)
		puts("no accelerators found");
	return status;
}

/* --topo -d TYPE: that table of TYPE's (p2p where none has a legend). */
static int cli_topo_one(struct cli *c, int count, const dmaconn_device_type *types, const char **conns,
			dmaconn_device_type type, const char *replay)
{
	const char *conn = "p2p";
	for (int k = count - 1; k >= 0; k--)
		if (types[k] == type && cli_topo_connection(types[k], conns[k]))
			conn = conns[k];
	return cli_one(c, type, conn, 1, replay);
}

/* The type --nics and --bind describe without -d: the first vendor whose
 * devices a bare run shows (its driver loaded; under replay, devices in the
 * recording), else cuda (whose placement still lists the NICs). */
static dmaconn_device_type cli_place_type(const char *replay)
{
	static const dmaconn_device_type types[] = { DMACONN_DEVICE_CUDA, DMACONN_DEVICE_ROCM, DMACONN_DEVICE_XPU };
	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
		dmaconn_placement *p = NULL;
		int found = !replay ? dmaconn_driver_loaded(types[k])
				    : dmaconn_placement_detect(types[k], &p) == DMACONN_OK && dmaconn_placement_size(p) > 0;
		dmaconn_placement_free(p);
		if (found)
			return types[k];
	}
	return DMACONN_DEVICE_CUDA;
}

/* --nics (bind NULL) or --bind DEVICE: the placement of type's devices. */
static int cli_place(struct cli *c, dmaconn_device_type type, const char *bind, const char *replay)
{
	dmaconn_placement *p = NULL;
	if (dmaconn_placement_detect(type, &p) != DMACONN_OK) {
		cli_error(c, EXIT_FAILED, "%s", dmaconn_last_error());
		return EXIT_FAILED;
	}
	for (int k = 0; !c->quiet && k < dmaconn_placement_warning_count(p); k++)
		fprintf(stderr, "dmaconn: warning: %s\n", dmaconn_placement_warning(p, k));
	int status = 0, i = bind ? cli_place_device(p, bind) : -1;
	if (!bind && c->json)
		json_object_set_new(cli_doc(c), "placement", cli_json_placement(p));
	else if (!bind)
		cli_text_nics(p, replay);
	else if (i < 0) {
		cli_error(c, EXIT_FAILED, "--bind %.100s: no such %s device (%d found: an index, UUID or PCI bus id)",
			  bind, dmaconn_device_type_name(type), dmaconn_placement_size(p));
		status = EXIT_FAILED;
	} else if (c->json) {
		json_object_set_new(cli_doc(c), "bind", cli_json_placement_device(p, i, 0));
		if (!dmaconn_placement_device_get(p, i, DMACONN_PLACE_NUMACTL))
			status = EXIT_FAILED;
	} else if (cli_text_bind(p, i) != 0) {
		status = EXIT_FAILED;
	}
	if (bind && i >= 0 && status)
		/* The vendor library asked where sysfs does not say: the cuda
		 * views' (their p2p row's source). */
		cli_error(c, EXIT_FAILED,
			  "--bind %.100s: the CPUs local to %s %d are unknown (neither sysfs nor %s says)", bind,
			  dmaconn_device_type_name(type), i,
			  dmaconn_connection_text(DMACONN_DEVICE_CUDA, "p2p", DMACONN_CONNECTION_SOURCE));
	dmaconn_placement_free(p);
	return status;
}

/* ---------------------------------------------------------------- --mpi */

struct mpi_report {
	struct cli *c;
	int json, quiet, printed;
	int reported; /* the report ran: this is the rank that prints */
	int status;   /* of the --format writer */
};

static int cli_mpi_distinct(const dmaconn_result *r, const char *key)
{
	int n = dmaconn_result_size(r), count = 0;
	for (int i = 0; i < n; i++) {
		const char *v = dmaconn_result_device_get(r, i, key);
		int seen = 0;
		for (int j = 0; j < i && !seen; j++) {
			const char *u = dmaconn_result_device_get(r, j, key);
			seen = v && u && !strcmp(u, v);
		}
		count += v && !seen;
	}
	return count;
}

static void cli_mpi_text(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r), ranks = cli_mpi_distinct(r, "rank");
	int nodes = cli_mpi_distinct(r, "node");
	printf("%s/%s across MPI ranks: %d device%s from %d rank%s on %d node%s\n",
	       dmaconn_device_type_name(dmaconn_result_device_type(r)), dmaconn_result_connection_type(r),
	       n, n == 1 ? "" : "s", ranks, ranks == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
	cli_text_matrix(r);
	for (int i = 0; i < n; i++) {
		const char *rank = dmaconn_result_device_get(r, i, "rank");
		const char *host = dmaconn_result_device_get(r, i, "host");
		const char *local = dmaconn_result_device_get(r, i, "local_ordinal");
		const char *name = dmaconn_result_device_get(r, i, "name");
		const char *bus = dmaconn_result_device_get(r, i, "pci_bus_id");
		const char *uuid = dmaconn_result_device_get(r, i, "uuid");
		printf("  %d: rank %s on %s, device %s: %s", i, rank ? rank : "?", host ? host : "?",
		       local ? local : "?", name && *name ? name : "(unknown)");
		if (bus)
			printf(", %s", bus);
		if (uuid && *uuid)
			printf(", %s", uuid);
		putchar('\n');
	}
}

/* Rank 0 prints each global result; the warnings of every rank are in it. */
static int cli_mpi_report(const dmaconn_result *r, int index, int count, void *user_data)
{
	struct mpi_report *m = user_data;
	m->reported = 1;
	if (m->json)
		cli_doc_results(m->c);
	if (!r) {
		cli_error(m->c, EXIT_FAILED, "%s", dmaconn_last_error());
	} else if (m->c->format) {
		int ignored = 0;
		cli_print(m->c, (dmaconn_result *)r, 0, NULL, &ignored);
		m->printed = 1;
	} else if (m->json) {
		cli_doc_add_result(m->c, r);
		m->printed = 1;
	} else {
		if (m->printed)
			putchar('\n');
		cli_mpi_text(r);
		m->printed = 1;
	}
	for (int k = 0; r && !m->quiet && k < dmaconn_result_warning_count(r); k++)
		fprintf(stderr, "dmaconn: warning: %s\n", dmaconn_result_warning(r, k));
	if (m->json && index == count - 1)
		cli_doc_write(m->c);
	if (m->c->format && index == count - 1)
		m->status = cli_format_write(m->c, NULL, 1, m->c->last_error[0] ? m->c->last_error : NULL);
	fflush(stdout);
	fflush(stderr);
	return r ? 0 : 1;
}

/* libdmaconn_mpi: DMACONN_MPI_LIBRARY, else beside libdmaconn, else the
 * loader's search.  RTLD_GLOBAL, for the MPI plugins it loads in turn.  A
 * copy beside libdmaconn that is there but cannot be loaded is named with
 * the loader's reason (a library it needs), not the search's "not found". */
static void *cli_mpi_open(char *why, size_t len)
{
	const char *override = secure_getenv("DMACONN_MPI_LIBRARY");
	void *h = NULL;
	char sibling[1024] = "";
	if (override && *override) {
		if (override[0] != '/') {
			snprintf(why, len, "DMACONN_MPI_LIBRARY must be an absolute path, not '%s'", override);
			return NULL;
		}
		h = dlopen(override, RTLD_NOW | RTLD_GLOBAL);
	} else {
		Dl_info info;
		char path[4096];
		if (dladdr((void *)&dmaconn_version_string, &info) && info.dli_fname &&
		    info.dli_fname[0] == '/') {
			const char *slash = strrchr(info.dli_fname, '/');
			int n = snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - info.dli_fname),
					 info.dli_fname, DMACONN_MPI_SONAME);
			if (n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0 &&
			    !(h = dlopen(path, RTLD_NOW | RTLD_GLOBAL))) {
				const char *e = dlerror();
				snprintf(sibling, sizeof(sibling), "%.900s cannot be loaded: %s", path,
					 e ? e : "the loader gives no reason");
			}
		}
		if (!h)
			h = dlopen(DMACONN_MPI_SONAME, RTLD_NOW | RTLD_GLOBAL);
	}
	if (!h) {
		const char *e = dlerror();
		snprintf(why, len, "%s", sibling[0] ? sibling : e ? e : DMACONN_MPI_SONAME " not found");
	}
	return h;
}

static int cli_mpi_run(struct cli *c, int *argc, char ***argv, int count,
		       const dmaconn_device_type *types, const char **conns)
{
	char why[1024];
	void *h = cli_mpi_open(why, sizeof(why));
	if (!h) {
		cli_error(c, EXIT_FAILED, "--mpi needs the MPI component (built where MPI is found): %s", why);
		return EXIT_FAILED;
	}
	void *sym = dlsym(h, DMACONN_MPI_CLI_SYMBOL);
	if (!sym) {
		cli_error(c, EXIT_FAILED, "the MPI component lacks %s", DMACONN_MPI_CLI_SYMBOL);
		return EXIT_FAILED;
	}
	dmaconn_mpi_cli_fn cli;
	memcpy(&cli, &sym, sizeof(cli));
	struct mpi_report m = { c, c->json, c->quiet, 0, 0, 0 };
	/* Each rank's warnings reach rank 0's report; none printed twice. */
	dmaconn_set_warning_handler(cli_ignore_warning, NULL);
	int status = cli(argc, argv, count, types, (const char *const *)conns, cli_mpi_report, &m);
	status = status ? status : m.status;
	/* Only the reporting rank writes a document, or any rank its own error. */
	if (!m.reported && !(c->doc && json_object_get(c->doc, "error")))
		cli_doc_drop(c);
	return status;
}

static int cli_record(struct cli *c, const char *path, int replayed, int verify)
{
	char why[1200];
	struct stat st;
	/* --verify reads FILE back and renames a new file over it: a FIFO or a
	 * pipe (/dev/stdout) would hang the reading, a symbolic link would become
	 * a file while its target kept the recording without the section. */
	if (verify && lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		cli_error(c, EXIT_FAILED,
			  "--record FILE --verify: %s is %s (the verification is added by replacing the file)",
			  path, S_ISLNK(st.st_mode) ? "a symbolic link, not a regular file" : "not a regular file");
		return EXIT_FAILED;
	}
	if (dmaconn_record(path) != DMACONN_OK) {
		cli_error(c, EXIT_FAILED, "%s", dmaconn_last_error());
		return EXIT_FAILED;
	}
	if (verify && dc_cli_record_verification(path, replayed, why, sizeof(why)) != 0) {
		cli_error(c, EXIT_FAILED, "%s", why);
		return EXIT_FAILED;
	}
	char *shown = cli_text_fix(path);
	fprintf(stderr, "dmaconn: recorded %s%s to %s\n", replayed ? "the replayed node" : "this node",
		verify ? " and its verification" : "", shown ? shown : path);
	free(shown);
	return 0;
}

/* The option that getopt_long just refused, as the user spelled it. */
static void cli_bad_option(char *out, size_t len, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
	if (optopt && optopt < 128 && isalpha(optopt) && !(arg && !strncmp(arg, "--", 2)))
		snprintf(out, len, "-%c", optopt);
	else if (arg)
		snprintf(out, len, "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(out, len, "?");
}

/* ------------------------------------------------------------ suggestions */

/* The edit distance between a and b (a swap of two neighbours counts as
 * one edit), letters compared case-blind; 99 for words longer than 31
 * letters, which are no typos of a name here. */
static int cli_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 31 || m > 31)
		return 99;
	int t[32][32];
	for (size_t i = 0; i <= n; i++)
		for (size_t j = 0; j <= m; j++) {
			if (!i || !j) {
				t[i][j] = (int)(i + j);
				continue;
			}
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			int best = t[i - 1][j - 1] + (ca != cb);
			best = t[i - 1][j] + 1 < best ? t[i - 1][j] + 1 : best;
			best = t[i][j - 1] + 1 < best ? t[i][j - 1] + 1 : best;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    cb == tolower((unsigned char)a[i - 2]) && t[i - 2][j - 2] + 1 < best)
				best = t[i - 2][j - 2] + 1;
			t[i][j] = best;
		}
	return t[n][m];
}

/* Whether word reads as a typo of name: the same name in other case, or a
 * letter or two apart (one for names of four or five letters). */
static int cli_near(const char *word, const char *name)
{
	size_t len = strlen(name);
	int d = cli_distance(word, name);
	return d <= (len >= 6 ? 2 : len >= 4 ? 1 : 0) && (size_t)d < len;
}

/* The one of the n names nearest to word if word reads as its typo, else NULL. */
static const char *cli_suggest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	int best_d = 99;
	for (size_t k = 0; k < n; k++) {
		int d = cli_distance(word, names[k]);
		if (cli_near(word, names[k]) && d < best_d) {
			best = names[k];
			best_d = d;
		}
	}
	return best;
}

/* Every registered detector, in `dmaconn --list` order. */
struct cli_detectors {
	int count;
	dmaconn_device_type *types;
	const char **conns;
};

static int cli_detectors_load(struct cli_detectors *d)
{
	int count = dmaconn_list_detectors(NULL, NULL, 0);
	d->types = calloc((size_t)count + 1, sizeof(*d->types));
	d->conns = calloc((size_t)count + 1, sizeof(*d->conns));
	d->count = d->types && d->conns ? dmaconn_list_detectors(d->types, d->conns, count) : 0;
	return d->types && d->conns ? 0 : -1;
}

static void cli_detectors_free(struct cli_detectors *d)
{
	free(d->types);
	free(d->conns);
}

/*
 * The usage error for -c conn when type has no detector for it (0 when it
 * has): the connections type has, and the nearest of them or the type
 * that has conn.
 */
static int cli_bad_connection(const struct cli_detectors *d, dmaconn_device_type type, const char *conn,
			      char *why, size_t len)
{
	const char *mine[32];
	size_t n = 0;
	for (int k = 0; k < d->count; k++) {
		if (d->types[k] == type && !strcmp(d->conns[k], conn))
			return 0;
		if (d->types[k] == type && n < 32)
			mine[n++] = d->conns[k];
	}
	char names[256] = "", hint[160] = "";
	size_t at = 0;
	for (size_t k = 0; k < n && at < sizeof(names); k++)
		at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s",
				       k == 0 ? "" : k + 1 == n ? " or " : ", ", mine[k]);
	for (int k = 0; k < d->count && !*hint; k++)
		if (!strcmp(d->conns[k], conn))
			snprintf(hint, sizeof(hint), "; %.60s is a connection of -d %s", conn,
				 dmaconn_device_type_name(d->types[k]));
	const char *near = cli_suggest(conn, mine, n);
	if (!*hint && near)
		snprintf(hint, sizeof(hint), "; did you mean '%s'?", near);
	const char *tn = dmaconn_device_type_name(type);
	if (!n)
		snprintf(why, len, "no connection type is registered for %s", tn);
	else
		snprintf(why, len, "unknown connection '%.100s' for %s (expected %s%s)", conn, tn, names, hint);
	return 1;
}

/*
 * Every option, once: X(kind, field, long name, letter, SHORT or LONG).  The
 * field of cli_args it sets: a TEXT option's argument in a string, 1 in an
 * int for a FLAG; an OWN option takes an argument that cli_parse reads into
 * its int itself.  The letter is what getopt_long returns for it, and its
 * short option where SHORT.
 */
#define CLI_OPTIONS(X)                                           \
	X(TEXT, type_name, "device-type", 'd', SHORT)            \
	X(TEXT, conn, "connection", 'c', SHORT)                  \
	X(FLAG, all, "all", 'a', SHORT)                          \
	X(FLAG, json, "json", 'j', SHORT)                        \
	X(TEXT, format, "format", 'f', SHORT)                    \
	X(FLAG, list, "list", 'l', SHORT)                        \
	X(TEXT, record_path, "record", 'R', LONG)                \
	X(TEXT, replay, "replay", 'P', LONG)                     \
	X(FLAG, quiet, "quiet", 'q', SHORT)                      \
	X(FLAG, topo, "topo", 't', SHORT)                        \
	X(FLAG, nics, "nics", 'I', LONG)                         \
	X(TEXT, bind, "bind", 'B', LONG)                         \
	X(FLAG, verify, "verify", 'v', SHORT)                    \
	X(OWN, timeout_ms, "timeout", 'T', LONG)                 \
	X(FLAG, help, "help", 'h', SHORT)                        \
	X(FLAG, version, "version", 'V', SHORT)                  \
	X(FLAG, mpi, "mpi", 'M', LONG)                           \
	X(FLAG, no_cache, "no-cache", 'N', LONG)                 \
	X(FLAG, explain, "explain", 'X', LONG)

/* What an option of each kind is: its field's type, getopt_long's has_arg,
 * whether cli_parse reads its argument itself. */
#define CLI_TYPE_TEXT const char *
#define CLI_TYPE_FLAG int
#define CLI_TYPE_OWN int
#define CLI_ARG_TEXT required_argument
#define CLI_ARG_FLAG no_argument
#define CLI_ARG_OWN required_argument
#define CLI_READS_TEXT 0
#define CLI_READS_FLAG 0
#define CLI_READS_OWN 1
#define CLI_SHORT 1
#define CLI_LONG 0

/* The work a command line asks for, as parsed. */
struct cli_args {
#define CLI_FIELD_(kind, field, name, opt, how) CLI_TYPE_##kind field;
	CLI_OPTIONS(CLI_FIELD_)
#undef CLI_FIELD_
	int format_help;    /* --format help */
	char *const *files; /* --format slurm-topology: its documents */
	int nfiles;
};

static const struct cli_option {
	const char *name;
	int opt;
	int has_arg;
	int is_short;
	size_t at; /* of its field; SIZE_MAX when cli_parse reads it itself */
} cli_options[] = {
#define CLI_OPTION_(kind, field, name, opt, how) \
	{ name, opt, CLI_ARG_##kind, CLI_##how, CLI_READS_##kind ? SIZE_MAX : offsetof(struct cli_args, field) },
	CLI_OPTIONS(CLI_OPTION_)
#undef CLI_OPTION_
};

#define CLI_NOPTIONS (sizeof(cli_options) / sizeof(cli_options[0]))

/* Sets the field of a that option opt sets; 0 when cli_parse reads it itself. */
static int cli_set(struct cli_args *a, int opt)
{
	for (size_t k = 0; k < CLI_NOPTIONS; k++) {
		const struct cli_option *o = &cli_options[k];
		if (o->opt != opt || o->at == SIZE_MAX)
			continue;
		if (o->has_arg)
			*(const char **)(void *)((char *)a + o->at) = optarg;
		else
			*(int *)(void *)((char *)a + o->at) = 1;
		return 1;
	}
	return 0;
}

/* Why getopt_long refused the option spelled bad: a long option it knows
 * but given a value (--json=1, optopt its letter), a prefix of several long
 * options (--re), or one it does not know. */
static void cli_refused(char *why, size_t len, const char *bad)
{
	char names[400] = "";
	size_t n = strlen(bad), at = 0, matches = 0;
	int is_long = !strncmp(bad, "--", 2);
	for (size_t k = 0; is_long && optopt && k < CLI_NOPTIONS; k++)
		if (cli_options[k].opt == optopt) {
			snprintf(why, len, "option '--%s' takes no argument", cli_options[k].name);
			return;
		}
	for (size_t k = 0; is_long && n > 2 && k < CLI_NOPTIONS; k++)
		if (!strncmp(cli_options[k].name, bad + 2, n - 2) && at < sizeof(names))
			at += (size_t)snprintf(names + at, sizeof(names) - at, "%s--%s", matches++ ? ", " : "",
					       cli_options[k].name);
	const char *long_names[CLI_NOPTIONS];
	for (size_t k = 0; k < CLI_NOPTIONS; k++)
		long_names[k] = cli_options[k].name;
	const char *near = is_long ? cli_suggest(bad + 2, long_names, CLI_NOPTIONS) : NULL;
	if (matches > 1)
		snprintf(why, len, "option '%s' is ambiguous (%.300s)", bad, names);
	else if (near)
		snprintf(why, len, "unknown option '%s' (did you mean '--%s'?)", bad, near);
	else
		snprintf(why, len, "unknown option '%s'", bad);
}

/* The commands: dmaconn COMMAND [OPTION]... (dmaconn_cli_main dispatches). */
static const char *const cli_commands[] = { "check" };

/* Why the word where a command may stand (the first argument, is_first) or
 * another argument is refused: a command's typo, a command that must come
 * first, an option's or a name's spelling without its dash. */
static void cli_stray(char *why, size_t len, const char *word, int is_first)
{
	const char *options[CLI_NOPTIONS];
	for (size_t k = 0; k < CLI_NOPTIONS; k++)
		options[k] = cli_options[k].name;
	const char *what = is_first ? "unknown command" : "unexpected argument";
	const char *near;
	for (size_t k = 0; k < sizeof(cli_commands) / sizeof(cli_commands[0]); k++)
		if (!strcmp(word, cli_commands[k])) {
			snprintf(why, len, "'%s' is a command: it comes first (dmaconn %s ...)", word, word);
			return;
		}
	if ((near = cli_suggest(word, cli_commands, sizeof(cli_commands) / sizeof(cli_commands[0]))) != NULL)
		snprintf(why, len, "%s '%.100s' (did you mean '%s'?)", what, word, near);
	else if ((near = cli_suggest(word, options, CLI_NOPTIONS)) != NULL)
		snprintf(why, len, "%s '%.100s' (did you mean '--%s'?)", what, word, near);
	else
		snprintf(why, len, "%s '%.100s'", what, word);
}

/* Parses argv into a; a usage error's message into why (empty when none).
 * Every option is read even after an error, so that --json is known. */
static void cli_parse(int argc, char **argv, struct cli_args *a, char *why, size_t len)
{
	struct option options[CLI_NOPTIONS + 1];
	for (size_t k = 0; k < CLI_NOPTIONS; k++)
		options[k] = (struct option){ cli_options[k].name, cli_options[k].has_arg, NULL, cli_options[k].opt };
	options[CLI_NOPTIONS] = (struct option){ NULL, 0, NULL, 0 };
	/* ":" first: a missing argument is told apart from an unknown option. */
	char shorts[2 + 2 * CLI_NOPTIONS] = ":";
	size_t at = 1;
	for (size_t k = 0; k < CLI_NOPTIONS; k++)
		if (cli_options[k].is_short) {
			shorts[at++] = (char)cli_options[k].opt;
			if (cli_options[k].has_arg)
				shorts[at++] = ':';
		}
	shorts[at] = '\0';
	char bad[256];
	int opt;
	*why = '\0';
	/* A word where a command stands is said first: the options after a
	 * misspelt command are that command's. */
	if (argc > 1 && argv[1][0] != '-')
		cli_stray(why, len, argv[1], 1);
	optind = 0; /* glibc: rescan from argv[1] with fresh state */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, options, NULL)) != -1) {
		if (cli_set(a, opt))
			continue;
		switch (opt) {
		case 'T': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (!*end && end != optarg && !errno && v > 0 && v <= 86400)
				a->timeout_ms = (int)v * 1000;
			else if (!*why)
				snprintf(why, len, "--timeout takes seconds, 1 to 86400");
			break;
		}
		case ':':
			cli_bad_option(bad, sizeof(bad), argc, argv);
			if (!*why)
				snprintf(why, len, "option '%s' needs an argument", bad);
			break;
		default:
			cli_bad_option(bad, sizeof(bad), argc, argv);
			if (!*why)
				cli_refused(why, len, bad);
			break;
		}
	}
	/* A command after options: said before what its options made of the rest. */
	for (int k = optind; k < argc && argv[1][0] == '-'; k++)
		for (size_t m = 0; m < sizeof(cli_commands) / sizeof(cli_commands[0]); m++)
			if (!strcmp(argv[k], cli_commands[m]))
				cli_stray(why, len, argv[k], 0);
	if (*why)
		return;
	const struct dc_format *reader = a->format ? dc_format_find(a->format) : NULL;
	if (optind < argc && !(reader && dc_format_reads_documents(reader))) {
		cli_stray(why, len, argv[optind], 0);
		return;
	}
	a->files = argv + optind;
	a->nfiles = argc - optind;
	if (a->format && !strcmp(a->format, "json"))
		a->json = 1;
	a->format_help = a->format && !strcmp(a->format, "help");
	if (a->help || a->version || a->format_help)
		return;
	const struct dc_format *f = a->format ? dc_format_find(a->format) : NULL;
	if (a->format && !f) {
		const char *names[32];
		size_t n = 0;
		for (const struct dc_format *g = dc_formats; g->name && n < 32; g++)
			names[n++] = g->name;
		const char *near = cli_suggest(a->format, names, n);
		if (near)
			snprintf(why, len, "unknown format '%s' (did you mean '%s'?)", a->format, near);
		else
			snprintf(why, len, "unknown format '%s' (--format help lists them)", a->format);
		return;
	}
	if (f && f->write && a->json) {
		snprintf(why, len, "--format %s and --json exclude each other", f->name);
		return;
	}
	if (f && dc_format_reads_documents(f) &&
	    (a->type_name || a->conn || a->all || a->replay || a->mpi || a->topo || a->verify || a->list ||
	     a->explain || a->record_path || a->timeout_ms || a->no_cache || a->nics || a->bind)) {
		snprintf(why, len, "--format %s reads dmaconn --json documents (files, else standard input): no "
			 "detection option goes with it", f->name);
		return;
	}
	if (f && f->write && (a->topo || a->nics || a->bind || a->verify || a->list || a->explain || a->record_path)) {
		snprintf(why, len, "--format %s goes with a detection run (or --mpi) only", f->name);
		return;
	}
	if ((a->replay && !*a->replay) || (a->record_path && !*a->record_path)) {
		/* An empty DMACONN_REPLAY means no replay: the label would lie. */
		snprintf(why, len, "--%s needs a file name", a->replay && !*a->replay ? "replay" : "record");
		return;
	}
	/* Options that contradict each other, or that the chosen action would
	 * ignore, are refused rather than dropped. */
	/* --record FILE --verify: the recording with a verification section. */
	int actions = a->topo + a->nics + !!a->bind + (a->verify && !a->record_path) + a->list + a->mpi +
		      !!a->record_path;
	if (a->mpi && (actions > 1 || a->all || a->timeout_ms))
		snprintf(why, len, "--mpi takes -d/-c, --json, --quiet and --replay only");
	else if (actions > 1)
		snprintf(why, len, "--topo, --nics, --bind, --verify, --list, --mpi and --record exclude each other");
	else if (a->record_path && (a->type_name || a->conn || a->json || a->all || a->timeout_ms))
		snprintf(why, len, "--record takes no other option but --verify, --replay and --quiet");
	else if (a->list && (a->type_name || a->conn || a->all || a->timeout_ms))
		snprintf(why, len, "--list takes no -d, -c, --all or --timeout");
	else if ((a->topo || a->verify) && (a->conn || a->all))
		snprintf(why, len, "--topo and --verify take -d only");
	else if ((a->nics || a->bind) && (a->conn || a->all || a->explain))
		snprintf(why, len, "--%s takes -d, --json, --replay and --quiet only", a->nics ? "nics" : "bind");
	else if (a->bind && !*a->bind)
		snprintf(why, len, "--bind needs a device (its index, UUID or PCI bus id)");
	else if (a->timeout_ms && !a->verify)
		snprintf(why, len, "--timeout goes with --verify");
	else if (a->all && a->type_name)
		snprintf(why, len, "--all runs every detector: no -d or -c with it");
	else if (a->explain && (a->all || a->list || a->topo || a->verify || a->mpi || a->record_path))
		snprintf(why, len, "--explain takes -d, -c, --json, --replay, --no-cache and --quiet only");
	else if (!a->type_name != !a->conn &&
		 !((a->topo || a->nics || a->bind || a->verify || a->explain) && a->type_name) &&
		 !(a->type_name && dmaconn_device_type_parse(a->type_name, &(dmaconn_device_type){ 0 }) != DMACONN_OK))
		snprintf(why, len, "-d and -c go together"); /* a misspelt -d is said as such (cli_run) */
}

/* This process's rank among the MPI ranks of its node, as the launchers
 * say it (Open MPI, MPICH and Intel MPI, Slurm, PMI); 0 when none does. */
static int cli_local_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
					    "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID" };
	for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++) {
		const char *v = secure_getenv(vars[k]);
		if (v && *v)
			return atoi(v);
	}
	return 0;
}

/* The results kept for --format, written in that format, then dropped. */
static int cli_format_write(struct cli *c, const char *replay, int mpi, const char *error)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double seconds = (double)(now.tv_sec - c->start.tv_sec) + (double)(now.tv_nsec - c->start.tv_nsec) / 1e9;
	struct dc_format_input in = {
		.results = (const dmaconn_result *const *)c->kept,
		.count = c->nkept,
		.replay = replay,
		.seconds = seconds,
		.mpi = mpi,
		.error = error && *error ? error : NULL,
	};
	int status = c->format->write(stdout, stderr, &in) ? EXIT_FAILED : 0;
	for (int k = 0; k < c->nkept; k++)
		dmaconn_result_release(c->kept[k]);
	free(c->kept);
	c->kept = NULL;
	c->nkept = 0;
	return status;
}

/* One command line's work; its JSON document is written by the caller. */
static int cli_run(struct cli *c, int argc, char **argv)
{
	struct cli_args a = { 0 };
	char why[512];
	cli_parse(argc, argv, &a, why, sizeof(why));
	c->json = a.json;
	c->quiet = a.quiet || cli_quiet_env();
	dmaconn_set_verify_cache(!a.no_cache);
	if (*why)
		return cli_usage_error(c, "%s", why);
	if (a.help) {
		char text[sizeof(help_text) + 4096 + sizeof(help_end)];
		cli_help(text, sizeof(text));
		if (c->json)
			json_object_set_new(cli_doc(c), "help", json_string(text));
		else
			fputs(text, stdout);
		return 0;
	}
	if (a.version) {
		if (c->json)
			cli_doc(c);
		else
			printf("dmaconn %s\n", dmaconn_version_string());
		return 0;
	}
	if (a.format_help) {
		json_t *list = c->json ? json_array() : NULL;
		for (const struct dc_format *f = dc_formats; f->name; f++) {
			if (!list) {
				printf("%-14s %s\n", f->name, f->help);
				continue;
			}
			json_t *o = json_object();
			json_object_set_new(o, "name", cli_json_string(f->name));
			json_object_set_new(o, "description", cli_json_string(f->help));
			json_array_append_new(list, o);
		}
		if (list)
			json_object_set_new(cli_doc(c), "formats", list);
		return 0;
	}
	if (a.format) {
		const struct dc_format *f = dc_format_find(a.format);
		c->format = f && f->write ? f : NULL;
		/* Slurm's gres.conf describes the node, as slurmd's own NVML
		 * autodetection does: CUDA_VISIBLE_DEVICES and the like (a job's,
		 * a rank's) leave no GPU of it out. */
		c->node = c->format && !strcmp(c->format->name, "slurm");
		if (c->format && dc_format_reads_documents(c->format)) {
			struct dc_format_input in = { .files = a.files, .nfiles = a.nfiles };
			return c->format->write(stdout, stderr, &in) ? EXIT_FAILED : 0;
		}
	}
	/* Warnings are said by this program, per result shown (a bare run
	 * leaves some results out, and the MPI path gathers every rank's). */
	dmaconn_set_warning_handler(cli_ignore_warning, NULL);
	/* A verification can take minutes: say how far it is, where someone
	 * watches (never in --json or -q output). */
	if (!c->json && !c->quiet && isatty(STDERR_FILENO))
		dmaconn_set_verify_progress(cli_progress, NULL);
	if (a.replay && dmaconn_set_replay_file(a.replay) != DMACONN_OK) {
		cli_error(c, EXIT_FAILED, "%s", dmaconn_last_error());
		return EXIT_FAILED;
	}
	cli_silent = a.record_path != NULL;
	const char *replay = a.replay;
	if (!replay && secure_getenv("DMACONN_REPLAY") && *secure_getenv("DMACONN_REPLAY"))
		replay = secure_getenv("DMACONN_REPLAY"); /* label replayed output either way */
	if (a.record_path)
		return cli_record(c, a.record_path, replay != NULL, a.verify);

	dmaconn_device_type type = DMACONN_DEVICE_CUDA;
	if (a.type_name && dmaconn_device_type_parse(a.type_name, &type) != DMACONN_OK) {
		const char *names[] = { dmaconn_device_type_name(DMACONN_DEVICE_CUDA),
					dmaconn_device_type_name(DMACONN_DEVICE_ROCM),
					dmaconn_device_type_name(DMACONN_DEVICE_XPU) };
		const char *near = cli_suggest(a.type_name, names, 3);
		if (near)
			return cli_usage_error(c, "unknown device type '%.100s' (expected %s, %s or %s; did you mean '%s'?)",
					       a.type_name, names[0], names[1], names[2], near);
		return cli_usage_error(c, "%s", dmaconn_last_error());
	}

	struct cli_detectors detectors;
	if (cli_detectors_load(&detectors) != 0) {
		cli_detectors_free(&detectors);
		cli_error(c, EXIT_FAILED, "out of memory");
		return EXIT_FAILED;
	}
	/* A connection type spelled wrong is a usage error, as a device type is. */
	if (a.type_name && a.conn && cli_bad_connection(&detectors, type, a.conn, why, sizeof(why))) {
		cli_detectors_free(&detectors);
		return cli_usage_error(c, "%s", why);
	}
	int count = detectors.count;
	dmaconn_device_type *types = detectors.types;
	const char **conns = detectors.conns;

	/* The file's name is shown in output lines (text, --topo, a comment of
	 * gres.conf, the DOT label): never a control character of it. */
	char *replay_shown = replay ? cli_text_fix(replay) : NULL;
	if (replay_shown)
		replay = replay_shown;
	int status = 0;
	clock_gettime(CLOCK_MONOTONIC, &c->start);
	int kept_by_rank = a.mpi && c->format && !dc_format_describes_job(c->format);
	if (kept_by_rank) {
		/* Each node's document, from its first rank (docs/multinode.md). */
		if (cli_local_rank() == 0)
			status = a.type_name ? cli_one(c, type, a.conn, 0, replay)
					     : cli_all(c, count, types, conns, a.all, replay);
		a.mpi = 0;
	} else if (a.mpi) {
		int one = a.type_name != NULL;
		status = cli_mpi_run(c, &argc, &argv, one ? 1 : count, one ? &type : types,
				 one ? &a.conn : conns);
	} else if (a.verify) {
		status = cli_verify(c, type, a.timeout_ms);
	} else if (a.explain) {
		status = cli_explain(c, count, types, conns, a.type_name, type, a.conn);
	} else if (a.nics || a.bind) {
		status = cli_place(c, a.type_name ? type : cli_place_type(replay), a.bind, replay);
	} else if (a.topo) {
		status = a.type_name ? cli_topo_one(c, count, types, conns, type, replay)
				     : cli_topo(c, count, types, conns, replay);
	} else if (a.list) {
		json_t *list = c->json ? json_array() : NULL;
		for (int i = 0; i < count; i++) {
			const char *tn = dmaconn_device_type_name(types[i]);
			if (!list) {
				printf("%s %s\n", tn, conns[i]);
				continue;
			}
			json_t *d = json_object();
			json_object_set_new(d, "device_type", cli_json_string(tn));
			json_object_set_new(d, "connection_type", cli_json_string(conns[i]));
			json_array_append_new(list, d);
		}
		if (list)
			json_object_set_new(cli_doc(c), "detectors", list);
	} else if (a.type_name) {
		status = cli_one(c, type, a.conn, 0, replay);
	} else {
		status = cli_all(c, count, types, conns, a.all, replay);
	}
	if (c->format && !a.mpi && (!kept_by_rank || cli_local_rank() == 0)) {
		int written = cli_format_write(c, replay, 0, status ? c->last_error : NULL);
		status = status ? status : written;
	}
	cli_detectors_free(&detectors);
	free(replay_shown);
	return status;
}

/* The CLI; main() below, or a test that runs it again and again (getopt
 * state is reset on entry, tests/fuzz).  With --json, standard output
 * receives exactly one document, whatever happened. */
int dmaconn_cli_main(int argc, char **argv)
{
	struct cli c = { 0 };
	int status = argc > 1 && !strcmp(argv[1], "check") ? dc_check_main(argc - 1, argv + 1)
							     : cli_run(&c, argc, argv);
	dmaconn_set_verify_progress(NULL, NULL);
	cli_progress_end();
	cli_doc_write(&c);
	/* Output that could not be written is a failure (a full disk, a closed
	 * descriptor), not a success with nothing to show. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "dmaconn: cannot write standard output: %s\n", strerror(errno));
		clearerr(stdout);
		return EXIT_FAILED;
	}
	return status;
}

#ifndef DMACONN_CLI_NO_MAIN
int main(int argc, char **argv)
{
	/* With descriptor 1 closed, a file opened during the run would take its
	 * place and receive the output: hold it with /dev/null, and fail. */
	int closed = fcntl(STDOUT_FILENO, F_GETFD) == -1 && errno == EBADF;
	if (closed) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0 && fd != STDOUT_FILENO) {
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
	}
	int status = dmaconn_cli_main(argc, argv);
	/* `dmaconn check` that could not report is UNKNOWN, as a plugin's is. */
	int check = argc > 1 && !strcmp(argv[1], "check"), failed = check ? DC_CHECK_UNKNOWN : EXIT_FAILED;
	if (closed && !cli_silent && !(check && dc_check_silent())) {
		fputs("dmaconn: cannot write standard output: it is closed\n", stderr);
		return failed;
	}
	if (fclose(stdout) != 0) {
		fprintf(stderr, "dmaconn: cannot write standard output: %s\n", strerror(errno));
		return failed;
	}
	return status;
}
#endif
