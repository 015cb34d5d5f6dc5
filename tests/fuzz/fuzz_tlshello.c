/* proto/tlshello: tlshello_sni on the first bytes of a tunnel.
 *
 * Beyond "no crash" (tlshello.h's contract):
 *  - the verdict on a prefix is "need more" or the verdict on the whole
 *    (checked at a few cuts, each an exact-size copy for ASan);
 *  - a final verdict does not change when bytes are appended (bytes after
 *    the ClientHello are not read);
 *  - at TLSHELLO_INPUT_MAX bytes the answer is never "need more";
 *  - tlshello_feed over growing prefixes (cut by the data itself) ends
 *    where the one-shot call does, and looks at each byte a bounded
 *    number of times (the parse is incremental);
 *  - a name returned is in dest_parse_host's normal form and not an IPv6
 *    literal; sni is "" on every other result;
 *  - after a hello, tlshello_watch on the rest (cut as above, each call on
 *    an exact-size copy of the bytes not released) never releases more
 *    than it was given, ends in at most a few hellos, and its final
 *    verdict stays. */
#include <string.h>

#include "proto/tlshello.h"
#include "tests/fuzz/fuzz.h"

static int
sni_of(const unsigned char *b, size_t len, char *sni)
{
	unsigned char *c = (unsigned char *)fuzz_dup(b, len);
	int v;

	memset(sni, 'x', TLSHELLO_SNI_SIZE);
	v = tlshello_sni(c, len, sni, TLSHELLO_SNI_SIZE);
	free(c);
	FUZZ_CHECK(v >= TLSHELLO_NOT_TLS && v <= TLSHELLO_NO_SNI);
	if (v == TLSHELLO_SNI) {
		struct dest d;
		size_t n = strnlen(sni, TLSHELLO_SNI_SIZE);

		FUZZ_CHECK(n > 0 && n < TLSHELLO_SNI_SIZE);
		FUZZ_CHECK(dest_parse_host(sni, n, 1, &d, NULL, 0) == 0);
		FUZZ_CHECK(d.kind != DEST_IPV6 && strcmp(d.host, sni) == 0);
	} else {
		FUZZ_CHECK(sni[0] == '\0');
	}
	return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char sni[TLSHELLO_SNI_SIZE], s2[TLSHELLO_SNI_SIZE];
	size_t cuts[4], i;
	unsigned char *more;
	int v, p;

	v = sni_of(data, size, sni);
	if (size >= TLSHELLO_INPUT_MAX)
		FUZZ_CHECK(v != TLSHELLO_MORE);

	cuts[0] = size > 0 ? size - 1 : 0;
	cuts[1] = size / 2;
	cuts[2] = size > 5 ? 5 : size;
	cuts[3] = size > 0 ? (data[0] * 257u + data[size - 1]) % size : 0;
	for (i = 0; i < 4; i++) {
		p = sni_of(data, cuts[i], s2);
		FUZZ_CHECK(p == TLSHELLO_MORE || p == v);
		if (p == TLSHELLO_SNI)
			FUZZ_CHECK(strcmp(s2, sni) == 0);
	}

	{
		struct tlshello t;
		size_t len = 0, step = size > 0 ? (size_t)data[0] % 7 + 1 : 1;

		tlshello_init(&t);
		p = TLSHELLO_MORE;
		while (p == TLSHELLO_MORE && len < size) {
			len = len + step < size ? len + step : size;
			p = tlshello_feed(&t, data, len);
		}
		if (size == 0)
			p = tlshello_feed(&t, data, 0);
		FUZZ_CHECK(p == v && strcmp(t.sni, sni) == 0);
		FUZZ_CHECK(t.examined <= 2 * (uint64_t)size + 16);
	}

	if (v == TLSHELLO_SNI || v == TLSHELLO_NO_SNI) {
		struct tlshello t;
		struct tlshello_watch w;
		size_t rel, have, base, k, step = (size_t)data[size - 1] % 5 + 1;
		unsigned hellos = 0;
		unsigned char *c;

		tlshello_init(&t);
		(void)tlshello_feed(&t, data, size);
		rel = have = t.pos;
		tlshello_watch_init(&w);
		w.early = t.early_data;
		p = TLSHELLO_MORE;
		while (have < size && (p == TLSHELLO_MORE || p == TLSHELLO_SNI ||
		    p == TLSHELLO_NO_SNI)) {
			have = have + step < size ? have + step : size;
			base = rel;
			c = (unsigned char *)fuzz_dup(data + base, have - base);
			do {
				p = tlshello_watch(&w, c + (rel - base), have - rel, &k);
				FUZZ_CHECK(k <= have - rel);
				if (p == TLSHELLO_SNI || p == TLSHELLO_NO_SNI)
					FUZZ_CHECK(++hellos <= TLSHELLO_WATCH_HELLOS);
				rel += k;
			} while (k > 0 && p != TLSHELLO_DONE && p != TLSHELLO_MALFORMED);
			free(c);
		}
		if (p == TLSHELLO_DONE || p == TLSHELLO_MALFORMED)
			FUZZ_CHECK(tlshello_watch(&w, data, size, &k) == p && k == 0);
	}

	if (v != TLSHELLO_MORE) {
		more = malloc(size + 3);
		FUZZ_CHECK(more != NULL);
		memcpy(more, data, size);
		memcpy(more + size, "\x16\x03\x01", 3);
		p = sni_of(more, size + 3, s2);
		FUZZ_CHECK(p == v && strcmp(s2, sni) == 0);
		free(more);
	}
	return 0;
}
