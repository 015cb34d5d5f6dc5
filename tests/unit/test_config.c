/* guard/config.c: `egress-guard run` flags. A bad value is an error with
 * the flag named, never a silent default (tinyproxy turns a bad port into
 * the default port); every repeatable flag is bounded; anything unknown
 * is refused before anything starts. Pure: argv in, struct config out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include "guard/config.h"

#define MAXARGS	(2 * CONFIG_MAX_RANGES + 8)

/* argv for config_parse_run: "run" then the NULL-terminated list. */
static int
argv_of(char **argv, const char *const *args)
{
	int n = 0;

	argv[n++] = (char *)(uintptr_t)"run";
	for (; *args != NULL; args++) {
		assert_true(n < MAXARGS - 1);
		argv[n++] = (char *)(uintptr_t)*args;
	}
	argv[n] = NULL;
	return n;
}

static void
parse_ok_v(struct config *c, const char *const *args)
{
	char *argv[MAXARGS], err[256] = "";
	int argc = argv_of(argv, args);

	if (config_parse_run(argc, argv, c, err, sizeof(err)) != 0)
		fail_msg("refused: %s", err);
}

#define PARSE_OK(c, ...) do {						\
	static const char *const a_[] = { __VA_ARGS__, NULL };		\
	parse_ok_v((c), a_);						\
} while (0)

/* Refused, with want in the one-line message. */
static void
refuse_v(const char *want, const char *const *args)
{
	char *argv[MAXARGS], err[256] = "";
	struct config c;
	int argc = argv_of(argv, args), i;

	if (config_parse_run(argc, argv, &c, err, sizeof(err)) != -1) {
		fprintf(stderr, "accepted:");
		for (i = 1; i < argc; i++)
			fprintf(stderr, " %s", argv[i]);
		fail_msg("want \"%s\"", want);
	}
	assert_non_null(strchr(err, '\0'));
	assert_null(strchr(err, '\n'));
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
}

#define REFUSE(want, ...) do {						\
	static const char *const a_[] = { __VA_ARGS__, NULL };		\
	refuse_v((want), a_);						\
} while (0)

static void
test_defaults_when_no_flags(void **state)
{
	static const char *const none[] = { NULL };
	struct config c;

	(void)state;
	parse_ok_v(&c, none);
	assert_int_equal(c.nlisten, 1);
	assert_string_equal(c.listen[0].host, "127.0.0.1");
	assert_int_equal(c.listen[0].port, 3128);
	assert_string_equal(c.control_path, "/run/egress-guard/control.sock");
	assert_int_equal(c.sni_check, 1);
	assert_int_equal(c.log_format, LOG_JSON);
	assert_int_equal(c.max_conns, 4096);
	assert_int_equal(c.header_timeout, 10);
	assert_int_equal(c.idle_timeout, 300);
	assert_int_equal(c.connect_timeout, 10);
	assert_int_equal(c.dns_timeout, 5);
	assert_int_equal(c.grace, 10);
	assert_null(c.policy_path);
	assert_int_equal(c.ntrust_keys, 0);
	assert_string_equal(c.dns_csv, "");
	assert_int_equal(c.nallow, 0);
	assert_int_equal(c.ndeny, 0);
}

