/* SPDX-License-Identifier: BSD-3-Clause */
#include "model.h"

#include "../internal.h"

#include <stdlib.h>
#include <string.h>

struct dc_model *dc_model_new(int n, int with_facts)
{
	struct dc_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	atomic_init(&m->refs, 1);
	m->n = n;
	m->ids = calloc((size_t)n + 1, sizeof(*m->ids));
	int ok = m->ids != NULL;
	if (with_facts) {
		m->devices = calloc((size_t)n + 1, sizeof(*m->devices));
		m->handles = calloc((size_t)n + 1, sizeof(*m->handles));
		ok = ok && m->devices && m->handles;
	}
	if (!ok) {
		dc_model_release(m);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		m->ids[i].cc_major = m->ids[i].cc_minor = -1;
		m->ids[i].numa_node = -2;
		if (m->devices) {
			m->devices[i].group = -1;
			m->devices[i].tiles = -1;
			/* Placement facts never asked (a device that failed early). */
			struct dc_place_facts *f = &m->devices[i].place;
			f->cpus_rc = f->mems_rc = f->numa_id_rc = f->c2c_rc = f->c2c_status_rc = f->c2c_bw_rc = -1;
			m->devices[i].host_cpu = -1;
			m->devices[i].partitions = 1;
		}
	}
	return m;
}

void dc_model_release(struct dc_model *m)
{
	if (!m || !dc_unref(&m->refs))
		return;
	free(m->ids);
	for (int i = 0; m->devices && i < m->n; i++) {
		free(m->devices[i].migs);
		free(m->devices[i].links);
	}
	free(m->devices);
	free(m->handles);
	free(m->peers);
	free(m->groups);
	free(m->pair_links);
	free(m);
}

void dc_copy_text(char *dst, size_t len, const char *src, size_t srclen)
{
	if (!len)
		return;
	size_t n = strnlen(src, srclen);
	if (n >= len) {
		n = len - 1;
		/* Back over continuation bytes to the lead byte of the character
		 * that does not fit, and leave it out. */
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

unsigned int dc_fabric_mc_clique(const struct dc_fabric_facts *f)
{
	static const unsigned char order[] = { DC_CLIQUE_MULTICAST_POINTER, DC_CLIQUE_MULTICAST_LOGICAL_ENDPOINT };
	for (size_t k = 0; f->version == 4 && k < sizeof(order); k++)
		for (int c = 0; c < f->ncliques; c++)
			if (f->cliques[c].type == order[k])
				return f->cliques[c].id;
	return f->clique;
}

const char *dc_clique_type_name(unsigned int type)
{
	static const char *const names[] = { "unicast_pointer", "multicast_pointer", "unicast_logical_endpoint",
					     "multicast_logical_endpoint" };
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : NULL;
}

int dc_model_stage_devices(struct dc_model *m, struct dc_stage *st, pthread_mutex_t *lock,
			   void (*ask)(struct dc_model *m, struct dc_stage *st, const unsigned char *want),
			   const unsigned char *want)
{
	pthread_mutex_lock(lock);
	st->failed = st->nomem = 0;
	ask(m, st, want);
	int rc = st->nomem ? -2 : st->failed ? -1 : 0;
	pthread_mutex_unlock(lock);
	return rc;
}

int dc_model_stage(struct dc_model *m, struct dc_stage *st, pthread_mutex_t *lock,
		   void (*ask)(struct dc_model *m, struct dc_stage *st))
{
	pthread_mutex_lock(lock);
	if (!st->done) {
		st->failed = st->nomem = 0;
		ask(m, st);
		/* Out of memory: asked again next time. */
		st->done = !st->nomem;
	}
	int rc = st->nomem ? -2 : st->failed ? -1 : 0;
	pthread_mutex_unlock(lock);
	return rc;
}
