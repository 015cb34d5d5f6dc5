/* Folders and files whose contents the guard trusts (the state folder,
 * the control socket's folder), checked the way sshd's StrictModes checks
 * a home: nobody but root or one named user may be able to change what a
 * path names. Blocking calls: start-up only. */
#ifndef EG_SAFEPATH_H
#define EG_SAFEPATH_H

#include <stddef.h>
#include <sys/types.h>

/* Opens the folder at path (O_DIRECTORY, never following a link in its
 * last component) and checks it and, through "..", every folder above it
 * up to /: each must be owned by root or by uid. The folder itself must
 * not be writable by group or others; a folder above it may be only when
 * it has the sticky bit (as /tmp has: others may add names there, not
 * rename or remove the one under it). Returns the descriptor, or -1 with
 * err ("PATH: reason"). */
int safepath_open_dir(const char *path, uid_t uid, char *err, size_t errlen);

/* The same checks for a descriptor already open on a folder. */
int safepath_check_dir(int dirfd, const char *path, uid_t uid, char *err,
    size_t errlen);

/* Opens name inside dirfd for reading, never following a link: it must be
 * a regular file with one link, owned by root or by uid, writable by
 * neither group nor others. Returns the descriptor, -1 with err, or -2
 * (errno ENOENT, err empty) when there is no such name. path names the
 * folder in messages. */
int safepath_open_file(int dirfd, const char *path, const char *name, uid_t uid,
    char *err, size_t errlen);

/* Opens the file at path for reading (a link is followed: its target is
 * what is checked), with the same rules as safepath_open_file, and the
 * folder holding the target and every folder above it as
 * safepath_open_dir checks them. Returns the descriptor or -1 with err. */
int safepath_open_path(const char *path, uid_t uid, char *err, size_t errlen);

#endif