static void
test_every_flag_both_spellings(void **state)
{
	struct config c;

	(void)state;
	PARSE_OK(&c, "--listen", "10.0.0.1:8080", "--listen=[::1]:3129",
	    "--control", "/tmp/c.sock", "--policy=/tmp/p.json",
	    "--trust-key", "/tmp/a.pub.pem", "--trust-key=/tmp/b.pub.pem",
	    "--dns", "192.0.2.53", "--dns=[2001:db8::53]:5353",
	    "--allow-range", "198.18.0.0/15", "--deny-range=203.0.113.0/24",
	    "--sni-check", "off", "--user=nobody", "--log-format", "text",
	    "--log-file", "/tmp/log", "--max-conns", "1",
	    "--header-timeout=3600", "--idle-timeout", "604800",
	    "--connect-timeout", "1", "--dns-timeout", "300", "--grace", "0",
	    "--transparent", "10.0.0.1:15001", "--transparent=[::]:15001");
	assert_int_equal(c.nlisten, 2);
	assert_int_equal(c.ntransparent, 2);
	assert_string_equal(c.transparent[0].host, "10.0.0.1");
	assert_int_equal(c.transparent[1].kind, DEST_IPV6);
	assert_int_equal(c.transparent[1].port, 15001);
	assert_string_equal(c.listen[0].host, "10.0.0.1");
	assert_int_equal(c.listen[0].port, 8080);
	assert_string_equal(c.listen[1].host, "::1");
	assert_int_equal(c.listen[1].port, 3129);
	assert_string_equal(c.control_path, "/tmp/c.sock");
	assert_string_equal(c.policy_path, "/tmp/p.json");
	assert_int_equal(c.ntrust_keys, 2);
	assert_string_equal(c.trust_keys[1], "/tmp/b.pub.pem");
	assert_string_equal(c.dns_csv, "192.0.2.53:53,[2001:db8::53]:5353");
	assert_int_equal(c.nallow, 1);
	assert_int_equal(c.ndeny, 1);
	assert_int_equal(c.sni_check, 0);
	assert_string_equal(c.user, "nobody");
	assert_int_equal(c.log_format, LOG_TEXT);
	assert_string_equal(c.log_file, "/tmp/log");
	assert_int_equal(c.max_conns, 1);
	assert_int_equal(c.header_timeout, 3600);
	assert_int_equal(c.idle_timeout, 604800);
	assert_int_equal(c.connect_timeout, 1);
	assert_int_equal(c.dns_timeout, 300);
	assert_int_equal(c.grace, 0);
}

/* A listener is an address literal with an explicit port in its one
 * spelling; a name would be resolved at start-up, outside the policy. */
static void
test_refuses_bad_listen_ports_and_names(void **state)
{
	static const char *const bad[] = {
		"127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
		"127.0.0.1:99999999999999999999", "127.0.0.1:+80",
		"127.0.0.1:-1", "127.0.0.1:080", "127.0.0.1:0x50",
		"127.0.0.1: 80", "127.0.0.1:80 ", "localhost:3128",
		"::1:3128", "[::1]", "[::1]:", "0177.0.0.1:3128", "127.1:3128",
		":3128", "", NULL
	};
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		const char *args[] = { "--listen", bad[i], NULL };
		const char *targs[] = { "--transparent", bad[i], NULL };

		refuse_v("--listen", args);
		refuse_v("--transparent", targs);
	}
}

static void
test_refuses_seventeenth_transparent_listener(void **state)
{
	const char *args[2 * CONFIG_MAX_LISTEN + 3];
	char bufs[CONFIG_MAX_LISTEN + 1][32];
	size_t i;

	(void)state;
	for (i = 0; i <= CONFIG_MAX_LISTEN; i++) {
		snprintf(bufs[i], sizeof(bufs[i]), "127.0.0.1:%zu", 15000 + i);
		args[2 * i] = "--transparent";
		args[2 * i + 1] = bufs[i];
	}
	args[2 * i] = NULL;
	refuse_v("--transparent: at most 16", args);
}

/* --dns-listen: IP literals with a port, at most 4, never a name. */
static void
test_dns_listen_literals_only_and_bounded(void **state)
{
	static const char *const bad[] = {
		"10.77.0.1", "10.77.0.1:0", "localhost:53", "[::1]", "::1:53",
		"10.77.0.1:053", "", NULL
	};
	struct config c;
	size_t i;

	(void)state;
	PARSE_OK(&c, "--dns-listen", "10.77.0.1:53", "--dns-listen", "[fd00::1]:5353");
	assert_int_equal(c.ndns_listen, 2);
	assert_int_equal(c.dns_listen[0].kind, DEST_IPV4);
	assert_int_equal(c.dns_listen[0].port, 53);
	assert_int_equal(c.dns_listen[1].kind, DEST_IPV6);
	assert_int_equal(c.dns_listen[1].port, 5353);
	PARSE_OK(&c, "--listen", "127.0.0.1:3128");
	assert_int_equal(c.ndns_listen, 0);	/* off by default */
	for (i = 0; bad[i] != NULL; i++) {
		const char *args[] = { "--dns-listen", bad[i], NULL };

		refuse_v("--dns-listen", args);
	}
	REFUSE("at most 4", "--dns-listen", "127.0.0.1:1", "--dns-listen",
	    "127.0.0.1:2", "--dns-listen", "127.0.0.1:3", "--dns-listen",
	    "127.0.0.1:4", "--dns-listen", "127.0.0.1:5");
}

