/* proto/chunked: chunked_feed, chunked_decode and
 * chunked_te_is_final_chunked.
 *
 * The first two bytes seed the split; the rest is the body. Beyond "no
 * crash":
 *  - the body fed whole, fed in pseudo-random pieces and fed one byte at a
 *    time gives the same verdict and the same count;
 *  - only a finished body stops short of what it was given; after the end
 *    or an error every later call answers the same;
 *  - a finished body, given again cut exactly at its end, finishes there;
 *  - chunked_decode, run to the end, gives the same verdict and count,
 *    and its data runs lie inside what it took, each ending its run;
 *  - chunked_te_is_final_chunked agrees with a plain reference reading of
 *    its contract (chunked.h) on the same bytes. */
#include <string.h>
#include <strings.h>

#include "proto/chunked.h"
#include "util/ascii.h"
#include "tests/fuzz/fuzz.h"

struct verdict {
	long	count;		/* -1 on error */
	int	done;
};

static struct verdict
feed_whole(const char *b, size_t len)
{
	struct chunked c;
	struct verdict v;
	int done = 0;
	long k;

	chunked_init(&c);
	k = chunked_feed(&c, b, len, &done);
	v.count = k;
	v.done = k >= 0 && done;
	FUZZ_CHECK(k >= -1 && k <= (long)len);
	if (k >= 0 && !done)
		FUZZ_CHECK((size_t)k == len);
	/* Sticky end states. */
	k = chunked_feed(&c, "0\r\n\r\n", 5, &done);
	if (v.count == -1)
		FUZZ_CHECK(k == -1);
	else if (v.done)
		FUZZ_CHECK(k == 0 && done == 1);
	return v;
}

/* Pieces of 1 to 16 bytes (or of exactly 1 when seed is 0). */
static struct verdict
feed_split(const char *b, size_t len, unsigned int seed)
{
	struct chunked c;
	struct verdict v = { 0, 0 };
	size_t pos = 0, piece;
	int done = 0;
	long k;

	chunked_init(&c);
	while (pos < len) {
		if (seed == 0) {
			piece = 1;
		} else {
			seed = seed * 1103515245u + 12345u;
			piece = 1 + (seed >> 16) % 16;
		}
		if (piece > len - pos)
			piece = len - pos;
		/* An exact-size copy: ASan catches a read past the piece. */
		char *p = fuzz_dup(b + pos, piece);
		k = chunked_feed(&c, p, piece, &done);
		free(p);
		if (k == -1)
			return (struct verdict){ -1, 0 };
		FUZZ_CHECK(k >= 0 && (size_t)k <= piece);
		v.count += k;
		if (done) {
			v.done = 1;
			return v;
		}
		FUZZ_CHECK((size_t)k == piece);
		pos += piece;
	}
	/* An empty read changes nothing. */
	FUZZ_CHECK(chunked_feed(&c, NULL, 0, &done) == 0 && done == 0);
	return v;
}

static struct verdict
decode_whole(const char *b, size_t len)
{
	struct chunked c;
	size_t pos = 0, off, dlen;
	int done = 0;
	long k;

	chunked_init(&c);
	for (;;) {
		k = chunked_decode(&c, b + pos, len - pos, &done, &off, &dlen);
		if (k == -1)
			return (struct verdict){ -1, 0 };
		FUZZ_CHECK((size_t)k <= len - pos);
		FUZZ_CHECK(dlen == 0 || off + dlen == (size_t)k);
		pos += (size_t)k;
		if (done || pos == len)
			return (struct verdict){ (long)pos, done };
		FUZZ_CHECK(k > 0);
	}
}

/* chunked.h's contract, read directly: split on commas, trim OWS, skip
 * empty elements; each must be a bare token; chunked at most once; the
 * answer is whether the last is chunked. */
static int
te_reference(const char *v, size_t len)
{
	size_t i = 0, s, e, k;
	int elements = 0, chunked = 0, last = 0;

	while (i <= len) {
		s = i;
		while (i < len && v[i] != ',')
			i++;
		e = i;
		while (s < e && (v[s] == ' ' || v[s] == '\t'))
			s++;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e > s) {
			for (k = s; k < e; k++)
				if (!ascii_is_tchar((unsigned char)v[k]))
					return -1;
			elements++;
			last = e - s == 7 && strncasecmp(v + s, "chunked", 7) == 0;
			if (last && chunked++)
				return -1;
		}
		i++;
	}
	return elements == 0 ? -1 : last;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct verdict whole, split, bytes;
	unsigned int seed;
	const char *body;
	size_t len;
	char *cut;

	if (size < 2)
		return 0;
	seed = (unsigned int)data[0] << 8 | data[1] | 1u;
	body = (const char *)data + 2;
	len = size - 2;

	whole = feed_whole(body, len);
	split = feed_split(body, len, seed);
	FUZZ_CHECK(whole.count == split.count && whole.done == split.done);
	bytes = feed_split(body, len, 0);
	FUZZ_CHECK(whole.count == bytes.count && whole.done == bytes.done);
	split = decode_whole(body, len);
	FUZZ_CHECK(whole.count == split.count && whole.done == split.done);
	if (whole.done) {
		cut = fuzz_dup(body, (size_t)whole.count);
		split = feed_whole(cut, (size_t)whole.count);
		FUZZ_CHECK(split.done && split.count == whole.count);
		free(cut);
	}

	FUZZ_CHECK(chunked_te_is_final_chunked(body, len) == te_reference(body, len));
	return 0;
}
