/* The policy authority (plane/plane.c): a pushed bundle checked on a
 * thread of its own, and what may and may not change while one is in
 * flight. Real keys, real bundles signed by ctl/keys.c, a real state
 * folder; each check's end is awaited on the pipe it writes to, never by
 * sleeping. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "ctl/keys.h"
#include "guard/config.h"
#include "plane/plane.h"
#include "plane/bundle.h"
#include "policy/catalog.h"
#include "policy/policy.h"
#include "util/file.h"

/* test_plane links with --wrap=safepath_open_path: once a path has passed
 * its check, the wrapper may rename swap_from over swap_to, as an owner of
 * a symlink in the path would between the check and a second open. */
int __real_safepath_open_path(const char *path, uid_t uid, char *err,
    size_t errlen);
int __wrap_safepath_open_path(const char *path, uid_t uid, char *err,
    size_t errlen);
static const char *swap_from, *swap_to;

int
__wrap_safepath_open_path(const char *path, uid_t uid, char *err,
    size_t errlen)
{
	int fd = __real_safepath_open_path(path, uid, err, errlen);

	if (fd != -1 && swap_from != NULL) {
		assert_int_equal(rename(swap_from, swap_to), 0);
		swap_from = NULL;
	}
	return fd;
}

struct fixture {
	char		 dir[64];	/* holds the keys and state/ */
	char		 state[96];
	char		 pub[96];
	char		 policy_file[96];
	EVP_PKEY	*key;		/* trusted */
	EVP_PKEY	*other;		/* not trusted */
	struct config	 cfg;
	struct plane	*pl;
	int		 pipe[2];	/* the checks' notify_fd, and its reader */
};

static void
write_file(const char *path, const char *s, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Whole file, NUL-terminated; NULL when it does not exist. */
static char *
read_all(const char *path, size_t *len)
{
	char err[256];

	if (access(path, F_OK) == -1)
		return NULL;
	return file_read(path, BUNDLE_MAX_BYTES, 0, len, err, sizeof(err));
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];
	FILE *fp;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/eg-plane-test-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	/* Keys in a folder of their own: a key's folder may not be
	 * writable by others even if sticky, f->dir will be. */
	snprintf(f->pub, sizeof(f->pub), "%s/keys", f->dir);
	assert_int_equal(mkdir(f->pub, 0755), 0);
	snprintf(f->pub, sizeof(f->pub), "%s/keys/k.pub.pem", f->dir);
	snprintf(f->policy_file, sizeof(f->policy_file), "%s/live.json", f->dir);
	assert_int_equal(mkdir(f->state, 0700), 0);
	f->key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	f->other = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	assert_non_null(f->key);
	assert_non_null(f->other);
	assert_non_null(fp = fopen(f->pub, "w"));
	assert_int_equal(PEM_write_PUBKEY(fp, f->key), 1);
	assert_int_equal(fclose(fp), 0);
	f->cfg.state_dir = f->state;
	f->cfg.policy_path = f->policy_file;
	f->cfg.trust_keys[0] = f->pub;
	f->cfg.ntrust_keys = 1;
	/* An operator's unsigned policy at epoch 0 to start from: the state
	 * folder is opened (plane_start), and nothing is stored yet. */
	{
		const char prof[] = "{\"network_policy\":\"none\"}";
		struct policy *p0 = policy_compile_profile(prof, sizeof(prof) - 1, 0,
		    err, sizeof(err));
		const char *canon;
		size_t clen;
		char warn[256];

		assert_non_null(p0);
		canon = policy_canonical(p0, &clen);
		write_file(f->policy_file, canon, clen);
		policy_free(p0);
		f->pl = plane_new(&f->cfg, geteuid(), err, sizeof(err));
		assert_non_null(f->pl);
		p0 = NULL;
		assert_int_equal(plane_start(f->pl, &p0, warn, sizeof(warn), err,
		    sizeof(err)), 0);
		assert_non_null(p0);
		policy_free(p0);
	}
	assert_int_equal(pipe(f->pipe), 0);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char path[160];

	plane_free(f->pl);
	EVP_PKEY_free(f->key);
	EVP_PKEY_free(f->other);
	close(f->pipe[0]);
	close(f->pipe[1]);
	snprintf(path, sizeof(path), "%s/bundle.json", f->state);
	(void)unlink(path);
	(void)rmdir(f->state);
	(void)unlink(f->pub);
	snprintf(path, sizeof(path), "%s/keys", f->dir);
	(void)rmdir(path);
	(void)unlink(f->policy_file);
	(void)rmdir(f->dir);
	free(f);
	return 0;
}

