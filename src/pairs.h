/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-pair properties of a result, stored at a constant cost per pair.
 *
 * A rack has n*n pairs (16.8 M at 4,096 devices) but few distinct facts:
 * every string is kept once (interned), and every distinct list of
 * (key, value) entries once, as a node of a tree whose paths from the root
 * are the lists in the order their keys were first set.  A pair holds the
 * 32-bit number of its list's last node; pairs with the same facts share
 * it.  Setting a property moves the pair to a child node (found again, not
 * made, when another pair took the same step).
 */
#ifndef DMACONN_PAIRS_H
#define DMACONN_PAIRS_H

#include <stddef.h>
#include <stdint.h>

struct dc_pair_node {
	uint32_t parent; /* 0: the root, the empty list */
	uint32_t depth;  /* entries on the path, this one included */
	const char *key, *value; /* interned */
};

struct dc_pairs {
	size_t npairs;
	uint32_t *at;                 /* per pair, its node; NULL until one is set */
	char **strings;               /* interned, open addressing */
	size_t strings_cap, strings_used;
	struct dc_pair_node *nodes;   /* [0] is the root */
	uint32_t nodes_used, nodes_cap;
	uint32_t *children;           /* node ids by (parent, key, value), open addressing */
	size_t children_cap;
	/* The last list set whole (dc_pairs_set_list), and its node. */
	const char *last_keys[16], *last_values[16];
	int last_count;
	uint32_t last_node;
};

/* An empty store for npairs pairs (allocates nothing yet). */
void dc_pairs_init(struct dc_pairs *p, size_t npairs);
void dc_pairs_free(struct dc_pairs *p);

/* Sets key to value on pair k (replacing a value it had); -1 when out of memory. */
int dc_pairs_set(struct dc_pairs *p, size_t k, const char *key, const char *value);

/* The store's copy of s, made on first sight; NULL when out of memory. */
const char *dc_pairs_intern(struct dc_pairs *p, const char *s);
/* dc_pairs_set with key and value from dc_pairs_intern (no copy, no lookup). */
int dc_pairs_set_interned(struct dc_pairs *p, size_t k, const char *ikey, const char *ivalue);

/* Sets the count interned (key, value) entries, keys distinct, on pair k:
 * for a pair without properties one walk from the root, none at all when
 * the list is the one set last (neighbouring pairs mostly share theirs). */
int dc_pairs_set_list(struct dc_pairs *p, size_t k, const char *const *ikeys, const char *const *ivalues,
		      int count);

/* Pair k's number of properties, its e-th key and value (NULL out of range),
 * the value of key (NULL when unset).  Strings live as long as the store. */
int dc_pairs_count(const struct dc_pairs *p, size_t k);
const char *dc_pairs_key(const struct dc_pairs *p, size_t k, int e);
const char *dc_pairs_value(const struct dc_pairs *p, size_t k, int e);
const char *dc_pairs_get(const struct dc_pairs *p, size_t k, const char *key);

#endif
