/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * On a GPU machine, in a process of its own: what the CUDA driver says of
 * each device that dmaconn judges without it.  Prints one line per device,
 * "BUS multicast_supported=V", and, after cuInit, whether this process holds
 * /dev/nvidia-uvm open (the control for tests/device/cuda_untouched.py).
 * Loads libcuda.so.1 with dlopen: built with no CUDA SDK but cuda.h's
 * constants, which the declarations below copy by value.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED 132

static int uvm_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char p[PATH_MAX], t[PATH_MAX];
	int found = 0;
	while (d && (e = readdir(d))) {
		snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(p, t, sizeof t - 1);
		if (n > 0) {
			t[n] = 0;
			found |= strcmp(t, "/dev/nvidia-uvm") == 0;
		}
	}
	if (d)
		closedir(d);
	return found;
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("no libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
	int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
	int (*get)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
	int (*attr)(int *, int, int) = (int (*)(int *, int, int))dlsym(h, "cuDeviceGetAttribute");
	int (*bus)(char *, int, int) = (int (*)(char *, int, int))dlsym(h, "cuDeviceGetPCIBusId");
	printf("before cuInit: /dev/nvidia-uvm open=%d\n", uvm_open());
	int rc = init(0), n = 0;
	printf("cuInit=%d; after cuInit: /dev/nvidia-uvm open=%d\n", rc, uvm_open());
	if (rc || count(&n))
		return 1;
	for (int i = 0; i < n; i++) {
		int dev = 0, v = -1;
		char b[32] = "";
		get(&dev, i);
		int r = attr(&v, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev);
		bus(b, (int)sizeof b, dev);
		for (char *c = b; *c; c++)
			*c = (char)(*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
		printf("%s multicast_supported=%d (rc %d)\n", b, v, r);
	}
	return 0;
}
