/* dmaconn: print the DMA connectivity matrices of this machine (or of a
 * recording).  Uses the public API only, plus the optional recorder. */
#include <dlfcn.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/mpi/dmaconn_mpi_cli.h"
#include "cli.h"
#include "dmaconn.h"
#include "json_out.h"

enum { EXIT_USAGE = 2 };

static void usage(FILE *f)
{
	fputs("Usage: dmaconn [-d TYPE -c CONNECTION] [--json] [--replay FILE]\n"
	      "       dmaconn --topo [-d TYPE] | --verify [-d TYPE]\n"
	      "       dmaconn --record FILE\n"
	      "       mpirun -np K dmaconn --mpi [-d TYPE -c CONNECTION] [--json]\n"
	      "       dmaconn --list | --help | --version\n"
	      "\n"
	      "Shows which accelerators can issue load/store and atomic operations on each\n"
	      "other's memory: an N x N matrix per detector, 0 for no DMA connectivity,\n"
	      "otherwise a connection-specific value (the number of links for nvlink).\n"
	      "Without -d/-c every registered detector runs.\n"
	      "\n"
	      "  -d, --device-type TYPE  cuda, rocm or xpu (with -c)\n"
	      "  -c, --connection CONN   connection type, e.g. nvlink (with -d)\n"
	      "  -j, --json              JSON on standard output\n"
	      "  -l, --list              list the registered detectors\n"
	      "  -t, --topo              a `nvidia-smi topo -m`-like table with each pair's\n"
	      "                          peer capabilities (cuda/p2p; -d selects the type)\n"
	      "  -v, --verify            prove peer load/store/atomics by running a kernel on\n"
	      "                          every pair, in a helper process; measures GB/s\n"
	      "      --timeout SECONDS   bound --verify (default 120)\n"
	      "      --record FILE       write this node's vendor-library answers to FILE\n"
	      "      --replay FILE       answer every detector from FILE instead of the hardware\n"
	      "      --mpi               across the ranks of an MPI job: rank 0 prints the matrix\n"
	      "                          over every rank's devices, with a rank/host legend\n"
	      "                          (needs libdmaconn_mpi; see docs/multinode.md)\n"
	      "  -q, --quiet             no warnings on standard error (JSON keeps them)\n"
	      "  -h, --help              this help\n"
	      "  -V, --version           the version\n"
	      "\n"
	      "Device order follows CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER (cuda),\n"
	      "ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES (rocm), ZE_AFFINITY_MASK and\n"
	      "ZE_FLAT_DEVICE_HIERARCHY (xpu).  Also read: DMACONN_QUIET, DMACONN_REPLAY,\n"
	      "DMACONN_NVML_LIBRARY, DMACONN_SYSFS_ROOT and the others in README.md.\n"
	      "Exit status: 0 when detection ran (warnings included), 1 when it could not\n"
	      "(or --verify found a failing pair), 2 for bad arguments.\n",
	      f);
}

static void ignore_warning(const char *message, void *user_data)
{
	(void)message;
	(void)user_data;
}

static void print_text(const dmaconn_result *r, const char *replay)
{
	int n = dmaconn_result_size(r);
	printf("%s/%s", dmaconn_device_type_name(dmaconn_result_device_type(r)),
	       dmaconn_result_connection_type(r));
	if (replay)
		printf(" (replay of %s)", replay);
	printf(": %d device%s\n", n, n == 1 ? "" : "s");
	for (int i = 0; i < n; i++) {
		putchar('[');
		for (int j = 0; j < n; j++)
			printf(j ? ", %d" : "%d", dmaconn_result_get(r, i, j));
		puts("]");
	}
	for (int i = 0; i < n; i++) {
		const char *name = dmaconn_result_device_get(r, i, "name");
		const char *bus = dmaconn_result_device_get(r, i, "pci_bus_id");
		const char *uuid = dmaconn_result_device_get(r, i, "uuid");
		printf("  %d: %s", i, name && *name ? name : "(unknown)");
		if (bus)
			printf(", %s", bus);
		if (uuid && *uuid)
			printf(", %s", uuid);
		putchar('\n');
	}
}