/* The bundle of p, signed by key; p freed. */
static char *
signed_bundle(struct policy *p, EVP_PKEY *key)
{
	char err[256], *b;
	const char *canon;
	size_t len;

	assert_non_null(p);
	canon = policy_canonical(p, &len);
	b = ctlkeys_sign_bytes(canon, len, key, err, sizeof(err));
	assert_non_null(b);
	policy_free(p);
	return b;
}

/* A bundle of a policy admitting host:443, at epoch, signed by key. */
static char *
bundle(EVP_PKEY *key, long long epoch, const char *host)
{
	char profile[256], err[256];

	snprintf(profile, sizeof(profile), "{\"network_policy\":\"allowlist\","
	    "\"allowed_hosts\":[\"%s:443\"]}", host);
	return signed_bundle(policy_compile_profile(profile, strlen(profile),
	    epoch, err, sizeof(err)), key);
}

/* A heap copy of the first len bytes of b, without a NUL: what the
 * control socket hands over. */
static char *
body_of(const char *b, size_t len)
{
	char *copy = malloc(len);

	assert_non_null(copy);
	memcpy(copy, b, len);
	return copy;
}

/* A check of b, left in flight; the check owns its copy of the bytes. */
static struct plane_check *
start(struct fixture *f, const char *b)
{
	struct plane_check *c = NULL;
	size_t len = strlen(b);
	char err[256];

	assert_int_equal(plane_check_start(f->pl, body_of(b, len), len, f->pipe[1],
	    &c, err, sizeof(err)), PLANE_OK);
	assert_non_null(c);
	return c;
}

/* Waits for the check's one notification, then collects it. */
static enum plane_verdict
finish(struct fixture *f, struct plane_check *c, struct policy **p)
{
	uint64_t n = 0;
	char err[512];

	assert_int_equal(read(f->pipe[0], &n, sizeof(n)), (ssize_t)sizeof(n));
	assert_int_equal(n, 1);
	assert_true(plane_check_done(c));
	return plane_check_finish(f->pl, c, p, err, sizeof(err));
}

/* Checks b to its end; on PLANE_OK installs it as the guard would. */
static enum plane_verdict
push(struct fixture *f, const char *b)
{
	struct policy *p = NULL;
	enum plane_verdict v = finish(f, start(f, b), &p);

	if (v == PLANE_OK) {
		assert_non_null(p);
		plane_installed(f->pl, p);
		policy_free(p);
	} else {
		assert_null(p);
	}
	return v;
}

static void
assert_state_is(struct fixture *f, const char *b)
{
	char path[160], *s;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/bundle.json", f->state);
	s = read_all(path, &len);
	if (b == NULL) {
		assert_null(s);
		return;
	}
	assert_non_null(s);
	assert_int_equal(len, strlen(b));
	assert_memory_equal(s, b, len);
	free(s);
}

static void
test_pushed_bundle_checked_off_thread_then_stored_and_installed(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example");

	assert_int_equal(push(f, b1), PLANE_OK);
	assert_state_is(f, b1);
	free(b1);
}

/* The body is exactly Content-Length bytes from malloc, with no NUL
 * after it (make sanitize sees any read past its end), and the caller
 * does not free it. */
static void
test_body_of_exactly_its_length_without_nul_is_the_bundle(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example");
	struct policy *p = NULL;

	assert_int_equal(finish(f, start(f, b1), &p), PLANE_OK);
	assert_int_equal(policy_epoch(p), 1);
	assert_true(policy_admits(p, "a.example", 443));
	policy_free(p);
	assert_state_is(f, b1);
	free(b1);
}

/* A truncated body (a caller that sent less than it announced would
 * never get this far, but the check must not rely on it) is refused. */
static void
test_hostile_truncated_body_refused_malformed(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example");
	struct plane_check *c = NULL;
	struct policy *p = NULL;
	size_t len = strlen(b1) - 1;
	char err[256];

	assert_int_equal(plane_check_start(f->pl, body_of(b1, len), len, f->pipe[1],
	    &c, err, sizeof(err)), PLANE_OK);
	assert_int_equal(finish(f, c, &p), PLANE_MALFORMED);
	assert_null(p);
	assert_state_is(f, NULL);
	free(b1);
}

