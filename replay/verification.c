/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "verification": what `dmaconn --record FILE --verify` proved on the node,
 * answered to cuda/verified under replay through the ops' verification():
 * {"devices": [bus ids in the verification's order], "pairs": [{"from": 0,
 * "to": 1, and the pair's properties}]}.  Values are strings (as every
 * recording before the result codec wrote them), or numbers and booleans
 * read as the codec reads them (src/codec.h: dc_codec_text).  Recording a
 * replay writes the section back unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "pci.h"
#include "replay_internal.h"

#define VERIFY_MAX_DEVICES 4096
#define VERIFY_MAX_PROPS   64

/* The answer points into the section and into texts (the values as text);
 * block holds its pairs, bus ids, keys and values. */
static struct {
	json_t *section, *texts;
	void *block;
	struct dmaconn_replay_verification v;
} vs;

void replay_verification_release(void)
{
	json_decref(vs.section);
	json_decref(vs.texts);
	free(vs.block);
	memset(&vs, 0, sizeof(vs));
}

int replay_verification_read(const char *file, json_t *value)
{
	char path[REPLAY_PATH_LEN], p[REPLAY_PATH_LEN];
	replay_verification_release();
	if (!json_is_object(value))
		return replay_bad(file, "verification", "expected an object with \"devices\" and \"pairs\"");
	json_t *devs = json_object_get(value, "devices"), *prs = json_object_get(value, "pairs"), *o, *val;
	if (!json_is_array(devs) || json_array_size(devs) > VERIFY_MAX_DEVICES)
		return replay_bad(file, "verification.devices", "expected an array of at most %d PCI bus ids",
				  VERIFY_MAX_DEVICES);
	if (!json_is_array(prs))
		return replay_bad(file, "verification.pairs", "expected an array of pairs");
	size_t ndev = json_array_size(devs), npairs = json_array_size(prs), nkv = 0, k;
	json_array_foreach(prs, k, o) nkv += 2 * json_object_size(o) + 2;
	/* The pairs, bus ids, keys and values, the ids parsed, a bit per pair. */
	struct dmaconn_replay_vpair *pairs = vs.block =
		calloc(1, (npairs + 1) * sizeof(*pairs) + (ndev + nkv + 1) * sizeof(char *) +
				  ndev * sizeof(struct dc_pci) + (ndev * ndev + 7) / 8);
	if (!vs.block || !(vs.texts = json_array()))
		return replay_bad(file, "verification", "out of memory");
	const char **pci = (const char **)(pairs + npairs + 1), **kv = pci + ndev, *key;
	struct dc_pci *bus = (struct dc_pci *)(kv + nkv + 1);
	unsigned char *seen = (unsigned char *)(bus + ndev);
	for (size_t i = 0; i < ndev; i++)
		if (!(pci[i] = json_string_value(json_array_get(devs, i))))
			return replay_bad(file, replay_item(p, "verification.devices", i), "expected a PCI bus id");
	/* A GPU listed twice, however its bus id is written, would be shown
	 * with a verified link to itself.  A recording writes "" for a device
	 * without a bus id: ids that do not parse (function 8) are kept as text. */
	for (size_t i = 0; i < ndev; i++) {
		if (dc_pci_parse(pci[i], strlen(pci[i]) + 1, &bus[i]))
			bus[i].function = 8;
		for (size_t j = 0; bus[i].function < 8 && j < i; j++)
			if (!dc_pci_compare(&bus[i], &bus[j]))
				return replay_bad(file, replay_item(p, "verification.devices", i),
						  "\"%s\" is also the bus id of %s", pci[i],
						  replay_item(path, "verification.devices", j));
	}
	vs.v = (struct dmaconn_replay_verification){ (int)ndev, pci, (int)npairs, pairs };
	json_array_foreach(prs, k, o)
	{
		json_t *from = json_object_get(o, "from"), *to = json_object_get(o, "to");
		long long f, t;
		size_t n = json_object_size(o);
		replay_item(path, "verification.pairs", k);
		if (!json_is_object(o))
			return replay_bad(file, path, "expected a pair object");
		if (!from || !to)
			return replay_bad(file, path, "\"from\" and \"to\" are required");
		if (replay_get_int(file, from, replay_sub(p, path, "from"), 0, (long long)ndev - 1, &f) ||
		    replay_get_int(file, to, replay_sub(p, path, "to"), 0, (long long)ndev - 1, &t))
			return -1;
		if (f == t)
			return replay_bad(file, path, "a device is not its own peer");
		if (n > VERIFY_MAX_PROPS)
			return replay_bad(file, path, "more than %d keys", VERIFY_MAX_PROPS);
		pairs[k] = (struct dmaconn_replay_vpair){ (int)f, (int)t, 0, kv, kv + n + 1 };
		json_object_foreach(o, key, val)
		{
			if (!strcmp(key, "from") || !strcmp(key, "to"))
				continue;
			if (!json_is_string(val) && !json_is_number(val) && !json_is_boolean(val))
				return replay_bad(file, replay_sub(p, path, key), "expected a string or a number");
			/* Numbers and booleans as the codec writes them as text. */
			char *text = dc_codec_text(key, val);
			val = text ? json_string(text) : NULL;
			free(text);
			if (json_array_append_new(vs.texts, val))
				return replay_bad(file, path, "out of memory");
			kv[pairs[k].nprops] = key;
			kv[n + 1 + pairs[k].nprops++] = json_string_value(val);
		}
		kv += 2 * n + 2;
	}
	/* One verdict a pair: a pair listed twice (failing, then passing) would
	 * be shown as what its last keys say. */
	for (k = 0; k < npairs; k++) {
		size_t bit = (size_t)pairs[k].from * ndev + (size_t)pairs[k].to;
		if (seen[bit / 8] & 1u << bit % 8)
			return replay_bad(file, replay_item(path, "verification.pairs", k),
					  "the pair %d -> %d is listed twice", pairs[k].from, pairs[k].to);
		seen[bit / 8] |= (unsigned char)(1u << bit % 8);
	}
	vs.section = json_incref(value);
	return 0;
}

/* A recording of a replay keeps the section; a live one gets it from the
 * CLI once the verification ran (`--record FILE --verify`). */
void replay_verification_record(json_t *root)
{
	if (replay_active() && vs.section)
		json_object_set(root, "verification", vs.section);
}

int replay_verification(const struct dmaconn_replay_verification **out)
{
	if (vs.section)
		*out = &vs.v;
	return vs.section != NULL;
}
