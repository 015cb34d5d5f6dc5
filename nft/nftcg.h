/* The guard's cgroup v2, for the shared-namespace exemption: where the
 * cgroup2 file system is mounted, which cgroup a process is in, and that
 * cgroup's id and level as `socket cgroupv2` needs them. Reads /proc and
 * the file system; never prints; -1 with a message in err. */
#ifndef EG_NFTCG_H
#define EG_NFTCG_H

#include <stddef.h>
#include <stdint.h>

#define NFTCG_PATH_MAX	512

/* path: a folder on a cgroup2 file system. *id is its inode number (the
 * kernel's cgroup id), *level its depth below the mount's root. Refuses
 * anything else (a cgroup v1 folder, a file, a folder of another file
 * system) with the reason in err. */
int nftcg_resolve_path(const char *path, uint64_t *id, uint32_t *level,
    char *err, size_t errlen);

/* The cgroup v2 folder process pid is in ("0::/x" in /proc/PID/cgroup,
 * joined to where cgroup2 is mounted), written to path. -1 when no cgroup2
 * is mounted (cgroup v1 only), the process is gone, or its entry cannot be
 * placed (outside this cgroup namespace). */
int nftcg_path_of_pid(const char *pid, char *path, size_t len, char *err,
    size_t errlen);

#endif
