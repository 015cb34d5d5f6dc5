/* egress-guardctl receipt sign|verify and admit: the CLI over
 * conform/receipt.h, and the receipt signer (plane side only).
 *
 * The helpers above the subcommands are library-like (errors into a
 * buffer); only the cmd_ functions print. Exit codes: docs/receipts.md
 * and ctl/cli.h. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/keys.h"
#include "ctl/receiptcmd.h"
#include "plane/bundle.h"
#include "policy/catalog.h"
#include "policy/policy.h"
#include "conform/receipt.h"
#include "conform/suite.h"
#include "util/errbuf.h"
#include "util/file.h"
#include "util/num.h"

#define GUARD_NAME	"egress-guard"
#define PUB_SUFFIX	".pub.pem"
#define MAX_DIR_NAMES	256

char *
receiptcmd_sign_envelope(const char *canon, size_t len, EVP_PKEY *priv,
    char *err, size_t errlen)
{
	/* reserve 1: the envelope is written with a newline, and with it
	 * must stay under what verify reads. */
	static const struct ctlkeys_envelope receipt = {
		RECEIPT_ENVELOPE_SCHEMA, RECEIPT_CONTEXT, "receipt",
		RECEIPT_MAX_BYTES, 1, "receipt", "an envelope"
	};

	return ctlkeys_sign_envelope(&receipt, canon, len, priv, err, errlen);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
receiptcmd_load_attesters(struct bundle_keyring *kr, const char *dir,
    char *err, size_t errlen)
{
	char *names[MAX_DIR_NAMES], path[PATH_MAX];
	size_t n = 0, i, len, slen = sizeof(PUB_SUFFIX) - 1;
	struct dirent *de;
	DIR *d;
	int rc = -1, added = 0;

	if (kr == NULL || dir == NULL) {
		errbuf_set(err, errlen, "no attester directory");
		return -1;
	}
	if ((d = opendir(dir)) == NULL) {
		errbuf_set(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL)
			break;
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= slen ||
		    strcmp(de->d_name + len - slen, PUB_SUFFIX) != 0)
			continue;
		if (n >= MAX_DIR_NAMES) {
			errbuf_set(err, errlen, "%s: more than %d *%s files", dir,
			    MAX_DIR_NAMES, PUB_SUFFIX);
			goto out;
		}
		if ((names[n] = strdup(de->d_name)) == NULL) {
			errbuf_set(err, errlen, "%s: out of memory", dir);
			goto out;
		}
		n++;
	}
	if (errno != 0) {
		errbuf_set(err, errlen, "%s: %s", dir, strerror(errno));
		goto out;
	}
	/* Name order: the same directory gives the same error every time. */
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (i = 0; i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    names[i]) >= sizeof(path)) {
			errbuf_set(err, errlen, "%s: path too long", dir);
			goto out;
		}
		if (bundle_keyring_add_file(kr, path, err, errlen) == -1)
			goto out;
		added++;
	}
	rc = added;
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	closedir(d);
	return rc;
}

/* ---- subcommands: the CLI layer, which prints. ---- */

/* The egress-guard next to this egress-guardctl. Returns 0 or -1. */
static int
default_binary(char *out, size_t outlen)
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return -1;
	*slash = '\0';
	if ((size_t)snprintf(out, outlen, "%s/%s", self, GUARD_NAME) >= outlen)
		return -1;
	return 0;
}

/* What a grading command was told: the receipt, the attesters, and what
 * the receipt must be for (a binary in hand, a running guard, or both). */
struct grade_args {
	const char	*cmd;		/* "receipt verify", "admit" */
	const char	*path;		/* the receipt */
	const char	*dir;		/* the attesters */
	const char	*binary;	/* NULL: next to this program */
	const char	*control;	/* a running guard's control socket */
	long		 guard_uid;	/* -1: root and this user only */
	long long	 max_age_days;
};

