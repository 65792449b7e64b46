/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of output formats (tools/format.h). */
#include <stdlib.h>
#include <string.h>

#include "format.h"

const struct dc_format dc_formats[] = {
	{ "text", "the matrices and device lines (the default)", NULL },
	{ "json", "one JSON object, as --json (docs/json-output.md)", NULL },
#define DC_FORMAT_ENTRY(id, name, help) { name, help, dc_format_##id },
	DC_FORMATS(DC_FORMAT_ENTRY)
#undef DC_FORMAT_ENTRY
	{ NULL, NULL, NULL },
};

const struct dc_format *dc_format_find(const char *name)
{
	for (const struct dc_format *f = dc_formats; name && f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

int dc_format_describes_job(const struct dc_format *f)
{
	return !strcmp(f->name, "prometheus") || !strcmp(f->name, "dot");
}

int dc_format_reads_documents(const struct dc_format *f)
{
	return !strcmp(f->name, "slurm-topology");
}

const char *dc_format_device(const dmaconn_result *r, int i, const char *key)
{
	const char *v = dmaconn_result_device_get(r, i, key);
	return v ? v : "";
}

const dmaconn_result *dc_format_result(const struct dc_format_input *in, dmaconn_device_type type,
				       const char *connection)
{
	for (int k = 0; k < in->count; k++)
		if (dmaconn_result_device_type(in->results[k]) == type &&
		    !strcmp(dmaconn_result_connection_type(in->results[k]), connection))
			return in->results[k];
	return NULL;
}

int dc_format_fully_connected(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && dmaconn_result_get(r, i, j) <= 0)
				return 0;
	return n > 0;
}

int dc_format_links(const dmaconn_result *r, int i, int j)
{
	static const char *const keys[] = { DMACONN_PROP_XGMI_LINKS, DMACONN_PROP_XELINK_LINKS,
					    DMACONN_PROP_NVLINK_LINKS };
	if (dmaconn_result_device_type(r) == DMACONN_DEVICE_CUDA &&
	    !strcmp(dmaconn_result_connection_type(r), "nvlink"))
		return dmaconn_result_get(r, i, j);
	if (!strcmp(dmaconn_result_connection_type(r), "p2p") || !strcmp(dmaconn_result_connection_type(r), "verified"))
		return -1; /* the link-counting detectors say it */
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		long long n;
		if (dmaconn_result_pair_int(r, i, j, keys[k], &n) == DMACONN_OK && n >= 0 && n < 1 << 20)
			return (int)n;
	}
	return dmaconn_result_get(r, i, j) == 0 ? 0 : -1;
}