/* The legend and per-pair lines of --topo for AMD GPUs (rocm/p2p's pair
 * properties, from the KFD topology). */
static void print_topo_rocm(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	puts("\nPaths: X = self; XGMI# = # direct XGMI (Infinity Fabric) links; XGMI+ = XGMI\n"
	     "through other GPUs; XGMI? = XGMI, link count not reported (partitioned GPUs);\n"
	     "PCIE = peer access over PCIe; NONE = no peer link; - = no answer.\n");
	puts("Peer capabilities (DMA = peer DMA and 32- and 64-bit atomics all supported):");
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const char *type = dmaconn_result_pair_get(r, i, j, "link_type");
			const char *hops = dmaconn_result_pair_get(r, i, j, "hops");
			const char *w = dmaconn_result_pair_get(r, i, j, "weight");
			const char *lo = dmaconn_result_pair_get(r, i, j, "min_bandwidth_mbs");
			const char *hi = dmaconn_result_pair_get(r, i, j, "max_bandwidth_mbs");
			const char *links = dmaconn_result_pair_get(r, i, j, "xgmi_links");
			const char *a32 = dmaconn_result_pair_get(r, i, j, "atomics_32");
			const char *a64 = dmaconn_result_pair_get(r, i, j, "atomics_64");
			const char *coh = dmaconn_result_pair_get(r, i, j, "coherent");
			printf("  GPU%d -> GPU%d: DMA %s; %s", i, j, dmaconn_result_get(r, i, j) ? "yes" : "no",
			       type ? type : "-");
			if (links)
				printf(", %s link%s", links, strcmp(links, "1") ? "s" : "");
			if (hops)
				printf(", %s hop%s", hops, strcmp(hops, "1") ? "s" : "");
			if (w)
				printf(", weight %s", w);
			if (lo && hi)
				printf(", %s-%s MB/s", lo, hi);
			if (a32 && a64 && coh)
				printf("; atomics 32-bit %s, 64-bit %s; coherent %s", a32, a64, coh);
			putchar('\n');
		}
	}
}

/* The legend and per-pair lines of --topo for Intel GPUs (xpu/p2p's pair
 * properties: Level Zero P2P flags and the fabric's Xe Link / MDFI edges). */
static void print_topo_xpu(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	puts("\nPaths: X = self; XL# = # Xe Link connections (fabric edges); MDFI = the die-to-die\n"
	     "link between two tiles of one card; - = no fabric edge (PCIe, or no answer).\n");
	puts("Peer capabilities (DMA = Level Zero P2P ACCESS and ATOMICS):");
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const char *flags = dmaconn_result_pair_get(r, i, j, "p2p_flags");
			const char *path = dmaconn_result_pair_get(r, i, j, "path");
			const char *gb = dmaconn_result_pair_get(r, i, j, "xelink_gbps");
			const char *bw = dmaconn_result_pair_get(r, i, j, "xelink_bandwidth");
			const char *lat = dmaconn_result_pair_get(r, i, j, "xelink_latency");
			const char *dup = dmaconn_result_pair_get(r, i, j, "xelink_duplexity");
			printf("  GPU%d -> GPU%d: DMA %s; p2p %s; %s", i, j, dmaconn_result_get(r, i, j) ? "yes" : "no",
			       flags ? flags : "-", path ? path : "-");
			if (gb)
				printf(", %s GB/s", gb);
			else if (bw)
				printf(", %s", bw);
			if (lat)
				printf(", latency %s", lat);
			if (dup)
				printf(", %s duplex", dup);
			putchar('\n');
		}
	}
}

/* A `nvidia-smi topo -m`-like table from the p2p result, then each pair's
 * capabilities. */
