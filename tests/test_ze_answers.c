/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay component's Level Zero table called directly, every function
 * of ze_functions.h as its row's shape says, where a detector never goes:
 * before zeInit each answers UNINITIALIZED; after it a NULL handle answers
 * INVALID_NULL_HANDLE, a handle the loader never gave INVALID_ARGUMENT, a
 * NULL out argument INVALID_NULL_POINTER (Level Zero's validation layer's
 * codes), and the same call with its arguments SUCCESS.
 */
#include <stdint.h>
#include <stddef.h>

#include "check.h"
#include "replay_abi.h"
#include "ze_load.h"

/* libdmaconn_replay's entry points. */
const struct dmaconn_replay_ops *dmaconn_replay_ops(void);
int dmaconn_replay_use_file(const char *path);

static struct ze_api api;
/* A valid handle of each kind, and one the loader never gave. */
static ze_driver_handle_t drv;
static ze_device_handle_t dev[2];
static ze_fabric_vertex_handle_t vtx[2];
static ze_fabric_edge_handle_t edge;
static char foreign[64];
/* Out arguments: a count of 0 asks how many (a new one each call, as the
 * answer overwrites it); any properties structure fits in out. */
#define ZERO ((void *)&(uint32_t){ 0 })
static _Alignas(max_align_t) char out[4096];

/* A call of fn with the arguments of its shape: the handles h (one, or
 * two for a pair) and the out argument o, a list after a count NULL. */
#define ARGS_ONE2(h, g, o) (h, o)
#define ARGS_ONE3(h, g, o) (h, o, NULL)
#define ARGS_TWO3(h, g, o) (h, g, o)
#define ARGS_TWO4(h, g, o) (h, g, o, NULL)
#define ARGS_(kind, params) DC_CAT_(ARGS_##kind, DC_NARGS_ params)
#define CALL(fn, params, kind, h, g, o) api.fn ARGS_(kind, params)(h, g, o)

/* The checks of a function of one handle of kind valid, of two, of none. */
#define CHECK_ONE(fn, params, valid)                                                                  \
	CHECK_INT(CALL(fn, params, ONE, NULL, NULL, (void *)out), ZE_RESULT_ERROR_INVALID_NULL_HANDLE); \
	CHECK_INT(CALL(fn, params, ONE, (void *)foreign, NULL, (void *)out), ZE_RESULT_ERROR_INVALID_ARGUMENT); \
	CHECK_INT(CALL(fn, params, ONE, valid, NULL, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);      \
	CHECK_INT(CALL(fn, params, ONE, valid, NULL, (void *)(DC_NARGS_ params == 3 ? ZERO : out)), \
		  ZE_RESULT_SUCCESS);
#define CHECK_TWO(fn, params, valid)                                                                  \
	CHECK_INT(CALL(fn, params, TWO, valid[0], NULL, ZERO), ZE_RESULT_ERROR_INVALID_NULL_HANDLE); \
	CHECK_INT(CALL(fn, params, TWO, (void *)foreign, valid[1], ZERO), ZE_RESULT_ERROR_INVALID_ARGUMENT); \
	CHECK_INT(CALL(fn, params, TWO, valid[0], valid[1], NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER); \
	CHECK_INT(CALL(fn, params, TWO, valid[0], valid[1], (void *)(DC_NARGS_ params == 4 ? ZERO : out)), \
		  ZE_RESULT_SUCCESS);
#define CHECK_INIT(fn, params)
#define CHECK_LOADER(fn, params)                                            \
	CHECK_INT(api.fn(NULL, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER); \
	CHECK_INT(api.fn(ZERO, NULL), ZE_RESULT_SUCCESS);
#define CHECK_DRIVER(fn, params) CHECK_ONE(fn, params, drv)
#define CHECK_DEVICE(fn, params) CHECK_ONE(fn, params, dev[0])
#define CHECK_VERTEX(fn, params) CHECK_ONE(fn, params, vtx[0])
#define CHECK_EDGE(fn, params) CHECK_ONE(fn, params, edge)
#define CHECK_DEVICE_PAIR(fn, params) CHECK_TWO(fn, params, dev)
#define CHECK_VERTEX_PAIR(fn, params) CHECK_TWO(fn, params, vtx)

/* Before zeInit, whatever the arguments. */
#define UNINIT_ONE(fn, params) CHECK_INT(CALL(fn, params, ONE, NULL, NULL, NULL), ZE_RESULT_ERROR_UNINITIALIZED);
#define UNINIT_TWO(fn, params) CHECK_INT(CALL(fn, params, TWO, NULL, NULL, NULL), ZE_RESULT_ERROR_UNINITIALIZED);
#define UNINIT_INIT(fn, params)
#define UNINIT_LOADER(fn, params) CHECK_INT(api.fn(NULL, NULL), ZE_RESULT_ERROR_UNINITIALIZED);
#define UNINIT_DRIVER UNINIT_ONE
#define UNINIT_DEVICE UNINIT_ONE
#define UNINIT_VERTEX UNINIT_ONE
#define UNINIT_EDGE UNINIT_ONE
#define UNINIT_DEVICE_PAIR UNINIT_TWO
#define UNINIT_VERTEX_PAIR UNINIT_TWO

/* argv[1]: tests/ze-answers.json, two cards joined by an edge. */
int main(int argc, char **argv)
{
	char err[256];
	CHECK_INT(argc, 2);
	CHECK_INT(dmaconn_replay_use_file(argc > 1 ? argv[1] : ""), 0);
	CHECK_INT(dmaconn_replay_ops()->table("level_zero", &api, err, sizeof(err)), 0);
#define UNINIT_(fn, ret, params, required, shape) UNINIT_##shape(fn, params)
	ZE_FUNCTIONS_ARGS(UNINIT_)
	CHECK_INT(api.zeInit(0), ZE_RESULT_SUCCESS);

	uint32_t n = 1;
	CHECK_INT(api.zeDriverGet(&n, &drv), ZE_RESULT_SUCCESS);
	n = 2;
	CHECK_INT(api.zeDeviceGet(drv, &n, dev), ZE_RESULT_SUCCESS);
	CHECK_INT(n, 2);
	n = 2;
	CHECK_INT(api.zeFabricVertexGetExp(drv, &n, vtx), ZE_RESULT_SUCCESS);
	CHECK_INT(n, 2);
	n = 1;
	CHECK_INT(api.zeFabricEdgeGetExp(vtx[0], vtx[1], &n, &edge), ZE_RESULT_SUCCESS);
	CHECK_INT(n, 1);
#define CHECK_(fn, ret, params, required, shape) CHECK_##shape(fn, params)
	ZE_FUNCTIONS_ARGS(CHECK_)
	return check_done("ze_answers");
}
