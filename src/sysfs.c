#include "sysfs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_hex_file(const char *dir, const char *name, unsigned long *out)
{
	char path[4096], buf[64];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -1;
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char *ok = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!ok)
		return -1;
	char *end;
	*out = strtoul(buf, &end, 16);
	return end == buf ? -1 : 0;
}

static int cmp_pci(const void *a, const void *b)
{
	return dc_pci_compare(a, b);
}

int dc_sysfs_nvidia_gpus(const char *root, struct dc_pci *out, int max)
{
	char dirpath[4096];
	if ((size_t)snprintf(dirpath, sizeof(dirpath), "%s/bus/pci/devices", root) >= sizeof(dirpath))
		return 0;
	DIR *d = opendir(dirpath);
	if (!d)
		return 0;
	struct dc_pci *all = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		struct dc_pci p;
		if (e->d_name[0] == '.' || dc_pci_parse(e->d_name, sizeof(e->d_name), &p) != 0)
			continue;
		char dev[4096 + 256];
		snprintf(dev, sizeof(dev), "%s/%s", dirpath, e->d_name);
		unsigned long vendor, cls;
		if (read_hex_file(dev, "vendor", &vendor) || vendor != 0x10de ||
		    read_hex_file(dev, "class", &cls) || ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302))
			continue;
		if (n == cap) {
			int ncap = cap ? cap * 2 : 16;
			struct dc_pci *grown = realloc(all, (size_t)ncap * sizeof(*all));
			if (!grown)
				break;
			all = grown;
			cap = ncap;
		}
		all[n++] = p;
	}
	closedir(d);
	if (n > 1)
		qsort(all, (size_t)n, sizeof(*all), cmp_pci);
	for (int i = 0; i < n && i < max; i++)
		out[i] = all[i];
	free(all);
	return n;
}
