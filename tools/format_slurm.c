/* SPDX-License-Identifier: BSD-3-Clause */
/* --format slurm: gres.conf lines for this node's NVIDIA GPUs, one per GPU,
 * each with its Links= (gres.conf(5)): the NVLink count to GPU 0, 1, ...
 * in the order of the lines, -1 for the GPU itself, 0 for no connection.
 * File=/dev/nvidiaN with N the device's minor number (NVML's answer, the
 * NVML index where none is known, said in a comment), lines in that order
 * since slurmd numbers a GPU by its device file; the header comment holds
 * no control character, whatever the replay path; Type= is the model name as Slurm's NVML autodetection spells it (lower
 * case, "NVIDIA " dropped, others characters '_'). */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format.h"

static void slurm_type(char *out, size_t len, const char *name)
{
	size_t n = 0;
	if (!strncasecmp(name, "NVIDIA ", 7))
		name += 7;
	for (; *name && n + 1 < len; name++)
		out[n++] = isalnum((unsigned char)*name) ? (char)tolower((unsigned char)*name) : '_';
	out[n] = '\0';
}

/* s in a comment line: a control character (a newline would start a line
 * slurmd reads as configuration) becomes '?'. */
static void slurm_comment(FILE *out, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

static int slurm_index(const dmaconn_result *r, int i)
{
	long long v;
	return dmaconn_result_device_int(r, i, DMACONN_PROP_NVML_INDEX, &v) == DMACONN_OK && v >= INT_MIN && v <= INT_MAX
		       ? (int)v
		       : -1;
}

static int slurm_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

/* The N of the GPU's /dev/nvidiaN as NVML reports it, or -1 when unknown (a
 * recording made before it was asked, NVML not answering): that N need not
 * be the NVML index, so the caller says where it assumes so. */
static long slurm_minor(const dmaconn_result *r, int i)
{
	long long m;
	return dmaconn_result_device_int(r, i, DMACONN_PROP_MINOR_NUMBER, &m) == DMACONN_OK && m >= 0 && m <= 0x7fffffffL
		       ? (long)m
		       : -1;
}

int dc_format_slurm(FILE *out, FILE *err, const struct dc_format_input *in)
{
	const dmaconn_result *r = dc_format_result(in, DMACONN_DEVICE_CUDA, "nvlink");
	for (int k = 0; !r && k < in->count; k++)
		if (dmaconn_result_device_type(in->results[k]) == DMACONN_DEVICE_CUDA &&
		    strcmp(dmaconn_result_connection_type(in->results[k]), "verified"))
			r = in->results[k];
	if (!r) {
		fputs("# dmaconn: no NVIDIA GPU results to describe\n", out);
		return 0;
	}
	int n = dmaconn_result_size(r);
	int *order = calloc((size_t)n + 1, sizeof(int));
	if (!order) {
		fputs("dmaconn: out of memory\n", err);
		return 1;
	}
	/* Ordinals by NVML index (ordinal order where NVML gave none). */
	int by_index = 1;
	for (int i = 0; i < n; i++) {
		order[i] = i;
		by_index &= slurm_index(r, i) >= 0;
	}
	/* /dev/nvidiaN: N the minor number, else (said in a comment and a
	 * warning) the NVML index; never two lines with one file. */
	long *file = calloc((size_t)n + 1, sizeof(long)), *sorted = calloc((size_t)n + 1, sizeof(long));
	int unknown = 0, twice = -1, oom = !file || !sorted;
	for (int i = 0; !oom && i < n; i++) {
		file[i] = slurm_minor(r, i);
		unknown += file[i] < 0;
		sorted[i] = file[i] = file[i] >= 0 ? file[i] : by_index ? slurm_index(r, i) : i;
	}
	if (!oom)
		qsort(sorted, (size_t)n, sizeof(long), slurm_cmp);
	for (int i = 1; !oom && twice < 0 && i < n; i++)
		twice = sorted[i] == sorted[i - 1] ? (int)sorted[i] : -1;
	free(sorted);
	/* Lines and Links= columns in device file order: slurmd numbers a GPU by
	 * its /dev/nvidiaN (its Index=), which need not be its NVML index. */
	for (int i = 1; !oom && i < n; i++)
		for (int j = i; j > 0 && file[order[j - 1]] > file[order[j]]; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	if (oom || twice >= 0) {
		if (oom)
			fputs("dmaconn: out of memory\n", err);
		else
			fprintf(err, "dmaconn: --format slurm: two GPUs would get /dev/nvidia%d (a minor number is "
				"unknown and the NVML index taken for it is another GPU's): no gres.conf written\n", twice);
		free(file);
		free(order);
		return 1;
	}
	fprintf(out, "# dmaconn: %d NVIDIA GPU%s; Links= from %s/", n, n == 1 ? "" : "s",
		dmaconn_device_type_name(dmaconn_result_device_type(r)));
	slurm_comment(out, dmaconn_result_connection_type(r));
	if (in->replay) {
		fputs(", replay of ", out);
		slurm_comment(out, in->replay);
	}
	fputc('\n', out);
	if (unknown) {
		fprintf(out, "# dmaconn: %d of %d GPUs have no known minor number (not recorded, or NVML did not say): "
			"their File= assumes /dev/nvidia<NVML index>; check with ls -l /dev/nvidia[0-9]*\n", unknown, n);
		fprintf(err, "dmaconn: warning: --format slurm: %d of %d GPUs have no known minor number; their "
			"File= assumes /dev/nvidia<NVML index>\n", unknown, n);
	}
	/* A GPU in MIG mode: its line is the whole GPU (its instances have no
	 * peer DMA, so no link); slurmd's AutoDetect=nvml would list the
	 * instances, each with its /dev/nvidia-caps files, which NVML's view
	 * here does not hold. */
	for (int a = 0; a < n; a++)
		if (!strcmp(dc_format_device(r, order[a], DMACONN_PROP_MIG), "enabled"))
			fprintf(out, "# dmaconn: /dev/nvidia%ld is in MIG mode: this line is the whole GPU, without "
				"links (MIG instances have no peer DMA); AutoDetect=nvml lists its instances instead\n",
				file[order[a]]);
	for (int a = 0; a < n; a++) {
		int i = order[a];
		char type[128];
		slurm_type(type, sizeof(type), dc_format_device(r, i, DMACONN_PROP_NAME));
		fputs("Name=gpu", out);
		if (*type)
			fprintf(out, " Type=%s", type);
		fprintf(out, " File=/dev/nvidia%ld Links=", file[i]);
		for (int b = 0; b < n; b++)
			fprintf(out, b ? ",%d" : "%d", a == b ? -1 : dmaconn_result_get(r, i, order[b]));
		fputc('\n', out);
	}
	free(file);
	free(order);
	return 0;
}
