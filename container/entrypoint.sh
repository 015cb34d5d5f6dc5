#!/bin/sh
# egress-guard container entrypoint (POSIX sh).
#
#   entrypoint.sh [run] [extra egress-guard run flags]...
#       1. unless EG_NFT=skip: applies the default-deny nftables table to the
#          workload's network namespace (`egress-guard nft apply`), as root
#          with CAP_NET_ADMIN (and CAP_SYS_ADMIN only to enter another namespace);
#       2. execs `egress-guard run`, which binds its listeners and control
#          socket, hands --state-dir to EG_USER, then drops to EG_USER with
#          no capabilities and no_new_privs. Started as a non-root user
#          (Kubernetes runAsUser), it runs as that user and needs no drop.
#   entrypoint.sh init
#       step 1 only (unless EG_NFT=skip), then hands the folders of
#       EG_INIT_DIRS to EG_INIT_OWNER, mode 0700, then exit 0: the init
#       container of a pod, or a one-shot service, when the guard itself
#       runs elsewhere or unprivileged. (A pod's emptyDirs are 0777, which
#       the guard refuses for its socket and state folders; the folder step
#       needs CAP_CHOWN for root-owned folders, CAP_FOWNER too for others.)
#   entrypoint.sh hold
#       the namespace holder of compose layout (a): step 1 in this
#       container's own namespace, then a marker file EG_HOLD_MARK (the
#       holder's health check), then `sleep infinity` as EG_HOLD_USER with
#       no capabilities (setpriv). Every start of the holder, a restart by
#       the daemon included, applies the table to the new namespace before
#       anything can be marked healthy; a failed step exits 2 and nothing
#       is held.
#   entrypoint.sh nft|check|version ...   runs egress-guard with those words
#   entrypoint.sh COMMAND ...             runs COMMAND (a shell, egress-guardctl)
#
# Configuration, all from the environment; the Dockerfile's ENV lines set
# the same defaults as below. Lists are separated by commas or spaces (so
# no path may hold either).
#
#   EG_BIN           egress-guard binary, a path or a name looked up in PATH
#                    (egress-guard)
#   EG_LISTEN        listener addresses, IPv4:PORT or [IPv6]:PORT (127.0.0.1:3128)
#   EG_GUARD_ADDR    the listener as the workload reaches it, for the nft rule
#                    (empty: EG_LISTEN)
#   EG_CONTROL       control socket path (/run/egress-guard/control.sock)
#   EG_POLICY        policy file: signed bundle or unsigned compiled policy
#                    (empty: none; the guard denies until the plane pushes one)
#   EG_TRUST_KEYS    Ed25519 public keys (PEM) the plane signs with (empty)
#   EG_STATE_DIR     where the last accepted bundle (the epoch floor) is kept
#                    (/var/lib/egress-guard; empty: that default too). `none`:
#                    keep nothing (`--no-state`: a restart forgets the floor,
#                    the guard warns). The guard refuses a folder anyone but
#                    root or its user can write, and a symlink.
#   EG_DNS           the guard's resolvers, IP[:PORT] (empty: /etc/resolv.conf)
#   EG_ALLOW_RANGES  CIDRs counted as public (empty)
#   EG_DENY_RANGES   CIDRs counted as non-public (empty)
#   EG_USER          user the guard drops to (egress-guard; empty: stay root,
#                    which the guard logs as a warning)
#   EG_NETNS         workload namespace for the nft step: a name from
#                    `ip netns add`, a path, or a PID (empty: this container's
#                    own namespace, the shared-namespace sidecar layout)
#   EG_EXEMPT_UID    uid whose traffic the nft rules let out: a number, `none`,
#                    or `auto` (EG_USER's uid under `run` with EG_NETNS empty,
#                    i.e. the guard shares the namespace it filters; none
#                    otherwise: `hold` and `init` run no guard here, and an
#                    exempt uid would be a way out for any workload process
#                    that has it)
#   EG_EXEMPT_CGROUP `auto` or `none` (auto). auto: when the guard shares the
#                    namespace it filters (`run`, EG_NETNS empty), the nft step
#                    also gets --exempt-cgroup-of this process, which execs
#                    the guard (same pid, same cgroup): the cgroup v2
#                    exemption where it works, with the uid above as the
#                    fallback (nft warns) on cgroup v1 or a private cgroup
#                    namespace. The uid fallback holds only while the
#                    workload has no CAP_SETUID/CAP_SETGID and no_new_privs.
#   EG_NFT           apply | skip (apply)
#   EG_LOG_FORMAT    json | text (json)
#   EG_LOG_FILE      log file (empty: stderr)
#   EG_ARGS          further `egress-guard run` flags, split on spaces (empty)
#   EG_INIT_DIRS     `init`: folders to hand to EG_INIT_OWNER with mode 0700
#                    (empty: none); each must exist and not be a symlink
#   EG_INIT_OWNER    `init`: uid:gid, numbers, for EG_INIT_DIRS (empty)
#   EG_DRY_RUN       1: print the commands instead of running them (0)
#   EG_HOLD_MARK     `hold`: the file written once the table is in place
#                    (/run/egress-guard/fenced; put it on a tmpfs, so that a
#                    restart starts without it)
#   EG_HOLD_USER     `hold`: uid:gid the holder sleeps as (65534:65534)
#
# Exit status 2, with one line saying what is missing, for: no binary, no
# trust key and no policy, a missing key or policy file, an unknown
# namespace or user, a bad value, a failed nft step. Nothing is started
# after a failed step: a guard whose rules are not in place would leave the
# workload a way out.
set -eu

