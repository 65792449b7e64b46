/* SPDX-License-Identifier: BSD-3-Clause */
/* What the parts of libdmaconn_replay share. */
#ifndef DMACONN_REPLAY_INTERNAL_H
#define DMACONN_REPLAY_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "replay_abi.h"

/* What libdmaconn looks up with dlsym: the ops, and the file to replay
 * instead of DMACONN_REPLAY (DMACONN_REPLAY_USE_FILE). */
#define REPLAY_EXPORT __attribute__((visibility("default")))
REPLAY_EXPORT const struct dmaconn_replay_ops *dmaconn_replay_ops(void);
REPLAY_EXPORT int dmaconn_replay_use_file(const char *path);

/* The format version a recording writes, and the newest the reader reads. */
#define REPLAY_FORMAT_VERSION 2

/* The most devices a file may list, and so the most a recording writes. */
#define REPLAY_MAX_DEVICES 4096

/*
 * The top-level sections of a topology file beyond the component's own keys
 * (sections.c lists them).  read() gets the section's value: 0, or -1 after
 * replay_bad(); release() frees what read() kept; record() adds the section
 * to the recording's top-level object root and never fails the recording.
 * A vendor library's section also answers for the library: load_error()
 * (NULL when the replayed library loaded, else the loader's message),
 * table() (dmaconn_replay_ops()->table), library() and missing() (the
 * replayed library's name and the functions it lacked, a new array),
 * record_begin() (forget what a recording kept) and record_table() (wrap
 * the live table to record it); the others leave them NULL.
 */
struct replay_section {
	const char *key;
	int (*read)(const char *file, json_t *value);
	void (*release)(void);
	void (*record)(json_t *root);
	const char *(*load_error)(void);
	int (*table)(void *api, char *err, size_t errlen);
	const char *(*library)(void);
	json_t *(*missing)(void);
	void (*record_begin)(void);
	void (*record_table)(void *table, const char *library, const char *load_error);
};
extern const struct replay_section replay_sections[]; /* ends with a NULL key */
/* The section of the vendor library `which`, or NULL (sections.c). */
const struct replay_section *replay_library_section(const char *which);
/* "host", the node's name (component.c). */
int replay_host_read(const char *file, json_t *value);
void replay_host_record(json_t *root);

/* The "files" section (files.c), and the ops' read_file, list_dir and record_file. */
int replay_files_read(const char *file, json_t *value);
void replay_files_release(void);
void replay_files_record(json_t *root);
int replay_files_read_file(const char *path, const char **data, size_t *len);
int replay_files_list_dir(const char *path, const char *const **names, int *count);
void replay_files_note(const char *path, const char *data, size_t len);
void replay_files_forget(void);

/* The "verification" section (verification.c), and the ops' verification. */
int replay_verification_read(const char *file, json_t *value);
void replay_verification_release(void);
void replay_verification_record(json_t *root);
int replay_verification(const struct dmaconn_replay_verification **out);

/*
 * record_table's cases that wrap nothing, for the vendor library's section
 * lib: no table (api NULL) and no library while replaying a file whose
 * library loaded -- the replayed library lacked a required function,
 * recorded as such -- or no table, recorded with why (load_error, else
 * "not loaded").  1 when sec was so recorded, 0 when api is to be wrapped.
 */
int replay_record_unwrapped(json_t *sec, const void *api, const char *library, const char *load_error,
			    const struct replay_section *lib);

/* What the recorder keeps is guarded by replay_rec_lock. */
extern pthread_mutex_t replay_rec_lock;

/* An X-macro entry that puts the recorder's wrapper r_NAME in place of
 * api->NAME, or adds NAME to the JSON array `missing` when the library lacks
 * it (expanded over NVML_FUNCTIONS and ZE_FUNCTIONS); _PRESENT: a function
 * whose absence the recording does not list. */
#define REPLAY_WRAP(fn, ret, params, required) \
	if (api->fn)                           \
		api->fn = r_##fn;              \
	else                                   \
		replay_append(&replay_rec_oom, missing, json_string(#fn));
#define REPLAY_WRAP_PRESENT(fn, ret, params, required) \
	if (api->fn)                                   \
		api->fn = r_##fn;

/* An X-macro entry that puts the replay's replay_NAME in api->NAME unless
 * hidden (the file says the library lacks it), and for a required one fails
 * the table (err: "LIBRARY lacks NAME (not KIND?)"); replay_lacks() does that. */
#define REPLAY_BIND(fn, required, hidden, kind)                                                 \
	if (!(hidden))                                                                          \
		api->fn = replay_##fn;                                                          \
	else if (required)                                                                      \
		return replay_lacks(api, sizeof(*api), library, #fn, kind, err, errlen);
int replay_lacks(void *api, size_t size, const char *library, const char *fn, const char *kind, char *err,
		 size_t errlen);

/* The ops' record_begin, record_table, record_write and record_pci_gpus (recording.c). */
void replay_record_begin(const char *const *pinned);
void replay_record_table(const char *vendor, void *table, const char *library, const char *load_error);
int replay_record_write(const char *path, const char *tool, char *err, size_t errlen);
void replay_record_pci_gpus(char (*bus_ids)[DMACONN_REPLAY_BUS_ID_SIZE], int count);

/* 1 when replaying a file (the one libdmaconn passed, else DMACONN_REPLAY),
 * 0 when recording live hardware. */
int replay_active(void);
/* Whether the file loaded (read on first use), and else why not. */
bool replay_loaded(void);
const char *replay_load_failure(void);

#endif