/* --max-age DAYS (NULL: the default) into *days. 0 or an exit status. */
static int
parse_max_age(const char *cmd, const char *usage, const char *arg,
    long long *days)
{
	*days = RECEIPT_MAX_AGE_DAYS;
	if (arg != NULL && num_parse(arg, 1, RECEIPT_MAX_AGE_LIMIT, days) == -1)
		return cli_usage_error(cmd, usage, "--max-age must be a whole "
		    "number of days, 1-3650", arg);
	return 0;
}

/* --guard-uid N, else EG_GUARD_UID, else -1. 0 or an exit status. */
static int
parse_guard_uid(const char *cmd, const char *usage, const char *arg,
    long *uid)
{
	long long v;

	if (arg == NULL)
		arg = getenv("EG_GUARD_UID");
	*uid = -1;
	if (arg == NULL || arg[0] == '\0')
		return 0;
	if (num_parse(arg, 0, 4294967294LL, &v) == -1)
		return cli_usage_error(cmd, usage, "--guard-uid (or EG_GUARD_UID) "
		    "must be a uid", arg);
	*uid = (long)v;
	return 0;
}

/* The SHA-256 the receipt must name into hex: the running guard's when
 * a control socket was given (and then the binary in hand, if one was
 * named, must be the same bytes), else the binary in hand's. Returns 0 or
 * an exit code (message printed). */
