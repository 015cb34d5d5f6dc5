#!/bin/bash
# The sidecar under a real Docker engine (dockerd 20.10, Debian 12's
# docker.io; docker-compose 1.29): builds container/Dockerfile as a user
# does, then runs compose layout (a) (container/compose.yaml) and layout (b)
# (container/compose.shared.yaml) and checks, for each, what the workload
# can and cannot reach, the plane's push, the guard's privileges, health,
# stop and restart; then the pod shape of container/k8s with plain Docker,
# then one guard in tenant mode (container/k8s/daemonset-tenants.yaml's
# container) serving three sandboxes, with the cross-tenant cases,
# and the conformance matrix's Docker target (tests/conformance/docker.sh,
# layout (a)), whose receipt must verify and name this engine, layout (a)
# and this image. BuildKit builds the image too on a cold cache (or with
# EG_DOCKER_BUILDKIT=1).
#
# Two daemons, one after the other, on one data root under $T:
#   build: on the host's network (apt-get in the build needs Debian's
#          mirror, as on the host), with no firewall, no bridge, no
#          forwarding: it changes nothing on the host;
#   run:   `nsenter --net=` into a namespace made here (not `ip netns exec`,
#          which remounts /sys and hides the cgroups), with Docker's own
#          firewall (internal networks only isolate with it) and --dns at
#          the test's DNS server, so a query that escapes through Docker's
#          embedded resolver lands where the test sees it.
# Every network is `internal`. The pretend internet is one container at
# 198.18.0.10: dnsd.py on :53 (the daemon's --dns: a query there came through
# Docker's resolver or straight from a container) and on :5353 (the guard's
# explicit EG_DNS), listener.py HTTP :80 and TLS :443.
# The host's links, nft ruleset and iptables are compared before and after.
# Base image: mmdebstrap --variant=minbase bookworm, imported as debian:12
# and debian:12-slim; the images built are kept (docker save) in
# $EG_DOCKER_CACHE (default /var/cache/egress-guard/docker-test, outside the
# clone so that a fresh clone on the same machine reuses it, like apt's own
# cache), with the base tarball, to make re-runs faster: the build re-runs
# with --cache-from. Delete that folder for a cold run (about 13 minutes
# here, most of it Debian's mirror; tests/run gives this test 30).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# A folder of our own (lib.sh's cleanup removes whatever $T names at exit).
rmdir "$T" && T=$(mktemp -d /tmp/egdocker.XXXXXX) || exit 1

T0=$(date +%s)
NS=egdk-$$
DK=$T/d
SOCK=$DK/docker.sock
CACHE=${EG_DOCKER_CACHE:-/var/cache/egress-guard/docker-test}
IMG=egress-guard:0.1.0
TOOLS=egress-guard-test-tools:1
INET=198.18.0.10
export DOCKER_HOST=unix://$SOCK
DPID=""
mkdir -p "$DK" "$CACHE"
# EG_DOCKER_PARTS: which runs after the build (make conformance-docker:
# "matrix" only). EG_DOCKER_GUARD_BIN: a guard binary put over the image's
# (a derived image, for the mutant runs of make conformance-mutants-docker).
PARTS=${EG_DOCKER_PARTS:-"a b p t matrix"}
part() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }

# ----------------------------------------------------------------- daemon
dk() { timeout 120 docker "$@"; }
host_snapshot() {
	ip -br link | awk '{print $1, $2}' | sort
	echo ---
	nft list ruleset 2>&1 | sed -E 's/counter packets [0-9]+ bytes [0-9]+//'
	echo ---
	for c in iptables-save ip6tables-save; do
		command -v "$c" >/dev/null && "$c" 2>&1 | grep -v '^#' | sed -E 's/\[[0-9]+:[0-9]+\]//'
	done
}
dockerd_start() {	# dockerd_start build|run: sets DPID, or WHY and fails
	rm -f "$DK/dockerd.pid"
	args=(--data-root "$DK/data" --exec-root "$DK/x" --pidfile "$DK/dockerd.pid"
	    -H "unix://$SOCK" --bridge=none --userland-proxy=false --dns "$INET"
	    --log-level warn)
	if [ "$1" = build ]; then
		dockerd "${args[@]}" --iptables=false --ip-forward=false --ip-masq=false \
		    >>"$DK/dockerd.log" 2>&1 &
	else
		nsenter "--net=/run/netns/$NS" dockerd "${args[@]}" >>"$DK/dockerd.log" 2>&1 &
	fi
	DPID=$!
	for _ in $(seq 120); do
		timeout 5 docker version >/dev/null 2>&1 && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.5
	done
	WHY="dockerd ($1) did not start: $(tail -n 5 "$DK/dockerd.log" | tr '\n' ' ')"
	return 1
}
dockerd_stop() {
	[ -n "$DPID" ] || return 0
	if kill -0 "$DPID" 2>/dev/null; then
		ids=$(timeout 30 docker ps -aq 2>/dev/null)
		[ -z "$ids" ] || timeout 60 docker rm -f -v $ids >/dev/null 2>&1
		timeout 30 docker network prune -f >/dev/null 2>&1
		timeout 30 docker volume prune -f >/dev/null 2>&1
		kill "$DPID" 2>/dev/null
		for _ in $(seq 300); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$DPID" 2>/dev/null
	fi
	# Its containerd, by the pid file in our exec root.
	cp=$(cat "$DK/x/containerd/containerd.pid" 2>/dev/null)
	if [ -n "$cp" ] && kill -0 "$cp" 2>/dev/null; then
		kill "$cp"; sleep 1; kill -9 "$cp" 2>/dev/null
	fi
	DPID=""
}
unmount_ours() {	# whatever the daemons left mounted under $DK, deepest first
	awk -v d="$DK" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r |
	    while read -r m; do umount -l "$m" 2>/dev/null; done
}
docker_cleanup() {
	dockerd_stop
	unmount_ours
	ip netns del "$NS" 2>/dev/null
	[ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$DK"
}
trap 'docker_cleanup; cleanup' EXIT
trap 'exit 1' INT TERM	# through the EXIT trap
bail() { fail "$1" "$2"; echo "# docker log:"; tail -n 20 "$DK/dockerd.log"; finish; exit 1; }

host_snapshot >"$T/host.before"

# ---------------------------------------------------------------- build
base="$CACHE/debian12-minbase.tar"
if ! [ -s "$base" ]; then
	t=$(date +%s)
	mmdebstrap --quiet --variant=minbase bookworm "$CACHE/base.tmp.tar" >"$T/mmdebstrap.log" 2>&1 &&
	    mv "$CACHE/base.tmp.tar" "$base" ||
	    bail docker_base_image "mmdebstrap failed: $(tail -n 3 "$T/mmdebstrap.log" | tr '\n' ' ')"
	echo "# base: mmdebstrap minbase bookworm in $(($(date +%s) - t)) s"
fi
dockerd_start build || bail dockerd_build_starts "$WHY"
COLD=1
if [ -s "$CACHE/images.tar" ] && dk load -i "$CACHE/images.tar" >/dev/null 2>&1; then
	COLD=0
else
	dk import "$base" debian:12 >/dev/null && dk tag debian:12 debian:12-slim ||
	    bail docker_base_image "docker import failed"
fi
before=$(dk images -q --no-trunc | sort | tr '\n' ' ')

# The test's own tools (curl, python3 for dnsd.py/listener.py): workload
# and pretend internet. Built beside the guard's image: both mostly wait
# for Debian's mirror.
t=$(date +%s)
printf '%s\n' 'FROM debian:12-slim' \
    'RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends curl python3 openssl libjansson4 && apt-get clean && rm -rf /var/lib/apt/lists/*' |
    timeout 600 docker build -q --network host --cache-from "$TOOLS" -t "$TOOLS" - >"$T/tools.log" 2>&1 &
TOOLS_PID=$!

# The image, exactly as the README says, with the legacy builder (dockerd
# 20.10's default). The build stage is tagged for --cache-from.
REV=$(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
cd "$TOP" || exit 1
build() {
	DOCKER_BUILDKIT=0 timeout 900 docker build --network host -f container/Dockerfile \
	    --build-arg VERSION=0.1.0 --build-arg "REVISION=$REV" \
	    --cache-from egress-guard-build:cache --cache-from "$IMG" "$@" . >>"$T/build.log" 2>&1
}
build --target build -t egress-guard-build:cache && build -t "$IMG"
check docker_image_builds_offline_with_legacy_builder $? "$(tail -n 8 "$T/build.log" | tr '\n' ' ')"
# BuildKit, the same file. Debian 12's docker CLI (20.10, /usr/bin/docker)
# has it built in; a newer CLI needs the buildx plugin, which Debian 12 does
# not ship, so this is Debian's CLI by path. Its cache is the daemon's
# BuildKit store, which the image cache here does not keep: it redoes the
# package layers (minutes of Debian's mirror), so only on a cold run or
# with EG_DOCKER_BUILDKIT=1; its image is not kept.
if [ "$COLD" = 1 ] || [ "${EG_DOCKER_BUILDKIT:-0}" = 1 ]; then
	tb=$(date +%s)
	DOCKER_BUILDKIT=1 timeout 900 "${EG_DOCKER_DEBIAN_CLI:-/usr/bin/docker}" build --progress plain \
	    --network host -f container/Dockerfile --build-arg VERSION=0.1.0 --build-arg "REVISION=$REV" \
	    -t egress-guard:buildkit . >"$T/buildkit.log" 2>&1
	check docker_image_builds_offline_with_buildkit $? "$(tail -n 8 "$T/buildkit.log" | tr '\n' ' ')"
	echo "# BuildKit build: $(($(date +%s) - tb)) s, $(dk image inspect -f '{{.Size}}' egress-guard:buildkit 2>/dev/null) bytes"
	dk run --rm --entrypoint egress-guard egress-guard:buildkit --version >"$T/bkver" 2>&1
	check docker_buildkit_image_runs_guard $? "$(cat "$T/bkver")"
	dk rmi egress-guard:buildkit >/dev/null 2>&1
else
	echo "# BuildKit build skipped: warm cache (EG_DOCKER_BUILDKIT=1 runs it)"
fi
wait "$TOOLS_PID" || bail docker_tools_image "$(tail -n 5 "$T/tools.log" | tr '\n' ' ')"
cd - >/dev/null || exit 1
echo "# build: $(($(date +%s) - t)) s"
size=$(dk image inspect -f '{{.Size}}' "$IMG" 2>/dev/null)
bsize=$(dk image inspect -f '{{.Size}}' debian:12 2>/dev/null)
echo "# image $IMG: ${size:-?} bytes (FROM scratch; the build stage's debian:12 ${bsize:-?})"
[ -n "$size" ] && [ "$size" -le 12000000 ]
check docker_image_at_most_12_mb "$?" "${size:-?} bytes"
DIGEST=$(dk image inspect -f '{{.Id}}' "$IMG" 2>/dev/null)
echo "# image id $DIGEST"
# No shell: the image's entry and health check are exec form, and a shell
# is not there to run. Control: the tools image has one, same command.
dk run --rm --entrypoint sh "$IMG" -c true >"$T/sh.out" 2>&1; r1=$?
dk run --rm --entrypoint /bin/sh "$IMG" -c true >>"$T/sh.out" 2>&1; r2=$?
dk run --rm --entrypoint sh "$TOOLS" -c true >>"$T/sh.out" 2>&1; r3=$?
[ "$r1" -ne 0 ] && [ "$r2" -ne 0 ] && [ "$r3" -eq 0 ]
check hostile_docker_run_sh_in_image_fails_control_tools_image_runs_it $? \
    "image sh=$r1 /bin/sh=$r2 tools sh=$r3 $(tr '\n' ' ' <"$T/sh.out" | cut -c1-300)"
ep=$(dk image inspect -f '{{json .Config.Entrypoint}} {{json .Config.Healthcheck.Test}}' "$IMG" 2>&1)
case "$ep" in '["/usr/local/bin/egress-guard","appliance"] ["CMD","/usr/local/bin/egress-guard","appliance","health"]') r=0;; *) r=1;; esac
check docker_image_entrypoint_and_healthcheck_exec_form $r "$ep"
# The files of the image are exactly its SBOM's (path, type, mode, owner),
# and each library names its Debian package and version.
c=$(dk create "$IMG") && dk cp "$c:/usr/share/egress-guard/sbom.tsv" "$T/sbom.tsv" &&
    dk cp "$c:/etc/passwd" "$T/img.passwd"
