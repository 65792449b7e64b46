/* The table of output formats (tools/format.h). */
#include <string.h>

#include "format.h"

const struct dc_format dc_formats[] = {
	{ "text", "the matrices and device lines (the default)", NULL },
	{ "json", "one JSON object, as --json (docs/json-output.md)", NULL },
#define DC_FORMAT_ENTRY(id, name, help) { name, help, dc_format_##id },
	DC_FORMATS(DC_FORMAT_ENTRY)
#undef DC_FORMAT_ENTRY
	{ NULL, NULL, NULL },
};

const struct dc_format *dc_format_find(const char *name)
{
	for (const struct dc_format *f = dc_formats; name && f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}
