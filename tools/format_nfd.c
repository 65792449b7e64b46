/* --format nfd. */
#include "format.h"

int dc_format_nfd(FILE *out, FILE *err, const struct dc_format_input *in)
{
	(void)out;
	(void)in;
	fputs("dmaconn: --format nfd is not available yet\n", err);
	return 1;
}
