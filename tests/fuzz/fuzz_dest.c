/* policy/dest: dest_parse_authority, dest_parse_host, dest_parse_port.
 *
 * Beyond "no crash": an accepted destination is in normal form (formats
 * and re-parses to the identical struct, a name is lower case with no
 * trailing dot, a literal matches its address bytes), the host part of an
 * accepted authority parses alone to the same host, an accepted port is
 * the exact decimal spelling of its value, and a refusal leaves the
 * struct zeroed with a printable one-line reason. */
#include <arpa/inet.h>
#include <string.h>

#include "policy/dest.h"
#include "tests/fuzz/fuzz.h"

static void
check_normal_form(const struct dest *d)
{
	char buf[DEST_HOST_MAX + 16], err[128];
	unsigned char a[16];
	struct dest again;
	size_t i, hl = strlen(d->host);
	int n;

	FUZZ_CHECK(hl > 0 && hl <= DEST_HOST_MAX);
	switch (d->kind) {
	case DEST_NAME:
		FUZZ_CHECK(d->host[hl - 1] != '.');
		for (i = 0; i < hl; i++) {
			unsigned char c = (unsigned char)d->host[i];
			FUZZ_CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    c == '-' || c == '_' || c == '.');
		}
		FUZZ_CHECK(strstr(d->host, "..") == NULL && d->host[0] != '.');
		break;
	case DEST_IPV4:
		FUZZ_CHECK(inet_pton(AF_INET, d->host, a) == 1);
		FUZZ_CHECK(memcmp(a, d->addr, 4) == 0);
		break;
	case DEST_IPV6:
		FUZZ_CHECK(inet_pton(AF_INET6, d->host, a) == 1);
		FUZZ_CHECK(memcmp(a, d->addr, 16) == 0);
		FUZZ_CHECK(strchr(d->host, '.') == NULL);
		break;
	default:
		FUZZ_CHECK(!"bad kind");
	}

	/* The host alone re-parses to itself (bare for IPv6). */
	FUZZ_CHECK(dest_parse_host(d->host, hl, 0, &again, err, sizeof(err)) == 0);
	FUZZ_CHECK(again.kind == d->kind && strcmp(again.host, d->host) == 0 &&
	    memcmp(again.addr, d->addr, sizeof(d->addr)) == 0);

	if (d->port == 0)
		return;
	n = dest_format(d, buf, sizeof(buf));
	FUZZ_CHECK(n > 0 && (size_t)n == strlen(buf));
	FUZZ_CHECK(dest_parse_authority(buf, (size_t)n, &again, err, sizeof(err)) == 0);
	FUZZ_CHECK(memcmp(&again, d, sizeof(again)) == 0);
	/* Too small a buffer is refused, never truncated silently. */
	FUZZ_CHECK(dest_format(d, buf, (size_t)n) == -1);
}

static void
check_refused(const struct dest *d, const char *err)
{
	static const struct dest zero;

	FUZZ_CHECK(memcmp(d, &zero, sizeof(zero)) == 0);
	FUZZ_CHECK(err[0] != '\0' && fuzz_printable(err));
}

/* The host part of an accepted authority, alone, is the same host. */
static void
check_host_part(const char *s, size_t len, const struct dest *d)
{
	struct dest h;
	char err[128];
	size_t hl;

	if (s[0] == '[')
		hl = (size_t)((const char *)memchr(s, ']', len) - s) + 1;
	else
		hl = (size_t)((const char *)memchr(s, ':', len) - s);
	FUZZ_CHECK(dest_parse_host(s, hl, 1, &h, err, sizeof(err)) == 0);
	FUZZ_CHECK(h.kind == d->kind && strcmp(h.host, d->host) == 0 &&
	    memcmp(h.addr, d->addr, sizeof(h.addr)) == 0 && h.port == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_dup(data, size), err[128], num[8];
	struct dest d;
	uint16_t port = 0;
	int brackets;

	err[0] = '\0';
	if (dest_parse_authority(s, size, &d, err, sizeof(err)) == 0) {
		FUZZ_CHECK(d.port >= 1);
		check_normal_form(&d);
		check_host_part(s, size, &d);
	} else {
		check_refused(&d, err);
	}

	for (brackets = 0; brackets <= 1; brackets++) {
		err[0] = '\0';
		if (dest_parse_host(s, size, brackets, &d, err, sizeof(err)) == 0) {
			FUZZ_CHECK(d.port == 0);
			FUZZ_CHECK(brackets || s[0] != '[');
			FUZZ_CHECK(d.kind != DEST_IPV6 || brackets == (s[0] == '['));
			check_normal_form(&d);
		} else {
			check_refused(&d, err);
		}
	}

	if (dest_parse_port(s, size, &port) == 0) {
		int n = snprintf(num, sizeof(num), "%u", (unsigned int)port);
		FUZZ_CHECK(port >= 1 && (size_t)n == size &&
		    memcmp(num, s, size) == 0);
	}
	free(s);
	return 0;
}
