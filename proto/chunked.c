/* Chunked framing (RFC 9112 7.1) as a byte-at-a-time state machine, so
 * a body split anywhere across reads is judged exactly as in one piece.
 * Chunk data is the one part taken in bulk. Stricter than the RFC where
 * strictness costs no real client: whitespace the RFC calls BWS in
 * chunk extensions is refused, because it is where parsers disagree and
 * requests get smuggled. */
#include <limits.h>
#include <string.h>

#include "proto/chunked.h"
#include "util/ascii.h"
#include "util/names.h"

#define SIZE_DIGITS_MAX	16

enum {
	S_SIZE = 0,		/* chunk-size hex digits */
	S_EXT_NAME0,		/* after ';': the first tchar of a name */
	S_EXT_NAME,
	S_EXT_VAL0,		/* after '=': a token or a quoted-string */
	S_EXT_TOKEN,
	S_EXT_QUOTED,
	S_EXT_QPAIR,		/* after '\' inside the quoted-string */
	S_EXT_QEND,		/* after the closing quote */
	S_SIZE_LF,
	S_DATA,
	S_DATA_CR,
	S_DATA_LF,
	S_TR_LINE,		/* start of a trailer line or the final CRLF */
	S_TR_NAME,
	S_TR_VALUE,
	S_TR_LF,
	S_FINAL_LF,
	S_DONE,
	S_ERROR
};

void
chunked_init(struct chunked *c)
{
	memset(c, 0, sizeof(*c));
	c->state = S_SIZE;
}

static int
hexval(unsigned char ch)
{
	if (ascii_is_digit(ch))
		return ch - '0';
	return ascii_lower(ch) - 'a' + 10;
}

/* qdtext without obs-text (RFC 9110 5.6.4). */
static int
is_qdtext(unsigned char ch)
{
	return ch == '\t' || ch == ' ' || ch == 0x21 ||
	    (ch >= 0x23 && ch <= 0x5b) || (ch >= 0x5d && ch <= 0x7e);
}

/* The end of a chunk-size line: into the data, or into the trailer
 * section after the last chunk. */
static int
size_line_done(struct chunked *c)
{
	if (c->left == 0) {
		c->state = S_TR_LINE;
		c->trailer = 0;
		return 0;
	}
	c->state = S_DATA;
	return 0;
}

/* A trailer field that must never pass (chunked.h): its name, complete. */
static int
tname_refused(const struct chunked *c)
{
	static const char *const names[] = {
		"content-length", "transfer-encoding", "host", "connection",
		"keep-alive", "te", "trailer", "upgrade", NULL
	};
	if (c->tname_len >= 6 && memcmp(c->tname, "proxy-", 6) == 0)
		return 1;
	return names_index(names, NAMES_N(names), c->tname, c->tname_len) >= 0;
}

static void
tname_add(struct chunked *c, unsigned char ch)
{
	if (c->tname_len < sizeof(c->tname))
		c->tname[c->tname_len] = (char)ascii_lower(ch);
	c->tname_len++;
}

/* The one byte a line end allows here, then state next. */
static int
expect(struct chunked *c, unsigned char ch, unsigned char want, int next)
{
	if (ch != want)
		return -1;
	c->state = next;
	return 0;
}

/* After the chunk-size or a whole extension: another extension, or the
 * end of the line. */
static int
ext_next(struct chunked *c, unsigned char ch)
{
	if (ch == ';')
		c->state = S_EXT_NAME0;
	else if (ch == '\r')
		c->state = S_SIZE_LF;
	else
		return -1;
	return 0;
}

