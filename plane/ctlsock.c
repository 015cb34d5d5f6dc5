/* Where the control socket goes (plane/control.c binds it): the folder
 * made safe, a stale socket removed, a live guard's left alone. Blocking:
 * run at start, before the loop. */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plane/ctlsock.h"
#include "util/errbuf.h"
#include "util/safepath.h"

/* Refuses to take over a socket a live guard still serves; removes a
 * stale one. */
int
ctlsock_claim(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, live;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		errbuf_set(err, errlen, "--control %s: exists and is not a socket", path);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	live = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	if (live) {
		errbuf_set(err, errlen, "--control %s: another guard is serving it", path);
		return -1;
	}
	return unlink(path);
}

/* The default path lives in /run/egress-guard, which may not exist yet.
 * The folder, and every folder above it, must be one nobody but root or
 * owner can write (util/safepath.h): whoever can rename in it can put
 * their own socket in the guard's place, and the plane would push to
 * them. */
int
ctlsock_make_parent(const char *path, uid_t owner, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], why[512];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		errbuf_set(err, errlen, "--control %s: cannot create %s: %s", path, dir,
		    strerror(errno));
		return -1;
	}
	if ((fd = safepath_open_dir(dir, owner, why, sizeof(why))) == -1) {
		errbuf_set(err, errlen, "--control %s: unsafe folder: %s", path, why);
		return -1;
	}
	close(fd);
	return 0;
}
