#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard/config.h"
#include "plane/plane.h"
#include "plane/bundle.h"
#include "plane/bundlepeek.h"
#include "plane/prule.h"
#include "plane/pstore.h"
#include "policy/policy.h"
#include "util/errbuf.h"
#include "util/safepath.h"
#include "util/thread.h"

#define PLANE_STATE_FILE	"bundle.json"
#define PLANE_STATE_TMP		".bundle.json.tmp"
/* Tenant mode (docs/design.md "Tenants"): the tenant list, and a folder
 * per tenant holding that tenant's bundle.json. */
#define PLANE_TENANTS_FILE	"tenants.json"
#define PLANE_TENANTS_TMP	".tenants.json.tmp"
#define PLANE_TENANTS_DIR	"tenants"
#define PLANE_TENANTS_MAX	(4u * 1024 * 1024)	/* the list's file */

struct plane {
	struct bundle_keyring	*kr;
	int			 own_kr;	/* a tenant's plane shares its parent's */
	/* The tenant whose policies this plane accepts: a policy must name
	 * it; "" (no tenant) refuses every policy that names one. */
	char			 tenant[POLICY_TENANT_MAX + 1];
	char			*dir_own;	/* a tenant's state_dir, allocated */
	const char		*state_dir;	/* NULL: --no-state */
	int			 state_default;	/* may be created */
	int			 state_fd;	/* the folder, opened once; -1 */
	uid_t			 owner;		/* may own it besides root */
	char			 floor_note[512];	/* why there is no active policy */
	const char		*policy_path;
	struct prule_floor		 floor;
	char			 pending_signer[BUNDLE_KEY_ID_LEN + 1];
	int			 busy;		/* a check is in flight */
};

/* One policy change being checked. Everything the work reads is fixed
 * before it starts (the keyring does not change after start-up, the floor
 * is a copy), and everything it writes is read back only after the join:
 * the thread shares nothing mutable with the loop. */
struct plane_check {
	const struct bundle_keyring *kr;
	const char	*tenant;	/* the plane's: it outlives the check */
	const char	*state_dir;	/* for messages */
	int		 state_fd;	/* -1: nothing to store */
	const char	*origin;	/* the --policy path, read first (a
					   reload), or NULL: pushed */
	uid_t		 owner;		/* may own origin besides root */
	struct prule_floor	 floor;
	char		*buf;		/* the bytes, owned by the check */
	size_t		 len;
	int		 notify_fd;
	int		 list;		/* buf is the tenant list: store it */

	enum plane_verdict v;
	struct policy	*p;
	char		 signer[BUNDLE_KEY_ID_LEN + 1];
	char		 err[1024];

	pthread_t	 thread;
	atomic_int	 done;
};

const char *
plane_verdict_name(enum plane_verdict v)
{
	switch (v) {
	case PLANE_OK:			return "ok";
	case PLANE_SAME:		return "unchanged";
	case PLANE_MALFORMED:		return "malformed";
	case PLANE_UNKNOWN_KEY:		return "unknown_key";
	case PLANE_BAD_SIGNATURE:	return "bad_signature";
	case PLANE_STALE_EPOCH:		return "stale_epoch";
	case PLANE_EPOCH_CONFLICT:	return "epoch_conflict";
	case PLANE_STORE_FAILED:	return "store_failed";
	case PLANE_BUSY:		return "busy";
	case PLANE_UNAVAILABLE:		return "unavailable";
	case PLANE_NO_POLICY_FILE:	return "no_policy_file";
	case PLANE_WRONG_TENANT:	return "wrong_tenant";
	}
	return "internal_error";
}

int
plane_verdict_status(enum plane_verdict v)
{
	switch (v) {
	case PLANE_OK:
	case PLANE_SAME:		return 200;
	case PLANE_MALFORMED:		return 400;
	case PLANE_UNKNOWN_KEY:
	case PLANE_BAD_SIGNATURE:
	case PLANE_WRONG_TENANT:	return 403;
	case PLANE_STALE_EPOCH:
	case PLANE_EPOCH_CONFLICT:	return 409;
	case PLANE_STORE_FAILED:	return 500;
	case PLANE_BUSY:
	case PLANE_UNAVAILABLE:		return 503;
	case PLANE_NO_POLICY_FILE:	return 500;	/* never a push's */
	}
	return 500;
}

