/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `dmaconn --record FILE --verify`: after the recording, cuda/verified runs
 * (the helper, never the cache) and its verdict becomes the recording's
 * "verification" section (docs/replay-format.md), which cuda/verified
 * answers from under replay.  A verification that checked nothing writes no
 * section and fails the command: a recording never claims a proof it lacks.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/codec.h"
#include "cli.h"
#include "dmaconn.h"
#include "record_verify.h"

/* The section from cuda/verified's result: devices by bus id, every
 * off-diagonal pair with its properties.  NULL when out of memory or a
 * value is not UTF-8. */
static json_t *verification_section(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	json_t *sec = json_object(), *devs = json_array(), *pairs = json_array();
	if (!sec || !devs || !pairs)
		goto oom;
	for (int i = 0; i < n; i++) {
		const char *bus = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID);
		if (json_array_append_new(devs, json_string(bus ? bus : "")))
			goto oom;
	}
	/* Each pair as the codec writes it, exactly: a value typed where it
	 * reads back as the same text. */
	static const struct dc_codec exact = { DC_CODEC_EXACT, NULL };
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			json_t *p = i != j ? dc_codec_pair(&exact, r, i, j) : NULL;
			if (i != j && (!p || json_array_append_new(pairs, p)))
				goto oom;
		}
	if (json_object_set_new(sec, "devices", devs) || json_object_set_new(sec, "pairs", pairs))
		goto oom_set;
	return sec;
oom:
	json_decref(devs);
	json_decref(pairs);
oom_set:
	json_decref(sec);
	return NULL;
}

/*
 * Replaces the file at path with root: written to a new file of a name
 * nobody could have planted (mkstemp, O_EXCL) in path's directory, with
 * path's permissions, then renamed over it.  0, or -1.
 */
static int replace_file(const char *path, const json_t *root)
{
	char tmp[4096];
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) + 1 : 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.%s.verify.XXXXXX", dirlen, path,
			     slash ? slash + 1 : path) >= sizeof(tmp))
		return -1;
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	int rc = fchmod(fd, st.st_mode & 0777) != 0 ||
			 json_dumpfd(root, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0
		 ? -1
		 : 0;
	if (close(fd) != 0 || rc != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

int dc_cli_verified_nothing(const dmaconn_result *r)
{
	if (strcmp(dmaconn_result_connection_type(r), "verified") != 0 || dmaconn_result_warning_count(r) == 0)
		return 0;
	int n = dmaconn_result_size(r);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			const char *code = i != j ? dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON) : NULL;
			if (i != j && (!code || strcmp(code, DMACONN_REASON_VERIFY_FAILED) ||
				       dmaconn_result_pair_get(r, i, j, DMACONN_PROP_READ_VERIFIED)))
				return 0;
		}
	return n != 1;
}

int dc_cli_record_verification(const char *path, int replayed, char *why, size_t len)
{
	dmaconn_result *r = NULL;
	int rc = dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "verified", &r);
	cli_progress_end();
	if (rc != DMACONN_OK) {
		snprintf(why, len, "cuda/verified: %s", dmaconn_last_error());
		return -1;
	}
	for (int k = 0; k < dmaconn_result_warning_count(r); k++)
		fprintf(stderr, "dmaconn: warning: %s\n", dmaconn_result_warning(r, k));
	if (replayed) {
		/* The recording of a replay copied its section, if it had one. */
		dmaconn_result_release(r);
		return 0;
	}
	if (dc_cli_verified_nothing(r)) {
		snprintf(why, len, "the verification checked nothing; %s has no verification section", path);
		dmaconn_result_release(r);
		return -1;
	}
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err), *sec = verification_section(r);
	dmaconn_result_release(r);
	if (!root || !sec || json_object_set_new(root, "verification", sec) ||
	    replace_file(path, root) != 0) {
		snprintf(why, len, "cannot add the verification section to %s", path);
		if (!root)
			json_decref(sec);
		json_decref(root);
		return -1;
	}
	json_decref(root);
	return 0;
}
