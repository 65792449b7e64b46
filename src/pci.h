/* SPDX-License-Identifier: BSD-3-Clause */
/* PCI addresses as NVML, CUDA and sysfs spell them. */
#ifndef DMACONN_PCI_H
#define DMACONN_PCI_H

#include <stddef.h>

struct dc_pci {
	unsigned int domain, bus, device, function;
};

#define DC_PCI_BUS_ID_SIZE 32

/* The value of hex digit c, or -1. */
int dc_hexval(int c);

/*
 * Parses "[domain:]bus:device.function" in hex, as in "00000000:00:06.0",
 * "0000:0a:00.0" or "0a:00.0", reading at most maxlen bytes (NVML's buffers
 * need not be terminated).  Returns 0, or -1 for anything else.
 */
int dc_pci_parse(const char *s, size_t maxlen, struct dc_pci *out);
/* Writes the canonical lower-case form, "0000:00:06.0" (8 domain digits when
 * the domain does not fit in 4). */
void dc_pci_format(const struct dc_pci *p, char out[DC_PCI_BUS_ID_SIZE]);
int dc_pci_equal(const struct dc_pci *a, const struct dc_pci *b);
int dc_pci_compare(const struct dc_pci *a, const struct dc_pci *b);

/* 16 bytes as a hyphenated UUID, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx". */
#define DC_UUID_TEXT_SIZE 37
void dc_uuid_format(const unsigned char u[16], char out[DC_UUID_TEXT_SIZE]);

/*
 * Sets of CPUs or NUMA nodes as the kernel lists them ("0-55,112-167", the
 * form of local_cpulist and nodeN/cpulist) and as NVML's affinity masks hold
 * them (words of unsigned long, bit k of word w = member w * bits + k).
 * dc_list_parse() sets the members of s in mask (zeroed first; a trailing
 * newline allowed); 0, or -1 when s is malformed or names a member beyond
 * the mask.  dc_list_format() writes mask's members in that form (empty
 * for none); how many, or -1 when out is too small.
 */
#define DC_LIST_BITS (8 * (int)sizeof(unsigned long))
int dc_list_parse(const char *s, unsigned long *mask, int words);
int dc_list_format(const unsigned long *mask, int words, char *out, size_t len);

#endif
