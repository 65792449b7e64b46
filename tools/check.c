/* SPDX-License-Identifier: BSD-3-Clause */
/* `dmaconn check`: this node against what a good node looked like (a file
 * `dmaconn --json` wrote there) or against a rule (--expect-links N,
 * --fully-connected), as a monitoring plugin reports it: the exit status
 * and first line follow the Nagios plugin conventions (0 OK, 1 WARNING,
 * 2 CRITICAL, 3 UNKNOWN; "DMACONN STATE - text | perfdata"), and every
 * finding follows on a line of its own. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "cli.h"
#include "dmaconn.h"

enum { CHECK_OK = 0, CHECK_WARNING = 1, CHECK_CRITICAL = 2, CHECK_UNKNOWN = 3 };

/* Links read per device: above NVML_NVLINK_MAX_LINKS (36 in the newest nvml.h). */
#define NVLINK_MAX_LINKS_CHECKED 64

static const char *const check_state_names[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

/* The order findings are listed and the exit status chosen in: what is
 * wrong first, then what could not be told, then what will pass. */
static int check_rank(int state)
{
	static const int rank[] = { 0, 1, 3, 2 };
	return rank[state];
}

static const char check_help[] =
	"Usage: dmaconn check --expect FILE [-d TYPE -c CONNECTION] [--match position|identity]\n"
	"                     [--verify] [--expect-multicast] [--replay FILE] [--json | -q]\n"
	"       dmaconn check --expect-links N | --fully-connected [-d TYPE -c CONNECTION]\n"
	"       dmaconn check [--expect-multicast]\n"
	"\n"
	"Compares this node with FILE, what `dmaconn --json` printed on a good node\n"
	"(every detector in it, or the one -d/-c names): the device count, models,\n"
	"every matrix entry, link speeds where known, NVSwitch fabric state, and\n"
	"verified pairs when FILE has them (from the verdict cache, or --verify).\n"
	"Every mode, and `dmaconn check` alone, also applies NVIDIA's NVLink health\n"
	"rules to the NVIDIA GPUs: each active link at its generation's speed, the\n"
	"NVSwitch fabric registered and healthy, no link down that a GPU of the same\n"
	"model has active (with --expect, the file says which links count).\n"
	"Exit status and first line as a Nagios plugin: 0 OK, 1 WARNING (fabric\n"
	"registration in progress, bandwidth degraded, an extra device), 2 CRITICAL\n"
	"(a missing GPU, fewer links, a link below its generation's speed, a lost\n"
	"pair, no multicast where expected, failed verification), 3 UNKNOWN\n"
	"(detection could not run, verification absent, a bad FILE or usage); then\n"
	"one line per finding.\n"
	"\n"
	"      --expect FILE        the good node's `dmaconn --json` output\n"
	"      --match position     devices paired by position and model (default:\n"
	"                           UUIDs differ between nodes)\n"
	"      --match identity     paired by UUID, else PCI bus id (the same node)\n"
	"      --expect-links N     every pair has at least N links (default -d cuda\n"
	"                           -c nvlink)\n"
	"      --fully-connected    every pair has connectivity\n"
	"      --expect-multicast   every pair of NVIDIA GPUs can join one multicast\n"
	"                           object (cuda/multicast)\n"
	"      --verify             verify the pairs FILE has verdicts for, now\n"
	"      --replay FILE        check a recorded node instead of this one\n"
	"      --json               the report as one JSON object: status, exit_code,\n"
	"                           summary, perfdata, findings [{state, text}]\n"
	"  -q, --quiet              no output: the exit status alone\n";

/* One line of the report. */
struct finding {
	int state;
	char *text;
};

struct check {
	struct finding *f;
	int nf;
	int *seen;               /* open addressing: finding index + 1, or 0 */
	size_t nseen;            /* its slots, a power of two */
	int devices, expected;   /* for the summary's performance data */
	int proven;              /* results of the file that expect something */
	char detectors[256];     /* the pairs compared, for the OK line */
	char *fatal;             /* what stopped the check (UNKNOWN), or NULL */
	int usage;               /* fatal is a usage error */
	int health;              /* NVIDIA's NVLink health rules applied (once) */
	int health_only;         /* nothing else asked: the OK line says so */
};

/* Every name in the report comes from the node, a file or the command
 * line: one line per finding, '|' starts Nagios performance data, a
 * terminal obeys escapes, and --json holds UTF-8 alone; so neither a C0 or
 * C1 control character, '|', nor a byte that is not UTF-8 (a name cut by
 * the report's length too) may pass: "?" instead. */
static void check_clean(char *s)
{
	unsigned char *p = (unsigned char *)s, *end = p + strlen(s), *o = p;
	while (p < end) {
		unsigned cp;
		int n = cli_utf8_char(p, end, &cp);
		if (!n || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == '|') {
			*o++ = '?';
			p += n ? n : 1;
		} else {
			memmove(o, p, (size_t)n);
			o += n;
			p += n;
		}
	}
	*o = '\0';
}

static void check_oom(void)
{
	fputs("DMACONN UNKNOWN - out of memory\n", stdout);
	exit(CHECK_UNKNOWN);
}

static uint64_t check_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot of text in c->seen: its finding, or the free slot it goes to. */
static size_t check_slot(const struct check *c, const char *text)
{
	size_t mask = c->nseen - 1, at = (size_t)check_hash(text) & mask;
	while (c->seen[at] && strcmp(c->f[c->seen[at] - 1].text, text))
		at = (at + 1) & mask;
	return at;
}

static void check_say(struct check *c, int state, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check_say(struct check *c, int state, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	check_clean(text);
	if ((size_t)c->nf * 2 + 2 > c->nseen) {
		/* Grown (and rehashed) at half full: a finding is looked up once. */
		size_t n = c->nseen ? c->nseen * 2 : 64;
		int *seen = calloc(n, sizeof(*seen));
		if (!seen)
			check_oom();
		free(c->seen);
		c->seen = seen;
		c->nseen = n;
		for (int k = 0; k < c->nf; k++)
			c->seen[check_slot(c, c->f[k].text)] = k + 1;
	}
	size_t at = check_slot(c, text);
	if (c->seen[at]) {
		struct finding *f = &c->f[c->seen[at] - 1];
		if (check_rank(state) > check_rank(f->state))
			f->state = state;
		return; /* said once, whichever detector found it */
	}
	struct finding *f = realloc(c->f, (size_t)(c->nf + 1) * sizeof(*f));
	char *copy = strdup(text);
	if (!f || !copy) {
		free(copy);
		if (f)
			c->f = f;
		check_oom();
	}
	c->f = f;
	c->f[c->nf].state = state;
	c->f[c->nf].text = copy;
	c->seen[at] = ++c->nf;
}

/* Stops the check: the report is this one UNKNOWN line, prefix then the
 * message.  CHECK_UNKNOWN. */
static int check_vstop(struct check *c, const char *prefix, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static int check_vstop(struct check *c, const char *prefix, const char *fmt, va_list ap)
{
	char text[1024];
	size_t n = strlen(prefix) < sizeof(text) ? strlen(prefix) : 0;
	memcpy(text, prefix, n);
	vsnprintf(text + n, sizeof(text) - n, fmt, ap);
	check_clean(text);
	if (!c->fatal && !(c->fatal = strdup(text)))
		check_oom();
	return CHECK_UNKNOWN;
}

static int check_stop(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check_stop(struct check *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = check_vstop(c, "", fmt, ap);
	va_end(ap);
	return rc;
}

static void check_add_detector(struct check *c, const char *type, const char *conn)
{
	size_t len = strlen(c->detectors);
	snprintf(c->detectors + len, sizeof(c->detectors) - len, "%s%s/%s", len ? ", " : "", type, conn);
	check_clean(c->detectors);
}

/* ------------------------------------------------------------ expectation */

/* No more devices than this in a file (a pair's index is below it too). */
#define CHECK_MAX_DEVICES (1 << 15)

/* One device of the expectation, or of this node (the same fields). */
struct dev {
	const char *name, *bus, *uuid, *fabric;
};

/* One pair of the expectation: a Jansson object (of the verify member), or
 * the text of one in the file (the results' pairs are read without being
 * built: a rack's file holds millions, and Jansson's objects cost a
 * kilobyte each). */
struct exp_pair {
	int from, to;
	json_t *obj;
	size_t at, len;     /* in the file's text, without obj */
	double gbps, links; /* nvlink_gbps and nvlink_links read with it */
	unsigned char has_gbps, has_links; /* 1: a number; links: an integer */
};

/* One result of the expectation file. */
struct expected {
	const char *type, *conn;
	int n;
	int *matrix;            /* n*n; NULL for the verify member (no matrix) */
	struct dev *devs;       /* n */
	struct exp_pair *pairs; /* each index below n */
	int npairs;
	int *pair_at;           /* n*n: 1 + the pair (i, j)'s place in pairs, or 0 */
	const char *text;       /* the file's text, where the pairs are */
	json_t *vpairs;         /* the verify member's pairs, in the result's words */
};

static void check_expected_free(struct expected *e)
{
	free(e->matrix);
	free(e->devs);
	free(e->pair_at);
	free(e->pairs);
	json_decref(e->vpairs);
}

static const char *check_jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* ------------------------------------------------------ the file's text */

/* Whitespace, as JSON has it. */
static const char *js_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* The string at p (at its quote): the text after it, or NULL when it is
 * malformed.  Decoded into out[len] when out is given (truncated; a
 * character beyond ASCII as '?'). */
static const char *js_string(const char *p, const char *end, char *out, size_t len)
{
	size_t n = 0;
	if (p >= end || *p++ != '"')
		return NULL;
	while (p < end && *p != '"') {
		if (*p != '\\' && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80) {
			/* The common case, nothing to decode. */
			if (out && n + 1 < len)
				out[n++] = *p;
			p++;
			continue;
		}
		unsigned cp;
		int u = (unsigned char)*p >= 0x80 ? cli_utf8_char((const unsigned char *)p, (const unsigned char *)end, &cp) : 0;
		if ((unsigned char)*p >= 0x80) {
			/* Jansson reads UTF-8 alone. */
			if (!u)
				return NULL;
			if (out && n + 1 < len)
				out[n++] = '?';
			p += u;
			continue;
		}
		char c = *p++;
		if ((unsigned char)c < 0x20)
			return NULL;
		if (c == '\\') {
			if (p >= end)
				return NULL;
			c = *p++;
			switch (c) {
			case '"': case '\\': case '/': break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				unsigned v = 0;
				for (int k = 0; k < 4; k++, p++) {
					if (p >= end || !strchr("0123456789abcdefABCDEF", *p) || !*p)
						return NULL;
					v = v * 16 + (unsigned)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
				}
				/* As Jansson: no NUL, a surrogate only in a pair. */
				if (!v || (v >= 0xdc00 && v <= 0xdfff))
					return NULL;
				if (v >= 0xd800 && v <= 0xdbff) {
					unsigned lo = 0;
					if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
						return NULL;
					for (int k = 2; k < 6; k++) {
						if (!p[k] || !strchr("0123456789abcdefABCDEF", p[k]))
							return NULL;
						lo = lo * 16 + (unsigned)(p[k] <= '9' ? p[k] - '0' : (p[k] | 0x20) - 'a' + 10);
					}
					if (lo < 0xdc00 || lo > 0xdfff)
						return NULL;
					p += 6;
				}
				c = v < 0x80 ? (char)v : '?';
				break;
			}
			default:
				return NULL;
			}
		}
		if (out && n + 1 < len)
			out[n++] = c;
	}
	if (out && len)
		out[n] = '\0';
	return p < end ? p + 1 : NULL;
}

/* The number at p: the text after it, or NULL. */
static const char *js_number(const char *p, const char *end)
{
	const char *s = p;
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (p < end && *p == '.') {
		const char *d = ++p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == d)
			return NULL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		const char *d = p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == d)
			return NULL;
	}
	return p > s ? p : NULL;
}

/* Any value at p: the text after it, or NULL. */
static const char *js_skip(const char *p, const char *end, int depth)
{
	if (p >= end || depth > 64)
		return NULL;
	if (*p == '"')
		return js_string(p, end, NULL, 0);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		int object = *p == '{';
		p = js_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (object) {
				p = js_string(p, end, NULL, 0);
				if (!p || (p = js_ws(p, end)) >= end || *p != ':')
					return NULL;
				p = js_ws(p + 1, end);
			}
			if (!(p = js_skip(p, end, depth + 1)) || (p = js_ws(p, end)) >= end)
				return NULL;
			if (*p == close)
				return p + 1;
			if (*p != ',')
				return NULL;
			p = js_ws(p + 1, end);
		}
	}
	if (*p == '-' || (*p >= '0' && *p <= '9'))
		return js_number(p, end);
	static const char *const words[] = { "true", "false", "null" };
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(words[k]);
		if ((size_t)(end - p) >= n && !memcmp(p, words[k], n))
			return p + n;
	}
	return js_number(p, end);
}

