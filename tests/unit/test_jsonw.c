/* Unit tests for util/jsonw: the one JSON string escaping, checked on
 * every byte, and its two users (the log, the control answers) spell
 * every byte the same way. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "guard/log.h"
#include "plane/ctljson.h"
#include "util/jsonw.h"

/* The expected form, written independently of jsonw.c: printable ASCII
 * as is except '"' and '\\', everything else \u00xx lower-case. */
static size_t
expect(unsigned c, char *out)
{
	if (c == '"' || c == '\\')
		return (size_t)snprintf(out, 8, "\\%c", (char)c);
	if (c >= 0x20 && c <= 0x7e)
		return (size_t)snprintf(out, 8, "%c", (char)c);
	return (size_t)snprintf(out, 8, "\\u%04x", c);
}

static void
test_every_byte_escaped_as_specified(void **state)
{
	char got[JSONW_ESC_MAX], want[8];
	size_t n, m;
	unsigned c;

	(void)state;
	for (c = 0; c < 256; c++) {
		n = jsonw_escape_byte((unsigned char)c, got);
		m = expect(c, want);
		assert_true(n >= 1 && n <= JSONW_ESC_MAX);
		if (n != m || memcmp(got, want, n) != 0)
			fail_msg("byte 0x%02x: got %.*s want %s", c, (int)n, got, want);
	}
}

/* No escaped form of a hostile byte contains a raw quote, a raw control
 * byte or a byte outside ASCII: nothing can end the string or the line. */
static void
test_hostile_bytes_never_leave_raw_quote_or_control(void **state)
{
	char got[JSONW_ESC_MAX];
	size_t n, i;
	unsigned c;

	(void)state;
	for (c = 0; c < 256; c++) {
		n = jsonw_escape_byte((unsigned char)c, got);
		for (i = 0; i < n; i++) {
			unsigned char b = (unsigned char)got[i];
			assert_true(b >= 0x20 && b < 0x7f);
			if (b == '"')
				assert_true(i == 1 && got[0] == '\\');
		}
	}
}

/* All 255 non-NUL bytes in one string (0 ends a C string): the log's
 * value and the control answer's string are the same bytes. */
static void
test_log_and_control_spell_every_byte_alike(void **state)
{
	char in[256], want[256 * 8 + 3], tmp[8];
	struct log_rec r;
	struct evbuffer *b;
	size_t w = 0, len;
	unsigned c;
	char *p;

	(void)state;
	want[w++] = '"';
	for (c = 1; c < 256; c++) {
		in[c - 1] = (char)c;
		len = expect(c, tmp);
		memcpy(want + w, tmp, len);
		w += len;
	}
	in[255] = '\0';
	want[w++] = '"';
	want[w] = '\0';

	assert_non_null(b = evbuffer_new());
	ctljson_str(b, in);
	len = evbuffer_get_length(b);
	p = (char *)evbuffer_pullup(b, -1);
	assert_int_equal(len, w);
	assert_memory_equal(p, want, w);
	evbuffer_free(b);

	log_rec_begin(&r, NULL, "decision");
	log_rec_str(&r, "v", in);
	log_emit(NULL, &r);
	r.buf[r.len] = '\0';
	assert_non_null(strstr(r.buf, want));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_byte_escaped_as_specified),
		cmocka_unit_test(test_hostile_bytes_never_leave_raw_quote_or_control),
		cmocka_unit_test(test_log_and_control_spell_every_byte_alike),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