/* Timeouts and limits: whole decimal numbers inside their bounds; the
 * edges are exact, one past them refused, never clamped. */
static void
test_refuses_numbers_out_of_bounds_or_misspelt(void **state)
{
	static const struct {
		const char	*flag;
		const char	*lo_bad;
		const char	*hi_bad;
	} b[] = {
		{ "--max-conns", "0", "1000001" },
		{ "--header-timeout", "0", "3601" },
		{ "--idle-timeout", "0", "604801" },
		{ "--connect-timeout", "0", "3601" },
		{ "--dns-timeout", "0", "301" },
		{ "--grace", "-1", "3601" },
	};
	static const char *const junk[] = {
		"", "+5", "05", "5s", "5.0", " 5", "0x5", "1e2",
		"18446744073709551621", NULL
	};
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		const char *lo[] = { b[i].flag, b[i].lo_bad, NULL };
		const char *hi[] = { b[i].flag, b[i].hi_bad, NULL };

		refuse_v(b[i].flag, lo);
		refuse_v(b[i].flag, hi);
		for (j = 0; junk[j] != NULL; j++) {
			const char *x[] = { b[i].flag, junk[j], NULL };

			refuse_v(b[i].flag, x);
		}
	}
}

static void
test_refuses_unknown_values_of_enumerated_flags(void **state)
{
	(void)state;
	REFUSE("--sni-check", "--sni-check", "ENFORCE");
	REFUSE("--sni-check", "--sni-check", "no");
	REFUSE("--sni-check", "--sni-check=");
	REFUSE("--log-format", "--log-format", "xml");
	REFUSE("--log-format", "--log-format", "JSON");
	REFUSE("--dns", "--dns", "resolver.example");
	REFUSE("--dns", "--dns", "192.0.2.53:0");
	REFUSE("--dns", "--dns", "192.0.2.53:65536");
	REFUSE("--dns", "--dns", "192.0.2.53:053");
	REFUSE("--allow-range", "--allow-range", "198.18.0.0/33");
	REFUSE("--allow-range", "--allow-range", "198.18.0.1/15");
	REFUSE("--deny-range", "--deny-range", "not-a-cidr");
}

static void
test_refuses_unknown_flags_and_stray_arguments(void **state)
{
	(void)state;
	REFUSE("unknown or incomplete option", "--bogus");
	REFUSE("unknown or incomplete option", "-l", "127.0.0.1:3128");
	REFUSE("unknown or incomplete option", "--listen");
	REFUSE("unknown or incomplete option", "--policy");
	REFUSE("unknown or incomplete option", "--help=yes");
	REFUSE("unexpected argument", "127.0.0.1:3128");
	REFUSE("unexpected argument", "--policy", "p.json", "extra");
	/* After "--" nothing is a flag. */
	REFUSE("unexpected argument", "--", "--policy", "p.json");
	REFUSE("help", "--help");
}

/* Repeatable flags are bounded: the limit is exact, one more refused, a
 * repeated value counted again rather than merged away unseen. */
