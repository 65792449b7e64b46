/* SPDX-License-Identifier: BSD-3-Clause */
/* Error codes: every one has a name and a message, and unknown codes get
 * fixed strings, never NULL. */
#include "check.h"
#include "dmaconn.h"

int main(void)
{
	CHECK_STR(dmaconn_err_name(DMACONN_OK), "DMACONN_OK");
	CHECK_STR(dmaconn_err_name(DMACONN_EINVAL), "DMACONN_EINVAL");
	CHECK_STR(dmaconn_err_name(DMACONN_EREPLAY), "DMACONN_EREPLAY");
	CHECK_STR(dmaconn_err_name(DMACONN_EUNAVAILABLE), "DMACONN_EUNAVAILABLE");
	CHECK_STR(dmaconn_err_name(-1000), "DMACONN_EUNKNOWN");
	CHECK_STR(dmaconn_err_name(1), "DMACONN_EUNKNOWN");
	/* Names and messages come from the same table: each code has both, and
	 * no two codes share a name. */
#define EACH_(name, value, text)                                                        \
	CHECK_STR(dmaconn_err_name(value), "DMACONN_" #name);                           \
	CHECK_STR(dmaconn_strerror(value), text);
	DMACONN_ERRORS(EACH_)
#undef EACH_
	CHECK_STR(dmaconn_strerror(-1000), "unknown error");
	return check_done("errors");
}
