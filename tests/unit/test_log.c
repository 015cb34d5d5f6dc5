/* Unit tests for guard/log: hostile bytes never break a JSON line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/resource.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "guard/log.h"
#include "guard/logevery.h"
#include "util/num.h"

static void
end(struct log_rec *r)
{
	log_emit(NULL, r);	/* closes the record without writing it */
	r->buf[r->len] = '\0';
}

static void
test_escapes_quote_backslash_and_control_bytes(void **state)
{
	struct log_rec r;

	(void)state;
	log_rec_begin(&r, NULL, "decision");
	log_rec_str(&r, "host", "a\"}\n{\"x\\\x01\x7f\xff");
	end(&r);
	assert_non_null(strstr(r.buf,
	    "\"host\":\"a\\\"}\\u000a{\\\"x\\\\\\u0001\\u007f\\u00ff\"}\n"));
	assert_ptr_equal(strchr(r.buf, '\n'), r.buf + r.len - 1);
}

/* A link planted where the log file goes would have root append to
 * what it names: refused, and the target is left untouched. /dev/stdout
 * (a link the kernel keeps) is still taken, and a plain path is created. */
static void
test_hostile_log_file_symlink_refused_dev_stdout_taken(void **state)
{
	char dir[] = "/tmp/eg-logtest.XXXXXX", victim[64], link_[64], plain[64];
	char err[256];
	struct log *lg;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link_, sizeof(link_), "%s/guard.log", dir);
	snprintf(plain, sizeof(plain), "%s/plain.log", dir);
	assert_non_null(f = fopen(victim, "w"));
	fclose(f);
	assert_int_equal(symlink(victim, link_), 0);

	err[0] = '\0';
	assert_null(log_open(link_, LOG_JSON, err, sizeof(err)));
	assert_non_null(strstr(err, "a symbolic link"));
	assert_non_null(f = fopen(victim, "r"));
	assert_int_equal(fgetc(f), EOF);
	fclose(f);

	assert_non_null(lg = log_open("/dev/stdout", LOG_JSON, err, sizeof(err)));
	log_close(lg);
	assert_non_null(lg = log_open(plain, LOG_JSON, err, sizeof(err)));
	log_close(lg);
	assert_int_equal(access(plain, F_OK), 0);

	unlink(plain);
	unlink(link_);
	unlink(victim);
	rmdir(dir);
}

/* The old exception for links was a text prefix: "/dev/..DIR/guard.log"
 * and "/proc/self/root/DIR/guard.log" start with /dev/ and /proc/ and
 * reach a link planted in DIR. Both refused, the victim untouched; any
 * ".." is refused; the exact descriptor paths are still followed. */
static void
test_hostile_log_file_dev_dotdot_and_proc_root_prefix_refused(void **state)
{
	char dir[] = "/tmp/eg-logtest.XXXXXX", victim[64], link_[64], path[256];
	char dev[128], proc[128], up[128], err[256];
	const char *via[] = { dev, proc, up };
	struct log *lg;
	struct stat st;
	size_t i;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link_, sizeof(link_), "%s/guard.log", dir);
	assert_non_null(f = fopen(victim, "w"));
	fclose(f);
	assert_int_equal(symlink(victim, link_), 0);
	snprintf(dev, sizeof(dev), "/dev/..%s/guard.log", dir);
	snprintf(proc, sizeof(proc), "/proc/self/root%s/guard.log", dir);
	snprintf(up, sizeof(up), "%s/../%s/guard.log", dir, strrchr(dir, '/') + 1);

	for (i = 0; i < sizeof(via) / sizeof(via[0]); i++) {
		err[0] = '\0';
		assert_null(log_open(via[i], LOG_JSON, err, sizeof(err)));
		assert_true(strstr(err, "a symbolic link") != NULL ||
		    strstr(err, "\"..\"") != NULL);
	}
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 0);
	/* ".." even where no link is on the way. */
	snprintf(path, sizeof(path), "%s/../%s/new.log", dir, strrchr(dir, '/') + 1);
	assert_null(log_open(path, LOG_JSON, err, sizeof(err)));
	assert_non_null(strstr(err, "\"..\" component"));

	assert_non_null(lg = log_open("/dev/stderr", LOG_JSON, err, sizeof(err)));
	log_close(lg);
	assert_non_null(lg = log_open("/dev/fd/2", LOG_JSON, err, sizeof(err)));
	log_close(lg);
	assert_non_null(lg = log_open("/proc/self/fd/2", LOG_JSON, err, sizeof(err)));
	log_close(lg);
	assert_null(log_open("/dev/fd/2/", LOG_JSON, err, sizeof(err)));

	unlink(link_);
	unlink(victim);
	rmdir(dir);
}

/* Decision logs name what the workload asked for: a new log file is
 * 0600 whatever the umask. */
