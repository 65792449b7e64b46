/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dc_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads 1..maxdigits hex digits from s[*pos] (bounded by len). */
static int read_hex(const char *s, size_t len, size_t *pos, int maxdigits, unsigned int *out)
{
	unsigned long v = 0;
	int n = 0;
	while (*pos < len && dc_hexval(s[*pos]) >= 0) {
		if (++n > maxdigits)
			return -1;
		v = v * 16 + (unsigned long)dc_hexval(s[*pos]);
		(*pos)++;
	}
	if (n == 0)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int dc_pci_parse(const char *s, size_t maxlen, struct dc_pci *out)
{
	if (!s)
		return -1;
	size_t len = strnlen(s, maxlen);
	unsigned int f[4];
	size_t pos = 0;
	int fields = 0;
	/* Up to three ':'-separated fields, then ".function". */
	for (;;) {
		if (fields == 3 || read_hex(s, len, &pos, 8, &f[fields]) != 0)
			return -1;
		fields++;
		if (pos < len && s[pos] == ':') {
			pos++;
			continue;
		}
		break;
	}
	if (fields < 2 || pos >= len || s[pos] != '.')
		return -1;
	pos++;
	unsigned int fn;
	if (read_hex(s, len, &pos, 1, &fn) != 0 || pos != len || fn > 7)
		return -1;
	struct dc_pci p = { 0, 0, 0, fn };
	if (fields == 3) {
		p.domain = f[0];
		p.bus = f[1];
		p.device = f[2];
	} else {
		p.bus = f[0];
		p.device = f[1];
	}
	if (p.bus > 0xff || p.device > 0xff)
		return -1;
	*out = p;
	return 0;
}

void dc_pci_format(const struct dc_pci *p, char out[DC_PCI_BUS_ID_SIZE])
{
	snprintf(out, DC_PCI_BUS_ID_SIZE, p->domain > 0xffff ? "%08x:%02x:%02x.%x" : "%04x:%02x:%02x.%x",
		 p->domain, p->bus, p->device, p->function);
}

int dc_pci_equal(const struct dc_pci *a, const struct dc_pci *b)
{
	return dc_pci_compare(a, b) == 0;
}

int dc_pci_compare(const struct dc_pci *a, const struct dc_pci *b)
{
	const unsigned int x[4] = { a->domain, a->bus, a->device, a->function };
	const unsigned int y[4] = { b->domain, b->bus, b->device, b->function };
	for (int i = 0; i < 4; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

void dc_uuid_format(const unsigned char u[16], char out[DC_UUID_TEXT_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	int o = 0;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
	}
	out[o] = '\0';
}

int dc_list_parse(const char *s, unsigned long *mask, int words)
{
	memset(mask, 0, sizeof(*mask) * (size_t)words);
	const char *p = s;
	long max = (long)words * DC_LIST_BITS;
	while (*p && *p != '\n') {
		char *end;
		if (*p < '0' || *p > '9')
			return -1;
		long a = strtol(p, &end, 10), b = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -1;
			b = strtol(end + 1, &end, 10);
		}
		if (a > b || b >= max)
			return -1;
		for (long k = a; k <= b; k++)
			mask[k / DC_LIST_BITS] |= 1ul << (k % DC_LIST_BITS);
		p = end;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return 0;
}

static int list_has(const unsigned long *mask, long k)
{
	return (mask[k / DC_LIST_BITS] >> (k % DC_LIST_BITS)) & 1ul;
}

int dc_list_format(const unsigned long *mask, int words, char *out, size_t len)
{
	long max = (long)words * DC_LIST_BITS;
	size_t o = 0;
	int count = 0;
	if (len == 0)
		return -1;
	out[0] = '\0';
	for (long k = 0; k < max; k++) {
		if (!list_has(mask, k))
			continue;
		long e = k;
		while (e + 1 < max && list_has(mask, e + 1))
			e++;
		int w = e > k ? snprintf(out + o, len - o, "%s%ld-%ld", o ? "," : "", k, e)
			      : snprintf(out + o, len - o, "%s%ld", o ? "," : "", k);
		if (w < 0 || (size_t)w >= len - o)
			return -1;
		o += (size_t)w;
		count += (int)(e - k + 1);
		k = e;
	}
	return count;
}