/* Walks the members of the object at p, calling fn on each (key decoded,
 * value's text); the text after the object, or NULL when it is malformed
 * or fn says stop (-1). */
static const char *js_members(const char *p, const char *end,
			      int (*fn)(const char *key, const char *value, const char *value_end, void *ctx), void *ctx)
{
	char key[256];
	if (p >= end || *p != '{')
		return NULL;
	p = js_ws(p + 1, end);
	if (p < end && *p == '}')
		return p + 1;
	for (;;) {
		if (!(p = js_string(p, end, key, sizeof(key))) || (p = js_ws(p, end)) >= end || *p != ':')
			return NULL;
		const char *v = js_ws(p + 1, end);
		if (!(p = js_skip(v, end, 1)) || (fn && fn(key, v, p, ctx) < 0) || (p = js_ws(p, end)) >= end)
			return NULL;
		if (*p == '}')
			return p + 1;
		if (*p != ',')
			return NULL;
		p = js_ws(p + 1, end);
	}
}

/* Where the "pairs" and the "matrix" of each of the document's results are
 * in its text: ranges[2 k] and ranges[2 k + 1] for results[k] (len 0:
 * none), found by walking it as Jansson reads it. */
struct js_range {
	size_t at, len;
};

struct js_doc {
	const char *text;
	struct js_range *ranges;
	size_t nranges, cap;
	int in_result; /* walking a result's members */
};

static int js_result_member(const char *key, const char *v, const char *v_end, void *ctx)
{
	struct js_doc *d = ctx;
	int at = !strcmp(key, "pairs") ? 2 : !strcmp(key, "matrix") ? 1 : 0;
	if (at && *v == '[') {
		d->ranges[d->nranges - at].at = (size_t)(v - d->text);
		d->ranges[d->nranges - at].len = (size_t)(v_end - v);
	}
	return 0;
}

static int js_doc_member(const char *key, const char *v, const char *v_end, void *ctx)
{
	struct js_doc *d = ctx;
	if (strcmp(key, "results") || *v != '[')
		return 0;
	d->nranges = 0; /* a repeated key: Jansson refuses the file */
	const char *p = js_ws(v + 1, v_end);
	while (p < v_end && *p != ']') {
		if (d->nranges + 2 > d->cap) {
			size_t cap = d->cap ? d->cap * 2 : 8;
			struct js_range *r = realloc(d->ranges, cap * sizeof(*r));
			if (!r)
				return -1;
			d->ranges = r;
			d->cap = cap;
		}
		memset(&d->ranges[d->nranges], 0, 2 * sizeof(*d->ranges));
		d->nranges += 2;
		const char *q = *p == '{' ? js_members(p, v_end, js_result_member, d) : js_skip(p, v_end, 2);
		if (!q)
			return -1;
		p = js_ws(q, v_end);
		p = p < v_end && *p == ',' ? js_ws(p + 1, v_end) : p;
	}
	return 0;
}