struct plane *
plane_new(const struct config *cfg, uid_t owner, char *err, size_t errlen)
{
	struct plane *pl;
	size_t i;
	int rc;

	if ((pl = calloc(1, sizeof(*pl))) == NULL ||
	    (pl->kr = bundle_keyring_new()) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		plane_free(pl);
		return NULL;
	}
	pl->own_kr = 1;
	pl->state_dir = cfg->state_dir;
	pl->state_default = cfg->state_default;
	pl->state_fd = -1;
	pl->owner = owner;
	pl->policy_path = cfg->policy_path;
	pl->floor.epoch = -1;
	for (i = 0; i < cfg->ntrust_keys; i++) {
		char why[512];
		int fd;

		/* Whoever can write a trust key can sign any policy: the key
		 * file and its folders get the state folder's rules, and the
		 * key is read from the descriptor they were checked on. Read
		 * again by name, a symlink in the path that its owner flips
		 * between the check and the read would swap the key. */
		if ((fd = safepath_open_path(cfg->trust_keys[i], owner, why,
		    sizeof(why))) == -1) {
			errbuf_set(err, errlen, "--trust-key: %s", why);
			plane_free(pl);
			return NULL;
		}
		rc = bundle_keyring_add_fd(pl->kr, fd, cfg->trust_keys[i], err,
		    errlen);
		close(fd);
		if (rc == -1) {
			plane_free(pl);
			return NULL;
		}
	}
	return pl;
}

void
plane_free(struct plane *pl)
{
	if (pl == NULL)
		return;
	if (pl->own_kr)
		bundle_keyring_free(pl->kr);
	if (pl->state_fd != -1)
		close(pl->state_fd);
	free(pl->dir_own);
	free(pl);
}

size_t
plane_trusted_keys(const struct plane *pl)
{
	return bundle_keyring_count(pl->kr);
}

const char *
plane_signer(const struct plane *pl)
{
	return pl->floor.signer;
}

void
plane_installed(struct plane *pl, const struct policy *p)
{
	if (p == NULL)
		return;
	pl->floor.epoch = policy_epoch(p);
	snprintf(pl->floor.digest, sizeof(pl->floor.digest), "%s", policy_digest(p));
	pl->floor.active = 1;
	pl->floor_note[0] = '\0';
	memcpy(pl->floor.signer, pl->pending_signer, sizeof(pl->floor.signer));
}

static int
store(int dfd, const char *state_dir, const char *buf, size_t len, char *err,
    size_t errlen)
{
	return pstore_write(dfd, state_dir, PLANE_STATE_FILE, PLANE_STATE_TMP, buf,
	    len, err, errlen);
}

/* The bytes into a policy: a bundle (always, when pushed) is verified, an
 * operator's file may also be an unsigned compiled policy. Messages about
 * a file start with its path. */
static enum plane_verdict
check_parse(struct plane_check *c, int bundle)
{
	char why[512];
	int taken = 0;

	if (bundle)
		c->v = prule_bundle(c->kr, c->buf, c->len, &c->p, c->signer, why, sizeof(why));
	else if ((c->p = policy_parse_take(c->buf, 0, c->len, &taken, why,
	    sizeof(why))) != NULL)
		c->v = PLANE_OK;
	else
		c->v = PLANE_MALFORMED;
	/* Canonical bytes are the policy's own now: not copied, not freed. */
	if (taken)
		c->buf = NULL;
	if (c->v != PLANE_OK && c->origin != NULL)
		errbuf_set(c->err, sizeof(c->err), "%s: %s", c->origin, why);
	else if (c->v != PLANE_OK)
		errbuf_set(c->err, sizeof(c->err), "%s", why);
	return c->v;
}

