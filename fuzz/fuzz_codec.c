/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result codec's reader (dc_codec_read, src/codec_result.c) on any
 * JSON text.  A document it accepts becomes a result that the codec writes
 * exactly and reads back: accepted again, and from then on the same text
 * (the first reading may merge warnings that the builder cleans to the
 * same text).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "dmaconn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct dc_codec exact = { DC_CODEC_EXACT, NULL };

static int fuzz_read(dmaconn_builder *b, void *arg)
{
	char why[200];
	int unavailable = 0;
	return dc_codec_read(arg, b, &unavailable, why, sizeof(why)) == 0 ? DMACONN_OK
									   : dmaconn_builder_fail(b, DMACONN_EINVAL, "%s", why);
}

/* The result doc describes, written exactly; NULL when refused. */
static char *fuzz_round(json_t *doc)
{
	dmaconn_result *r = NULL;
	if (dmaconn_result_build(DMACONN_DEVICE_CUDA, "fuzz", fuzz_read, doc, &r) != DMACONN_OK)
		return NULL;
	json_t *again = dc_codec_result(&exact, r);
	dmaconn_result_release(r);
	char *text = again ? json_dumps(again, JSON_COMPACT) : NULL;
	json_decref(again);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	if (!quiet) {
		setenv("DMACONN_QUIET", "1", 1);
		quiet = 1;
	}
	json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!doc)
		return 0;
	char *text[3] = { fuzz_round(doc), NULL, NULL };
	json_decref(doc);
	for (int k = 1; text[0] && k < 3; k++) {
		doc = json_loads(text[k - 1], 0, NULL);
		text[k] = doc ? fuzz_round(doc) : NULL;
		json_decref(doc);
		if (!text[k])
			abort();
	}
	if (text[0] && strcmp(text[1], text[2]) != 0)
		abort();
	for (int k = 0; k < 3; k++)
		free(text[k]);
	return 0;
}
