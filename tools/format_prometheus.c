/* --format prometheus. */
#include "format.h"

int dc_format_prometheus(FILE *out, FILE *err, const struct dc_format_input *in)
{
	(void)out;
	(void)in;
	fputs("dmaconn: --format prometheus is not available yet\n", err);
	return 1;
}