dk rm -f "$c" >/dev/null 2>&1
dk save "$IMG" -o "$T/img.tar" && mkdir -p "$T/img" && tar -xf "$T/img.tar" -C "$T/img"
python3 - "$T/img" "$T/sbom.tsv" >"$T/sbom.cmp" 2>&1 <<'PY'
import json, os, sys, tarfile
root, sbom = sys.argv[1], sys.argv[2]
man = json.load(open(os.path.join(root, "manifest.json")))[0]
seen = {}
for layer in man["Layers"]:
    with tarfile.open(os.path.join(root, layer)) as t:
        for m in t.getmembers():
            p = "/" + m.name.strip("./").rstrip("/") if m.name not in (".", "./") else "/"
            if p == "/":
                continue
            kind = "d" if m.isdir() else "f" if m.isfile() else "other:" + str(m.type)
            seen[p] = (kind, "%04o" % (m.mode & 0o7777), "%d:%d" % (m.uid, m.gid))
want, bad = {}, []
for line in open(sbom):
    if line.startswith("#"):
        continue
    f = line.rstrip("\n").split("\t")
    want[f[0]] = (f[1], f[2], f[3])
    if f[0].startswith(("/lib", "/usr/lib")) and f[1] == "f" and (f[5] == "egress-guard" or f[6] in ("", "-")):
        bad.append("library without a Debian package: " + f[0])
for p in sorted(set(seen) | set(want)):
    if seen.get(p) != want.get(p):
        bad.append("%s image=%s sbom=%s" % (p, seen.get(p), want.get(p)))
print("\n".join(bad) if bad else "ok %d entries" % len(want))
sys.exit(1 if bad else 0)
PY
check docker_image_file_list_equals_sbom $? "$(head -n 12 "$T/sbom.cmp" | tr '\n' ' ')"
echo "# SBOM ($(grep -vc '^#' "$T/sbom.tsv" 2>/dev/null) entries), libraries:"
awk -F'\t' '$6 != "egress-guard" && !/^#/ {print "#   " $1 " " $6 " " $7}' "$T/sbom.tsv" 2>/dev/null
[ -n "${EG_DOCKER_SBOM_OUT:-}" ] && cp "$T/sbom.tsv" "$EG_DOCKER_SBOM_OUT"
{ dk run --rm --entrypoint egress-guard "$IMG" --version && dk run --rm --entrypoint egress-guardctl "$IMG" --version &&
    grep '^egress-guard:' "$T/img.passwd"; } >"$T/ver" 2>&1
grep -q "^egress-guard:x:10001:10001:" "$T/ver"
check docker_image_runs_guard_and_has_user_10001 $? "$(tr '\n' ' ' <"$T/ver")"
after=$(dk images -q --no-trunc | sort | tr '\n' ' ')
if [ "$before" != "$after" ] || ! [ -s "$CACHE/images.tar" ]; then
	dk save debian:12 debian:12-slim "$TOOLS" egress-guard-build:cache "$IMG" \
	    -o "$CACHE/images.tmp.tar" && mv "$CACHE/images.tmp.tar" "$CACHE/images.tar"
fi
# The plane's side for the conformance cases: the tools image (a shell,
# setpriv, find) with the image's egress-guardctl, whose libraries it
# has (libjansson4 above) but for libnftnl and libmnl (`tenant add
# --nft-netns` applies the guard-side table), copied from the image at
# the paths its SBOM names. Never cached: two COPY layers.
PLANE=egress-guard-test-plane:1
nftlibs=$(awk -F'\t' '$1 ~ /\/lib(nftnl|mnl)\.so\./ {printf "%s ", $1}' "$T/sbom.tsv" 2>/dev/null)
{ printf 'FROM %s\nCOPY --from=%s /usr/local/bin/egress-guardctl /usr/local/bin/egress-guardctl\n' "$TOOLS" "$IMG"
  for l in $nftlibs; do printf 'COPY --from=%s %s %s\n' "$IMG" "$l" "$l"; done; } |
    DOCKER_BUILDKIT=0 dk build -q -t "$PLANE" - >"$T/plane.log" 2>&1 &&
    dk run --rm --entrypoint egress-guardctl "$PLANE" --version >>"$T/plane.log" 2>&1 ||
    bail docker_plane_image "$(tail -n 3 "$T/plane.log" | tr '\n' ' ')"
# A mutant guard over the image's (never cached): the image a mutant run
# deploys instead.
if [ -n "${EG_DOCKER_GUARD_BIN:-}" ]; then
	mkdir -p "$T/mutant" && cp "$EG_DOCKER_GUARD_BIN" "$T/mutant/egress-guard" &&
	    printf 'FROM %s\nCOPY egress-guard /usr/local/bin/egress-guard\n' "$IMG" >"$T/mutant/Dockerfile" &&
	    DOCKER_BUILDKIT=0 dk build -q -t egress-guard:mutant "$T/mutant" >/dev/null ||
	    bail docker_mutant_image "cannot build the image with $EG_DOCKER_GUARD_BIN"
	IMG=egress-guard:mutant
	DIGEST=$(dk image inspect -f '{{.Id}}' "$IMG" 2>/dev/null)
	echo "# mutant image $IMG ($EG_DOCKER_GUARD_BIN): $DIGEST"
fi
dockerd_stop

# ---------------------------------------------------------------- run
ip netns add "$NS" && ip -n "$NS" link set lo up || bail docker_netns "ip netns add $NS failed"
dockerd_start run || bail dockerd_run_starts_in_own_namespace "$WHY"
pass dockerd_run_starts_in_own_namespace

# Keys and bundles, as the plane makes them.
mkdir -p "$T/keys" "$T/bundles" "$T/inet"
"$CTL" keygen --out "$T/plane.pem" >/dev/null 2>&1 && cp "$T/plane.pub.pem" "$T/keys/runner.pub.pem"
bundle() {	# bundle NAME EPOCH HOST:PORT...
	n=$1 e=$2; shift 2
	python3 -c 'import json,sys; print(json.dumps({"network_policy":"allowlist","allowed_hosts":sys.argv[1:]}))' \
	    "$@" >"$T/prof.json" &&
	    "$CTL" compile "$T/prof.json" --epoch "$e" >"$T/pol.json" &&
	    "$CTL" sign "$T/pol.json" --key "$T/plane.pem" >"$T/bundles/$n.json"
}
bundle current 1 api.example.test:80 api.example.test:443
bundle wider 2 api.example.test:80 api.example.test:443 keep.example.test:80
bundle narrow 3 api.example.test:80
chmod -R a+rX "$T/keys" "$T/bundles"

# The pretend internet's files.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=api.example.test \
    -addext subjectAltName=DNS:api.example.test -keyout "$T/inet/key.pem" \
    -out "$T/inet/cert.pem" >/dev/null 2>&1