/* The whole check, pure work on whatever thread runs it: read --policy
 * (a reload), parse and verify, the epoch rule against the floor it was
 * given, then persist a bundle that passed. The floor cannot move
 * meanwhile: one check at a time (busy), and each is installed before
 * the next starts. */
static void
check_work(struct plane_check *c)
{
	int bundle;

	/* The tenant list: written as a bundle is, nothing to parse. */
	if (c->list) {
		c->v = pstore_write(c->state_fd, c->state_dir, PLANE_TENANTS_FILE,
		    PLANE_TENANTS_TMP, c->buf, c->len, c->err, sizeof(c->err)) == 0 ?
		    PLANE_OK : PLANE_STORE_FAILED;
		free(c->buf);
		c->buf = NULL;
		return;
	}

	/* An unsigned compiled policy is taken on the file's word: the file
	 * and its folders get the state folder's rules. */
	if (c->origin != NULL && (c->buf = pstore_read_path(c->origin, "--policy",
	    c->owner, POLICY_MAX_BYTES, &c->len, c->err, sizeof(c->err))) == NULL) {
		c->v = PLANE_MALFORMED;
		return;
	}
	bundle = c->origin == NULL || bundle_is_envelope(c->buf, c->len);
	if (check_parse(c, bundle) == PLANE_OK &&
	    (c->v = prule_tenant(c->tenant, c->p, c->err, sizeof(c->err))) == PLANE_OK)
		c->v = prule_epoch(&c->floor, c->p, c->signer, c->err,
		    sizeof(c->err));
	if (c->v == PLANE_OK && bundle &&
	    store(c->state_fd, c->state_dir, c->buf, c->len, c->err,
	    sizeof(c->err)) == -1)
		c->v = PLANE_STORE_FAILED;
	if (c->v != PLANE_OK) {
		policy_free(c->p);
		c->p = NULL;
	}
	free(c->buf);
	c->buf = NULL;
}

static void
check_free(struct plane_check *c)
{
	if (c == NULL)
		return;
	free(c->buf);
	policy_free(c->p);
	free(c);
}

/* NULL when out of memory. */
static struct plane_check *
check_new(const struct plane *pl, const char *origin)
{
	struct plane_check *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->kr = pl->kr;
	c->tenant = pl->tenant;
	c->state_dir = pl->state_dir;
	c->state_fd = pl->state_fd;
	c->origin = origin;
	c->owner = pl->owner;
	c->floor = pl->floor;
	c->notify_fd = -1;
	atomic_init(&c->done, 0);
	return c;
}

/* Back with the caller: the result, and the epoch rule once more against
 * the live floor. It cannot have moved (see check_work); re-applying it
 * means a caller that broke that could still never install below it. */
static enum plane_verdict
check_end(struct plane *pl, struct plane_check *c, struct policy **out,
    char *err, size_t errlen)
{
	enum plane_verdict v = c->v;

	*out = NULL;
	errbuf_set(err, errlen, "%s", c->err);
	if (v == PLANE_OK && c->p != NULL)
		v = prule_epoch(&pl->floor, c->p, c->signer, err, errlen);
	if (v == PLANE_OK && c->p != NULL) {
		*out = c->p;
		c->p = NULL;
		memcpy(pl->pending_signer, c->signer, sizeof(pl->pending_signer));
	}
	check_free(c);
	return v;
}

/* The check thread keeps the loop's priority: lowering it (setpriority)
 * is in systemd's @resources group, which the shipped unit denies, and on
 * a busy machine the scheduler already shares the CPUs between the two. */
static void *
check_thread(void *arg)
{
	struct plane_check *c = arg;
	uint64_t one = 1;

	check_work(c);
	atomic_store(&c->done, 1);
	while (write(c->notify_fd, &one, sizeof(one)) == -1 && errno == EINTR)
		;
	return NULL;
}

/* A check of body (len bytes; NULL: a reload, which reads origin on its
 * thread). NULL with *v and err while another is in flight or out of
 * memory; body is freed then. */
static struct plane_check *
check_begin(struct plane *pl, const char *origin, char *body, size_t len,
    enum plane_verdict *v, char *err, size_t errlen)
{
	struct plane_check *c;