static void print_topo(const dmaconn_result *r, const char *replay)
{
	int n = dmaconn_result_size(r);
	const char *type = dmaconn_device_type_name(dmaconn_result_device_type(r));
	printf("%s topology%s%s%s: %d device%s\n", type, replay ? " (replay of " : "",
	       replay ? replay : "", replay ? ")" : "", n, n == 1 ? "" : "s");
	if (n == 0)
		return;
	printf("      ");
	for (int j = 0; j < n; j++)
		printf("  GPU%-4d", j);
	putchar('\n');
	for (int i = 0; i < n; i++) {
		printf("GPU%-3d", i);
		for (int j = 0; j < n; j++) {
			const char *path = i == j ? "X" : dmaconn_result_pair_get(r, i, j, "path");
			printf("  %-7s", path ? path : "-");
		}
		putchar('\n');
	}
	if (dmaconn_result_device_type(r) == DMACONN_DEVICE_ROCM) {
		print_topo_rocm(r);
		return;
	}
	if (dmaconn_result_device_type(r) == DMACONN_DEVICE_XPU) {
		print_topo_xpu(r);
		return;
	}
	puts("\nPaths: X = self; NV# = # bonded NVLinks; PIX = at most one PCIe bridge;\n"
	     "PXB = several PCIe bridges, no host bridge; PHB = through a PCIe host bridge;\n"
	     "NODE = between host bridges of one NUMA node; SYS = across NUMA nodes;\n"
	     "? = NVML gives no PCIe path; - = no answer.\n");
	puts("Peer capabilities (DMA = load/store and atomics all OK):");
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const char *rd = dmaconn_result_pair_get(r, i, j, "read");
			const char *wr = dmaconn_result_pair_get(r, i, j, "write");
			const char *at = dmaconn_result_pair_get(r, i, j, "atomics");
			const char *nv = dmaconn_result_pair_get(r, i, j, "nvlink");
			const char *gb = dmaconn_result_pair_get(r, i, j, "nvlink_gbps");
			const char *src = dmaconn_result_pair_get(r, i, j, "nvlink_rate_source");
			printf("  GPU%d -> GPU%d: DMA %s; read %s, write %s, atomics %s, nvlink %s", i, j,
			       dmaconn_result_get(r, i, j) ? "yes" : "no", rd ? rd : "-", wr ? wr : "-",
			       at ? at : "-", nv ? nv : "-");
			if (gb)
				printf("; %s GB/s per direction (%s)", gb, src ? src : "unknown");
			putchar('\n');
		}
	}
	puts("\nStatus: OK = supported; CNS = chipset not supported; GNS = GPU not supported;\n"
	     "TNS = topology not supported; DR = disabled by the driver's registry key;\n"
	     "NS = not supported; U = unknown.");
}

static int run_verify(dmaconn_device_type type, int json, int timeout_ms)
{
	dmaconn_verify_result *v = NULL;
	int rc = dmaconn_verify(type, timeout_ms, &v);
	if (rc != DMACONN_OK) {
		fprintf(stderr, "dmaconn: %s\n", dmaconn_last_error());
		return 1;
	}
	int n = dmaconn_verify_size(v), failed = 0;
	static const char *const names[] = { "pass", "fail", "no_peer" };
	if (json)
		printf("{\"device_type\":\"%s\",\"verify\":[", dmaconn_device_type_name(type));
	else
		printf("%s verify: %d device%s\n", dmaconn_device_type_name(type), n, n == 1 ? "" : "s");
	int first = 1;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			dmaconn_verify_status st = dmaconn_verify_status_of(v, i, j);
			failed |= st == DMACONN_VERIFY_FAIL;
			if (json) {
				printf("%s{\"from\":%d,\"to\":%d,\"status\":\"%s\"", first ? "" : ",", i, j,
				       names[st]);
				for (int k = 0; k < dmaconn_verify_pair_property_count(v, i, j); k++) {
					putchar(',');
					json_string(stdout, dmaconn_verify_pair_property_key(v, i, j, k));
					putchar(':');
					json_string(stdout, dmaconn_verify_pair_property_value(v, i, j, k));
				}
				putchar('}');
				first = 0;
				continue;
			}
			const char *gbps = dmaconn_verify_pair_get(v, i, j, "gbps");
			const char *lat = dmaconn_verify_pair_get(v, i, j, "latency_us");
			const char *why = dmaconn_verify_pair_get(v, i, j, "reason");
			printf("  GPU%d -> GPU%d: %s", i, j, names[st]);
			if (st == DMACONN_VERIFY_PASS && gbps)
				printf(", %s GB/s", gbps);
			if (st == DMACONN_VERIFY_PASS && lat)
				printf(", %s us one-way", lat);
			if (st != DMACONN_VERIFY_PASS && why && *why)
				printf(" (%s)", why);
			putchar('\n');
		}
	}
	if (json) {
		fputs("],\"warnings\":[", stdout);
		for (int k = 0; k < dmaconn_verify_warning_count(v); k++) {
			if (k)
				putchar(',');
			json_string(stdout, dmaconn_verify_warning(v, k));
		}
		puts("]}");
	}
	dmaconn_verify_result_free(v);
	return failed;
}

