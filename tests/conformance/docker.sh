# The conformance matrix against the guard as Docker deploys it: sourced
# by tests/conformance/matrix.sh when EG_CONF_TARGET=docker (common.sh and
# lib.sh already sourced). tests/integration/docker_test.sh runs it with
# its own dockerd and image; `make conformance-docker` runs only that part.
#
# Needs, from the environment: DOCKER_HOST (a running daemon whose --dns is
# EG_DOCKER_INET), EG_DOCKER_IMAGE (the guard's image, built from
# container/Dockerfile), EG_DOCKER_TOOLS (an image with curl and python3:
# the workload and the pretend internet), docker-compose.
#
# The deployment is layout (a), container/compose.yaml unchanged plus an
# override (the test's additions): the holder applies the nft default-deny
# to the workload's namespace, the guard runs as uid 10001, the runner
# container pushes the signed bundle over the control volume. The override
# adds, all on `internal` networks: the pretend internet (198.18.0.10 on
# egress; 10.99.0.5, 169.254.169.254 and 100.100.100.200 on networks of
# their own, which the guard is also on: a private listener the guard
# could reach is what a refusal has to hold against), a bystander on
# sandbox, and the control guard `guard-open` (the lab's guard B: the same
# image, unrestricted policy, private ranges allowed) at 172.30.0.3, which
# the holder's table also lets the workload reach. Every probe and every
# control runs in the workload container (docker exec), except where the
# case says it is the plane's side.
#
# What this target cannot express is not run, and not claimed (the report
# has no such case): listed in docs/receipts.md ("The Docker target").
#
# EG_CONF_SKIP_NFT=1: the holder's table is deleted once the deployment is
# up (the holder itself refuses EG_NFT=skip: it fails closed): a mutant
# of the deploy; default_deny must turn false.
# Writes OUT/report.json with a "deployment" object (engine, layout, image),
# OUT/deployment.json, and OUT/image/egress-guard: the guard binary copied
# out of the image, the bytes the receipt certifies (checked against
# /proc/PID/exe of the running guard).

IMG=${EG_DOCKER_IMAGE:?EG_DOCKER_IMAGE: the guard image}
TOOLS=${EG_DOCKER_TOOLS:?EG_DOCKER_TOOLS: an image with curl and python3}
PLANE=${EG_DOCKER_PLANE:?EG_DOCKER_PLANE: an image with egress-guardctl, sh and setpriv}
INET=${EG_DOCKER_INET:-198.18.0.10}
GIP=172.30.0.2 KIP=172.30.0.3 GEG=198.18.0.2 BYS=172.30.0.9
PROJ=egconf$$
DIR=$T/compose
dk() { timeout 120 docker "$@"; }
dc() { timeout 240 docker-compose --ansi never -p "$PROJ" --project-directory "$DIR" \
    -f "$DIR/compose.yaml" -f "$DIR/override.yaml" "$@"; }
docker_down() {
	dc down -v -t 1 >/dev/null 2>&1
	dk volume rm "${PROJ}_control" "${PROJ}_control-open" "${PROJ}_state" >/dev/null 2>&1
}
# EG_DOCKER_LEAVE=1: leave the deployment to the caller, who removes the
# whole daemon (docker_test.sh: its `docker rm -f` is quicker than a
# compose down).
trap '[ "${EG_DOCKER_LEAVE:-0}" = 1 ] || docker_down; cleanup' EXIT
dk version >/dev/null 2>&1 || { echo "conformance: no Docker daemon at ${DOCKER_HOST:-the default socket}"; exit 2; }
[ -x "$CTL" ] || { echo "conformance: build egress-guardctl first (the plane's side)"; exit 2; }

# ------------------------------------------------------------- evidence
# The guard binary as the image holds it: hashed before anything starts.
rm -f "$OUT/report.json" "$OUT/deployment.json"
mkdir -p "$OUT/image"
c=$(dk create "$IMG") && dk cp "$c:/usr/local/bin/egress-guard" "$OUT/image/egress-guard.tmp" &&
    mv "$OUT/image/egress-guard.tmp" "$OUT/image/egress-guard"