	if (pl->busy) {
		free(body);
		errbuf_set(err, errlen, "another policy change is being checked");
		*v = PLANE_BUSY;
		return NULL;
	}
	if ((c = check_new(pl, origin)) == NULL) {
		free(body);
		errbuf_set(err, errlen, "cannot check %s: out of memory",
		    origin != NULL ? "--policy" : "the bundle");
		*v = PLANE_UNAVAILABLE;
		return NULL;
	}
	/* From here check_free frees the body with the check. */
	c->buf = body;
	c->len = len;
	return c;
}

/* Runs c on a thread of its own, which writes to notify_fd when done. */
static enum plane_verdict
check_launch(struct plane *pl, struct plane_check *c, int notify_fd,
    struct plane_check **out, char *err, size_t errlen)
{
	int rc;

	c->notify_fd = notify_fd;
	if ((rc = thread_start(&c->thread, check_thread, c)) != 0) {
		char why[128];
		errbuf_set(err, errlen, "cannot start a thread to check %s: %s",
		    c->origin != NULL ? "--policy" : "the bundle",
		    strerror_r(rc, why, sizeof(why)));
		check_free(c);
		return PLANE_UNAVAILABLE;
	}
	pl->busy = 1;
	*out = c;
#ifdef EG_MUTANT_SYNC_CHECK
	/* Mutant: the loop waits for the check, as a guard that checked on
	 * its own thread would stall; bench/stall.py must see it. */
	while (!plane_check_done(c))
		(void)usleep(100);
#endif
	return PLANE_OK;
}

enum plane_verdict
plane_check_start(struct plane *pl, char *body, size_t len, int notify_fd,
    struct plane_check **out, char *err, size_t errlen)
{
	struct plane_check *c;
	enum plane_verdict v;

	*out = NULL;
	if ((c = check_begin(pl, NULL, body, len, &v, err, errlen)) == NULL)
		return v;
	return check_launch(pl, c, notify_fd, out, err, errlen);
}

/* A check that reads --policy, as check_begin. */
static struct plane_check *
reload_begin(struct plane *pl, enum plane_verdict *v, char *err, size_t errlen)
{
	if (pl->policy_path == NULL) {
		errbuf_set(err, errlen, "no --policy file to reload");
		*v = PLANE_NO_POLICY_FILE;
		return NULL;
	}
	return check_begin(pl, pl->policy_path, NULL, 0, v, err, errlen);
}

enum plane_verdict
plane_reload_start(struct plane *pl, int notify_fd, struct plane_check **out,
    char *err, size_t errlen)
{
	struct plane_check *c;
	enum plane_verdict v;

	*out = NULL;
	if ((c = reload_begin(pl, &v, err, errlen)) == NULL)
		return v;
	return check_launch(pl, c, notify_fd, out, err, errlen);
}

int
plane_check_done(const struct plane_check *c)
{
	return atomic_load(&c->done);
}

enum plane_verdict
plane_check_finish(struct plane *pl, struct plane_check *c, struct policy **out,
    char *err, size_t errlen)
{
	(void)pthread_join(c->thread, NULL);
	pl->busy = 0;
	return check_end(pl, c, out, err, errlen);
}

enum plane_verdict
plane_reload(struct plane *pl, struct policy **out, char *err, size_t errlen)
{
	struct plane_check *c;
	enum plane_verdict v;

	*out = NULL;
	if ((c = reload_begin(pl, &v, err, errlen)) == NULL)
		return v;
	check_work(c);
	return check_end(pl, c, out, err, errlen);
}

/* The state folder, opened once: the default one is made 0700 when it
 * is not there yet (a first start); a named one must exist, since a typo
 * would otherwise start a new, empty floor. */
static int
open_state(struct plane *pl, char *err, size_t errlen)
{
	char why[512];

	if (pl->state_default && mkdir(pl->state_dir, 0700) == -1 && errno != EEXIST) {
		errbuf_set(err, errlen, "--state-dir %s (the default): cannot create it: "
		    "%s (name another with --state-dir, or --no-state)", pl->state_dir,
		    strerror(errno));
		return -1;
	}
	if ((pl->state_fd = safepath_open_dir(pl->state_dir, pl->owner, why,
	    sizeof(why))) == -1) {
		errbuf_set(err, errlen, "--state-dir: %s", why);
		return -1;
	}
	return 0;
}

