/*
 * "verification": what `dmaconn --record FILE --verify` proved on the node,
 * answered to the cuda/verified view under replay through the ops'
 * verification().  The section is
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

/* The answer points into the section, which it keeps, and into texts, the
 * numbers as written. */
static json_t *section, *texts;
static struct dmaconn_replay_verification v;
static struct dmaconn_replay_vpair *pairs;
static const char **pci;

void replay_verification_release(void)
{
	for (int k = 0; pairs && k < v.npairs; k++)
		free((void *)pairs[k].keys); /* and the values, in the same allocation */
	free(pairs);
	free(pci);
	json_decref(section);
	json_decref(texts);
	pairs = NULL;
	pci = NULL;
	section = texts = NULL;
	memset(&v, 0, sizeof(v));
}

static int verify_pair(const char *file, json_t *o, const char *path, struct dmaconn_replay_vpair *out)
{
	char p[REPLAY_PATH_LEN];
	long long from, to;
	if (!json_is_object(o))
		return replay_bad(file, path, "expected a pair object");
	json_t *jfrom = json_object_get(o, "from"), *jto = json_object_get(o, "to"), *val;
	if (!jfrom || !jto)
		return replay_bad(file, path, "\"from\" and \"to\" are required");
	if (replay_get_int(file, jfrom, replay_sub(p, path, "from"), 0, v.ndev - 1, &from) ||
	    replay_get_int(file, jto, replay_sub(p, path, "to"), 0, v.ndev - 1, &to))
		return -1;
	if (from == to)
		return replay_bad(file, path, "a device is not its own peer");
	size_t n = json_object_size(o);
	if (n > VERIFY_MAX_PROPS)
		return replay_bad(file, path, "more than %d keys", VERIFY_MAX_PROPS);
	const char **kv = calloc(2 * n + 2, sizeof(*kv)), *key;
	*out = (struct dmaconn_replay_vpair){ (int)from, (int)to, 0, kv, kv ? kv + n + 1 : NULL };
	if (!kv)
		return replay_bad(file, path, "out of memory");
	json_object_foreach(o, key, val)
	{
		if (!strcmp(key, "from") || !strcmp(key, "to"))
			continue;
		if (!json_is_string(val) && !json_is_number(val) && !json_is_boolean(val))
			return replay_bad(file, replay_sub(p, path, key), "expected a string or a number");
		if (!json_is_string(val)) {
			char *text = json_dumps(val, JSON_ENCODE_ANY);
			val = text ? json_string(text) : NULL;
			free(text);
			if (json_array_append_new(texts, val))
				return replay_bad(file, path, "out of memory");
		}
		kv[out->nprops] = key;
		kv[n + 1 + out->nprops++] = json_string_value(val);
	}
	return 0;
}

static int verify_read(const char *file, json_t *value)
{
	char p[REPLAY_PATH_LEN];
	if (!json_is_object(value))
		return replay_bad(file, "verification", "expected an object with \"devices\" and \"pairs\"");
	json_t *devs = json_object_get(value, "devices"), *prs = json_object_get(value, "pairs");
	if (!json_is_array(devs) || json_array_size(devs) > VERIFY_MAX_DEVICES)
		return replay_bad(file, "verification.devices", "expected an array of at most %d PCI bus ids",
				  VERIFY_MAX_DEVICES);
	if (!json_is_array(prs))
		return replay_bad(file, "verification.pairs", "expected an array of pairs");
	v.ndev = (int)json_array_size(devs);
	pci = calloc((size_t)v.ndev + 1, sizeof(*pci));
	pairs = calloc(json_array_size(prs) + 1, sizeof(*pairs));
	if (!pci || !pairs || !(texts = json_array()))
		return replay_bad(file, "verification", "out of memory");
	for (int i = 0; i < v.ndev; i++) {
		if (!(pci[i] = json_string_value(json_array_get(devs, (size_t)i))))
			return replay_bad(file, replay_item(p, "verification.devices", (size_t)i),
					  "expected a PCI bus id");
	}
	for (size_t k = 0; k < json_array_size(prs); k++) {
		v.npairs = (int)k + 1; /* what a pair refused took is freed too */
		if (verify_pair(file, json_array_get(prs, k), replay_item(p, "verification.pairs", k), &pairs[k]))
			return -1;
	}
	v.pci = pci;
	v.pairs = pairs;
	section = json_incref(value);
	return 0;
}

int replay_verification_read(const char *file, json_t *value)
{
	replay_verification_release();
	int rc = verify_read(file, value);
	if (rc)
		replay_verification_release();
	return rc;
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
