#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/log.h"
#include "policy/policy.h"
#include "util/errbuf.h"
#include "util/jsonw.h"
#include "util/num.h"

/* Lines emitted while the loop runs are collected and written together
 * once the callbacks of the current loop pass have run (flush_cb is made
 * active by the first line): one write(2) for many lines under load, and
 * no line waits longer than that pass. Before log_attach, and when the
 * batch is full, lines are written at once. */
#define LOG_BATCH_MAX	(64 * 1024)
#define LOG_TS_PREFIX	64	/* room for any year gmtime_r gives */

/* How a write reaches the log without ever waiting on its reader: a
 * stalled reader must cost lines, not the guard (every worker writes
 * under one lock, so one blocked write would stop them all). */
enum log_sink {
	LOG_SINK_FILE,		/* a regular file: written until it refuses */
	LOG_SINK_NONBLOCK,	/* our own O_NONBLOCK description (pipe, FIFO, tty) */
	LOG_SINK_SOCKET,	/* a socket (journald's stdout): send, MSG_DONTWAIT */
	LOG_SINK_POLL		/* a shared blocking pipe: PIPE_BUF at a time once poll says so */
};

struct log {
	struct log	*root;		/* whose descriptor and lock a clone shares */
	/* The root's, under lock: */
	int		 fd;
	int		 owned;		/* fd is ours to close */
	enum log_sink	 sink;
	char		*path;		/* --log-file, for log_reopen; NULL: stderr */
	pthread_mutex_t	 lock;		/* one writer at a time */
	pthread_cond_t	 released_cv;	/* released moved on */
	int		 locked;	/* lock and released_cv are initialised */
	uint64_t	 released;	/* the newest log_release'd seq */
	int		 cut;		/* the file ends inside a line */
	uint64_t	 lost_pending;	/* lines lost since the last log_lost line */
	uint64_t	 lost_total;	/* lines lost since start (atomic: read by /metrics) */
	/* Each log's own (the root's too), used by its thread only: */
	uint64_t	 hold;		/* a clone's: written once released >= hold */
	enum log_format	 fmt;
	struct event_base *base;	/* log_attach's; NULL: unattached */
	struct event	*flush;		/* NULL: unbatched */
	char		*batch;
	size_t		 blen;
	time_t		 ts_sec;	/* the second ts_prefix was made for */
	char		 ts_prefix[LOG_TS_PREFIX];	/* "YYYY-MM-DDTHH:MM:SS" */
};

/* Whether path names one of this process's own descriptors through a
 * link the kernel keeps: /dev/stdout, /dev/stderr, /dev/fd/N or
 * /proc/self/fd/N, exactly. A prefix would not do: /dev/../DIR/f and
 * /proc/self/root/DIR/f name any file. */
