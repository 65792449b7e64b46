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

const char *dmaconn_placement_get(const dmaconn_placement *p, const char *key)
{
	return dc_props_get(node_props(p), key);
}

int dmaconn_placement_property_count(const dmaconn_placement *p)
{
	return dc_props_count(node_props(p));
}

const char *dmaconn_placement_property_key(const dmaconn_placement *p, int k)
{
	return dc_props_key_at(node_props(p), k);
}

const char *dmaconn_placement_property_value(const dmaconn_placement *p, int k)
{
	return dc_props_value_at(node_props(p), k);
}

const char *dmaconn_placement_device_get(const dmaconn_placement *p, int i, const char *key)
{
	return dc_props_get(device_props(p, i), key);
}

int dmaconn_placement_device_property_count(const dmaconn_placement *p, int i)
{
	return dc_props_count(device_props(p, i));
}

const char *dmaconn_placement_device_property_key(const dmaconn_placement *p, int i, int k)
{
	return dc_props_key_at(device_props(p, i), k);
}

const char *dmaconn_placement_device_property_value(const dmaconn_placement *p, int i, int k)
{
	return dc_props_value_at(device_props(p, i), k);
}

const char *dmaconn_placement_nic_get(const dmaconn_placement *p, int n, const char *key)
{
	return dc_props_get(nic_props(p, n), key);
}

int dmaconn_placement_nic_property_count(const dmaconn_placement *p, int n)
{
	return dc_props_count(nic_props(p, n));
}

const char *dmaconn_placement_nic_property_key(const dmaconn_placement *p, int n, int k)
{
	return dc_props_key_at(nic_props(p, n), k);
}

const char *dmaconn_placement_nic_property_value(const dmaconn_placement *p, int n, int k)
{
	return dc_props_value_at(nic_props(p, n), k);
}

int dmaconn_placement_device_nic(const dmaconn_placement *p, int i, int rank)
{
	if (!device_props(p, i) || rank < 0 || rank >= p->nnics)
		return -1;
	return p->order[(size_t)i * (size_t)p->nnics + (size_t)rank];
}

const char *dmaconn_placement_link_get(const dmaconn_placement *p, int i, int n, const char *key)
{
	return dc_props_get(link_props(p, i, n), key);
}

int dmaconn_placement_link_property_count(const dmaconn_placement *p, int i, int n)
{
	return dc_props_count(link_props(p, i, n));
}

const char *dmaconn_placement_link_property_key(const dmaconn_placement *p, int i, int n, int k)
{
	return dc_props_key_at(link_props(p, i, n), k);
}

const char *dmaconn_placement_link_property_value(const dmaconn_placement *p, int i, int n, int k)
{
	return dc_props_value_at(link_props(p, i, n), k);
}

int dmaconn_placement_warning_count(const dmaconn_placement *p)
{
	return p ? p->warnings.count : 0;
}

const char *dmaconn_placement_warning(const dmaconn_placement *p, int k)
{
	return dc_strings_at(p ? &p->warnings : NULL, k);
}
