/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verdict cache of "cuda"/"verified", against the fake CUDA driver and a
 * fake /proc (DMACONN_SYSFS_ROOT):
 *
 *   test_vcache FAKE_LIBCUDA HELPER WORKDIR
 *
 * A verification stores its verdict; a later detection answers from it
 * without the helper.  Each key component, a corrupt, truncated, stale or
 * future entry, a symbolic link, a file or directory others may write, and
 * the switches each make it verify again (the fake driver then records
 * that it ran, and fails, so that no verdict replaces the good one).  An
 * entry of the line-based format 1 is no entry, and is replaced.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "dmaconn.h"

static char root[4096], cachedir[4096], entry[4200], marker[4200];
/* The driver and the helper are reached through symbolic links to one of
 * two copies each, so that the file behind one path can change and come
 * back: lib[0] and helper_file[0] are the links. */
static char lib[3][4200], helper_file[3][4200];

static void point(const char *link, const char *target)
{
	unlink(link);
	CHECK_INT(symlink(target, link), 0);
}

static void put(const char *rel, const char *text)
{
	char path[8192], cmd[8400];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	CHECK_INT(system(cmd), 0);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The cache entry's text (empty when absent); its length. */
static size_t read_entry(char *text, size_t len)
{
	FILE *f = fopen(entry, "r");
	size_t n = f ? fread(text, 1, len - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = '\0';
	return n;
}

static void write_entry(const char *text)
{
	FILE *f = fopen(entry, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void node_as_recorded(void)
{
	put("proc/sys/kernel/random/boot_id", "0b5e5a1e-0000-4000-8000-000000000001\n");
	put("proc/driver/nvidia/version",
	    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Thu Jan 1 00:00:00 UTC 2026\n");
	put("proc/driver/nvidia/gpus/0000:1a:00.0/information",
	    "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-aaaaaaaa-0000-0000-0000-000000000000\n"
	    "Bus Location: \t 0000:1a:00.0\n");
	put("proc/driver/nvidia/gpus/0000:1b:00.0/information",
	    "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-bbbbbbbb-0000-0000-0000-000000000000\n"
	    "Bus Location: \t 0000:1b:00.0\n");
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("CUDA_DEVICE_ORDER");
	point(lib[0], lib[1]);
	point(helper_file[0], helper_file[1]);
	setenv("DMACONN_CUDA_LIBRARY", lib[0], 1);
	setenv("DMACONN_VERIFY_HELPER", helper_file[0], 1);
}

/* Detects cuda/verified with a driver that marks that it was loaded and
 * then finds no GPU: 1 when it answered from the cache (a pass, helper not
 * run), 0 when it verified again (and failed, so that no verdict replaces
 * the good one). */
static int answered_from_cache(void)
{
	unlink(marker);
	dmaconn_clear_cache();
	setenv("FAKE_CUDA_MARKER", marker, 1);
	setenv("FAKE_CUDA_NO_DRIVER", "1", 1);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(DMACONN_DEVICE_CUDA, "verified", &r), DMACONN_OK);
	unsetenv("FAKE_CUDA_MARKER");
	unsetenv("FAKE_CUDA_NO_DRIVER");
	int ran = access(marker, F_OK) == 0;
	int pass = dmaconn_result_size(r) == 2 && dmaconn_result_get(r, 0, 1) == 1 &&
		   dmaconn_result_get(r, 1, 0) == 1;
	dmaconn_result_release(r);
	CHECK(ran != pass); /* a helper that failed never gives a pass */
	return !ran && pass;
}

/* The measured figures of the last verification, as the helper wrote them. */
static char gbps[64], latency[64];

static void verify_and_store(void)
{
	dmaconn_clear_cache();
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect_fresh(DMACONN_DEVICE_CUDA, "verified", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_get(r, 0, 1), 1);
	const char *g = dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_GBPS),
		   *l = dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_LATENCY_US);
	snprintf(gbps, sizeof(gbps), "%s", g ? g : "");
	snprintf(latency, sizeof(latency), "%s", l ? l : "");
	dmaconn_result_release(r);
}

static void test_store_and_hit(void)
{
	verify_and_store();
	struct stat st;
	CHECK_INT(lstat(entry, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_INT((int)(st.st_mode & 077), 0);
	/* Written whole (one JSON document and a newline) and renamed: no
	 * temporary file left. */
	char text[65536];
	size_t n = read_entry(text, sizeof(text));
	CHECK(n > 4 && !strcmp(text + n - 2, "}\n"));
	CHECK_CONTAINS(text, "{\"dmaconn_verified\":2,");
	CHECK_CONTAINS(text, "\"boot_id 0b5e5a1e");
	CHECK_CONTAINS(text, "GPU-bbbbbbbb");
	DIR *d = opendir(cachedir);
	int others = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "verified");
	if (d)
		closedir(d);
	CHECK_INT(others, 0);

	CHECK(answered_from_cache());
	/* The passive detection answers from it too. */
	dmaconn_clear_cache();
	unlink(marker);
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect_passive(DMACONN_DEVICE_CUDA, "verified", &r), DMACONN_OK);
	CHECK_INT(dmaconn_result_get(r, 0, 1), 1);
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_VERIFIED), "pass");
	/* The figures read back as they were written. */
	CHECK(gbps[0] && latency[0]);
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_GBPS), gbps);
	CHECK_STR(dmaconn_result_pair_get(r, 0, 1, DMACONN_PROP_LATENCY_US), latency);
	CHECK_STR(dmaconn_result_device_get(r, 1, DMACONN_PROP_PCI_BUS_ID), "0000:1b:00.0");
	dmaconn_result_release(r);
	CHECK_INT(access(marker, F_OK), -1);
}