static void
test_finish_waits_for_a_check_still_running(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example"), err[256];
	struct plane_check *c = start(f, b1);
	struct policy *p = NULL;
	uint64_t n;

	/* No wait for the notification: finish joins the thread. */
	assert_int_equal(plane_check_finish(f->pl, c, &p, err, sizeof(err)),
	    PLANE_OK);
	assert_int_equal(policy_epoch(p), 1);
	policy_free(p);
	assert_int_equal(read(f->pipe[0], &n, sizeof(n)), (ssize_t)sizeof(n));
	free(b1);
}

static void
test_hostile_second_check_while_one_runs_refused_busy(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example"), *b2 = bundle(f->key, 2, "b.example");
	struct plane_check *c = start(f, b1), *c2 = NULL;
	struct policy *p = NULL;
	char err[256] = "";

	/* Refused, and the body it was given is freed (make sanitize). */
	assert_int_equal(plane_check_start(f->pl, body_of(b2, strlen(b2)), strlen(b2),
	    f->pipe[1], &c2, err, sizeof(err)), PLANE_BUSY);
	assert_null(c2);
	assert_int_equal(plane_verdict_status(PLANE_BUSY), 503);
	assert_string_equal(plane_verdict_name(PLANE_BUSY), "busy");
	assert_int_equal(finish(f, c, &p), PLANE_OK);
	policy_free(p);
	/* Once it is collected, the next may start. */
	p = NULL;
	assert_int_equal(finish(f, start(f, b2), &p), PLANE_OK);
	policy_free(p);
	free(b1);
	free(b2);
}

static void
test_hostile_reload_while_a_check_runs_refused_busy(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example"), *b2 = bundle(f->key, 2, "b.example");
	struct plane_check *c;
	struct policy *p = NULL;
	char err[256];

	write_file(f->policy_file, b2, strlen(b2));
	c = start(f, b1);
	assert_int_equal(plane_reload(f->pl, &p, err, sizeof(err)), PLANE_BUSY);
	assert_null(p);
	assert_int_equal(finish(f, c, &p), PLANE_OK);
	plane_installed(f->pl, p);
	policy_free(p);
	p = NULL;
	/* Then it goes through, with the same checks. */
	assert_int_equal(plane_reload(f->pl, &p, err, sizeof(err)), PLANE_OK);
	assert_int_equal(policy_epoch(p), 2);
	policy_free(p);
	assert_state_is(f, b2);
	free(b1);
	free(b2);
}

/* SIGHUP's reload on a check thread: the file is read there, checked and
 * stored like a push; busy while a push is checked. */
static void
test_reload_start_reads_the_file_on_its_thread(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example"), *b2 = bundle(f->key, 2, "b.example");
	struct plane_check *c = start(f, b1), *r = NULL;
	struct policy *p = NULL;
	char err[256];

	write_file(f->policy_file, b2, strlen(b2));
	assert_int_equal(plane_reload_start(f->pl, f->pipe[1], &r, err,
	    sizeof(err)), PLANE_BUSY);
	assert_null(r);
	assert_int_equal(finish(f, c, &p), PLANE_OK);
	plane_installed(f->pl, p);
	policy_free(p);
	p = NULL;
	assert_int_equal(plane_reload_start(f->pl, f->pipe[1], &r, err,
	    sizeof(err)), PLANE_OK);
	assert_int_equal(finish(f, r, &p), PLANE_OK);
	assert_int_equal(policy_epoch(p), 2);
	policy_free(p);
	assert_state_is(f, b2);
	free(b1);
	free(b2);
}

static void
test_hostile_forged_signature_refused_state_and_floor_kept(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example"), *b2 = bundle(f->key, 2, "b.example");
	char *sig = strstr(b2, "\"signature\":\"");

	assert_int_equal(push(f, b1), PLANE_OK);
	assert_non_null(sig);
	sig[13] = sig[13] == 'A' ? 'B' : 'A';
	assert_int_equal(push(f, b2), PLANE_BAD_SIGNATURE);
	assert_state_is(f, b1);
	/* The floor is still epoch 1 with b1's digest. */
	assert_int_equal(push(f, b1), PLANE_SAME);
	free(b1);
	free(b2);
}

static void
test_hostile_untrusted_key_and_garbage_refused(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->other, 1, "a.example");

	assert_int_equal(push(f, b1), PLANE_UNKNOWN_KEY);
	assert_int_equal(push(f, "{\"not\":\"a bundle\"}"), PLANE_MALFORMED);
	assert_state_is(f, NULL);
	free(b1);
}

