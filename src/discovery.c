#include "backends/backend.h"

#include "internal.h"

static atomic_int *discovery_refs(const struct dc_discovery *d, void *cur)
{
	return (atomic_int *)(void *)((char *)cur + d->refs_at);
}

void *dc_discovery_get(struct dc_discovery *d, const char *key)
{
	pthread_mutex_lock(d->lock);
	void *got = d->cur;
	if (!got || dc_rediscover() || (d->stale && d->stale(got, key))) {
		/* The one kept does not answer for key (or not afresh): when no
		 * new one can be made, there is none to give. */
		got = d->make(key);
		if (got) {
			d->release(d->cur);
			d->cur = got;
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
	pthread_mutex_unlock(d->lock);
	d->release(cur);
}

int dc_discovery_made(struct dc_discovery *d, void *got)
{
	d->release(got);
	return got ? DMACONN_OK : dc_fail(DMACONN_ENOMEM, "out of memory");
}
