/* util/file: whole files for start-up and the CLI, bounded, and never a
 * hang on a FIFO put where a file was expected (hostile: whoever can
 * write the folder of --policy or a key). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/file.h"

static char dir[] = "/tmp/eg-file-test-XXXXXX";

static int
setup(void **state)
{
	(void)state;
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *
put(const char *name, const char *content)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(content, 1, strlen(content), f), strlen(content));
	fclose(f);
	return path;
}

static void
test_reads_after_reserve_nul_terminated(void **state)
{
	size_t len = 99;
	char err[256] = "", *b;

	(void)state;
	b = file_read(put("a", "hello"), 64, 7, &len, err, sizeof(err));
	assert_non_null(b);
	assert_int_equal(len, 5);
	assert_memory_equal(b + 7, "hello", 6);
	free(b);
	b = file_read(put("e", ""), 64, 0, &len, err, sizeof(err));
	assert_non_null(b);
	assert_int_equal(len, 0);
	assert_int_equal(b[0], '\0');
	free(b);
}

static void
test_refuses_file_over_max_naming_path(void **state)
{
	char err[256] = "", want[300], *b;
	size_t len;
	const char *p = put("big", "0123456789");

	(void)state;
	assert_null(file_read(p, 9, 0, &len, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: larger than 9 bytes", p);
	assert_string_equal(err, want);
	assert_non_null(b = file_read(p, 10, 0, &len, err, sizeof(err)));
	assert_int_equal(len, 10);
	free(b);
}

static void
on_alarm(int sig)
{
	(void)sig;
	fail_msg("file_read blocked on a FIFO");
}

/* Hostile: a FIFO with no writer where a policy file was expected. A
 * blocking open would hang start-up (or SIGHUP) for good; it must be
 * refused at once as not a regular file. */
static void
test_hostile_fifo_refused_without_blocking(void **state)
{
	char path[256], err[256] = "", want[300];
	size_t len;

	(void)state;
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(5);
	assert_null(file_read(path, 64, 0, &len, err, sizeof(err)));
	alarm(0);
	snprintf(want, sizeof(want), "%s: not a regular file", path);
	assert_string_equal(err, want);
}

static void
test_refuses_directory_and_missing(void **state)
{
	char err[256] = "";
	size_t len;

	(void)state;
	assert_null(file_read(dir, 64, 0, &len, err, sizeof(err)));
	assert_non_null(strstr(err, "not a regular file"));
	assert_null(file_read("/nonexistent/eg", 64, 0, &len, err, sizeof(err)));
	assert_string_equal(err, "/nonexistent/eg: No such file or directory");
	assert_null(file_read(NULL, 64, 0, &len, err, sizeof(err)));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_after_reserve_nul_terminated),
		cmocka_unit_test(test_refuses_file_over_max_naming_path),
		cmocka_unit_test(test_hostile_fifo_refused_without_blocking),
		cmocka_unit_test(test_refuses_directory_and_missing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