static void
test_epoch_rules_hold_for_checks(void **state)
{
	struct fixture *f = *state;
	char *b2 = bundle(f->key, 2, "a.example"), *b1 = bundle(f->key, 1, "a.example");
	char *b2x = bundle(f->key, 2, "b.example");

	assert_int_equal(push(f, b2), PLANE_OK);
	assert_int_equal(push(f, b1), PLANE_STALE_EPOCH);
	assert_int_equal(push(f, b2x), PLANE_EPOCH_CONFLICT);
	assert_int_equal(push(f, b2), PLANE_SAME);
	/* Refused ones never reach the state folder. */
	assert_state_is(f, b2);
	free(b1);
	free(b2);
	free(b2x);
}

/* A bundle of the profile with package managers npm, expanded from a
 * catalog of the given version (npm's hosts the same in each). */
static char *
bundle_cat(EVP_PKEY *key, long long epoch, const char *version)
{
	static const char prof[] = "{\"network_policy\":\"allowlist\","
	    "\"allowed_hosts\":[\"a.example:443\"],\"allow_package_managers\":"
	    "true,\"package_managers\":[\"npm\"]}";
	char cat[256], err[256], *b;
	struct catalog *c;

	snprintf(cat, sizeof(cat), "{\"schema\":\"egress-guard.catalog.v1\","
	    "\"version\":\"%s\",\"ecosystems\":{\"npm\":"
	    "[\"registry.npm.example.test:443\"]}}", version);
	c = catalog_parse(cat, strlen(cat), err, sizeof(err));
	assert_non_null(c);
	b = signed_bundle(policy_compile_profile_cat(prof, sizeof(prof) - 1,
	    epoch, c, err, sizeof(err)), key);
	catalog_free(c);
	return b;
}

/* A preset update is a policy change: the same profile compiled with a
 * newer catalog is another digest, refused at the epoch already run,
 * taken at the next one. */
static void
test_newer_catalog_same_epoch_refused_conflict(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle_cat(f->key, 3, "2026-11"), *b2 = bundle_cat(f->key, 3, "2026-12");
	char *b3 = bundle_cat(f->key, 4, "2026-12");

	assert_int_equal(push(f, b1), PLANE_OK);
	assert_int_equal(push(f, b2), PLANE_EPOCH_CONFLICT);
	assert_state_is(f, b1);
	assert_int_equal(push(f, b3), PLANE_OK);
	free(b1);
	free(b2);
	free(b3);
}

/* A bundle whose policy is edited by hand to say an entry came from the
 * profile, not the package manager that granted it, no longer verifies:
 * the provenance is inside the signed bytes. */
static void
test_hostile_edited_provenance_refused_by_signature(void **state)
{
	static const char via[] = ",\"via\":\"package_managers:npm\"";
	struct fixture *f = *state;
	char *b = bundle_cat(f->key, 5, "2026-12"), *canon, *at, *b64, *forged;
	const char *pol = strstr(b, "\"policy\":\"") + 10, *end;
	unsigned char *raw;
	size_t rlen, n;
	int outl, fin;

	end = strchr(pol, '"');
	raw = bundle_b64_decode(pol, (size_t)(end - pol), &rlen);
	assert_non_null(raw);
	canon = calloc(1, rlen + 1);
	assert_non_null(canon);
	memcpy(canon, raw, rlen);
	assert_non_null(at = strstr(canon, via));
	memmove(at, at + sizeof(via) - 1, strlen(at + sizeof(via) - 1) + 1);
	n = strlen(canon);
	b64 = calloc(1, n * 2 + 8);
	assert_non_null(b64);
	/* Standard, padded, one line: the spelling bundles use. */
	outl = EVP_EncodeBlock((unsigned char *)b64, (unsigned char *)canon, (int)n);
	assert_true(outl > 0);
	fin = (int)(pol - b);
	forged = calloc(1, strlen(b) + (size_t)outl + 8);
	assert_non_null(forged);
	memcpy(forged, b, (size_t)fin);
	memcpy(forged + fin, b64, (size_t)outl);
	strcat(forged, end);
	assert_int_equal(push(f, forged), PLANE_BAD_SIGNATURE);
	assert_state_is(f, NULL);
	/* The control: the bundle as signed is taken. */
	assert_int_equal(push(f, b), PLANE_OK);
	free(raw);
	free(canon);
	free(b64);
	free(forged);
	free(b);
}

