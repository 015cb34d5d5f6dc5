#include <stdio.h>
#include <time.h>

#include <event2/event.h>

#include "guard/log.h"
#include "guard/logevery.h"

static long long
mono_ms(void)
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
		every_line(e, mono_ms());
}

void
log_every_fn(struct log *lg, struct log_every *e, int every_s,
    log_every_line *line, void *arg)
{
	long long now = mono_ms(), due;
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
		every_line(e, mono_ms());
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