static int js_range_order(const void *a, const void *b)
{
	const struct js_range *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* Jansson reads the document with each result's pairs and matrix as []
 * (the rest of the range left out but its line ends): they are read from
 * the text. */
struct js_feed {
	const char *text;
	size_t len, at;
	const struct js_range *ranges;
	size_t nranges, next;
};

static size_t js_feed(void *buffer, size_t buflen, void *data)
{
	struct js_feed *f = data;
	char *out = buffer;
	size_t n = 0;
	while (n < buflen && f->at < f->len) {
		while (f->next < f->nranges && (!f->ranges[f->next].len ||
						f->at >= f->ranges[f->next].at + f->ranges[f->next].len))
			f->next++;
		const struct js_range *r = f->next < f->nranges ? &f->ranges[f->next] : NULL;
		if (r && f->at >= r->at) {
			/* "[]", then only the range's line ends, for Jansson's
			 * line numbers. */
			size_t off = f->at - r->at;
			const char *nl = off < 2 ? NULL : memchr(f->text + f->at, '\n', r->len - off);
			if (off < 2) {
				out[n++] = off == 0 ? '[' : ']';
				f->at++;
			} else if (nl) {
				out[n++] = '\n';
				f->at = (size_t)(nl - f->text) + 1;
			} else {
				f->at = r->at + r->len;
			}
			continue;
		}
		size_t stop = r ? r->at : f->len, take = stop - f->at;
		take = take > buflen - n ? buflen - n : take;
		memcpy(out + n, f->text + f->at, take);
		n += take;
		f->at += take;
	}
	return n;
}

/* The value of key in the pair's object text (the object was checked). */
struct js_find {
	const char *key, *value, *end;
};

static int js_find_member(const char *key, const char *v, const char *v_end, void *ctx)
{
	struct js_find *f = ctx;
	if (f->value || strcmp(key, f->key))
		return 0;
	f->value = v;
	f->end = v_end;
	return -1; /* found: stop */
}

static const char *js_member(const char *obj, size_t len, const char *key, const char **value_end)
{
	struct js_find f = { key, NULL, NULL };
	js_members(obj, obj + len, js_find_member, &f);
	*value_end = f.end;
	return f.value;
}

/* The pair's string member key, decoded into buf, or NULL. */
static const char *exp_str(const struct expected *e, const struct exp_pair *p, const char *key, char *buf,
			   size_t len)
{
	if (p->obj)
		return json_string_value(json_object_get(p->obj, key));
	const char *end, *v = js_member(e->text + p->at, p->len, key, &end);
	return v && *v == '"' && js_string(v, end, buf, len) ? buf : NULL;
}

/* The value of property key, a JSON number's text at v, as the library
 * reads key's values (an integer key's only when written as one); -1 when
 * it is another JSON value or does not read as key's type. */
static int js_prop_number(const char *key, const char *v, const char *end, double *out)
{
	char num[64];
	if ((*v != '-' && (*v < '0' || *v > '9')) || (size_t)(end - v) >= sizeof(num))
		return -1;
	memcpy(num, v, (size_t)(end - v));
	num[end - v] = '\0';
	return dmaconn_property_read_number(key, num, out) == DMACONN_OK ? 0 : -1;
}

/* A pair's index member: an integer in [0, n), else -1. */
static int check_index(json_t *p, const char *key, int n)
{
	json_t *v = json_object_get(p, key);
	json_int_t i = json_integer_value(v);
	return json_is_integer(v) && i >= 0 && i < n ? (int)i : -1;
}

/* Whether the number at v is one Jansson reads: an integer within
 * json_int_t, a real that does not overflow. */
static int js_number_fits(const char *v, const char *end)
{
	/* Most need no conversion: up to 18 digits is within json_int_t, and
	 * a real without an exponent overflows only past 308 digits. */
	int exponent = memchr(v, 'e', (size_t)(end - v)) || memchr(v, 'E', (size_t)(end - v));
	int real = exponent || memchr(v, '.', (size_t)(end - v));
	if (!exponent && end - v <= (real ? 300 : 18))
		return 1;
	char buf[64], *num = (size_t)(end - v) < sizeof(buf) ? buf : malloc((size_t)(end - v) + 1);
	if (!num)
		return 0;
	memcpy(num, v, (size_t)(end - v));
	num[end - v] = '\0';
	errno = 0;
	if (strpbrk(num, ".eE")) {
		double d = strtod(num, NULL);
		if ((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE)
			errno = ERANGE;
		else
			errno = 0;
	} else {
		(void)strtoll(num, NULL, 10);
	}
	int fits = errno != ERANGE;
	if (num != buf)
		free(num);
	return fits;
}

/* Reads one pair of a result's text: its indices, below n, and whether a
 * key is repeated or a number out of range, which Jansson (reading with
 * JSON_REJECT_DUPLICATES, as for the rest of the file) refuses. */
struct js_pair {
	int n, from, to;
	struct exp_pair *pair;
	uint64_t *keys; /* the pair's keys, hashed */
	size_t nkeys, cap;
	const char *bad; /* what is wrong with it, or NULL */
};

static int js_key_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Whether a key of the pair just walked is repeated. */
static int js_pair_repeats(struct js_pair *p)
{
	if (p->nkeys > 32)
		qsort(p->keys, p->nkeys, sizeof(*p->keys), js_key_order);
	for (size_t a = 0; a < p->nkeys; a++)
		for (size_t b = a + 1; b < p->nkeys && (p->nkeys <= 32 || b == a + 1); b++)
			if (p->keys[a] == p->keys[b])
				return 1;
	return 0;
}

static int js_pair_member(const char *key, const char *v, const char *v_end, void *ctx)
{
	struct js_pair *p = ctx;
	if (p->nkeys == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		uint64_t *keys = realloc(p->keys, cap * sizeof(*keys));
		if (!keys) {
			p->bad = "out of memory";
			return -1;
		}
		p->keys = keys;
		p->cap = cap;
	}
	p->keys[p->nkeys++] = check_hash(key);
	if ((*v == '-' || (*v >= '0' && *v <= '9')) && !js_number_fits(v, v_end)) {
		p->bad = "a number out of range";
		return -1;
	}
	int *at = !strcmp(key, "from") ? &p->from : !strcmp(key, "to") ? &p->to : NULL;
	if (!strcmp(key, DMACONN_PROP_NVLINK_GBPS) && !p->pair->has_gbps)
		p->pair->has_gbps = js_prop_number(key, v, v_end, &p->pair->gbps) == 0;
	if (!strcmp(key, DMACONN_PROP_NVLINK_LINKS) && !p->pair->has_links)
		p->pair->has_links = js_prop_number(key, v, v_end, &p->pair->links) == 0;
	if (!at)
		return 0;
	long long x = -1;
	const char *d = v;
	while (d < v_end && *d >= '0' && *d <= '9' && x < CHECK_MAX_DEVICES)
		x = (x < 0 ? 0 : x * 10) + (*d++ - '0');
	*at = d == v_end && x >= 0 && x < p->n ? (int)x : -2; /* -2: not an index below n */
	return 0;
}

/* The pairs of a result, from the file's text; 0, or -1 with why. */
static int check_text_pairs(struct expected *e, const char *text, const struct js_range *r, char *why, size_t len)
{
	const char *p = text + r->at, *end = p + r->len;
	size_t cap = 0;
	struct js_pair jp = { 0 };
	int rc = -1;
	e->text = text;
	p = js_ws(p + 1, end);
	while (p < end && *p != ']') {
		struct exp_pair got = { 0 };
		jp.n = e->n;
		jp.from = jp.to = -1;
		jp.pair = &got;
		jp.nkeys = 0;
		const char *q = *p == '{' ? js_members(p, end, js_pair_member, &jp) : NULL;
		if (!jp.bad && q && js_pair_repeats(&jp))
			jp.bad = "a key repeated";
		if (jp.bad || !q) {
			snprintf(why, len, "%s/%s: pair %d: %s", e->type, e->conn, e->npairs,
				 jp.bad ? jp.bad : "malformed");
			goto out;
		}
		if (jp.from < 0 || jp.to < 0) {
			snprintf(why, len, "%s/%s: pair %d: from and to are not device indices below %d", e->type, e->conn,
				 e->npairs, e->n);
			goto out;
		}
		if ((size_t)e->npairs == cap) {
			cap = cap ? cap * 2 : 64;
			struct exp_pair *grown = cap < INT_MAX ? realloc(e->pairs, cap * sizeof(*grown)) : NULL;
			if (!grown) {
				snprintf(why, len, "out of memory");
				goto out;
			}
			e->pairs = grown;
		}
		got.from = jp.from;
		got.to = jp.to;
		got.at = (size_t)(p - text);
		got.len = (size_t)(q - p);
		e->pairs[e->npairs++] = got;
		p = js_ws(q, end);
		int comma = p < end && *p == ',';
		if (comma && (p = js_ws(p + 1, end)) < end && *p == '{')
			continue;
		if (comma || p >= end || *p != ']') {
			snprintf(why, len, "%s/%s: pairs is malformed after pair %d", e->type, e->conn, e->npairs - 1);
			goto out;
		}
	}
	rc = 0;
out:
	free(jp.keys);
	return rc;
}

/* Indexes e->pairs by (from, to): the first one counts. */
static int check_index_pairs(struct expected *e, char *why, size_t len)
{
	if (!e->npairs || !e->matrix)
		return 0; /* the verify member's pairs are walked, not looked up */
	if (!(e->pair_at = calloc((size_t)e->n * (size_t)e->n + 1, sizeof(int)))) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (int k = 0; k < e->npairs; k++) {
		int *at = &e->pair_at[e->pairs[k].from * e->n + e->pairs[k].to];
		*at = *at ? *at : k + 1;
	}
	return 0;
}

/* An entry of the matrix's text: an integer from 0 to INT_MAX, and the
 * text after it; NULL when it is not. */
static const char *js_entry(const char *p, const char *end, int *out)
{
	const char *q = js_number(p, end);
	long long v = 0;
	if (!q)
		return NULL;
	for (const char *d = p; d < q; d++) {
		if (*d < '0' || *d > '9' || v > INT_MAX)
			return NULL; /* a sign, a fraction, an exponent, too large */
		v = v * 10 + (*d - '0');
	}
	if (v > INT_MAX)
		return NULL;
	*out = (int)v;
	return q;
}

/* The matrix (n rows of n entries) from the file's text; 0, or -1 with why. */
static int check_text_matrix(struct expected *e, const char *text, const struct js_range *r, char *why, size_t len)
{
	const char *p = js_ws(text + r->at + 1, text + r->at + r->len), *end = text + r->at + r->len;
	int i = 0, j = 0;
	for (; p < end && *p != ']'; i++) {
		if (i >= e->n || *p != '[')
			goto row;
		p = js_ws(p + 1, end);
		for (j = 0; p < end && *p != ']'; j++) {
			const char *q = j < e->n ? js_entry(p, end, &e->matrix[i * e->n + j]) : NULL;
			if (!q)
				goto entry;
			p = js_ws(q, end);
			int comma = p < end && *p == ',';
			if (comma && (p = js_ws(p + 1, end)) < end && *p != ']')
				continue;
			if (comma || p >= end || *p != ']')
				goto entry;
		}
		if (j != e->n)
			goto row;
		p = js_ws(p + 1, end);
		if (p < end && *p == ',' && (p = js_ws(p + 1, end)) < end && *p == '[')
			continue;
		if (p >= end || *p != ']')
			goto row;
	}
	if (i != e->n)
		goto row;
	return 0;
entry:
	if (i < e->n && j < e->n) {
		snprintf(why, len, "%s/%s: matrix entry [%d][%d] is not an integer from 0 to %d", e->type, e->conn, i, j,
			 INT_MAX);
		return -1;
	}
row:
	snprintf(why, len, "%s/%s: matrix row %d or device %d is malformed", e->type, e->conn, i, i);
	return -1;
}

/* Reads one "results" entry (its pairs and matrix from the file's text
 * where range says: range[0] the pairs, range[1] the matrix); 0, or -1
 * with why. */
static int check_read_result(json_t *r, const char *text, const struct js_range *range, struct expected *e,
			     char *why, size_t len)
{
	json_t *m = json_object_get(r, "matrix"), *d = json_object_get(r, "devices");
	json_t *pairs = json_object_get(r, "pairs");
	const struct js_range *mtext = range && range[1].len ? &range[1] : NULL;
	e->type = json_string_value(json_object_get(r, "device_type"));
	e->conn = json_string_value(json_object_get(r, "connection_type"));
	if (!e->type || !e->conn || !json_is_array(m) || !json_is_array(d) ||
	    (!mtext && json_array_size(m) != json_array_size(d)) || json_array_size(d) > CHECK_MAX_DEVICES ||
	    (mtext && (json_array_size(m) || mtext->len < json_array_size(d) * json_array_size(d)))) {
		snprintf(why, len, "a result lacks device_type, connection_type, or a matrix as large as its devices");
		return -1;
	}
	if (pairs && (!json_is_array(pairs) || json_array_size(pairs))) {
		snprintf(why, len, "%s/%s: pairs is not a list", e->type, e->conn);
		return -1;
	}
	e->n = (int)json_array_size(d);
	/* The file's own size bounds what is allocated: n rows of n entries. */
	for (int i = 0; i < e->n; i++) {
		json_t *row = json_array_get(m, (size_t)i), *dev = json_array_get(d, (size_t)i);
		if ((!mtext && (!json_is_array(row) || json_array_size(row) != (size_t)e->n)) || !json_is_object(dev)) {
			snprintf(why, len, "%s/%s: matrix row %d or device %d is malformed", e->type, e->conn, i, i);
			return -1;
		}
	}
	e->matrix = calloc((size_t)e->n * (size_t)e->n + 1, sizeof(int));
	e->devs = calloc((size_t)e->n + 1, sizeof(*e->devs));
	if (!e->matrix || !e->devs) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (mtext && check_text_matrix(e, text, mtext, why, len) != 0)
		return -1;
	for (int i = 0; i < e->n; i++) {
		json_t *row = json_array_get(m, (size_t)i), *dev = json_array_get(d, (size_t)i);
		for (int j = 0; !mtext && j < e->n; j++) {
			json_t *v = json_array_get(row, (size_t)j);
			json_int_t x = json_integer_value(v);
			if (!json_is_integer(v) || x < 0 || x > INT_MAX) {
				snprintf(why, len, "%s/%s: matrix entry [%d][%d] is not an integer from 0 to %d", e->type,
					 e->conn, i, j, INT_MAX);
				return -1;
			}
			e->matrix[i * e->n + j] = (int)x;
		}
		e->devs[i].name = check_jstr(dev, DMACONN_PROP_NAME);
		e->devs[i].bus = check_jstr(dev, DMACONN_PROP_PCI_BUS_ID);
		e->devs[i].uuid = check_jstr(dev, DMACONN_PROP_UUID);
		e->devs[i].fabric = check_jstr(dev, DMACONN_PROP_FABRIC_STATE);
	}
	if (range && range[0].len && check_text_pairs(e, text, &range[0], why, len) != 0)
		return -1;
	return check_index_pairs(e, why, len);
}

/* The pair (i, j) of the expectation, or NULL. */
static const struct exp_pair *check_exp_pair(const struct expected *e, int i, int j)
{
	int at = e->pair_at ? e->pair_at[i * e->n + j] : 0;
	return at ? &e->pairs[at - 1] : NULL;
}

/* The helper's words for a capability in a --verify document, and the
 * result's (as src/backends/cuda_verify/verified.c turns one into the other). */
static const char *const check_helper_caps[][2] = {
	{ "verified_read", DMACONN_PROP_READ_VERIFIED },
	{ "verified_write", DMACONN_PROP_WRITE_VERIFIED },
	{ "verified_atomics_32", DMACONN_PROP_ATOMICS_32_VERIFIED },
	{ "verified_atomics_64", DMACONN_PROP_ATOMICS_64_VERIFIED },
};

/* A `dmaconn --verify --json` document's "verify" member as the
 * cuda/verified result it stands for: its pairs carry "verified" (pass,
 * fail, no_peer) and the capabilities in the result's words; its device
 * count is the largest index of a pair plus one, and it has no matrix.
 * 1 when there is one, 0 when not, -1 with why when malformed. */
static int check_read_verify(json_t *doc, struct expected *e, char *why, size_t len)
{
	json_t *v = json_object_get(doc, "verify"), *pairs = json_object_get(v, "pairs"), *p;
	if (!v)
		return 0;
	e->type = json_string_value(json_object_get(v, "device_type"));
	e->conn = DMACONN_PROP_VERIFIED;
	if (!e->type || !json_is_array(pairs) || json_array_size(pairs) >= INT_MAX) {
		snprintf(why, len, "its verify member is malformed");
		return -1;
	}
	size_t k;
	json_array_foreach(pairs, k, p)
	{
		int a = check_index(p, "from", CHECK_MAX_DEVICES), b = check_index(p, "to", CHECK_MAX_DEVICES);
		if (a < 0 || b < 0 || !json_is_string(json_object_get(p, "status"))) {
			snprintf(why, len, "its verify member is malformed: pair %zu lacks a status or device indices "
				 "below %d", k, CHECK_MAX_DEVICES);
			return -1;
		}
		e->n = a >= e->n ? a + 1 : e->n;
		e->n = b >= e->n ? b + 1 : e->n;
	}
	e->npairs = (int)json_array_size(pairs);
	if (!(e->vpairs = json_array()) || !(e->devs = calloc((size_t)e->n + 1, sizeof(*e->devs))) ||
	    !(e->pairs = calloc((size_t)e->npairs + 1, sizeof(*e->pairs)))) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (int i = 0; i < e->n; i++)
		e->devs[i].name = e->devs[i].bus = e->devs[i].uuid = e->devs[i].fabric = "";
	json_array_foreach(pairs, k, p)
	{
		json_t *q = json_object();
		json_object_set_new(q, DMACONN_PROP_VERIFIED, json_copy(json_object_get(p, "status")));
		for (size_t c = 0; c < sizeof(check_helper_caps) / sizeof(check_helper_caps[0]); c++) {
			const char *got = json_string_value(json_object_get(p, check_helper_caps[c][0]));
			json_object_set_new(q, check_helper_caps[c][1],
					    json_string(!got ? "not_run" : !strcmp(got, "1") ? "yes" : "no"));
		}
		json_array_append_new(e->vpairs, q);
		e->pairs[k] = (struct exp_pair){ .from = check_index(p, "from", e->n), .to = check_index(p, "to", e->n),
						 .obj = q };
	}
	return 1;
}

struct exp_get {
	const struct expected *e;
	const struct exp_pair *p;
	char buf[8][64];
	int next;
};

static const char *check_exp_get(const char *key, void *ctx)
{
	struct exp_get *g = ctx;
	char *buf = g->buf[g->next++ % 8];
	return exp_str(g->e, g->p, key, buf, sizeof(g->buf[0]));
}

/* Whether the expectation's pair passed verification: the library's rule. */
static int check_exp_passed(const struct expected *e, const struct exp_pair *p)
{
	struct exp_get g = { e, p, { { 0 } }, 0 };
	return dmaconn_verified_passed(check_exp_get, &g);
}

/* ------------------------------------------------------------- this node */

static struct dev check_node_dev(const dmaconn_result *r, int i)
{
	struct dev d;
	const char *s;
	d.name = (s = dmaconn_result_device_get(r, i, DMACONN_PROP_NAME)) ? s : "";
	d.bus = (s = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID)) ? s : "";
	d.uuid = (s = dmaconn_result_device_get(r, i, DMACONN_PROP_UUID)) ? s : "";
	d.fabric = (s = dmaconn_result_device_get(r, i, DMACONN_PROP_FABRIC_STATE)) ? s : "";
	return d;
}

/* "GPU 3 (0000:5d:00.0)". */
static const char *check_gpu(char *buf, size_t len, int i, const struct dev *d)
{
	if (*d->bus)
		snprintf(buf, len, "GPU %d (%s)", i, d->bus);
	else
		snprintf(buf, len, "GPU %d", i);
	return buf;
}

/* The first warning, without its "type/conn: " prefix. */
static const char *check_warning(const dmaconn_result *r, const char *tname, const char *conn)
{
	const char *w = dmaconn_result_warning_count(r) ? dmaconn_result_warning(r, 0) : "";
	size_t skip = strlen(tname) + strlen(conn) + 3;
	if (strlen(w) > skip && !strncmp(w, tname, strlen(tname)) && !strncmp(w + skip - 2, ": ", 2))
		w += skip;
	return w;
}

/* Detection of a pair; NULL after an UNKNOWN finding when it could not run
 * (an error; the vendor's library or driver not answering, or NVIDIA GPUs
 * NVML did not describe: no driver, NVML failing). */
static dmaconn_result *check_detect(struct check *c, const char *tname, const char *conn, int verify)
{
	dmaconn_device_type type;
	dmaconn_result *r = NULL;
	if (dmaconn_device_type_parse(tname, &type) != DMACONN_OK) {
		check_say(c, CHECK_UNKNOWN, "%s/%s: unknown device type", tname, conn);
		return NULL;
	}
	int rc = verify ? dmaconn_detect(type, conn, &r) : dmaconn_detect_passive(type, conn, &r);
	if (rc != DMACONN_OK) {
		check_say(c, CHECK_UNKNOWN, "%s/%s: detection could not run: %s", tname, conn, dmaconn_last_error());
		return NULL;
	}
	int n = dmaconn_result_size(r);
	/* Said once for all of the vendor's detectors. */
	for (int i = 0; type == DMACONN_DEVICE_CUDA && strcmp(conn, DMACONN_PROP_VERIFIED) && i < n; i++) {
		if (dmaconn_result_device_get(r, i, DMACONN_PROP_NVML_INDEX))
			continue;
		check_say(c, CHECK_UNKNOWN, "%s: detection could not run: %s did not describe the %d NVIDIA GPU%s: %s",
			  tname, dmaconn_connection_text(type, "p2p", DMACONN_CONNECTION_SOURCE), n, n == 1 ? "" : "s",
			  check_warning(r, tname, conn));
		dmaconn_result_release(r);
		return NULL;
	}
	if (dmaconn_result_unavailable(r)) {
		check_say(c, CHECK_UNKNOWN, "%s: detection could not run: %s", tname, check_warning(r, tname, conn));
		dmaconn_result_release(r);
		return NULL;
	}
	if (n > c->devices)
		c->devices = n;
	check_add_detector(c, tname, conn);
	return r;
}

/* Whether GPU i waits for the NVSwitch fabric: its pairs read 0 until then. */
static int check_fabric_pending(const dmaconn_result *r, int i)
{
	const char *s = dmaconn_result_device_get(r, i, DMACONN_PROP_FABRIC_STATE);
	return s && !strcmp(s, "in_progress");
}

static void check_fabric(struct check *c, const char *tname, const dmaconn_result *r, int i, const char *expected)
{
	struct dev d = check_node_dev(r, i);
	char g[96];
	if (!*d.fabric || !strcmp(d.fabric, expected) || (!*expected && !strcmp(d.fabric, "completed")) ||
	    !strcmp(d.fabric, "not_supported"))
		return;
	if (check_fabric_pending(r, i))
		check_say(c, CHECK_WARNING,
			  "%s: %s: NVSwitch fabric registration still in progress (expected %s); its pairs count once "
			  "it completes", tname, check_gpu(g, sizeof(g), i, &d), *expected ? expected : "completed");
	else
		check_say(c, CHECK_CRITICAL, "%s: %s: NVSwitch fabric state expected %s, found %s", tname,
			  check_gpu(g, sizeof(g), i, &d), *expected ? expected : "completed", d.fabric);
}

/* A pair that reads less than it should, unless the fabric explains it. */
static void check_pair(struct check *c, const dmaconn_result *r, const char *label, int fi, int fj, int want,
		       int got, int sym, const char *what)
{
	if (check_fabric_pending(r, fi) || check_fabric_pending(r, fj))
		return; /* reported once per GPU, as the fabric */
	struct dev a = check_node_dev(r, fi), b = check_node_dev(r, fj);
	char ga[96], gb[96];
	const char *reason = dmaconn_result_pair_get(r, fi, fj, DMACONN_PROP_REASON);
	check_gpu(ga, sizeof(ga), fi, &a);
	check_gpu(gb, sizeof(gb), fj, &b);
	char wanted[64];
	if (what)
		snprintf(wanted, sizeof(wanted), "%s%d", what, want);
	else
		snprintf(wanted, sizeof(wanted), "connectivity");
	if (got == 0)
		check_say(c, CHECK_CRITICAL, "%s %s %s %s: lost pair: expected %s, found 0%s%s%s", label, ga,
			  sym ? "<->" : "->", gb, wanted, reason ? " (" : "", reason ? reason : "", reason ? ")" : "");
	else
		check_say(c, CHECK_CRITICAL, "%s %s %s %s: fewer links: expected %s%d, found %d", label, ga,
			  sym ? "<->" : "->", gb, what, want, got);
}

/*
 * Per GPU, the NVLinks down behind the pair findings of result r (those
 * said since finding `first`), said before them: "cuda: GPU 3
 * (0000:5d:00.0): links 5 and 11 down" ("links 0-17" for a run).  Only
 * where the findings are CRITICAL: a GPU whose links were already down on
 * the good node adds nothing to a report that is otherwise OK; `always`
 * (no good node to say so): CRITICAL in any case, as NVIDIA's rule has it.
 */
static void check_links_down(struct check *c, const char *tname, const dmaconn_result *r, int first, int always)
{
	int critical = always, before = c->nf;
	for (int k = first; k < c->nf; k++)
		critical |= c->f[k].state == CHECK_CRITICAL;
	for (int i = 0; critical && i < dmaconn_result_size(r); i++) {
		long long links[64];
		int n = 0;
		if (dmaconn_result_device_list(r, i, DMACONN_PROP_NVLINK_DOWN_LINKS, links, 64, &n) != DMACONN_OK || !n)
			continue;
		n = n < 64 ? n : 64;
		char text[512], g[96];
		size_t o = 0;
		for (int k = 0; k < n && o < sizeof(text);) {
			int run = k;
			while (run + 1 < n && links[run + 1] == links[run] + 1)
				run++;
			if (run - k < 2)
				run = k; /* two in a row are named, not a range */
			int last = run + 1 >= n;
			o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%lld", !k ? "" : last ? " and " : ", ", links[k]);
			if (run > k && o < sizeof(text))
				o += (size_t)snprintf(text + o, sizeof(text) - o, "-%lld", links[run]);
			k = run + 1;
		}
		/* The list holds only links another visible GPU has active: of a
		 * GPU with none active, its other links may be down too. */
		long long active = -1;
		const char *inactive = dmaconn_result_device_get(r, i, DMACONN_PROP_NVLINK_INACTIVE_LINKS);
		int none = dmaconn_result_device_int(r, i, DMACONN_PROP_NVLINK_ACTIVE_LINKS, &active) == DMACONN_OK &&
			   active == 0 && inactive &&
			   strcmp(inactive, dmaconn_result_device_get(r, i, DMACONN_PROP_NVLINK_DOWN_LINKS)) != 0;
		struct dev d = check_node_dev(r, i);
		check_say(c, CHECK_CRITICAL, "%s: %s: link%s %s down%s", tname, check_gpu(g, sizeof(g), i, &d),
			  n == 1 ? "" : "s", text, none ? ", none active" : "");
	}
	/* Move the new lines [before, nf) ahead of [first, before), and index
	 * them again where they now are (a line said again is looked up). */
	for (int k = before; k < c->nf; k++) {
		struct finding f = c->f[k];
		memmove(c->f + first + 1, c->f + first, (size_t)(k - first) * sizeof(*c->f));
		c->f[first++] = f;
	}
	if (before < c->nf && first < c->nf) {
		memset(c->seen, 0, c->nseen * sizeof(*c->seen));
		for (int k = 0; k < c->nf; k++)
			c->seen[check_slot(c, c->f[k].text)] = k + 1;
	}
}

/* ------------------------------------------------------- NVLink health */

/*
 * NVML's speed of a healthy link of each NVLink generation, MB/s per
 * direction (NVML_FI_DEV_NVLINK_GET_SPEED; nvidia-smi nvlink -s shows it in
 * GB/s), by the GPU's compute capability: NVIDIA's health validation rule
 * (nvlink_bandwidth_count_speed: GB200 and GB300 53125, H100 26562), and
 * what V100 and Turing (25.781 GB/s), A100 (25 GB/s) and GA102 boards
 * (14.062 GB/s) report.  A generation not listed is not judged.
 */
static const struct {
	const char *cc;
	unsigned int mbps;
} check_link_rates[] = {
	{ "7.0", 25781 }, { "7.5", 25781 }, { "8.0", 25000 },  { "8.6", 14062 },
	{ "9.0", 26562 }, { "10.0", 53125 }, { "10.3", 53125 },
};

/* The speed rule on GPU i: each active link NVML gives a speed for
 * (nvlink_speeds_mbps, "0-4:53125,5:26562,...") at its generation's rate. */
static void check_link_speeds(struct check *c, const char *tname, const dmaconn_result *r, int i)
{
	const char *list = dmaconn_result_device_get(r, i, DMACONN_PROP_NVLINK_SPEEDS_MBPS);
	const char *cc = dmaconn_result_device_get(r, i, DMACONN_PROP_COMPUTE_CAPABILITY);
	unsigned int rate = 0;
	for (size_t k = 0; cc && k < sizeof(check_link_rates) / sizeof(check_link_rates[0]); k++)
		if (!strcmp(cc, check_link_rates[k].cc))
			rate = check_link_rates[k].mbps;
	if (!list || !rate)
		return;
	char slow[512] = "", g[96];
	size_t o = 0;
	int runs = 0, n = 0;
	long long mbps[NVLINK_MAX_LINKS_CHECKED];
	if (dmaconn_property_read_runs(DMACONN_PROP_NVLINK_SPEEDS_MBPS, list, mbps, NVLINK_MAX_LINKS_CHECKED, &n) !=
	    DMACONN_OK)
		return;
	if (n > NVLINK_MAX_LINKS_CHECKED)
		n = NVLINK_MAX_LINKS_CHECKED;
	/* Runs of links at one speed below the rate, as "links 5-6 at 26562". */
	for (int a = 0; a < n && o < sizeof(slow);) {
		int b = a;
		while (b + 1 < n && mbps[b + 1] == mbps[a])
			b++;
		if (mbps[a] > 0 && mbps[a] < rate) {
			o += (size_t)snprintf(slow + o, sizeof(slow) - o, "%s%s %d", runs ? ", " : "",
					      b > a ? "links" : "link", a);
			if (b > a && o < sizeof(slow))
				o += (size_t)snprintf(slow + o, sizeof(slow) - o, "-%d", b);
			if (o < sizeof(slow))
				o += (size_t)snprintf(slow + o, sizeof(slow) - o, " at %lld", mbps[a]);
			runs++;
		}
		a = b + 1;
	}
	if (!runs)
		return;
	struct dev d = check_node_dev(r, i);
	check_say(c, CHECK_CRITICAL, "%s: %s: %s MB/s, below the %u MB/s of its NVLink generation (compute "
		  "capability %s)", tname, check_gpu(g, sizeof(g), i, &d), slow, rate, cc);
}

/* The NVSwitch fabric's registration status and health mask of GPU i (the
 * mask's fields as nvml.h lays them out: 2 bits each from bit 0, degraded
 * bandwidth, route recovery, route unhealthy, access timeout recovery, then
 * 4 bits of incorrect configuration). */
static void check_fabric_health(struct check *c, const char *tname, const dmaconn_result *r, int i)
{
	struct dev d = check_node_dev(r, i);
	const char *status = dmaconn_result_device_get(r, i, DMACONN_PROP_FABRIC_STATUS);
	const char *mask_text = dmaconn_result_device_get(r, i, DMACONN_PROP_FABRIC_HEALTH_MASK);
	const char *summary = dmaconn_result_device_get(r, i, DMACONN_PROP_FABRIC_HEALTH_SUMMARY);
	char g[96], sum[64] = "";
	check_gpu(g, sizeof(g), i, &d);
	if (!strcmp(d.fabric, "completed") && status && strcmp(status, DMACONN_FABRIC_STATUS_SUCCESS))
		check_say(c, CHECK_CRITICAL, "%s: %s: NVSwitch fabric registration completed with %s", tname, g, status);
	if (!mask_text || !strcmp(d.fabric, "not_supported"))
		return;
	long long mask_value = 0;
	if (dmaconn_result_device_int(r, i, DMACONN_PROP_FABRIC_HEALTH_MASK, &mask_value) != DMACONN_OK)
		return;
	unsigned long mask = (unsigned long)mask_value;
	unsigned int conf = (unsigned int)(mask >> 8) & 0xf;
	static const char *const confs[] = { "", "", "incorrect system GUID", "incorrect chassis serial number",
					     "no partition", "insufficient NVLinks", "incompatible GPU firmware",
					     "invalid location", "GPU state invalid" };
	if (summary)
		snprintf(sum, sizeof(sum), ", summary %s", summary);
	if (((mask >> 4) & 3) == 1)
		check_say(c, CHECK_CRITICAL, "%s: %s: NVSwitch fabric route unhealthy (health mask %s%s)", tname, g,
			  mask_text, sum);
	if (conf >= 2)
		check_say(c, CHECK_CRITICAL, "%s: %s: NVSwitch fabric incorrectly configured: %s (health mask %s%s)",
			  tname, g, conf < sizeof(confs) / sizeof(confs[0]) ? confs[conf] : "unknown", mask_text, sum);
	if ((mask & 3) == 1)
		check_say(c, CHECK_WARNING, "%s: %s: NVSwitch fabric bandwidth degraded (health mask %s%s)", tname, g,
			  mask_text, sum);
	if (((mask >> 2) & 3) == 1 || ((mask >> 6) & 3) == 1)
		check_say(c, CHECK_WARNING, "%s: %s: NVSwitch fabric %s in progress (health mask %s%s)", tname, g,
			  ((mask >> 2) & 3) == 1 ? "route recovery" : "access timeout recovery", mask_text, sum);
}

/*
 * NVIDIA's NVLink health rules on the NVIDIA GPUs of result r, once per
 * check: link speed, the fabric's status and health, and (without a good
 * node's file, which says which links count) links down that a GPU of the
 * same model has active, and the fabric registered.  A GPU whose links are
 * all inactive where no GPU of its model has one active (a PCIe card
 * without a bridge) has no NVLink finding: from NVML alone it cannot be
 * told from a bridged card that lost every link, which --expect tells.
 */
static void check_health(struct check *c, const char *tname, const dmaconn_result *r, int expect, int first)
{
	dmaconn_device_type type;
	if (c->health || dmaconn_device_type_parse(tname, &type) != DMACONN_OK || type != DMACONN_DEVICE_CUDA ||
	    !strcmp(dmaconn_result_connection_type(r), DMACONN_PROP_VERIFIED))
		return;
	c->health = 1;
	for (int i = 0; i < dmaconn_result_size(r); i++) {
		if (!expect)
			check_fabric(c, tname, r, i, "");
		check_fabric_health(c, tname, r, i);
		check_link_speeds(c, tname, r, i);
	}
	if (!expect)
		check_links_down(c, tname, r, first, 1);
}

/* ---------------------------------------------------------- comparisons */

/* map[i]: this node's device for the expectation's device i, or -1. */
static void check_match(const struct expected *e, const struct dev *nd, int n, int identity, int *map, int *used)
{
	for (int j = 0; j < n; j++)
		used[j] = 0;
	for (int i = 0; i < e->n; i++)
		map[i] = -1;
	if (identity || n != e->n) {
		/* By UUID (the same node), else by bus id (the same kind of node
		 * keeps its slots: a lost GPU must not shift its peers). */
		int by_uuid = identity;
		for (int pass = by_uuid ? 0 : 1; pass < 2; pass++)
			for (int i = 0; i < e->n; i++) {
				if (map[i] >= 0)
					continue;
				const char *want = pass == 0 ? e->devs[i].uuid : e->devs[i].bus;
				for (int j = 0; *want && j < n && map[i] < 0; j++) {
					if (!used[j] && !strcmp(pass == 0 ? nd[j].uuid : nd[j].bus, want)) {
						map[i] = j;
						used[j] = 1;
					}
				}
			}
		int matched = 0;
		for (int i = 0; i < e->n; i++)
			matched += map[i] >= 0;
		if (identity || matched == (e->n < n ? e->n : n))
			return;
	}
	for (int i = 0; i < e->n; i++) {
		map[i] = i < n ? i : -1;
		if (i < n)
			used[i] = 1;
	}
	for (int j = e->n; j < n; j++)
		used[j] = 0;
}

/* Whether the verified result e holds a pass to compare. */
static int check_expects_pass(const struct expected *e)
{
	for (int k = 0; k < e->npairs; k++)
		if (e->pairs[k].from != e->pairs[k].to && check_exp_passed(e, &e->pairs[k]))
			return 1;
	return 0;
}

/* The verdicts: each pair the expectation says passed passes now. */
static void check_verdicts(struct check *c, const struct expected *e, const dmaconn_result *r, const struct dev *nd,
			   const int *map, const char *label, int verify)
{
	int absent = 0;
	char ga[96], gb[96];
	for (int k = 0; k < e->npairs; k++) {
		const struct exp_pair *p = &e->pairs[k];
		int i = p->from, j = p->to;
		if (i == j || map[i] < 0 || map[j] < 0 || (e->pair_at && check_exp_pair(e, i, j) != p) ||
		    !check_exp_passed(e, p))
			continue;
		if (dmaconn_result_pair_verified(r, map[i], map[j]))
			continue;
		const char *got = dmaconn_result_pair_get(r, map[i], map[j], DMACONN_PROP_VERIFIED);
		if (got && (!strcmp(got, "pass") || !strcmp(got, "fail") || !strcmp(got, "hang")))
			check_say(c, CHECK_CRITICAL, "%s %s -> %s: verification expected pass, found %s", label,
				  check_gpu(ga, sizeof(ga), map[i], &nd[map[i]]),
				  check_gpu(gb, sizeof(gb), map[j], &nd[map[j]]),
				  !strcmp(got, "pass") ? "a capability not proven" : got);
		else
			absent++;
	}
	if (absent)
		check_say(c, CHECK_UNKNOWN, "%s: %d pair%s expected to pass %s no verdict (%s)", label, absent,
			  absent == 1 ? "" : "s", absent == 1 ? "has" : "have",
			  verify ? "verification could not run" : "none cached: run with --verify");
}

/* The matrix and the link speeds, pair by pair. */
static void check_matrix(struct check *c, const struct expected *e, const dmaconn_result *r, const struct dev *nd,
			 const int *map, const char *label)
{
	int n = dmaconn_result_size(r);
	const int *m = dmaconn_result_matrix(r);
	char ga[96], gb[96];
	for (int i = 0; i < e->n; i++) {
		for (int j = 0; j < e->n; j++) {
			int fi = map[i], fj = map[j];
			if (i == j || fi < 0 || fj < 0)
				continue;
			int want = e->matrix[i * e->n + j], got = m[fi * n + fj];
			int sym = want == e->matrix[j * e->n + i] && got == m[fj * n + fi];
			const char *arrow = sym ? "<->" : "->";
			if (sym && j < i)
				continue; /* said with the pair (j, i) */
			if (got < want)
				check_pair(c, r, label, fi, fj, want, got, sym, "");
			else if (got > want)
				check_say(c, CHECK_WARNING, "%s %s %s %s: expected %d, found %d (more than the expectation)",
					  label, check_gpu(ga, sizeof(ga), fi, &nd[fi]), arrow,
					  check_gpu(gb, sizeof(gb), fj, &nd[fj]), want, got);
			/* Link speed, where both know it: per link, as fewer links are
			 * said by the nvlink matrix. */
			const struct exp_pair *ep = check_exp_pair(e, i, j);
			if (!ep || got <= 0 || !ep->has_gbps)
				continue;
			double w = ep->gbps, wl = ep->links;
			int links_known = ep->has_links && wl > 0;
			double g = 0;
			long long gl = 0;
			if (!dmaconn_result_pair_get(r, fi, fj, DMACONN_PROP_NVLINK_GBPS))
				continue;
			(void)dmaconn_result_pair_number(r, fi, fj, DMACONN_PROP_NVLINK_GBPS, &g);
			int per_link = links_known &&
				       dmaconn_result_pair_int(r, fi, fj, DMACONN_PROP_NVLINK_LINKS, &gl) == DMACONN_OK &&
				       gl > 0 && gl <= INT_MAX;
			if (per_link && (w /= wl) > 0)
				g /= (double)gl;
			if (g + 0.05 < w)
				check_say(c, CHECK_CRITICAL, "%s %s %s %s: slower links: expected %.1f GB/s%s, found %.1f GB/s",
					  label, check_gpu(ga, sizeof(ga), fi, &nd[fi]), arrow,
					  check_gpu(gb, sizeof(gb), fj, &nd[fj]), w, per_link ? " per link" : "", g);
		}
	}
}

static void check_against(struct check *c, const struct expected *e, int identity, int verify)
{
	int verified = !strcmp(e->conn, DMACONN_PROP_VERIFIED);
	char label[128], ga[96];
	snprintf(label, sizeof(label), "%s/%s", e->type, e->conn);
	/* Only the verdicts the expectation holds are compared: without a pass
	 * it says nothing of this node. */
	if (verified && !check_expects_pass(e))
		return;
	c->proven += verified || e->n > 0;
	if (e->n > c->expected)
		c->expected = e->n;
	dmaconn_result *r = check_detect(c, e->type, e->conn, verify && verified);
	if (!r)
		return;
	int n = dmaconn_result_size(r);
	int *map = calloc((size_t)e->n + 1, sizeof(int)), *used = calloc((size_t)n + 1, sizeof(int));
	struct dev *nd = calloc((size_t)n + 1, sizeof(*nd));
	if (!map || !used || !nd) {
		check_say(c, CHECK_UNKNOWN, "out of memory");
		goto out;
	}
	for (int j = 0; j < n; j++)
		nd[j] = check_node_dev(r, j);
	check_match(e, nd, n, identity, map, used);
	int first = c->nf;
	if (verified && n != e->n) {
		/* The other detectors say what happened to the devices. */
		const char *w = dmaconn_result_warning_count(r) ? dmaconn_result_warning(r, 0) : "";
		check_say(c, CHECK_UNKNOWN, "%s: no verdict for the %d devices expected%s%s", label, e->n,
			  verify ? ": verification could not run: " : " (no cached verdict: run with --verify)",
			  verify ? w : "");
		goto out;
	}
	if (n < e->n)
		check_say(c, CHECK_CRITICAL, "%s: expected %d devices, found %d", e->type, e->n, n);
	for (int i = 0; i < e->n; i++) {
		if (map[i] < 0) {
			check_say(c, CHECK_CRITICAL, "%s: missing GPU: expected %s, %s, found none", e->type,
				  check_gpu(ga, sizeof(ga), i, &e->devs[i]), *e->devs[i].name ? e->devs[i].name : "(unknown)");
			continue;
		}
		const struct dev *d = &nd[map[i]];
		if (*e->devs[i].name && strcmp(e->devs[i].name, d->name))
			check_say(c, CHECK_CRITICAL, "%s: %s: model differs: expected %s, found %s", e->type,
				  check_gpu(ga, sizeof(ga), map[i], d), e->devs[i].name, *d->name ? d->name : "(unknown)");
		check_fabric(c, e->type, r, map[i], e->devs[i].fabric);
	}
	for (int j = 0; j < n; j++)
		if (!used[j])
			check_say(c, CHECK_WARNING, "%s: extra device: %s, %s, not in the expectation", e->type,
				  check_gpu(ga, sizeof(ga), j, &nd[j]), *nd[j].name ? nd[j].name : "(unknown)");
	if (verified)
		check_verdicts(c, e, r, nd, map, label, verify);
	else
		check_matrix(c, e, r, nd, map, label);
	check_links_down(c, e->type, r, first, 0);
	check_health(c, e->type, r, 1, first);
out:
	free(map);
	free(used);
	free(nd);
	dmaconn_result_release(r);
}

/* --expect-links N and --fully-connected, on one detector's result. */
static void check_rule(struct check *c, const char *tname, const char *conn, int links, int full)
{
	dmaconn_result *r = check_detect(c, tname, conn, 0);
	char label[128];
	if (!r)
		return;
	snprintf(label, sizeof(label), "%s/%s", tname, conn);
	int n = dmaconn_result_size(r), first = c->nf;
	if (n == 0)
		check_say(c, CHECK_CRITICAL, "%s: no devices found", label);
	for (int i = 0; i < n; i++)
		check_fabric(c, tname, r, i, "");
	int want = links > 0 ? links : 1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int got = dmaconn_result_get(r, i, j);
			int sym = got == dmaconn_result_get(r, j, i);
			if (i == j || (sym && j < i) || got >= want || (!full && links <= 0))
				continue;
			if (got > 0 && links <= 0)
				continue;
			check_pair(c, r, label, i, j, want, got, sym, links > 0 ? "at least " : NULL);
		}
	check_links_down(c, tname, r, first, 0);
	check_health(c, tname, r, 0, first);
	dmaconn_result_release(r);
}