static int run_one(dmaconn_device_type type, const char *conn, int json, int topo,
		   const char *replay, int *first)
{
	dmaconn_result *r = NULL;
	int rc = dmaconn_detect(type, conn, &r);
	if (rc != DMACONN_OK) {
		fprintf(stderr, "dmaconn: %s\n", dmaconn_last_error());
		return 1;
	}
	if (json) {
		if (!*first)
			putchar(',');
		json_result(stdout, r);
	} else {
		if (!*first)
			putchar('\n');
		if (topo)
			print_topo(r, replay);
		else
			print_text(r, replay);
	}
	*first = 0;
	dmaconn_result_release(r);
	return 0;
}

/* ---------------------------------------------------------------- --mpi */

struct mpi_report {
	int json, quiet, printed;
};

static int distinct(const dmaconn_result *r, const char *key)
{
	int n = dmaconn_result_size(r), count = 0;
	for (int i = 0; i < n; i++) {
		const char *v = dmaconn_result_device_get(r, i, key);
		int seen = 0;
		for (int j = 0; j < i && !seen; j++) {
			const char *u = dmaconn_result_device_get(r, j, key);
			seen = v && u && !strcmp(u, v);
		}
		count += v && !seen;
	}
	return count;
}

static void print_mpi_text(const dmaconn_result *r)
{
	int n = dmaconn_result_size(r), ranks = distinct(r, "rank"), nodes = distinct(r, "node");
	printf("%s/%s across MPI ranks: %d device%s from %d rank%s on %d node%s\n",
	       dmaconn_device_type_name(dmaconn_result_device_type(r)), dmaconn_result_connection_type(r),
	       n, n == 1 ? "" : "s", ranks, ranks == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
	for (int i = 0; i < n; i++) {
		putchar('[');
		for (int j = 0; j < n; j++)
			printf(j ? ", %d" : "%d", dmaconn_result_get(r, i, j));
		puts("]");
	}
	for (int i = 0; i < n; i++) {
		const char *rank = dmaconn_result_device_get(r, i, "rank");
		const char *host = dmaconn_result_device_get(r, i, "host");
		const char *local = dmaconn_result_device_get(r, i, "local_ordinal");
		const char *name = dmaconn_result_device_get(r, i, "name");
		const char *bus = dmaconn_result_device_get(r, i, "pci_bus_id");
		const char *uuid = dmaconn_result_device_get(r, i, "uuid");
		printf("  %d: rank %s on %s, device %s: %s", i, rank ? rank : "?", host ? host : "?",
		       local ? local : "?", name && *name ? name : "(unknown)");
		if (bus)
			printf(", %s", bus);
		if (uuid && *uuid)
			printf(", %s", uuid);
		putchar('\n');
	}
}

/* Rank 0 prints each global result; the warnings of every rank are in it. */
static int mpi_report(const dmaconn_result *r, int index, int count, void *user_data)
{
	struct mpi_report *m = user_data;
	if (m->json && count > 1 && index == 0)
		printf("{\"version\":\"%s\",\"results\":[", dmaconn_version_string());
	if (!r) {
		fprintf(stderr, "dmaconn: %s\n", dmaconn_last_error());
	} else if (m->json) {
		if (m->printed)
			putchar(',');
		json_result(stdout, r);
		m->printed = 1;
	} else {
		if (m->printed)
			putchar('\n');
		print_mpi_text(r);
		m->printed = 1;
	}
	for (int k = 0; r && !m->quiet && k < dmaconn_result_warning_count(r); k++)
		fprintf(stderr, "dmaconn: warning: %s\n", dmaconn_result_warning(r, k));
	if (m->json && index == count - 1 && (count > 1 || m->printed))
		puts(count > 1 ? "]}" : "");
	fflush(stdout);
	fflush(stderr);
	return r ? 0 : 1;
}

/* libdmaconn_mpi: DMACONN_MPI_LIBRARY, else beside libdmaconn, else the
 * loader's search.  RTLD_GLOBAL, for the MPI plugins it loads in turn. */
static void *open_mpi(char *why, size_t len)
{
	const char *override = secure_getenv("DMACONN_MPI_LIBRARY");
	void *h = NULL;
	if (override && *override) {
		if (override[0] != '/') {
			snprintf(why, len, "DMACONN_MPI_LIBRARY must be an absolute path, not '%s'", override);
			return NULL;
		}
		h = dlopen(override, RTLD_NOW | RTLD_GLOBAL);
	} else {
		Dl_info info;
		char path[4096];
		if (dladdr((void *)&dmaconn_version_string, &info) && info.dli_fname &&
		    info.dli_fname[0] == '/') {
			const char *slash = strrchr(info.dli_fname, '/');
			int n = snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - info.dli_fname),
					 info.dli_fname, DMACONN_MPI_SONAME);
			if (n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0)
				h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
		}
		if (!h)
			h = dlopen(DMACONN_MPI_SONAME, RTLD_NOW | RTLD_GLOBAL);
	}
	if (!h) {
		const char *e = dlerror();
		snprintf(why, len, "%s", e ? e : DMACONN_MPI_SONAME " not found");
	}
	return h;
}

