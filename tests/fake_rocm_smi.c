/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in librocm_smi64.so.1 for the ROCm SMI cross-check of the KFD
 * detectors, steered by the environment:
 *   FAKE_RSMI_BDFS     the devices, in ROCm SMI index order: PCI addresses
 *                      "0000:03:00.0" separated by blanks or commas
 *   FAKE_RSMI_DEFAULT  the answer for every pair not in FAKE_RSMI_LINKS:
 *                      "xgmi:MIN:MAX" (MB/s, as rsmi_minmax_bandwidth_get
 *                      gives them), "xgmi" (no bandwidth) or "pcie" (default)
 *   FAKE_RSMI_LINKS    "S-D=ANSWER,..." per ordered pair of indices
 *   FAKE_RSMI_FAIL     "FUNCTION:STATUS[:SKIP]": FUNCTION answers STATUS (a
 *                      number) after SKIP successful calls
 * Built with -DFAKE_RSMI_NO_MINMAX (an old library) or
 * -DFAKE_RSMI_NO_LINK_TYPE (a broken one), it lacks that function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_smi_api.h"

#define EXPORT __attribute__((visibility("default")))
#define PROTO_(fn, ret, params, required) EXPORT ret fn params;
RSMI_FUNCTIONS(PROTO_)
#undef PROTO_

static int inits;
static int calls[16];

static rsmi_status_t fault(const char *fn, int slot)
{
	const char *spec = getenv("FAKE_RSMI_FAIL");
	size_t len = strlen(fn);
	if (!spec || strncmp(spec, fn, len) || spec[len] != ':')
		return RSMI_STATUS_SUCCESS;
	char *end;
	unsigned long status = strtoul(spec + len + 1, &end, 10);
	long skip = *end == ':' ? strtol(end + 1, NULL, 10) : 0;
	if (calls[slot]++ < skip)
		return RSMI_STATUS_SUCCESS;
	return (rsmi_status_t)status;
}

static int parse_bdf(const char *s, uint64_t *id)
{
	unsigned int d, b, dev, f;
	if (sscanf(s, "%x:%x:%x.%x", &d, &b, &dev, &f) != 4)
		return -1;
	*id = ((uint64_t)d << 32) | (b << 8) | (dev << 3) | f;
	return 0;
}

/* The idx-th address of FAKE_RSMI_BDFS; -1 past the end. */
static int bdf(uint32_t idx, uint64_t *id)
{
	const char *list = getenv("FAKE_RSMI_BDFS");
	char buf[64];
	uint32_t k = 0;
	for (const char *p = list; p && *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t n = strcspn(p, " ,");
		if (!n)
			break;
		if (k++ == idx) {
			snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
			return parse_bdf(buf, id);
		}
		p += n;
	}
	return -1;
}

static uint32_t device_count(void)
{
	uint64_t id;
	uint32_t n = 0;
	while (bdf(n, &id) == 0)
		n++;
	return n;
}

/* The answer for src -> dst: 1 XGMI, 0 PCIe; bandwidths when given. */
static int answer(uint32_t src, uint32_t dst, uint64_t *lo, uint64_t *hi)
{
	char key[32], spec[64] = "pcie";
	const char *def = getenv("FAKE_RSMI_DEFAULT"), *links = getenv("FAKE_RSMI_LINKS");
	if (def)
		snprintf(spec, sizeof(spec), "%s", def);
	snprintf(key, sizeof(key), "%u-%u=", src, dst);
	for (const char *p = links; p && *p;) {
		if (!strncmp(p, key, strlen(key))) {
			size_t n = strcspn(p + strlen(key), ",");
			snprintf(spec, sizeof(spec), "%.*s", (int)n, p + strlen(key));
			break;
		}
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	*lo = *hi = 0;
	if (strncmp(spec, "xgmi", 4))
		return 0;
	unsigned long long a = 0, b = 0;
	if (sscanf(spec, "xgmi:%llu:%llu", &a, &b) == 2) {
		*lo = a;
		*hi = b;
	}
	return 1;
}

rsmi_status_t rsmi_init(uint64_t flags)
{
	(void)flags;
	rsmi_status_t r = fault("rsmi_init", 0);
	if (r == RSMI_STATUS_SUCCESS)
		inits++;
	return r;
}

rsmi_status_t rsmi_shut_down(void)
{
	if (!inits)
		return RSMI_STATUS_INIT_ERROR;
	inits--;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_num_monitor_devices(uint32_t *num_devices)
{
	rsmi_status_t r = fault("rsmi_num_monitor_devices", 1);
	if (!inits)
		return RSMI_STATUS_INIT_ERROR;
	if (r == RSMI_STATUS_SUCCESS)
		*num_devices = device_count();
	return r;
}

rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t *bdfid)
{
	rsmi_status_t r = fault("rsmi_dev_pci_id_get", 2);
	if (!inits)
		return RSMI_STATUS_INIT_ERROR;
	if (r != RSMI_STATUS_SUCCESS)
		return r;
	return bdf(dv_ind, bdfid) == 0 ? RSMI_STATUS_SUCCESS : RSMI_STATUS_INVALID_ARGS;
}

#ifndef FAKE_RSMI_NO_LINK_TYPE
rsmi_status_t rsmi_topo_get_link_type(uint32_t src, uint32_t dst, uint64_t *hops, RSMI_IO_LINK_TYPE *type)
{
	rsmi_status_t r = fault("rsmi_topo_get_link_type", 3);
	uint64_t lo, hi;
	if (!inits)
		return RSMI_STATUS_INIT_ERROR;
	if (r != RSMI_STATUS_SUCCESS)
		return r;
	if (src >= device_count() || dst >= device_count())
		return RSMI_STATUS_INVALID_ARGS;
	int xgmi = answer(src, dst, &lo, &hi);
	*type = xgmi ? RSMI_IOLINK_TYPE_XGMI : RSMI_IOLINK_TYPE_PCIEXPRESS;
	*hops = xgmi ? 1 : 2;
	return RSMI_STATUS_SUCCESS;
}
#endif

#ifndef FAKE_RSMI_NO_MINMAX
rsmi_status_t rsmi_minmax_bandwidth_get(uint32_t src, uint32_t dst, uint64_t *min_bandwidth,
					uint64_t *max_bandwidth)
{
	rsmi_status_t r = fault("rsmi_minmax_bandwidth_get", 4);
	if (!inits)
		return RSMI_STATUS_INIT_ERROR;
	if (r != RSMI_STATUS_SUCCESS)
		return r;
	if (!answer(src, dst, min_bandwidth, max_bandwidth))
		return RSMI_STATUS_NOT_SUPPORTED; /* the real one: XGMI peers one hop apart only */
	return RSMI_STATUS_SUCCESS;
}
#endif

rsmi_status_t rsmi_status_string(rsmi_status_t status, const char **status_string)
{
	switch (status) {
	case RSMI_STATUS_INIT_ERROR:
		*status_string = "fake: initialization error";
		return RSMI_STATUS_SUCCESS;
	case RSMI_STATUS_PERMISSION:
		*status_string = "fake: permission denied";
		return RSMI_STATUS_SUCCESS;
	default:
		*status_string = NULL;
		return RSMI_STATUS_INVALID_ARGS;
	}
}

/* Reports an unbalanced rsmi_init / rsmi_shut_down when the process ends. */
__attribute__((destructor)) static void check_balance(void)
{
	if (inits)
		fprintf(stderr, "fake_rocm_smi: %d rsmi_init without rsmi_shut_down\n", inits);
}
