/* The descriptor reserve: see util/fdres.h. */
#include <sys/resource.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util/fdres.h"

/* The first reserved number. Process-wide because the descriptor table
 * is: written once at start (fdres_init, before the workers' threads),
 * read by every worker; LONG_MAX until then (no reserve). */
static atomic_long fdres_first = LONG_MAX;

long
fdres_init(void)
{
	struct rlimit rl;
	long lim, first;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (rlim_t)INT_MAX)
		lim = INT_MAX;
	else
		lim = (long)rl.rlim_cur;
	/* A small limit (a test's `ulimit -n 64`) keeps three quarters
	 * for the workload: the guard's own baseline takes a few dozen. */
	first = lim >= 4 * FDRES_RESERVE ? lim - FDRES_RESERVE : lim - lim / 4;
	atomic_store_explicit(&fdres_first, first, memory_order_relaxed);
	return first;
}

int
fdres_reserved(int fd)
{
	return fd >= 0 && (long)fd >= atomic_load_explicit(&fdres_first,
	    memory_order_relaxed);
}

int
fdres_near(int fd)
{
	return (long)fd + FDRES_NEAR >= atomic_load_explicit(&fdres_first,
	    memory_order_relaxed);
}

int
fdres_room(int fd)
{
	int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	int room = d != -1 && !fdres_reserved(d);

	if (d != -1)
		(void)close(d);
	return room;
}

int
fdres_workload(int fd)
{
	if (!fdres_reserved(fd))
		return fd;
	(void)close(fd);
	errno = EMFILE;
	return -1;
}
