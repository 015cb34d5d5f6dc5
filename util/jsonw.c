#include "util/jsonw.h"

size_t
jsonw_escape_byte(unsigned char c, char out[JSONW_ESC_MAX])
{
	static const char hex[] = "0123456789abcdef";

	if (c == '"' || c == '\\') {
		out[0] = '\\';
		out[1] = (char)c;
		return 2;
	}
	if (c < 0x20 || c >= 0x7f) {
		out[0] = '\\';
		out[1] = 'u';
		out[2] = '0';
		out[3] = '0';
		out[4] = hex[c >> 4];
		out[5] = hex[c & 15];
		return 6;
	}
	out[0] = (char)c;
	return 1;
}
