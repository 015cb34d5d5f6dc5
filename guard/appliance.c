/* The container entry, in the guard's own code: the image carries no
 * shell, so the step that holds CAP_NET_ADMIN (the default-deny for the
 * workload's namespace) and the privilege drop of the holder are C, with
 * the environment interface the shell entrypoint had (egress-guard(8),
 * ENVIRONMENT). It is a short-lived front: it validates everything, runs
 * `EG_BIN nft apply` as a child and waits for it, then execs the guard
 * (same pid: the cgroup and pid the nft step was told to exempt), or holds,
 * or hands folders over. Nothing here runs on an event loop. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard/appliance.h"
#include "guard/applenv.h"

#define PROG "egress-guard-appliance"
/* Bound: words of one command line. */
#define LIST_MAX APPLENV_LIST_MAX
#define ARGV_MAX 1024
/* EG_LISTEN's default (the Dockerfile's ENV line): in tenant mode, any
 * other value was meant for a listener that mode does not have. */
#define LISTEN_DEFAULT "127.0.0.1:3128"
/* The tenant list the guard keeps in its state folder (docs/design.md). */
#define TENANTS_FILE "tenants.json"

enum mode { MODE_RUN, MODE_INIT, MODE_HOLD };

struct env {
	const char *bin, *listen, *guard_addr, *control, *policy, *trust_keys;
	const char *state_dir, *dns, *allow_ranges, *deny_ranges, *user, *netns;
	const char *exempt_uid, *exempt_cgroup, *nft, *log_format, *log_file;
	const char *args, *dry_run, *init_dirs, *init_owner, *hold_mark;
	const char *hold_user, *tenants;
	char binpath[4096];
	enum mode mode;
	int dry, tenant;
};

struct argv {
	char *v[ARGV_MAX + 1];
	int n;
};

/* One line on stderr, prefixed. */
static void say(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static void
say(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", PROG);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

/* A refusal: exit 2, before anything else happens. */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	exit(2);
}

/* ${NAME:=def}: unset or empty takes the default. */
static const char *
env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : def;
}

/* ${NAME-def}: only an unset variable takes the default. */
static const char *
env_unset_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v != NULL ? v : def;
}

static void
arg_add(struct argv *a, const char *s)
{
	if (a->n >= ARGV_MAX)
		die("more than %d arguments", ARGV_MAX);
	if ((a->v[a->n++] = strdup(s)) == NULL)
		die("out of memory");
	a->v[a->n] = NULL;
}

/* The items of an EG_ list (applenv_split), at most LIST_MAX; *n is how
 * many. Items point into a copy that lives until exit. */
static void
list_split(const char *name, const char *val, char **items, int *n)
{
	size_t sz = strlen(val) + 1;
	char *copy;

	if ((copy = malloc(sz)) == NULL)
		die("out of memory");
	if ((*n = applenv_split(val, copy, sz, items, LIST_MAX)) == -1)
		die("%s: more than %d items", name, LIST_MAX);
}

/* Adds FLAG ITEM for every item of the list. */
static void
arg_list(struct argv *a, const char *flag, const char *name, const char *val)
{
	char *items[LIST_MAX];
	int i, n;

	list_split(name, val, items, &n);
	for (i = 0; i < n; i++) {
		if (flag != NULL)
			arg_add(a, flag);
		arg_add(a, items[i]);
	}
}

/* A command line as it would run, for EG_DRY_RUN: words outside a safe
 * set are single-quoted (no word here holds a quote it would need). */
static void
show(char *const *v)
{
	const char *safe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_./:=@%+,-";
	int i;

	for (i = 0; v[i] != NULL; i++) {
		int q = v[i][0] == '\0' || v[i][strspn(v[i], safe)] != '\0';

		printf("%s%s%s%s", i > 0 ? " " : "", q ? "'" : "", v[i], q ? "'" : "");
	}
	putchar('\n');
	fflush(stdout);
}