static int run_mpi(int *argc, char ***argv, int count, const dmaconn_device_type *types,
		   const char **conns, int json, int quiet)
{
	char why[1024];
	void *h = open_mpi(why, sizeof(why));
	if (!h) {
		fprintf(stderr, "dmaconn: --mpi needs the MPI component (built where MPI is found): %s\n", why);
		return 1;
	}
	void *sym = dlsym(h, DMACONN_MPI_CLI_SYMBOL);
	if (!sym) {
		fprintf(stderr, "dmaconn: the MPI component lacks %s\n", DMACONN_MPI_CLI_SYMBOL);
		return 1;
	}
	dmaconn_mpi_cli_fn cli;
	memcpy(&cli, &sym, sizeof(cli));
	const char *q = secure_getenv("DMACONN_QUIET");
	struct mpi_report m = { json, quiet || (q && *q && strcmp(q, "0")), 0 };
	/* Each rank's warnings reach rank 0's report; none printed twice. */
	dmaconn_set_warning_handler(ignore_warning, NULL);
	return cli(argc, argv, count, types, (const char *const *)conns, mpi_report, &m);
}

static int record(const char *path)
{
	if (dmaconn_record(path) != DMACONN_OK) {
		fprintf(stderr, "dmaconn: %s\n", dmaconn_last_error());
		return 1;
	}
	fprintf(stderr, "dmaconn: recorded %s to %s\n",
		secure_getenv("DMACONN_REPLAY") ? "the replayed node" : "this node", path);
	return 0;
}

/* The CLI; main() below, or a test that runs it again and again (getopt
 * state is reset on entry, tests/fuzz). */
