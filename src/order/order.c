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

static int is_integer(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int well_formed_uuid(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s) && *s != '-')
			return 0;
	return 1;
}

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

int dc_cuda_visible(const struct dc_gpu *gpus, int n, int uuids_known, const char *order,
		    const char *visible, struct dc_slot **slots, int *guessed)
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

	int count = 0, gpu_slots = 0;
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
			struct dc_slot s = { DC_SLOT_UNKNOWN, "" };
			int pos = -1;
			if (is_integer(tok)) {
				long v = strtol(tok, NULL, 10);
				if (v >= n)
					break;
				pos = (int)v;
				*guessed |= ctx.by_speed;
			} else if (!strncmp(tok, "GPU-", 4) && well_formed_uuid(tok + 4)) {
				if (uuids_known && (pos = match_uuid(gpus, ordered, n, tok)) < 0)
					break;
				snprintf(s.uuid, sizeof(s.uuid), "%s", tok);
			} else if (!strncmp(tok, "MIG-", 4) && tok[4]) {
				s.index = DC_SLOT_MIG;
				snprintf(s.uuid, sizeof(s.uuid), "%s", tok);
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
