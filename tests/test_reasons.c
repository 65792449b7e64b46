/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reasons for the zeros of the cuda views, on a recorded machine:
 *
 *   test_reasons FILE [TYPE/]CONNECTION CODE [TEXT]
 *
 * replays FILE ("-": none, the live tree below DMACONN_SYSFS_ROOT), detects
 * TYPE/CONNECTION (TYPE cuda when left out), and checks that every off-diagonal
 * 0 has a reason and a text, that no 1 has one, and that CODE is among the
 * reasons given (with TEXT in its text, when given).
 */
#include "check.h"
#include "dmaconn.h"

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: test_reasons FILE CONNECTION CODE [TEXT]\n");
		return 2;
	}
	if (strcmp(argv[1], "-") != 0)
		CHECK_INT(dmaconn_set_replay_file(argv[1]), DMACONN_OK);
	dmaconn_device_type type = DMACONN_DEVICE_CUDA;
	char tname[32];
	const char *conn = argv[2], *slash = strchr(argv[2], '/');
	if (slash && (size_t)(slash - argv[2]) < sizeof(tname)) {
		snprintf(tname, sizeof(tname), "%.*s", (int)(slash - argv[2]), argv[2]);
		CHECK_INT(dmaconn_device_type_parse(tname, &type), DMACONN_OK);
		conn = slash + 1;
	}
	dmaconn_result *r = NULL;
	CHECK_INT(dmaconn_detect(type, conn, &r), DMACONN_OK);
	int n = dmaconn_result_size(r), found = 0, zeros = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i == j)
				continue;
			const char *code = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON);
			const char *text = dmaconn_result_pair_get(r, i, j, DMACONN_PROP_REASON_TEXT);
			if (dmaconn_result_get(r, i, j) != 0) {
				CHECK(code == NULL && text == NULL);
				continue;
			}
			zeros++;
			CHECK(code != NULL && text != NULL && *text);
			found |= code && !strcmp(code, argv[3]) && (argc < 5 || strstr(text, argv[4]));
		}
	CHECK(zeros > 0);
	if (!found)
		fprintf(stderr, "%s %s: no pair has the reason %s%s%s\n", argv[1], argv[2], argv[3],
			argc == 5 ? " with " : "", argc == 5 ? argv[4] : "");
	CHECK(found);
	dmaconn_result_release(r);
	dmaconn_shutdown();
	return check_done("test_reasons");
}