/* A stored bundle whose key is not trusted any more (the keys were
 * rotated): its signature cannot be checked, so its policy is not run,
 * but its epoch is still the last one accepted, and stays the floor
 * until a bundle signed by a trusted key raises it. */
static int
floor_only(struct plane *pl, const char *path, const char *buf, size_t len,
    const char *why, char *err, size_t errlen)
{
	struct policy *p;
	char perr[512], kid[BUNDLE_KEY_ID_LEN + 1];

	if ((p = bundlepeek_policy(buf, len, kid, perr, sizeof(perr))) == NULL) {
		errbuf_set(err, errlen, "%s: %s", path, perr);
		return -1;
	}
	pl->floor.epoch = policy_epoch(p);
	snprintf(pl->floor.digest, sizeof(pl->floor.digest), "%s", policy_digest(p));
	pl->floor.active = 0;
	errbuf_set(pl->floor_note, sizeof(pl->floor_note), "%s: %s: every request is "
	    "denied until a bundle signed by a trusted key arrives; its epoch %lld "
	    "stays the floor", path, why, policy_epoch(p));
	policy_free(p);
	return 0;
}

/* The stored bundle, if any, checked like the folder (owner, mode, one
 * link, no link) and verified: the active policy, or only the floor when
 * its key is no longer trusted. */
static int
load_state(struct plane *pl, struct policy **state, char *err, size_t errlen)
{
	enum plane_verdict v;
	char path[4096], why[512];
	char *buf;
	size_t len = 0;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/%s", pl->state_dir, PLANE_STATE_FILE);
	if ((buf = pstore_read(pl->state_fd, pl->state_dir, PLANE_STATE_FILE,
	    pl->owner, BUNDLE_MAX_BYTES, &len, err, errlen)) == NULL)
		return err[0] == '\0' ? 0 : -1;
	v = prule_bundle(pl->kr, buf, len, state, pl->pending_signer, why, sizeof(why));
	if (v == PLANE_OK && prule_tenant(pl->tenant, *state, why,
	    sizeof(why)) != PLANE_OK) {
		/* Moved between tenants' folders, or tampered with: never run
		 * as this tenant's, nor forgotten as its floor. */
		policy_free(*state);
		*state = NULL;
		v = PLANE_WRONG_TENANT;
	}
	if (v == PLANE_OK) {
		plane_installed(pl, *state);
		rc = 0;
	} else if (v == PLANE_UNKNOWN_KEY) {
		rc = floor_only(pl, path, buf, len, why, err, errlen);
	} else {
		/* Tampered or broken: an error, not a reason to forget the
		 * floor. */
		errbuf_set(err, errlen, "%s: %s", path, why);
	}
	free(buf);
	return rc;
}

int
plane_start(struct plane *pl, struct policy **out, char *warn, size_t warnlen,
    char *err, size_t errlen)
{
	struct policy *state = NULL, *file = NULL;
	enum plane_verdict v;
	char why[512];

	*out = NULL;
	warn[0] = '\0';
	if (pl->state_dir != NULL && (open_state(pl, err, errlen) == -1 ||
	    load_state(pl, &state, err, errlen) == -1))
		return -1;
	if (pl->policy_path != NULL) {
		v = plane_reload(pl, &file, why, sizeof(why));
		if (v == PLANE_OK) {
			policy_free(state);
			state = file;
			plane_installed(pl, state);
		} else if (v == PLANE_SAME) {
			/* already active from the state folder */
		} else if (pl->floor.epoch >= 0 && (v == PLANE_STALE_EPOCH ||
		    v == PLANE_EPOCH_CONFLICT)) {
			errbuf_set(warn, warnlen, "--policy %s ignored: %s (keeping the "
			    "floor of the bundle in --state-dir)", pl->policy_path, why);
		} else {
			errbuf_set(err, errlen, "%s", why);
			policy_free(state);
			return -1;
		}
	}
	*out = state;
	return 0;
}

