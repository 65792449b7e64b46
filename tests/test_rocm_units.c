/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of HIP's device order (order_hip.c): ROCR_VISIBLE_DEVICES as
 * ROCr's filter reads it, then HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES as
 * HIP's runtime does. */
#include <stdlib.h>

#include "check.h"
#include "order/order.h"

/* Four GPUs in KFD order; the third reports no unique_id (a gfx8 part). */
static const unsigned long long ids[] = { 0x0123456789abcdefULL, 0x0123456789abcd00ULL, 0,
					  0xfedcba9876543210ULL };

/* The visible order as a string "i,j,..." ("" for none). */
static const char *order(const char *rocr, const char *hip, const char *cuda)
{
	static char buf[64];
	int *o = NULL;
	int n = dc_hip_visible(ids, 4, rocr, hip, cuda, &o);
	buf[0] = '\0';
	if (n < 0)
		return "(oom)";
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%d", i ? "," : "", o[i]);
	free(o);
	return buf;
}

static void test_rocr(void)
{
	CHECK_STR(order(NULL, NULL, NULL), "0,1,2,3");
	CHECK_STR(order("", NULL, NULL), "");           /* set but empty: none */
	CHECK_STR(order("2,0", NULL, NULL), "2,0");
	CHECK_STR(order(" 3 , 1 ", NULL, NULL), "3,1");  /* blanks around tokens */
	CHECK_STR(order("0x1,010", NULL, NULL), "1");    /* C syntax: 0x1 = 1, 010 = 8 (out of range) */
	CHECK_STR(order("03,1", NULL, NULL), "3,1");
	CHECK_STR(order("1,5,0", NULL, NULL), "1");      /* out of range ends the list */
	CHECK_STR(order("1,1,0", NULL, NULL), "1");      /* a repeat ends the list */
	CHECK_STR(order("-1", NULL, NULL), "");
	CHECK_STR(order("1,foo,0", NULL, NULL), "1");
	CHECK_STR(order("1,", NULL, NULL), "1");         /* a trailing comma is no token */
	CHECK_STR(order("1,,0", NULL, NULL), "");        /* an empty token: ROCr has no GPU */
	CHECK_STR(order("3,2,1,0,1", NULL, NULL), "3,2,1,0"); /* at most n tokens are read */
	/* UUIDs: "GPU-" + 16 hex digits of unique_id, case ignored, unique prefixes. */
	CHECK_STR(order("GPU-fedcba9876543210", NULL, NULL), "3");
	CHECK_STR(order("gpu-FEDCBA98,0", NULL, NULL), "3,0");
	CHECK_STR(order("GPU-0123456789ab", NULL, NULL), "");  /* ambiguous prefix */
	CHECK_STR(order("GPU-0123456789abcd0,3", NULL, NULL), "1,3");
	CHECK_STR(order("GPU-", NULL, NULL), "");              /* fewer than 5 characters */
	CHECK_STR(order("GPU-0123456789abcdef0", NULL, NULL), "");   /* more than 20 */
	CHECK_STR(order("GPU-XX", NULL, NULL), "");            /* no unique_id matches nothing */
	CHECK_STR(order("GPU-1234567812345678,0", NULL, NULL), "");  /* unmatched ends the list */
}

static void test_hip(void)
{
	CHECK_STR(order(NULL, "2,0", NULL), "2,0");
	CHECK_STR(order(NULL, NULL, "1"), "1");                   /* CUDA_VISIBLE_DEVICES alike */
	CHECK_STR(order(NULL, "3", "1"), "3");                    /* HIP_ wins */
	CHECK_STR(order(NULL, "", "1"), "1");                     /* empty HIP_: CUDA_ applies */
	CHECK_STR(order(NULL, "1,1,0", NULL), "1,0");             /* repeats skipped */
	CHECK_STR(order(NULL, "1,4,0", NULL), "1");               /* out of range ends it */
	CHECK_STR(order(NULL, " 1", NULL), "");                   /* exact digits only */
	CHECK_STR(order(NULL, "01", NULL), "");
	CHECK_STR(order(NULL, "1,", NULL), "1");
	CHECK_STR(order(NULL, "1,,0", NULL), "1");                /* an empty entry ends it */
	CHECK_STR(order(NULL, "-1", NULL), "");
	/* UUIDs: a substring of "GPU-<16 lower-case hex>", first match wins. */
	CHECK_STR(order(NULL, "GPU-fedcba9876543210,0", NULL), "3,0");
	CHECK_STR(order(NULL, "GPU-0123456789abcd", NULL), "0");  /* first of two */
	CHECK_STR(order(NULL, "GPU-FEDCBA98", NULL), "");         /* case matters to HIP */
	CHECK_STR(order(NULL, "GPU-XX", NULL), "2");              /* the GPU without unique_id */
	/* ROCr first, then HIP's indices into what ROCr left. */
	CHECK_STR(order("3,1,2", "1", NULL), "1");
	CHECK_STR(order("3,1,2", "2,0", NULL), "2,3");
	CHECK_STR(order("3,1", "2", NULL), "");
	CHECK_STR(order("3,1", "GPU-0123456789abcd00", NULL), "1");
	CHECK_STR(order("", "0", NULL), "");
}

int main(void)
{
	test_rocr();
	test_hip();
	return check_done("rocm_units");
}
