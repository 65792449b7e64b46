/* SPDX-License-Identifier: BSD-3-Clause */
#include "order.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct sort_ctx {
	const struct dc_gpu *gpus;
	const int (*cc)[2]; /* compute capability per GPU, unknown ones filled in */
	int by_speed;
};

/* qsort has no context argument; sorting happens on one thread at a time per
 * call, so the context travels in the elements instead. */
struct keyed {
	int index;
	const struct sort_ctx *ctx;
};

static int cmp_gpus(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	const struct dc_gpu *x = &a->ctx->gpus[a->index], *y = &a->ctx->gpus[b->index];
	if (a->ctx->by_speed) {
		/* Major, then minor: NVML's ints, compared without arithmetic. */
		const int *cx = a->ctx->cc[a->index], *cy = a->ctx->cc[b->index];
		if (cx[0] != cy[0])
			return cx[0] > cy[0] ? -1 : 1;
		if (cx[1] != cy[1])
			return cx[1] > cy[1] ? -1 : 1;
	}
	int c = dc_pci_compare(&x->pci, &y->pci);
	return c ? c : a->index - b->index;
}

/*
 * Each GPU's compute capability for ordering: a GPU whose capability NVML
 * did not give (-1) takes that of a GPU of the same name, which is the same
 * model, so that one unanswered query does not make identical GPUs "mixed"
 * and reorder them.
 */
static void fill_cc(const struct dc_gpu *g, int n, int (*cc)[2])
{
	for (int i = 0; i < n; i++) {
		cc[i][0] = g[i].cc_major;
		cc[i][1] = g[i].cc_minor;
		for (int k = 0; cc[i][0] < 0 && k < n; k++) {
			if (g[k].cc_major >= 0 && !strcmp(g[k].name, g[i].name)) {
				cc[i][0] = g[k].cc_major;
				cc[i][1] = g[k].cc_minor;
			}
		}
	}
}

static int all_alike(const struct dc_gpu *g, const int (*cc)[2], int n)
{
	for (int i = 1; i < n; i++)
		if (strcmp(g[i].name, g[0].name) || cc[i][0] != cc[0][0] || cc[i][1] != cc[0][1])
			return 0;
	return 1;
}

/* Whether s is non-empty and made only of characters of set. */
static int order_all_of(const char *s, const char *set)
{
	return *s && !s[strspn(s, set)];
}

#define ORDER_DIGITS "0123456789"
#define ORDER_UUID_CHARS ORDER_DIGITS "abcdefABCDEF-"

/* The position in `order` of the one GPU whose UUID starts with entry, -1
 * for none or several. */
static int match_uuid(const struct dc_gpu *g, const int *order, int n, const char *entry)
{
	size_t len = strlen(entry);
	int found = -1;
	for (int k = 0; k < n; k++) {
		if (strncasecmp(g[order[k]].uuid, entry, len) != 0)
			continue;
		if (found >= 0)
			return -1;
		found = k;
	}
	return found;
}

