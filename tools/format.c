/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of output formats (tools/format.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../src/codec.h"
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

dmaconn_placement *dc_format_placement(const struct dc_format_input *in)
{
	dmaconn_placement *p = NULL;
	int cuda = 0;
	for (int k = 0; k < in->count; k++)
		cuda |= dmaconn_result_device_type(in->results[k]) == DMACONN_DEVICE_CUDA &&
			dmaconn_result_size(in->results[k]) > 0;
	if (!cuda || in->mpi || dmaconn_placement_detect(DMACONN_DEVICE_CUDA, &p) != DMACONN_OK)
		return NULL;
	return p;
}

int dc_format_place_index(const dmaconn_placement *p, const dmaconn_result *r, int i)
{
	const char *want = dmaconn_result_device_get(r, i, DMACONN_PROP_PCI_BUS_ID);
	for (int k = 0; p && want && k < dmaconn_placement_size(p); k++) {
		const char *bus = dmaconn_placement_device_get(p, k, DMACONN_PROP_PCI_BUS_ID);
		if (bus && !strcasecmp(bus, want))
			return k;
	}
	return -1;
}

const char *dc_format_gdr_mechanism(const dmaconn_placement *p)
{
	const char *dmabuf = dmaconn_placement_get(p, DMACONN_PLACE_DMABUF);
	if (dmabuf && !strcmp(dmabuf, "yes"))
		return DMACONN_GDR_DMABUF;
	if (dmaconn_placement_get(p, DMACONN_PLACE_PEERMEM_MODULE))
		return DMACONN_GDR_PEERMEM;
	return dmabuf && !strcmp(dmabuf, "no") ? DMACONN_GDR_NONE : "unknown";
}

long long dc_format_place_int(const char *key, const char *text, long long dflt)
{
	json_t *v = text ? dc_codec_value(NULL, key, text) : NULL;
	long long out = json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
	json_decref(v);
	return out;
}
