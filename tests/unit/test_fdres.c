/* util/fdres.c: the control socket's reserve of descriptors. Linux hands
 * out the lowest free number, so the workload's paths, which give back any
 * descriptor numbered in the reserve, can never take the top FDRES_RESERVE
 * of the limit, however many they open. */
#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/fdres.h"

#define MAXFD	1024

/* Opens descriptors the way the workload's paths do until one is refused;
 * returns how many were kept (in fds), all closed again by the caller. */
static int
fill(int *fds)
{
	int n = 0, fd;

	while (n < MAXFD) {
		fd = fdres_workload(open("/dev/null", O_RDONLY | O_CLOEXEC));
		if (fd == -1)
			break;
		fds[n++] = fd;
	}
	return n;
}

static void
closeall(int *fds, int n)
{
	while (n > 0)
		close(fds[--n]);
}

static void
limit(rlim_t n)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = n;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

/* hostile (issue 30): a workload holding every descriptor it can get
 * leaves the reserve free, and the control socket's own open gets one. */
static void
test_hostile_workload_never_keeps_a_reserved_descriptor(void **state)
{
	int fds[MAXFD], n, ctl;
	long first;

	(void)state;
	limit(512);
	first = fdres_init();
	assert_int_equal(first, 512 - FDRES_RESERVE);
	n = fill(fds);
	assert_true(n > 0);
	assert_int_equal(errno, EMFILE);
	assert_int_equal(fds[n - 1], first - 1);	/* every one below: taken */
	/* What the control socket opens (no fdres check) gets a reserved
	 * number: the reserve is there for it. */
	ctl = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(ctl >= first && ctl < 512);
	assert_true(fdres_reserved(ctl));
	close(ctl);
	closeall(fds, n);
}

/* A small limit keeps three quarters for the workload; -1 passes. */
static void
test_small_limit_reserves_a_quarter(void **state)
{
	int fds[MAXFD], n;

	(void)state;
	limit(64);
	assert_int_equal(fdres_init(), 48);
	n = fill(fds);
	assert_int_equal(fds[n - 1], 47);
	closeall(fds, n);
	errno = EBADF;
	assert_int_equal(fdres_workload(-1), -1);
	assert_int_equal(errno, EBADF);
	assert_false(fdres_reserved(-1));
	limit(1024);
	(void)fdres_init();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_workload_never_keeps_a_reserved_descriptor),
		cmocka_unit_test(test_small_limit_reserves_a_quarter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
