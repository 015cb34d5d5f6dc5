#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "util/ncpu.h"
#include "util/num.h"

long
ncpu_default(long ncpu, const char *cpu_max, long max)
{
	long long quota, period;
	const char *sp;
	size_t len;
	long n = ncpu;

	/* "QUOTA PERIOD\n" or "max PERIOD\n", as the kernel writes it;
	 * anything else sets no cap. */
	if (cpu_max != NULL && (sp = strchr(cpu_max, ' ')) != NULL) {
		len = strlen(sp + 1);
		if (len > 0 && sp[len] == '\n')
			len--;
		if (num_parse_n(cpu_max, (unsigned long)(sp - cpu_max), 1,
		    1000000000000LL, &quota) == 0 &&
		    num_parse_n(sp + 1, len, 1, 1000000000000LL, &period) == 0) {
			long long cap = (quota + period - 1) / period;
			if (cap < n)
				n = (long)cap;
		}
	}
	if (n < 1)
		n = 1;
	if (n > max)
		n = max;
	return n;
}

/* The first line of path into buf ("" when unreadable). */
static void
read_line(const char *path, char *buf, size_t len)
{
	FILE *f;

	buf[0] = '\0';
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	fclose(f);
}

long
ncpu_auto(long max)
{
	cpu_set_t set;
	char cg[512], path[640], line[128];
	long n = 1;
	char *slash;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	/* cgroup v2: "0::/path"; every level's cpu.max caps the process. */
	read_line("/proc/self/cgroup", cg, sizeof(cg));
	if (strncmp(cg, "0::/", 4) != 0)
		return ncpu_default(n, NULL, max);
	cg[strcspn(cg, "\n")] = '\0';
	for (;;) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max", cg + 3);
		read_line(path, line, sizeof(line));
		n = ncpu_default(n, line[0] != '\0' ? line : NULL, max);
		if ((slash = strrchr(cg + 3, '/')) == NULL || slash == cg + 3)
			break;
		*slash = '\0';
	}
	return n;
}
