/* The state folder on disk (docs/design.md "Policy authority", "Tenants"):
 * the plane's files written so that a crash leaves the old or the new one
 * whole, read back with the StrictModes checks of util/safepath.h, and
 * handed to the --user the guard drops to. Everything relative to a
 * folder descriptor opened once: a link put in a folder's place later
 * changes nothing. Blocking calls: start-up, a check's thread, and the
 * rare tenant calls. */
#ifndef EG_PSTORE_H
#define EG_PSTORE_H

#include <stddef.h>
#include <sys/types.h>

/* Writes len bytes to name in dfd (path: the folder, for messages)
 * through tmp: temp file, fsync, rename, fsync the folder. Safe on any
 * thread (errors by strerror_r). dfd -1: nothing to do, 0. 0 or -1 with
 * err. */
int pstore_write(int dfd, const char *path, const char *name, const char *tmp,
    const char *buf, size_t len, char *err, size_t errlen);

/* Reads name in dfd, at most max bytes: a regular file with one link,
 * owned by root or owner, writable by neither group nor others (no link
 * followed). malloc'd bytes (*len of them), or NULL: err "" when there
 * is no such file, else err says why. */
char *pstore_read(int dfd, const char *path, const char *name, uid_t owner,
    size_t max, size_t *len, char *err, size_t errlen);

/* Reads the file at path (a link is followed; the target, its folder and
 * every folder above get the checks of util/safepath.h), at most max
 * bytes, on any thread (glibc's strerror is thread-safe from 2.32).
 * malloc'd, or NULL with err (what names the flag in messages). */
char *pstore_read_path(const char *path, const char *what, uid_t owner,
    size_t max, size_t *len, char *err, size_t errlen);

/* Opens the folder name in dfd, made 0700 when missing, never through a
 * link, checked as the state folder is. The descriptor, or -1 with err. */
int pstore_subdir(int dfd, const char *path, const char *name, uid_t owner,
    char *err, size_t errlen);

/* Whether dfd holds no name but those of ours[] (NULL-terminated), so
 * that handing it to `who` hands over nothing of the operator's. 0, or
 * -1 with err naming the first other entry. */
int pstore_only(int dfd, const char *path, const char *const *ours,
    const char *who, char *err, size_t errlen);

/* name in dfd, when it is root's and a folder or a regular file with
 * one link (never a link): now uid's. 0 when done or nothing to do; -1
 * with errno. */
int pstore_give(int dfd, const char *name, uid_t uid, gid_t gid);

#endif