/* Each component of the key, changed, means verifying again; restored,
 * the entry answers again. */
static void test_key_components(void)
{
	struct {
		const char *what, *file, *text, *env, *value;
		char *link, *target; /* repointed */
	} changes[] = {
		{ "boot id", "proc/sys/kernel/random/boot_id", "0b5e5a1e-0000-4000-8000-000000000002\n", NULL, NULL, NULL, NULL },
		{ "driver", "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  575.1\n", NULL, NULL, NULL, NULL },
		{ "uuid", "proc/driver/nvidia/gpus/0000:1b:00.0/information",
		  "GPU UUID: \t GPU-cccccccc-0000-0000-0000-000000000000\nBus Location: \t 0000:1b:00.0\n", NULL, NULL, NULL, NULL },
		{ "bus id", "proc/driver/nvidia/gpus/0000:1b:00.0/information",
		  "GPU UUID: \t GPU-bbbbbbbb-0000-0000-0000-000000000000\nBus Location: \t 0000:1c:00.0\n", NULL, NULL, NULL, NULL },
		{ "another GPU", "proc/driver/nvidia/gpus/0000:1d:00.0/information",
		  "GPU UUID: \t GPU-dddddddd-0000-0000-0000-000000000000\nBus Location: \t 0000:1d:00.0\n", NULL, NULL, NULL, NULL },
		{ "visible devices", NULL, NULL, "CUDA_VISIBLE_DEVICES", "1,0", NULL, NULL },
		{ "device order", NULL, NULL, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", NULL, NULL },
		/* A verdict of one driver or helper never answers for another. */
		{ "CUDA driver path", NULL, NULL, "DMACONN_CUDA_LIBRARY", lib[2], NULL, NULL },
		{ "CUDA driver file", NULL, NULL, NULL, NULL, lib[0], lib[2] },
		{ "helper path", NULL, NULL, "DMACONN_VERIFY_HELPER", helper_file[2], NULL, NULL },
		{ "helper file", NULL, NULL, NULL, NULL, helper_file[0], helper_file[2] },
	};
	for (size_t k = 0; k < sizeof(changes) / sizeof(changes[0]); k++) {
		fprintf(stderr, "  key component: %s\n", changes[k].what);
		CHECK(answered_from_cache());
		if (changes[k].file)
			put(changes[k].file, changes[k].text);
		else if (changes[k].link)
			point(changes[k].link, changes[k].target);
		else
			setenv(changes[k].env, changes[k].value, 1);
		CHECK(!answered_from_cache());
		char cmd[8400];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/driver/nvidia/gpus/0000:1d:00.0'", root);
		CHECK_INT(system(cmd), 0);
		node_as_recorded();
		CHECK(answered_from_cache());
	}
	/* No boot id (or no NVIDIA driver): nothing can be keyed, never a hit. */
	char path[8192];
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/random/boot_id", root);
	unlink(path);
	CHECK(!answered_from_cache());
	node_as_recorded();
	CHECK(answered_from_cache());
}

static void rewrite(const char *from, const char *to)
{
	char text[65536];
	read_entry(text, sizeof(text));
	char *at = strstr(text, from);
	CHECK(at != NULL);
	char out[70000];
	if (at)
		snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	else
		snprintf(out, sizeof(out), "%s", text);
	write_entry(out);
}

static void set_time(long long t)
{
	char now[64];
	char text[65536];
	read_entry(text, sizeof(text));
	char *at = strstr(text, ",\"time\":");
	CHECK(at != NULL);
	if (!at)
		return;
	at += strlen(",\"time\":");
	snprintf(now, sizeof(now), "%.*s", (int)strspn(at, "0123456789"), at);
	char then[80];
	snprintf(then, sizeof(then), ",\"time\":%lld,", t);
	char from[80];
	snprintf(from, sizeof(from), ",\"time\":%s,", now);
	rewrite(from, then);
}

/*
 * The entry as format 1 wrote it (line-based, its values %XX-escaped) from
 * the entry there is: what a cache directory holds after an update.
 */
static void as_format_1(void)
{
	json_t *e = json_load_file(entry, 0, NULL), *res = json_object_get(e, "result"), *v;
	CHECK(e != NULL);
	FILE *f = fopen(entry, "w");
	if (!e || !f) {
		json_decref(e);
		if (f)
			fclose(f);
		return;
	}
	size_t k, n = json_array_size(json_object_get(res, "matrix"));
	fprintf(f, "dmaconn-verified 1\ntime %lld\n", (long long)json_integer_value(json_object_get(e, "time")));
	json_array_foreach(json_object_get(e, "key"), k, v) fprintf(f, "key %s\n", json_string_value(v));
	fprintf(f, "size %zu\n", n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (i != j)
				fprintf(f, "value %zu %zu %lld\n", i, j,
					(long long)json_integer_value(
						json_array_get(json_array_get(json_object_get(res, "matrix"), i), j)));
	json_array_foreach(json_object_get(res, "pairs"), k, v)
	{
		const char *key;
		json_t *p;
		json_object_foreach(v, key, p)
			if (json_is_string(p))
				fprintf(f, "pair %lld %lld %s %s\n", (long long)json_integer_value(json_object_get(v, "from")),
					(long long)json_integer_value(json_object_get(v, "to")), key, json_string_value(p));
	}
	fputs("end\n", f);
	fclose(f);
	json_decref(e);
}

/* An entry of format 1 is no entry; the next verification replaces it. */
static void test_format_1(void)
{
	verify_and_store();
	as_format_1();
	char text[65536];
	read_entry(text, sizeof(text));
	CHECK(!strncmp(text, "dmaconn-verified 1\n", 19));
	CHECK(!answered_from_cache());
	verify_and_store();
	CHECK(answered_from_cache());
}

static void test_bad_entries(void)
{
	/* Corrupt: a value out of range, another format, truncated, a size
	 * the devices do not have, a pair twice, a value of no type, a
	 * member twice. */
	const char *bad[][2] = { { "\"matrix\":[[0,1],[1,0]]", "\"matrix\":[[0,1],[-1,0]]" },
				 { "{\"dmaconn_verified\":2,", "{\"dmaconn_verified\":3," },
				 { "}}\n", "}" },
				 { "\"matrix\":[[0,1],[1,0]]", "\"matrix\":[[0,1,0],[1,0,0],[0,0,0]]" },
				 { "{\"from\":1,\"to\":0,", "{\"from\":0,\"to\":1," },
				 { "\"verified\":\"pass\"", "\"verified\":[\"pass\"]" },
				 { "{\"dmaconn_verified\":2,", "{\"dmaconn_verified\":2,\"dmaconn_verified\":2," } };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		verify_and_store();
		CHECK(answered_from_cache());
		rewrite(bad[k][0], bad[k][1]);
		CHECK(!answered_from_cache());
	}
	/* Stale, or from the future. */
	verify_and_store();
	set_time((long long)time(NULL) - 7200);
	CHECK(!answered_from_cache());
	set_time((long long)time(NULL) + 7200);
	CHECK(!answered_from_cache());
	set_time((long long)time(NULL) - 60);
	CHECK(answered_from_cache());

	/* A symbolic link is refused, even to a good entry. */
	char copy[4300];
	snprintf(copy, sizeof(copy), "%s.copy", entry);
	CHECK_INT(rename(entry, copy), 0);
	CHECK_INT(symlink(copy, entry), 0);
	CHECK(!answered_from_cache());
	unlink(entry);
	CHECK_INT(rename(copy, entry), 0);
	CHECK(answered_from_cache());

	/* A file or a directory others may write is refused. */
	static const struct {
		int which; /* 0 the entry, 1 the cache directory, 2 the one above */
		mode_t mode;
		int cached;
	} modes[] = { { 0, 0620, 0 }, { 0, 0604, 1 }, { 0, 0602, 0 }, { 0, 0600, 1 }, { 1, 0770, 0 },
		      { 1, 0707, 0 }, { 1, 0700, 1 },
		      /* So is a directory above it that others may write (they
		       * could move the cache directory aside), unless it is
		       * sticky, as /tmp is. */
		      { 2, 0777, 0 }, { 2, 0775, 0 }, { 2, 01777, 1 } };
	char parent[4200];
	snprintf(parent, sizeof(parent), "%s", cachedir);
	*strrchr(parent, '/') = '\0';
	struct stat pst;
	CHECK_INT(stat(parent, &pst), 0);
	const char *paths[] = { entry, cachedir, parent };
	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
		chmod(paths[modes[k].which], modes[k].mode);
		check_record(answered_from_cache() == modes[k].cached, __FILE__, __LINE__, "%s mode %o: %s",
			     paths[modes[k].which], (unsigned)modes[k].mode,
			     modes[k].cached ? "not answered from the cache" : "answered from the cache");
	}
	chmod(parent, pst.st_mode & 07777);
	CHECK(answered_from_cache());
}