PROG=egress-guard-entrypoint

die() {
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit 2
}

note() {
	printf '%s: %s\n' "$PROG" "$*" >&2
}

# Defaults. Values that may be meaningfully empty use ${X-…} (only an
# unset variable takes the default), the others ${X:=…}.
: "${EG_BIN:=egress-guard}"
: "${EG_LISTEN:=127.0.0.1:3128}"
: "${EG_GUARD_ADDR:=}"
: "${EG_CONTROL:=/run/egress-guard/control.sock}"
: "${EG_POLICY:=}"
: "${EG_TRUST_KEYS:=}"
: "${EG_STATE_DIR:=/var/lib/egress-guard}"
: "${EG_DNS:=}"
: "${EG_ALLOW_RANGES:=}"
: "${EG_DENY_RANGES:=}"
EG_USER=${EG_USER-egress-guard}
: "${EG_NETNS:=}"
: "${EG_EXEMPT_UID:=auto}"
: "${EG_EXEMPT_CGROUP:=auto}"
: "${EG_NFT:=apply}"
: "${EG_LOG_FORMAT:=json}"
: "${EG_LOG_FILE:=}"
: "${EG_ARGS:=}"
: "${EG_DRY_RUN:=0}"
: "${EG_INIT_DIRS:=}"
: "${EG_INIT_OWNER:=}"
: "${EG_HOLD_MARK:=/run/egress-guard/fenced}"
: "${EG_HOLD_USER:=65534:65534}"

# No globbing anywhere: list items and paths are taken literally.
set -f

# list VALUE: the items of a comma- or space-separated list, one per line.
list() {
	printf '%s\n' "$1" | tr ',\t' '  ' | tr -s ' ' '\n' | sed '/^$/d'
}

# show ARG...: a command line as it would run, for EG_DRY_RUN.
show() {
	out=""
	for a in "$@"; do
		case "$a" in
		"" | *[!A-Za-z0-9_./:=@%+,-]*) a="'$a'" ;;
		esac
		out="$out${out:+ }$a"
	done
	printf '%s\n' "$out"
}

find_bin() {
	case "$EG_BIN" in
	*/*) BIN=$EG_BIN ;;
	*) BIN=$(command -v "$EG_BIN" 2>/dev/null) || BIN="" ;;
	esac
	if [ -z "$BIN" ] || ! [ -f "$BIN" ] || ! [ -x "$BIN" ]; then
		die "egress-guard binary not found: EG_BIN=$EG_BIN (PATH=$PATH)"
	fi
}

is_root() { [ "$(id -u)" = 0 ]; }

is_uint() {
	case "$1" in
	"" | *[!0-9]*) return 1 ;;
	esac
	return 0
}

# The nft step: default-deny in the workload's namespace.
nft_step() {
	if [ -z "$EG_NETNS" ]; then
		ns=/proc/self/ns/net
	else
		case "$EG_NETNS" in
		*/*) ns=$EG_NETNS ;;
		*[!0-9]*) ns=/run/netns/$EG_NETNS ;;
		*) ns=/proc/$EG_NETNS/ns/net ;;
		esac
		[ -e "$ns" ] ||
		    die "network namespace not found: EG_NETNS=$EG_NETNS ($ns does not exist)"
	fi
	guards=${EG_GUARD_ADDR:-$EG_LISTEN}
	set -- nft apply --netns "$ns"
	for a in $(list "$guards"); do
		set -- "$@" --guard "$a"
	done
	# The guard in the namespace it filters: exempt its cgroup (this
	# process execs it), the uid being the fallback.
	if [ "$mode" = run ] && [ -z "$EG_NETNS" ] && [ "$EG_EXEMPT_CGROUP" = auto ]; then
		set -- "$@" --exempt-cgroup-of "$$"
	fi
	case "$EG_EXEMPT_UID" in
	none | "") ;;
	auto)
		# Only `run` execs the guard into the namespace it filters;
		# anywhere else the uid would let out whoever has it, and no
		# guard.
		if [ "$mode" = run ] && [ -z "$EG_NETNS" ]; then
			[ -n "$EG_USER" ] || die "EG_EXEMPT_UID=auto: the guard shares" \
			    "the namespace it filters and needs its own uid: set EG_USER" \
			    "or EG_EXEMPT_UID"
			uid=$(id -u -- "$EG_USER" 2>/dev/null) ||
			    die "EG_USER=$EG_USER: no such user"
			set -- "$@" --exempt-uid "$uid"
		elif [ "$mode" = init ] && [ -z "$EG_NETNS" ]; then
			note "EG_EXEMPT_UID=auto under init exempts no uid (init runs" \
			    "no guard); set it to the guard's uid if the guard will" \
			    "share this namespace"
		fi
		;;
	*)
		is_uint "$EG_EXEMPT_UID" ||
		    die "EG_EXEMPT_UID=$EG_EXEMPT_UID: expected a uid, auto or none"
		set -- "$@" --exempt-uid "$EG_EXEMPT_UID"
		;;
	esac
	if [ "$EG_DRY_RUN" = 1 ]; then
		show "$BIN" "$@"
		return 0
	fi
	"$BIN" "$@" >&2 || die "nft apply failed (exit $?): not starting the guard," \
	    "the workload's namespace has no default-deny"
}

