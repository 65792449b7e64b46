/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-pair properties of a result: interned strings, shared lists (pairs.h). */
#include "pairs.h"

#include <stdlib.h>
#include <string.h>

static size_t dc_pairs_hash_text(const char *s)
{
	size_t h = 1469598103934665603u;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		h = (h ^ *c) * 1099511628211u;
	return h;
}

static size_t dc_pairs_hash_step(uint32_t parent, const char *key, const char *value)
{
	size_t h = (size_t)parent * 0x9e3779b97f4a7c15u;
	h ^= (size_t)(uintptr_t)key + 0x7f4a7c15u + (h << 6) + (h >> 2);
	h ^= (size_t)(uintptr_t)value + 0x9e3779b9u + (h << 6) + (h >> 2);
	return h ^ (h >> 29);
}

void dc_pairs_init(struct dc_pairs *p, size_t npairs)
{
	memset(p, 0, sizeof(*p));
	p->npairs = npairs;
}

void dc_pairs_free(struct dc_pairs *p)
{
	for (size_t k = 0; k < p->strings_cap; k++)
		free(p->strings[k]);
	free(p->strings);
	free(p->nodes);
	free(p->children);
	free(p->at);
	dc_pairs_init(p, 0);
}

const char *dc_pairs_intern(struct dc_pairs *p, const char *s)
{
	if ((p->strings_used + 1) * 2 > p->strings_cap) {
		size_t ncap = p->strings_cap ? p->strings_cap * 2 : 64;
		char **grown = calloc(ncap, sizeof(*grown));
		if (!grown)
			return NULL;
		for (size_t k = 0; k < p->strings_cap; k++) {
			if (!p->strings[k])
				continue;
			size_t h = dc_pairs_hash_text(p->strings[k]) & (ncap - 1);
			while (grown[h])
				h = (h + 1) & (ncap - 1);
			grown[h] = p->strings[k];
		}
		free(p->strings);
		p->strings = grown;
		p->strings_cap = ncap;
	}
	size_t h = dc_pairs_hash_text(s) & (p->strings_cap - 1);
	for (; p->strings[h]; h = (h + 1) & (p->strings_cap - 1))
		if (!strcmp(p->strings[h], s))
			return p->strings[h];
	if (!(p->strings[h] = strdup(s)))
		return NULL;
	p->strings_used++;
	return p->strings[h];
}

static int dc_pairs_grow_children(struct dc_pairs *p)
{
	size_t ncap = p->children_cap ? p->children_cap * 2 : 64;
	uint32_t *grown = calloc(ncap, sizeof(*grown));
	if (!grown)
		return -1;
	for (size_t k = 0; k < p->children_cap; k++) {
		uint32_t id = p->children[k];
		if (!id)
			continue;
		const struct dc_pair_node *n = &p->nodes[id];
		size_t h = dc_pairs_hash_step(n->parent, n->key, n->value) & (ncap - 1);
		while (grown[h])
			h = (h + 1) & (ncap - 1);
		grown[h] = id;
	}
	free(p->children);
	p->children = grown;
	p->children_cap = ncap;
	return 0;
}

/* The node of parent's list plus (key, value), both interned; 0 when out of memory. */
static uint32_t dc_pairs_child(struct dc_pairs *p, uint32_t parent, const char *key, const char *value)
{
	if (((size_t)p->nodes_used + 1) * 2 > p->children_cap && dc_pairs_grow_children(p) != 0)
		return 0;
	size_t h = dc_pairs_hash_step(parent, key, value) & (p->children_cap - 1);
	for (uint32_t id; (id = p->children[h]) != 0; h = (h + 1) & (p->children_cap - 1)) {
		const struct dc_pair_node *n = &p->nodes[id];
		if (n->parent == parent && n->key == key && n->value == value)
			return id;
	}
	if (p->nodes_used == p->nodes_cap) {
		if (p->nodes_cap >= UINT32_MAX / 2)
			return 0;
		uint32_t ncap = p->nodes_cap * 2;
		struct dc_pair_node *grown = realloc(p->nodes, (size_t)ncap * sizeof(*grown));
		if (!grown)
			return 0;
		p->nodes = grown;
		p->nodes_cap = ncap;
	}
	uint32_t id = p->nodes_used++;
	p->nodes[id] = (struct dc_pair_node){ parent, p->nodes[parent].depth + 1, key, value };
	p->children[h] = id;
	return id;
}

int dc_pairs_set(struct dc_pairs *p, size_t k, const char *key, const char *value)
{
	const char *ikey = dc_pairs_intern(p, key), *ivalue = ikey ? dc_pairs_intern(p, value) : NULL;
	return ivalue ? dc_pairs_set_interned(p, k, ikey, ivalue) : -1;
}