static void
test_new_log_file_is_0600_under_umask_0(void **state)
{
	char dir[] = "/tmp/eg-logtest.XXXXXX", plain[64], err[256];
	struct log *lg;
	struct stat st;
	mode_t old;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(plain, sizeof(plain), "%s/plain.log", dir);
	old = umask(0);
	lg = log_open(plain, LOG_JSON, err, sizeof(err));
	umask(old);
	assert_non_null(lg);
	log_close(lg);
	assert_int_equal(stat(plain, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(plain);
	rmdir(dir);
}

static void
test_strv_and_null_and_int(void **state)
{
	struct log_rec r;
	const char *v[] = { "10.99.0.5", "2001:2::10" };

	(void)state;
	log_rec_begin(&r, NULL, "decision");
	log_rec_strv(&r, "addrs", v, 2);
	log_rec_null(&r, "policy_epoch");
	log_rec_int(&r, "port", 443);
	end(&r);
	assert_non_null(strstr(r.buf,
	    "\"addrs\":[\"10.99.0.5\",\"2001:2::10\"],\"policy_epoch\":null,\"port\":443}"));
	assert_int_equal(r.buf[0], '{');
}

/* hostile (a full disk): a batch the file takes only in part, cut inside
 * a line (here by a file size limit, EFBIG as a full disk gives ENOSPC),
 * leaves no broken line, and the lines written once there is room again
 * start on a line of their own: lines are lost, never cut or glued. */
static void
test_hostile_log_write_cut_mid_line_leaves_whole_lines(void **state)
{
	char path[] = "/tmp/eg-logcut.XXXXXX", err[256], line[4096];
	struct event_base *base = event_base_new();
	struct rlimit old, small;
	struct log *lg;
	FILE *f;
	int fd, i, n = 0, after = 0, reported = -1;
	uint64_t lost;

	(void)state;
	assert_non_null(base);
	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
	assert_non_null(lg = log_open(path, LOG_JSON, err, sizeof(err)));
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);

	assert_int_equal(log_attach(lg, base), 0);
	for (i = 0; i < 40; i++)
		log_msg(lg, "warning", "before the limit, a line of some length");
	small = old;
	small.rlim_cur = 1050;		/* 10 lines of 100 bytes and a half */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	log_detach(lg);			/* the batch, written now: cut */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(log_attach(lg, base), 0);
	lost = log_lines_lost(lg);
	for (i = 0; i < 3; i++)
		log_msg(lg, "warning", "after the limit");
	log_detach(lg);
	log_close(lg);
	signal(SIGXFSZ, SIG_DFL);

	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strlen(line);

		n++;
		if (len < 2 || line[len - 1] != '\n' || line[len - 2] != '}' ||
		    strncmp(line, "{\"ts\":", 6) != 0 ||
		    strstr(line + 1, "{\"ts\":") != NULL)	/* two glued */
			fail_msg("line %d broken: %s", n, line);
		if (strstr(line, "after the limit") != NULL)
			after++;
		if (strstr(line, "\"event\":\"log_lost\"") != NULL) {
			const char *v = strstr(line, "\"lines\":");
			long long k;

			assert_int_equal(reported, -1);
			assert_int_equal(after, 0);	/* before the lines after */
			assert_non_null(v);
			v += 8;
			/* the digits up to the record's next field or its end */
			assert_int_equal(num_parse_n(v, strcspn(v, ",}"), 0,
			    1000000, &k), 0);
			reported = (int)k;
		}
	}
	fclose(f);
	assert_true(n >= 4 && n <= 15);	/* some lost, none broken */
	assert_int_equal(after, 3);
	/* Every line is in the file or counted, and the count is said. */
	assert_int_equal(lost, 40 - (n - 4));
	assert_int_equal(reported, (int)lost);
	unlink(path);
	event_base_free(base);
}

static void
test_overlong_record_becomes_valid_marker(void **state)
{
	static char big[LOG_REC_MAX * 2];
	struct log_rec r;

	(void)state;
	memset(big, '"', sizeof(big) - 1);
	log_rec_begin(&r, NULL, "decision");
	log_rec_str(&r, "host", big);
	end(&r);
	assert_non_null(strstr(r.buf, "\"event\":\"log_truncated\"}"));
}

static void
test_text_format_is_one_line(void **state)
{
	struct log_rec r;
	char err[64];
	struct log *lg = log_open("/dev/null", LOG_TEXT, err, sizeof(err));

	(void)state;
	assert_non_null(lg);
	log_rec_begin(&r, lg, "decision");
	log_rec_str(&r, "host", "a b\nc");
	end(&r);
	log_close(lg);
	assert_non_null(strstr(r.buf, " event=\"decision\" host=\"a b\\u000ac\"\n"));
	assert_ptr_equal(strchr(r.buf, '\n'), r.buf + r.len - 1);
}