static int
own_fd_path(const char *path)
{
	long long n;

	if (strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/stderr") == 0)
		return 1;
	if (strncmp(path, "/dev/fd/", 8) == 0)
		return num_parse(path + 8, 0, INT_MAX, &n) == 0;
	if (strncmp(path, "/proc/self/fd/", 14) == 0)
		return num_parse(path + 14, 0, INT_MAX, &n) == 0;
	return 0;
}

/* Whether path has a ".." component: it could climb out of whatever
 * the operator reads the path as being under. */
static int
has_dotdot(const char *path)
{
	const char *p = path;

	for (;;) {
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return 1;
		if ((p = strchr(p, '/')) == NULL)
			return 0;
		p++;
	}
}

/* The log file, for append. It is opened as root, before any --user
 * drop: a link planted at path (a log in a folder others can write, the
 * dropped user's included) would have root append to whatever it names.
 * So the last component is never followed, except for the exact paths
 * of own_fd_path; a new file is 0600, since decisions name the hosts
 * the workload asked for. A reopen (log_reopen) adds O_NONBLOCK in
 * extra: a FIFO put at path with no reader must not hang the loop.
 * Returns the descriptor, or -1 with err. */
static int
open_log_file(const char *path, int extra, char *err, size_t errlen)
{
	int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | extra;
	int fd;

	if (has_dotdot(path))
		return errbuf_fail(err, errlen, "%s: cannot open log file: a \"..\" "
		    "component (name it without one)", path);
	fd = open(path, flags | O_NOFOLLOW, 0600);
	if (fd == -1 && errno == ELOOP && own_fd_path(path))
		fd = open(path, flags, 0600);
	if (fd == -1 && errno == ELOOP)
		return errbuf_fail(err, errlen, "%s: cannot open log file: a symbolic "
		    "link (followed only as /dev/stdout, /dev/stderr, /dev/fd/N "
		    "and /proc/self/fd/N)", path);
	if (fd == -1)
		return errbuf_fail(err, errlen, "%s: cannot open log file: %s", path,
		    strerror(errno));
	return fd;
}

/* Chooses how root writes to *fd (see enum log_sink). A pipe or tty we
 * opened ourselves is our own open file description: O_NONBLOCK is set
 * on it. One we were handed (stderr) is shared with the shell and
 * whoever else holds it, so the flag would leak to them: it is reopened
 * through /proc as a description of our own instead, and only without
 * /proc is the shared one written a PIPE_BUF at a time after a poll. */
static void
sink_setup(struct log *root, int fd, int owned)
{
	struct stat st;
	char own[32];
	int nfd, fl;

	root->fd = fd;
	root->owned = owned;
	root->sink = LOG_SINK_FILE;
	if (fstat(fd, &st) == -1 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return;
	if (S_ISSOCK(st.st_mode)) {
		root->sink = LOG_SINK_SOCKET;
		return;
	}
	if (owned) {
		if ((fl = fcntl(fd, F_GETFL)) != -1 &&
		    fcntl(fd, F_SETFL, fl | O_NONBLOCK) != -1) {
			root->sink = LOG_SINK_NONBLOCK;
			return;
		}
		root->sink = LOG_SINK_POLL;
		return;
	}
	snprintf(own, sizeof(own), "/proc/self/fd/%d", fd);
	if ((nfd = open(own, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) != -1) {
		root->fd = nfd;
		root->owned = 1;
		root->sink = LOG_SINK_NONBLOCK;
		return;
	}
	root->sink = LOG_SINK_POLL;
}

struct log *
log_open(const char *path, enum log_format fmt, char *err, size_t errlen)
{
	struct log *lg;
	int fd;

	if ((lg = calloc(1, sizeof(*lg))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	lg->fmt = fmt;
	lg->root = lg;
	lg->fd = -1;
	if (path == NULL) {
		sink_setup(lg, STDERR_FILENO, 0);
	} else {
		if ((lg->path = strdup(path)) == NULL) {
			errbuf_set(err, errlen, "out of memory");
			log_close(lg);
			return NULL;
		}
		if ((fd = open_log_file(path, 0, err, errlen)) == -1) {
			log_close(lg);
			return NULL;
		}
		sink_setup(lg, fd, 1);
	}
	if (pthread_mutex_init(&lg->lock, NULL) != 0) {
		errbuf_set(err, errlen, "cannot create the log's lock");
		log_close(lg);
		return NULL;
	}
	if (pthread_cond_init(&lg->released_cv, NULL) != 0) {
		pthread_mutex_destroy(&lg->lock);
		errbuf_set(err, errlen, "cannot create the log's lock");
		log_close(lg);
		return NULL;
	}
	lg->locked = 1;
	return lg;
}

struct log *
log_clone(struct log *parent)
{
	struct log *lg;

	if ((lg = calloc(1, sizeof(*lg))) == NULL)
		return NULL;
	lg->fd = -1;
	lg->fmt = parent->fmt;
	lg->root = parent->root;
	return lg;
}

/* What a held batch does when it would be written (see log_hold). */
enum log_when {
	LOG_KEEP,	/* stay batched: the release pokes the worker */
	LOG_WAIT,	/* the batch is full: wait for the release */
	LOG_NOW		/* the loop is going away: write anyway */
};

/* One write of at most len bytes that never waits (but on a regular
 * file); *asked is how many it tried. */
static ssize_t
sink_write1(struct log *root, const char *buf, size_t len, size_t *asked)
{
	struct pollfd pfd = { .fd = root->fd, .events = POLLOUT, .revents = 0 };

	*asked = len;
	switch (root->sink) {
	case LOG_SINK_SOCKET:
		return send(root->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	case LOG_SINK_POLL:
		/* A pipe that polls writable has PIPE_BUF free: a write
		 * that small then completes without waiting. */
		if (poll(&pfd, 1, 0) != 1 || (pfd.revents & POLLOUT) == 0) {
			errno = EAGAIN;
			return -1;
		}
		*asked = len < PIPE_BUF ? len : PIPE_BUF;
		return write(root->fd, buf, *asked);
	case LOG_SINK_FILE:
	case LOG_SINK_NONBLOCK:
		break;
	}
	return write(root->fd, buf, len);
}

/* Writes what the sink takes of buf now; returns how many bytes. A
 * regular file is written until it refuses (a full disk); any other
 * sink stops at the first write it takes only in part or refuses
 * (EAGAIN): never a retry, never a wait. */
static size_t
sink_put(struct log *root, const char *buf, size_t len)
{
	size_t off = 0, asked;
	ssize_t n;

	while (off < len) {
		n = sink_write1(root, buf + off, len - off, &asked);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
		if ((size_t)n < asked && root->sink != LOG_SINK_FILE)
			break;
	}
	return off;
}

/* A write stopped inside a line (a full disk, a file size limit, a pipe
 * that took part of a batch): the first off bytes of batch are in the
 * file and the last of them is no newline. A regular file is cut back
 * to its last whole line; anything else is marked, and the next write
 * ends the line first. Lines are lost, never written broken or glued
 * together. */
static void
log_uncut(struct log *root, const char *batch, size_t off)
{
	size_t whole = off;
	struct stat st;
	off_t end;

	while (whole > 0 && batch[whole - 1] != '\n')
		whole--;
	if (root->sink == LOG_SINK_FILE && fstat(root->fd, &st) == 0 &&
	    S_ISREG(st.st_mode) && st.st_size >= (off_t)(off - whole)) {
		end = st.st_size - (off_t)(off - whole);
		/* lseek too: a descriptor without O_APPEND (a shell's
		 * "> file") would write past a hole otherwise. */
		if (ftruncate(root->fd, end) == 0 && lseek(root->fd, end, SEEK_SET) == end)
			return;
	}
	root->cut = 1;
}

/* The lines of buf that did not go out: every newline from off on (a
 * line cut at off is lost too: it is removed or ended broken). */
static void
count_lost(struct log *root, const char *buf, size_t off, size_t len)
{
	uint64_t n = 0;

	for (; off < len; off++)
		n += buf[off] == '\n';
	root->lost_pending += n;
	__atomic_add_fetch(&root->lost_total, n, __ATOMIC_RELAXED);
}

static void rec_end(struct log *lg, struct log_rec *r);

/* After lines were lost, the first write that can go out says how many,
 * before any other line. 0 once it is written. */
static int
put_lost_line(struct log *lg)
{
	struct log *root = lg->root;
	struct log_rec r;
	size_t n;

	log_rec_begin(&r, lg, "log_lost");
	log_rec_int(&r, "lines", (long long)root->lost_pending);
	rec_end(lg, &r);
	if ((n = sink_put(root, r.buf, r.len)) == r.len) {
		root->lost_pending = 0;
		return 0;
	}
	if (n > 0)
		log_uncut(root, r.buf, n);
	return -1;
}

/* buf (whole lines) to the file, under root's lock: what the file does
 * not take now is counted and lost. */
static void
log_put(struct log *lg, const char *buf, size_t len)
{
	struct log *root = lg->root;
	size_t off = 0;

	/* A line cut by an earlier failure is ended before anything else,
	 * so the next line cannot be glued to it; until that newline goes
	 * out, nothing does. */
	if (root->cut && sink_put(root, "\n", 1) == 1)
		root->cut = 0;
	if (!root->cut && (root->lost_pending == 0 || put_lost_line(lg) == 0))
		off = sink_put(root, buf, len);
	if (off == len)
		return;
	count_lost(root, buf, off, len);
	if (off > 0 && buf[off - 1] != '\n')
		log_uncut(root, buf, off);
}

/* Every write to the log's file, from any worker, holds the root's lock:
 * a batch that a pipe takes in several pieces cannot be cut into by
 * another worker's lines. */
static void
log_write_batch(struct log *lg, enum log_when when)
{
	struct log *root = lg->root;

	if (lg->blen == 0)
		return;
	pthread_mutex_lock(&root->lock);
	/* Waiting is bounded: the main thread releases as soon as the last
	 * worker acks, and ends the guard when one does not within 10 s. */
	while (when != LOG_NOW && lg->hold > root->released) {
		if (when == LOG_KEEP) {
			pthread_mutex_unlock(&root->lock);
			return;
		}
		pthread_cond_wait(&root->released_cv, &root->lock);
	}
	log_put(lg, lg->batch, lg->blen);
	pthread_mutex_unlock(&root->lock);
	lg->blen = 0;
}

int
log_reopen(struct log *lg, char *err, size_t errlen)
{
	struct log *root = lg->root;
	struct log fresh;
	int fd, old;

	if (root->path == NULL)
		return 0;
	if ((fd = open_log_file(root->path, O_NONBLOCK, err, errlen)) == -1)
		return -1;
	sink_setup(&fresh, fd, 1);
	pthread_mutex_lock(&root->lock);
	/* The old file keeps no half line (see log_uncut). */
	if (root->cut)
		(void)sink_put(root, "\n", 1);
	old = root->owned ? root->fd : -1;
	root->fd = fresh.fd;
	root->owned = fresh.owned;
	root->sink = fresh.sink;
	root->cut = 0;
	pthread_mutex_unlock(&root->lock);
	if (old != -1)
		close(old);
	return 0;
}

struct event_base *
log_base(const struct log *lg)
{
	return lg != NULL ? lg->base : NULL;
}

uint64_t
log_lines_lost(const struct log *lg)
{
	return lg != NULL ? __atomic_load_n(&lg->root->lost_total, __ATOMIC_RELAXED) : 0;
}

void
log_hold(struct log *lg, uint64_t seq)
{
	if (lg != NULL && lg != lg->root)
		lg->hold = seq;
}

void
log_release(struct log *root, uint64_t seq)
{
	if (root == NULL || !root->locked)
		return;
	pthread_mutex_lock(&root->lock);
	if (seq > root->released)
		root->released = seq;
	pthread_cond_broadcast(&root->released_cv);
	pthread_mutex_unlock(&root->lock);
}

static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	log_write_batch(arg, LOG_KEEP);
}

int
log_attach(struct log *lg, struct event_base *base)
{
	if ((lg->batch = malloc(LOG_BATCH_MAX)) == NULL)
		return -1;
	if ((lg->flush = event_new(base, -1, 0, flush_cb, lg)) == NULL) {
		free(lg->batch);
		lg->batch = NULL;
		return -1;
	}
	lg->base = base;
	return 0;
}

void
log_flush(struct log *lg)
{
	if (lg != NULL && lg->flush != NULL)
		log_write_batch(lg, LOG_KEEP);
}

void
log_detach(struct log *lg)
{
	if (lg == NULL || lg->flush == NULL)
		return;
	log_write_batch(lg, LOG_NOW);
	event_free(lg->flush);
	lg->flush = NULL;
	lg->base = NULL;
	free(lg->batch);
	lg->batch = NULL;
}

void
log_close(struct log *lg)
{
	if (lg == NULL)
		return;
	log_detach(lg);
	if (lg->owned)
		close(lg->fd);
	free(lg->path);
	if (lg->locked) {
		pthread_cond_destroy(&lg->released_cv);
		pthread_mutex_destroy(&lg->lock);
	}
	free(lg);
}

static void
rec_putc(struct log_rec *r, char c)
{
	/* Keep 3 bytes for the closing "}\n" and NUL. */
	if (r->len + 3 >= sizeof(r->buf)) {
		r->truncated = 1;
		return;
	}
	r->buf[r->len++] = c;
}

static void
rec_puts(struct log_rec *r, const char *s)
{
	while (*s != '\0')
		rec_putc(r, *s++);
}

/* JSON string body escaping (util/jsonw.h); also used for text values. */
static void
rec_escaped(struct log_rec *r, const char *s, size_t n)
{
	char e[JSONW_ESC_MAX];
	size_t i, j, len;

	for (i = 0; i < n; i++) {
		len = jsonw_escape_byte((unsigned char)s[i], e);
		for (j = 0; j < len; j++)
			rec_putc(r, e[j]);
		if (r->truncated)
			return;
	}
}

static void
rec_key(struct log_rec *r, const char *key)
{
	if (r->fmt == LOG_JSON) {
		if (r->fields++ > 0)
			rec_putc(r, ',');
		rec_putc(r, '"');
		rec_puts(r, key);
		rec_puts(r, "\":");
	} else {
		if (r->fields++ > 0)
			rec_putc(r, ' ');
		rec_puts(r, key);
		rec_putc(r, '=');
	}
}

static void
rec_quoted(struct log_rec *r, const char *s, size_t n)
{
	rec_putc(r, '"');
	rec_escaped(r, s, n);
	rec_putc(r, '"');
}

/* "YYYY-MM-DDTHH:MM:SS" for t into buf (LOG_TS_PREFIX bytes). */
static void
ts_prefix(time_t t, char *buf)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, LOG_TS_PREFIX, "%04d-%02d-%02dT%02d:%02d:%02d",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec);
}

void
log_rec_begin(struct log_rec *r, struct log *lg, const char *event)
{
	struct timespec ts;
	char own[LOG_TS_PREFIX], tbuf[LOG_TS_PREFIX + 8];
	const char *pre = own;
	long ms;

	r->len = 0;
	r->fields = 0;
	r->truncated = 0;
	r->fmt = lg != NULL ? lg->fmt : LOG_JSON;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* The date and time to the second change once a second: formatted
	 * then (and cached in the log), the milliseconds every time. */
	if (lg == NULL) {
		ts_prefix(ts.tv_sec, own);
	} else {
		if (lg->ts_sec != ts.tv_sec || lg->ts_prefix[0] == '\0') {
			ts_prefix(ts.tv_sec, lg->ts_prefix);
			lg->ts_sec = ts.tv_sec;
		}
		pre = lg->ts_prefix;
	}
	ms = ts.tv_nsec / 1000000;
	snprintf(tbuf, sizeof(tbuf), "%s.%c%c%cZ", pre, (char)('0' + ms / 100),
	    (char)('0' + ms / 10 % 10), (char)('0' + ms % 10));
	if (r->fmt == LOG_JSON)
		rec_putc(r, '{');
	log_rec_str(r, "ts", tbuf);
	log_rec_str(r, "event", event);
}

void
log_rec_strn(struct log_rec *r, const char *key, const char *val, size_t n)
{
	rec_key(r, key);
	rec_quoted(r, val, n);
}

void
log_rec_str(struct log_rec *r, const char *key, const char *val)
{
	if (val == NULL) {
		log_rec_null(r, key);
		return;
	}
	log_rec_strn(r, key, val, strlen(val));
}

void
log_rec_int(struct log_rec *r, const char *key, long long v)
{
	char nbuf[32];

	snprintf(nbuf, sizeof(nbuf), "%lld", v);
	rec_key(r, key);
	rec_puts(r, nbuf);
}

void
log_rec_null(struct log_rec *r, const char *key)
{
	rec_key(r, key);
	rec_puts(r, r->fmt == LOG_JSON ? "null" : "-");
}

void
log_rec_bool(struct log_rec *r, const char *key, int v)
{
	rec_key(r, key);
	rec_puts(r, v ? "true" : "false");
}

void
log_rec_strv(struct log_rec *r, const char *key, const char *const *v, size_t n)
{
	size_t i;

	rec_key(r, key);
	if (r->fmt == LOG_JSON)
		rec_putc(r, '[');
	else
		rec_putc(r, '"');
	for (i = 0; i < n; i++) {
		if (i > 0)
			rec_putc(r, ',');
		if (r->fmt == LOG_JSON)
			rec_quoted(r, v[i], strlen(v[i]));
		else
			rec_escaped(r, v[i], strlen(v[i]));
	}
	rec_putc(r, r->fmt == LOG_JSON ? ']' : '"');
}

void
log_rec_policy(struct log_rec *r, long long epoch, const char *digest)
{
	if (epoch >= 0) {
		log_rec_int(r, "policy_epoch", epoch);
		log_rec_str(r, "policy_digest", digest);
	} else {
		log_rec_null(r, "policy_epoch");
		log_rec_null(r, "policy_digest");
	}
}

/* Ends r as one line. */
static void
rec_end(struct log *lg, struct log_rec *r)
{
	if (r->truncated && r->fmt == LOG_JSON) {
		/* Never emit broken JSON: replace the record by a marker. */
		struct log_rec t;
		log_rec_begin(&t, lg, "log_truncated");
		*r = t;
	}
	if (r->fmt == LOG_JSON)
		r->buf[r->len++] = '}';
	r->buf[r->len++] = '\n';
}

void
log_emit(struct log *lg, struct log_rec *r)
{
	rec_end(lg, r);
	if (lg == NULL)
		return;
	if (lg->flush == NULL) {
		pthread_mutex_lock(&lg->root->lock);
		log_put(lg, r->buf, r->len);
		pthread_mutex_unlock(&lg->root->lock);
		return;
	}
	if (lg->blen + r->len > LOG_BATCH_MAX)
		log_write_batch(lg, LOG_WAIT);
	memcpy(lg->batch + lg->blen, r->buf, r->len);
	lg->blen += r->len;
	if (!event_pending(lg->flush, EV_TIMEOUT, NULL))
		event_active(lg->flush, EV_TIMEOUT, 0);
}

void
log_msg(struct log *lg, const char *event, const char *msg)
{
	struct log_rec r;

	log_rec_begin(&r, lg, event);
	log_rec_str(&r, "msg", msg);
	log_emit(lg, &r);
}

void
log_rec_policy_state(struct log_rec *r, const struct policy *p)
{
	if (p == NULL) {
		log_rec_null(r, "policy_epoch");
		log_rec_null(r, "policy_digest");
		log_rec_str(r, "mode", "none");
		log_rec_str(r, "msg", "no policy loaded: every request is denied "
		    "(no_policy)");
		return;
	}
	log_rec_int(r, "policy_epoch", policy_epoch(p));
	log_rec_str(r, "policy_digest", policy_digest(p));
	log_rec_str(r, "mode", policy_mode_name(policy_mode(p)));
	log_rec_int(r, "entries", (long long)policy_entries(p));
}