cat >"$T/inet/zone.json" <<'Z'
{"api.example.test": {"A": ["198.18.0.10"]}, "other.example.test": {"A": ["198.18.0.10"]},
 "keep.example.test": {"A": ["198.18.0.10"]}, "a.example.test": {"A": ["198.18.0.10"]},
 "b.example.test": {"A": ["198.18.0.10"]}, "b2.example.test": {"A": ["198.18.0.10"]},
 "c.example.test": {"A": ["198.18.0.10"]}}
Z
# Each server writes its ready file (in the mounted folder) once it
# listens: inet_ready waits for them before a layout's first use.
cat >"$T/inet/run.sh" <<EOF
cd /inet
python3 /t/dnsd.py --listen $INET:53 --zone zone.json --log dns53.log --ready dns53.ready &
python3 /t/dnsd.py --listen $INET:5353 --zone zone.json --log dns5353.log --ready dns5353.ready &
python3 /t/listener.py --listen $INET:80 --log http.log --name inet --ready http.ready &
python3 /t/listener.py --listen $INET:443 --tls --cert cert.pem --key key.pem --log https.log --name inet --ready https.ready &
wait
EOF
chmod -R a+rwX "$T/inet"
INET_READY="dns53 dns5353 http https"
# inet_unready: before a layout starts its internet (the one before left
# its ready files). inet_ready [NAME...]: the internet's ready files and
# NAME's, each within 60 s; else it says which are missing (the checks
# that need them then fail with their own detail).
inet_unready() { for f in $INET_READY bystander; do rm -f "$T/inet/$f.ready"; done; }
inet_ready() {
	missing=""
	for f in $INET_READY "$@"; do wait_file "$T/inet/$f.ready" 600 || missing="$missing $f"; done
	[ -z "$missing" ] && return 0
	echo "# pretend internet not ready after 60 s:$missing"
	return 1
}
# The image's own health check, run every second instead of every 15 s
# (the test waits for it after every start).
FAST_HEALTH="    healthcheck:
      interval: 1s"
INET_SVC="
  internet:
    image: $TOOLS
    command: [sh, /inet/run.sh]
    volumes: ['$TI:/t:ro', '$T/inet:/inet']
    init: true"

# ------------------------------------------------------------ helpers
LAYOUT=""
PLANE_USER=0:0	# compose: the socket is root's (the guard drops after it)
PLANE_ENV=()
dc() { timeout 240 docker-compose --ansi never -p "$PROJ" --project-directory "$DIR" \
    -f "$DIR/$CFILE" -f "$DIR/override.yaml" "$@"; }
declare -A CID	# container ids by project/service: docker-compose is slow to ask
cid() {
	k=$PROJ/$1
	if [ -z "${CID[$k]:-}" ]; then
		if [ "$LAYOUT" = p ]; then
			CID[$k]=$(dk inspect -f '{{.Id}}' "${PROJ}_$1" 2>/dev/null)
		else
			CID[$k]=$(dc ps -q "$1" 2>/dev/null | head -n1)
		fi
	fi
	echo "${CID[$k]}"
}
remember() {	# remember SERVICE...: their ids, in this shell (not a $(...))
	for sv in "$@"; do
		CID[$PROJ/$sv]=""
		CID[$PROJ/$sv]=$(cid "$sv")
	done
}
in_wl() { dk exec -i "$(cid workload)" "$@"; }
probe() { in_wl python3 - --timeout 2 "$@" <"$TI/docker_probe.py" 2>&1 | tail -n1; }
# via URL: "code=NNN reason=R" from the workload, through its proxy variables.
via() {
	in_wl curl -sS -v --max-time 10 -k -o /dev/null -w 'code=%{http_code}' "$1" 2>"$T/via.err"
	r=$(sed -n 's/^< X-Egress-Guard-Reason: \([a-z_]*\).*/\1/p' "$T/via.err" | tr -d '\r' | head -n1)
	echo " reason=${r:--}"
}
plane() {	# plane CMD...: egress-guardctl in a container with the control volume only
	dk run --rm --network none --user "$PLANE_USER" "${PLANE_ENV[@]}" --cap-drop ALL --security-opt no-new-privileges:true \
	    --read-only -v "${PROJ}_control:/run/egress-guard:nocopy" -v "$T/bundles:/bundles:ro" \
	    "$IMG" egress-guardctl "$@" --control /run/egress-guard/control.sock 2>&1
}
epoch() {	# the epoch in `status` (a few tries: a container start can be slow)
	for _ in 1 2 3; do
		st=$(plane status)
		e=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["policy"]["epoch"])' <<<"$st" 2>/dev/null) &&
		    [ -n "$e" ] && { echo "$e"; return 0; }
		sleep 1
	done
	echo "?(${st:0:160})"
}
health() { dk inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$1" 2>/dev/null; }
wait_health() {	# wait_health CID: healthy within 60 s
	for _ in $(seq 120); do
		[ "$(health "$1")" = healthy ] && return 0
		sleep 0.5
	done
	return 1
}
dns_seen() { cat "$T/inet/dns53.log" "$T/inet/dns5353.log" 2>/dev/null | grep -c "$1"; }

# no_route L GUARD_IP NAME: the workload with its proxy variables unset
# reaches nothing. The probes run at once, each a check of its own. NAME is
# one Docker's resolver answers itself (a container's).
no_route() {
	L=$1 gip=$2 dname=$3
	out=$(in_wl env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy \
	    curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://$INET/" 2>&1)
	case "$out" in *000*|*"Failed"*|*"timed out"*|*"Couldn't"*) r=0;; *) r=1;; esac
	check "${L}_workload_without_proxy_curl_to_internet_fails" $r "$out"
	# Docker's embedded resolver (UDP and TCP) included.
	specs=("tcp $INET 80" "tcp $INET 443" "tcp $gip 22" "tcp $gip 9"
	    "udp_dns $INET 53 escape-$L-udp.example.test"
	    "udp_dns $INET 5353 escape-$L-udp2.example.test"
	    "tcp_dns $INET 53 escape-$L-tcp.example.test"
	    "udp_dns 127.0.0.11 53 escape-$L-e1.example.test"
	    "tcp_dns 127.0.0.11 53 escape-$L-e2.example.test"
	    "udp_dns 127.0.0.11 53 $dname")
	[ "$L" = a ] && specs+=("tcp 172.30.0.9 8080")
	args=()
	for sp in "${specs[@]}"; do args+=($sp +); done
	mapfile -t res < <(in_wl python3 - --timeout 2 "${args[@]}" <"$TI/docker_probe.py" 2>&1)
	for i in "${!specs[@]}"; do
		set -- ${specs[$i]}
		case "$2" in
		127.0.0.11)
			n="${L}_workload_${1}_via_docker_127_0_0_11_fails"
			[ "${4:-}" = "$dname" ] && n="${L}_workload_container_name_via_docker_127_0_0_11_fails" ;;
		172.30.0.9) n=a_workload_direct_tcp_to_other_container_on_sandbox_has_no_route ;;
		*) n="${L}_workload_direct_${1}_${3}_${2//./_}_has_no_route" ;;
		esac
		case "${res[$i]:-}" in *" blocked "*) r=0;; *) r=1;; esac
		check "$n" $r "${res[$i]:-no result}"
	done
	# The name service as the workload's libc uses it (127.0.0.11).
	out=$(in_wl timeout 10 getent hosts "escape-$L-e3.example.test" 2>&1; echo "rc=$?")
	case "$out" in *rc=0*) r=1;; *) r=0;; esac
	check "${L}_workload_getent_via_docker_127_0_0_11_fails" $r "$out"
	sleep 1
	n=$(dns_seen "escape-$L-")
	[ "$n" -eq 0 ]
	check "${L}_test_dns_server_sees_no_query_from_workload" $? "$n queries: $(cat "$T"/inet/dns*.log | grep "escape-$L-" | tr '\n' ' ')"
}