/* `dmaconn check` with no rule but NVIDIA's: the health rules on the
 * detector -d/-c names (cuda/nvlink by default). */
static void check_node(struct check *c, const char *tname, const char *conn)
{
	dmaconn_result *r = check_detect(c, tname, conn, 0);
	if (!r)
		return;
	if (dmaconn_result_size(r) == 0)
		check_say(c, CHECK_UNKNOWN, "%s/%s: no devices found: nothing to check", tname, conn);
	check_health(c, tname, r, 0, c->nf);
	dmaconn_result_release(r);
}

/* --expect-multicast: every pair of NVIDIA GPUs can join one multicast
 * object.  The pairs that cannot are said with their reason, one line per
 * reason (a GPU's own fault is the reason of each of its pairs): its first
 * pair and how many more. */
static void check_multicast(struct check *c)
{
	dmaconn_result *r = check_detect(c, "cuda", "multicast", 0);
	if (!r)
		return;
	int n = dmaconn_result_size(r), ngroups = 0;
	if (n == 0)
		check_say(c, CHECK_UNKNOWN, "cuda/multicast: no devices found: nothing to check");
	struct mc_group {
		const char *text; /* the reason's text, interned by the result */
		int i, j, sym, count;
	} *groups = calloc((size_t)n * (size_t)n + 1, sizeof(*groups));
	if (!groups) {
		check_say(c, CHECK_UNKNOWN, "out of memory");
		dmaconn_result_release(r);
		return;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			int got = dmaconn_result_get(r, i, j), sym = got == dmaconn_result_get(r, j, i);
			if (i == j || got > 0 || (sym && j < i))
				continue;
			const char *text = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT);
			int g = 0;
			while (g < ngroups && groups[g].text != text &&
			       (!text || !groups[g].text || strcmp(groups[g].text, text)))
				g++;
			if (g == ngroups)
				groups[ngroups++] = (struct mc_group){ text, i, j, sym, 0 };
			groups[g].count++;
		}
	char ga[96], gb[96], more[64] = "";
	for (int g = 0; g < ngroups; g++) {
		int i = groups[g].i, j = groups[g].j;
		struct dev a = check_node_dev(r, i), b = check_node_dev(r, j);
		const char *code = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON), *text = groups[g].text;
		if (groups[g].count > 1)
			snprintf(more, sizeof(more), " and %d more pair%s", groups[g].count - 1,
				 groups[g].count == 2 ? "" : "s");
		else
			more[0] = '\0';
		check_say(c, CHECK_CRITICAL, "cuda/multicast %s %s %s%s: multicast expected, found 0 (%s%s%s)",
			  check_gpu(ga, sizeof(ga), i, &a), groups[g].sym ? "<->" : "->", check_gpu(gb, sizeof(gb), j, &b),
			  more, code ? code : "no reason given", text ? ": " : "", text ? text : "");
	}
	free(groups);
	dmaconn_result_release(r);
}

