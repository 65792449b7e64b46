/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "cuda"/"verified": 1 where read, write, 32- and 64-bit atomics were each
 * proven on the pair by the helper's kernel with the data checked, 0
 * otherwise, with the reason.  The work runs in dmaconn-verify-helper
 * (dc_verify_cuda), so this process stays CUDA-free, and only an explicit
 * detection runs it: dmaconn_detect_passive() answers without it, and a
 * replay, which cannot run kernels, answers "not verified in this
 * recording".  The devices and their properties come from "cuda"/"p2p" (the
 * NVML model), so that a verdict of nothing still has the node's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/backend.h"
#include "internal.h"
#include "model/model.h"
#include "model/reasons.h"
#include "pci.h"
#include "replay_abi.h"
#include "cache.h"
#include "verify/verify.h"

/* The four capabilities: the helper's key for the verdict, ours, and the
 * helper's key for what the driver advertises. */
static const struct {
	const char *helper, *verified, *advertised, *claim;
} dc_verified_caps[] = {
	{ "verified_read", DMACONN_PROP_READ_VERIFIED, DMACONN_PROP_READ_ADVERTISED, "can_access_peer" },
	{ "verified_write", DMACONN_PROP_WRITE_VERIFIED, DMACONN_PROP_WRITE_ADVERTISED, "can_access_peer" },
	{ "verified_atomics_32", DMACONN_PROP_ATOMICS_32_VERIFIED, DMACONN_PROP_ATOMICS_32_ADVERTISED,
	  "native_atomics" },
	{ "verified_atomics_64", DMACONN_PROP_ATOMICS_64_VERIFIED, DMACONN_PROP_ATOMICS_64_ADVERTISED,
	  "native_atomics" },
};
#define DC_VERIFIED_NCAPS ((int)(sizeof(dc_verified_caps) / sizeof(dc_verified_caps[0])))

/* Copies p2p's device properties (name, bus id, uuid, ...) to device i. */
static void dc_verified_device(dmaconn_builder *b, const dmaconn_result *p2p, int from, int i)
{
	for (int k = 0; k < dmaconn_result_device_property_count(p2p, from); k++)
		dmaconn_builder_set_device_property(b, i, dmaconn_result_device_property_key(p2p, from, k),
						    dmaconn_result_device_property_value(p2p, from, k));
}

/* Zeros over p2p's devices, every pair with the same reason. */
static int dc_verified_zeros(dmaconn_builder *b, const dmaconn_result *p2p, const char *status,
			     const char *code, const char *text)
{
	int n = p2p ? dmaconn_result_size(p2p) : 0;
	int rc = dmaconn_builder_set_size(b, n);
	for (int i = 0; i < n && rc == DMACONN_OK; i++) {
		dc_verified_device(b, p2p, i, i);
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_VERIFIED, status);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON, code);
			dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON_TEXT, text);
		}
	}
	return rc;
}

/* The p2p device with this bus id, or -1. */
static int dc_verified_find(const dmaconn_result *p2p, const char *pci)
{
	/* As bus ids where both are ("00000000:00:06.0" is "0000:00:06.0"). */
	struct dc_pci want, got;
	int parsed = pci && !dc_pci_parse(pci, strlen(pci) + 1, &want);
	for (int i = 0; pci && p2p && i < dmaconn_result_size(p2p); i++) {
		const char *q = dmaconn_result_device_get(p2p, i, DMACONN_PROP_PCI_BUS_ID);
		if (q && (parsed && !dc_pci_parse(q, strlen(q) + 1, &got) ? !dc_pci_compare(&want, &got)
									   : !strcasecmp(q, pci)))
			return i;
	}
	return -1;
}

static void dc_verified_pair(dmaconn_builder *b, const dmaconn_result *v, int i, int j)
{
	dmaconn_verify_status st = dc_verify_status(v, i, j);
	int hung = dmaconn_result_pair_get(v, i, j, "hang") != NULL, all = st == DMACONN_VERIFY_PASS;
	for (int c = 0; c < DC_VERIFIED_NCAPS; c++) {
		const char *claim = dmaconn_result_pair_get(v, i, j, dc_verified_caps[c].claim);
		const char *got = dmaconn_result_pair_get(v, i, j, dc_verified_caps[c].helper);
		if (claim)
			dmaconn_builder_set_pair_property(b, i, j, dc_verified_caps[c].advertised,
							  !strcmp(claim, "0") ? "no" : "yes");
		dmaconn_builder_set_pair_property(b, i, j, dc_verified_caps[c].verified,
						  !got ? "not_run" : !strcmp(got, "1") ? "yes" : "no");
		/* A pass needs each capability proven, not merely no complaint. */
		all &= got && !strcmp(got, "1");
	}
	const char *gbps = dmaconn_result_pair_get(v, i, j, "gbps");
	const char *lat = dmaconn_result_pair_get(v, i, j, "latency_us");
	if (gbps)
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_GBPS, gbps);
	if (lat)
		dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_LATENCY_US, lat);
	const char *status = hung ? "hang"
			     : all ? "pass"
			     : st == DMACONN_VERIFY_NO_PEER ? "no_peer"
							    : "fail";
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_VERIFIED, status);
	if (all) {
		dmaconn_builder_set(b, i, j, 1);
		return;
	}
	const char *why = dmaconn_result_pair_get(v, i, j, "reason");
	const char *code = hung ? DMACONN_REASON_VERIFY_HUNG
			   : st == DMACONN_VERIFY_NO_PEER ? DMACONN_REASON_NO_PEER
							  : DMACONN_REASON_VERIFY_FAILED;
	char text[1200];
	snprintf(text, sizeof(text), "%s%s", st == DMACONN_VERIFY_NO_PEER || hung ? "" : "verification failed: ",
		 why ? why : "a capability was not proven");
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON, code);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON_TEXT, text);
}

