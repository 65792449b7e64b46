/* Vendor libraries other than NVML in a recording. */
#include "replay_internal.h"

const char *replay_library_load_error(const char *which)
{
	(void)which;
	return "not recorded";
}