/* ----------------------------------------------------------------- main */

static int check_usage(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check_usage(struct check *c, const char *fmt, ...)
{
	if (!c->fatal)
		c->usage = 1;
	va_list ap;
	va_start(ap, fmt);
	int rc = check_vstop(c, "usage: ", fmt, ap);
	va_end(ap);
	return rc;
}

static void check_ignore_warning(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
}

/* The state, and the finding the first line names (-1: none). */
static int check_state(const struct check *c, int *worst, int counts[4])
{
	int state = CHECK_OK;
	*worst = -1;
	for (int k = 0; k < c->nf; k++) {
		counts[c->f[k].state]++;
		if (check_rank(c->f[k].state) > check_rank(state)) {
			state = c->f[k].state;
			*worst = k;
		} else if (*worst < 0 && c->f[k].state == state && state != CHECK_OK) {
			*worst = k;
		}
	}
	return c->fatal ? CHECK_UNKNOWN : state;
}

static void check_summary(const struct check *c, int worst, char *buf, size_t len)
{
	if (c->fatal)
		snprintf(buf, len, "%s", c->fatal);
	else if (worst < 0 && c->health_only)
		snprintf(buf, len, "%d device%s healthy (%s: NVLink health rules)", c->devices, c->devices == 1 ? "" : "s",
			 c->detectors);
	else if (worst < 0)
		snprintf(buf, len, "%d device%s as expected (%s)", c->devices, c->devices == 1 ? "" : "s", c->detectors);
	else if (c->nf > 1)
		snprintf(buf, len, "%s (and %d more finding%s)", c->f[worst].text, c->nf - 1, c->nf == 2 ? "" : "s");
	else
		snprintf(buf, len, "%s", c->f[worst].text);
}

/* The report as one JSON object; -1 when it could not be built. */
static int check_report_json(const struct check *c, int state, int worst, const int counts[4])
{
	char summary[1200];
	check_summary(c, worst, summary, sizeof(summary));
	json_t *o = json_object(), *findings = json_array(), *perf = json_object();
	if (!o || !findings || !perf) {
		json_decref(o);
		json_decref(findings);
		json_decref(perf);
		return -1;
	}
	json_object_set_new(o, "status", json_string(check_state_names[state]));
	json_object_set_new(o, "exit_code", json_integer(state));
	json_object_set_new(o, "summary", json_string(summary));
	if (c->fatal) {
		json_t *f = json_object();
		json_object_set_new(f, "state", json_string(check_state_names[CHECK_UNKNOWN]));
		json_object_set_new(f, "text", json_string(c->fatal));
		json_array_append_new(findings, f);
		json_decref(perf);
	} else {
		json_object_set_new(perf, "devices", json_integer(c->devices));
		if (c->expected)
			json_object_set_new(perf, "expected_devices", json_integer(c->expected));
		json_object_set_new(perf, "critical", json_integer(counts[CHECK_CRITICAL]));
		json_object_set_new(perf, "warning", json_integer(counts[CHECK_WARNING]));
		json_object_set_new(perf, "unknown", json_integer(counts[CHECK_UNKNOWN]));
		json_object_set_new(o, "perfdata", perf);
		for (int r = 3; r >= 1; r--)
			for (int k = 0; k < c->nf; k++)
				if (check_rank(c->f[k].state) == r) {
					json_t *f = json_object();
					json_object_set_new(f, "state", json_string(check_state_names[c->f[k].state]));
					json_object_set_new(f, "text", json_string(c->f[k].text));
					json_array_append_new(findings, f);
				}
	}
	json_object_set_new(o, "findings", findings);
	int rc = json_dumpf(o, stdout, JSON_COMPACT) == 0 && putchar('\n') != EOF ? 0 : -1;
	json_decref(o);
	return rc;
}

static int check_report(const struct check *c, int json, int quiet)
{
	int worst, counts[4] = { 0 };
	int state = check_state(c, &worst, counts);
	if (quiet)
		return state;
	if (json) {
		if (check_report_json(c, state, worst, counts) != 0)
			fputs("{\"status\":\"UNKNOWN\",\"exit_code\":3,\"summary\":\"out of memory\",\"findings\":[]}\n",
			      stdout);
		return state;
	}
	char summary[1200];
	check_summary(c, worst, summary, sizeof(summary));
	printf("DMACONN %s - %s", check_state_names[state], summary);
	if (c->fatal) {
		putchar('\n');
		if (c->usage)
			fputs("Try 'dmaconn check --help'.\n", stderr);
		return state;
	}
	printf(" | devices=%d;;;0", c->devices);
	if (c->expected)
		printf(" expected_devices=%d;;;0", c->expected);
	printf(" critical=%d;;;0 warning=%d;;;0 unknown=%d;;;0\n", counts[CHECK_CRITICAL], counts[CHECK_WARNING],
	       counts[CHECK_UNKNOWN]);
	for (int r = 3; r >= 1; r--)
		for (int k = 0; k < c->nf; k++)
			if (check_rank(c->f[k].state) == r)
				printf("%s: %s\n", check_state_names[c->f[k].state], c->f[k].text);
	return state;
}

/* The expectation file, refusing what is not a regular file (a FIFO would
 * wait for a writer forever, a device could be read without end): its
 * text, and the document Jansson reads with the results' pairs as [] (they
 * are in d->ranges); NULL with why. */
static json_t *check_load(const char *file, struct js_doc *d, size_t *size, char *why, size_t len)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0) {
		snprintf(why, len, "unable to open %s: %s", file, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "not a regular file");
		close(fd);
		return NULL;
	}
	/* What does not start as a JSON object is refused before it is read
	 * (a sparse file of gigabytes of NULs would be read whole). */
	char head[4096];
	ssize_t got0 = pread(fd, head, sizeof(head), 0);
	const char *h = js_ws(head, head + (got0 > 0 ? got0 : 0));
	if (st.st_size > 0 && (h >= head + (got0 > 0 ? got0 : 0) ? got0 < (ssize_t)sizeof(head) : *h != '{')) {
		snprintf(why, len, "not a dmaconn --json document: it does not start with '{'");
		close(fd);
		return NULL;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *text = malloc(cap);
	for (ssize_t got = 1; text && got > 0; n += (size_t)got) {
		if (n == cap) {
			char *grown = realloc(text, cap * 2);
			if (!grown) {
				free(text);
				text = NULL;
				break;
			}
			text = grown;
			cap *= 2;
		}
		got = read(fd, text + n, cap - n);
		if (got < 0) {
			snprintf(why, len, "cannot read it: %s", strerror(errno));
			free(text);
			close(fd);
			return NULL;
		}
	}
	close(fd);
	if (!text) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	d->text = text;
	*size = n;
	json_error_t jerr;
	const char *p = js_ws(text, text + n);
	if (p < text + n && *p == '{' && !js_members(p, text + n, js_doc_member, d)) {
		/* Malformed: Jansson says where. */
		json_t *doc = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
		snprintf(why, len, "%s", doc ? "nested too deeply" : jerr.text);
		json_decref(doc);
		return NULL;
	}
	/* The ranges in the text's order, for the feed. */
	struct js_range *blanks = calloc(d->nranges + 1, sizeof(*blanks));
	if (!blanks) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	size_t nblanks = 0;
	for (size_t k = 0; k < d->nranges; k++)
		if (d->ranges[k].len)
			blanks[nblanks++] = d->ranges[k];
	qsort(blanks, nblanks, sizeof(*blanks), js_range_order);
	struct js_feed f = { text, n, 0, blanks, nblanks, 0 };
	json_t *doc = json_load_callback(js_feed, &f, JSON_REJECT_DUPLICATES, &jerr);
	free(blanks);
	if (!doc)
		snprintf(why, len, "%s", jerr.text);
	return doc;
}