/* Tenant mode: the list and the tenants' folder, when root's, become
 * uid's. */
static int
give_tenants(struct plane *pl, uid_t uid, gid_t gid, const char *name,
    char *err, size_t errlen)
{
	if (pstore_give(pl->state_fd, PLANE_TENANTS_FILE, uid, gid) == -1 ||
	    pstore_give(pl->state_fd, PLANE_TENANTS_DIR, uid, gid) == -1) {
		errbuf_set(err, errlen, "--state-dir %s: cannot hand the tenant list "
		    "to %s: %s", pl->state_dir, name, strerror(errno));
		return -1;
	}
	return 0;
}

int
plane_hand_over(struct plane *pl, uid_t uid, gid_t gid, const char *name,
    char *err, size_t errlen)
{
	/* A folder that also holds the operator's files (the trust keys in
	 * /etc/egress-guard) must not become the dropped user's: that user
	 * could then replace them, and safepath takes the guard user's files
	 * as trust anchors. */
	static const char *const ours[] = {
		PLANE_STATE_FILE, PLANE_STATE_TMP, PLANE_TENANTS_FILE,
		PLANE_TENANTS_TMP, PLANE_TENANTS_DIR, NULL
	};
	struct stat st, fst;

	if (pl->state_fd == -1)
		return 0;
	if (fstat(pl->state_fd, &st) == -1) {
		errbuf_set(err, errlen, "--state-dir %s: %s", pl->state_dir, strerror(errno));
		return -1;
	}
	/* A folder already the user's: the tenant list and folder root made
	 * in it at start (plane_tenants_prepare) are handed over all the
	 * same, or no tenant could be added after the drop. */
	if (st.st_uid == uid)
		return give_tenants(pl, uid, gid, name, err, errlen);
	if (st.st_uid != 0) {
		errbuf_set(err, errlen, "--state-dir %s: owned by uid %u, neither root "
		    "nor --user %s (uid %u): chown it to %s", pl->state_dir,
		    (unsigned)st.st_uid, name, (unsigned)uid, name);
		return -1;
	}
	if (pstore_only(pl->state_fd, pl->state_dir, ours, name, err, errlen) == -1)
		return -1;
	/* A temp file left by a store that a crash cut short is never read,
	 * and the dropped user could not truncate a root-owned one. */
	(void)unlinkat(pl->state_fd, PLANE_STATE_TMP, 0);
	/* The bundle was checked at start (root's or uid's, one link, no
	 * link), in a folder only root could change until now. */
	if (fstatat(pl->state_fd, PLANE_STATE_FILE, &fst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(fst.st_mode) && fst.st_nlink == 1 &&
	    fchownat(pl->state_fd, PLANE_STATE_FILE, uid, gid,
	    AT_SYMLINK_NOFOLLOW) == -1) {
		errbuf_set(err, errlen, "--state-dir %s: cannot hand %s to %s: %s",
		    pl->state_dir, PLANE_STATE_FILE, name, strerror(errno));
		return -1;
	}
	/* Tenant mode: the list and the tenants' folder, made by root at
	 * start, are the dropped guard's to write. */
	if (give_tenants(pl, uid, gid, name, err, errlen) == -1)
		return -1;
	/* Mode first: once the folder is NAME's, root may change it only
	 * with CAP_FOWNER, which a container need not grant. Both through
	 * the descriptor: the folder opened at start, never a link. */
	if (fchmod(pl->state_fd, 0700) == -1 || fchown(pl->state_fd, uid, gid) == -1) {
		errbuf_set(err, errlen, "--state-dir %s: cannot hand it to %s: %s",
		    pl->state_dir, name, strerror(errno));
		return -1;
	}
	return 0;
}

int
plane_state_writable(const struct plane *pl, char *err, size_t errlen)
{
	if (pl->state_fd == -1 || faccessat(pl->state_fd, ".", W_OK | X_OK, 0) == 0)
		return 0;
	errbuf_set(err, errlen, "--state-dir %s: not writable by uid %u: %s (make it "
	    "that user's, mode 0700)", pl->state_dir, (unsigned)getuid(),
	    strerror(errno));
	return -1;
}

const char *
plane_state_dir(const struct plane *pl)
{
	return pl->state_dir;
}

long long
plane_floor_epoch(const struct plane *pl)
{
	return pl->floor.epoch;
}

const char *
plane_floor_note(const struct plane *pl)
{
	return pl->floor_note;
}

/* ---- tenant mode ---- */

int
plane_tenants_prepare(struct plane *pl, char *err, size_t errlen)
{
	int fd;

	if (pl->state_fd == -1 && open_state(pl, err, errlen) == -1)
		return -1;
	if ((fd = pstore_subdir(pl->state_fd, pl->state_dir, PLANE_TENANTS_DIR,
	    pl->owner, err, errlen)) == -1)
		return -1;
	close(fd);
	return 0;
}

struct plane *
plane_tenant_new(const struct plane *parent, const char *id, char *err,
    size_t errlen)
{
	struct plane *pl;
	size_t n;
	int tfd;

	if (parent->state_fd == -1 || (n = strlen(id)) == 0 || n > POLICY_TENANT_MAX) {
		errbuf_set(err, errlen, "tenant %s: no state folder to keep its floor in",
		    id);
		return NULL;
	}
	if ((pl = calloc(1, sizeof(*pl))) == NULL ||
	    (pl->dir_own = malloc(strlen(parent->state_dir) + n +
	    sizeof("/" PLANE_TENANTS_DIR "/"))) == NULL) {
		free(pl);
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	sprintf(pl->dir_own, "%s/" PLANE_TENANTS_DIR "/%s", parent->state_dir, id);
	memcpy(pl->tenant, id, n + 1);
	pl->kr = parent->kr;
	pl->state_dir = pl->dir_own;
	pl->state_fd = -1;
	pl->owner = parent->owner;
	pl->floor.epoch = -1;
	if ((tfd = openat(parent->state_fd, PLANE_TENANTS_DIR, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1) {
		errbuf_set(err, errlen, "%s/%s: %s", parent->state_dir, PLANE_TENANTS_DIR,
		    strerror(errno));
		plane_free(pl);
		return NULL;
	}
	snprintf(pl->floor_note, sizeof(pl->floor_note), "%s/%s", parent->state_dir,
	    PLANE_TENANTS_DIR);
	pl->state_fd = pstore_subdir(tfd, pl->floor_note, id, pl->owner, err, errlen);
	pl->floor_note[0] = '\0';
	close(tfd);
	if (pl->state_fd == -1) {
		plane_free(pl);
		return NULL;
	}
	return pl;
}

int
plane_tenant_start(struct plane *pl, struct policy **out, char *err, size_t errlen)
{
	*out = NULL;
	return load_state(pl, out, err, errlen);
}

enum plane_verdict
plane_tenants_start(struct plane *pl, char *body, size_t len, int notify_fd,
    struct plane_check **out, char *err, size_t errlen)
{
	struct plane_check *c;
	enum plane_verdict v;

	*out = NULL;
	if (pl->state_fd == -1) {
		free(body);
		errbuf_set(err, errlen, "no state folder for the tenant list");
		return PLANE_STORE_FAILED;
	}
	if ((c = check_begin(pl, NULL, body, len, &v, err, errlen)) == NULL)
		return v;
	c->list = 1;
	return check_launch(pl, c, notify_fd, out, err, errlen);
}

char *
plane_tenants_load(struct plane *pl, size_t *len, char *err, size_t errlen)
{
	*len = 0;
	err[0] = '\0';
	if (pl->state_fd == -1)
		return NULL;
	return pstore_read(pl->state_fd, pl->state_dir, PLANE_TENANTS_FILE, pl->owner,
	    PLANE_TENANTS_MAX, len, err, errlen);
}

const char *
plane_tenant(const struct plane *pl)
{
	return pl->tenant;
}
