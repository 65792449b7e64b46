/* --format slurm. */
#include "format.h"

int dc_format_slurm(FILE *out, FILE *err, const struct dc_format_input *in)
{
	(void)out;
	(void)in;
	fputs("dmaconn: --format slurm is not available yet\n", err);
	return 1;
}
