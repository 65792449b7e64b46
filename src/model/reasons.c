/*
 * Why a pair of a cuda view is 0, from the facts the view has already put in
 * the result (MIG mode, NVSwitch fabric registration, NVLink counts, the
 * driver's peer statuses and the PCIe path): every off-diagonal pair whose
 * value is 0 gets DMACONN_PROP_REASON and DMACONN_PROP_REASON_TEXT.
 *
 * A rack has n*n pairs and few causes: each cause's text names at most one
 * device, is made once per device (or once per result) and stored once
 * (dc_builder_intern); a pair only refers to it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model/reasons.h"

struct dc_reason {
	const char *code, *text; /* interned; code NULL: no reason from this fact */
};

struct dc_reasons {
	dmaconn_builder *b;
	const dmaconn_result *r;
	const char *key_code, *key_text;
	struct dc_reason *mig, *fabric, *nolinks; /* per device */
	struct dc_reason undetermined, neither, unjoined, unknown;
	int nvlink, warned;
	/* The last peer-status cause, by the (interned) property values it came from. */
	const char *st_from, *path_from;
	struct dc_reason st_reason;
};

static int dc_reason_make(struct dc_reasons *x, struct dc_reason *out, const char *code, const char *text)
{
	out->code = dc_builder_intern(x->b, code);
	out->text = out->code ? dc_builder_intern(x->b, text) : NULL;
	return out->text ? 0 : -1;
}

/* What device d alone explains: MIG mode, its fabric registration, no NVLink. */
static int dc_reason_device(struct dc_reasons *x, int d)
{
	const dmaconn_result *r = x->r;
	char text[300];
	const char *mig = dmaconn_result_device_get(r, d, DMACONN_PROP_MIG);
	if (mig && strcmp(mig, "disabled") != 0) {
		snprintf(text, sizeof(text), "GPU %d is in MIG mode: no peer access", d);
		if (dc_reason_make(x, &x->mig[d], DMACONN_REASON_MIG, text) != 0)
			return -1;
	}
	const char *sw = dmaconn_result_device_get(r, d, DMACONN_PROP_NVLINK_SWITCH_LINKS);
	const char *state = dmaconn_result_device_get(r, d, DMACONN_PROP_FABRIC_STATE);
	const char *status = dmaconn_result_device_get(r, d, DMACONN_PROP_FABRIC_STATUS);
	if (sw && atoi(sw) > 0 && state && strcmp(state, "not_supported") != 0) {
		const char *code = NULL;
		if (!strcmp(state, "in_progress")) {
			code = DMACONN_REASON_FABRIC_IN_PROGRESS;
			snprintf(text, sizeof(text), "GPU %d: NVSwitch fabric registration is still in progress", d);
		} else if (strcmp(state, DMACONN_FABRIC_STATE_COMPLETED) != 0) {
			code = DMACONN_REASON_FABRIC_NOT_REGISTERED;
			snprintf(text, sizeof(text), "GPU %d is not registered with the NVSwitch fabric (%s)", d,
				 state);
		} else if (status && strcmp(status, DMACONN_FABRIC_STATUS_SUCCESS) != 0) {
			code = DMACONN_REASON_FABRIC_FAILED;
			snprintf(text, sizeof(text), "GPU %d: NVSwitch fabric registration failed (%s)", d, status);
		}
		if (code && dc_reason_make(x, &x->fabric[d], code, text) != 0)
			return -1;
	}
	const char *links = dmaconn_result_device_get(r, d, DMACONN_PROP_NVLINK_ACTIVE_LINKS);
	if (x->nvlink && (!links || atoi(links) <= 0)) {
		snprintf(text, sizeof(text), "no NVLink between them: GPU %d has none active", d);
		if (dc_reason_make(x, &x->nolinks[d], DMACONN_REASON_NO_NVLINK, text) != 0)
			return -1;
	}
	return 0;
}

/* The first status among read, write and atomics that is not OK. */
static const char *dc_reason_status(const dmaconn_result *r, int i, int j)
{
	const char *keys[] = { DMACONN_PROP_READ, DMACONN_PROP_WRITE, DMACONN_PROP_ATOMICS };
	for (int k = 0; k < 3; k++) {
		const char *v = dmaconn_result_pair_get(r, i, j, keys[k]);
		if (v && strcmp(v, "OK") != 0)
			return v;
	}
	return NULL;
}