/* A user's uid, by name or number (as `id -u` takes it); 0 or -1. */
static int
user_uid(const char *user, uid_t *uid)
{
	struct passwd *pw;
	unsigned long v;

	if ((pw = getpwnam(user)) != NULL) {
		*uid = pw->pw_uid;
		return 0;
	}
	if (applenv_id(user, &v) == 0 && getpwuid((uid_t)v) != NULL) {
		*uid = (uid_t)v;
		return 0;
	}
	return -1;
}

static int
is_exec_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* EG_BIN as a path, or looked up in PATH as `command -v` does. */
static void
find_bin(struct env *e)
{
	const char *path = getenv("PATH"), *p, *end;
	int ok = 0;

	if (strchr(e->bin, '/') != NULL) {
		if ((size_t)snprintf(e->binpath, sizeof(e->binpath), "%s", e->bin) <
		    sizeof(e->binpath))
			ok = is_exec_file(e->binpath);
	} else if (path != NULL) {
		for (p = path; !ok && *p != '\0'; p = *end != '\0' ? end + 1 : end) {
			int len;

			end = strchr(p, ':');
			if (end == NULL)
				end = p + strlen(p);
			len = snprintf(e->binpath, sizeof(e->binpath), "%.*s/%s",
			    (int)(end - p), end > p ? p : ".", e->bin);
			ok = len > 0 && (size_t)len < sizeof(e->binpath) &&
			    is_exec_file(e->binpath);
		}
	}
	if (!ok)
		die("egress-guard binary not found: EG_BIN=%s (PATH=%s)", e->bin,
		    path != NULL ? path : "");
}

/* Runs the command with its stdout on our stderr (the entry's stdout is
 * the dry run's); returns its exit status (128+N for a signal), or -1
 * when it could not be started. */
static int
run_child(char *const *v)
{
	pid_t pid, w;
	int st;

	fflush(NULL);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execv(v[0], v);
		fprintf(stderr, "%s: %s: %s\n", PROG, v[0], strerror(errno));
		_exit(127);
	}
	while ((w = waitpid(pid, &st, 0)) == -1 && errno == EINTR)
		;
	if (w == -1)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/* The nft step: default-deny in the workload's namespace. */
static void
nft_step(struct env *e)
{
	struct argv a = {{0}, 0};
	char ns[4096], num[32];
	const char *guards;
	unsigned long v;
	int rc;

	if (e->netns[0] == '\0') {
		snprintf(ns, sizeof(ns), "/proc/self/ns/net");
	} else {
		if (strchr(e->netns, '/') != NULL)
			rc = snprintf(ns, sizeof(ns), "%s", e->netns);
		else if (e->netns[strspn(e->netns, "0123456789")] == '\0')
			rc = snprintf(ns, sizeof(ns), "/proc/%s/ns/net", e->netns);
		else
			rc = snprintf(ns, sizeof(ns), "/run/netns/%s", e->netns);
		if (rc < 0 || (size_t)rc >= sizeof(ns) || access(ns, F_OK) != 0)
			die("network namespace not found: EG_NETNS=%s (%s does not exist)",
			    e->netns, ns);
	}
	guards = e->guard_addr[0] != '\0' ? e->guard_addr : e->listen;
	arg_add(&a, e->binpath);
	arg_add(&a, "nft");
	arg_add(&a, "apply");
	arg_add(&a, "--netns");
	arg_add(&a, ns);
	arg_list(&a, "--guard", "EG_GUARD_ADDR", guards);
	/* The guard in the namespace it filters: exempt its cgroup (this
	 * process execs it, same pid), the uid being the fallback. */
	if (e->mode == MODE_RUN && e->netns[0] == '\0' &&
	    strcmp(e->exempt_cgroup, "auto") == 0) {
		snprintf(num, sizeof(num), "%ld", (long)getpid());
		arg_add(&a, "--exempt-cgroup-of");
		arg_add(&a, num);
	}
	if (strcmp(e->exempt_uid, "none") == 0 || e->exempt_uid[0] == '\0') {
		/* nobody exempt */
	} else if (strcmp(e->exempt_uid, "auto") == 0) {
		/* Only `run` execs the guard into the namespace it filters;
		 * anywhere else the uid would let out whoever has it, and no
		 * guard. */
		if (e->mode == MODE_RUN && e->netns[0] == '\0') {
			uid_t uid;

			if (e->user[0] == '\0')
				die("EG_EXEMPT_UID=auto: the guard shares the namespace it "
				    "filters and needs its own uid: set EG_USER or EG_EXEMPT_UID");
			if (user_uid(e->user, &uid) == -1)
				die("EG_USER=%s: no such user", e->user);
			snprintf(num, sizeof(num), "%lu", (unsigned long)uid);
			arg_add(&a, "--exempt-uid");
			arg_add(&a, num);
		} else if (e->mode == MODE_INIT && e->netns[0] == '\0') {
			note("EG_EXEMPT_UID=auto under init exempts no uid (init runs no "
			    "guard); set it to the guard's uid if the guard will share this "
			    "namespace");
		}
	} else {
		if (applenv_id(e->exempt_uid, &v) == -1)
			die("EG_EXEMPT_UID=%s: expected a uid, auto or none", e->exempt_uid);
		snprintf(num, sizeof(num), "%lu", v);
		arg_add(&a, "--exempt-uid");
		arg_add(&a, num);
	}
	if (e->dry) {
		show(a.v);
		return;
	}
	rc = run_child(a.v);
	if (rc != 0)
		die("nft apply failed (exit %d): not starting the guard, the workload's "
		    "namespace has no default-deny", rc);
}

