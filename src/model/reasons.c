/*
 * Why a pair of a cuda view is 0, from the facts the view has already put in
 * the result (MIG mode, NVSwitch fabric registration, NVLink counts, the
 * driver's peer statuses and the PCIe path): every off-diagonal pair whose
 * value is 0 gets DMACONN_PROP_REASON and DMACONN_PROP_REASON_TEXT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model/reasons.h"

static const char *dc_reason_dev(const dmaconn_result *r, int i, const char *key)
{
	return dmaconn_result_device_get(r, i, key);
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

/* Sets code and text for i -> j from what the result says. */
static void dc_reason_pair(dmaconn_builder *b, int i, int j)
{
	const dmaconn_result *r = b->r;
	char text[300];
	const char *code = DMACONN_REASON_UNKNOWN;
	snprintf(text, sizeof(text), "nothing known explains it");
	int ends[2] = { i, j };
	for (int k = 0; k < 2; k++) {
		int d = ends[k];
		const char *mig = dc_reason_dev(r, d, DMACONN_PROP_MIG);
		if (mig && strcmp(mig, "disabled") != 0) {
			code = DMACONN_REASON_MIG;
			snprintf(text, sizeof(text), "GPU %d is in MIG mode: no peer access", d);
			goto set;
		}
	}
	for (int k = 0; k < 2; k++) {
		int d = ends[k];
		const char *sw = dc_reason_dev(r, d, DMACONN_PROP_NVLINK_SWITCH_LINKS);
		const char *state = dc_reason_dev(r, d, DMACONN_PROP_FABRIC_STATE);
		const char *status = dc_reason_dev(r, d, DMACONN_PROP_FABRIC_STATUS);
		if (!sw || atoi(sw) <= 0 || !state || !strcmp(state, "not_supported"))
			continue;
		if (!strcmp(state, "in_progress")) {
			code = DMACONN_REASON_FABRIC_IN_PROGRESS;
			snprintf(text, sizeof(text),
				 "GPU %d: NVSwitch fabric registration is still in progress", d);
			goto set;
		}
		if (strcmp(state, DMACONN_FABRIC_STATE_COMPLETED) != 0) {
			code = DMACONN_REASON_FABRIC_NOT_REGISTERED;
			snprintf(text, sizeof(text), "GPU %d is not registered with the NVSwitch fabric (%s)",
				 d, state);
			goto set;
		}
		if (status && strcmp(status, DMACONN_FABRIC_STATUS_SUCCESS) != 0) {
			code = DMACONN_REASON_FABRIC_FAILED;
			snprintf(text, sizeof(text), "GPU %d: NVSwitch fabric registration failed (%s)", d,
				 status);
			goto set;
		}
	}
	const char *st = dc_reason_status(r, i, j);
	const char *path = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_PATH);
	if (st && !strcmp(st, "DR")) {
		code = DMACONN_REASON_DISABLED_BY_DRIVER;
		snprintf(text, sizeof(text), "peer access disabled by the driver (DR)");
	} else if (st && !strcmp(st, "CNS")) {
		code = DMACONN_REASON_CHIPSET_NOT_SUPPORTED;
		snprintf(text, sizeof(text), "chipset does not support peer access (CNS) on the path %s",
			 path ? path : "?");
	} else if (st && !strcmp(st, "TNS")) {
		code = DMACONN_REASON_TOPOLOGY_NOT_SUPPORTED;
		snprintf(text, sizeof(text), "topology does not support peer access (TNS) on the path %s",
			 path ? path : "?");
	} else if (st && !strcmp(st, "GNS")) {
		code = DMACONN_REASON_GPU_NOT_SUPPORTED;
		snprintf(text, sizeof(text), "a GPU of the pair does not support peer access (GNS)");
	} else if (st && !strcmp(st, "NS")) {
		code = DMACONN_REASON_NOT_SUPPORTED;
		snprintf(text, sizeof(text), "the driver reports peer access not supported (NS) on the path %s",
			 path ? path : "?");
	} else if (dmaconn_result_warning_count(r) > 0) {
		/* The detection was incomplete: the 0 may be an assumption. */
		snprintf(text, sizeof(text), "not determined: %.240s", dmaconn_result_warning(r, 0));
	} else if (!strcmp(dmaconn_result_connection_type(r), "nvlink")) {
		const char *li = dc_reason_dev(r, i, DMACONN_PROP_NVLINK_ACTIVE_LINKS);
		const char *lj = dc_reason_dev(r, j, DMACONN_PROP_NVLINK_ACTIVE_LINKS);
		if (!li || !lj || atoi(li) <= 0 || atoi(lj) <= 0) {
			code = DMACONN_REASON_NO_NVLINK;
			snprintf(text, sizeof(text), "no NVLink between them: GPU %d has %s active, GPU %d %s",
				 i, li ? li : "none", j, lj ? lj : "none");
		} else {
			snprintf(text, sizeof(text), "both GPUs have active NVLinks, but none joins them");
		}
	}
set:
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON, code);
	dmaconn_builder_set_pair_property(b, i, j, DMACONN_PROP_REASON_TEXT, text);
}

void dc_reasons_cuda(dmaconn_builder *b)
{
	int n = b->r ? dmaconn_result_size(b->r) : 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && dmaconn_result_get(b->r, i, j) == 0)
				dc_reason_pair(b, i, j);
}
