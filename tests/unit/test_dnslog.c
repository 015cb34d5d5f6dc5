/* guard/dnslog.c: the DNS listener's decision lines bounded per client
 * address, the lines held back counted exactly (issue 30: one line per
 * answer let a workload write the log at 21 MB/s). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard/dnslog.h"
#include "guard/log.h"
#include "guard/metrics.h"

static struct sockaddr_in
v4(unsigned n)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(0x0a4d0000u + n);	/* 10.77.x.y */
	sa.sin_port = htons((uint16_t)(1024 + n));
	return sa;
}

static unsigned
admit_n(struct dnslog *dl, unsigned client, unsigned n)
{
	struct sockaddr_in sa = v4(client);
	unsigned i, ok = 0;

	for (i = 0; i < n; i++)
		ok += (unsigned)dnslog_admit(dl, (struct sockaddr *)&sa);
	return ok;
}

/* A log in a file of its own, zeroed metrics, the bound over them. */
struct fx {
	char		 path[32];
	struct metrics	 m;
	struct log	*lg;
	struct dnslog	*dl;
};

static void
fx_open(struct fx *f)
{
	char err[128];
	int fd;

	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/tmp/eg-dnslog-XXXXXX");
	assert_true((fd = mkstemp(f->path)) != -1);
	close(fd);
	assert_non_null(f->lg = log_open(f->path, LOG_JSON, err, sizeof(err)));
	assert_non_null(f->dl = dnslog_new(f->lg, &f->m));
}

static void
fx_close(struct fx *f)
{
	dnslog_free(f->dl);
	log_close(f->lg);
}

/* The sum of the "lines" of every dns_log_suppressed line for client. */
static long
suppressed_in(const char *path, const char *client)
{
	FILE *f = fopen(path, "r");
	char line[1024], want[96];
	long sum = 0;
	const char *p;

	assert_non_null(f);
	snprintf(want, sizeof(want), "\"client\":\"%s\",\"lines\":", client);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "\"event\":\"dns_log_suppressed\"") == NULL ||
		    (p = strstr(line, want)) == NULL)
			continue;
		sum += strtol(p + strlen(want), NULL, 10);
	}
	fclose(f);
	return sum;
}

/* hostile: 1,000 queries at once from one address write the burst of
 * lines and no more; another address keeps its own bucket; what was held
 * back is in the metric and, summed, in that client's aggregate lines. */
static void
test_hostile_query_flood_lines_bounded_counts_exact(void **state)
{
	struct fx f;
	unsigned a, b;

	(void)state;
	fx_open(&f);
	a = admit_n(f.dl, 1, 1000);
	b = admit_n(f.dl, 2, 50);
	/* The burst, plus what 20 a second refills while the loop runs. */
	assert_true(a >= DNSLOG_BURST && a <= DNSLOG_BURST + 5);
	assert_int_equal(b, 50);
	assert_int_equal(f.m.dns_log_suppressed, 1000 - a);
	fx_close(&f);	/* the counts not yet in a line */
	assert_int_equal(suppressed_in(f.path, "10.77.0.1"), 1000 - a);
	assert_int_equal(suppressed_in(f.path, "10.77.0.2"), 0);
	unlink(f.path);
}

/* hostile: addresses beyond the table share one bucket ("other"), so many
 * addresses cannot multiply the bound. */
static void
test_hostile_many_addresses_share_one_bucket(void **state)
{
	struct fx f;
	unsigned i, extra = 0;

	(void)state;
	fx_open(&f);
	for (i = 0; i < DNSLOG_CLIENTS; i++)
		assert_int_equal(admit_n(f.dl, 100 + i, 1), 1);
	for (i = 0; i < 50; i++)	/* 50 new addresses, 10 queries each */
		extra += admit_n(f.dl, 1000 + i, 10);
	assert_true(extra >= DNSLOG_BURST && extra <= DNSLOG_BURST + 5);
	fx_close(&f);
	assert_int_equal(suppressed_in(f.path, "other"), 500 - extra);
	unlink(f.path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_query_flood_lines_bounded_counts_exact),
		cmocka_unit_test(test_hostile_many_addresses_share_one_bucket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
