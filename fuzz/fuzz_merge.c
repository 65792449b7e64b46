/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The multi-node merge (dmaconn_merge, src/merge.c) on any records: the
 * input's lines are the ranks' records (what other ranks send is not to be
 * trusted to be well formed); its first byte picks the connection.  Every
 * input gives a result (a record that cannot be read is a rank that
 * contributed nothing) of at most as many devices as the records hold.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dmaconn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { MAX_RANKS = 16 };
	static const char *const connections[] = { "nvlink", "multicast", "p2p" };
	if (size < 1)
		return 0;
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	const char *records[MAX_RANKS];
	int count = 0;
	for (char *line = text; line && count < MAX_RANKS;) {
		char *end = strchr(line, '\n');
		if (end)
			*end++ = '\0';
		records[count++] = line;
		line = end;
	}
	dmaconn_result *r = NULL;
	int rc = dmaconn_merge(DMACONN_DEVICE_CUDA, connections[data[0] % 3], records, count, -1, &r);
	if (rc == DMACONN_OK && dmaconn_result_size(r) > (int)size)
		abort(); /* a device from nothing */
	if (rc != DMACONN_OK && rc != DMACONN_ENOMEM && rc != DMACONN_EDETECTOR)
		abort();
	dmaconn_result_release(r);
	free(text);
	return 0;
}