int dmaconn_verified_passed(const char *(*get)(const char *key, void *ctx), void *ctx)
{
	const char *st = get ? get(DMACONN_PROP_VERIFIED, ctx) : NULL;
	int all = st && !strcmp(st, "pass");
	for (int c = 0; all && c < DC_VERIFIED_NCAPS; c++) {
		const char *got = get(dc_verified_caps[c].verified, ctx);
		all = got && !strcmp(got, "yes");
	}
	return all;
}

struct dc_verified_at {
	const dmaconn_result *r;
	int i, j;
};

static const char *dc_verified_get(const char *key, void *ctx)
{
	const struct dc_verified_at *at = ctx;
	return dmaconn_result_pair_get(at->r, at->i, at->j, key);
}

int dmaconn_result_pair_verified(const dmaconn_result *r, int i, int j)
{
	struct dc_verified_at at = { r, i, j };
	int n = r ? dmaconn_result_size(r) : 0;
	return i >= 0 && j >= 0 && i < n && j < n && dmaconn_verified_passed(dc_verified_get, &at);
}

/*
 * Under replay: the recording's verification section (replay/verification.c)
 * answers, over its devices; pairs it lacks, or a recording without one,
 * are "not verified in this recording".
 */
static int dc_verified_recorded(dmaconn_builder *b, const dmaconn_result *p2p)
{
	const struct dmaconn_replay_ops *ops = dc_replay_ops();
	const struct dmaconn_replay_verification *rv = NULL;
	if (!ops || !ops->verification || !ops->verification(&rv) || !rv)
		return dc_verified_zeros(b, p2p, "not_verified", DMACONN_REASON_NOT_RECORDED,
					 "not verified in this recording");
	int n = rv->ndev, rc = dmaconn_builder_set_size(b, n);
	unsigned char *seen = calloc(dc_pair_index(n, 0, n) + 1, 1);
	if (!seen)
		return dmaconn_builder_fail(b, DMACONN_ENOMEM, "out of memory");
	for (int i = 0; i < n && rc == DMACONN_OK; i++) {
		int at = dc_verified_find(p2p, rv->pci[i]);
		if (at >= 0)
			dc_verified_device(b, p2p, at, i);
		else
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_PCI_BUS_ID, rv->pci[i]);
	}
	for (int k = 0; k < rv->npairs && rc == DMACONN_OK; k++) {
		const struct dmaconn_replay_vpair *p = &rv->pairs[k];
		seen[dc_pair_index(p->from, p->to, n)] = 1;
		for (int q = 0; q < p->nprops; q++)
			dmaconn_builder_set_pair_property(b, p->from, p->to, p->keys[q], p->values[q]);
	}
	for (int i = 0; i < n && rc == DMACONN_OK; i++) {
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const char *st = dmaconn_result_pair_get(b->r, i, j, DMACONN_PROP_VERIFIED);
			int hung = st && !strcmp(st, "hang");
			if (!seen[dc_pair_index(i, j, n)]) {
				dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_VERIFIED, "not_verified");
				dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON, DMACONN_REASON_NOT_RECORDED);
				dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON_TEXT,
								  "not verified in this recording");
			} else if (dmaconn_result_pair_verified(b->r, i, j)) {
				dmaconn_builder_set(b, i, j, 1);
			} else {
				/* What the section says, else what its status implies. */
				if (!dmaconn_result_pair_get(b->r, i, j, DMACONN_PROP_REASON))
					dmaconn_builder_set_pair_property(
						b, i, j, DMACONN_PROP_REASON,
						hung ? DMACONN_REASON_VERIFY_HUNG
						: st && !strcmp(st, "no_peer") ? DMACONN_REASON_NO_PEER
									       : DMACONN_REASON_VERIFY_FAILED);
				if (!dmaconn_result_pair_get(b->r, i, j, DMACONN_PROP_REASON_TEXT))
					dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON_TEXT,
									  hung ? "verification hung"
									       : "verification failed");
			}
		}
	}
	free(seen);
	if (rc == DMACONN_OK)
		dc_reasons_suspects(b);
	return rc;
}

