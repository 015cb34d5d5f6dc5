#!/bin/bash
# The Debian package (make deb), end to end in a clean Debian 12 root:
# builds it, lints it, installs it with apt into an unpacked mmdebstrap
# minbase bookworm (the Docker test's cached base tarball, made here when
# missing), starts the guard as the installed unit says (its ExecStart, as
# its User=, with its configuration files), answers a request through it,
# then purges it and checks that the root is as it was.
#
# The root is a plain folder under $T: apt in it reaches Debian's mirror
# through the host's network, as the Docker test's image builds do; the
# guard runs chrooted inside lib.sh's topology (GD), in a mount namespace
# of its own (its /proc), so nothing is mounted on the host.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "FAIL build: binaries missing"; exit 1; }
CACHE=${EG_DOCKER_CACHE:-/var/cache/egress-guard/docker-test}
R=$T/root
t0=$(date +%s)

# ---------------------------------------------------------------- build
out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" "BUILD=$EG_BUILD" \
    -o "$BIN" -o "$CTL" deb 2>&1)
rc=$?
DEB=$(tail -n1 <<<"$out")
case "$DEB" in */egress-guard_*_*.deb) [ "$rc" -eq 0 ] && [ -s "$DEB" ]; r=$?;; *) r=1;; esac
check deb_builds_named_version_arch $r "rc=$rc $out"
[ "$r" -eq 0 ] || { finish; exit 1; }
echo "# $(basename "$DEB"): $(stat -c %s "$DEB") bytes"
dep=$(dpkg-deb -f "$DEB" Depends)
echo "# Depends: $dep"
# Computed by dpkg-shlibdeps: each library package the binaries load, with
# the version their symbols need.
case "$dep" in *"libc6 (>="*"libevent-2.1-7 (>="*"libssl3 (>="*) r=0;; *) r=1;; esac
check deb_depends_computed_by_dpkg_shlibdeps $r "$dep"
want="usr/bin/egress-guard usr/bin/egress-guardctl lib/systemd/system/egress-guard.service
usr/share/man/man8/egress-guard.8.gz usr/share/man/man8/egress-guardctl.8.gz
usr/share/man/man5/egress-guard-policy.5.gz etc/egress-guard/egress-guard.env
usr/share/doc/egress-guard/copyright"
miss=""
dpkg-deb -c "$DEB" >"$T/deb.list"
for f in $want; do grep -q " \./$f\$" "$T/deb.list" || miss="$miss $f"; done
[ -z "$miss" ]
check deb_ships_binaries_unit_man_pages_config $? "missing:$miss"
if command -v lintian >/dev/null; then
	lintian --fail-on error --display-info "$DEB" >"$T/lintian.out" 2>&1
	r=$?
	sed 's/^/# lintian: /' "$T/lintian.out" | grep -v 'root privileges'
	check deb_lintian_no_errors $r "$(head -n 5 "$T/lintian.out" | tr '\n' ' ')"
else
	fail deb_lintian_no_errors "lintian missing (scripts/deps.sh installs it)"
fi

# ---------------------------------------------------------------- root
base=$CACHE/debian12-minbase.tar
mkdir -p "$CACHE"
if ! [ -s "$base" ]; then
	tmp=$CACHE/base.deb.$$.tar
	mmdebstrap --quiet --variant=minbase bookworm "$tmp" >"$T/mmdebstrap.log" 2>&1 &&
	    mv "$tmp" "$base" || { rm -f "$tmp"; fail deb_base_root "mmdebstrap: $(tail -n 3 "$T/mmdebstrap.log" | tr '\n' ' ')"; finish; exit 1; }
fi
mkdir -p "$R" && tar -xf "$base" -C "$R" || { fail deb_base_root "cannot unpack $base"; finish; exit 1; }
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
# What the root holds, less what apt and dpkg keep for themselves (lists,
# caches, logs, the package database) and the previous copies shadow's
# tools keep of passwd, group, shadow and gshadow at every change.
snapshot() {
	(cd "$R" && find . -xdev \( -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log \
	    -o -path ./var/lib/dpkg -o -path ./tmp -o -path ./proc -o -path ./dev -o -path ./run \
	    -o -path ./etc/ld.so.cache -o -path ./var/lib/systemd/deb-systemd-helper-enabled \) -prune \
	    -o -printf '%p %M %U %G\n' | grep -vE '^\./etc/(passwd|group|shadow|gshadow)- ' | sort
	for f in etc/passwd etc/group etc/shadow etc/gshadow; do
		[ -f "$R/$f" ] && sort "$R/$f" | sed "s|^|$f: |"
	done)
}
inroot() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
inroot apt-get -q update >"$T/apt.log" 2>&1 ||
    { fail deb_apt_update "$(tail -n 3 "$T/apt.log" | tr '\n' ' ')"; finish; exit 1; }
snapshot >"$T/before"

# ---------------------------------------------------------------- install
cp "$DEB" "$R/tmp/"
inroot apt-get install -y --no-install-recommends "./tmp/$(basename "$DEB")" >>"$T/apt.log" 2>&1
rc=$?
pw=$(inroot getent passwd egress-guard)
uid=$(cut -d: -f3 <<<"$pw") gid=$(cut -d: -f4 <<<"$pw")
st=$(stat -c '%a %u:%g' "$R/var/lib/egress-guard" 2>&1)
[ "$rc" -eq 0 ] && [ -n "$uid" ] && [ "$uid" -lt 1000 ] && [ "$uid" -ne 0 ] && [ "$st" = "700 $uid:$gid" ]
check deb_installs_with_apt_system_user_and_state_folder_0700 $? \
    "rc=$rc user=$pw state=$st $(tail -n 3 "$T/apt.log" | tr '\n' ' ')"