/* Tenant mode's nft step: the guard-side table of the tenants the guard
 * will serve again from its state folder (a restart, often into a new
 * network namespace, as Docker does), applied before the guard binds
 * their listeners, so no tenant link is ever served without its
 * anti-spoofing and listener-only rules. With no list yet there is no
 * tenant and no listener: the node agent applies the table after each
 * `PUT /v1/tenants/ID` (docs/deploy.md). */
static void
tenants_nft_step(struct env *e, const char *state)
{
	struct argv a = {{0}, 0};
	char path[4096];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", state, TENANTS_FILE) >= sizeof(path))
		die("EG_STATE_DIR=%s: path too long", state);
	if (lstat(path, &st) == -1) {
		if (errno != ENOENT)
			die("%s: %s (tenant mode needs it readable to fence the "
			    "tenants' links before they are served)", path, strerror(errno));
		note("no %s yet: no tenant to fence; the node agent applies `egress-guard "
		    "nft tenants` into this namespace after each tenant it adds", path);
		return;
	}
	/* The entry is root and the folder the dropped guard's: a link there
	 * would have root read whatever it points at. */
	if (!S_ISREG(st.st_mode))
		die("%s: not a regular file (a symbolic link?): not starting the guard",
		    path);
	arg_add(&a, e->binpath);
	arg_add(&a, "nft");
	arg_add(&a, "tenants");
	arg_add(&a, "--tenants");
	arg_add(&a, path);
	arg_add(&a, "--netns");
	arg_add(&a, "/proc/self/ns/net");
	if (e->dry) {
		show(a.v);
		return;
	}
	if (run_child(a.v) != 0)
		die("nft tenants failed: not starting the guard, its tenants' links would "
		    "have no anti-spoofing rule");
}

/* Tenant mode: one guard, many sandboxes, each on its own link; the
 * tenants come over the control socket only. What the single-tenant
 * variables would set has no place here, and is refused rather than
 * dropped silently: a guard with no policy file and no listener of its
 * own must not look, from its environment, like one that has them. */