static void test_switches(void)
{
	verify_and_store();
	setenv("DMACONN_NO_CACHE", "1", 1);
	CHECK(!answered_from_cache());
	setenv("DMACONN_NO_CACHE", "0", 1);
	CHECK(answered_from_cache());
	unsetenv("DMACONN_NO_CACHE");
	dmaconn_set_verify_cache(0);
	CHECK(!answered_from_cache());
	/* Off means nothing is written either. */
	unlink(entry);
	verify_and_store();
	CHECK_INT(access(entry, F_OK), -1);
	dmaconn_set_verify_cache(1);
	verify_and_store();
	CHECK(answered_from_cache());
}

int main(int argc, char **argv)
{
	if (argc != 4 || argv[1][0] != '/' || argv[2][0] != '/' || argv[3][0] != '/') {
		fprintf(stderr, "usage: test_vcache /abs/libcuda.so.1 /abs/helper /abs/workdir\n");
		return 2;
	}
	snprintf(root, sizeof(root), "%s/root", argv[3]);
	snprintf(cachedir, sizeof(cachedir), "%s/cache", argv[3]);
	snprintf(entry, sizeof(entry), "%s/verified", cachedir);
	snprintf(marker, sizeof(marker), "%s/driver-loaded", argv[3]);
	char cmd[30000];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s/lib' && mkdir -p '%s/lib'", root, cachedir, argv[3],
		 argv[3]);
	CHECK_INT(system(cmd), 0);
	for (int k = 0; k < 3; k++) {
		snprintf(lib[k], sizeof(lib[k]), "%s/lib/libcuda-%d.so.1", argv[3], k);
		snprintf(helper_file[k], sizeof(helper_file[k]), "%s/lib/helper-%d", argv[3], k);
	}
	/* Two copies each (a copy is another file: another inode). */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && cp '%s' '%s' && cp '%s' '%s' && cp '%s' '%s'", argv[1],
		 lib[1], argv[1], lib[2], argv[2], helper_file[1], argv[2], helper_file[2]);
	CHECK_INT(system(cmd), 0);
	node_as_recorded();
	setenv("DMACONN_SYSFS_ROOT", root, 1);
	setenv("DMACONN_CACHE_DIR", cachedir, 1);
	setenv("DMACONN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	unsetenv("DMACONN_NO_CACHE");
	unsetenv("DMACONN_REPLAY");

	test_store_and_hit();
	test_key_components();
	test_bad_entries();
	test_format_1();
	test_switches();
	dmaconn_shutdown();
	return check_done("test_vcache");
}
