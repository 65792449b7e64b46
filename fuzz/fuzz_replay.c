/*
 * The replay component's reader: the input is a topology file
 * (docs/replay-format.md).  dmaconn_replay_fuzz_load() (replay/replay.c,
 * compiled with DMACONN_FUZZING) parses it into the component's structures,
 * answers every NVML call from them and frees them.
 */
#include <stddef.h>
#include <stdint.h>

int dmaconn_replay_fuzz_load(const char *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dmaconn_replay_fuzz_load((const char *)data, size);
	return 0;
}
