/* Writing results as JSON, with no library beyond stdio. */
#ifndef DMACONN_JSON_OUT_H
#define DMACONN_JSON_OUT_H

#include <stdio.h>

#include "dmaconn.h"

/* Writes s as a JSON string literal (NULL as null). */
void json_string(FILE *f, const char *s);
/* Writes one result as the object documented in README ("device_type",
 * "connection_type", "matrix", "devices", "pairs" when the detector
 * describes pairs, "warnings"). */
void json_result(FILE *f, const dmaconn_result *r);

#endif