mode=run
case "${1:-}" in
run) shift ;;
init) mode=init; shift ;;
hold) mode=hold; shift ;;
nft | check | version)
	find_bin
	exec "$BIN" "$@"
	;;
-* | "") ;;
*) exec "$@" ;;
esac

case "$EG_NFT" in
apply | skip) ;;
*) die "EG_NFT=$EG_NFT: expected apply or skip" ;;
esac
case "$EG_EXEMPT_CGROUP" in
auto | none) ;;
*) die "EG_EXEMPT_CGROUP=$EG_EXEMPT_CGROUP: expected auto or none" ;;
esac
case "$EG_DRY_RUN" in
0 | 1) ;;
*) die "EG_DRY_RUN=$EG_DRY_RUN: expected 0 or 1" ;;
esac
find_bin
if [ "$EG_NFT" = apply ] && [ "$EG_DRY_RUN" != 1 ] && ! is_root; then
	die "EG_NFT=apply needs root (running as uid $(id -u)) with" \
	    "CAP_NET_ADMIN, and CAP_SYS_ADMIN only to enter another namespace;" \
	    "set EG_NFT=skip when an init container applied the rules"
fi

# init's folder step: chmod, then chown. The mode first, so that no
# moment has the new owner with the old 0777, and while root still owns
# the folder: then CAP_CHOWN is all it takes (CAP_FOWNER only for a folder
# root does not own). A folder already handed over, as a re-run of init
# on the pod's emptyDirs finds it, is left as it is.
own_dirs() {
	ou=${EG_INIT_OWNER%%:*} og=${EG_INIT_OWNER#*:}
	{ is_uint "$ou" && is_uint "$og"; } ||
	    die "EG_INIT_OWNER=$EG_INIT_OWNER: expected uid:gid (numbers)"
	for d in $(list "$EG_INIT_DIRS"); do
		{ [ -d "$d" ] && ! [ -L "$d" ]; } ||
		    die "EG_INIT_DIRS: $d: not a folder (or a symlink)"
		[ "$(stat -c '%u:%g %a' -- "$d")" != "$ou:$og 700" ] || continue
		if [ "$EG_DRY_RUN" = 1 ]; then
			show chmod 0700 -- "$d"
			show chown -- "$ou:$og" "$d"
			continue
		fi
		{ chmod 0700 -- "$d" && chown -- "$ou:$og" "$d"; } ||
		    die "EG_INIT_DIRS: $d: cannot hand it to $ou:$og mode 0700" \
		    "(the init container needs CAP_CHOWN, and CAP_FOWNER for a" \
		    "folder root does not own)"
	done
}

if [ "$mode" = init ]; then
	[ "$EG_NFT" = apply ] || [ -n "$EG_INIT_DIRS" ] ||
	    die "init with EG_NFT=skip and no EG_INIT_DIRS has nothing to do"
	[ "$EG_NFT" != apply ] || nft_step
	[ -z "$EG_INIT_DIRS" ] || own_dirs
	exit 0
fi
if [ "$mode" = hold ]; then
	# A holder without its table would hand every joining workload an
	# unfenced namespace: no skip here.
	[ "$EG_NFT" = apply ] || die "hold needs EG_NFT=apply: the namespace it" \
	    "holds would have no default-deny"
	[ -z "$EG_NETNS" ] || die "hold applies the table to its own namespace:" \
	    "EG_NETNS must be empty"
	hu=${EG_HOLD_USER%%:*} hg=${EG_HOLD_USER#*:}
	{ is_uint "$hu" && is_uint "$hg" && [ "$hu" != 0 ] && [ "$hg" != 0 ]; } ||
	    die "EG_HOLD_USER=$EG_HOLD_USER: expected uid:gid, neither 0"
	nft_step
	set -- setpriv --reuid="$hu" --regid="$hg" --clear-groups \
	    --no-new-privs sleep infinity
	if [ "$EG_DRY_RUN" = 1 ]; then
		show "$@"
		exit 0
	fi
	: >"$EG_HOLD_MARK" || die "EG_HOLD_MARK=$EG_HOLD_MARK: cannot write it"
	exec "$@"
fi

# Everything the guard needs is checked before the nft step changes
# anything.
[ -n "$EG_POLICY" ] || [ -n "$EG_TRUST_KEYS" ] ||
    die "no policy and no trust key: the guard would deny every request" \
    "forever. Set EG_TRUST_KEYS (the public keys the plane signs with)" \
    "and/or EG_POLICY"
if [ -n "$EG_POLICY" ] && ! [ -f "$EG_POLICY" ]; then
	die "EG_POLICY=$EG_POLICY: no such file"
fi
for k in $(list "$EG_TRUST_KEYS"); do
	[ -f "$k" ] || die "EG_TRUST_KEYS: $k: no such file"
done
case "$EG_LOG_FORMAT" in
json | text) ;;
*) die "EG_LOG_FORMAT=$EG_LOG_FORMAT: expected json or text" ;;
esac
[ -n "$(list "$EG_LISTEN")" ] || die "EG_LISTEN is empty"
drop=""
if [ -n "$EG_USER" ] && [ "$EG_USER" != root ]; then
	id -u -- "$EG_USER" >/dev/null 2>&1 || die "EG_USER=$EG_USER: no such user"
	if is_root; then
		drop=$EG_USER
	else
		note "running as uid $(id -u) already: EG_USER=$EG_USER not used"
	fi