unit=$R/lib/systemd/system/egress-guard.service
grep -q '^User=egress-guard$' "$unit" && ! grep -q '^DynamicUser' "$unit" &&
    grep -q '^ExecStart=/usr/bin/egress-guard run ' "$unit"
check deb_unit_runs_as_package_user $? "$(grep -E '^(User|DynamicUser|ExecStart)' "$unit")"
# Control for the purge check below: the same snapshot sees the install.
snapshot >"$T/installed"
diff "$T/before" "$T/installed" >"$T/install.diff"
grep -q '^> \./usr/bin/egress-guard ' "$T/install.diff" && grep -q '^> etc/passwd: egress-guard:' "$T/install.diff"
check control_deb_snapshot_sees_installed_files_and_user $? "$(grep -c . "$T/install.diff") lines differ"
inroot man -w egress-guardctl >/dev/null 2>&1 || [ -f "$R/usr/share/man/man8/egress-guardctl.8.gz" ]
check deb_man_pages_installed $?

# ---------------------------------------------------------------- run
# As the unit would: its ExecStart, EnvironmentFile values, RuntimeDirectory
# (/run/egress-guard, 0750, the user's), its User=.
topo_up || { fail deb_topology "topo_up"; finish; exit 1; }
cat >"$T/zone.json" <<'Z'
{"api.example.test": {"A": ["198.18.1.10"]}, "other.example.test": {"A": ["198.18.1.10"]}}
Z
start_dns "$T/zone.json" && start_listener pub 198.18.1.10:80 || { fail deb_servers "dns/listener"; finish; exit 1; }
"$CTL" keygen --out "$T/plane.pem" >/dev/null 2>&1
echo '{"network_policy":"allowlist","allowed_hosts":["api.example.test:80"]}' >"$T/prof.json"
"$CTL" compile "$T/prof.json" --epoch 1 >"$T/pol.json" && "$CTL" sign "$T/pol.json" --key "$T/plane.pem" >"$R/etc/egress-guard/policy.json"
cp "$T/plane.pub.pem" "$R/etc/egress-guard/trust.pub.pem"
chmod 0644 "$R/etc/egress-guard/policy.json" "$R/etc/egress-guard/trust.pub.pem"
cat >>"$R/etc/egress-guard/egress-guard.env" <<'E'
EG_LISTEN=10.77.0.1:3128
EG_ARGS=--dns 198.18.0.53 --allow-range 198.18.0.0/15 --policy /etc/egress-guard/policy.json
E
# The unit's ExecStart with the environment file's values in place.
cmd=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/^ExecStart=//; s/\\$//' | tr '\n' ' ')
. <(grep -E '^EG_[A-Z_]+=' "$R/etc/egress-guard/egress-guard.env" | sed -E 's/^([A-Z_]+)=(.*)$/\1="\2"/')
cmd=${cmd//\$\{EG_LISTEN\}/$EG_LISTEN}
cmd=${cmd//\$EG_ARGS/$EG_ARGS}
echo "# ExecStart: $cmd"
install -d -m 0750 -o "$uid" -g "$gid" "$R/run/egress-guard"
# shellcheck disable=SC2086
start_bg "$GD" "$T/guard.out" unshare -m --propagation private sh -c \
    'mount -t proc proc "$1/proc" && r=$1 u=$2 && shift 2 && exec chroot --userspec="$u" "$r" "$@"' \
    sh "$R" "$uid:$gid" $cmd
GPID=$LASTPID
wait_file "$R/run/egress-guard/control.sock" 100
out=$(ip netns exec "$WL" curl -sS --max-time 10 -o /dev/null -w 'code=%{http_code}' -x http://10.77.0.1:3128 \
    http://api.example.test/ 2>&1)
case "$out" in code=200) grep -q 'GET /' "$T/pub.log"; r=$?;; *) r=1;; esac
check deb_installed_guard_answers_allowed_request $r "$out $(tail -n 3 "$T/guard.out" | tr '\n' ' ')"
out=$(ip netns exec "$WL" curl -sS --max-time 10 -o /dev/null -w 'code=%{http_code}' -x http://10.77.0.1:3128 \
    http://other.example.test/ 2>&1)
[ "$out" = code=403 ]
check deb_installed_guard_denies_other_name $? "$out"
# ip netns exec, unshare, sh and chroot each exec the next: GPID is the guard.
ids=$(awk '/^(Uid|CapEff):/ {printf "%s %s ", $1, $2}' "/proc/$GPID/status" 2>&1)
case "$ids" in "Uid: $uid "*"CapEff: 0000000000000000 ") r=0;; *) r=1;; esac
check deb_installed_guard_runs_as_package_user_no_caps $r "$ids"
kill "$GPID" 2>/dev/null; wait "$GPID" 2>/dev/null
rm -f "$R/etc/egress-guard/policy.json" "$R/etc/egress-guard/trust.pub.pem"
rm -rf "$R/run/egress-guard"

# ---------------------------------------------------------------- purge
inroot apt-get purge -y egress-guard >>"$T/apt.log" 2>&1 &&
    inroot apt-get autoremove --purge -y >>"$T/apt.log" 2>&1
rc=$?
snapshot >"$T/after"
diff "$T/before" "$T/after" >"$T/purge.diff"
[ "$rc" -eq 0 ] && [ ! -s "$T/purge.diff" ]
check deb_purge_leaves_root_as_before $? "rc=$rc $(head -n 12 "$T/purge.diff" | tr '\n' ' ')"
echo "# deb_test: $(($(date +%s) - t0)) s"
finish