static void
test_store_failure_refused_nothing_changes(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example"), tmp[160];

	/* A folder where the temporary copy goes: it cannot be opened for
	 * writing (root or not). */
	snprintf(tmp, sizeof(tmp), "%s/.bundle.json.tmp", f->state);
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_int_equal(push(f, b1), PLANE_STORE_FAILED);
	assert_int_equal(plane_verdict_status(PLANE_STORE_FAILED), 500);
	assert_int_equal(rmdir(tmp), 0);
	/* Not installed: the same bundle is new, not "unchanged". */
	assert_int_equal(push(f, b1), PLANE_OK);
	assert_state_is(f, b1);
	free(b1);
}

/* A new plane on the fixture's folder as a restart would make it, with
 * no --policy and pub as the one trusted key. Returns plane_start's
 * result; *pl and *out are the caller's to free. */
static int
restart(struct fixture *f, const char *pub, struct plane **pl,
    struct policy **out, char *err, size_t errlen)
{
	struct config cfg;
	char warn[256];

	memset(&cfg, 0, sizeof(cfg));
	cfg.state_dir = f->state;
	cfg.trust_keys[0] = pub;
	cfg.ntrust_keys = 1;
	*out = NULL;
	/* NULL (plane_free takes it) when a key file is refused. */
	if ((*pl = plane_new(&cfg, geteuid(), err, errlen)) == NULL)
		return -1;
	return plane_start(*pl, out, warn, sizeof(warn), err, errlen);
}

static void
test_restart_keeps_the_floor_stale_epoch_refused(void **state)
{
	struct fixture *f = *state;
	char *b5 = bundle(f->key, 5, "a.example"), *b1 = bundle(f->key, 1, "b.example");
	struct plane *pl;
	struct policy *p;
	char err[512];

	assert_int_equal(push(f, b5), PLANE_OK);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), 0);
	assert_non_null(p);
	assert_int_equal(policy_epoch(p), 5);
	assert_int_equal(plane_floor_epoch(pl), 5);
	policy_free(p);
	plane_free(f->pl);
	f->pl = pl;
	assert_int_equal(push(f, b1), PLANE_STALE_EPOCH);
	free(b5);
	free(b1);
}

/* StrictModes for the state folder: a folder others can write is
 * refused at start; the same folder at 0700 (the negative control) and
 * 0755 is accepted. */
static void
test_hostile_state_dir_writable_by_others_refused(void **state)
{
	struct fixture *f = *state;
	static const mode_t bad[] = { 0777, 0770, 0702, 01777 };
	struct plane *pl;
	struct policy *p;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(chmod(f->state, bad[i]), 0);
		assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "writable by"));
		plane_free(pl);
	}
	assert_int_equal(chmod(f->state, 0700), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), 0);
	plane_free(pl);
	assert_int_equal(chmod(f->state, 0755), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), 0);
	plane_free(pl);
}

/* A folder above it: writable by others only with the sticky bit (as
 * /tmp). */
static void
test_hostile_folder_above_writable_by_others_refused_unless_sticky(void **state)
{
	struct fixture *f = *state;
	struct plane *pl;
	struct policy *p;
	char err[512];

	assert_int_equal(chmod(f->dir, 0777), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), -1);
	/* The key file's folder or the state folder's parent: either way
	 * f->dir is named. */
	assert_non_null(strstr(err, f->dir));
	assert_non_null(strstr(err, "writable by anyone"));
	plane_free(pl);
	assert_int_equal(chmod(f->dir, 01777), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), 0);
	plane_free(pl);
	assert_int_equal(chmod(f->dir, 0700), 0);
}

static void
test_hostile_bundle_json_others_could_change_refused(void **state)
{
	struct fixture *f = *state;
	char *b1 = bundle(f->key, 1, "a.example"), path[160], alias[160];
	struct plane *pl;
	struct policy *p;
	char err[512];

	assert_int_equal(push(f, b1), PLANE_OK);
	snprintf(path, sizeof(path), "%s/bundle.json", f->state);
	snprintf(alias, sizeof(alias), "%s/alias.json", f->dir);
	assert_int_equal(chmod(path, 0620), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "writable by its group"));
	plane_free(pl);
	assert_int_equal(chmod(path, 0600), 0);
	/* A second name for it, elsewhere: whoever holds that one can
	 * change it. */
	assert_int_equal(link(path, alias), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "one link"));
	plane_free(pl);
	assert_int_equal(unlink(alias), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "owned by uid 65534"));
		plane_free(pl);
		assert_int_equal(chown(path, 0, 0), 0);
	}
	/* Negative control: the same file, 0600 and ours, is accepted. */
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), 0);
	assert_non_null(p);
	policy_free(p);
	plane_free(pl);
	free(b1);
}

