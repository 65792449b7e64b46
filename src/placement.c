/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dmaconn_placement: the NICs, CPUs and memory near each device
 * (include/dmaconn.h, "Placement").  The handle and its accessors; what
 * fills it is src/placement_detect.c's.
 */
#include <stdlib.h>

#include "internal.h"
#include "placement.h"

void dmaconn_placement_free(dmaconn_placement *p)
{
	if (!p)
		return;
	dc_props_clear(&p->node);
	for (int i = 0; p->devices && i < p->n; i++)
		dc_props_clear(&p->devices[i]);
	free(p->devices);
	for (int k = 0; p->nics && k < p->nnics; k++)
		dc_props_clear(&p->nics[k]);
	free(p->nics);
	for (size_t k = 0; p->links && k < (size_t)p->n * (size_t)p->nnics; k++)
		dc_props_clear(&p->links[k]);
	free(p->links);
	free(p->order);
	free(p->nic_paths);
	dc_strings_clear(&p->warnings);
	free(p);
}

dmaconn_device_type dmaconn_placement_device_type(const dmaconn_placement *p)
{
	return p ? p->type : (dmaconn_device_type)0;
}

int dmaconn_placement_size(const dmaconn_placement *p)
{
	return p ? p->n : 0;
}

int dmaconn_placement_nic_count(const dmaconn_placement *p)
{
	return p ? p->nnics : 0;
}

static const struct dc_props *node_props(const dmaconn_placement *p)
{
	return p ? &p->node : NULL;
}

static const struct dc_props *device_props(const dmaconn_placement *p, int i)
{
	return p && i >= 0 && i < p->n ? &p->devices[i] : NULL;
}

static const struct dc_props *nic_props(const dmaconn_placement *p, int n)
{
	return p && n >= 0 && n < p->nnics ? &p->nics[n] : NULL;
}

static const struct dc_props *link_props(const dmaconn_placement *p, int i, int n)
{
	return device_props(p, i) && nic_props(p, n) ? &p->links[(size_t)i * (size_t)p->nnics + (size_t)n]
						     : NULL;
}

/*
 * The four accessors of one kind of facts, over its lookup (NULL out of
 * range): NAME_get(p, ARGS..., key), NAME_property_count(p, ARGS...),
 * _key(p, ARGS..., k) and _value(p, ARGS..., k).  ARGS names a macro giving
 * the parameters after p (with their comma), so that the empty one is one.
 */
#define NO_ARGS
#define DEVICE_ARGS , int i
#define NIC_ARGS , int n
#define LINK_ARGS , int i, int n
#define ACCESSORS(get, count, key_at, value_at, ARGS, lookup)                  \
	const char *get(const dmaconn_placement *p ARGS, const char *key)      \
	{                                                                      \
		return dc_props_get(lookup, key);                              \
	}                                                                      \
	int count(const dmaconn_placement *p ARGS)                             \
	{                                                                      \
		return dc_props_count(lookup);                                 \
	}                                                                      \
	const char *key_at(const dmaconn_placement *p ARGS, int k)             \
	{                                                                      \
		return dc_props_key_at(lookup, k);                             \
	}                                                                      \
	const char *value_at(const dmaconn_placement *p ARGS, int k)           \
	{                                                                      \
		return dc_props_value_at(lookup, k);                           \
	}

ACCESSORS(dmaconn_placement_get, dmaconn_placement_property_count, dmaconn_placement_property_key,
	  dmaconn_placement_property_value, NO_ARGS, node_props(p))
ACCESSORS(dmaconn_placement_device_get, dmaconn_placement_device_property_count,
	  dmaconn_placement_device_property_key, dmaconn_placement_device_property_value, DEVICE_ARGS,
	  device_props(p, i))
ACCESSORS(dmaconn_placement_nic_get, dmaconn_placement_nic_property_count, dmaconn_placement_nic_property_key,
	  dmaconn_placement_nic_property_value, NIC_ARGS, nic_props(p, n))
ACCESSORS(dmaconn_placement_link_get, dmaconn_placement_link_property_count, dmaconn_placement_link_property_key,
	  dmaconn_placement_link_property_value, LINK_ARGS, link_props(p, i, n))

int dmaconn_placement_device_nic(const dmaconn_placement *p, int i, int rank)
{
	if (!device_props(p, i) || rank < 0 || rank >= p->nnics)
		return -1;
	return p->order[(size_t)i * (size_t)p->nnics + (size_t)rank];
}

const char *dmaconn_placement_nic_path(const dmaconn_placement *p, int a, int b)
{
	if (!nic_props(p, a) || !nic_props(p, b) || a == b)
		return NULL;
	return p->nic_paths[(size_t)a * (size_t)p->nnics + (size_t)b];
}

int dmaconn_placement_warning_count(const dmaconn_placement *p)
{
	return p ? p->warnings.count : 0;
}

const char *dmaconn_placement_warning(const dmaconn_placement *p, int k)
{
	return dc_strings_at(p ? &p->warnings : NULL, k);
}
