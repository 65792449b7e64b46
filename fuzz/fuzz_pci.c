/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dc_pci_parse() on raw bytes: the input is the buffer, unterminated, as
 * NVML's fixed-size busId fields may be.  A parsed address must format and
 * parse back to itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy, so that ASan sees any read past its end. */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct dc_pci a, b;
	if (dc_pci_parse(buf, size, &a) == 0) {
		char text[DC_PCI_BUS_ID_SIZE];
		dc_pci_format(&a, text);
		if (dc_pci_parse(text, sizeof(text), &b) != 0 || !dc_pci_equal(&a, &b) || a.bus > 0xff ||
		    a.device > 0xff || a.function > 7)
			abort();
		if (dc_pci_compare(&a, &b) != 0)
			abort();
	}
	free(buf);
	return 0;
}