/* The cause a driver's peer status st on the path gives (code NULL: none). */
static int dc_reason_peer(struct dc_reasons *x, const char *st, const char *path, struct dc_reason *out)
{
	static const struct {
		const char *status, *code, *text;
		int on_path; /* the text names the path */
	} causes[] = {
		{ "DR", DMACONN_REASON_DISABLED_BY_DRIVER, "peer access disabled by the driver (DR)", 0 },
		{ "CNS", DMACONN_REASON_CHIPSET_NOT_SUPPORTED, "chipset does not support peer access (CNS)", 1 },
		{ "TNS", DMACONN_REASON_TOPOLOGY_NOT_SUPPORTED, "topology does not support peer access (TNS)", 1 },
		{ "GNS", DMACONN_REASON_GPU_NOT_SUPPORTED, "a GPU of the pair does not support peer access (GNS)", 0 },
		{ "NS", DMACONN_REASON_NOT_SUPPORTED, "the driver reports peer access not supported (NS)", 1 },
	};
	out->code = out->text = NULL;
	for (size_t k = 0; st && k < sizeof(causes) / sizeof(causes[0]); k++) {
		if (strcmp(st, causes[k].status) != 0)
			continue;
		char text[300];
		if (causes[k].on_path)
			snprintf(text, sizeof(text), "%s on the path %s", causes[k].text, path ? path : "?");
		else
			snprintf(text, sizeof(text), "%s", causes[k].text);
		return dc_reason_make(x, out, causes[k].code, text);
	}
	return 0;
}

/* The reason of i -> j, or NULL when out of memory. */
static const struct dc_reason *dc_reason_pair(struct dc_reasons *x, int i, int j)
{
	int ends[2] = { i, j };
	for (int k = 0; k < 2; k++)
		if (x->mig[ends[k]].code)
			return &x->mig[ends[k]];
	for (int k = 0; k < 2; k++)
		if (x->fabric[ends[k]].code)
			return &x->fabric[ends[k]];
	const char *st = dc_reason_status(x->r, i, j);
	if (st) {
		/* The values are the result's own copies: equal texts, equal pointers. */
		const char *path = dmaconn_result_pair_get(x->r, i, j, DMACONN_PROP_PATH);
		if (!x->st_reason.code || st != x->st_from || path != x->path_from) {
			if (dc_reason_peer(x, st, path, &x->st_reason) != 0)
				return NULL;
			x->st_from = st;
			x->path_from = path;
		}
		if (x->st_reason.code)
			return &x->st_reason;
	}
	if (x->warned)
		return &x->undetermined;
	if (!x->nvlink)
		return &x->unknown;
	if (x->nolinks[i].code && x->nolinks[j].code)
		return &x->neither;
	if (x->nolinks[i].code || x->nolinks[j].code)
		return x->nolinks[i].code ? &x->nolinks[i] : &x->nolinks[j];
	return &x->unjoined;
}

void dc_reasons_cuda(dmaconn_builder *b)
{
	int n = b->r ? dmaconn_result_size(b->r) : 0;
	if (n < 2)
		return;
	struct dc_reasons x = { .b = b, .r = b->r };
	x.nvlink = !strcmp(dmaconn_result_connection_type(b->r), "nvlink");
	x.warned = dmaconn_result_warning_count(b->r) > 0;
	x.mig = calloc((size_t)n, sizeof(*x.mig));
	x.fabric = calloc((size_t)n, sizeof(*x.fabric));
	x.nolinks = calloc((size_t)n, sizeof(*x.nolinks));
	char text[300];
	int ok = x.mig && x.fabric && x.nolinks;
	ok = ok && (x.key_code = dc_builder_intern(b, DMACONN_PROP_REASON)) &&
	     (x.key_text = dc_builder_intern(b, DMACONN_PROP_REASON_TEXT));
	ok = ok && dc_reason_make(&x, &x.unknown, DMACONN_REASON_UNKNOWN, "nothing known explains it") == 0;
	if (ok && x.warned) {
		/* The detection was incomplete: the 0 may be an assumption. */
		snprintf(text, sizeof(text), "not determined: %.240s", dmaconn_result_warning(b->r, 0));
		ok = dc_reason_make(&x, &x.undetermined, DMACONN_REASON_UNKNOWN, text) == 0;
	}
	ok = ok && dc_reason_make(&x, &x.neither, DMACONN_REASON_NO_NVLINK,
				  "no NVLink between them: neither GPU has one active") == 0;
	ok = ok && dc_reason_make(&x, &x.unjoined, DMACONN_REASON_UNKNOWN,
				  "both GPUs have active NVLinks, but none joins them") == 0;
	for (int d = 0; ok && d < n; d++)
		ok = dc_reason_device(&x, d) == 0;
	const int *m = dmaconn_result_matrix(b->r);
	for (int i = 0; ok && i < n; i++) {
		for (int j = 0; ok && j < n; j++) {
			if (i == j || m[(size_t)i * (size_t)n + (size_t)j] != 0)
				continue;
			const struct dc_reason *why = dc_reason_pair(&x, i, j);
			ok = why && dc_builder_set_pair_interned(b, i, j, x.key_code, why->code) == DMACONN_OK &&
			     dc_builder_set_pair_interned(b, i, j, x.key_text, why->text) == DMACONN_OK;
		}
	}
	if (!ok)
		b->oom = 1;
	free(x.mig);
	free(x.fabric);
	free(x.nolinks);
}