static void
tenants_check(const struct env *e, const char *state)
{
	if (e->policy[0] != '\0')
		die("EG_POLICY with EG_TENANTS=1: in tenant mode every policy is a signed "
		    "bundle pushed to its tenant (PUT /v1/tenants/ID/policy)");
	if (e->trust_keys[0] == '\0')
		die("EG_TENANTS=1 needs EG_TRUST_KEYS: the tenants' policies are pushed "
		    "bundles, checked against those keys");
	if (state[0] == '\0')
		die("EG_TENANTS=1 needs a state folder (EG_STATE_DIR, not none): the "
		    "tenants and their epoch floors live there");
	if (strcmp(e->listen, LISTEN_DEFAULT) != 0)
		die("EG_LISTEN=%s with EG_TENANTS=1: tenant mode has no untenanted "
		    "listener; each tenant's is its spec's address and port", e->listen);
	if (e->netns[0] != '\0' || e->guard_addr[0] != '\0')
		die("EG_NETNS/EG_GUARD_ADDR with EG_TENANTS=1: each sandbox's namespace "
		    "is fenced by its runner (egress-guard nft apply), the guard's own "
		    "links by `nft tenants`");
}

/* init's folder step: chmod, then chown, on the folder opened without
 * following a symlink (no window to swap one in). The mode first, so that
 * no moment has the new owner with the old 0777, and while root still
 * owns it: CAP_CHOWN is all it takes (CAP_FOWNER only for a folder root
 * does not own). A folder already handed over is left as it is. */
static void
own_dirs(struct env *e)
{
	char *items[LIST_MAX];
	unsigned long ou, og;
	int i, n;

	if (applenv_ids(e->init_owner, &ou, &og) == -1)
		die("EG_INIT_OWNER=%s: expected uid:gid (numbers)", e->init_owner);
	list_split("EG_INIT_DIRS", e->init_dirs, items, &n);
	for (i = 0; i < n; i++) {
		const char *d = items[i];
		struct stat st;
		char owner[64];
		int fd;

		if (lstat(d, &st) == -1 || !S_ISDIR(st.st_mode))
			die("EG_INIT_DIRS: %s: not a folder (or a symlink)", d);
		if (st.st_uid == ou && st.st_gid == og && (st.st_mode & 07777) == 0700)
			continue;
		snprintf(owner, sizeof(owner), "%lu:%lu", ou, og);
		if (e->dry) {
			printf("chmod 0700 -- %s\nchown -- %s %s\n", d, owner, d);
			fflush(stdout);
			continue;
		}
		fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1 || fchmod(fd, 0700) == -1 || fchown(fd, (uid_t)ou, (gid_t)og) == -1)
			die("EG_INIT_DIRS: %s: cannot hand it to %s mode 0700 (%s; the init "
			    "container needs CAP_CHOWN, and CAP_FOWNER for a folder root "
			    "does not own)", d, owner, strerror(errno));
		close(fd);
	}
}

static volatile sig_atomic_t stop_asked;

static void
on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

/* Waits for SIGTERM or SIGINT (PID 1 of a container ignores a signal it
 * has no handler for), then exits 0. */
static void __attribute__((noreturn))
wait_for_stop(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&none);
	while (!stop_asked)
		sigsuspend(&none);
	exit(0);
}

/* The holder: fences its own namespace, marks it, and sleeps as
 * EG_HOLD_USER with no groups, no capabilities (a uid change from 0
 * clears them) and no_new_privs. */
static void __attribute__((noreturn))
hold(struct env *e)
{
	unsigned long hu, hg;
	int fd;

	/* A holder without its table would hand every joining workload an
	 * unfenced namespace: no skip here. */
	if (strcmp(e->nft, "apply") != 0)
		die("hold needs EG_NFT=apply: the namespace it holds would have no "
		    "default-deny");
	if (e->netns[0] != '\0')
		die("hold applies the table to its own namespace: EG_NETNS must be empty");
	if (applenv_ids(e->hold_user, &hu, &hg) == -1 || hu == 0 || hg == 0)
		die("EG_HOLD_USER=%s: expected uid:gid, neither 0", e->hold_user);
	nft_step(e);
	if (e->dry) {
		printf("hold as %lu:%lu, no groups, no capabilities, no_new_privs, "
		    "until SIGTERM\n", hu, hg);
		exit(0);
	}
	fd = open(e->hold_mark, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd == -1 || close(fd) == -1)
		die("EG_HOLD_MARK=%s: cannot write it (%s)", e->hold_mark, strerror(errno));
	if (setgroups(0, NULL) == -1 || setresgid((gid_t)hg, (gid_t)hg, (gid_t)hg) == -1 ||
	    setresuid((uid_t)hu, (uid_t)hu, (uid_t)hu) == -1 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		/* The table is in place but the holder would keep root: take
		 * the mark back, so that nothing turns healthy on it. */
		int err = errno;

		unlink(e->hold_mark);
		die("EG_HOLD_USER=%s: cannot drop to it (%s; hold needs CAP_SETUID and "
		    "CAP_SETGID)", e->hold_user, strerror(err));
	}
	wait_for_stop();
}

