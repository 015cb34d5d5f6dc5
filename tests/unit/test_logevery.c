/* Unit tests for guard/logevery: libevent's own messages reach the log as
 * rate-limited JSON lines, never raw on stderr. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/log.h"
#include "guard/logevery.h"

static void
noop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* One libevent warning from its public API: a signal event that asks
 * for reads too is refused with event_warnx. */
static void
provoke_warning(struct event_base *base)
{
	assert_null(event_new(base, 1, EV_SIGNAL | EV_READ, noop_cb, NULL));
}

static size_t
slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

/* hostile (a flood of failed accepts is one warning each): 50 libevent
 * warnings are one JSON line at once and one with the 49 others at the
 * stop, and not one raw "[warn]" line on stderr, the log by default. */
static void
test_hostile_libevent_warning_flood_is_two_json_lines_none_raw(void **state)
{
	char logp[] = "/tmp/eg-logevery-XXXXXX", errp[] = "/tmp/eg-stderr-XXXXXX";
	char err[128], buf[4096];
	int lfd = mkstemp(logp), efd = mkstemp(errp), saved = dup(2), i;
	struct event_base *base = event_base_new();
	struct log *lg;
	char *second;

	(void)state;
	assert_true(lfd != -1 && efd != -1 && saved != -1);
	assert_non_null(base);
	close(lfd);
	unlink(logp);
	assert_non_null(lg = log_open(logp, LOG_JSON, err, sizeof(err)));
	assert_int_equal(dup2(efd, 2), 2);
	assert_int_equal(log_libevent_start(lg), 0);
	for (i = 0; i < 50; i++)
		provoke_warning(base);
	log_libevent_stop();
	provoke_warning(base);		/* after the stop: dropped */
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_int_equal(slurp(errp, buf, sizeof(buf)), 0);
	slurp(logp, buf, sizeof(buf));
	assert_non_null(strstr(buf, "{\"ts\":"));
	assert_non_null(strstr(buf, "\"event\":\"warning\",\"msg\":\"libevent: "
	    "event_assign: EV_SIGNAL is not compatible"));
	assert_non_null(strstr(buf, "(1 libevent warning since the last such line)"));
	assert_non_null(second = strchr(buf, '\n'));
	assert_non_null(strstr(second, "libevent: warnings held back "
	    "(49 libevent warnings since the last such line)"));
	assert_non_null(second = strchr(second + 1, '\n'));
	assert_int_equal(second[1], '\0');	/* two lines, no more */
	log_close(lg);
	event_base_free(base);
	close(efd);
	unlink(errp);
	unlink(logp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_libevent_warning_flood_is_two_json_lines_none_raw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