r=$?
dk rm "$c" >/dev/null 2>&1
[ $r = 0 ] || { echo "conformance: cannot copy the guard out of $IMG"; exit 2; }
BIN=$OUT/image/egress-guard
BIN_SHA256=$(sha256sum <"$BIN" | cut -d' ' -f1)
sv=$(dk version -f '{{.Server.Version}} {{.Server.APIVersion}} {{.Server.Os}}/{{.Server.Arch}}' 2>/dev/null)
set -- $sv
[ $# = 3 ] || { echo "conformance: cannot read the engine's version (\"$sv\")"; exit 2; }
python3 - "$OUT/deployment.json" "$1" "$2" "$3" \
    "$(dk image inspect -f '{{.Id}}' "$IMG")" \
    "$(dk image inspect -f '{{join .RepoDigests " "}}' "$IMG")" "$IMG" \
    "$(docker-compose version --short 2>/dev/null)" <<'PY' ||
import json, sys
out, ver, api, plat, iid, rd, ref, comp = sys.argv[1:]
json.dump({"target": "docker", "layout": "a", "engine": "docker " + ver,
           "engine_api": api, "engine_platform": plat, "image": ref, "image_id": iid,
           "image_repo_digests": rd or "none", "compose": "docker-compose " + comp,
           # The lab's cases this target does not run (docs/receipts.md says why):
           # signed with the rest, so the receipt says what it does not claim.
           "not_run": "edm-05 edm-20..25 ctpa-07 ctpa-20..27 rr-10 dd-03..06 dd-11..16"},
          open(out, "w"), sort_keys=True)
PY
    { echo "conformance: cannot read the engine's version or the image"; exit 2; }
echo "deployment: $(cat "$OUT/deployment.json")"

# ------------------------------------------------------------- deploy
mkdir -p "$DIR/keys" "$DIR/bundles" "$T/inet"
chmod 0755 "$T"
"$CTL" keygen --out "$T/plane.pem" >/dev/null 2>&1 &&
    "$CTL" keygen --out "$T/rogue.pem" >/dev/null 2>&1 &&
    cp "$T/plane.pub.pem" "$DIR/keys/runner.pub.pem" || { echo "conformance: keygen failed"; exit 2; }
bundle() {	# bundle NAME EPOCH MODE HOST:PORT... → $DIR/bundles/NAME.json
	n=$1 e=$2 m=$3; shift 3
	python3 -c 'import json,sys; m=sys.argv[1]; h=sys.argv[2:]
print(json.dumps({"network_policy":m,"allowed_hosts":h} if m=="allowlist" else {"network_policy":m}))' \
	    "$m" "$@" >"$T/$n.profile" &&
	    "$CTL" compile "$T/$n.profile" --epoch "$e" >"$T/$n.policy" &&
	    "$CTL" sign "$T/$n.policy" --key "${KEY:-$T/plane.pem}" >"$DIR/bundles/$n.json"
}
STRICT="api.example.test:80 api.example.test:443 private.example.test:80 mixed.example.test:80
metadata.example.test:80 cgnat.example.test:80 rebind.example.test:80 reconnect.example.test:80
$INET:80 10.99.0.5:80 $GEG:3128 $GIP:3128"
bundle strict 10 allowlist $STRICT && bundle open 10 unrestricted &&
    KEY=$T/rogue.pem bundle forged 50 allowlist api.example.test:80 evil.example.test:443 &&
    bundle genuine 50 allowlist $STRICT && bundle newer 60 allowlist $STRICT ||
    { echo "conformance: bundles failed"; exit 2; }
chmod -R a+rX "$DIR"

cat >"$T/inet/zone.json" <<Z
{
 "api.example.test": {"A": ["$INET"]},
 "www.api.example.test": {"A": ["$INET"]},
 "api.example.test.evil.test": {"A": ["$INET"]},
 "other.example.test": {"A": ["$INET"]},
 "private.example.test": {"A": ["10.99.0.5"]},
 "mixed.example.test": {"A": ["10.99.0.5", "$INET"]},
 "metadata.example.test": {"A": ["169.254.169.254"]},
 "cgnat.example.test": {"A": ["100.100.100.200"]},
 "rebind.example.test": {"cycle": [{"A": ["$INET"]}, {"A": ["10.99.0.5"]}], "ttl": 0},
 "reconnect.example.test": {"cycle": [{"A": ["$INET"]}, {"A": ["10.99.0.5"]}], "ttl": 0}
}
Z
# The pretend internet: the daemon's --dns (:53: what reaches it came
# through Docker's resolver), the guards' resolver (:5353), the listeners.
# Logs and ready files in $T (mounted at /lg), as the lab keeps them.
cat >"$T/inet/run.sh" <<EOF
cd /lg
python3 /t/dnsd.py --listen $INET:53 --zone /inet/zone.json --log dns53.log --ready dns53.ready &
python3 /t/dnsd.py --listen $INET:5353 --zone /inet/zone.json --log queries.log --ready dns.ready &
for l in "pub $INET:80" "pub8443 $INET:8443" "priv 10.99.0.5:80" "meta 169.254.169.254:80" \
    "cgnat 100.100.100.200:80"; do
	set -- \$l
	python3 /t/listener.py --listen "\$2" --log "\$1.log" --ready "\$1.ready" --name "\$1" &
done
wait
EOF
cat >"$T/inet/bystander.sh" <<EOF
cd /lg
python3 /t/listener.py --listen $BYS:8080 --log bys.log --ready bys.ready --name bys &
python3 /t/dnsd.py --listen $BYS:53 --zone /inet/zone.json --log bysdns.log --ready bysdns.ready &
wait
EOF
cp "$TOP/container/compose.yaml" "$DIR/"
# net NAME SUBNET RANGE: dynamic addresses from RANGE only, never the
# fixed ones given below (Docker hands out a fixed address only at start).
net() { printf '  %s:\n    internal: true\n    ipam:\n      config:\n        - {subnet: %s, ip_range: %s}\n' "$@"; }
GUARD_COMMON="    environment:
      EG_DNS: \"$INET:5353\"
      EG_ALLOW_RANGES: 198.18.0.0/15
    healthcheck:
      interval: 1s"
{
	echo "networks:"
	net egress 198.18.0.0/24 198.18.0.128/25; net private 10.99.0.0/24 10.99.0.128/25
	net meta 169.254.169.0/24 169.254.169.0/25; net cgnat 100.100.100.0/24 100.100.100.0/25
	cat <<EOF
volumes:
  control-open: {}
services:
  # compose.yaml names egress-guard:0.1.0: the image under test instead
  # (a mutant run's derived image; the receipt names this one).
  guard:
    image: $IMG
    networks:
      egress: {ipv4_address: $GEG}
      private: {}
      meta: {}
      cgnat: {}
$GUARD_COMMON
  guard-open:
    image: $IMG
    networks:
      sandbox: {ipv4_address: $KIP}
      egress: {}
      private: {}
      meta: {}
      cgnat: {}
    environment:
      EG_LISTEN: $KIP:3128
      EG_NFT: skip
      EG_TRUST_KEYS: /etc/egress-guard/keys/runner.pub.pem
      EG_POLICY: /bundles/open.json
      EG_STATE_DIR: none
      EG_DNS: "$INET:5353"
      EG_ALLOW_RANGES: "198.18.0.0/15 10.0.0.0/8 169.254.0.0/16 100.64.0.0/10"
    volumes:
      - control-open:/run/egress-guard
      - ./keys:/etc/egress-guard/keys:ro
      - ./bundles:/bundles:ro
    cap_drop: [ALL]
    cap_add: [CHOWN, DAC_READ_SEARCH, SETUID, SETGID]
    security_opt: ["no-new-privileges:true"]
    read_only: true
    healthcheck:
      interval: 1s
  sandbox-net:
    image: $IMG
    environment:
      EG_GUARD_ADDR: "$GIP:3128 $KIP:3128"
  workload:
    volumes: ['$TI:/t:ro']
  runner:
    image: $IMG
    command: ["push", "/bundles/strict.json", "--control", "/run/egress-guard/control.sock"]
  # The plane's side for the cases: the runner's shape, kept running.
  plane:
    image: $PLANE
    entrypoint: [sleep, infinity]
    network_mode: none
    volumes:
      - control:/run/egress-guard
      - ./bundles:/bundles:ro
    cap_drop: [ALL]
    security_opt: ["no-new-privileges:true"]
    read_only: true
    stop_signal: SIGKILL
    healthcheck:
      disable: true
  internet:
    image: $TOOLS
    command: [sh, /inet/run.sh]
    volumes: ['$TI:/t:ro', '$T/inet:/inet:ro', '$T:/lg']
    init: true
    networks:
      egress: {ipv4_address: $INET}
      private: {ipv4_address: 10.99.0.5}
      meta: {ipv4_address: 169.254.169.254}
      cgnat: {ipv4_address: 100.100.100.200}
  bystander:
    image: $TOOLS
    command: [sh, /inet/bystander.sh]
    volumes: ['$TI:/t:ro', '$T/inet:/inet:ro', '$T:/lg']
    init: true
    networks:
      sandbox: {ipv4_address: $BYS}
EOF
} >"$DIR/override.yaml"
t0=$(date +%s)
WORKLOAD_IMAGE=$TOOLS dc up -d >"$T/up.log" 2>&1 ||
    { echo "conformance: docker-compose up failed:"; tail -n 20 "$T/up.log"; exit 2; }
echo "(compose up: $(($(date +%s) - t0)) s)"
for f in dns53 dns pub pub8443 priv meta cgnat bys bysdns; do
	wait_file "$T/$f.ready" 100 || { echo "conformance: pretend internet: $f not ready"; exit 2; }
done
# The containers' ids by service, in one call (docker-compose takes a
# second or more to start, each time).
declare -A CIDS
while read -r sv id; do CIDS[$sv]=$id; done < <(dk ps -a --filter "label=com.docker.compose.project=$PROJ" \
    --format '{{.Label "com.docker.compose.service"}} {{.ID}}')
cid() { echo "${CIDS[$1]:-}"; }
WCID=$(cid workload) RCID=$(cid runner) GCID=$(cid guard) HCID=$(cid sandbox-net) KCID=$(cid guard-open)
[ -n "$WCID" ] && [ -n "$GCID" ] && [ -n "$HCID" ] && [ -n "$KCID" ] && [ -n "$(cid plane)" ] || { echo "conformance: containers missing"; exit 2; }
for _ in $(seq 100); do
	[ "$(dk inspect -f '{{.State.Status}}' "$RCID")" = exited ] && break
	sleep 0.2
done
[ "$(dk inspect -f '{{.State.ExitCode}}' "$RCID")" = 0 ] ||
    { echo "conformance: the runner's push failed: $(dk logs "$RCID" 2>&1 | tail -n 3)"; exit 2; }
for _ in $(seq 120); do
	[ "$(dk inspect -f '{{.State.Health.Status}}' "$KCID" 2>/dev/null)" = healthy ] && break
	sleep 0.5
done
echo "(deployed in $(($(date +%s) - t0)) s)"
GPID=$(dk inspect -f '{{.State.Pid}}' "$GCID")
# The bytes the guard runs are the bytes hashed above.
exe_is_bin() {
	s=$(sha256sum <"/proc/$GPID/exe" 2>/dev/null | cut -d' ' -f1)
	[ "$s" = "$BIN_SHA256" ] ||
	    { echo "conformance: the running guard is sha256:$s, the image's sha256:$BIN_SHA256"; exit 2; }
}
exe_is_bin
HPID=$(dk inspect -f '{{.State.Pid}}' "$HCID")
if [ "${EG_CONF_SKIP_NFT:-0}" = 1 ]; then
	nsenter "--net=/proc/$HPID/ns/net" nft delete table inet egress_guard ||
	    { echo "conformance: EG_CONF_SKIP_NFT: no table to delete"; exit 2; }
fi

# --------------------------------------------------------- the target
# The lab's primitives (common.sh), in the workload container: nsenter
# into its network, mount, UTS and IPC namespaces (what `docker exec`
# does, without a daemon round trip per probe: a second each on a busy
# machine), as its uid 1000 with no capabilities and no_new_privs, with
# its environment (the proxy variables). 3128 is the guard under test,
# 3129 the control guard.
WPID=$(dk inspect -f '{{.State.Pid}}' "$WCID")
mapfile -t WENV < <(tr '\0' '\n' <"/proc/$WPID/environ")
inwl() {
	nsenter -t "$WPID" -n -m -u -i -- setpriv --reuid=1000 --regid=1000 --clear-groups \
	    --inh-caps=-all --bounding-set=-all --no-new-privs env -i "${WENV[@]}" "$@"
}
gaddr() { if [ "$1" = 3129 ]; then echo "$KIP"; else echo "$GIP"; fi; }
gport() { echo 3128; }
curl_proxy() {
	port=$1 url=$2; shift 2
	inwl curl -sS -v --max-time 15 -o /dev/null -x "http://$(gaddr "$port"):3128" \
	    -w 'code=%{http_code} connect=%{http_connect}' "$@" "$url" 2>"$T/curl.err"
	r=$(sed -n 's/^< X-Egress-Guard-Reason: \([a-z_]*\).*/\1/p' "$T/curl.err" | tr -d '\r' | head -n1)
	echo " reason=${r:--}"
}
raw() { port=$1; shift; inwl python3 /t/rawreq.py "$(gaddr "$port")" 3128 --send "$@"; }
# plane CMD...: egress-guardctl in the plane container (the runner's
# shape: the control volume only, no network), by nsenter likewise.
PPID_=$(dk inspect -f '{{.State.Pid}}' "$(cid plane)")
plane() {
	nsenter -t "$PPID_" -n -m -u -i -- setpriv --no-new-privs --inh-caps=-all --bounding-set=-all \
	    egress-guardctl "$@" --control /run/egress-guard/control.sock 2>&1
}
push_bundle() { plane push "/bundles/$1.json" | push_words; }
policy_epoch() { plane status | python3 -c 'import json,sys; print(json.load(sys.stdin)["policy"]["epoch"])' 2>/dev/null; }
probe() { inwl python3 /t/docker_probe.py --timeout 2 "$@" 2>&1; }
# The guard under test's log (its stderr, through the engine) and its
# control socket's name: common.sh's evidence of the control API.
glog() { dk logs "$GCID" 2>&1; }
GSOCK=control.sock

if want_fact exact_destination_match; then
	cases_edm_names
	cases_edm_literals "$INET"
fi
if want_fact connect_time_public_address; then
	cases_ctpa_names
	case_ctpa_rebind
fi
if want_fact redirect_recheck; then cases_rr; fi
echo "(edm, ctpa, rr: $(($(date +%s) - t0)) s since the deploy began)"

# --------------------------------------------------- authority_separation
if want_fact authority_separation; then
F=authority_separation
o=$(inwl curl -sS --max-time 3 --unix-socket /run/egress-guard/control.sock \
    http://localhost/v1/status >/dev/null 2>&1 && echo reachable || echo unreachable)
# The controls below reach the control API with the plane's push of the
# bundle in force (answered 200 "unchanged", nothing changes): the guard
# logs a PUT, which its health check (GET /v1/status every second, also
# as root) never makes, so the evidence is the control's own request.
plane_put() { [ "$(push_bundle strict)" = '"epoch":10' ]; }
m=$(log_mark -)
k=$(plane_put && echo reachable || echo unreachable)
e=$(ev_control control.sock - "$m" '"PUT"')
record as-01 $F "workload connects to the control socket (control: the plane container, control volume mounted)" \
    unreachable "$o" reachable "$k" "$e"
# sockets PREFIX…: "present" when a socket named control.sock is in that
# view, "absent" when a search that ran found none, "error" when no search
# ran (no find there, or the view could not be entered).
sockets() {
	"$@" sh -c 'command -v find >/dev/null || exit 3
find / -xdev -name control.sock -type s 2>/dev/null; find /run -name control.sock -type s 2>/dev/null
echo searched' >"$T/sockets" 2>/dev/null
	if ! grep -qx searched "$T/sockets"; then echo error
	elif grep -q control.sock "$T/sockets"; then echo present
	else echo absent; fi
}
o=$(sockets dk exec "$WCID")
m=$(log_mark -)
k="$(sockets nsenter -t "$PPID_" -m) $(plane_put && echo answered || echo unanswered)"
e=$(ev_control control.sock - "$m" '"PUT"')
record as-02 $F "control socket anywhere in the workload's filesystem (control: the plane container's, which the guard answers)" \
    absent "$o" "present answered" "$k" "$e"
o=$(inwl curl -sS --noproxy '*' --max-time 3 -o /dev/null -w '%{http_code}' "http://$GIP:3128/v1/status" 2>&1)
m=$(log_mark -)
k=$(plane_put && echo 200 || echo error)
e=$(ev_control control.sock - "$m" '"PUT".*"status":200')
record as-03 $F "control API over the workload-facing TCP listener (control: over the socket)" "400" "$o" "200" "$k" "$e"
# as-04, as-05: the control, a neighbour in that range, is pub.
o=$(rawvia 3128 "CONNECT $GEG:3128 HTTP/1.1\r\n\r\n")
clear_log pub
k=$(rawvia 3128 "CONNECT $INET:80 HTTP/1.1\r\n\r\n"); e=$(ev_listener pub)
clear_log pub
record as-04 $F "CONNECT to the guard's own egress address (inside --allow-range; control: a neighbour in that range)" \
    "deny non_public_address" "$o" allow "$k" "$e"
o=$(rawvia 3128 "GET http://$GEG:3128/v1/policy HTTP/1.1\r\n\r\n")
k=$(rawvia 3128 "CONNECT $INET:80 HTTP/1.1\r\n\r\n"); e=$(ev_listener pub)
clear_log pub
record as-05 $F "GET through the proxy to the guard's own address (control: a neighbour in that range)" \
    "deny non_public_address" "$o" allow "$k" "$e"
cases_as_push "plane container: "
case_as_key "$GPID" "$T/plane.pem" " container's process (host /proc)"
uid() { awk '/^Uid/ {print "uid=" $3}' /proc/$1/status; }
record as-09 $F "capabilities and uid of the running guard (host /proc; control: this shell, root)" "no-caps uid=10001" \
    "$(caps "$GPID") $(uid "$GPID")" "caps uid=0" "$(caps $$) $(uid $$)" "$(ev_caps $$)"
fi

# ------------------------------------------------------------ default_deny
# Last: the control takes the holder's table away (from the host, in the
# holder's namespace: what a workload with CAP_NET_ADMIN could do).
if want_fact default_deny; then
F=default_deny
# The embedded resolver's real ports, from the workload namespace's
# /proc/net/udp and /proc/net/tcp (any uid there reads them; read here from
# the host, as the probe's /proc belongs to another PID namespace):
# "missing" when none is listed, and the probe then errs, failing dd-10.
docker_dns_port() {	# udp|tcp
	h=$(awk -v t="$1" '$2 ~ /^0B00007F:/ && (t == "udp" || $4 == "0A") {
	    split($2, a, ":"); print a[2]; exit }' "/proc/$WPID/net/$1")
	if [ -n "$h" ]; then printf '%d\n' "0x$h"; else echo missing; fi
}
DUP=$(docker_dns_port udp)
DTP=$(docker_dns_port tcp)
# What the embedded resolver sends back to the workload (answers, SYN-ACKs
# from 127.0.0.11), counted in the workload's namespace: dockerd logs no
# query, so this counter is dd-10's evidence that the resolver was reached.
nsenter "--net=/proc/$WPID/ns/net" nft -f - <<'N' || { echo "conformance: probe counter failed"; exit 2; }
table ip egconf_probe {
	chain in { type filter hook input priority -300; policy accept; ip saddr 127.0.0.11 counter; }
}
N
dns127() { nsenter "--net=/proc/$WPID/ns/net" nft list chain ip egconf_probe in |
    sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'; }
dd() {	# the probes at once → "TCP|UDP|RESOLVER", each with what its listener saw
	clear_log bys; clear_log bysdns
	c0=$(dns127)
	r=$(probe tcp "$BYS" 8080 + udp_dns "$BYS" 53 "dd-$1.example.test" + \
	    udp_dns 127.0.0.11 53 bystander + tcp_dns 127.0.0.11 53 bystander + \
	    udp_dns 127.0.0.11 "$DUP" bystander + tcp_dns 127.0.0.11 "$DTP" bystander |
	    awk '{print $2}' | tr '\n' ' ')
	# A connect (or an answer) comes back before the listener has logged
	# it: up to 3 s for both logs, whichever side (a packet that got
	# through late turns "untouched" into "reached" the same way).
	for _ in $(seq 30); do
		[ -s "$T/bys.log" ] && [ -s "$T/bysdns.log" ] && break
		sleep 0.1
	done
	set -- $r
	echo "$1 $(seen bys)|$2 $(seen bysdns)|udp $3 tcp $4 udp $5 tcp $6"
	ev_counter dns127-answers "$c0" "$(dns127)" >"$T/ev.dd10"
}
o=$(dd p)
nsenter "--net=/proc/$HPID/ns/net" nft delete table inet egress_guard 2>/dev/null
k=$(dd c)
e1=$(ev_listener bys); e2=$(ev_resolver bysdns "$T/bysdns.log"); e3=$(ev_get dd10)
IFS='|' read -r o1 o2 o3 <<EOF
$o
EOF
IFS='|' read -r k1 k2 k3 <<EOF
$k
EOF
record dd-01 $F "workload ignores the proxy: direct TCP to a live listener on its own Docker network" \
    "blocked untouched" "$o1" "ok reached" "$k1" "$e1"
record dd-02 $F "workload ignores the proxy: UDP DNS to a server on its own Docker network" \
    "blocked untouched" "$o2" "ok reached" "$k2" "$e2"
record dd-10 $F "workload asks Docker's embedded resolver for a container's name: 127.0.0.11:53, then its real ports ($DUP/udp, $DTP/tcp, from /proc/net) (UDP, TCP)" \
    "udp blocked tcp blocked udp blocked tcp blocked" "$o3" "udp ok tcp ok udp ok tcp ok" "$k3" "$e3"
fi

echo "(all cases: $(($(date +%s) - t0)) s since the deploy began)"
exe_is_bin
write_report "$OUT" "$BIN" "$BIN_SHA256" docker "$OUT/deployment.json"