static int
subject_sha256(const struct grade_args *a, char *hex)
{
	char err[1024], file[RECEIPT_SHA256_HEX + 1], def[PATH_MAX];
	const char *binary = a->binary;

	if (a->control != NULL) {
		if (ctlclient_binary_sha256(a->control, a->guard_uid, hex, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "%s: %s: running guard: %s\n", CLI_PROG,
			    a->cmd, err);
			return CLI_EXIT_GUARD;
		}
		if (binary == NULL)
			return 0;
	}
	if (binary == NULL) {
		if (default_binary(def, sizeof(def)) == -1) {
			fprintf(stderr, "%s: %s: cannot locate %s next to "
			    "this program; use --binary\n", CLI_PROG, a->cmd,
			    GUARD_NAME);
			return CLI_EXIT_USAGE;
		}
		binary = def;
	}
	if (receipt_file_sha256(binary, file, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: %s: binary: %s\n", CLI_PROG, a->cmd, err);
		return CLI_EXIT_USAGE;
	}
	if (a->control != NULL && strcmp(file, hex) != 0) {
		fprintf(stderr, "%s: %s: revision mismatch: the guard at %s runs "
		    "sha256:%s, %s is sha256:%s\n", CLI_PROG, a->cmd, a->control,
		    hex, binary, file);
		return CLI_EXIT_REVISION;
	}
	memcpy(hex, file, sizeof(file));
	return 0;
}

/* Grades the receipt as a says. Returns 0 with v filled and why set when
 * the grade is not security_boundary, or an exit code (message printed). */
static int
grade_receipt(const struct grade_args *a, struct receipt_verdict *v,
    char *why, size_t whylen)
{
	char err[1024], hex[RECEIPT_SHA256_HEX + 1];
	struct bundle_keyring *kr = NULL;
	struct suite_set suites = { NULL, 0 };
	struct receipt_check chk;
	char *buf = NULL;
	size_t len;
	int rc = CLI_EXIT_USAGE;

	if ((kr = bundle_keyring_new()) == NULL) {
		fprintf(stderr, "%s: %s: out of memory\n", CLI_PROG, a->cmd);
		return CLI_EXIT_FAIL;
	}
	if (receiptcmd_load_attesters(kr, a->dir, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: %s: attesters: %s\n", CLI_PROG, a->cmd, err);
		goto out;
	}
	if (suite_builtin_load(&suites, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: %s: %s\n", CLI_PROG, a->cmd, err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if ((rc = subject_sha256(a, hex)) != 0)
		goto out;
	rc = CLI_EXIT_USAGE;
	if ((buf = file_read(a->path, RECEIPT_MAX_BYTES, 0, &len, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", CLI_PROG, a->cmd, err);
		goto out;
	}
	chk = (struct receipt_check){ &suites, hex, (long long)time(NULL),
	    a->max_age_days * 86400 };
	if (receipt_verify(kr, buf, len, &chk, v, why, whylen) == -1) {
		fprintf(stderr, "%s: %s: %s: malformed receipt: %s\n", CLI_PROG,
		    a->cmd, a->path, why);
		goto out;
	}
	rc = 0;
out:
	free(buf);
	suite_set_free(&suites);
	bundle_keyring_free(kr);
	return rc;
}

/* 0 when the receipt is authentic (signed by an attester, for the binary
 * in hand, fresh), whatever its facts grade; else the typed exit code that
 * receipt verify and admit share. */
static int
authenticity_exit(enum receipt_reason r)
{
	switch (r) {
	case RECEIPT_UNTRUSTED_SIGNER:
		return CLI_EXIT_UNTRUSTED;
	case RECEIPT_BAD_SIGNATURE:
		return CLI_EXIT_BAD_SIGNATURE;
	case RECEIPT_REVISION_MISMATCH:
		return CLI_EXIT_REVISION;
	case RECEIPT_STALE:
	case RECEIPT_FUTURE:
		return CLI_EXIT_STALE;
	case RECEIPT_MALFORMED:
		return CLI_EXIT_USAGE;
	case RECEIPT_OK:
	case RECEIPT_FACTS_INCOMPLETE:
	case RECEIPT_NO_SELECTOR:
	case RECEIPT_UNKNOWN_SUITE:
		break;
	}
	return 0;
}

/* receipt sign REPORT --key ATTESTER.pem [--binary PATH]: the envelope
 * and a newline on stdout. */
static int
cmd_sign(int argc, char **argv)
{
	static const char *const names[] = { "--key", "--binary", NULL };
	struct cli_opts o = { "receipt", RECEIPTCMD_RECEIPT_USAGE, names,
	    { NULL }, NULL, 1 };
	char err[1024], note[256], hex[RECEIPT_SHA256_HEX + 1];
	char *buf = NULL, *canon = NULL, *env = NULL;
	struct receipt_report *r = NULL;
	struct suite_set suites = { NULL, 0 };
	const char *binary;
	EVP_PKEY *pk = NULL;
	size_t len, clen, i, ntrue = 0;
	int rc;

	if ((rc = cli_parse_opts(argc, argv, 1, &o)) != 0)
		return rc;
	if (o.operand == NULL || o.vals[0] == NULL)
		return cli_usage_error("receipt", RECEIPTCMD_RECEIPT_USAGE,
		    o.operand == NULL ? "missing REPORT" : "missing --key",
		    NULL);
	rc = CLI_EXIT_USAGE;
	if ((buf = file_read(o.operand, RECEIPT_MAX_BYTES, 0, &len, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: receipt sign: %s\n", CLI_PROG, err);
		goto out;
	}
	if (suite_builtin_load(&suites, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: receipt sign: %s\n", CLI_PROG, err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if ((r = receipt_report_parse(buf, len, &suites, (long long)time(NULL),
	    err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s: receipt sign: %s: %s\n", CLI_PROG, o.operand,
		    err);
		goto out;
	}
	if ((pk = ctlkeys_load_private(o.vals[0], err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s: receipt sign: %s\n", CLI_PROG, err);
		goto out;
	}
	binary = o.vals[1] != NULL ? o.vals[1] : receipt_report_guard_binary(r);
	if (receipt_file_sha256(binary, hex, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: receipt sign: binary: %s\n", CLI_PROG, err);
		goto out;
	}
	if (receipt_report_check_binary(r, hex, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s: receipt sign: %s: %s\n", CLI_PROG, binary, err);
		rc = CLI_EXIT_REVISION;
		goto out;
	}
	for (i = 0; i < RECEIPT_NFACTS; i++) {
		if (receipt_report_fact(r, i, note, sizeof(note)))
			ntrue++;
		else if (note[0] != '\0')
			fprintf(stderr, "%s: receipt sign: %s: false in the "
			    "receipt\n", CLI_PROG, note);
	}
	if ((canon = receipt_canonical(r, hex, &clen, err,
	    sizeof(err))) == NULL ||
	    (env = receiptcmd_sign_envelope(canon, clen, pk, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "%s: receipt sign: %s\n", CLI_PROG, err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (cli_print_all(env, strlen(env)) == -1 || cli_print_all("\n", 1) == -1) {
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	fprintf(stderr, "%s: receipt sign: %zu of %d facts true, binary %s "
	    "sha256:%s\n", CLI_PROG, ntrue, RECEIPT_NFACTS, binary, hex);
	rc = 0;
out:
	free(env);
	free(canon);
	EVP_PKEY_free(pk);
	receipt_report_free(r);
	suite_set_free(&suites);
	free(buf);
	return rc;
}

/* receipt verify RECEIPT --attesters DIR [--binary PATH] [--control SOCK
 * [--guard-uid N]] [--max-age DAYS]: the grade and a newline on stdout;
 * why it is not security_boundary on stderr. */
static int
cmd_verify(int argc, char **argv)
{
	static const char *const names[] = {
		"--attesters", "--binary", "--control", "--guard-uid",
		"--max-age", NULL
	};
	struct cli_opts o = { "receipt", RECEIPTCMD_RECEIPT_USAGE, names,
	    { NULL }, NULL, 1 };
	struct grade_args a = { "receipt verify", NULL, NULL, NULL, NULL, -1,
	    0 };
	struct receipt_verdict v;
	char why[1024];
	int rc;

	if ((rc = cli_parse_opts(argc, argv, 1, &o)) != 0)
		return rc;
	if (o.operand == NULL || o.vals[0] == NULL)
		return cli_usage_error("receipt", RECEIPTCMD_RECEIPT_USAGE,
		    o.operand == NULL ? "missing RECEIPT" :
		    "missing --attesters", NULL);
	if (o.vals[3] != NULL && o.vals[2] == NULL)
		return cli_usage_error("receipt", RECEIPTCMD_RECEIPT_USAGE,
		    "--guard-uid goes with --control", NULL);
	if ((rc = parse_max_age("receipt", RECEIPTCMD_RECEIPT_USAGE, o.vals[4],
	    &a.max_age_days)) != 0 || (rc = parse_guard_uid("receipt",
	    RECEIPTCMD_RECEIPT_USAGE, o.vals[3], &a.guard_uid)) != 0)
		return rc;
	a.path = o.operand;
	a.dir = o.vals[0];
	a.binary = o.vals[1];
	a.control = o.vals[2];
	if ((rc = grade_receipt(&a, &v, why, sizeof(why))) != 0)
		return rc;
	if (printf("%s\n", receipt_grade_name(v.grade)) < 0 ||
	    cli_print_all("", 0) == -1)
		return CLI_EXIT_FAIL;
	if (v.reason != RECEIPT_OK)
		fprintf(stderr, "%s: receipt verify: %s: %s: %s\n", CLI_PROG,
		    receipt_grade_name(v.grade), receipt_reason_name(v.reason),
		    why);
	/* The grade alone cannot gate a deployment: `verify && deploy` must
	 * stop on a receipt that is not authentic, whatever it grades. */
	return authenticity_exit(v.reason);
}

int
receiptcmd_cmd_receipt(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error(argv[0], RECEIPTCMD_RECEIPT_USAGE,
		    "missing sign, verify or show", NULL);
	if (strcmp(argv[1], "sign") == 0)
		return cmd_sign(argc - 1, argv + 1);
	if (strcmp(argv[1], "verify") == 0)
		return cmd_verify(argc - 1, argv + 1);
	return cli_usage_error(argv[0], RECEIPTCMD_RECEIPT_USAGE,
	    "unknown receipt command", argv[1]);
}

/* admit's options into o (vals: profile, grade, receipt, attesters,
 * binary, max-age, control, guard-uid) and a, the ones that exclude or
 * need each other checked, and a --grade parsed into *have (*have_grade
 * 1). 0, or an exit status. */
static int
admit_opts(int argc, char **argv, struct cli_opts *o, struct grade_args *a,
    enum receipt_grade *have, int *have_grade)
{
	const char *gradearg, *receipt, *attesters, *binary;
	int rc;

	if ((rc = cli_parse_opts(argc, argv, 1, o)) != 0)
		return rc;
	gradearg = o->vals[1];
	receipt = o->vals[2];
	attesters = o->vals[3];
	binary = o->vals[4];
	if (o->vals[0] == NULL)
		return cli_usage_error(o->cmd, o->usage, "missing --profile",
		    NULL);
	if (gradearg != NULL && receipt != NULL)
		return cli_usage_error(o->cmd, o->usage, "--grade and "
		    "--receipt exclude each other", NULL);
	if (receipt != NULL && attesters == NULL)
		return cli_usage_error(o->cmd, o->usage, "--receipt needs "
		    "--attesters", NULL);
	if (receipt == NULL && (attesters != NULL || binary != NULL ||
	    o->vals[5] != NULL || o->vals[6] != NULL || o->vals[7] != NULL ||
	    o->vals[9] != NULL))
		return cli_usage_error(o->cmd, o->usage, "--attesters, --binary, "
		    "--max-age, --control and --suite go with --receipt", NULL);
	if (o->vals[7] != NULL && o->vals[6] == NULL)
		return cli_usage_error(o->cmd, o->usage, "--guard-uid goes with "
		    "--control", NULL);
	if ((rc = parse_max_age(o->cmd, o->usage, o->vals[5],
	    &a->max_age_days)) != 0 || (rc = parse_guard_uid(o->cmd, o->usage,
	    o->vals[7], &a->guard_uid)) != 0)
		return rc;
	a->path = receipt;
	a->dir = attesters;
	a->binary = binary;
	a->control = o->vals[6];
	if (gradearg != NULL) {
		if (receipt_grade_parse(gradearg, have) == -1)
			return cli_usage_error(o->cmd, o->usage, "--grade must "
			    "be unsupported, advisory_filter or "
			    "security_boundary", gradearg);
		*have_grade = 1;
	}
	return 0;
}

/* Whether id is one of the comma-separated suite ids in list. */
static int
suite_listed(const char *list, const char *id)
{
	size_t n = strlen(id);
	const char *p = list, *e;

	if (n == 0)
		return 0;
	for (;;) {
		e = strchr(p, ',');
		if ((size_t)((e != NULL ? e : p + strlen(p)) - p) == n &&
		    memcmp(p, id, n) == 0)
			return 1;
		if (e == NULL)
			return 0;
		p = e + 1;
	}
}

/* The profile at path compiled at epoch 0, with the catalog at catpath
 * (NULL: none). NULL with err. */
static struct policy *
admit_profile(const char *path, const char *catpath, char *err, size_t errlen)
{
	struct catalog *cat = NULL;
	struct policy *p;
	char why[512];

	if (catpath != NULL &&
	    (cat = catalog_load_file(catpath, why, sizeof(why))) == NULL) {
		errbuf_set(err, errlen, "catalog %s", why);
		return NULL;
	}
	p = policy_compile_profile_file_cat(path, 0, cat, err, errlen);
	catalog_free(cat);
	return p;
}

/* admit --profile P [--grade G | --receipt R --attesters DIR [--binary B]
 * [--control SOCK [--guard-uid N]] [--max-age DAYS]] */
int
receiptcmd_cmd_admit(int argc, char **argv)
{
	static const char *const names[] = {
		"--profile", "--grade", "--receipt", "--attesters", "--binary",
		"--max-age", "--control", "--guard-uid", "--catalog", "--suite",
		NULL
	};
	struct cli_opts o = { "admit", RECEIPTCMD_ADMIT_USAGE, names, { NULL },
	    NULL, 0 };
	struct grade_args a = { "admit", NULL, NULL, NULL, NULL, -1, 0 };
	enum receipt_grade have = RECEIPT_UNSUPPORTED, need;
	const char *profile, *receipt, *attesters, *req;
	struct receipt_verdict v;
	struct policy *p = NULL;
	char err[1024], why[1024];
	int rc, have_grade = 0;

	memset(&v, 0, sizeof(v));
	if ((rc = admit_opts(argc, argv, &o, &a, &have, &have_grade)) != 0)
		return rc;
	profile = o.vals[0];
	receipt = o.vals[2];
	attesters = o.vals[3];

	/* Epoch 0: only the mode and the requirement are used here; a
	 * profile that asks for package managers compiles with the catalog
	 * it will be compiled with (--catalog), as compile does. */
	if ((p = admit_profile(profile, o.vals[8], err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s: admit: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	rc = CLI_EXIT_USAGE;
	need = RECEIPT_ADVISORY_FILTER;
	if (policy_mode(p) == POLICY_ALLOWLIST &&
	    (req = policy_required_grade(p)) != NULL &&
	    (receipt_grade_parse(req, &need) == -1 ||
	    need == RECEIPT_UNSUPPORTED)) {
		fprintf(stderr, "%s: admit: %s: required_egress_certification "
		    "must be advisory_filter or security_boundary\n", CLI_PROG,
		    profile);
		goto out;
	}

	/* A receipt given is always checked, whatever the profile: a
	 * forged or foreign receipt is refused, typed, before anything
	 * else happens. */
	if (receipt != NULL) {
		if ((rc = grade_receipt(&a, &v, why, sizeof(why))) != 0)
			goto out;
		if ((rc = authenticity_exit(v.reason)) != 0) {
			if (v.reason == RECEIPT_UNTRUSTED_SIGNER)
				fprintf(stderr, "%s: admit: untrusted signer: %s "
				    "(%s)\n", CLI_PROG, why, attesters);
			else
				fprintf(stderr, "%s: admit: %s: %s\n", CLI_PROG,
				    v.reason == RECEIPT_BAD_SIGNATURE ?
				    "bad signature" :
				    v.reason == RECEIPT_REVISION_MISMATCH ?
				    "revision mismatch" :
				    v.reason == RECEIPT_STALE ? "stale receipt" :
				    v.reason == RECEIPT_FUTURE ?
				    "receipt from the future" : "malformed receipt",
				    why);
			goto out;
		}
		have = v.grade;
		/* The target a grade speaks for is part of the requirement
		 * when the Runner names it: a receipt earned on another
		 * suite's cases does not count, whatever it grades. */
		if (o.vals[9] != NULL && !suite_listed(o.vals[9], v.suite_id)) {
			fprintf(stderr, "%s: admit: requirement not met: the receipt "
			    "is graded by suite %s, not one of %s\n", CLI_PROG,
			    v.suite_id[0] != '\0' ? v.suite_id : "(none known)",
			    o.vals[9]);
			rc = CLI_EXIT_NOT_MET;
			goto out;
		}
		have_grade = 1;
	}

	if (policy_mode(p) != POLICY_ALLOWLIST) {
		rc = printf("admitted: network_policy %s needs no grade\n",
		    policy_mode_name(policy_mode(p))) < 0 ||
		    cli_print_all("", 0) == -1 ? CLI_EXIT_FAIL : 0;
		goto out;
	}
	if (!have_grade) {
		rc = cli_usage_error(o.cmd, o.usage, "an allowlist profile needs "
		    "--grade or --receipt", NULL);
		goto out;
	}
	if (!receipt_grade_meets(have, need)) {
		fprintf(stderr, "%s: admit: requirement %s not met by grade "
		    "%s%s%s\n", CLI_PROG, receipt_grade_name(need),
		    receipt_grade_name(have), receipt != NULL &&
		    v.reason != RECEIPT_OK ? ": " : "", receipt != NULL &&
		    v.reason != RECEIPT_OK ? why : "");
		rc = CLI_EXIT_NOT_MET;
		goto out;
	}
	rc = printf("admitted: requirement %s met by grade %s%s%s\n",
	    receipt_grade_name(need), receipt_grade_name(have),
	    v.suite_id[0] != '\0' ? " on suite " : "", v.suite_id) < 0 ||
	    cli_print_all("", 0) == -1 ? CLI_EXIT_FAIL : 0;
out:
	policy_free(p);
	return rc;
}
