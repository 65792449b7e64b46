/* SPDX-License-Identifier: BSD-3-Clause */
/* The output formats of `dmaconn --format FORMAT`.  text and json are the
 * CLI's own printers (tools/cli.c), which write each result as it comes;
 * every other format is one file, tools/format_NAME.c, defining
 * dc_format_NAME(), which gets every result of the run at once.  Adding a
 * format is one line in DC_FORMATS below and that file (CMake builds every
 * tools/format_*.c). */
#ifndef DMACONN_FORMAT_H
#define DMACONN_FORMAT_H

#include <stdio.h>

#include "dmaconn.h"

/* What a run detected, for a format's writer.  Members are only ever added. */
struct dc_format_input {
	const dmaconn_result *const *results; /* in `dmaconn --list` order */
	int count;
	const char *replay;    /* the replayed file, or NULL on live hardware */
	double seconds;        /* wall time of the detection */
	int mpi;               /* results span every rank of an MPI job */
	const char *error;     /* why some detection failed, or NULL */
	char *const *files;    /* slurm-topology: the documents to read ("-" or none: standard input) */
	int nfiles;
};

/* A format's writer: the document on out; 0, or 1 when the results cannot
 * be written in this format (after saying why on err). */
typedef int (*dc_format_fn)(FILE *out, FILE *err, const struct dc_format_input *in);

/* X(identifier, name, one line for --help), in alphabetical order; text
 * and json come first in the table, without a writer. */
#define DC_FORMATS(X)                                                                   \
	X(dot, "dot", "a Graphviz graph of one connection type (dot -Tsvg)")           \
	X(nccl_xml, "nccl-xml", "an NCCL topology file of this node (NCCL_TOPO_FILE)") \
	X(nfd, "nfd", "a node-feature-discovery feature file (features.d)")            \
	X(prometheus, "prometheus", "node_exporter textfile collector metrics")        \
	X(slurm, "slurm", "gres.conf lines with Links= per GPU")                        \
	X(slurm_topology, "slurm-topology",                                              \
	  "topology.conf blocks per NVLink domain, from many nodes' --json files")

#define DC_FORMAT_DECLARE(id, name, help) \
	int dc_format_##id(FILE *out, FILE *err, const struct dc_format_input *in);
DC_FORMATS(DC_FORMAT_DECLARE)
#undef DC_FORMAT_DECLARE

struct dc_format {
	const char *name, *help;
	dc_format_fn write; /* NULL for text and json */
};

/* Every format, text and json first; ends with a NULL name. */
extern const struct dc_format dc_formats[];

/* The format called name, or NULL. */
const struct dc_format *dc_format_find(const char *name);

/* Whether the format describes an MPI job as a whole (rank 0 writes it
 * from every rank's devices) rather than each node (each node's first
 * rank writes its own). */
int dc_format_describes_job(const struct dc_format *f);

/* Whether the format reads `dmaconn --json` documents (files given as
 * arguments, else standard input) instead of detecting. */
int dc_format_reads_documents(const struct dc_format *f);

/* Helpers for the writers. */

/* Device i's property key, or "" when it has none. */
const char *dc_format_device(const dmaconn_result *r, int i, const char *key);
/* A placement value (dmaconn_placement_*_get) of an integer key, as the
 * result codec reads it; dflt when text is NULL or not an integer. */
long long dc_format_place_int(const char *key, const char *text, long long dflt);

/* The result of (type, connection) among the input's, or NULL. */
const dmaconn_result *dc_format_result(const struct dc_format_input *in, dmaconn_device_type type,
				       const char *connection);

/* Whether every pair of distinct devices has connectivity (0 without devices). */
int dc_format_fully_connected(const dmaconn_result *r);

/* The links between i and j where the connection type counts them
 * (cuda/nvlink, or a pair's xgmi_links / xelink_links / nvlink_links), else -1. */
int dc_format_links(const dmaconn_result *r, int i, int j);

/* The placement of the input's NVIDIA GPUs (dmaconn_placement_detect):
 * NULL without a cuda result, under --mpi (it describes this node only) or
 * when it cannot be had.  The caller frees it. */
dmaconn_placement *dc_format_placement(const struct dc_format_input *in);

/* The device of p that is device i of r (the same PCI bus id), or -1. */
int dc_format_place_index(const dmaconn_placement *p, const dmaconn_result *r, int i);

/* The GPUDirect RDMA mechanism of the node: "dmabuf", "peermem", "none",
 * or "unknown" (dma-buf unknown and no peer-memory module). */
const char *dc_format_gdr_mechanism(const dmaconn_placement *p);

#endif
