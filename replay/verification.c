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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"
#include "replay_abi.h"

#define VERIFY_MAX_DEVICES 4096
#define VERIFY_MAX_PROPS 64

static json_t *section;                  /* kept for recording a replay */
static struct dmaconn_replay_verification v;
static struct dmaconn_replay_vpair *pairs;
static const char **pci;

void replay_verification_release(void)
{
	for (int k = 0; pairs && k < v.npairs; k++) {
		for (int p = 0; p < pairs[k].nprops; p++) {
			free((char *)pairs[k].keys[p]);
			free((char *)pairs[k].values[p]);
		}
		free((void *)pairs[k].keys);
		free((void *)pairs[k].values);
	}
	free(pairs);
	free(pci);
	pairs = NULL;
	pci = NULL;
	memset(&v, 0, sizeof(v));
	json_decref(section);
	section = NULL;
}

/* A property value as text: a string as is, a number as JSON writes it. */
static char *value_text(json_t *x)
{
	if (json_is_string(x))
		return strdup(json_string_value(x));
	if (json_is_number(x) || json_is_boolean(x))
		return json_dumps(x, JSON_ENCODE_ANY);
	return NULL;
}

static int read_pair(const char *file, json_t *o, const char *path, struct dmaconn_replay_vpair *out)
{
	char p[REPLAY_PATH_LEN];
	long long x;
	if (!json_is_object(o))
		return replay_bad(file, path, "expected a pair object");
	json_t *from = json_object_get(o, "from"), *to = json_object_get(o, "to");
	if (!from || !to)
		return replay_bad(file, path, "\"from\" and \"to\" are required");
	if (replay_get_int(file, from, replay_sub(p, path, "from"), 0, v.ndev - 1, &x))
		return -1;
	out->from = (int)x;
	if (replay_get_int(file, to, replay_sub(p, path, "to"), 0, v.ndev - 1, &x))
		return -1;
	out->to = (int)x;
	if (out->from == out->to)
		return replay_bad(file, path, "a device is not its own peer");
	size_t n = json_object_size(o);
	if (n > VERIFY_MAX_PROPS)
		return replay_bad(file, path, "more than %d keys", VERIFY_MAX_PROPS);
	char **keys = calloc(n + 1, sizeof(char *)), **values = calloc(n + 1, sizeof(char *));
	out->keys = (const char *const *)keys;
	out->values = (const char *const *)values;
	if (!keys || !values)
		return replay_bad(file, path, "out of memory");
	const char *key;
	json_t *val;
	json_object_foreach(o, key, val)
	{
		if (!strcmp(key, "from") || !strcmp(key, "to"))
			continue;
		char *text = value_text(val);
		if (!text)
			return replay_bad(file, replay_sub(p, path, key), "expected a string or a number");
		keys[out->nprops] = strdup(key);
		values[out->nprops] = text;
		if (!keys[out->nprops++])
			return replay_bad(file, path, "out of memory");
	}
	return 0;
}

int replay_verification_read(const char *file, json_t *value)
{
	char p[REPLAY_PATH_LEN];
	replay_verification_release();
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
	if (!pci || !pairs)
		return replay_bad(file, "verification", "out of memory");
	for (int i = 0; i < v.ndev; i++) {
		json_t *d = json_array_get(devs, (size_t)i);
		if (!json_is_string(d))
			return replay_bad(file, replay_item(p, "verification.devices", (size_t)i),
					  "expected a PCI bus id");
		pci[i] = json_string_value(d);
	}
	for (size_t k = 0; k < json_array_size(prs); k++) {
		if (read_pair(file, json_array_get(prs, k), replay_item(p, "verification.pairs", k), &pairs[k])) {
			v.npairs = (int)k + 1; /* free what this pair took too */
			replay_verification_release();
			return -1;
		}
		v.npairs = (int)k + 1;
	}
	v.pci = pci;
	v.pairs = pairs;
	section = json_incref(value); /* pci[] points into it */
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
