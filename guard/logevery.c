#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/log.h"
#include "guard/logevery.h"

long long
log_every_now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The line for the times counted, now. */
static void
every_line(struct log_every *e, long long now)
{
	e->line(e->lg, e->count, e->arg);
	e->last = now > 0 ? now : 1;
	e->count = 0;
}

/* The interval after a line has ended with times it did not carry:
 * they get their line now, not only at the next time, which may never
 * come. */
static void
every_cb(evutil_socket_t fd, short what, void *arg)
{
	struct log_every *e = arg;

	(void)fd;
	(void)what;
	if (e->count > 0)
		every_line(e, log_every_now_ms());
}

void
log_every_fn(struct log *lg, struct log_every *e, int every_s,
    log_every_line *line, void *arg)
{
	long long now = log_every_now_ms(), due;
	struct timeval tv;

	e->lg = lg;
	e->line = line;
	e->arg = arg;
	e->count++;
	due = e->last + (long long)every_s * 1000;
	if (e->last == 0 || now >= due) {
		if (e->timer != NULL)
			evtimer_del(e->timer);
		every_line(e, now);
		return;
	}
	if (e->timer == NULL && log_base(lg) != NULL)
		e->timer = evtimer_new(log_base(lg), every_cb, e);
	if (e->timer == NULL || evtimer_pending(e->timer, NULL))
		return;
	tv.tv_sec = (time_t)((due - now) / 1000);
	tv.tv_usec = (suseconds_t)((due - now) % 1000 * 1000);
	(void)evtimer_add(e->timer, &tv);
}

void
log_every_free(struct log_every *e)
{
	if (e->count > 0 && e->line != NULL)
		every_line(e, log_every_now_ms());
	if (e->timer != NULL)
		event_free(e->timer);
	e->timer = NULL;
}

static void
warning_line(struct log *lg, unsigned long count, void *arg)
{
	const struct log_every *e = arg;
	char line[256];

	snprintf(line, sizeof(line), "%s (%lu time%s since the last such line)",
	    e->msg, count, count == 1 ? "" : "s");
	log_msg(lg, "warning", line);
}

void
log_every(struct log *lg, struct log_every *e, const char *msg)
{
	e->msg = msg;
	log_every_fn(lg, e, LOG_EVERY_S, warning_line, e);
}

/* libevent's callback takes no argument: this is the one place the
 * guard's log is reached through a static, set at start and at exit.
 * lg is a clone that is never attached to a loop, so every line is
 * written at once under the log's lock: a batch would need libevent. */
static struct {
	pthread_mutex_t	 lock;		/* lg's time cache, last and count */
	struct log	*lg;		/* NULL: drop */
	long long	 last;		/* monotonic ms of the last line; 0: none */
	unsigned long	 count;		/* warnings not yet in a line */
} libev = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

static void
libevent_line(const char *event, const char *msg, unsigned long count)
{
	char line[512];

	if (count > 0)
		snprintf(line, sizeof(line), "libevent: %s (%lu libevent warning%s "
		    "since the last such line)", msg, count, count == 1 ? "" : "s");
	else
		snprintf(line, sizeof(line), "libevent: %s", msg);
	log_msg(libev.lg, event, line);
}

static void
libevent_cb(int severity, const char *msg)
{
	long long now;

	if (severity < EVENT_LOG_WARN)
		return;
	pthread_mutex_lock(&libev.lock);
	if (libev.lg == NULL)
		goto out;
	if (severity >= EVENT_LOG_ERR) {
		/* libevent exits after it: the reason must reach the log. */
		libevent_line("error", msg, 0);
		goto out;
	}
	libev.count++;
	now = log_every_now_ms();
	if (libev.last != 0 && now < libev.last + (long long)LOG_EVERY_S * 1000)
		goto out;
	libevent_line("warning", msg, libev.count);
	libev.last = now > 0 ? now : 1;
	libev.count = 0;
out:
	pthread_mutex_unlock(&libev.lock);
}

/* libevent exits after a fatal error (a start short of descriptors:
 * evsig_init_'s socketpair); its message is logged above. Exit 2, a
 * failed start's status, not libevent's 1, which reads as a deny. */
static void
libevent_fatal(int err)
{
	(void)err;
	_exit(2);
}

int
log_libevent_start(struct log *lg)
{
	struct log *own = log_clone(lg);

	pthread_mutex_lock(&libev.lock);
	libev.lg = own;
	pthread_mutex_unlock(&libev.lock);
	event_set_log_callback(libevent_cb);
	event_set_fatal_callback(libevent_fatal);
	return own != NULL ? 0 : -1;
}

void
log_libevent_stop(void)
{
	struct log *own;

	pthread_mutex_lock(&libev.lock);
	own = libev.lg;
	if (own != NULL && libev.count > 0)
		libevent_line("warning", "warnings held back", libev.count);
	libev.lg = NULL;
	libev.count = 0;
	pthread_mutex_unlock(&libev.lock);
	log_close(own);
}
