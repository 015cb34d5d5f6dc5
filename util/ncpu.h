/* How many CPUs this process may use: the default --workers count. A
 * count above what a cgroup quota pays for only adds threads that wait
 * for their turn. */
#ifndef EG_NCPU_H
#define EG_NCPU_H

/* The default worker count: the CPUs this process may use (ncpu, from
 * sched_getaffinity) capped by a cgroup v2 cpu.max quota, ceil(quota /
 * period); "max PERIOD" or an unreadable text (NULL) leaves ncpu.
 * Bounded to 1..max. Pure. */
long ncpu_default(long ncpu, const char *cpu_max, long max);

/* The default for this process: affinity, then cpu.max of its cgroup v2
 * and every parent up to the root (the smallest quota wins). */
long ncpu_auto(long max);

#endif
