#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "guard/config.h"
#include "guard/plane.h"
#include "policy/bundle.h"
#include "policy/policy.h"

#define PLANE_STATE_FILE	"bundle.json"
#define PLANE_STATE_TMP		".bundle.json.tmp"

struct plane {
	struct bundle_keyring	*kr;
	const char		*state_dir;
	const char		*policy_path;
	long long		 floor;		/* -1: no policy accepted yet */
	char			 floor_digest[POLICY_DIGEST_LEN + 1];
	char			 signer[BUNDLE_KEY_ID_LEN + 1];
	char			 pending_signer[BUNDLE_KEY_ID_LEN + 1];
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
	case PLANE_BAD_SIGNATURE:	return 403;
	case PLANE_STALE_EPOCH:
	case PLANE_EPOCH_CONFLICT:	return 409;
	case PLANE_STORE_FAILED:	return 500;
	}
	return 500;
}

struct plane *
plane_new(const struct config *cfg, char *err, size_t errlen)
{
	struct plane *pl;
	size_t i;

	if ((pl = calloc(1, sizeof(*pl))) == NULL ||
	    (pl->kr = bundle_keyring_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		plane_free(pl);
		return NULL;
	}
	pl->state_dir = cfg->state_dir;
	pl->policy_path = cfg->policy_path;
	pl->floor = -1;
	for (i = 0; i < cfg->ntrust_keys; i++) {
		if (bundle_keyring_add_file(pl->kr, cfg->trust_keys[i], err, errlen) == -1) {
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
	bundle_keyring_free(pl->kr);
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
	return pl->signer;
}

void
plane_installed(struct plane *pl, const struct policy *p)
{
	if (p == NULL)
		return;
	pl->floor = policy_epoch(p);
	snprintf(pl->floor_digest, sizeof(pl->floor_digest), "%s", policy_digest(p));
	memcpy(pl->signer, pl->pending_signer, sizeof(pl->signer));
}

/* The epoch rule, against the active policy. */
static enum plane_verdict
epoch_rule(const struct plane *pl, const struct policy *p, char *err, size_t errlen)
{
	if (pl->floor < 0)
		return PLANE_OK;
	if (policy_epoch(p) < pl->floor) {
		snprintf(err, errlen, "epoch %lld is below the active epoch %lld",
		    policy_epoch(p), pl->floor);
		return PLANE_STALE_EPOCH;
	}
	if (policy_epoch(p) == pl->floor) {
		if (strcmp(policy_digest(p), pl->floor_digest) == 0)
			return PLANE_SAME;
		snprintf(err, errlen, "epoch %lld is already active with another digest",
		    pl->floor);
		return PLANE_EPOCH_CONFLICT;
	}
	return PLANE_OK;
}

static enum plane_verdict
verify(struct plane *pl, const char *buf, size_t len, struct policy **out,
    char *err, size_t errlen)
{
	enum bundle_error why = BUNDLE_MALFORMED;

	*out = bundle_verify(pl->kr, buf, len, pl->pending_signer, &why, err, errlen);
	if (*out != NULL)
		return PLANE_OK;
	switch (why) {
	case BUNDLE_UNKNOWN_KEY:	return PLANE_UNKNOWN_KEY;
	case BUNDLE_BAD_SIGNATURE:	return PLANE_BAD_SIGNATURE;
	default:			return PLANE_MALFORMED;
	}
}

/* Writes the bundle so that a crash at any instant leaves either the old
 * file or the new one whole: temp file, fsync, rename, fsync the folder. */
static int
store(const struct plane *pl, const char *buf, size_t len, char *err, size_t errlen)
{
	char tmp[4096], dst[4096];
	int fd = -1, dfd = -1, rc = -1;
	size_t off = 0;

	if (pl->state_dir == NULL)
		return 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", pl->state_dir, PLANE_STATE_TMP) >=
	    sizeof(tmp) || (size_t)snprintf(dst, sizeof(dst), "%s/%s", pl->state_dir,
	    PLANE_STATE_FILE) >= sizeof(dst)) {
		snprintf(err, errlen, "--state-dir path too long");
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd == -1)
		goto fail;
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fsync(fd) == -1 || close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, dst) == -1)
		goto fail;
	if ((dfd = open(pl->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fsync(dfd) == -1)
		goto fail;
	rc = 0;
	goto out;
fail:
	snprintf(err, errlen, "%s: cannot store the bundle: %s", pl->state_dir,
	    strerror(errno));
	(void)unlink(tmp);
out:
	if (fd != -1)
		close(fd);
	if (dfd != -1)
		close(dfd);
	return rc;
}

enum plane_verdict
plane_push(struct plane *pl, const char *buf, size_t len, struct policy **out,
    char *err, size_t errlen)
{
	enum plane_verdict v;
	struct policy *p;

	*out = NULL;
	if ((v = verify(pl, buf, len, &p, err, errlen)) != PLANE_OK)
		return v;
	if ((v = epoch_rule(pl, p, err, errlen)) != PLANE_OK) {
		policy_free(p);
		return v;
	}
	if (store(pl, buf, len, err, errlen) == -1) {
		policy_free(p);
		return PLANE_STORE_FAILED;
	}
	*out = p;
	return PLANE_OK;
}

/* Reads a whole small file; NUL-terminated, *len without the NUL. */
static char *
read_file(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t off = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		snprintf(err, errlen, "%s: not a regular file of at most %zu bytes", path, max);
		goto out;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "%s: short read", path);
			free(buf);
			buf = NULL;
			goto out;
		}
		off += (size_t)n;
	}
	buf[off] = '\0';
	*len = off;