# guard_checks L: privileges, control socket, push, revoke, health, stop,
# restart (epoch floor).
guard_checks() {
	L=$1
	g=$(cid guard)
	pid=$(dk inspect -f '{{.State.Pid}}' "$g")
	st=$(awk '/^(Uid|Gid|CapEff|CapPrm|NoNewPrivs):/ {printf "%s %s ", $1, $2}' "/proc/$pid/status" 2>&1)
	case "$st" in "Uid: 10001 Gid: 10001 CapPrm: 0000000000000000 CapEff: 0000000000000000 NoNewPrivs: 1 ") r=0;; *) r=1;; esac
	check "${L}_guard_uid_10001_no_caps_no_new_privs_on_host_proc" $r "pid $pid: $st"
	[ "$(health "$g")" = healthy ]
	check "${L}_guard_healthcheck_healthy" $? "$(health "$g")"
	# No shell to exec into the guard; the workload's (control) has one.
	out=$(dk exec "$g" sh -c 'echo shell' 2>&1; echo "rc=$?"; in_wl sh -c 'echo control-shell' 2>&1)
	case "$out" in *shell*rc=0*) r=1;; *"rc="[1-9]*control-shell*) r=0;; *) r=1;; esac
	check "hostile_${L}_docker_exec_sh_in_guard_fails" $r "$(tr '\n' ' ' <<<"$out" | cut -c1-300)"

	out=$(in_wl sh -c 'ls -la /run/egress-guard 2>&1; find / -xdev -type s 2>/dev/null')
	case "$out" in *control.sock*) r=1;; *) r=0;; esac
	check "${L}_control_socket_absent_from_workload_filesystem" $r "$out"

	e1=$(epoch)
	out=$(plane push /bundles/wider.json)
	e2=$(epoch)
	[ "$e1" = 1 ] && [ "$e2" = 2 ]
	check "${L}_plane_container_pushes_signed_bundle_epoch_in_status" $? "before=$e1 after=$e2 push: $out"
	out=$(via http://keep.example.test/)
	case "$out" in *code=200*) r=0;; *) r=1;; esac
	check "${L}_pushed_policy_admits_new_name" $r "$out"

	# A live tunnel to a name the narrowing push removes is closed. The
	# push waits for the tunnel up to 30 s (docker exec and python
	# start-up); a tunnel not open by then fails the check, and the push
	# still goes (the restart below expects epoch 3). Once open, the probe
	# waits up to 60 s for the close (the push is a container start).
	# Emptied first: the last layout's output must not pass for this one.
	: >"$T/tunnel.out"
	in_wl python3 - --timeout 15 tunnel "$GIP" 3128 api.example.test 443 60 \
	    <"$TI/docker_probe.py" >"$T/tunnel.out" 2>&1 &
	tp=$!
	for _ in $(seq 300); do
		grep -q 'tunnel' "$T/tunnel.out" && break
		kill -0 "$tp" 2>/dev/null || break
		sleep 0.1
	done
	opened=0; grep -q '^tunnel open' "$T/tunnel.out" && opened=1
	out=$(plane push /bundles/narrow.json)
	wait "$tp"
	tun=$(tr '\n' ' ' <"$T/tunnel.out")
	dk logs "$g" >"$T/guard-$L.log" 2>&1
	case "$opened $tun" in "1 tunnel open tunnel closed"*) grep -q revoked "$T/guard-$L.log"; r=$?;; *) r=1;; esac
	[ "$opened" = 1 ] || tun="no open tunnel before the push (waited 30 s): ${tun:-no output}"
	check "${L}_narrowing_push_closes_live_tunnel_revoked" $r "$tun / push: $out"

	# Restart: the state volume keeps epoch 3 and its floor.
	dk restart "$g" >/dev/null
	wait_health "$g"
	e=$(epoch)
	out=$(plane push /bundles/wider.json)
	case "$out" in *'"epoch":2'*|*'"epoch": 2'*) r=1;; *) r=0;; esac
	[ "$e" = 3 ] && [ "$r" = 0 ]
	check "${L}_restart_keeps_epoch_floor_from_state_volume" $? "epoch after restart=$e; older push: $out"

	# A stop is quick and clean (SIGTERM; Docker's grace period is 10 s).
	# The wall clock includes the docker CLI's own start-up (seconds on a
	# loaded machine): 9 s, under the grace, so a guard that ignores
	# SIGTERM (SIGKILLed at 10 s: exit 137) fails on both counts.
	t=$(date +%s%N)
	dk stop -t 10 "$g" >/dev/null
	ms=$((($(date +%s%N) - t) / 1000000))
	rc=$(dk inspect -f '{{.State.ExitCode}}' "$g")
	[ "$rc" = 0 ] && [ "$ms" -lt 9000 ]
	check "${L}_docker_stop_exits_0_within_grace" $? "exit=$rc in ${ms} ms"
	dk start "$g" >/dev/null && wait_health "$g"
}

# ------------------------------------------------- layout (a), compose.yaml
if part a; then
echo "# layout (a) at $(($(date +%s) - T0)) s"
LAYOUT=a PROJ=egda$$ DIR=$T/a CFILE=compose.yaml GIP=172.30.0.2
mkdir -p "$DIR"
cp "$TOP/container/compose.yaml" "$DIR/"
cp -r "$T/keys" "$T/bundles" "$DIR/"
cat >"$DIR/override.yaml" <<EOF
# The test's additions: every network internal, the pretend internet on
# egress, a bystander on sandbox, the test's resolver for the guard.
networks:
  egress:
    internal: true
    ipam:
      config:
        - subnet: 198.18.0.0/24
services:
  guard:
    environment:
      EG_DNS: "$INET:5353"
      EG_ALLOW_RANGES: 198.18.0.0/15
$FAST_HEALTH
$INET_SVC
    networks:
      egress:
        ipv4_address: $INET
  bystander:
    image: $TOOLS
    command: [python3, /t/listener.py, --listen, "0.0.0.0:8080", --log, /inet/bystander.log,
        --ready, /inet/bystander.ready]
    volumes: ['$TI:/t:ro', '$T/inet:/inet']
    networks:
      sandbox:
        ipv4_address: 172.30.0.9
EOF
export WORKLOAD_IMAGE=$TOOLS
t=$(date +%s)
inet_unready
dc up -d >"$T/up-a.log" 2>&1
check a_compose_up_with_docker_compose_1_29 $? "$(tail -n 5 "$T/up-a.log" | tr '\n' ' ')"
inet_ready bystander
echo "# layout (a) up in $(($(date +%s) - t)) s"
remember workload guard sandbox-net runner
dk inspect -f '{{.State.ExitCode}}' "$(cid runner)" >"$T/runner.rc" 2>&1
[ "$(cat "$T/runner.rc")" = 0 ]
check a_runner_service_pushed_current_bundle $? "$(cat "$T/runner.rc") $(dc logs runner 2>&1 | tail -n 2 | tr '\n' ' ')"

if [ -n "$(cid workload)" ]; then
	out=$(in_wl sh -c 'id -u; grep CapEff /proc/self/status; echo $HTTPS_PROXY')
	case "$(echo $out)" in "1000 CapEff: 0000000000000000 http://172.30.0.2:3128") r=0;; *) r=1;; esac
	check a_workload_uid_1000_no_caps_proxy_set $r "$out"
	out=$(via http://api.example.test/)
	case "$out" in *code=200*) r=0;; *) r=1;; esac
	check a_workload_reaches_admitted_name_through_guard $r "$out"
	out=$(via https://api.example.test/)
	case "$out" in *code=200*) r=0;; *) r=1;; esac
	check a_workload_reaches_admitted_name_over_tls_tunnel $r "$out"
	out=$(via http://other.example.test/)
	case "$out" in *code=403*reason=not_allowlisted*) r=0;; *) r=1;; esac
	check a_workload_denied_name_403_with_reason $r "$out"
	no_route a "$GIP" guard

	# 19.15: the holder restarts (unless-stopped) into a new namespace and
	# fences it itself. Negative control first: with the holder's table
	# removed (from the host), the same probe reaches the bystander.
	h=$(cid sandbox-net)
	hp=$(dk inspect -f '{{.State.Pid}}' "$h")
	st=$(awk '/^(Uid|CapEff):/ {printf "%s %s ", $1, $2}' "/proc/$hp/status" 2>&1)
	case "$st" in "Uid: 65534 CapEff: 0000000000000000 ") r=0;; *) r=1;; esac
	check a_holder_sleeps_as_65534_without_caps $r "$st"
	egress_nft() { nsenter "--net=/proc/$1/ns/net" nft list table inet egress_guard >/dev/null 2>&1; }
	nsenter "--net=/proc/$hp/ns/net" nft delete table inet egress_guard
	out=$(probe tcp 172.30.0.9 8080)
	case "$out" in *" ok "*) r=0;; *) r=1;; esac
	check a_control_holder_namespace_without_table_reaches_bystander $r "$out"
	dk restart "$h" >/dev/null
	wait_health "$h"
	check a_restarted_holder_turns_healthy $? "$(health "$h")"
	hp2=$(dk inspect -f '{{.State.Pid}}' "$h")
	dk restart -t 1 "$(cid workload)" >/dev/null
	wp=$(dk inspect -f '{{.State.Pid}}' "$(cid workload)")
	[ "$(readlink "/proc/$wp/ns/net")" = "$(readlink "/proc/$hp2/ns/net")" ] && egress_nft "$wp"
	check a_restarted_workload_joins_new_fenced_namespace $? \
	    "wl $(readlink "/proc/$wp/ns/net") holder $(readlink "/proc/$hp2/ns/net")"
	out=$(probe tcp 172.30.0.9 8080)
	case "$out" in *" blocked "*) r=0;; *) r=1;; esac
	check a_after_holder_restart_workload_has_no_direct_route $r "$out"
	out=$(probe tcp "$INET" 80)
	case "$out" in *" blocked "*) r=0;; *) r=1;; esac
	check a_after_holder_restart_workload_no_route_to_internet $r "$out"
	out=$(via http://api.example.test/)
	case "$out" in *code=200*) r=0;; *) r=1;; esac
	check a_after_holder_restart_workload_reaches_guard $r "$out"

	guard_checks a
fi
dc down -v -t 1 >/dev/null 2>&1	# the workload (sleep) ignores SIGTERM
fi

# -------------------------------------- layout (b), compose.shared.yaml
if part b; then
echo "# layout (b) at $(($(date +%s) - T0)) s"
LAYOUT=b PROJ=egdb$$ DIR=$T/b CFILE=compose.shared.yaml GIP=127.0.0.1
mkdir -p "$DIR"
cp "$TOP/container/compose.shared.yaml" "$DIR/"
cp -r "$T/keys" "$T/bundles" "$DIR/"
: >"$T/inet/dns53.log"; : >"$T/inet/dns5353.log"
cat >"$DIR/override.yaml" <<EOF
networks:
  default:
    internal: true
    ipam:
      config:
        - subnet: 198.18.0.0/24
services:
  guard:
    environment:
      EG_ALLOW_RANGES: 198.18.0.0/15
$FAST_HEALTH
$INET_SVC
    networks:
      default:
        ipv4_address: $INET