elif is_root; then
	who="EG_USER=root"
	[ -n "$EG_USER" ] || who="EG_USER is empty"
	note "$who: the guard stays root (it logs a warning)"
fi
state=$EG_STATE_DIR
[ "$state" != none ] || state=""
if [ -n "$state" ] && ! [ -d "$state" ]; then
	if [ "$EG_DRY_RUN" = 1 ]; then
		:
	elif is_root; then
		# Made root's and 0700; the guard hands it to EG_USER before it
		# drops.
		(umask 077 && mkdir -p -- "$state") ||
		    die "EG_STATE_DIR=$EG_STATE_DIR: cannot create it"
	else
		die "EG_STATE_DIR=$EG_STATE_DIR: no such directory (EG_STATE_DIR=none" \
		    "keeps no state)"
	fi
fi
if [ -n "$state" ] && [ -z "$drop" ] && ! is_root && ! [ -w "$state" ]; then
	die "EG_STATE_DIR=$EG_STATE_DIR: not writable by uid $(id -u)"
fi

if [ "$EG_NFT" = apply ]; then
	nft_step
fi

# The guard's arguments go first, the caller's (EG_ARGS, then the command's
# own) after them. The single-value flags set here (--control, --policy,
# --state-dir/--no-state, --user, --log-format, --log-file) come from their
# EG_ variables: given again by the caller, the guard refuses to start
# ("--X given twice", exit 2), so neither side silently overrides the other.
n=$#
set -- "$@" run
for a in $(list "$EG_LISTEN"); do set -- "$@" --listen "$a"; done
set -- "$@" --control "$EG_CONTROL"
[ -z "$EG_POLICY" ] || set -- "$@" --policy "$EG_POLICY"
for k in $(list "$EG_TRUST_KEYS"); do set -- "$@" --trust-key "$k"; done
if [ -n "$state" ]; then
	set -- "$@" --state-dir "$state"
else
	set -- "$@" --no-state
fi
for a in $(list "$EG_DNS"); do set -- "$@" --dns "$a"; done
for a in $(list "$EG_ALLOW_RANGES"); do set -- "$@" --allow-range "$a"; done
for a in $(list "$EG_DENY_RANGES"); do set -- "$@" --deny-range "$a"; done
[ -z "$drop" ] || set -- "$@" --user "$drop"
set -- "$@" --log-format "$EG_LOG_FORMAT"
[ -z "$EG_LOG_FILE" ] || set -- "$@" --log-file "$EG_LOG_FILE"
for a in $(list "$EG_ARGS"); do set -- "$@" "$a"; done
# Rotate the caller's n arguments to the end.
while [ "$n" -gt 0 ]; do
	set -- "$@" "$1"
	shift
	n=$((n - 1))
done

if [ "$EG_DRY_RUN" = 1 ]; then
	show "$BIN" "$@"
	exit 0
fi
exec "$BIN" "$@"