static void
env_read(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->bin = env_or("EG_BIN", "egress-guard");
	e->listen = env_or("EG_LISTEN", "127.0.0.1:3128");
	e->guard_addr = env_or("EG_GUARD_ADDR", "");
	e->control = env_or("EG_CONTROL", "/run/egress-guard/control.sock");
	e->policy = env_or("EG_POLICY", "");
	e->trust_keys = env_or("EG_TRUST_KEYS", "");
	e->state_dir = env_or("EG_STATE_DIR", "/var/lib/egress-guard");
	e->dns = env_or("EG_DNS", "");
	e->allow_ranges = env_or("EG_ALLOW_RANGES", "");
	e->deny_ranges = env_or("EG_DENY_RANGES", "");
	e->user = env_unset_or("EG_USER", "egress-guard");
	e->netns = env_or("EG_NETNS", "");
	e->exempt_uid = env_or("EG_EXEMPT_UID", "auto");
	e->exempt_cgroup = env_or("EG_EXEMPT_CGROUP", "auto");
	e->nft = env_or("EG_NFT", "apply");
	e->log_format = env_or("EG_LOG_FORMAT", "json");
	e->log_file = env_or("EG_LOG_FILE", "");
	e->args = env_or("EG_ARGS", "");
	e->dry_run = env_or("EG_DRY_RUN", "0");
	e->init_dirs = env_or("EG_INIT_DIRS", "");
	e->init_owner = env_or("EG_INIT_OWNER", "");
	e->hold_mark = env_or("EG_HOLD_MARK", "/run/egress-guard/fenced");
	e->hold_user = env_or("EG_HOLD_USER", "65534:65534");
	e->tenants = env_or("EG_TENANTS", "0");
}

/* mkdir -p with the caller's umask. */
static int
mkdir_p(const char *path)
{
	char buf[4096], *p;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return -1;
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0777) == -1 && errno != EEXIST ? -1 : 0;
}

/* Everything the guard needs is checked before the nft step changes
 * anything; then the guard is exec'd with its flags first and the
 * caller's (EG_ARGS, then the command's own) after them. The single-value
 * flags set here come from their EG_ variables: given again by the caller,
 * the guard refuses to start ("--X given twice"), so neither side
 * silently overrides the other. */
