/* SPDX-License-Identifier: BSD-3-Clause */
#include "backends/backend.h"

#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether two keys (either NULL) differ. */
static int keys_differ(const char *a, const char *b)
{
	return !a != !b || (a && strcmp(a, b));
}

static atomic_int *discovery_refs(const struct dc_discovery *d, void *cur)
{
	return (atomic_int *)(void *)((char *)cur + d->refs_at);
}

void *dc_discovery_get(struct dc_discovery *d, const char *key)
{
	pthread_mutex_lock(d->lock);
	void *got = d->cur;
	if (!got || dc_rediscover() || keys_differ(d->key, key)) {
		/* The one kept does not answer for key (or not afresh): when no
		 * new one can be made, there is none to give. */
		char *copy = key ? strdup(key) : NULL;
		got = !key || copy ? d->make() : NULL;
		if (got) {
			d->release(d->cur);
			free(d->key);
			d->cur = got;
			d->key = copy;
		} else {
			free(copy);
		}
	}
	if (got)
		dc_ref(discovery_refs(d, got));
	pthread_mutex_unlock(d->lock);
	return got;
}

void dc_discovery_forget(struct dc_discovery *d)
{
	pthread_mutex_lock(d->lock);
	void *cur = d->cur;
	d->cur = NULL;
	free(d->key);
	d->key = NULL;
	pthread_mutex_unlock(d->lock);
	d->release(cur);
}

int dc_discovery_made(struct dc_discovery *d, void *got)
{
	d->release(got);
	return got ? DMACONN_OK : dc_fail(DMACONN_ENOMEM, "out of memory");
}

struct dc_model *dc_view_model(struct dc_model *(*get)(void), int *rc)
{
	*rc = dc_replay_check();
	if (*rc != DMACONN_OK)
		return NULL;
	struct dc_model *m = get();
	if (!m)
		*rc = dc_fail(DMACONN_ENOMEM, "out of memory");
	return m;
}