/* hostile: a log reader that stops reading (a pipe nobody drains). The
 * writes never wait: lines are lost and counted, and once the reader
 * reads again the first line says how many. alarm() turns a hang into
 * a failure. */
static void
test_hostile_stalled_pipe_never_blocks_lost_lines_reported(void **state)
{
	char path[64], err[256], buf[1 << 17];
	struct log *lg;
	uint64_t lost;
	ssize_t n;
	size_t len = 0;
	int p[2], i;
	char *nl;

	(void)state;
	assert_int_equal(pipe(p), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	assert_non_null(lg = log_open(path, LOG_JSON, err, sizeof(err)));
	alarm(10);
	for (i = 0; i < 2000; i++)
		log_msg(lg, "warning", "a line nobody reads, of some length to fill the pipe");
	alarm(0);
	lost = log_lines_lost(lg);
	assert_true(lost > 0 && lost < 2000);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		;
	log_msg(lg, "warning", "read again");
	n = read(p[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(nl = strchr(buf, '\n'));
	*nl = '\0';
	assert_non_null(strstr(buf, "\"event\":\"log_lost\""));
	assert_int_equal(strtoull(strstr(buf, "\"lines\":") + 8, NULL, 10), lost);
	assert_non_null(strstr(nl + 1, "read again"));
	len = strlen(nl + 1);
	assert_int_equal(nl[len], '\n');
	assert_int_equal(log_lines_lost(lg), lost);
	log_close(lg);
	close(p[0]);
	close(p[1]);
}

static void
count_line(struct log *lg, unsigned long count, void *arg)
{
	(void)lg;
	*(unsigned long *)arg += count;
	((unsigned long *)arg)[1]++;
}

/* hostile (a burst): times after a line, within its interval, are
 * counted in a line the timer writes when the interval ends, not lost
 * for want of a later time. */
static void
test_hostile_burst_log_every_trailing_count_flushed_by_timer(void **state)
{
	struct event_base *base = event_base_new();
	struct log_every e = { 0 };
	struct timeval tv = { 1, 500000 };
	unsigned long got[2] = { 0, 0 };	/* times counted, lines */
	char err[64];
	struct log *lg = log_open("/dev/null", LOG_JSON, err, sizeof(err));
	int i;

	(void)state;
	assert_non_null(base);
	assert_non_null(lg);
	assert_int_equal(log_attach(lg, base), 0);
	for (i = 0; i < 30; i++)
		log_every_fn(lg, &e, 1, count_line, got);
	assert_int_equal(got[0], 1);		/* the first at once */
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	assert_int_equal(got[0], 30);		/* the 29 a second later */
	assert_int_equal(got[1], 2);
	log_every_free(&e);
	log_detach(lg);
	log_close(lg);
	event_base_free(base);
}

/* Reopen after a rename (logrotate) writes the new file; a link planted
 * at the path is refused and the old file goes on. */
static void
test_hostile_reopen_renamed_then_link_refused(void **state)
{
	char dir[] = "/tmp/eg-logrot.XXXXXX", path[128], old[128], victim[128];
	char err[256], buf[4096];
	struct log *lg;
	FILE *f;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/g.log", dir);
	snprintf(old, sizeof(old), "%s/g.log.1", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	assert_non_null(lg = log_open(path, LOG_JSON, err, sizeof(err)));
	log_msg(lg, "info", "one");
	assert_int_equal(rename(path, old), 0);
	assert_int_equal(log_reopen(lg, err, sizeof(err)), 0);
	log_msg(lg, "info", "two");
	assert_non_null(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "\"two\""));
	assert_null(strstr(buf, "\"one\""));
	assert_int_equal(rename(path, old), 0);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(log_reopen(lg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	log_msg(lg, "info", "three");
	log_close(lg);
	assert_non_null(f = fopen(old, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "\"three\""));
	assert_int_equal(access(victim, F_OK), -1);
	unlink(path);
	unlink(old);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes_quote_backslash_and_control_bytes),
		cmocka_unit_test(test_strv_and_null_and_int),
		cmocka_unit_test(test_hostile_log_file_symlink_refused_dev_stdout_taken),
		cmocka_unit_test(test_hostile_log_file_dev_dotdot_and_proc_root_prefix_refused),
		cmocka_unit_test(test_new_log_file_is_0600_under_umask_0),
		cmocka_unit_test(test_hostile_log_write_cut_mid_line_leaves_whole_lines),
		cmocka_unit_test(test_overlong_record_becomes_valid_marker),
		cmocka_unit_test(test_text_format_is_one_line),
		cmocka_unit_test(test_hostile_stalled_pipe_never_blocks_lost_lines_reported),
		cmocka_unit_test(test_hostile_burst_log_every_trailing_count_flushed_by_timer),
		cmocka_unit_test(test_hostile_reopen_renamed_then_link_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