static void __attribute__((noreturn))
run(struct env *e, int argc, char **argv)
{
	struct argv a = {{0}, 0};
	char *items[LIST_MAX];
	const char *drop = NULL, *state;
	struct stat st;
	int i, n, root = geteuid() == 0;

	state = strcmp(e->state_dir, "none") == 0 ? "" : e->state_dir;
	if (e->tenant)
		tenants_check(e, state);
	if (e->policy[0] == '\0' && e->trust_keys[0] == '\0')
		die("no policy and no trust key: the guard would deny every request "
		    "forever. Set EG_TRUST_KEYS (the public keys the plane signs with) "
		    "and/or EG_POLICY");
	if (e->policy[0] != '\0' && (stat(e->policy, &st) == -1 || !S_ISREG(st.st_mode)))
		die("EG_POLICY=%s: no such file", e->policy);
	list_split("EG_TRUST_KEYS", e->trust_keys, items, &n);
	for (i = 0; i < n; i++)
		if (stat(items[i], &st) == -1 || !S_ISREG(st.st_mode))
			die("EG_TRUST_KEYS: %s: no such file", items[i]);
	if (strcmp(e->log_format, "json") != 0 && strcmp(e->log_format, "text") != 0)
		die("EG_LOG_FORMAT=%s: expected json or text", e->log_format);
	list_split("EG_LISTEN", e->listen, items, &n);
	if (n == 0)
		die("EG_LISTEN is empty");
	if (e->user[0] != '\0' && strcmp(e->user, "root") != 0) {
		uid_t uid;

		if (user_uid(e->user, &uid) == -1)
			die("EG_USER=%s: no such user", e->user);
		if (root)
			drop = e->user;
		else
			note("running as uid %lu already: EG_USER=%s not used",
			    (unsigned long)geteuid(), e->user);
	} else if (root) {
		note("%s: the guard stays root (it logs a warning)",
		    e->user[0] == '\0' ? "EG_USER is empty" : "EG_USER=root");
	}
	if (state[0] != '\0' && (stat(state, &st) == -1 || !S_ISDIR(st.st_mode))) {
		if (e->dry) {
			/* nothing made in a dry run */
		} else if (root) {
			/* Made root's and 0700; the guard hands it to EG_USER
			 * before it drops. */
			mode_t old = umask(077);

			if (mkdir_p(state) == -1)
				die("EG_STATE_DIR=%s: cannot create it", e->state_dir);
			umask(old);
		} else {
			die("EG_STATE_DIR=%s: no such directory (EG_STATE_DIR=none keeps "
			    "no state)", e->state_dir);
		}
	}
	if (state[0] != '\0' && drop == NULL && !root && access(state, W_OK) != 0)
		die("EG_STATE_DIR=%s: not writable by uid %lu", e->state_dir,
		    (unsigned long)geteuid());

	if (strcmp(e->nft, "apply") == 0 && e->tenant)
		tenants_nft_step(e, state);
	else if (strcmp(e->nft, "apply") == 0)
		nft_step(e);

	arg_add(&a, e->binpath);
	arg_add(&a, "run");
	if (e->tenant)
		arg_add(&a, "--tenants");
	else
		arg_list(&a, "--listen", "EG_LISTEN", e->listen);
	arg_add(&a, "--control");
	arg_add(&a, e->control);
	if (e->policy[0] != '\0') {
		arg_add(&a, "--policy");
		arg_add(&a, e->policy);
	}
	arg_list(&a, "--trust-key", "EG_TRUST_KEYS", e->trust_keys);
	if (state[0] != '\0') {
		arg_add(&a, "--state-dir");
		arg_add(&a, state);
	} else {
		arg_add(&a, "--no-state");
	}
	arg_list(&a, "--dns", "EG_DNS", e->dns);
	arg_list(&a, "--allow-range", "EG_ALLOW_RANGES", e->allow_ranges);
	arg_list(&a, "--deny-range", "EG_DENY_RANGES", e->deny_ranges);
	if (drop != NULL) {
		arg_add(&a, "--user");
		arg_add(&a, drop);
	}
	arg_add(&a, "--log-format");
	arg_add(&a, e->log_format);
	if (e->log_file[0] != '\0') {
		arg_add(&a, "--log-file");
		arg_add(&a, e->log_file);
	}
	arg_list(&a, NULL, "EG_ARGS", e->args);
	for (i = 0; i < argc; i++)
		arg_add(&a, argv[i]);
	if (e->dry) {
		show(a.v);
		exit(0);
	}
	fflush(NULL);
	execv(a.v[0], a.v);
	die("%s: cannot run it: %s", a.v[0], strerror(errno));
}

/* Execs a command from PATH: 127 when it is not there, as a shell would. */
static void __attribute__((noreturn))
exec_path(char **argv)
{
	fflush(NULL);
	execvp(argv[0], argv);
	fprintf(stderr, "%s: %s: %s\n", PROG, argv[0], strerror(errno));
	exit(errno == ENOENT ? 127 : 126);
}

