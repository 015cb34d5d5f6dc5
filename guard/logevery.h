/* Rate-limited log lines that never lose their count (guard/log.h is
 * the writer). */
#ifndef EG_LOGEVERY_H
#define EG_LOGEVERY_H

struct event;
struct log;

/* A warning that can repeat many times a second (a listener paused for
 * want of descriptors, ten times a second while a client holds them all):
 * one line at the first time, then at most one per interval, carrying
 * how many times it happened since the last line, so the log is never the
 * flood. Times that come after a line, within its interval, get their
 * line when the interval ends (a timer on the loop of log_attach), not
 * only at a later time that may never come. Zero-initialised; one per
 * place that warns; log_every_free it before the loop is freed. */
#define LOG_EVERY_S	10
typedef void log_every_line(struct log *lg, unsigned long count, void *arg);
struct log_every {
	long long	 last;		/* monotonic ms of the last line; 0: none */
	unsigned long	 count;		/* times not yet in a line */
	struct event	*timer;		/* the line for count, at the interval's end */
	struct log	*lg;
	log_every_line	*line;
	void		*arg;
	const char	*msg;		/* log_every's */
};
/* Counts one more time; writes "warning" with msg (which must live as
 * long as e) and " (N times since the last such line)" when a line is
 * due; at most one per LOG_EVERY_S. */
void log_every(struct log *lg, struct log_every *e, const char *msg);
/* The same with the caller's line (line(lg, count, arg) writes it) and
 * interval. */
void log_every_fn(struct log *lg, struct log_every *e, int every_s,
    log_every_line *line, void *arg);
/* The monotonic clock in ms, as these lines count it. */
long long log_every_now_ms(void);
/* Writes the line for times not yet in one, and frees the timer. */
void log_every_free(struct log_every *e);

/* libevent's own messages (event_set_log_callback), from any thread: its
 * warnings and errors become "warning" lines in lg ("libevent: ..."), at
 * most one per LOG_EVERY_S carrying how many came since the last line
 * (libevent's callback may call nothing of libevent, so no timer: the
 * count waits for the next line or log_libevent_stop); its fatal errors
 * become "error" lines, never held back; debug and info are dropped.
 * Never a raw line on stderr, which is the decision log by default. Once,
 * at start, after lg is open; -1 (out of memory) drops every message. */
int log_libevent_start(struct log *lg);
/* Writes the count not yet in a line and drops libevent's messages from
 * now on; before lg is closed. */
void log_libevent_stop(void);

#endif