EOF
out=$(cd "$DIR" && env -u EG_DNS timeout 30 docker-compose -p x -f compose.shared.yaml config 2>&1)
case "$out" in *"EG_DNS"*) r=0;; *) r=1;; esac
check b_compose_refuses_to_start_without_explicit_resolver $r "$out"
export EG_DNS=$INET:5353	# every docker-compose command reads it
t=$(date +%s)
inet_unready
dc up -d >"$T/up-b.log" 2>&1
check b_compose_up_with_docker_compose_1_29 $? "$(tail -n 5 "$T/up-b.log" | tr '\n' ' ')"
inet_ready
echo "# layout (b) up in $(($(date +%s) - t)) s"
remember workload guard runner
if [ -n "$(cid workload)" ]; then
	out=$(via http://api.example.test/)
	case "$out" in *code=200*) r=0;; *) r=1;; esac
	check b_workload_reaches_admitted_name_through_guard $r "$out"
	# The entrypoint asked for the guard's cgroup with uid 10001 as the
	# fallback: this host's dockerd (cgroup v1, v2 only at
	# /sys/fs/cgroup/unified; private cgroup namespaces) gets the uid, said
	# with its precondition; a cgroup v2 host gets the cgroup.
	lg=$(dk logs "$(cid guard)" 2>&1 | grep -E 'exempt')
	case "$lg" in
	*"cgroup exemption unavailable"*"falling back to uid 10001, which holds only while the workload has no CAP_SETUID/CAP_SETGID"*) r=0;;
	*"exempt: cgroup "*) r=0;;
	*) r=1;;
	esac
	echo "# b exemption: $(tail -n1 <<<"$lg")"
	check b_guard_exempt_by_cgroup_or_uid_fallback_with_warning $r "$lg"
	# The guard asked its explicit resolver, not Docker's 127.0.0.11 (whose
	# forwarder would have asked the daemon's --dns, port 53).
	a53=$(grep -c '^api.example.test ' "$T/inet/dns53.log")
	a5353=$(grep -c '^api.example.test ' "$T/inet/dns5353.log")
	[ "$a53" -eq 0 ] && [ "$a5353" -ge 1 ]
	check b_guard_resolves_through_explicit_resolver_not_127_0_0_11 $? "port 53: $a53, port 5353: $a5353"
	out=$(via http://other.example.test/)
	case "$out" in *code=403*reason=not_allowlisted*) r=0;; *) r=1;; esac
	check b_workload_denied_name_403_with_reason $r "$out"
	no_route b "$INET" guard
	# Negative control: with the table deleted (from the host), Docker's
	# resolver answers the workload: the probes above see an open path.
	# The restart below makes a new, fenced namespace.
	gp=$(dk inspect -f '{{.State.Pid}}' "$(cid guard)")
	nsenter "--net=/proc/$gp/ns/net" nft delete table inet egress_guard
	out=$(probe udp_dns 127.0.0.11 53 guard)
	case "$out" in *" ok "*) r=0;; *) r=1;; esac
	check b_control_without_table_docker_127_0_0_11_answers_workload $r "$out"

	# 19.15: the guard restarts into a new namespace and fences it before
	# it serves; a restarted workload joins it fenced.
	g=$(cid guard)
	dk restart "$g" >/dev/null && wait_health "$g"
	dk restart -t 1 "$(cid workload)" >/dev/null
	wp=$(dk inspect -f '{{.State.Pid}}' "$(cid workload)")
	gp=$(dk inspect -f '{{.State.Pid}}' "$g")
	[ "$(readlink "/proc/$wp/ns/net")" = "$(readlink "/proc/$gp/ns/net")" ] &&
	    nsenter "--net=/proc/$wp/ns/net" nft list table inet egress_guard >/dev/null 2>&1
	check b_restarted_workload_joins_new_fenced_namespace $?
	out=$(probe tcp "$INET" 80)
	case "$out" in *" blocked "*) r=0;; *) r=1;; esac
	check b_after_guard_restart_workload_no_route_to_internet $r "$out"
	out=$(via http://api.example.test/)
	case "$out" in *code=200*) r=0;; *) r=1;; esac
	check b_after_guard_restart_workload_reaches_guard $r "$out"
	GIP=127.0.0.1
	guard_checks b
fi
dc down -v -t 1 >/dev/null 2>&1	# the workload (sleep) ignores SIGTERM
fi

# ------------------------------- the pod shape of container/k8s, plain Docker
# A holder (the pause container), the init step joining it with
# --network container:, the guard as uid 10001 from the start with
# EG_NFT=skip, the workload and the plane joining it. The values are
# pod.yaml's: both volumes start 0777 as a pod's emptyDirs do, and the
# init step hands them to 10001:10001 mode 0700 (EG_INIT_DIRS, CAP_CHOWN;
# no CAP_FOWNER), as the pod's init container; all mounted `nocopy` (Docker
# copies the image folder's owner and mode onto an empty volume at every
# mount otherwise). The plane runs as the guard's uid, with EG_GUARD_UID.
if part p; then
echo "# pod shape at $(($(date +%s) - T0)) s"
LAYOUT=p PROJ=egdp$$ GIP=127.0.0.1 PLANE_USER=10001:10001 PLANE_ENV=(-e EG_GUARD_UID=10001)
: >"$T/inet/dns53.log"; : >"$T/inet/dns5353.log"
pn() { echo "${PROJ}_$1"; }
RO=(--cap-drop ALL --security-opt no-new-privileges:true --read-only)
pod_up() {
	dk network create --internal --subnet 198.18.0.0/24 "$(pn net)" >/dev/null &&
	dk run -d --name "$(pn internet)" --init --network "$(pn net)" --ip "$INET" \
	    -v "$TI:/t:ro" -v "$T/inet:/inet" "$TOOLS" sh /inet/run.sh >/dev/null &&
	dk run -d --name "$(pn pod)" --init --no-healthcheck --network "$(pn net)" --user 65535:65535 "${RO[@]}" \
	    "$IMG" pause >/dev/null &&
	dk volume create "$(pn control)" >/dev/null && dk volume create "$(pn state)" >/dev/null &&
	dk run --rm -v "$(pn control):/run/egress-guard:nocopy" -v "$(pn state):/var/lib/egress-guard:nocopy" \
	    --entrypoint chmod "$TOOLS" 0777 /run/egress-guard /var/lib/egress-guard &&
	dk run --rm --network "container:$(pn pod)" --cap-drop ALL --cap-add NET_ADMIN \
	    --cap-add CHOWN --security-opt no-new-privileges:true --read-only \
	    -v "$(pn control):/run/egress-guard:nocopy" -v "$(pn state):/var/lib/egress-guard:nocopy" \
	    -e EG_NETNS= -e EG_GUARD_ADDR=127.0.0.1:3128 -e EG_EXEMPT_UID=10001 \
	    -e "EG_INIT_DIRS=/run/egress-guard /var/lib/egress-guard" -e EG_INIT_OWNER=10001:10001 \
	    "$IMG" init &&
	dk run -d --name "$(pn guard)" --health-interval 1s --network "container:$(pn pod)" --user 10001:10001 "${RO[@]}" \
	    -e EG_LISTEN=127.0.0.1:3128 -e EG_NFT=skip \
	    -e EG_TRUST_KEYS=/etc/egress-guard/keys/runner.pub.pem -e EG_STATE_DIR=/var/lib/egress-guard \
	    -e EG_CONTROL=/run/egress-guard/control.sock -e "EG_DNS=$INET:5353" \
	    -e EG_ALLOW_RANGES=198.18.0.0/15 \
	    -v "$(pn control):/run/egress-guard:nocopy" -v "$(pn state):/var/lib/egress-guard:nocopy" \
	    -v "$T/keys:/etc/egress-guard/keys:ro" "$IMG" >/dev/null &&
	wait_health "$(pn guard)" &&
	dk run -d --name "$(pn workload)" --network "container:$(pn pod)" --user 1000:1000 "${RO[@]}" \
	    -e HTTP_PROXY=http://127.0.0.1:3128 -e HTTPS_PROXY=http://127.0.0.1:3128 \
	    -e http_proxy=http://127.0.0.1:3128 -e https_proxy=http://127.0.0.1:3128 \
	    "$TOOLS" sleep infinity >/dev/null &&
	plane push /bundles/current.json >/dev/null
}
inet_unready
pod_up >"$T/up-p.log" 2>&1
check p_pod_shape_up_holder_init_guard_workload $? "$(tail -n 5 "$T/up-p.log" | tr '\n' ' ')"
inet_ready
remember workload guard pod
if [ -n "$(cid workload)" ]; then
	out=$(via http://api.example.test/)
	case "$out" in *code=200*) r=0;; *) r=1;; esac
	check p_workload_reaches_admitted_name_through_guard $r "$out"
	out=$(via http://other.example.test/)
	case "$out" in *code=403*reason=not_allowlisted*) r=0;; *) r=1;; esac
	check p_workload_denied_name_403_with_reason $r "$out"
	no_route p "$INET" "$(pn internet)"
	guard_checks p
fi
for c in workload guard pod internet; do dk rm -f -v "$(pn $c)" >/dev/null 2>&1; done
dk volume rm "$(pn control)" "$(pn state)" >/dev/null 2>&1
dk network rm "$(pn net)" >/dev/null 2>&1
fi

# ------------------------- one guard, three sandboxes (tenants), issue 33
# The guard container of container/k8s/daemonset-tenants.yaml (its env,
# user and capabilities, read by k8s_shape.py) on four `internal`
# networks: egress (the pretend internet) and one per sandbox, each with
# a workload container. The host is the node agent: it finds each
# tenant's link in the guard's namespace by address, adds the tenants
# over the control socket (a bind-mounted folder, as the DaemonSet's
# hostPath), applies the guard-side table into the guard's namespace
# (egress-guard nft tenants --netns /proc/PID/ns/net) and pushes each
# tenant a bundle signed for it. The workloads B and C get their own
# default-deny (egress-guard nft apply, from the host, as a runner
# does); A is hostile: root with NET_ADMIN and no table of its own, so
# that only the guard side stands between it and B. A changes its own
# address and routes with that capability (docker_probe.py addr/route,
# ioctls: the tools image has no iproute2).
if part t; then
echo "# tenants at $(($(date +%s) - T0)) s"
tt=$(date +%s)
TD=$T/t PROJ=egdt$$ LAYOUT=t
tn() { echo "${PROJ}_$1"; }
# State and socket folders: the DaemonSet's hostPaths as a node makes them
# (root's), kept 0700 here (the test's folder is not a node's /run).
mkdir -p "$TD" && mkdir -m 0700 "$TD/ctl" "$TD/state"
DS=$TOP/container/k8s/daemonset-tenants.yaml
# The manifests, as far as this machine checks them: every field against
# the Kubernetes API models (python3-kubernetes), the DaemonSet's rules;
# controls: a misspelt field and a hostNetwork DaemonSet are refused.
out=$(/usr/bin/python3 "$TI/k8s_shape.py" check "$DS" "$TOP/container/k8s/pod.yaml" 2>&1 &&
    /usr/bin/python3 "$TI/k8s_shape.py" daemonset "$DS" 2>&1)