int dmaconn_cli_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "device-type", required_argument, NULL, 'd' },
		{ "connection", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "list", no_argument, NULL, 'l' },
		{ "record", required_argument, NULL, 'R' },
		{ "replay", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "topo", no_argument, NULL, 't' },
		{ "verify", no_argument, NULL, 'v' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "mpi", no_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	const char *type_name = NULL, *conn = NULL, *record_path = NULL, *replay = NULL;
	int json = 0, list = 0, topo = 0, verify = 0, timeout_ms = 0, mpi = 0, quiet = 0, opt;
	optind = 0; /* glibc: rescan from argv[1] with fresh state */
	while ((opt = getopt_long(argc, argv, "d:c:jltvqhV", options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			type_name = optarg;
			break;
		case 'c':
			conn = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'l':
			list = 1;
			break;
		case 'R':
			record_path = optarg;
			break;
		case 'P':
			replay = optarg;
			break;
		case 't':
			topo = 1;
			break;
		case 'v':
			verify = 1;
			break;
		case 'T': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 86400) {
				fprintf(stderr, "dmaconn: --timeout takes seconds, 1 to 86400\n");
				return EXIT_USAGE;
			}
			timeout_ms = (int)v * 1000;
			break;
		}
		case 'q':
			dmaconn_set_warning_handler(ignore_warning, NULL);
			quiet = 1;
			break;
		case 'M':
			mpi = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("dmaconn %s\n", dmaconn_version_string());
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmaconn: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (mpi && (topo || verify || list || record_path)) {
		fprintf(stderr, "dmaconn: --mpi takes -d/-c, --json, --quiet and --replay only\n");
		return EXIT_USAGE;
	}
	if ((topo || verify) && conn) {
		fprintf(stderr, "dmaconn: --topo and --verify take -d only\n");
		return EXIT_USAGE;
	}
	if (!type_name != !conn && !((topo || verify) && type_name)) {
		fprintf(stderr, "dmaconn: -d and -c go together\n");
		return EXIT_USAGE;
	}
	if (record_path && (replay == NULL) && (type_name || json || list)) {
		fprintf(stderr, "dmaconn: --record takes no other option but --replay\n");
		return EXIT_USAGE;
	}
	if (replay && dmaconn_set_replay_file(replay) != DMACONN_OK) {
		fprintf(stderr, "dmaconn: %s\n", dmaconn_last_error());
		return 1;
	}
	if (record_path)
		return record(record_path);
	if (!replay && secure_getenv("DMACONN_REPLAY") && *secure_getenv("DMACONN_REPLAY"))
		replay = secure_getenv("DMACONN_REPLAY"); /* label replayed output either way */

	dmaconn_device_type type = DMACONN_DEVICE_CUDA;
	if (type_name && dmaconn_device_type_parse(type_name, &type) != DMACONN_OK) {
		fprintf(stderr, "dmaconn: %s\n", dmaconn_last_error());
		return EXIT_USAGE;
	}

	int count = dmaconn_list_detectors(NULL, NULL, 0);
	dmaconn_device_type *types = calloc((size_t)count + 1, sizeof(*types));
	const char **conns = calloc((size_t)count + 1, sizeof(*conns));
	if (!types || !conns) {
		fputs("dmaconn: out of memory\n", stderr);
		return 1;
	}
	count = dmaconn_list_detectors(types, conns, count);

	int status = 0, first = 1;
	if (mpi) {
		int one = type_name != NULL;
		status = run_mpi(&argc, &argv, one ? 1 : count, one ? &type : types, one ? &conn : conns,
				 json, quiet);
	} else if (verify) {
		status = run_verify(type, json, timeout_ms);
	} else if (topo) {
		status = run_one(type, "p2p", json, 1, replay, &first);
		if (json && status == 0)
			putchar('\n');
	} else if (list) {
		for (int i = 0; i < count; i++)
			printf("%s %s\n", dmaconn_device_type_name(types[i]), conns[i]);
	} else if (type_name) {
		status = run_one(type, conn, json, 0, replay, &first);
		if (json && status == 0)
			putchar('\n');
	} else {
		if (json)
			printf("{\"version\":\"%s\",\"results\":[", dmaconn_version_string());
		for (int i = 0; i < count; i++)
			status |= run_one(types[i], conns[i], json, 0, replay, &first);
		if (json)
			puts("]}");
	}
	free(types);
	free(conns);
	return status;
}

#ifndef DMACONN_CLI_NO_MAIN
int main(int argc, char **argv)
{
	return dmaconn_cli_main(argc, argv);
}
#endif