static int dc_verified_detect(dmaconn_builder *b, void *user_data)
{
	(void)user_data;
	int is_passive = dc_detect_passive(), fresh = dc_rediscover();
	char *key = NULL;
	/* The cache first: a valid entry answers without NVML or the helper. */
	if (!dc_replay_file() && dc_vcache_enabled() && (key = dc_vcache_key()) && !fresh &&
	    dc_vcache_load(key, b) == 0) {
		free(key);
		return DMACONN_OK;
	}
	dmaconn_result *p2p = NULL;
	int rc = dmaconn_detect(DMACONN_DEVICE_CUDA, "p2p", &p2p);
	if (rc == DMACONN_ENOMEM || rc == DMACONN_EREPLAY) {
		free(key);
		return dmaconn_builder_fail(b, rc, "%s", dmaconn_last_error());
	}
	if (rc != DMACONN_OK)
		p2p = NULL; /* no NVML view: the helper alone says how many GPUs */

	if (dc_replay_file()) {
		rc = dc_verified_recorded(b, p2p);
		goto out;
	}
	/* Nothing to prove: NVML sees one GPU, or none and has nothing to
	 * warn about (a missing NVML warns: the helper alone can count then). */
	if (p2p && (dmaconn_result_size(p2p) == 1 ||
		    (dmaconn_result_size(p2p) == 0 && dmaconn_result_warning_count(p2p) == 0))) {
		rc = dc_verified_zeros(b, p2p, NULL, NULL, NULL); /* no pair to say anything of */
		goto out;
	}
	if (is_passive) {
		dc_builder_provisional(b);
		rc = dc_verified_zeros(b, p2p, "not_verified", DMACONN_REASON_NOT_VERIFIED,
				       "not verified: no cached verdict; run dmaconn -d cuda -c verified");
		goto out;
	}

	dmaconn_result *v = NULL;
	int failed = 1;
	if (dc_verify_cuda(0, 1, &v, &failed) != DMACONN_OK) {
		rc = dmaconn_builder_fail(b, DMACONN_ENOMEM, "out of memory while verifying");
		goto out;
	}
	for (int k = 0; k < dmaconn_result_warning_count(v); k++)
		dmaconn_builder_warn(b, "%s", dmaconn_result_warning(v, k));
	int n = dmaconn_result_size(v);
	if (n == 0 || failed) {
		/* Nothing was proven: zeros over the node as NVML sees it. */
		char text[1200];
		const char *why = n > 1 ? dmaconn_result_pair_get(v, 0, 1, "reason") : NULL;
		snprintf(text, sizeof(text), "verification failed: %s",
			 why ? why
			     : dmaconn_result_warning_count(v) ? dmaconn_result_warning(v, 0)
							       : "no GPU was checked");
		if (n == 0 || !p2p || dmaconn_result_size(p2p) == n) {
			rc = dc_verified_zeros(b, n == 0 ? p2p : p2p, "fail", DMACONN_REASON_VERIFY_FAILED,
					       text);
			dmaconn_result_release(v);
			goto out; /* never cached: the next detection tries again */
		}
	}
	rc = dmaconn_builder_set_size(b, n);
	for (int i = 0; i < n && rc == DMACONN_OK; i++) {
		const char *pci = dmaconn_result_device_get(v, i, DMACONN_PROP_PCI_BUS_ID);
		int at = dc_verified_find(p2p, pci);
		if (at >= 0)
			dc_verified_device(b, p2p, at, i);
		else if (pci)
			dmaconn_builder_set_device_property(b, i, DMACONN_PROP_PCI_BUS_ID, pci);
		for (int j = 0; j < n; j++)
			if (i != j)
				dc_verified_pair(b, v, i, j);
	}
	if (rc == DMACONN_OK)
		dc_reasons_suspects(b);
	/* A verdict, even of failed pairs, is kept; a run that checked
	 * nothing is not. */
	if (rc == DMACONN_OK && key && !failed && n > 0)
		dc_vcache_store(key, b->r);
	dmaconn_result_release(v);
out:
	free(key);
	dmaconn_result_release(p2p);
	return rc;
}

static void dc_verified_atfork(int phase)
{
	(void)phase; /* no locks: every run lives on its caller's stack */
}

static void dc_verified_shutdown(void)
{
}

/* The CUDA driver, loaded by the helper alone (src/backends/cuda_verify/verify_helper.c). */
const struct dc_library dc_verified_libraries[] = {
	{ "cuda", "libcuda.so.1", "DMACONN_CUDA_LIBRARY", "the CUDA driver", NULL },
};

const struct dc_backend dc_backend_cuda_verify = {
	.name = "cuda_verify",
	.type = DMACONN_DEVICE_CUDA,
	DC_LIBRARIES(dc_verified_libraries),
	.detect = dc_verified_detect, /* cuda/verified, the row that names it */
	.atfork = dc_verified_atfork,
	.shutdown = dc_verified_shutdown,
};