r=$?
sed -e 's/hostNetwork: false/hostNetwork: true/' -e 's/readOnlyRootFilesystem:/readOnlyRootFilesytem:/' \
    "$DS" >"$TD/ds-bad.yaml"
bad=$(/usr/bin/python3 "$TI/k8s_shape.py" check "$TD/ds-bad.yaml" 2>&1; /usr/bin/python3 "$TI/k8s_shape.py" daemonset "$TD/ds-bad.yaml" 2>&1)
grep -q 'readOnlyRootFilesytem: not a field of V1SecurityContext' <<<"$bad" &&
    grep -q 'hostNetwork must be false' <<<"$bad" || r=1
echo "$out" | sed 's/^/# /'
check k8s_daemonset_and_pod_fields_match_api_models_control_typo_refused $r "$out / control: $bad"
# The entry's tenant mode, dry (the build's binary, as the image runs it):
# `run --tenants` and no listener of its own; the persisted tenants'
# table first when there are some; what only a single-tenant guard has
# is refused with exit 2 before anything happens. Control: EG_TENANTS=0
# is the single-tenant command line.
mkdir -p "$TD/dry" && touch "$TD/dry/k.pem"
tdry() { env -i "PATH=$(dirname "$BIN")" EG_USER=nobody "EG_TRUST_KEYS=$TD/dry/k.pem" EG_DRY_RUN=1 \
    "EG_STATE_DIR=$TD/dry/st" "$@" 2>&1; echo "rc=$?"; }
r=0 out=""
o=$(tdry EG_TENANTS=1 "$BIN" appliance)
case "$o" in *" run --tenants --control "*rc=0) grep -qe '--listen' -e "$BIN nft " <<<"$o" && r=1;; *) r=1;; esac
out="$out [plain] $o"
mkdir -p "$TD/dry/st" && echo '{}' >"$TD/dry/st/tenants.json"
o=$(tdry EG_TENANTS=1 "$BIN" appliance)
case "$o" in *" nft tenants --tenants $TD/dry/st/tenants.json --netns /proc/self/ns/net"*" run --tenants "*rc=0) ;; *) r=1;; esac
out="$out [persisted] $o"
for bad in EG_TENANTS=yes "EG_POLICY=$TD/dry/k.pem" EG_STATE_DIR=none EG_LISTEN=10.81.1.2:3128 \
    EG_NETNS=x EG_GUARD_ADDR=10.81.1.2:3128 EG_TRUST_KEYS= init; do
	if [ "$bad" = init ]; then o=$(tdry EG_TENANTS=1 "$BIN" appliance init); else o=$(tdry EG_TENANTS=1 "$bad" "$BIN" appliance); fi
	case "$o" in *"EG_"*rc=2) ;; *) r=1; out="$out [$bad] $o";; esac
done
# A tenants.json that is a link (the folder is the dropped guard's; the
# entry reading it is root): refused.
rm "$TD/dry/st/tenants.json" && ln -s /etc/hostname "$TD/dry/st/tenants.json"
o=$(tdry EG_TENANTS=1 "$BIN" appliance)
case "$o" in *"not a regular file"*rc=2) ;; *) r=1; out="$out [link] $o";; esac
o=$(tdry EG_TENANTS=0 "$BIN" appliance)
case "$o" in *" run --listen 127.0.0.1:3128 "*rc=0) ;; *) r=1;; esac
check t_entry_eg_tenants_runs_tenant_mode_refuses_single_tenant_settings_control_0 $r "$(cut -c1-900 <<<"$out $o")"
mapfile -t DSARGS < <(/usr/bin/python3 "$TI/k8s_shape.py" docker-args "$DS" 2>&1)
tup() {
	dk network create --internal --subnet 198.18.0.0/24 "$(tn egress)" >/dev/null &&
	for i in 1 2 3; do
		dk network create --internal --subnet "10.81.$i.0/24" "$(tn s$i)" >/dev/null || return 1
	done &&
	dk run -d --name "$(tn internet)" --init --network "$(tn egress)" --ip "$INET" \
	    -v "$TI:/t:ro" -v "$T/inet:/inet" "$TOOLS" sh /inet/run.sh >/dev/null &&
	dk create --name "$(tn guard)" --health-interval 1s --network "$(tn egress)" --ip 198.18.0.3 \
	    "${DSARGS[@]}" -e "EG_DNS=$INET:5353" -e EG_ALLOW_RANGES=198.18.0.0/15 \
	    -v "$TD/ctl:/run/egress-guard" -v "$TD/state:/var/lib/egress-guard" \
	    -v "$T/keys:/etc/egress-guard/keys:ro" "$IMG" >/dev/null &&
	for i in 1 2 3; do
		dk network connect --ip "10.81.$i.2" "$(tn s$i)" "$(tn guard)" || return 1
	done &&
	dk start "$(tn guard)" >/dev/null && tup_guard &&
	for w in a b c; do
		i=$(tidx $w)
		if [ $w = a ]; then priv=(--user 0:0 --cap-add NET_ADMIN); else priv=(--user 1000:1000); fi
		dk run -d --name "$(tn w$w)" --network "$(tn s$i)" --ip "10.81.$i.3" --cap-drop ALL "${priv[@]}" \
		    --security-opt no-new-privileges:true --read-only "$TOOLS" sleep infinity >/dev/null || return 1
	done
}
# The guard healthy within 60 s; a guard that exited fails at once.
tup_guard() {
	for _ in $(seq 120); do
		[ "$(health "$(tn guard)")" = healthy ] && return 0
		[ "$(dk inspect -f '{{.State.Running}}' "$(tn guard)" 2>/dev/null)" = true ] || break
		sleep 0.5
	done
	echo "guard not healthy: $(dk inspect -f '{{.State.Status}} exit={{.State.ExitCode}}' "$(tn guard)" 2>&1)"
	dk logs "$(tn guard)" 2>&1 | tail -n 3
	return 1
}
tidx() { case $1 in a) echo 1;; b) echo 2;; c) echo 3;; esac; }
pidof_c() { dk inspect -f '{{.State.Pid}}' "$(tn "$1")" 2>/dev/null; }
# tctl METHOD PATH [FILE]: "CODE BODY" from the guard's control socket.
tctl() {
	: >"$TD/ctl.out"
	c=$(timeout 20 curl -sS --unix-socket "$TD/ctl/control.sock" -X "$1" ${3:+--data-binary "@$3"} \
	    -o "$TD/ctl.out" -w '%{http_code}' "http://guard$2" 2>&1)
	echo "$c $(head -c 400 "$TD/ctl.out" | tr '\n' ' ')"
}
# tvia W PROXY URL [CURL ARGS]: "code=NNN reason=R" from workload W (two
# may run at once: the stderr file is the subshell's).
tvia() {
	w=$1 px=$2 u=$3 e=$TD/via.$BASHPID.err; shift 3
	dk exec "$(tn w$w)" curl -sS -v --max-time 6 -x "http://$px" -o /dev/null -w 'code=%{http_code}' "$@" "$u" 2>"$e"
	r=$(sed -n 's/^< X-Egress-Guard-Reason: \([a-z_]*\).*/\1/p' "$e" | tr -d '\r' | head -n1)
	echo " reason=${r:--}"
}
tprobe() { w=$1; shift; dk exec -i "$(tn w$w)" python3 - --timeout 2 "$@" <"$TI/docker_probe.py" 2>&1 | tail -n1; }
# tcount CHAIN: the guard-side table's drop counters in CHAIN, summed
# (prerouting: a source not the link's peer; input: anything but the
# link's own listener).
tcount() {
	nsenter "--net=/proc/$GPID/ns/net" nft list table inet egress_guard_tenants 2>/dev/null |
	    awk -v c="$1" '$1 == "chain" {in_c = $2 == c} in_c && / drop/ {
		for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1) } END {print s + 0}'
}
# The host's nft step (EG_DOCKER_NFT_BIN: a mutant's, for the mutant runs).
NFTBIN=${EG_DOCKER_NFT_BIN:-$BIN}
# The engine's DROP rules on bridge $BR (its namespace), summed.
ecount() {
	nsenter "--net=/run/netns/$NS" iptables-save -c 2>/dev/null | grep -- "$BR" | grep -- '-j DROP' |
	    sed -E 's/^\[([0-9]+):.*/\1/' | awk '{s += $1} END {print s + 0}'
}
seen() { grep -c "$1" "$T/inet/http.log" 2>/dev/null; }
# tserved TAG: each sandbox, through its own link, asks for its own
# admitted name; 0 when all three got 200 and the listener logged each.
tserved() {
	r=0
	for w in a b c; do
		tvia $w "10.81.$(tidx $w).2:3128" "http://$w.example.test/status/200?case=$1-$w" >"$TD/served.$w" &
	done
	wait
	for w in a b c; do
		o=$(cat "$TD/served.$w")
		printf ' %s:%s' "$w" "$o"
		case "$o" in *code=200*) [ "$(seen "case=$1-$w")" -ge 1 ] || r=1;; *) r=1;; esac
	done
	return $r
}
tbundle() {	# tbundle NAME TENANT EPOCH HOST:PORT...
	n=$1 id=$2 e=$3; shift 3
	python3 -c 'import json,sys; print(json.dumps({"network_policy":"allowlist","allowed_hosts":sys.argv[1:]}))' \
	    "$@" >"$TD/prof.json" &&
	    "$CTL" compile "$TD/prof.json" --epoch "$e" --tenant "$id" >"$TD/pol.json" &&
	    "$CTL" sign "$TD/pol.json" --key "$T/plane.pem" >"$TD/$n.json"
}
inet_unready
t=$(date +%s)
tup >"$TD/up.log" 2>&1
check t_guard_on_three_internal_sandbox_networks_three_workloads_up $? \
    "$(tail -n 5 "$TD/up.log" | tr '\n' ' ') health=$(health "$(tn guard)") $(dk logs "$(tn guard)" 2>&1 | tail -n 3 | tr '\n' ' ')"