static void
test_repeatable_flags_bounded_duplicates_counted(void **state)
{
	const char *args[MAXARGS];
	char spec[CONFIG_MAX_RANGES + 1][48];
	char *argv[MAXARGS], err[256];
	struct config c;
	size_t i, n;
	int argc;

	(void)state;
	/* --listen: 16 distinct fine, a 17th refused. */
	for (n = 0, i = 0; i <= CONFIG_MAX_LISTEN; i++) {
		snprintf(spec[i], sizeof(spec[i]), "127.0.0.1:%zu", 4000 + i);
		args[n++] = "--listen";
		args[n++] = spec[i];
	}
	args[n] = NULL;
	refuse_v("--listen: at most 16", args);
	args[n - 2] = NULL;
	parse_ok_v(&c, args);
	assert_int_equal(c.nlisten, CONFIG_MAX_LISTEN);

	/* --trust-key: the same path 17 times is 17 keys, refused. */
	for (n = 0, i = 0; i <= CONFIG_MAX_KEYS; i++) {
		args[n++] = "--trust-key";
		args[n++] = "/tmp/k.pub.pem";
	}
	args[n] = NULL;
	refuse_v("--trust-key: at most 16", args);

	/* --dns: 8 servers, the same one repeated; a 9th refused. */
	for (n = 0, i = 0; i <= CONFIG_MAX_DNS; i++) {
		args[n++] = "--dns";
		args[n++] = "[2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]:65535";
	}
	args[n] = NULL;
	refuse_v("--dns: too many servers", args);
	args[n - 2] = NULL;
	parse_ok_v(&c, args);
	assert_true(strlen(c.dns_csv) < sizeof(c.dns_csv));
	/* Short entries too: the bound counts servers, not bytes (the
	 * buffer alone took 40 of these). */
	for (n = 0, i = 0; i <= CONFIG_MAX_DNS; i++) {
		args[n++] = "--dns";
		args[n++] = "10.0.0.1";
	}
	args[n] = NULL;
	refuse_v("--dns: too many servers (at most 8)", args);
	args[n - 2] = NULL;
	parse_ok_v(&c, args);
	assert_string_equal(c.dns_csv, "10.0.0.1:53,10.0.0.1:53,10.0.0.1:53,"
	    "10.0.0.1:53,10.0.0.1:53,10.0.0.1:53,10.0.0.1:53,10.0.0.1:53");

	/* --allow-range and --deny-range: 256 each, a 257th refused. */
	for (n = 0, i = 0; i <= CONFIG_MAX_RANGES; i++) {
		snprintf(spec[i], sizeof(spec[i]), "10.%zu.%zu.0/24", i / 256,
		    i % 256);
		args[n++] = "--deny-range";
		args[n++] = spec[i];
	}
	args[n] = NULL;
	argc = argv_of(argv, args);
	assert_int_equal(config_parse_run(argc, argv, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--deny-range: too many ranges"));
	args[n - 2] = NULL;
	parse_ok_v(&c, args);
	assert_int_equal(c.ndeny, CONFIG_MAX_RANGES);
}

/* Each parse starts from the defaults: nothing of an earlier parse (a
 * refused one included) leaks into the next. */
static void
test_parse_starts_from_defaults_each_time(void **state)
{
	struct config c;

	(void)state;
	REFUSE("--grace", "--sni-check", "off", "--grace", "x");
	PARSE_OK(&c, "--sni-check", "off", "--dns", "192.0.2.1");
	PARSE_OK(&c, "--max-conns", "7");
	assert_int_equal(c.sni_check, 1);
	assert_string_equal(c.dns_csv, "");
	assert_int_equal(c.max_conns, 7);
}

static void
test_classifier_holds_the_ranges(void **state)
{
	struct classify_result res;
	struct classify_cfg *cc;
	unsigned char a[4];
	struct config c;

	(void)state;
	PARSE_OK(&c, "--allow-range", "198.18.0.0/15", "--deny-range",
	    "198.18.5.0/24");
	assert_non_null(cc = config_classifier(&c));
	assert_int_equal(inet_pton(AF_INET, "198.18.1.10", a), 1);
	assert_int_equal(classify_addr(cc, AF_INET, a, &res), 1);
	assert_int_equal(inet_pton(AF_INET, "198.18.5.1", a), 1);
	assert_int_equal(classify_addr(cc, AF_INET, a, &res), 0);
	classify_cfg_free(cc);
	/* Negative control: without the allow-range, 198.18/15 is not public. */
	PARSE_OK(&c, "--max-conns", "1");
	assert_non_null(cc = config_classifier(&c));
	assert_int_equal(inet_pton(AF_INET, "198.18.1.10", a), 1);
	assert_int_equal(classify_addr(cc, AF_INET, a, &res), 0);
	classify_cfg_free(cc);
}

/* Hostile or careless spellings: getopt_long alone takes any unambiguous
 * prefix, so "--allow" would widen what counts as public and "--trust"
 * would name a signer. Only full names are taken; a value that looks
 * like an option is still a value. */
static void
test_hostile_abbreviated_flags_refused(void **state)
{
	struct config c;

	(void)state;
	REFUSE("--allow: options are not abbreviated: --allow-range",
	    "--allow", "10.0.0.0/8");
	REFUSE("--allow: options are not abbreviated", "--allow=10.0.0.0/8");
	REFUSE("--trust: options are not abbreviated: --trust-key", "--trust", "k.pem");
	REFUSE("--no: options are not abbreviated", "--no");
	REFUSE("--work: options are not abbreviated: --workers", "--work", "2");
	REFUSE("unknown or incomplete option: --bogus", "--bogus");
	/* The value of --log-file may start with "--"; "--" ends the flags. */
	PARSE_OK(&c, "--log-file", "--allow", "--workers=2");
	assert_string_equal(c.log_file, "--allow");
	assert_int_equal(c.workers, 2);
	REFUSE("unexpected argument", "--", "--allow");
}

/* An empty --control is an abstract socket (the kernel reads sun_path's
 * leading NUL as "no file"): no mode, no owner, reachable by any uid of
 * the namespace, the workload included. Refused, in both spellings. */
static void
test_hostile_empty_control_path_refused(void **state)
{
	struct config c;

	(void)state;
	REFUSE("--control: expected a socket path", "--control", "");
	REFUSE("--control: expected a socket path", "--control=");
	/* Negative control: a path is taken. */
	PARSE_OK(&c, "--control", "/run/eg/c.sock");
	assert_string_equal(c.control_path, "/run/eg/c.sock");
}

/* A flag that holds one value, given twice, is refused: last-wins would
 * let a second --policy, --user or --control (a default followed by an
 * operator's own, a line pasted twice in a unit) silently replace the
 * first. Every such flag, in every mix of spellings. */
static void
test_hostile_single_value_flag_given_twice_refused(void **state)
{
	static const struct {
		const char	*flag;
		const char	*a;
		const char	*b;
	} once[] = {
		{ "--control", "/tmp/a.sock", "/tmp/b.sock" },
		{ "--policy", "/tmp/a.json", "/tmp/b.json" },
		{ "--state-dir", "/tmp/a", "/tmp/b" },
		{ "--sni-check", "enforce", "off" },
		{ "--user", "nobody", "root" },
		{ "--log-format", "json", "text" },
		{ "--log-file", "/tmp/a.log", "/tmp/b.log" },
		{ "--max-conns", "1", "2" },
		{ "--header-timeout", "1", "2" },
		{ "--idle-timeout", "1", "2" },
		{ "--connect-timeout", "1", "2" },
		{ "--dns-timeout", "1", "2" },
		{ "--grace", "1", "2" },
		{ "--workers", "1", "2" },
	};
	char want[64], eq[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(once) / sizeof(once[0]); i++) {
		const char *sep[] = { once[i].flag, once[i].a, once[i].flag,
		    once[i].b, NULL };
		const char *same[] = { once[i].flag, once[i].a, once[i].flag,
		    once[i].a, NULL };
		const char *mixed[] = { eq, "--listen", "127.0.0.1:1",
		    once[i].flag, once[i].b, NULL };

		snprintf(want, sizeof(want), "%s given twice", once[i].flag);
		snprintf(eq, sizeof(eq), "%s=%s", once[i].flag, once[i].a);
		refuse_v(want, sep);
		refuse_v(want, same);
		refuse_v(want, mixed);
	}
	REFUSE("--no-state given twice", "--no-state", "--no-state");
	REFUSE("--help given twice", "--help", "--help");
}

/* Negative control of the test above: what looks like a second flag but
 * is a value is not one, and the documented repeatable flags repeat. */
static void
test_repeatable_flags_and_flag_like_values_not_counted_twice(void **state)
{
	struct config c;

	(void)state;
	PARSE_OK(&c, "--log-file", "--policy", "--policy", "/tmp/p.json");
	assert_string_equal(c.log_file, "--policy");
	assert_string_equal(c.policy_path, "/tmp/p.json");
	PARSE_OK(&c, "--listen", "127.0.0.1:1", "--listen", "127.0.0.1:1",
	    "--transparent", "127.0.0.1:2", "--transparent=127.0.0.1:2",
	    "--trust-key", "/k", "--trust-key", "/k",
	    "--dns", "192.0.2.1", "--dns", "192.0.2.1",
	    "--dns-listen", "127.0.0.1:53", "--dns-listen", "127.0.0.1:53",
	    "--allow-range", "10.0.0.0/8", "--allow-range", "10.0.0.0/8",
	    "--deny-range", "10.0.0.0/8", "--deny-range", "10.0.0.0/8");
	assert_int_equal(c.nlisten, 2);
	assert_int_equal(c.ntransparent, 2);
	assert_int_equal(c.ntrust_keys, 2);
	assert_int_equal(c.ndns_listen, 2);
	assert_int_equal(c.nallow, 2);
	assert_int_equal(c.ndeny, 2);
	/* --state-dir and --no-state are one choice, not a repeat. */
	REFUSE("--no-state and --state-dir: choose one", "--state-dir", "/tmp/s",
	    "--no-state");
}

/* getopt does not move past a short option inside a cluster: the message
 * must name the argument as given, never the word before it. */
static void
test_hostile_short_option_cluster_named_as_given(void **state)
{
	struct config c;

	(void)state;
	REFUSE("unknown or incomplete option: -xy", "-xy");
	REFUSE("unknown or incomplete option: -x", "--grace", "1", "-x");
	REFUSE("unknown or incomplete option: -l", "-l", "127.0.0.1:3128");
	/* As a value it is a value. */
	PARSE_OK(&c, "--log-file", "-xy");
	assert_string_equal(c.log_file, "-xy");
}

/* --tenants: every listener and policy is a tenant's, so a flag that
 * would open one outside them, or run with no floor, is refused; one
 * worker loop, by default too. */
static void
test_tenants_refuses_untenanted_listeners_and_policy(void **state)
{
	struct config c;

	(void)state;
	PARSE_OK(&c, "--tenants", "--state-dir", "/s", "--control", "/c.sock");
	assert_int_equal(c.tenants, 1);
	assert_int_equal(c.workers, 1);
	assert_int_equal(c.nlisten, 0);
	REFUSE("--listen: not with --tenants", "--tenants", "--listen", "10.0.0.1:3128");
	REFUSE("--listen: not with --tenants", "--listen=10.0.0.1:3128", "--tenants");
	REFUSE("--transparent: not with --tenants", "--tenants", "--transparent",
	    "10.0.0.1:3129");
	REFUSE("--dns-listen: not with --tenants", "--tenants", "--dns-listen",
	    "10.0.0.1:53");
	REFUSE("--policy: not with --tenants", "--tenants", "--policy", "/p.json");
	REFUSE("--no-state: not with --tenants", "--tenants", "--no-state");
	REFUSE("--workers 2: --tenants runs one event loop", "--tenants", "--workers",
	    "2");
	PARSE_OK(&c, "--tenants", "--workers", "1");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_when_no_flags),
		cmocka_unit_test(test_every_flag_both_spellings),
		cmocka_unit_test(test_refuses_bad_listen_ports_and_names),
		cmocka_unit_test(test_refuses_seventeenth_transparent_listener),
		cmocka_unit_test(test_dns_listen_literals_only_and_bounded),
		cmocka_unit_test(test_refuses_numbers_out_of_bounds_or_misspelt),
		cmocka_unit_test(test_refuses_unknown_values_of_enumerated_flags),
		cmocka_unit_test(test_refuses_unknown_flags_and_stray_arguments),
		cmocka_unit_test(test_repeatable_flags_bounded_duplicates_counted),
		cmocka_unit_test(test_parse_starts_from_defaults_each_time),
		cmocka_unit_test(test_classifier_holds_the_ranges),
		cmocka_unit_test(test_hostile_abbreviated_flags_refused),
		cmocka_unit_test(test_hostile_empty_control_path_refused),
		cmocka_unit_test(test_hostile_single_value_flag_given_twice_refused),
		cmocka_unit_test(test_repeatable_flags_and_flag_like_values_not_counted_twice),
		cmocka_unit_test(test_hostile_short_option_cluster_named_as_given),
		cmocka_unit_test(test_tenants_refuses_untenanted_listeners_and_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
