#include "json_out.h"

void json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void json_result(FILE *f, const dmaconn_result *r)
{
	int n = dmaconn_result_size(r);
	fputs("{\"device_type\":", f);
	json_string(f, dmaconn_device_type_name(dmaconn_result_device_type(r)));
	fputs(",\"connection_type\":", f);
	json_string(f, dmaconn_result_connection_type(r));
	fputs(",\"matrix\":[", f);
	for (int i = 0; i < n; i++) {
		fputs(i ? ",[" : "[", f);
		for (int j = 0; j < n; j++)
			fprintf(f, j ? ",%d" : "%d", dmaconn_result_get(r, i, j));
		fputc(']', f);
	}
	fputs("],\"devices\":[", f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{\"ordinal\":%d", i ? "," : "", i);
		for (int k = 0; k < dmaconn_result_device_property_count(r, i); k++) {
			fputc(',', f);
			json_string(f, dmaconn_result_device_property_key(r, i, k));
			fputc(':', f);
			json_string(f, dmaconn_result_device_property_value(r, i, k));
		}
		fputc('}', f);
	}
	fputc(']', f);
	int any = 0;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			int count = dmaconn_result_pair_property_count(r, i, j);
			if (!count)
				continue;
			fprintf(f, "%s{\"from\":%d,\"to\":%d", any++ ? "," : ",\"pairs\":[", i, j);
			for (int k = 0; k < count; k++) {
				fputc(',', f);
				json_string(f, dmaconn_result_pair_property_key(r, i, j, k));
				fputc(':', f);
				json_string(f, dmaconn_result_pair_property_value(r, i, j, k));
			}
			fputc('}', f);
		}
	}
	if (any)
		fputc(']', f);
	fputs(",\"warnings\":[", f);
	for (int k = 0; k < dmaconn_result_warning_count(r); k++) {
		if (k)
			fputc(',', f);
		json_string(f, dmaconn_result_warning(r, k));
	}
	fputs("]}", f);
}