inet_ready
echo "# tenants: up in $(($(date +%s) - t)) s"
GPID=$(pidof_c guard)
if [ -n "$GPID" ] && [ "$GPID" != 0 ]; then
	st=$(awk '/^(Uid|CapEff|NoNewPrivs):/ {printf "%s %s ", $1, $2}' "/proc/$GPID/status" 2>&1)
	case "$st" in "Uid: 10001 CapEff: 0000000000000000 NoNewPrivs: 1 ") r=0;; *) r=1;; esac
	check t_guard_in_tenant_mode_dropped_to_10001_no_caps $r "pid $GPID: $st"

	# The node agent's steps: each tenant's link is the guard's interface
	# holding 10.81.N.2, found in the guard's namespace.
	r=0 links=""
	for w in a b c; do
		i=$(tidx $w)
		l=$(nsenter "--net=/proc/$GPID/ns/net" ip -o -4 addr show | awk -v a="10.81.$i.2/24" '$4 == a {print $2}')
		links="$links $w=$l"
		printf '{"address":"10.81.%s.2","dns_port":0,"id":"%s","link":"%s","max_conns":256,"max_dns":64,"peer":"10.81.%s.3","port":3128,"transparent_port":0}' \
		    "$i" "$w" "$l" "$i" >"$TD/spec-$w.json"
		# c through egress-guardctl (the documented tool), a and b with curl.
		if [ $w = c ]; then
			out=$("$CTL" tenant add --control "$TD/ctl/control.sock" "$TD/spec-$w.json" 2>&1) &&
			    out="201 $out" || out="ctl rc=$? $out"
		else
			out=$(tctl PUT "/v1/tenants/$w" "$TD/spec-$w.json")
		fi
		case "$out" in 201*'"added"'*) ;; *) r=1; links="$links ($out)";; esac
	done
	check t_node_agent_adds_three_tenants_links_found_by_address $r "$links"
	tctl GET /v1/tenants >/dev/null && cp "$TD/ctl.out" "$TD/tenants.json"
	"$NFTBIN" nft tenants --tenants "$TD/tenants.json" --netns "/proc/$GPID/ns/net" >"$TD/nft.log" 2>&1
	check t_guard_side_table_applied_into_guard_namespace_from_host $? "$(tail -n 3 "$TD/nft.log" | tr '\n' ' ')"
	for w in b c; do
		"$BIN" nft apply --netns "/proc/$(pidof_c "w$w")/ns/net" --guard "10.81.$(tidx $w).2:3128" \
		    >>"$TD/nft.log" 2>&1 || echo "# workload $w: nft apply failed: $(tail -n 1 "$TD/nft.log")"
	done
	r=0 out=""
	for w in a b c; do
		o=""
		tbundle "$w" "$w" 1 "$w.example.test:80" || { r=1; out="$out $w: no bundle"; continue; }
		if [ $w = c ]; then
			o=$("$CTL" push "$TD/$w.json" --tenant c --control "$TD/ctl/control.sock" 2>&1) &&
			    o="200 $o" || o="ctl rc=$? $o"
		else
			o=$(tctl PUT "/v1/tenants/$w/policy" "$TD/$w.json")
		fi
		out="$out $w: $o"
		case "$o" in 2*) ;; *) r=1;; esac
	done
	check t_each_tenant_gets_a_bundle_signed_for_it $r "$out"

	# Each sandbox through its own link reaches its own admitted name (a
	# live listener logs each case's path).
	out=$(tserved own)
	check t_each_sandbox_reaches_its_own_admitted_name_live_listener $? "$out"
	dk logs "$(tn guard)" >"$TD/guard.log" 2>&1
	n=$(grep '"decision"' "$TD/guard.log" | grep -c '"tenant":"[abc]"')
	[ "$n" -ge 3 ]
	check t_guard_decision_lines_name_the_tenant "$?" "$n lines; $(grep '"decision"' "$TD/guard.log" | tail -n 1)"

	# Hostile: A asks for the pair only B admits. Live control: B, the same
	# request, reaches the listener.
	oa=$(tvia a 10.81.1.2:3128 "http://b.example.test/status/200?case=a-asks-b")
	ob=$(tvia b 10.81.2.2:3128 "http://b.example.test/status/200?case=b-asks-b")
	na=$(seen case=a-asks-b) nb=$(seen case=b-asks-b)
	case "$oa $ob" in *code=403*reason=not_allowlisted*code=200*) [ "$na" -eq 0 ] && [ "$nb" -ge 1 ]; r=$?;; *) r=1;; esac
	check hostile_t_a_request_for_pair_only_b_admits_refused_b_reaches_live_listener $r \
	    "A:$oa (listener saw $na) / B:$ob (listener saw $nb)"

	# Hostile: A routes B's listener address through its own link (the
	# guard's address on A's network), and A takes B's address (its
	# NET_ADMIN) and sends from it, to its own listener and to B's. Three
	# layers, each shown: (1) the engine's own isolation of an internal
	# network (iptables in the daemon's namespace, on bridged traffic:
	# no source or destination outside the subnet) drops both before the
	# guard, whose counters stay still; (2) with that layer opened for
	# A's bridge (an ACCEPT in DOCKER-USER, Docker's hook for a user's
	# rules), the guard-side table drops them (its counters rise); (3)
	# with the table deleted too, A's SYN to B's address reaches the
	# guard's kernel and is refused (B's listener is bound to B's link),
	# so the path was live and the silence in (2) is the table's. Live
	# controls: B reaches the listener at its address; A from its own
	# address reaches its own.
	APID=$(pidof_c wa)
	AIF=$(nsenter "--net=/proc/$APID/ns/net" ip -o -4 addr show | awk '$4 == "10.81.1.3/24" {print $2}')
	caps=$(awk '/^CapEff:/ {print $2}' "/proc/$APID/status")
	# A does it itself, with its NET_ADMIN (ioctls: the tools image has no
	# iproute2). Control: B, without the capability, is refused the same.
	BPID=$(pidof_c wb)
	BIF=$(nsenter "--net=/proc/$BPID/ns/net" ip -o -4 addr show | awk '$4 == "10.81.2.3/24" {print $2}')
	ab=$(tprobe b addr "$BIF" 10.81.2.9)
	ra=$(dk exec -i "$(tn wa)" python3 - route 10.81.2.2 10.81.1.2 + addr "$AIF" 10.81.2.3 \
	    <"$TI/docker_probe.py" 2>&1 | tr '\n' ' ')
	echo "A: $ra; B: $ab" >"$TD/route.err"
	case "$ra|$ab" in "route ok"*"addr ok"*"|addr blocked PermissionError"*) r=0;; *) r=1;; esac
	check hostile_t_a_routes_and_takes_b_address_with_its_net_admin_control_b_refused $r \
	    "A CapEff=$caps $(cat "$TD/route.err")"
	BR=br-$(dk network inspect -f '{{.Id}}' "$(tn s1)" | cut -c1-12)
	# thostile TAG: A's three attempts at once; "TO_B_ADDR SPOOF_OWN SPOOF_B PROBE".
	thostile() {
		tvia a 10.81.2.2:3128 "http://b.example.test/status/200?case=a-to-b-addr-$1" --connect-timeout 3 >"$TD/h1.out" &
		tvia a 10.81.1.2:3128 "http://a.example.test/status/200?case=a-spoof-own-$1" --interface 10.81.2.3 \
		    --connect-timeout 3 >"$TD/h2.out" &
		tvia a 10.81.2.2:3128 "http://b.example.test/status/200?case=a-spoof-b-$1" --interface 10.81.2.3 \
		    --connect-timeout 3 >"$TD/h3.out" &
		p=$(tprobe a tcp 10.81.2.2 3128)
		wait
		echo "to-b-addr:$(cat "$TD/h1.out") spoof-own:$(cat "$TD/h2.out") spoof-b:$(cat "$TD/h3.out") probe:$p"
	}
	nothing() {	# nothing "OUT" TAG: all four met silence (a drop), the listener saw none
		case "$1" in *to-b-addr:*code=000*spoof-own:*code=000*spoof-b:*code=000*probe:*" blocked TimeoutError"*)
			[ "$(seen "case=a-[a-z-]*-$2")" -eq 0 ];;
		*) return 1;; esac
	}
	p0=$(tcount prerouting) i0=$(tcount input) e0=$(ecount)
	o1=$(thostile engine)
	p1=$(tcount prerouting) i1=$(tcount input) e1=$(ecount)
	nothing "$o1" engine && [ "$p1" -eq "$p0" ] && [ "$i1" -eq "$i0" ] && [ "$e1" -gt "$e0" ]
	check hostile_t_engine_internal_network_isolation_drops_a_to_b_address_and_spoof $? \
	    "A CapEff=$caps; $o1; engine drops on $BR $e0->$e1, guard table drops (still) prerouting $p0->$p1 input $i0->$i1 $(cat "$TD/route.err")"
	echo "# engine layer: engine drops $e0->$e1, guard table prerouting $p0->$p1 input $i0->$i1"
	nsenter "--net=/run/netns/$NS" iptables -I DOCKER-USER -i "$BR" -o "$BR" -j ACCEPT 2>>"$TD/route.err"
	p0=$(tcount prerouting) i0=$(tcount input)
	o2=$(thostile guard)
	p1=$(tcount prerouting) i1=$(tcount input)
	ob=$(tvia b 10.81.2.2:3128 "http://b.example.test/status/200?case=b-to-b-addr")
	oc=$(tvia a 10.81.1.2:3128 "http://a.example.test/status/200?case=a-own-addr")
	# The spoofed attempts are the anti-spoofing rule's (prerouting), A's
	# own source to B's address the listener-only rule's (input).
	echo "# guard layer: prerouting $p0->$p1 input $i0->$i1"
	nothing "$o2" guard && [ "$p1" -gt "$p0" ] && [ "$i1" -gt "$i0" ] &&
	    case "$ob|$oc" in *code=200*"|"*code=200*)
		[ "$(seen case=b-to-b-addr)" -ge 1 ] && [ "$(seen case=a-own-addr)" -ge 1 ];;
	    *) false;; esac
	check hostile_t_a_to_b_address_and_spoofing_b_reach_nothing_guard_table_drops_them $? \
	    "engine layer open: $o2; guard table drops prerouting $p0->$p1 input $i0->$i1 / B to its address:$ob A from its own:$oc"
	nsenter "--net=/proc/$GPID/ns/net" nft delete table inet egress_guard_tenants 2>>"$TD/nft.log"
	pc=$(tprobe a tcp 10.81.2.2 3128)
	"$NFTBIN" nft tenants --tenants "$TD/tenants.json" --netns "/proc/$GPID/ns/net" >>"$TD/nft.log" 2>&1
	nsenter "--net=/run/netns/$NS" iptables -D DOCKER-USER -i "$BR" -o "$BR" -j ACCEPT 2>>"$TD/route.err"
	echo "# without the engine layer and the table: $pc"
	case "$pc" in *"ConnectionRefused"*) r=0;; *) r=1;; esac
	check hostile_t_without_engine_layer_and_table_a_syn_to_b_address_refused_by_link_bound_listener $r "$pc"

	# Hostile: A's bundle pushed as B's. Live control: B's own next bundle
	# is taken, and B's status says its epoch.
	tbundle b2 b 2 b.example.test:80 b2.example.test:80
	tbundle a2 a 2 a.example.test:80 b.example.test:80
	o1=$(tctl PUT /v1/tenants/b/policy "$TD/a2.json")
	o2=$(tctl PUT /v1/tenants/b/policy "$TD/b2.json")
	tctl GET /v1/tenants/b/status >/dev/null
	e=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["policy"]["epoch"])' <"$TD/ctl.out" 2>&1)
	case "$o1|$o2" in 403*wrong_tenant*"|"2*) [ "$e" = 2 ]; r=$?;; *) r=1;; esac
	check hostile_t_a_bundle_pushed_as_b_refused_403_wrong_tenant_b_own_taken $r \
	    "A's as B's: $o1 / B's: $o2 / B epoch=$e"
	ob=$(tvia b 10.81.2.2:3128 "http://b.example.test/status/200?case=b-after")
	oa=$(tvia a 10.81.1.2:3128 "http://b.example.test/status/200?case=a-after")
	case "$oa|$ob" in *code=403*"|"*code=200*) r=0;; *) r=1;; esac
	check hostile_t_after_refused_push_a_still_denied_b_still_served $r "A:$oa B:$ob"

	# A restart is a new namespace: the entry applies the table of the
	# tenants in the state folder before the guard binds them again (no
	# host step here), every link comes back under its name, each tenant
	# is served again, and B keeps epoch 2 (its floor). Control: the
	# table is deleted before the restart, so one seen after it was
	# applied by the entry (a namespace's inode number may be reused, so
	# old and new are only shown, not compared).
	old=$(readlink "/proc/$GPID/ns/net") t=$(date +%s)
	nsenter "--net=/proc/$GPID/ns/net" nft delete table inet egress_guard_tenants \
	    2>>"$TD/nft.log"
	dk restart -t 5 "$(tn guard)" >/dev/null && tup_guard >"$TD/restart.log" 2>&1
	echo "# tenants: the guard restarted and healthy in $(($(date +%s) - t)) s"
	GPID=$(pidof_c guard)
	new=$(readlink "/proc/$GPID/ns/net" 2>&1)
	nsenter "--net=/proc/$GPID/ns/net" nft list table inet egress_guard_tenants >"$TD/table2" 2>&1; rt=$?
	out=$(tserved restart); r=$?
	tctl GET /v1/tenants/b/status >/dev/null
	e=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["policy"]["epoch"])' <"$TD/ctl.out" 2>&1)
	[ "$r" = 0 ] && [ "$rt" = 0 ] && [ "$e" = 2 ] &&
	    grep -q egress_guard_tenants "$TD/table2"
	check t_guard_restart_new_namespace_entry_fences_links_tenants_served_b_epoch_kept $? \
	    "ns $old -> $new; table in new ns rc=$rt; $out; B epoch=$e $(tail -n 3 "$TD/restart.log" | tr '\n' ' ')"
