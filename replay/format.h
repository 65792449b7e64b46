/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The topology format described once (docs/replay-format.md): a vendor
 * describes each object of its section as a table of fields, and the same
 * table reads the file into C structures (with the file's checks and its
 * path-qualified messages) and writes a recording from C answers.
 */
#ifndef DMACONN_REPLAY_FORMAT_H
#define DMACONN_REPLAY_FORMAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The names the format gives to a vendor's enumerations and flags. */
struct replay_name {
	const char *name;
	int value;
};
/* The name of value in table t, or NULL. */
const char *replay_name_of(const struct replay_name *t, int value);
/* The value named name (case-insensitive); 0, or -1 when t lacks it. */
int replay_value_of(const struct replay_name *t, const char *name, int *value);

/* A vendor's return codes as the format names them: parse() gives the code
 * of a name (0, or -1 when unknown); failed is the code of a bad name. */
struct replay_codes {
	int (*parse)(const char *name, int *code);
	const char *expected, *unknown;
	int failed;
};

/* Reading and writing one vendor's answers: the file named in messages, its
 * codes, name(), a code as a recording writes it ("NOT_SUPPORTED"), and the
 * vendor's name in messages ("longer than NVML's 95 characters"). */
struct fmt_ctx {
	const char *file;
	const struct replay_codes *codes;
	const char *(*name)(int code);
	const char *vendor;
};

enum fmt_kind {
	FMT_UINT,   /* an integer from min to max, into an unsigned of size bytes */
	FMT_INT,    /* the same, signed */
	FMT_STR,    /* a string into char[size] */
	FMT_NAME,   /* a name of the table aux, into an int of size bytes */
	FMT_FLAGS,  /* an array of names of the table aux, or'ed */
	FMT_CODE,   /* a return code's name */
	FMT_UUID,   /* 16 bytes, "8-4-4-4-12" or 32 hex digits (FMT_LOOSE: hyphens anywhere) */
	FMT_BOOL,   /* true or false, into a bool or an unsigned of size bytes */
	FMT_PAIR,   /* [a, b]: two integers from min to max, of size / 2 bytes each */
	FMT_OBJ,    /* an object, described by the fields aux (ending with a NULL key) */
	FMT_CUSTOM, /* read and written by the struct fmt_custom aux */
};

enum {
	FMT_REQ = 1,   /* "KEY" is required */
	FMT_FAIL = 2,  /* FMT_CODE: SUCCESS is not an error */
	FMT_LOOSE = 4, /* FMT_UUID: hyphens anywhere */
	FMT_FIRST = 8, /* FMT_NAME: a value the table lacks is written as its first name */
};

struct fmt_field {
	const char *key;
	unsigned char kind, flags;
	unsigned short size; /* of the value; FMT_STR: the buffer */
	size_t off;	     /* of the value in the structure read */
	size_t rc;	     /* of the answer's return code (an int) + 1, where {"error":
			      * NAME} may stand in for the value; 0: none */
	int absent;	     /* the return code of an absent key */
	long long min, max;  /* integers */
	const void *aux;
	const char *msg; /* replaces the kind's messages; FMT_NAME's "%s" is the
			  * list of names, FMT_STR's "%d" the buffer's characters */
};

struct fmt_custom {
	/* 0, or -1 after replay_bad(); out is the value's place. */
	int (*read)(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out);
	/* NULL when out of memory. */
	json_t *(*write)(const struct fmt_ctx *c, const struct fmt_field *f, const void *in);
};

/* Table entries: KEY, KIND, the struct and member the value goes to. */
#define FMT_AT(type, member) .size = sizeof(((type *)0)->member), .off = offsetof(type, member)
#define FMT_FIELD(k, kind_, type, member, ...) { .key = k, .kind = kind_, FMT_AT(type, member), __VA_ARGS__ }
/* The answer's return code goes to type.member, `absent` when the key is. */
#define FMT_RC(type, member, absent_) .rc = offsetof(type, member) + 1, .absent = absent_
#define FMT_U32 .min = 0, .max = 4294967295LL

