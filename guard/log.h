/* The one log module. Every line is either one JSON object (--log-format
 * json, the default) or one "key=value" text line. Values always pass
 * through the escaping writer, so hostile bytes from a peer can never break
 * a line or forge a field. */
#ifndef EG_LOG_H
#define EG_LOG_H

#include <stddef.h>
#include <stdint.h>

enum log_format { LOG_JSON = 1, LOG_TEXT };

struct log;

/* path NULL means stderr. Returns NULL with err on failure. */
struct log *log_open(const char *path, enum log_format fmt, char *err, size_t errlen);
void log_close(struct log *lg);
/* A log for another thread (a worker): the same file, its own batch
 * (log_attach it to that thread's loop) and time cache; every write to
 * the file takes one lock, so lines of two threads never interleave.
 * log_close it before its parent. NULL on allocation failure. */
struct log *log_clone(struct log *parent);
/* Batches lines from now on: they are written together once the current
 * pass of base's loop has run its callbacks. -1 (out of memory): lines
 * stay unbatched. log_detach writes what is batched and stops batching;
 * it must run before base is freed. */
struct event_base;
int log_attach(struct log *lg, struct event_base *base);
void log_detach(struct log *lg);
/* Writes what is batched now, unless log_hold holds it (a worker, before
 * it acknowledges a new policy: its revocation lines must reach the file
 * before the main thread's "policy" line, which follows every
 * acknowledgement; the previous policy's lines are released by then). */
void log_flush(struct log *lg);
/* A worker that has taken policy seq holds its later lines (decisions
 * under that policy) until the main thread has written the "policy" line
 * and calls log_release(root, seq): no line names a policy before the
 * line that installs it. A held batch that fills waits for the release
 * (bounded: the main thread releases when the last worker acks, or ends
 * the guard after 10 s). Unbatched logs (out of memory) never hold. */
void log_hold(struct log *lg, uint64_t seq);
void log_release(struct log *root, uint64_t seq);
/* The loop lg is attached to (log_attach); NULL when it is not. */
struct event_base *log_base(const struct log *lg);

#define LOG_REC_MAX 8192

struct log_rec {
	char	buf[LOG_REC_MAX];
	size_t	len;
	int	fields;
	int	truncated;
	enum log_format fmt;
};

/* Starts a record with "ts" and "event". */
void log_rec_begin(struct log_rec *r, struct log *lg, const char *event);
void log_rec_str(struct log_rec *r, const char *key, const char *val);
void log_rec_strn(struct log_rec *r, const char *key, const char *val, size_t n);
void log_rec_int(struct log_rec *r, const char *key, long long v);
void log_rec_null(struct log_rec *r, const char *key);
void log_rec_bool(struct log_rec *r, const char *key, int v);
/* An array of strings (JSON array; text: comma-joined). */
void log_rec_strv(struct log_rec *r, const char *key, const char *const *v, size_t n);
/* A decision line's policy fields: "policy_epoch" and "policy_digest",
 * both null when epoch < 0 (no policy, or refused before the policy
 * step). */
void log_rec_policy(struct log_rec *r, long long epoch, const char *digest);
/* A policy line's fields: the epoch, digest, mode and entries of p, or
 * mode "none" and why every request is denied when p is NULL. */
struct policy;
void log_rec_policy_state(struct log_rec *r, const struct policy *p);
/* Ends the record and writes it as one line. */
void log_emit(struct log *lg, struct log_rec *r);

/* Convenience for one-off operator messages: event "warning"/"error"/"info"
 * with a "msg" field. */
void log_msg(struct log *lg, const char *event, const char *msg);

/* Lines lost since start (a full disk, a reader that does not read),
 * every worker's: /metrics' egress_guard_log_lines_lost_total. */
uint64_t log_lines_lost(const struct log *lg);

/* Opens --log-file again by the same rules as at start (no link
 * followed, a new file 0600), as whatever user the process now is, and
 * writes there from now on (logrotate). 0, or nothing to do with no
 * --log-file; -1 with err when it cannot be opened: the old file stays. */
int log_reopen(struct log *lg, char *err, size_t errlen);

#endif
