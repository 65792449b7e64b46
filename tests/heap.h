/* SPDX-License-Identifier: BSD-3-Clause */
/* The bytes this process holds on the heap now: the sanitizer's count under
 * ASan, else glibc's mallinfo2() (test_memory.c, test_misuse.c). */
#ifndef DMACONN_TEST_HEAP_H
#define DMACONN_TEST_HEAP_H

#include <malloc.h>
#include <stddef.h>

extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static inline long long heap(void)
{
	if (__sanitizer_get_current_allocated_bytes)
		return (long long)__sanitizer_get_current_allocated_bytes();
	struct mallinfo2 mi = mallinfo2();
	return (long long)mi.uordblks;
}

#endif