/* One byte of everything but chunk data. Returns 0, or -1. */
static int
step(struct chunked *c, unsigned char ch)
{
	if (c->state <= S_SIZE_LF && ++c->line > CHUNKED_LINE_MAX)
		return -1;
	if (c->state >= S_TR_LINE && c->state <= S_FINAL_LF &&
	    ++c->trailer > CHUNKED_TRAILER_MAX)
		return -1;

	switch (c->state) {
	case S_SIZE:
		if (ascii_is_xdigit(ch)) {
			if (++c->ndigits > SIZE_DIGITS_MAX)
				return -1;
			/* Sizes from 2^63 up would overflow a signed count
			 * somewhere downstream: refuse them here. */
			if (c->left >> 59 != 0)
				return -1;
			c->left = c->left << 4 | (uint64_t)hexval(ch);
			return 0;
		}
		if (c->ndigits == 0)
			return -1;	/* sign, "0x", space, empty size */
		return ext_next(c, ch);
	case S_EXT_NAME0:
		if (!ascii_is_tchar(ch))
			return -1;
		c->state = S_EXT_NAME;
		return 0;
	case S_EXT_NAME:
	case S_EXT_TOKEN:
		if (ascii_is_tchar(ch))
			return 0;
		if (ch == '=' && c->state == S_EXT_NAME) {
			c->state = S_EXT_VAL0;
			return 0;
		}
		return ext_next(c, ch);
	case S_EXT_VAL0:
		if (ch == '"')
			c->state = S_EXT_QUOTED;
		else if (ascii_is_tchar(ch))
			c->state = S_EXT_TOKEN;
		else
			return -1;
		return 0;
	case S_EXT_QUOTED:
		if (ch == '"')
			c->state = S_EXT_QEND;
		else if (ch == '\\')
			c->state = S_EXT_QPAIR;
		else if (!is_qdtext(ch))
			return -1;
		return 0;
	case S_EXT_QPAIR:
		if (ch != '\t' && ch != ' ' && !ascii_is_vchar(ch))
			return -1;
		c->state = S_EXT_QUOTED;
		return 0;
	case S_EXT_QEND:
		return ext_next(c, ch);
	case S_SIZE_LF:
		if (ch != '\n')
			return -1;
		return size_line_done(c);
	case S_DATA_CR:
		/* Data longer than its size lands here: refused. */
		return expect(c, ch, '\r', S_DATA_LF);
	case S_DATA_LF:
		/* The next chunk-size line starts (a refusal ends it all). */
		c->ndigits = 0;
		c->left = 0;
		c->line = 0;
		return expect(c, ch, '\n', S_SIZE);
	case S_TR_LINE:
		if (ch == '\r') {
			c->state = S_FINAL_LF;
			return 0;
		}
		/* SP or HTAB here is obs-fold (or a line no grammar has). */
		if (!ascii_is_tchar(ch) || c->nfields == CHUNKED_MAX_TRAILERS)
			return -1;
		c->nfields++;
		c->tname_len = 0;
		tname_add(c, ch);
		c->state = S_TR_NAME;
		return 0;
	case S_TR_NAME:
		if (ch == ':') {
			if (tname_refused(c))
				return -1;
			c->state = S_TR_VALUE;
		} else if (!ascii_is_tchar(ch)) {
			return -1;	/* "Name : v", "Name\r\n" */
		} else {
			tname_add(c, ch);
		}
		return 0;
	case S_TR_VALUE:
		if (ch == '\r')
			c->state = S_TR_LF;
		else if (ch != ' ' && ch != '\t' && !ascii_is_vchar(ch))
			return -1;
		return 0;
	case S_TR_LF:
		return expect(c, ch, '\n', S_TR_LINE);
	case S_FINAL_LF:
		return expect(c, ch, '\n', S_DONE);
	}
	return -1;
}

/* chunked_feed, and chunked_decode when data is non-NULL: that one stops
 * after the first run of chunk data and reports where it lies. */
static long
feed(struct chunked *c, const char *b, size_t len, int *done, size_t *data_off,
    size_t *data_len)
{
	const unsigned char *p = (const unsigned char *)b;
	size_t i = 0, k;

	if (done != NULL)
		*done = 0;
	if (data_len != NULL)
		*data_off = *data_len = 0;
	if (c == NULL || done == NULL || (b == NULL && len > 0))
		return -1;
	if (c->state == S_ERROR)
		return -1;
	if (c->state == S_DONE) {
		*done = 1;
		return 0;
	}
	if (len > LONG_MAX)
		len = LONG_MAX;
	while (i < len) {
		if (c->state == S_DATA) {
			k = len - i;
			if ((uint64_t)k > c->left)
				k = (size_t)c->left;
			if (data_len != NULL) {
				*data_off = i;
				*data_len = k;
			}
			i += k;
			c->left -= k;
			if (c->left == 0)
				c->state = S_DATA_CR;
			if (data_len != NULL)
				break;
			continue;
		}
		if (step(c, p[i]) == -1) {
			c->state = S_ERROR;
			return -1;
		}
		i++;
		if (c->state == S_DONE) {
			*done = 1;
			break;
		}
	}
	return (long)i;
}

long
chunked_feed(struct chunked *c, const char *b, size_t len, int *done)
{
	return feed(c, b, len, done, NULL, NULL);
}

long
chunked_decode(struct chunked *c, const char *b, size_t len, int *done,
    size_t *data_off, size_t *data_len)
{
	if (data_off == NULL || data_len == NULL) {
		if (done != NULL)
			*done = 0;
		return -1;
	}
	return feed(c, b, len, done, data_off, data_len);
}

uint64_t
chunked_pending(const struct chunked *c)
{
	return c != NULL && c->state != S_ERROR ? c->left : 0;
}

static int
is_chunked(const char *s, size_t n)
{
	static const char word[] = "chunked";
	size_t i;

	if (n != sizeof(word) - 1)
		return 0;
	for (i = 0; i < n; i++)
		if (ascii_lower((unsigned char)s[i]) != (unsigned char)word[i])
			return 0;
	return 1;
}

int
chunked_te_is_final_chunked(const char *v, size_t len)
{
	size_t i = 0, start, end;
	int elements = 0, chunked = 0, last = 0;

	if (v == NULL)
		return -1;
	while (i <= len) {
		/* One list element: OWS token OWS, up to a comma or the end. */
		while (i < len && (v[i] == ' ' || v[i] == '\t'))
			i++;
		start = i;
		while (i < len && ascii_is_tchar((unsigned char)v[i]))
			i++;
		end = i;
		while (i < len && (v[i] == ' ' || v[i] == '\t'))
			i++;
		if (i < len && v[i] != ',')
			return -1;	/* ';', '"', inner space, CTL, obs-text */
		if (end > start) {
			elements++;
			last = is_chunked(v + start, end - start);
			/* RFC 9112 7: chunked is applied at most once. */
			if (last && chunked++)
				return -1;
		}
		i++;		/* past the comma, or past the end */
	}
	if (elements == 0)
		return -1;
	return last;
}