int dc_pairs_set_interned(struct dc_pairs *p, size_t k, const char *ikey, const char *ivalue)
{
	if (k >= p->npairs)
		return -1;
	if (!p->nodes) {
		if (!(p->nodes = malloc(64 * sizeof(*p->nodes))))
			return -1;
		p->nodes[0] = (struct dc_pair_node){ 0, 0, NULL, NULL };
		p->nodes_used = 1;
		p->nodes_cap = 64;
	}
	if (!p->at && !(p->at = calloc(p->npairs, sizeof(*p->at))))
		return -1;
	uint32_t cur = p->at[k], depth = p->nodes[cur].depth, at_key = 0;
	for (uint32_t id = cur; id && !at_key; id = p->nodes[id].parent)
		if (p->nodes[id].key == ikey)
			at_key = id;
	if (!at_key) {
		uint32_t next = dc_pairs_child(p, cur, ikey, ivalue);
		if (!next)
			return -1;
		p->at[k] = next;
		return 0;
	}
	if (p->nodes[at_key].value == ivalue)
		return 0;
	/* A new value for a key the list has: the same list with it replaced,
	 * taken again from the root so that equal lists stay one node. */
	uint32_t *path = malloc((size_t)depth * sizeof(*path));
	if (!path)
		return -1;
	for (uint32_t id = cur, d = depth; id; id = p->nodes[id].parent)
		path[--d] = id;
	uint32_t node = 0;
	for (uint32_t d = 0; d < depth; d++) {
		/* Copied first: making a child may move the nodes. */
		const char *key_d = p->nodes[path[d]].key;
		const char *value_d = path[d] == at_key ? ivalue : p->nodes[path[d]].value;
		if (!(node = dc_pairs_child(p, node, key_d, value_d)))
			break;
	}
	free(path);
	if (!node)
		return -1;
	p->at[k] = node;
	return 0;
}

int dc_pairs_set_list(struct dc_pairs *p, size_t k, const char *const *ikeys, const char *const *ivalues,
		      int count)
{
	if (k >= p->npairs || count < 0)
		return -1;
	if (count == 0)
		return 0;
	if (!p->at || p->at[k] != 0 || count > 16) {
		for (int e = 0; e < count; e++)
			if (dc_pairs_set_interned(p, k, ikeys[e], ivalues[e]) != 0)
				return -1;
		return 0;
	}
	int same = count == p->last_count && p->last_node;
	for (int e = 0; same && e < count; e++)
		same = ikeys[e] == p->last_keys[e] && ivalues[e] == p->last_values[e];
	if (same) {
		p->at[k] = p->last_node;
		return 0;
	}
	uint32_t node = 0;
	for (int e = 0; e < count; e++)
		if (!(node = dc_pairs_child(p, node, ikeys[e], ivalues[e])))
			return -1;
	p->at[k] = node;
	memcpy(p->last_keys, ikeys, (size_t)count * sizeof(*ikeys));
	memcpy(p->last_values, ivalues, (size_t)count * sizeof(*ivalues));
	p->last_count = count;
	p->last_node = node;
	return 0;
}

static const struct dc_pair_node *dc_pairs_entry(const struct dc_pairs *p, size_t k, int e)
{
	if (!p->at || k >= p->npairs || e < 0)
		return NULL;
	uint32_t id = p->at[k];
	if ((uint32_t)e >= p->nodes[id].depth)
		return NULL;
	for (uint32_t up = p->nodes[id].depth - 1 - (uint32_t)e; up; up--)
		id = p->nodes[id].parent;
	return &p->nodes[id];
}

int dc_pairs_count(const struct dc_pairs *p, size_t k)
{
	return p->at && k < p->npairs ? (int)p->nodes[p->at[k]].depth : 0;
}

const char *dc_pairs_key(const struct dc_pairs *p, size_t k, int e)
{
	const struct dc_pair_node *n = dc_pairs_entry(p, k, e);
	return n ? n->key : NULL;
}

const char *dc_pairs_value(const struct dc_pairs *p, size_t k, int e)
{
	const struct dc_pair_node *n = dc_pairs_entry(p, k, e);
	return n ? n->value : NULL;
}

const char *dc_pairs_get(const struct dc_pairs *p, size_t k, const char *key)
{
	if (!p->at || k >= p->npairs || !key)
		return NULL;
	for (uint32_t id = p->at[k]; id; id = p->nodes[id].parent)
		if (!strcmp(p->nodes[id].key, key))
			return p->nodes[id].value;
	return NULL;
}