static void
test_hostile_state_dir_owned_by_another_uid_refused(void **state)
{
	struct fixture *f = *state;
	struct plane *pl;
	struct policy *p;
	char err[512];

	if (geteuid() != 0)
		skip();
	assert_int_equal(chown(f->state, 65534, 65534), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "owned by uid 65534"));
	plane_free(pl);
	assert_int_equal(chown(f->state, 0, 0), 0);
}

/* A link in the folder's place is refused, not followed; a link in a
 * bundle.json's place too. */
static void
test_hostile_symlinked_state_dir_and_bundle_refused(void **state)
{
	struct fixture *f = *state;
	char real[160], path[160];
	struct plane *pl;
	struct policy *p;
	char err[512];

	snprintf(real, sizeof(real), "%s/real", f->dir);
	assert_int_equal(rename(f->state, real), 0);
	assert_int_equal(symlink(real, f->state), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	plane_free(pl);
	assert_int_equal(unlink(f->state), 0);
	assert_int_equal(rename(real, f->state), 0);
	snprintf(path, sizeof(path), "%s/bundle.json", f->state);
	assert_int_equal(symlink(f->pub, path), 0);
	assert_int_equal(restart(f, f->pub, &pl, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "symbolic link"));
	plane_free(pl);
	assert_int_equal(unlink(path), 0);
}

/* Key rotation: the stored bundle's key is no longer trusted. The guard
 * starts, runs no policy, and keeps the stored epoch as the floor; the
 * same policy signed by the new key is installed (not "unchanged"). */
static void
test_rotated_key_keeps_floor_denies_until_trusted_bundle(void **state)
{
	struct fixture *f = *state;
	char *b5 = bundle(f->key, 5, "a.example"), *n3 = bundle(f->other, 3, "b.example");
	char *n5 = bundle(f->other, 5, "a.example"), *n5x = bundle(f->other, 5, "c.example");
	char newpub[160], err[512];
	struct plane *pl;
	struct policy *p;
	FILE *fp;

	assert_int_equal(push(f, b5), PLANE_OK);
	snprintf(newpub, sizeof(newpub), "%s/keys/new.pub.pem", f->dir);
	assert_non_null(fp = fopen(newpub, "w"));
	assert_int_equal(PEM_write_PUBKEY(fp, f->other), 1);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(restart(f, newpub, &pl, &p, err, sizeof(err)), 0);
	assert_null(p);
	assert_int_equal(plane_floor_epoch(pl), 5);
	assert_non_null(strstr(plane_floor_note(pl), "is not trusted"));
	plane_free(f->pl);
	f->pl = pl;
	assert_int_equal(push(f, n3), PLANE_STALE_EPOCH);
	assert_int_equal(push(f, n5x), PLANE_EPOCH_CONFLICT);
	assert_int_equal(push(f, b5), PLANE_UNKNOWN_KEY);
	assert_int_equal(push(f, n5), PLANE_OK);
	assert_string_equal(plane_floor_note(f->pl), "");
	assert_state_is(f, n5);
	assert_int_equal(unlink(newpub), 0);
	free(b5);
	free(n3);
	free(n5);
	free(n5x);
}

/* An unsigned --policy file is taken on its word: one that others could
 * write is refused at SIGHUP (and at start), the same file 0644 is not. */
static void
test_hostile_policy_file_writable_by_others_refused(void **state)
{
	struct fixture *f = *state;
	struct policy *p = NULL;
	char err[512];

	assert_int_equal(chmod(f->policy_file, 0646), 0);
	assert_int_equal(plane_reload(f->pl, &p, err, sizeof(err)), PLANE_MALFORMED);
	assert_null(p);
	assert_non_null(strstr(err, "writable by anyone"));
	assert_int_equal(chmod(f->policy_file, 0644), 0);
	assert_int_equal(plane_reload(f->pl, &p, err, sizeof(err)), PLANE_SAME);
}

/* Whoever can write a trust key can sign any policy. */
static void
test_hostile_trust_key_writable_by_others_refused(void **state)
{
	struct fixture *f = *state;
	struct plane *pl;
	char err[512];

	assert_int_equal(chmod(f->pub, 0664), 0);
	assert_null(pl = plane_new(&f->cfg, geteuid(), err, sizeof(err)));
	assert_non_null(strstr(err, "writable by its group"));
	/* Control: the same key file 0644. */
	assert_int_equal(chmod(f->pub, 0644), 0);
	assert_non_null(pl = plane_new(&f->cfg, geteuid(), err, sizeof(err)));
	plane_free(pl);
}

/* Hostile: the trust key's path runs through a symlink its owner flips
 * from the operator's key folder to one of theirs right after the check.
 * The key must come from the descriptor that was checked. */
static void
test_hostile_trust_key_swapped_after_its_check_not_read(void **state)
{
	struct fixture *f = *state;
	char evil[128], pub[128], link[128], flip[128], err[512], warn[256];
	struct policy *p0 = NULL;
	struct config cfg = f->cfg;
	char *b;
	FILE *fp;

	snprintf(evil, sizeof(evil), "%s/evil", f->dir);
	assert_int_equal(mkdir(evil, 0755), 0);
	snprintf(pub, sizeof(pub), "%s/evil/k.pub.pem", f->dir);
	assert_non_null(fp = fopen(pub, "w"));
	assert_int_equal(PEM_write_PUBKEY(fp, f->other), 1);
	assert_int_equal(fclose(fp), 0);
	snprintf(link, sizeof(link), "%s/link", f->dir);
	snprintf(flip, sizeof(flip), "%s/link.flip", f->dir);
	assert_int_equal(symlink("keys", link), 0);
	assert_int_equal(symlink("evil", flip), 0);
	snprintf(pub, sizeof(pub), "%s/link/k.pub.pem", f->dir);
	cfg.trust_keys[0] = pub;

	plane_free(f->pl);		/* one plane per state folder */
	swap_from = flip;
	swap_to = link;
	f->pl = plane_new(&cfg, geteuid(), err, sizeof(err));
	assert_non_null(f->pl);
	assert_null(swap_from);		/* the flip happened */
	assert_int_equal(plane_start(f->pl, &p0, warn, sizeof(warn), err,
	    sizeof(err)), 0);
	policy_free(p0);
	b = bundle(f->other, 5, "evil.test");
	assert_int_equal(push(f, b), PLANE_UNKNOWN_KEY);
	free(b);
	/* Control: the checked key is the one trusted. */
	b = bundle(f->key, 5, "api.test");
	assert_int_equal(push(f, b), PLANE_OK);
	free(b);
	(void)unlink(link);
	(void)unlink(pub);
	snprintf(pub, sizeof(pub), "%s/evil/k.pub.pem", f->dir);
	(void)unlink(pub);
	(void)rmdir(evil);
}

static void
test_unavailable_is_a_503(void **state)
{
	(void)state;
	assert_int_equal(plane_verdict_status(PLANE_UNAVAILABLE), 503);
	assert_string_equal(plane_verdict_name(PLANE_UNAVAILABLE), "unavailable");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_pushed_bundle_checked_off_thread_then_stored_and_installed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_body_of_exactly_its_length_without_nul_is_the_bundle, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_truncated_body_refused_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_finish_waits_for_a_check_still_running, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_second_check_while_one_runs_refused_busy, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_reload_while_a_check_runs_refused_busy, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_reload_start_reads_the_file_on_its_thread, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_forged_signature_refused_state_and_floor_kept,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_untrusted_key_and_garbage_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_trust_key_swapped_after_its_check_not_read, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_epoch_rules_hold_for_checks,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_newer_catalog_same_epoch_refused_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_edited_provenance_refused_by_signature, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_store_failure_refused_nothing_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_restart_keeps_the_floor_stale_epoch_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_state_dir_writable_by_others_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_folder_above_writable_by_others_refused_unless_sticky,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_bundle_json_others_could_change_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_state_dir_owned_by_another_uid_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_symlinked_state_dir_and_bundle_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_rotated_key_keeps_floor_denies_until_trusted_bundle, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_policy_file_writable_by_others_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_hostile_trust_key_writable_by_others_refused, setup,
		    teardown),
		cmocka_unit_test(test_unavailable_is_a_503),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