/* A decimal instance id of the MIG-GPU-<uuid>/<gi>/<ci> form, up to end. */
static int mig_id(const char *s, const char *end)
{
	if (s == end || end - s > 6)
		return -1;
	int v = 0;
	for (; s < end; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* The MIG instance an entry "MIG-..." names, -1 for none. */
static int match_mig(const struct dc_gpu *g, const struct dc_mig *migs, int nmigs, const char *entry)
{
	for (int k = 0; k < nmigs; k++)
		if (!strcasecmp(migs[k].uuid, entry))
			return k;
	/* MIG-GPU-<uuid>/<gi>/<ci> */
	const char *gpu = entry + 4, *s1 = strchr(gpu, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	if (strncmp(gpu, "GPU-", 4) != 0 || !s2)
		return -1;
	int gi = mig_id(s1 + 1, s2), ci = mig_id(s2 + 1, s2 + 1 + strlen(s2 + 1));
	if (gi < 0 || ci < 0)
		return -1;
	for (int k = 0; k < nmigs; k++) {
		const char *parent = g[migs[k].parent].uuid;
		if (migs[k].gi == gi && migs[k].ci == ci && strlen(parent) == (size_t)(s1 - gpu) &&
		    !strncasecmp(parent, gpu, (size_t)(s1 - gpu)))
			return k;
	}
	return -1;
}

/* The position in `order` of the GPU whose whole UUID, less "GPU-", follows
 * an entry's "MIG-", -1 for none (no prefixes, as for MIG instances). */
static int match_gpu_as_mig(const struct dc_gpu *g, const int *order, int n, const char *entry)
{
	for (int k = 0; k < n; k++)
		if (!strncmp(g[order[k]].uuid, "GPU-", 4) && !strcasecmp(g[order[k]].uuid + 4, entry + 4))
			return k;
	return -1;
}

/* A MIG entry that could name an instance: "MIG-" then a UUID, or the
 * MIG-GPU-<uuid>/<gi>/<ci> form. */
static int well_formed_mig(const char *s)
{
	const char *s1 = strchr(s + 4, '/');
	if (!s1)
		return order_all_of(s + 4, ORDER_UUID_CHARS);
	const char *s2 = strchr(s1 + 1, '/');
	if (strncmp(s + 4, "GPU-", 4) != 0 || !s2 || mig_id(s1 + 1, s2) < 0 ||
	    mig_id(s2 + 1, s2 + 1 + strlen(s2 + 1)) < 0)
		return 0;
	return s1 > s + 8 && s + 8 + strspn(s + 8, ORDER_UUID_CHARS) == s1;
}

int dc_cuda_visible(const struct dc_gpu *gpus, int n, const struct dc_mig *migs, int nmigs,
		    int uuids_known, const char *order, const char *visible, struct dc_slot **slots,
		    int *guessed)
{
	*slots = NULL;
	*guessed = 0;
	struct keyed *keys = calloc((size_t)n + 1, sizeof(*keys));
	int *ordered = calloc((size_t)n + 1, sizeof(int));
	int *used = calloc((size_t)n + 1, sizeof(int));
	size_t entries = 1;
	for (const char *c = visible; c && *c; c++)
		entries += *c == ',';
	struct dc_slot *out = calloc((size_t)n + entries, sizeof(*out));
	char *copy = visible ? strdup(visible) : NULL;
	int (*cc)[2] = calloc((size_t)n + 1, sizeof(*cc));
	if (!keys || !ordered || !used || !out || (visible && !copy) || !cc) {
		free(keys), free(ordered), free(used), free(out), free(copy), free(cc);
		return -1;
	}

	fill_cc(gpus, n, cc);
	struct sort_ctx ctx = { gpus, (const int (*)[2])cc, 0 };
	int mixed = !all_alike(gpus, (const int (*)[2])cc, n);
	ctx.by_speed = mixed && !(order && !strcmp(order, "PCI_BUS_ID"));
	for (int i = 0; i < n; i++)
		keys[i] = (struct keyed){ i, &ctx };
	qsort(keys, (size_t)n, sizeof(*keys), cmp_gpus);
	for (int i = 0; i < n; i++)
		ordered[i] = keys[i].index;

	int count = 0, gpu_slots = 0, mig_slots = 0;
	if (!visible) {
		for (int i = 0; i < n; i++)
			out[count++].index = ordered[i];
		*guessed = ctx.by_speed && n > 1;
	} else {
		/* strtok_r would skip empty entries, which must stop parsing. */
		for (char *tok = copy, *next; tok; tok = next) {
			next = strchr(tok, ',');
			if (next)
				*next++ = '\0';
			while (isspace((unsigned char)*tok))
				tok++;
			char *end = tok + strlen(tok);
			while (end > tok && isspace((unsigned char)end[-1]))
				*--end = '\0';
			struct dc_slot s = { DC_SLOT_UNKNOWN, -1, "" };
			int pos = -1;
			if (order_all_of(tok, ORDER_DIGITS)) {
				long v = strtol(tok, NULL, 10);
				if (v >= n)
					break;
				pos = (int)v;
				*guessed |= ctx.by_speed;
			} else if (!strncmp(tok, "GPU-", 4) && order_all_of(tok + 4, ORDER_UUID_CHARS)) {
				if (uuids_known && (pos = match_uuid(gpus, ordered, n, tok)) < 0)
					break;
				snprintf(s.uuid, sizeof(s.uuid), "%s", tok);
			} else if (!strncmp(tok, "MIG-", 4) && well_formed_mig(tok) && uuids_known &&
				   match_mig(gpus, migs, nmigs, tok) < 0 &&
				   (pos = match_gpu_as_mig(gpus, ordered, n, tok)) >= 0) {
				/* MIG-<uuid> of a GPU itself: the CUDA driver counts that GPU. */
				snprintf(s.uuid, sizeof(s.uuid), "GPU-%s", tok + 4);
			} else if (!strncmp(tok, "MIG-", 4) && well_formed_mig(tok)) {
				int k = uuids_known ? match_mig(gpus, migs, nmigs, tok) : -1;
				/* One MIG instance per process; an unknown one ends the list. */
				if (mig_slots > 0 || (uuids_known && k < 0) || (!uuids_known && gpu_slots == n))
					break;
				s.index = DC_SLOT_MIG;
				s.parent = k >= 0 ? migs[k].parent : -1;
				snprintf(s.uuid, sizeof(s.uuid), "%s", k >= 0 ? migs[k].uuid : tok);
				mig_slots++;
			} else {
				break; /* "-1", "foo", "" ... */
			}
			int repeated = 0;
			if (pos >= 0) {
				repeated = used[pos]++;
				s.index = ordered[pos];
			} else {
				for (int k = 0; k < count; k++)
					repeated |= out[k].index < 0 && !strcasecmp(out[k].uuid, s.uuid);
			}
			if (repeated || (s.index != DC_SLOT_MIG && gpu_slots == n))
				break;
			gpu_slots += s.index != DC_SLOT_MIG;
			out[count++] = s;
		}
	}
	free(keys);
	free(ordered);
	free(used);
	free(copy);
	free(cc);
	*slots = out;
	return count;
}