fi

for c in wa wb wc guard internet; do dk rm -f -v "$(tn $c)" >/dev/null 2>&1; done
for n in egress s1 s2 s3; do dk network rm "$(tn $n)" >/dev/null 2>&1; done
echo "# tenants: $(($(date +%s) - tt)) s (the three-tenant part, added to docker_test)"
fi

# ---------------------- the conformance matrix on this daemon, layout (a)
# tests/conformance/docker.sh deploys container/compose.yaml with its own
# additions and writes the report; a receipt is signed from it with a key
# made here and must verify, naming this engine, layout (a) and this image.
if part matrix; then
echo "# matrix at $(($(date +%s) - T0)) s"
CONF=${EG_DOCKER_CONF_OUT:-$T/conformance}
t=$(date +%s)
EG_CONF_TARGET=docker EG_DOCKER_IMAGE=$IMG EG_DOCKER_TOOLS=$TOOLS EG_DOCKER_PLANE=$PLANE \
    EG_DOCKER_INET=$INET EG_DOCKER_LEAVE=1 \
    bash "$TOP/tests/conformance/matrix.sh" "$CONF" >"$T/matrix.log" 2>&1
rc=$?
grep -E '^\(' "$T/matrix.log" | sed 's/^/# /'
sed -n '/^fact /,$p' "$T/matrix.log" | sed 's/^/# /'
echo "# matrix: $(($(date +%s) - t)) s"
check docker_conformance_matrix_layout_a_facts_true $rc "$(grep -E -A3 '^(fail|incon|conformance)' "$T/matrix.log" | head -n 12 | tr '\n' ' ')"
mkdir -p "$T/attesters" && chmod 0700 "$T/attesters"
"$CTL" keygen --out "$T/attesters/t.pem" >/dev/null 2>&1
# The report: schema v2, graded by the docker suite, every case with its
# control's evidence.
python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["schema"] == "egress-guard.conformance-report.v2" and r["suite"] == "docker"
         and all(c["control_evidence"] for c in r["cases"]) else 1)' "$CONF/report.json" 2>/dev/null
check docker_report_v2_suite_docker_with_evidence $? "$(head -c 300 "$CONF/report.json" 2>/dev/null | tr '\n' ' ')"
"$CTL" receipt sign "$CONF/report.json" --key "$T/attesters/t.pem" >"$CONF/receipt.json" 2>"$T/sign.err"
grade=$("$CTL" receipt verify "$CONF/receipt.json" --attesters "$T/attesters" \
    --binary "$CONF/image/egress-guard" 2>"$T/verify.err")
vrc=$?; [ "$grade" = security_boundary ] || vrc=1
check docker_receipt_signs_and_verifies_security_boundary "$vrc" "grade=$grade $(cat "$T/sign.err" "$T/verify.err" | tr '\n' ' ')"
echo "# receipt grade: $grade"
# What the signed bytes say of the deployment: this engine, (a), this image.
out=$(python3 - "$CONF/receipt.json" "$DIGEST" "$(dk version -f '{{.Server.Version}}')" <<'PY'
import base64, json, sys
r = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["receipt"]))
d = r.get("deployment", {})
ok = (d.get("layout") == "a" and d.get("image_id") == sys.argv[2]
      and d.get("engine") == "docker " + sys.argv[3] and d.get("target") == "docker"
      and r["suite"]["id"] == "docker")
print("ok" if ok else "wrong", json.dumps(d, sort_keys=True))
PY
)
case "$out" in ok*) r=0;; *) r=1;; esac
check docker_receipt_names_engine_layout_a_and_image_digest_suite_docker $r "$out"
fi

# ---------------------------------------------------------------- teardown
docker_cleanup
host_snapshot >"$T/host.after"
diff "$T/host.before" "$T/host.after" >"$T/host.diff"
check docker_host_links_and_firewall_left_as_found $? "$(head -n 20 "$T/host.diff" | tr '\n' ' ')"
left=$(awk -v d="$DK" 'index($2, d) == 1' /proc/mounts; ls -d "$DK" 2>/dev/null; ip netns list | grep -w "$NS")
[ -z "$left" ]
check docker_nothing_left_behind $? "$left"
echo "# docker_test: $(($(date +%s) - T0)) s"
finish
