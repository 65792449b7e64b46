/* SPDX-License-Identifier: BSD-3-Clause */
/* The CLI's JSON values (tools/cli.c), for the other printers of tools/. */
#ifndef DMACONN_CLI_JSON_H
#define DMACONN_CLI_JSON_H

#include <jansson.h>

/* A JSON string for s (null for NULL), invalid UTF-8 replaced. */
json_t *cli_json_string(const char *s);

/* Sets key to value, typed as the key's JSON type (docs/json-output.md),
 * unless key is already there (a repeated property keeps its first value). */
void cli_json_first(json_t *obj, const char *key, const char *value);

#endif