/* Reads the object obj (at path) into out as fields say: 0, or -1 after
 * replay_bad().  Absent keys leave out as it was, but for their codes. */
int fmt_read(const struct fmt_ctx *c, const struct fmt_field *fields, json_t *obj, const char *path, void *out);
/* One field's value v (no error object) into the value's place out. */
int fmt_value(const struct fmt_ctx *c, const struct fmt_field *f, json_t *v, const char *path, void *out);
/* A value in the field's shape, from its place in; NULL when out of memory. */
json_t *fmt_json(const struct fmt_ctx *c, const struct fmt_field *f, const void *in);
/* {"error": NAME} for return code rc (not SUCCESS); the answer: in's value
 * when rc is 0, else that. */
json_t *fmt_error(const struct fmt_ctx *c, int rc);
json_t *fmt_answer(const struct fmt_ctx *c, const struct fmt_field *f, int rc, const void *in);
/* Every field of the structure in (codes at their offsets) as an object. */
json_t *fmt_write(const struct fmt_ctx *c, const struct fmt_field *fields, const void *in);

/* {"error": NAME}: 1 with *rc its code (never SUCCESS); 0 when v is no
 * error object; -1 after replay_bad().  A code name: 0 with *rc, or -1. */
int fmt_error_object(const struct fmt_ctx *c, json_t *v, const char *path, int *rc);
int fmt_code(const struct fmt_ctx *c, json_t *v, const char *path, int *rc);
/* An integer from min to max: 0, or -1 after replay_bad(). */
int replay_get_int(const char *file, json_t *v, const char *path, long long min, long long max, long long *out);
/* An array (else "expected an array of WHAT") of at most max elements,
 * with *out calloc'ed elements of size bytes (NULL for none). */
int fmt_array(const struct fmt_ctx *c, json_t *v, const char *path, const char *what, size_t max, size_t size,
	      void **out, size_t *n);

/* A section's vendor library: "library", the name loaded (NULL: the
 * vendor's default) or {"error": the loader's message}; "missing_functions",
 * the functions it lacked; "init", the initialisation's return code (a name,
 * or {"error": NAME}).  read(): 0 (with error set, nothing else of the
 * section is reachable), or -1 after replay_bad(). */
struct replay_library {
	char *name, *error, **missing;
	int nmissing, init;
};
int replay_library_read(const struct fmt_ctx *c, json_t *sec, const char *path, struct replay_library *l);
void replay_library_release(struct replay_library *l);
/* Whether the library lacked fn; the functions it lacked, a new array. */
bool replay_library_lacks(const struct replay_library *l, const char *fn);
json_t *replay_library_missing(const struct replay_library *l);
/* A recording's "library": name, or {"error": why} when why; and missing,
 * given, as "missing_functions". */
void replay_library_record(json_t *sec, const char *name, const char *why, json_t *missing);

/* Paths name a value in the file ("nvml.devices[0]"), built in buffers of
 * REPLAY_PATH_LEN (a longer one ends in "..."). */
#define REPLAY_PATH_LEN 192
const char *replay_sub(char *buf, const char *base, const char *key);
const char *replay_item(char *buf, const char *base, size_t i);
/* Writes "FILE: PATH: message" as the load error (replay_err); returns -1. */
int replay_bad(const char *file, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
extern char replay_err[1024];

/* Recording: add v to an object or array.  JSON builders return NULL only
 * when out of memory; these note that in *oom (and take v over). */
void replay_put(bool *oom, json_t *obj, const char *key, json_t *v);
void replay_append(bool *oom, json_t *arr, json_t *v);
/* n bytes of text (no NUL among them) as a JSON string; bytes that are not
 * UTF-8 become '?'.  NULL only when out of memory. */
json_t *replay_text(const char *s, size_t n);
/* Set when a recording ran out of memory. */
extern bool replay_rec_oom;

#endif
