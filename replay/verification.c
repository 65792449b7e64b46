/*
 * "verification": what `dmaconn --record FILE --verify` proved on the node,
 * answered to cuda/verified under replay through the ops' verification():
 *   {"devices": ["0000:00:06.0", ...],
 *    "pairs": [{"from": 0, "to": 1, "verified": "pass", "read_verified": "yes", ...}, ...]}
 * with devices in the order the verification used and every pair key other
 * than from and to a property of the pair (strings, or numbers kept as
 * written).  Recording a replay writes the section back unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

#define VERIFY_MAX_DEVICES 4096
#define VERIFY_MAX_PROPS   64

/* The answer points into the section and into texts (the numbers as
 * written); block holds its pairs, bus ids, keys and values. */
static json_t *section, *texts;
static struct dmaconn_replay_verification v;
static void *block;

void replay_verification_release(void)
{
	json_decref(section);
	json_decref(texts);
	free(block);
	section = texts = NULL;
	block = NULL;
	memset(&v, 0, sizeof(v));
}

/* Reads pair k into *out, its keys and values into kv (2 * keys + 2). */
static int verify_pair(const char *file, json_t *o, size_t k, struct dmaconn_replay_vpair *out, const char **kv)
{
	char path[REPLAY_PATH_LEN], p[REPLAY_PATH_LEN];
	long long from, to;
	json_t *jfrom = json_object_get(o, "from"), *jto = json_object_get(o, "to"), *val;
	const char *key;
	size_t n = json_object_size(o);
	replay_item(path, "verification.pairs", k);
	if (!json_is_object(o))
		return replay_bad(file, path, "expected a pair object");
	if (!jfrom || !jto)
		return replay_bad(file, path, "\"from\" and \"to\" are required");
	if (replay_get_int(file, jfrom, replay_sub(p, path, "from"), 0, v.ndev - 1, &from) ||
	    replay_get_int(file, jto, replay_sub(p, path, "to"), 0, v.ndev - 1, &to))
		return -1;
	if (from == to)
		return replay_bad(file, path, "a device is not its own peer");
	if (n > VERIFY_MAX_PROPS)
		return replay_bad(file, path, "more than %d keys", VERIFY_MAX_PROPS);
	*out = (struct dmaconn_replay_vpair){ (int)from, (int)to, 0, kv, kv + n + 1 };
	json_object_foreach(o, key, val)
	{
		if (!strcmp(key, "from") || !strcmp(key, "to"))
			continue;
		if (!json_is_string(val) && !json_is_number(val) && !json_is_boolean(val))
			return replay_bad(file, replay_sub(p, path, key), "expected a string or a number");
		char *text = json_is_string(val) ? NULL : json_dumps(val, JSON_ENCODE_ANY);
		if (!json_is_string(val) && json_array_append_new(texts, val = text ? json_string(text) : NULL))
			val = NULL;
		free(text);
		if (!val)
			return replay_bad(file, path, "out of memory");
		kv[out->nprops] = key;
		kv[n + 1 + out->nprops++] = json_string_value(val);
	}
	return 0;
}

int replay_verification_read(const char *file, json_t *value)
{
	char p[REPLAY_PATH_LEN];
	replay_verification_release();
	if (!json_is_object(value))
		return replay_bad(file, "verification", "expected an object with \"devices\" and \"pairs\"");
	json_t *devs = json_object_get(value, "devices"), *prs = json_object_get(value, "pairs"), *o;
	if (!json_is_array(devs) || json_array_size(devs) > VERIFY_MAX_DEVICES)
		return replay_bad(file, "verification.devices", "expected an array of at most %d PCI bus ids",
				  VERIFY_MAX_DEVICES);
	if (!json_is_array(prs))
		return replay_bad(file, "verification.pairs", "expected an array of pairs");
	size_t ndev = json_array_size(devs), npairs = json_array_size(prs), nkv = 0, k;
	json_array_foreach(prs, k, o) nkv += 2 * json_object_size(o) + 2;
	struct dmaconn_replay_vpair *pairs = block =
		calloc(1, (npairs + 1) * sizeof(*pairs) + (ndev + nkv + 1) * sizeof(char *));
	const char **pci = (const char **)(pairs + npairs + 1), **kv = pci + ndev;
	if (!block || !(texts = json_array()))
		return replay_bad(file, "verification", "out of memory");
	for (size_t i = 0; i < ndev; i++)
		if (!(pci[i] = json_string_value(json_array_get(devs, i))))
			return replay_bad(file, replay_item(p, "verification.devices", i), "expected a PCI bus id");
	v = (struct dmaconn_replay_verification){ (int)ndev, pci, (int)npairs, pairs };
	json_array_foreach(prs, k, o)
	{
		if (verify_pair(file, o, k, &pairs[k], kv))
			return -1;
		kv += 2 * json_object_size(o) + 2;
	}
	section = json_incref(value);
	return 0;
}

/* A recording of a replay keeps the section; a live one gets it from the
 * CLI once the verification ran (`--record FILE --verify`). */
void replay_verification_record(json_t *root)
{
	if (replay_active() && section)
		json_object_set(root, "verification", section);
}

int replay_verification(const struct dmaconn_replay_verification **out)
{
	if (!section)
		return 0;
	*out = &v;
	return 1;
}
