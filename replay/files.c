/* "files": sysfs trees recorded for the detectors that read the kernel's
 * view (AMD's KFD topology), answered to the core through read_file and
 * list_dir. */
#include "replay_internal.h"

int replay_files_read_file(const char *path, const char **data, size_t *len)
{
	(void)path;
	(void)data;
	(void)len;
	return 0;
}

int replay_files_list_dir(const char *path, const char *const **names, int *count)
{
	(void)path;
	(void)names;
	(void)count;
	return 0;
}