out:
	close(fd);
	return buf;
}

/* A --policy file is a signed bundle or an operator's unsigned compiled
 * policy; its "schema" says which. */
static int
is_bundle(const char *buf, size_t len)
{
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	const char *schema = json_string_value(json_object_get(root, "schema"));
	int yes = schema != NULL && strcmp(schema, BUNDLE_SCHEMA) == 0;

	json_decref(root);
	return yes;
}

static enum plane_verdict
load_policy_file(struct plane *pl, struct policy **out, int *bundle, char **raw,
    size_t *rawlen, char *err, size_t errlen)
{
	char *buf;
	size_t len = 0;
	enum plane_verdict v;

	*out = NULL;
	*raw = NULL;
	if ((buf = read_file(pl->policy_path, POLICY_MAX_BYTES, &len, err, errlen)) == NULL)
		return PLANE_MALFORMED;
	*bundle = is_bundle(buf, len);
	if (*bundle) {
		char why[512];
		if ((v = verify(pl, buf, len, out, why, sizeof(why))) != PLANE_OK) {
			snprintf(err, errlen, "%s: %s", pl->policy_path, why);
			free(buf);
			return v;
		}
		*raw = buf;
		*rawlen = len;
		return PLANE_OK;
	}
	pl->pending_signer[0] = '\0';
	*out = policy_parse(buf, len, err, errlen);
	free(buf);
	if (*out == NULL) {
		char why[512];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "%s: %s", pl->policy_path, why);
		return PLANE_MALFORMED;
	}
	return PLANE_OK;
}

enum plane_verdict
plane_reload(struct plane *pl, struct policy **out, char *err, size_t errlen)
{
	struct policy *p;
	enum plane_verdict v;
	char *raw = NULL;
	size_t rawlen = 0;
	int bundle = 0;

	*out = NULL;
	if (pl->policy_path == NULL) {
		snprintf(err, errlen, "no --policy file to reload");
		return PLANE_MALFORMED;
	}
	if ((v = load_policy_file(pl, &p, &bundle, &raw, &rawlen, err, errlen)) != PLANE_OK)
		return v;
	if ((v = epoch_rule(pl, p, err, errlen)) != PLANE_OK)
		goto refuse;
	if (bundle && store(pl, raw, rawlen, err, errlen) == -1) {
		v = PLANE_STORE_FAILED;
		goto refuse;
	}
	free(raw);
	*out = p;
	return PLANE_OK;
refuse:
	free(raw);
	policy_free(p);
	return v;
}

int
plane_start(struct plane *pl, struct policy **out, char *warn, size_t warnlen,
    char *err, size_t errlen)
{
	struct policy *state = NULL, *file = NULL;
	enum plane_verdict v;
	char path[4096], why[512];
	char *buf;
	size_t len = 0;

	*out = NULL;
	warn[0] = '\0';
	if (pl->state_dir != NULL) {
		struct stat st;
		int present;

		if (stat(pl->state_dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "--state-dir %s: not a directory", pl->state_dir);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/%s", pl->state_dir, PLANE_STATE_FILE);
		/* Only "no such file" means no state: any other error must
		 * not silently drop the epoch floor. */
		present = lstat(path, &st) == 0;
		if (!present && errno != ENOENT) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		if (present) {
			if ((buf = read_file(path, BUNDLE_MAX_BYTES, &len, err, errlen)) == NULL)
				return -1;
			/* A state file that no longer verifies is an error, not
			 * a reason to forget the floor. */
			v = verify(pl, buf, len, &state, why, sizeof(why));
			free(buf);
			if (v != PLANE_OK) {
				snprintf(err, errlen, "%s: %s", path, why);
				return -1;
			}
			plane_installed(pl, state);
		}
	}
	if (pl->policy_path != NULL) {
		v = plane_reload(pl, &file, why, sizeof(why));
		if (v == PLANE_OK) {
			policy_free(state);
			state = file;
			plane_installed(pl, state);
		} else if (v == PLANE_SAME) {
			/* already active from the state folder */
		} else if (state != NULL && (v == PLANE_STALE_EPOCH ||
		    v == PLANE_EPOCH_CONFLICT)) {
			snprintf(warn, warnlen, "--policy %s ignored: %s (keeping the "
			    "bundle in --state-dir)", pl->policy_path, why);
		} else {
			snprintf(err, errlen, "%s", why);
			policy_free(state);
			return -1;
		}
	}
	*out = state;
	return 0;
}