/* The image's health check: egress-guardctl status on EG_CONTROL, its
 * body dropped (Docker keeps a check's output; the exit status is the
 * answer). 0 healthy, 1 anything else (Docker reserves 2). */
static int
health(const struct env *e)
{
	char ctl[] = "egress-guardctl", st[] = "status", fl[] = "--control";
	char *v[] = {ctl, st, fl, strdup(e->control), NULL};
	pid_t pid, w;
	int fd, rc;

	if (v[3] == NULL || (pid = fork()) == -1)
		return 1;
	if (pid == 0) {
		if ((fd = open("/dev/null", O_WRONLY)) != -1)
			dup2(fd, STDOUT_FILENO);
		execvp(v[0], v);
		fprintf(stderr, "%s: %s: %s\n", PROG, v[0], strerror(errno));
		_exit(127);
	}
	while ((w = waitpid(pid, &rc, 0)) == -1 && errno == EINTR)
		;
	return w != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0 ? 0 : 1;
}

int
appliance_main(int argc, char **argv)
{
	struct env e;
	const char *w;

	env_read(&e);
	e.mode = MODE_RUN;
	argc--;
	argv++;
	w = argc > 0 ? argv[0] : "";
	if (strcmp(w, "run") == 0) {
		argc--;
		argv++;
	} else if (strcmp(w, "init") == 0) {
		e.mode = MODE_INIT;
	} else if (strcmp(w, "hold") == 0) {
		e.mode = MODE_HOLD;
	} else if (strcmp(w, "pause") == 0) {
		wait_for_stop();
	} else if (strcmp(w, "fenced") == 0) {
		return access(e.hold_mark, F_OK) == 0 ? 0 : 1;
	} else if (strcmp(w, "health") == 0) {
		return health(&e);
	} else if (strcmp(w, "nft") == 0 || strcmp(w, "check") == 0 ||
	    strcmp(w, "version") == 0) {
		find_bin(&e);
		argv[-1] = e.binpath;
		fflush(NULL);
		execv(e.binpath, argv - 1);
		die("%s: cannot run it: %s", e.binpath, strerror(errno));
	} else if (w[0] != '-' && w[0] != '\0') {
		exec_path(argv);
	}

	if (strcmp(e.nft, "apply") != 0 && strcmp(e.nft, "skip") != 0)
		die("EG_NFT=%s: expected apply or skip", e.nft);
	if (strcmp(e.exempt_cgroup, "auto") != 0 && strcmp(e.exempt_cgroup, "none") != 0)
		die("EG_EXEMPT_CGROUP=%s: expected auto or none", e.exempt_cgroup);
	if (applenv_switch(e.dry_run, &e.dry) == -1)
		die("EG_DRY_RUN=%s: expected 0 or 1", e.dry_run);
	if (applenv_switch(e.tenants, &e.tenant) == -1)
		die("EG_TENANTS=%s: expected 0 or 1", e.tenants);
	if (e.tenant && e.mode != MODE_RUN)
		die("EG_TENANTS=1 is for the guard (`run`): init and hold fence one "
		    "sandbox's namespace");
	find_bin(&e);
	if (strcmp(e.nft, "apply") == 0 && !e.dry && geteuid() != 0)
		die("EG_NFT=apply needs root (running as uid %lu) with CAP_NET_ADMIN, and "
		    "CAP_SYS_ADMIN only to enter another namespace; set EG_NFT=skip when "
		    "an init container applied the rules", (unsigned long)geteuid());

	if (e.mode == MODE_INIT) {
		if (strcmp(e.nft, "apply") != 0 && e.init_dirs[0] == '\0')
			die("init with EG_NFT=skip and no EG_INIT_DIRS has nothing to do");
		if (strcmp(e.nft, "apply") == 0)
			nft_step(&e);
		if (e.init_dirs[0] != '\0')
			own_dirs(&e);
		return 0;
	}
	if (e.mode == MODE_HOLD)
		hold(&e);
	run(&e, argc, argv);
}