/* Compares the node with every result of the file (or the one -d/-c
 * name); CHECK_OK, or CHECK_UNKNOWN after check_stop(). */
static int check_file(struct check *c, const char *file, const char *tname, const char *conn, int identity,
		      int verify)
{
	char why[512];
	struct js_doc d = { 0 };
	size_t size = 0;
	json_t *doc = check_load(file, &d, &size, why, sizeof(why)), *results = json_object_get(doc, "results");
	int rc = CHECK_OK, nres = 0, compared = 0;
	if (!doc) {
		free((char *)d.text);
		free(d.ranges);
		return check_stop(c, "cannot use --expect %s: %s", file, why);
	}
	struct expected *es = NULL;
	const char *bad = NULL;
	if (json_integer_value(json_object_get(doc, "version")) != 1)
		bad = "not a dmaconn --json document of version 1";
	else if (json_object_get(doc, "error"))
		bad = "it records a failed run";
	else if (results && !json_is_array(results))
		bad = "its results are not a list";
	if (bad) {
		rc = check_stop(c, "cannot use --expect %s: %s", file, bad);
		goto out;
	}
	size_t count = json_array_size(results) + 1, k;
	json_t *res;
	if (!(es = calloc(count, sizeof(*es)))) {
		rc = check_stop(c, "out of memory");
		goto out;
	}
	/* Every result is read (and refused when malformed) before any is compared. */
	json_array_foreach(results, k, res)
	{
		if (check_read_result(res, d.text, 2 * k < d.nranges ? &d.ranges[2 * k] : NULL, &es[nres++], why,
				      sizeof(why)) != 0) {
			rc = check_stop(c, "cannot use --expect %s: %s", file, why);
			goto out;
		}
	}
	int v = check_read_verify(doc, &es[nres], why, sizeof(why));
	nres += v != 0;
	if (v < 0) {
		rc = check_stop(c, "cannot use --expect %s: %s", file, why);
		goto out;
	}
	if (!nres) {
		rc = check_stop(c, "cannot use --expect %s: it holds no results", file);
		goto out;
	}
	for (int i = 0; i < nres; i++)
		if (!tname || (!strcmp(tname, es[i].type) && !strcmp(conn, es[i].conn))) {
			check_against(c, &es[i], identity, verify);
			compared++;
		}
	if (!compared)
		rc = check_stop(c, "--expect %s has no %s/%s result", file, tname, conn);
	else if (!c->proven)
		/* Made where detection found nothing, or verification proved
		 * nothing: it would pass against any node. */
		check_say(c, CHECK_UNKNOWN, "--expect %s expects nothing: no device and no verified pair to compare",
			  file);
out:
	for (int i = 0; es && i < nres; i++)
		check_expected_free(&es[i]);
	free(es);
	json_decref(doc);
	free((char *)d.text);
	free(d.ranges);
	return rc;
}

