/* SPDX-License-Identifier: BSD-3-Clause */
/* Device order as HIP shows AMD GPUs: ROCr's ROCR_VISIBLE_DEVICES filter,
 * then HIP's HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES (see order.h). */
#include "../../order/order.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next comma-separated field of *cursor (NULL at the end), as
 * std::getline(stream, token, ',') yields them: a trailing comma ends the
 * list without an empty field. */
static char *next_field(char **cursor)
{
	char *s = *cursor;
	if (!s || !*s)
		return NULL;
	char *comma = strchr(s, ',');
	if (comma) {
		*comma = '\0';
		*cursor = comma + 1;
	} else {
		*cursor = s + strlen(s);
	}
	return s;
}

static char *trim_upper(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	for (char *p = s; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return s;
}

/* ROCr: the KFD GPU indices that ROCR_VISIBLE_DEVICES surfaces, in order. */
static int rocr_filter(const unsigned long long *ids, int n, const char *rocr, int *out)
{
	if (!rocr)
		goto all;
	char *copy = strdup(rocr), *cursor = copy, *tok;
	if (!copy)
		return -1;
	int count = 0, evaluated = 0;
	while (evaluated < n && (tok = next_field(&cursor))) {
		evaluated++;
		tok = trim_upper(tok);
		long idx = -1;
		if (!*tok) {
			/* ROCr reads the first character of every token: an empty one
			 * throws inside its topology scan, and it surfaces no GPU. */
			count = 0;
			break;
		}
		if (tok[0] == 'G') {
			size_t len = strlen(tok);
			if (len < 5 || len > 20)
				break;
			for (int i = 0; i < n; i++) {
				char uuid[32];
				if (!ids[i])
					continue; /* "Invalid-UUID" never matches */
				snprintf(uuid, sizeof(uuid), "GPU-%016llX", ids[i]);
				if (strncmp(uuid, tok, len))
					continue;
				if (idx >= 0) {
					idx = -1;
					break; /* ambiguous */
				}
				idx = i;
			}
		} else {
			char *end;
			errno = 0;
			idx = strtol(tok, &end, 0);
			if (*end || errno)
				break;
		}
		if (idx < 0 || idx >= n)
			break;
		int seen = 0;
		for (int k = 0; k < count; k++)
			seen |= out[k] == idx;
		if (seen)
			break;
		out[count++] = (int)idx;
	}
	free(copy);
	return count;
all:
	for (int i = 0; i < n; i++)
		out[i] = i;
	return n;
}

/* HIP: the agents (indices into `agents`, count m) that its ordinals keep. */
static int hip_filter(const unsigned long long *ids, const int *agents, int m, const char *ordinals,
		      int *out)
{
	if (!ordinals || !*ordinals) {
		memcpy(out, agents, (size_t)m * sizeof(*out));
		return m;
	}
	size_t size = strlen(ordinals), pos = 0;
	char *field = malloc(size + 1);
	if (!field)
		return -1;
	int count = 0;
	do {
		const char *comma = strchr(ordinals + pos, ',');
		size_t end = comma ? (size_t)(comma - ordinals) : size;
		memcpy(field, ordinals + pos, end - pos);
		field[end - pos] = '\0';
		char canon[32];
		if (strstr(field, "GPU-")) {
			for (int i = 0; i < m; i++) {
				char uuid[32];
				unsigned long long id = ids[agents[i]];
				if (id)
					snprintf(uuid, sizeof(uuid), "GPU-%016llx", id);
				else
					snprintf(uuid, sizeof(uuid), "GPU-XX");
				if (strstr(uuid, field)) {
					snprintf(canon, sizeof(canon), "%d", i);
					snprintf(field, size + 1, "%s", canon);
					break;
				}
			}
		}
		/* atoi, then the text must be exactly the index it gave. */
		long index = strtol(field, NULL, 10);
		if (index < INT_MIN || index > INT_MAX)
			break;
		snprintf(canon, sizeof(canon), "%ld", index);
		if (index < 0 || index >= m || strcmp(canon, field))
			break;
		int seen = 0;
		for (int k = 0; k < count; k++)
			seen |= out[k] == agents[index];
		if (!seen)
			out[count++] = agents[index];
		pos = end + 1;
	} while (pos < size);
	free(field);
	return count;
}

int dc_hip_visible(const unsigned long long *unique_ids, int n, const char *rocr,
		   const char *hip, const char *cuda, int **order)
{
	*order = NULL;
	int *agents = calloc((size_t)n + 1, sizeof(int));
	int *out = calloc((size_t)n + 1, sizeof(int));
	if (!agents || !out) {
		free(agents);
		free(out);
		return -1;
	}
	int m = rocr_filter(unique_ids, n, rocr, agents);
	int count = m < 0 ? -1 : hip_filter(unique_ids, agents, m, hip && *hip ? hip : cuda, out);
	free(agents);
	if (count < 0) {
		free(out);
		return -1;
	}
	*order = out;
	return count;
}
