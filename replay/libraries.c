/* Vendor libraries other than NVML in a recording: whether each loaded. */
#include <string.h>

#include "replay_internal.h"
#include "replay_ze.h"

const char *replay_library_load_error(const char *which)
{
	if (which && !strcmp(which, "level_zero"))
		return replay_ze_load_error();
	return "not recorded";
}