static int check_silent_flag;

int dc_check_silent(void)
{
	return check_silent_flag;
}

int dc_check_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "expect", required_argument, NULL, 'e' },
		{ "device-type", required_argument, NULL, 'd' },
		{ "connection", required_argument, NULL, 'c' },
		{ "match", required_argument, NULL, 'm' },
		{ "expect-links", required_argument, NULL, 'L' },
		{ "fully-connected", no_argument, NULL, 'F' }, { "expect-multicast", no_argument, NULL, 'M' },
		{ "verify", no_argument, NULL, 'v' },
		{ "replay", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL, *tname = NULL, *conn = NULL, *replay = NULL;
	int identity = 0, links = 0, full = 0, multicast = 0, verify = 0, json = 0, quiet = 0, help = 0, opt;
	struct check c = { 0 };
	optind = 0;
	opterr = 0;
	check_silent_flag = 0;
	/* Every option is read, a bad one too, so that --json and -q shape the
	 * report of a usage error as well. */
	while ((opt = getopt_long(argc, argv, ":d:c:hq", options, NULL)) != -1) {
		switch (opt) {
		case 'e':
			file = optarg;
			break;
		case 'd':
			tname = optarg;
			break;
		case 'c':
			conn = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "position") && strcmp(optarg, "identity"))
				check_usage(&c, "--match takes position or identity");
			identity = !strcmp(optarg, "identity");
			break;
		case 'L': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || v < 1 || v > 1 << 20)
				check_usage(&c, "--expect-links takes a number of links, at least 1");
			else
				links = (int)v;
			break;
		}
		case 'F':
			full = 1;
			break;
		case 'M':
			multicast = 1;
			break;
		case 'v':
			verify = 1;
			break;
		case 'P':
			replay = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			help = 1;
			break;
		case ':':
			check_usage(&c, "option '%s' needs an argument", argv[optind - 1]);
			break;
		default:
			check_usage(&c, "unknown option '%s'", argv[optind - 1]);
			break;
		}
	}
	check_silent_flag = quiet;
	if (help && !c.fatal) {
		check_silent_flag = 0;
		fputs(check_help, stdout);
		return CHECK_OK;
	}
	if (c.fatal)
		;
	else if (optind < argc)
		check_usage(&c, "unexpected argument '%s'", argv[optind]);
	else if (!tname != !conn)
		check_usage(&c, "-d and -c go together");
	else if (verify && !file)
		check_usage(&c, "--verify compares the verdicts of an --expect file");
	else if (json && quiet)
		check_usage(&c, "--json and -q contradict each other");
	else if (replay && (!*replay || dmaconn_set_replay_file(replay) != DMACONN_OK))
		check_usage(&c, "--replay: %s", *replay ? dmaconn_last_error() : "needs a file name");
	if (!c.fatal) {
		dmaconn_set_warning_handler(check_ignore_warning, NULL);
		if (!file || check_file(&c, file, tname, conn, identity, verify) == CHECK_OK) {
			if (links || full)
				check_rule(&c, tname ? tname : "cuda", conn ? conn : "nvlink", links, full);
			if (!file && !links && !full) {
				/* NVIDIA's rules alone (and multicast where asked). */
				c.health_only = !multicast;
				check_node(&c, tname ? tname : "cuda", conn ? conn : "nvlink");
			}
			if (multicast)
				check_multicast(&c);
		}
	}
	int state = check_report(&c, json, quiet);
	for (int k = 0; k < c.nf; k++)
		free(c.f[k].text);
	free(c.f);
	free(c.seen);
	free(c.fatal);
	/* A report that could not be written tells nothing: UNKNOWN. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (!quiet)
			fprintf(stderr, "dmaconn check: cannot write standard output: %s\n", strerror(errno));
		clearerr(stdout);
		return CHECK_UNKNOWN;
	}
	return state;
}
