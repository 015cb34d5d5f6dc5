#!/usr/bin/env bash
# The conformance matrix: the five facts of docs/design.md, proved on a topology
# this script owns end to end, deployed the way a deployment would be: the
# nft default-deny applied to the workload's namespace, the guard dropped to
# an unprivileged user, the policy pushed as a signed bundle over the
# control socket.
#
# Every case runs a probe and records what it observed, then runs the same
# probe with the mechanism taken away (policy widened, range allowed, nft
# table removed, …) and records that too. A case passes only when the probe
# shows the expected outcome AND the control shows the opposite; a control
# that does not flip makes the case "inconclusive", which fails its fact.
#
#   tests/conformance/matrix.sh [OUT_DIR]      (root; default build/conformance)
#
# EG_CONF_FACTS="fact …" limits the run to some facts (mutant runs).
# EG_CONF_SKIP_NFT=1 deploys without the nft step (a mutant of the deploy).
# EG_CONF_NFT_MUTANT=old_rules deploys the table without the rules for
# loopback DNS/DNAT, ND scope and source routing, and exempts the shared
# layout's guard by uid (the table before issues 14.5 and 19.10-12).
# EG_CONF_HARNESS_MUTANT=dead_controls: a mutant of the harness, not of
# the guard: the pretend internet's listeners and the control resolver
# are killed once up, the control guards (B, F) never start. Every case
# whose control must reach something live must then stay short of pass
# (make conformance-mutants checks it), and every fact turn false.
# Writes OUT_DIR/report.json (suite lab) and OUT_DIR/report-transparent.json
# (suite transparent: the tp-* cases), and prints a summary table.

. "$(dirname "$0")/../integration/lib.sh"

OUT=${1:-$TOP/${BUILD:-build}/conformance}
mkdir -p "$OUT"
. "$(dirname "$0")/common.sh"
# EG_CONF_TARGET=docker: the same facts against the guard deployed by
# Docker (tests/conformance/docker.sh; docker_test.sh runs it).
# EG_CONF_TARGET=tenants: one guard serving three sandboxes
# (tests/conformance/tenants.sh).
case ${EG_CONF_TARGET:-lab} in
docker|tenants)
	. "$(dirname "$0")/$EG_CONF_TARGET.sh"
	exit $? ;;
esac

# ---------------------------------------------------------------- topology
[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "conformance: build the binaries first"; exit 2; }
# The binary under test, hashed before any guard starts: the report says
# which bytes ran, and receipt sign refuses a binary that differs. A run
# that fails early leaves no older report behind to be signed.
rm -f "$OUT/report.json" "$OUT/report-transparent.json"
BIN_SHA256=$(sha256sum <"$BIN" | cut -d' ' -f1)
[ ${#BIN_SHA256} -eq 64 ] || { echo "conformance: cannot hash $BIN"; exit 2; }
topo_up || { echo "conformance: topology failed"; exit 2; }
# The workload HAS a route out through the guard's namespace: only the nft
# table stands between it and the internet, so default_deny is observable.
ip -n "$WL" route add default via 10.77.0.1
ip -n "$WL" addr add fd77::2/64 dev wl0-$$ nodad
ip -n "$GD" addr add fd77::1/64 dev gw0-$$ nodad
ip -n "$WL" -6 route add default via fd77::1
ip -n "$IN" -6 route add fd77::/64 via 2001:2::1
ingd sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
# The transparent workload (TW): its own link to the guard's namespace
# (10.78.0.2 - 10.78.0.1), its default route there, and every TCP
# connection arriving on that link redirected to a guard's --transparent
# listener (tp_to PORT picks which guard: A 15001, B the control 15002).
# Its names come from its own hosts file: the addresses it dials are its
# choice, never the guard's.
TW=egt-$$
ip netns add "$TW"
ip -n "$TW" link set lo up
ip link add tw0-$$ netns "$TW" type veth peer name gt0-$$ netns "$GD"
ip -n "$TW" addr add 10.78.0.2/24 dev tw0-$$
ip -n "$GD" addr add 10.78.0.1/24 dev gt0-$$
ip -n "$TW" link set tw0-$$ up
ip -n "$GD" link set gt0-$$ up
ip -n "$TW" route add default via 10.78.0.1
mkdir -p "/etc/netns/$TW"
printf '%s\n' "127.0.0.1 localhost" "198.18.1.10 api.example.test other.example.test" \
    "198.18.1.10 private.example.test mixed.example.test tprebind.example.test" \
    >"/etc/netns/$TW/hosts"
trap 'cleanup; ip netns del "$TW" 2>/dev/null; rm -rf "/etc/netns/$TW"' EXIT INT TERM
ingd nft -f - <<N || { echo "conformance: transparent redirect failed"; exit 2; }
table ip eg_transp_matrix {
	chain pre { type nat hook prerouting priority dstnat; policy accept; }
}
N
tp_to() {	# PORT: the transparent workload's TCP goes to that listener
	ingd nft flush chain ip eg_transp_matrix pre &&
	    ingd nft add rule ip eg_transp_matrix pre iifname "gt0-$$" meta l4proto tcp \
	    redirect to ":$1"
}
chmod 0755 "$T"
mkdir -p "$T/run" "$T/state" "$T/keys" "$T/attest"
chmod 0700 "$T/keys"
chown nobody "$T/state"

cat >"$T/zone.json" <<'Z'
{
 "api.example.test": {"A": ["198.18.1.10"], "AAAA": ["2001:2:0:1::10"]},
 "www.api.example.test": {"A": ["198.18.1.10"]},
 "api.example.test.evil.test": {"A": ["198.18.1.10"]},
 "other.example.test": {"A": ["198.18.1.10"]},
 "private.example.test": {"A": ["10.99.0.5"]},
 "mixed.example.test": {"A": ["10.99.0.5", "198.18.1.10"]},
 "mapped.example.test": {"AAAA": ["::ffff:198.18.1.10"]},
 "nat64.example.test": {"AAAA": ["64:ff9b::a63:5"]},
 "metadata.example.test": {"A": ["169.254.169.254"]},
 "cgnat.example.test": {"A": ["100.100.100.200"]},
 "rebind.example.test": {"cycle": [{"A": ["198.18.1.10"]}, {"A": ["10.99.0.5"]}], "ttl": 0},
 "reconnect.example.test": {"cycle": [{"A": ["198.18.1.10"]}, {"A": ["10.99.0.5"]}], "ttl": 0},
 "tprebind.example.test": {"cycle": [{"A": ["198.18.1.10"]}, {"A": ["10.99.0.5"]}], "ttl": 0}
}
Z
start_dns "$T/zone.json" || { echo "conformance: dns server failed"; exit 2; }
# The control resolver (198.18.0.55, the same zone, its own log): the
# control guard's, and the outside server the direct-UDP controls ask.
ip -n "$IN" addr add 198.18.0.55/32 dev lo
start_bg "$IN" "$T/dnsk.out" python3 "$TI/dnsd.py" --listen 198.18.0.55 \
    --zone "$T/zone.json" --log "$T/dnsk.log" --ready "$T/dnsk.ready"
DNSK_PID=$LASTPID
wait_file "$T/dnsk.ready" || { echo "conformance: control dns server failed"; exit 2; }
ip -n "$IN" addr add 198.18.1.66/32 dev lo	# the transparent cases' attacker
# The NAT64 case's far side: what 64:ff9b::a63:5 would translate to,
# served at that address itself (the lab has no NAT64).
ip -n "$IN" addr add 64:ff9b::a63:5/128 dev lo nodad
CONTROL_PIDS=$DNSK_PID
for l in "pub 198.18.1.10:80" "pub6 [2001:2:0:1::10]:80" "pub8443 198.18.1.10:8443" \
    "priv 10.99.0.5:80" "meta 169.254.169.254:80" "cgnat 100.100.100.200:80" \
    "neigh 198.18.0.2:3128" "attacker 198.18.1.66:80" "nat64 [64:ff9b::a63:5]:80"; do
	set -- $l
	start_listener "$1" "$2" || { echo "conformance: listener $1 failed"; exit 2; }
	CONTROL_PIDS="$CONTROL_PIDS $LASTPID"
done
DEAD=0; [ "${EG_CONF_HARNESS_MUTANT:-}" = dead_controls ] && DEAD=1
# dead PID...: under the dead_controls mutant, stop what a control needs.
dead() {
	[ $DEAD = 1 ] || return 0
	for p in "$@"; do kill "$p" 2>/dev/null; done
	for p in "$@"; do for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done; done
}
dead $CONTROL_PIDS

# The plane's keys and the policies it compiles and signs.
"$CTL" keygen --out "$T/keys/plane.pem" >/dev/null 2>&1
"$CTL" keygen --out "$T/keys/rogue.pem" >/dev/null 2>&1
cp "$T/keys/plane.pub.pem" "$T/trust.pub.pem"
STRICT="api.example.test:80 api.example.test:443 private.example.test:80 mixed.example.test:80
mapped.example.test:80 nat64.example.test:80 metadata.example.test:80 cgnat.example.test:80
rebind.example.test:80 reconnect.example.test:80 198.18.1.10:80 10.99.0.5:80
10.77.0.1:3128 198.18.0.1:3128 tprebind.example.test:80"
bundle strict 10 allowlist $STRICT
bundle open 10 unrestricted

# A: the guard under test, deployed like production. B: the control guard
# (unrestricted policy, private ranges allowed). C: no policy. D: its
# resolver unreachable.
PUB_RANGES="--allow-range 198.18.0.0/15 --allow-range 2001:2::/48"
start_guard_ns() {	# NAME PORT ARGS...: like lib's start_guard, own control path
	name=$1 port=$2; shift 2
	# Only A keeps a floor (its own folder); never the host's default.
	case " $* " in *" --state-dir "*) ;; *) set -- "$@" --no-state;; esac
	start_bg "$GD" "$T/$name.out" "$BIN" run --listen "10.77.0.1:$port" \
	    --log-file "$T/$name.log" --control "$T/run/$name.sock" "$@"
	eval "PID_$name=$LASTPID"
	for _ in $(seq 100); do
		grep -q '"event":"policy"' "$T/$name.log" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "conformance: guard $name did not start"; cat "$T/$name.out"; exit 2
}
start_guard_ns A 3128 --listen '[fd77::1]:3128' --transparent 10.78.0.1:15001 --user nobody --trust-key "$T/trust.pub.pem" \
    --state-dir "$T/state" --dns 198.18.0.53 --dns-timeout 2 --connect-timeout 2 $PUB_RANGES
[ $DEAD = 1 ] || start_guard_ns B 3129 --transparent 10.78.0.1:15002 --user nobody --trust-key "$T/trust.pub.pem" --policy "$T/open.bundle" \
    --dns 198.18.0.55 --dns-timeout 2 --connect-timeout 2 $PUB_RANGES \
    --allow-range 10.0.0.0/8 --allow-range 169.254.0.0/16 --allow-range 100.64.0.0/10 \
    --allow-range ::ffff:0:0/96 --allow-range 64:ff9b::/96
start_guard_ns C 3130 --user nobody --dns 198.18.0.53 $PUB_RANGES
start_guard_ns D 3131 --user nobody --trust-key "$T/trust.pub.pem" --policy "$T/strict.bundle" \
    --dns 198.18.0.99 --dns-timeout 2 $PUB_RANGES

NFT_GUARDS="--guard 10.77.0.1:3128 --guard 10.77.0.1:3129 --guard 10.77.0.1:3130 --guard 10.77.0.1:3131 --guard [fd77::1]:3128"
# The table before these fixes, for the old_rules mutant: the new rules
# deleted by handle.
old_rules() {	# NS
	for h in $(ip netns exec "$1" nft -a list chain inet egress_guard output |
	    grep -E 'proto-dst 53|ct status dnat|exthdr rt|ip option|hoplimit 255' |
	    sed -n 's/.* # handle \([0-9]*\)$/\1/p'); do
		ip netns exec "$1" nft delete rule inet egress_guard output handle "$h"
	done
	# ... and ND accepted to anywhere, as it was
	ip netns exec "$1" nft insert rule inet egress_guard output \
	    icmpv6 type '{ nd-neighbor-solicit, nd-neighbor-advert }' accept
}
nft_apply() {	# warnings (Docker's nat chain, below) kept for failures
	"$BIN" nft apply --netns "$WL" $NFT_GUARDS >/dev/null 2>"$T/nftapply.err" ||
	    { cat "$T/nftapply.err" >&2; return 1; }
	if [ "${EG_CONF_NFT_MUTANT:-}" = old_rules ]; then old_rules "$WL"; fi
}
nft_remove() { "$BIN" nft remove --netns "$WL" >/dev/null; }
if [ "${EG_CONF_SKIP_NFT:-0}" != 1 ]; then
	nft_apply || { echo "conformance: nft apply failed"; exit 2; }
fi
"$CTL" push "$T/strict.bundle" --control "$T/run/A.sock" >/dev/null ||
    { echo "conformance: push failed"; exit 2; }

# ------------------------------------------------------------------ probes
# The target's addresses (common.sh): every guard on 10.77.0.1, by port.
gaddr() { echo 10.77.0.1; }
gport() { echo "$1"; }
# The guard under test's log and control socket (common.sh's evidence).
glog() { cat "$T/A.log"; }
GSOCK=A.sock
# ------------------------------------------------ exact_destination_match
if want_fact exact_destination_match; then
F=exact_destination_match
cases_edm_names
clear_log pub
o="$(via 3128 http://API.Example.TEST./ -p) $(seen pub)"
clear_log pub
m=$(log_mark "$T/C.log")
k=$(via 3130 http://API.Example.TEST./ -p); e=$(ev_decision guardC "$T/C.log" "$m")
record edm-05 $F "CONNECT case and trailing-dot spelling of an admitted name (control: a guard with no policy, which logs its refusal)" \
    "allow reached" "$o" "deny no_policy" "$k" "$e"
cases_edm_literals 198.18.1.10
# The SNI gate (issue 14): a tunnel's first flight, then whether the
# upstream listener got any byte of it (past a first hello the gate may
# let go, for the second-hello flights). fl PORT VIA TARGET FLIGHT; VIA is
# connect or socks5, FLIGHT one of tlsdiff/flights.py's shapes.
fl() {
	clear_log pub
	echo 0 >"$T/fl.allowed"
	# direct: from the transparent workload, redirected to guard A's
	# --transparent listener (tp_to, below), no proxy protocol.
	if [ "$2" = direct ]; then tp_to 15001; flns=$TW; else flns=$WL; fi
	ip netns exec "$flns" python3 - "$1" "$2" "$3" "$4" "$TI/tlsdiff" "$T/fl.allowed" <<'PY' >/dev/null 2>&1
import socket, struct, sys, time
port, via, target, kind = sys.argv[1:5]
sys.path.insert(0, sys.argv[5])
import flights as f
host, tport = target.rsplit(":", 1)
hello = lambda name: f.record(0x16, f.Client(name).hs)
flight = {"alert-evil": f.record(0x15, b"\x01\x5a") + hello("evil.example.test"),
          "version-0001-evil": f.record(0x16, f.Client("evil.example.test").hs, 0x0001),
          "sslv2": f.sslv2_hello(), "plain": b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
          "evil": hello("evil.example.test"), "good": hello("api.example.test"),
          "nosni": hello(None),
          "ech-good": f.record(0x16, f.rewrite(f.Client("api.example.test").hs, lambda x: x +
              [(0xfe0d, b"\x00\x00\x01\x00\x01\x00\x00\x20" + bytes(32) + f.u16(0))]))}.get(kind)
if flight is None:	# a first hello naming the host, then a second
    first = hello("api.example.test")
    flight = first + hello({"good-then-evil": "evil.example.test",
                            "good-then-good": "api.example.test"}[kind])
    open(sys.argv[6], "w").write(str(len(first)))
if via == "direct":
    s = socket.create_connection((host, int(tport)), timeout=5)
else:
    s = socket.create_connection(("10.77.0.1", int(port)), timeout=5)
if via == "direct":
    pass
elif via == "connect":
    s.sendall(b"CONNECT %s HTTP/1.1\r\n\r\n" % target.encode())
    b = b""
    while b"\r\n\r\n" not in b:
        b += s.recv(4096) or sys.exit(1)
else:
    s.sendall(b"\x05\x01\x00"); s.recv(2)
    s.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(host) + struct.pack(">H", int(tport)))
    s.recv(10)
s.sendall(flight)
s.settimeout(1)
try:
    while s.recv(4096):
        pass
except OSError:
    pass
PY
	sleep 0.3
	if [ "$(awk '$1 == "bytes" { n += $2 } END { print n + 0 }' "$T/pub.log")" -gt \
	    "$(cat "$T/fl.allowed")" ]; then echo reached; else echo untouched; fi
	ev_keep fl pub
	clear_log pub
}
# ID|VIA|TARGET|FLIGHT|CONTROL FLIGHT|PROBE: the upstream must get no byte
# of the flight, and a byte of the control (a good hello, or plain bytes).
while IFS='|' read -r id v tg fx cx what; do
	o=$(fl 3128 "$v" "$tg" "$fx")
	k=$(fl 3128 "$v" "$tg" "$cx")
	record "$id" $F "$what" untouched "$o" reached "$k" "$(ev_get fl)"
done <<'C'
edm-20|connect|api.example.test:80|alert-evil|good|tunnel opens with an alert record, then a ClientHello naming another host
edm-21|connect|api.example.test:80|version-0001-evil|good|ClientHello naming another host in a record of version 00 01
edm-22|connect|api.example.test:80|sslv2|plain|SSLv2-style hello as the tunnel's first bytes
edm-23|connect|198.18.1.10:80|evil|nosni|CONNECT to an admitted IP literal, ClientHello naming a host
edm-24|socks5|198.18.1.10:80|evil|nosni|SOCKS5 ATYP IPv4 to an admitted literal, ClientHello naming a host
edm-25|connect|api.example.test:80|good-then-evil|good-then-good|second ClientHello naming another host behind one naming the admitted host
tp-edm-01|direct|api.example.test:80|evil|good|transparent: ClientHello naming a host the policy does not admit, dialled at an admitted host's address
tp-edm-02|direct|api.example.test:80|ech-good|good|transparent: ClientHello with encrypted_client_hello, outer name admitted
tp-edm-03|direct|api.example.test:80|good-then-evil|good-then-good|transparent: second ClientHello naming another host behind one naming the admitted host
tp-edm-04|direct|api.example.test:80|alert-evil|good|transparent: an alert record, then a ClientHello naming another host
C
fi

# --------------------------------------------- connect_time_public_address
if want_fact connect_time_public_address; then
F=connect_time_public_address
cases_ctpa_names
# The far side of a NAT64 answer is a live listener at that address
# (guard B allows 64:ff9b::/96).
ctpa ctpa-07 nat64.example.test nat64 "NAT64 AAAA 64:ff9b::a63:5 embedding 10.99.0.5 (a live listener at that address)"
case_ctpa_rebind

# Issue 14 finding 3: guard E is opened as widely as an operator can
# (--allow-range ::/0 and 0.0.0.0/0); listeners bound ONLY on the guard
# host (its own address 198.18.0.1, its loopback 127.0.0.1 and ::1) must
# see nothing in any spelling. Control F: the same flags on a guard built
# with EG_MUTANT_RANGE_FIRST (allow-ranges consulted before the table, the
# own check within one family: the bug as reported); it reaches each one.
# Their own resolver (198.18.0.54) serves the names these cases need.
RF_BIN=${EG_CONF_RANGE_FIRST_BIN:-$TOP/${BUILD:-build}/mutant-range_first/egress-guard}
ip -n "$IN" addr add 198.18.0.54/32 dev lo
cat >"$T/zone-rf.json" <<'Z'
{
 "ownmapped.example.test": {"AAAA": ["::ffff:198.18.0.1"]},
 "mapped.example.test": {"AAAA": ["::ffff:198.18.1.10"]}
}
Z
start_bg "$IN" "$T/dnsd-rf.out" python3 "$TI/dnsd.py" --listen 198.18.0.54 \
    --zone "$T/zone-rf.json" --log "$T/queries-rf.log" --ready "$T/dnsd-rf.ready"
wait_file "$T/dnsd-rf.ready" || { echo "conformance: dns server failed"; exit 2; }
for l in "own 198.18.0.1:18082" "lo 127.0.0.1:18083" "lo6 [::1]:18083"; do
	set -- $l
	start_bg "$GD" "$T/$1.out" python3 "$TI/listener.py" --listen "$2" \
	    --log "$T/$1.log" --ready "$T/$1.ready" --name "$1"
	wait_file "$T/$1.ready" || { echo "conformance: listener $1 failed"; exit 2; }
	dead "$LASTPID"
done
WIDE="--user nobody --trust-key $T/trust.pub.pem --policy $T/open.bundle --dns 198.18.0.54
    --dns-timeout 2 --connect-timeout 2 --allow-range ::/0 --allow-range 0.0.0.0/0 $PUB_RANGES"
start_guard_ns E 3132 $WIDE
if [ -x "$RF_BIN" ] && [ $DEAD = 0 ]; then BIN=$RF_BIN start_guard_ns F 3133 $WIDE; fi
NFT_GUARDS="$NFT_GUARDS --guard 10.77.0.1:3132 --guard 10.77.0.1:3133"
if [ "${EG_CONF_SKIP_NFT:-0}" != 1 ]; then
	nft_apply || { echo "conformance: nft apply failed"; exit 2; }
fi
wide() {	# PORT TARGET LISTENER → "allow reached" | "deny REASON untouched" | …
	clear_log "$3"
	o=$(rawvia "$1" "CONNECT $2 HTTP/1.1\r\n\r\n" --then "GET / HTTP/1.0\r\n\r\n")
	sleep 0.2
	echo "$o $(seen "$3")"
	ev_keep wide "$3" 1
	clear_log "$3"
}
n=20
for c in "[::ffff:c612:1]:18082 own IPv4-mapped own address, --allow-range ::/0" \
    "[::ffff:7f00:1]:18083 lo IPv4-mapped loopback, --allow-range ::/0" \
    "ownmapped.example.test:18082 own admitted name whose AAAA is ::ffff:<own address>" \
    "0.0.0.0:18083 lo unspecified 0.0.0.0, --allow-range 0.0.0.0/0" \
    "127.0.0.1:18083 lo IPv4 loopback, --allow-range 0.0.0.0/0" \
    "[::1]:18083 lo6 IPv6 loopback, --allow-range ::/0" \
    "[::]:18083 lo6 unspecified ::, --allow-range ::/0" \
    "mapped.example.test:80 pub IPv4-mapped AAAA of a public address"; do
	set -- $c
	tgt=$1 lis=$2; shift 2
	o=$(wide 3132 "$tgt" "$lis"); ev_get wide >/dev/null
	if [ -x "$RF_BIN" ]; then k=$(wide 3133 "$tgt" "$lis"); else k="no control guard ($RF_BIN)"; fi
	record "ctpa-$n" $F "CONNECT $tgt: $*" "deny non_public_address untouched" "$o" \
	    "allow reached" "$k" "$(ev_get wide)"
	n=$((n + 1))
done
fi

# ------------------------------------------------------- redirect_recheck
if want_fact redirect_recheck; then
cases_rr
F=redirect_recheck
kab() {	# NS ADDR:PORT: three requests on one connection to the admitted literal
	ip netns exec "$1" python3 - "$2" <<'PY'
import socket, sys
host, _, port = sys.argv[1].rpartition(":")
s = socket.create_connection((host, int(port)), timeout=10)
buf = b""
def ask(method, path, body=b""):
    global buf
    s.sendall(b"%s http://198.18.1.10%s HTTP/1.1\r\nHost: 198.18.1.10\r\n"
              b"Proxy-Authorization: Basic c2VjcmV0\r\nContent-Length: %d\r\n\r\n%s"
              % (method, path, len(body), body))
    while b"\r\n\r\n" not in buf:
        x = s.recv(65536)
        if not x:
            return "closed", b""
        buf += x
    head, _, buf = buf.partition(b"\r\n\r\n")
    n = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    while n and len(buf) < n[0]:
        x = s.recv(65536)
        if not x:
            break
        buf += x
    body, buf = buf[:n[0] if n else 0], buf[n[0] if n else 0:]
    return head.split(b" ")[1].decode(), body
try:
    body = bytes(range(48, 112)) * 4
    r = [ask(b"GET", b"/"), ask(b"POST", b"/echo", body), ask(b"POST", b"/headers", b"hello")]
    seen = b"".join(x[1] for x in r).lower()
    print(" ".join(x[0] for x in r),
          "body-exact" if r[1][1] == body else "body-wrong",
          "proxy-auth-leaked" if b"proxy-authorization" in seen or b"c2vjcmv0" in seen
          else "no-proxy-auth")
except OSError as e:
    print("error", type(e).__name__)
PY
}
o=$(kab "$WL" 10.77.0.1:3128)
clear_log pub
k=$(kab "$GD" 198.18.1.10:80); e=$(ev_listener pub 3)
clear_log pub
record rr-10 $F "kept-alive 2nd/3rd request to an admitted IP literal: exact body, no Proxy-Authorization" \
    "200 200 200 body-exact no-proxy-auth" "$o" "200 200 200 body-exact proxy-auth-leaked" "$k" "$e"
fi

# --------------------------------------------------- authority_separation
if want_fact authority_separation; then
F=authority_separation
sock_probe() {	# WHO: GET /v1/status on A's control socket as the workload user or the plane
	if [ "$1" = workload ]; then
		inwl setpriv --reuid=65534 --regid=65534 --clear-groups curl -sS --max-time 3 \
		    --unix-socket "$T/run/A.sock" http://localhost/v1/status >/dev/null 2>&1
	else
		curl -sS --max-time 3 --unix-socket "$T/run/A.sock" \
		    http://localhost/v1/status >/dev/null 2>&1
	fi && echo reachable || echo unreachable
}
o=$(sock_probe workload)
m=$(log_mark -)
k=$(sock_probe plane); e=$(ev_control A.sock - "$m" '"peer_uid":0,')
record as-01 $F "workload user connects to the control socket" unreachable "$o" reachable "$k" "$e"
# as-02: the workload's own mount view, as a deployment gives it one: a
# mount namespace of its own (made once, below, by a holder process that
# stays up: a mount that fails leaves no view to enter, and the probe then
# errs) in which the guard's run folder is not the guard's. The probe
# enters that view as the workload's uid and looks for the guard's socket
# at its path and through the guard's /proc root, and connects to what it
# finds; the control runs the same probe in the guard's own view, as the
# plane (root), and must get an answer the guard logs.
start_bg "$WL" "$T/wlview.out" unshare -m --propagation private sh -c \
    'mount -t tmpfs -o mode=0755,size=64k none "$1" && echo ok >"$2" && exec sleep 3600' sh "$T/run" "$T/wlview.ready"
WLVIEW=$LASTPID
wait_file "$T/wlview.ready" 50
view_probe() {	# workload|guard → "absent" | "present unreachable" | "present answered STATUS" | "error"
	if [ "$1" = workload ]; then
		set -- nsenter -t "$WLVIEW" -m -n -- setpriv --reuid=65534 --regid=65534 --clear-groups
	else
		set -- env
	fi
	"$@" /usr/bin/python3 - "$T/run/A.sock" "/proc/$PID_A/root$T/run/A.sock" <<'PY' 2>/dev/null || echo error
import os, socket, stat, sys
found = []
for p in sys.argv[1:]:
    try:
        if stat.S_ISSOCK(os.stat(p).st_mode):
            found.append(p)
    except OSError:
        pass
if not found:
    print("absent")
    sys.exit(0)
for p in found:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(3)
        s.connect(p)
        s.sendall(b"GET /v1/status HTTP/1.0\r\nHost: localhost\r\n\r\n")
        print("present answered", s.recv(64).split(b" ")[1].decode())
        sys.exit(0)
    except (OSError, IndexError):
        pass
print("present unreachable")
PY
}
o=$(view_probe workload)
m=$(log_mark -)
k=$(view_probe guard); e=$(ev_control A.sock - "$m" '"peer_uid":0,')
kill "$WLVIEW" 2>/dev/null
record as-02 $F "control socket in the workload's mount view (its path and the guard's /proc root, as the workload's uid; control: the plane in the guard's view)" \
    absent "$o" "present answered 200" "$k" "$e"
o=$(inwl curl -sS --max-time 3 -o /dev/null -w '%{http_code}' http://10.77.0.1:3128/v1/status 2>&1)
m=$(log_mark -)
k=$(curl -sS --max-time 3 -o /dev/null -w '%{http_code}' --unix-socket "$T/run/A.sock" \
    http://localhost/v1/status 2>&1)
e=$(ev_control A.sock - "$m" '"path":"/v1/status"')
record as-03 $F "control API over the workload-facing TCP listener" "400" "$o" "200" "$k" "$e"
# as-04, as-05: the control is guard B's CONNECT to a neighbour in the
# same range (the listener neigh logs it).
o=$(rawvia 3128 "CONNECT 198.18.0.1:3128 HTTP/1.1\r\n\r\n")
clear_log neigh
k=$(rawvia 3129 "CONNECT 198.18.0.2:3128 HTTP/1.1\r\n\r\n"); e=$(ev_listener neigh)
clear_log neigh
record as-04 $F "CONNECT to the guard's own address (inside --allow-range)" \
    "deny non_public_address" "$o" allow "$k" "$e"
o=$(rawvia 3128 "GET http://10.77.0.1:3128/v1/policy HTTP/1.1\r\n\r\n")
k=$(rawvia 3129 "CONNECT 198.18.0.2:3128 HTTP/1.1\r\n\r\n"); e=$(ev_listener neigh)
clear_log neigh
record as-05 $F "GET through the proxy to the guard's own listener" \
    "deny non_public_address" "$o" allow "$k" "$e"
policy_epoch() { curl -sS --max-time 3 --unix-socket "$T/run/A.sock" http://localhost/v1/policy |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["epoch"])'; }
KEY=$T/keys/rogue.pem bundle forged 50 allowlist api.example.test:80 evil.example.test:443
bundle genuine 50 allowlist $STRICT
push_bundle() { "$CTL" push "$T/$1.bundle" --control "$T/run/A.sock" 2>&1 | push_words; }
bundle newer 60 allowlist $STRICT
cases_as_push
case_as_key "$PID_A" "$T/keys/plane.pem"
record as-09 $F "capabilities of the running guard (control: this shell, root)" no-caps "$(caps "$PID_A")" \
    caps "$(caps $$)" "$(ev_caps $$)"
fi

# ------------------------------------------------------------ default_deny
if want_fact default_deny; then
F=default_deny
direct_tcp() {
	clear_log pub
	t0=$(date +%s%N)
	inwl curl -sS --noproxy '*' --max-time 5 -o /dev/null http://198.18.1.10/ 2>/dev/null && r=reached || r=blocked
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ $r = blocked ] && [ $ms -ge 1000 ] && r=blocked-slow
	echo "$r $(seen pub)"
	ev_keep tcp pub
	clear_log pub
}
# direct_udp, direct_icmp [NS]: from NS (default: the workload). The UDP
# goes to the control resolver, whose log is the control's evidence
# ($T/ev.udp); the echo requests that reach the internet's namespace are
# counted there ($T/ev.icmp).
direct_udp() {
	: >"$T/dnsk.log"
	ip netns exec "${1:-$WL}" python3 -c '
import socket
q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03api\x07example\x04test\x00\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
try:
    s.sendto(q, ("198.18.0.55", 53)); s.recv(512); print("answered")
except OSError:
    print("blocked")'
	ev_resolver dnsk "$T/dnsk.log" >"$T/ev.udp"
}
inin nft -f - <<'N'
table ip egconf_icmp {
	chain pre { type filter hook prerouting priority -300; policy accept; icmp type echo-request counter; }
}
N
icmp_count() { inin nft list chain ip egconf_icmp pre | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'; }
direct_icmp() {
	c0=$(icmp_count)
	ip netns exec "${1:-$WL}" ping -c1 -W1 198.18.1.10 >/dev/null 2>&1 && echo reached || echo blocked
	ev_counter in-icmp "$c0" "$(icmp_count)" >"$T/ev.icmp"
}
direct_v6() {
	clear_log pub6
	inwl curl -sS --noproxy '*' --max-time 3 -o /dev/null 'http://[2001:2:0:1::10]/' 2>/dev/null &&
	    r=reached || r=blocked
	echo "$r $(seen pub6)"
	ev_keep v6 pub6
	clear_log pub6
}
# dd-10..: Docker's embedded resolver, neighbour discovery, source routing
# (separate layout), then the shared layout's exemption. Stand-ins: the
# nat rules Docker installs and a resolver on 127.0.0.11; counters in the
# guard host's and the internet's prerouting stand for sniffers.
PROBE=$TI/nftprobe.py
printf '%s\n' 'table ip nat {' ' chain DOCKER_OUTPUT {' \
    '  ip daddr 127.0.0.11 tcp dport 53 dnat to 127.0.0.11:40053' \
    '  ip daddr 127.0.0.11 udp dport 53 dnat to 127.0.0.11:40054' ' }' \
    ' chain OUTPUT {' '  type nat hook output priority -100; policy accept;' \
    '  ip daddr 127.0.0.11 jump DOCKER_OUTPUT' ' }' '}' >"$T/dockernat.nft"
inwl nft -f "$T/dockernat.nft"
start_bg "$WL" "$T/dockerdns.out" /usr/bin/python3 "$PROBE" dns-serve "$T/dockerdns.log" "$T/dockerdns.ready"
DOCKERDNS_PID=$LASTPID
printf '%s\n' 'table inet egconf_probe {' ' chain pre {' \
    '  type filter hook prerouting priority -300; policy accept;' \
    '  exthdr rt exists counter' '  ip option lsrr exists counter' \
    '  ip6 daddr 2001:2::/32 icmpv6 type 133-137 counter' ' }' '}' >"$T/probe.nft"
ingd nft -f "$T/probe.nft"
inin nft -f "$T/probe.nft"
wait_file "$T/dockerdns.ready" 50
dead "$DOCKERDNS_PID"
counters() {	# "RT LSRR ND": packets counted at the guard host (routing
		# header, LSRR) and at the internet (ND to a public address)
	g=$(ingd nft list table inet egconf_probe | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p')
	i=$(inin nft list table inet egconf_probe | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p')
	echo $g | cut -d' ' -f1-2 | tr '\n' ' '
	echo $i | cut -d' ' -f3
}
moved() { [ "$1" = "$2" ] && echo untouched || echo reached; }
# One process for the probes: Docker's resolver (port 53, then its real
# ports), ND off the link, an unprivileged routing header and an LSRR
# option aimed at the guard's port.
dd_sep() {
	: >"$T/dockerdns.log"
	set -- $(counters)
	r=$(inwl /usr/bin/python3 "$PROBE" dns-query -- dns-query 40054 40053 -- nd 2001:2:0:1::10 -- \
	    as 12345 rthdr 2001:2:0:1::10 3128 fd77::1 -- lsrr 198.18.1.10 3128 10.77.0.1 |
	    tr '\n' ' ')	# one line: the two queries print one each
	sleep 0.1
	set -- "$@" $(counters)
	echo "$r$([ -s "$T/dockerdns.log" ] && echo reached || echo untouched)|$(moved "$3" "$6")|$(moved "$1" "$4")|$(moved "$2" "$5")"
	# The evidence: the stand-in resolver's log, and each counter's move.
	ev_resolver dockerdns "$T/dockerdns.log" >"$T/ev.dd10"
	ev_counter in-nd "$3" "$6" >"$T/ev.dd11"
	ev_counter gd-rthdr "$1" "$4" >"$T/ev.dd12"
	ev_counter gd-lsrr "$2" "$5" >"$T/ev.dd13"
}
DD_T0=$(date +%s%N)
o1=$(direct_tcp); o2=$(direct_udp); o3=$(direct_icmp); o4=$(direct_v6); o=$(dd_sep)
if [ "${EG_CONF_SKIP_NFT:-0}" != 1 ]; then nft_remove; fi
k1=$(direct_tcp); e1=$(ev_get tcp); k2=$(direct_udp); e2=$(ev_get udp); k3=$(direct_icmp); e3=$(ev_get icmp)
k4=$(direct_v6); e4=$(ev_get v6); k=$(dd_sep)
if [ "${EG_CONF_SKIP_NFT:-0}" != 1 ]; then nft_apply; fi
IFS='|' read -r o10 o11 o12 o13 <<EOF
$o
EOF
IFS='|' read -r k10 k11 k12 k13 <<EOF
$k
EOF
record dd-01 $F "workload ignores the proxy: direct TCP to a live public listener" \
    "blocked untouched" "$o1" "reached reached" "$k1" "$e1"
record dd-02 $F "workload ignores the proxy: UDP DNS to an outside server" blocked "$o2" answered "$k2" "$e2"
record dd-03 $F "workload ignores the proxy: ICMP echo" blocked "$o3" reached "$k3" "$e3"
record dd-04 $F "workload ignores the proxy: IPv6 TCP" "blocked untouched" "$o4" "reached reached" "$k4" "$e4"
# dd-05, dd-06: the control is guard A, which must reach pub.
o=$(via 3130 http://api.example.test/ -p)
clear_log pub
k=$(via 3128 http://api.example.test/ -p); e=$(ev_listener pub 1)
clear_log pub
record dd-05 $F "guard with no policy" "deny no_policy" "$o" allow "$k" "$e"
o=$(via 3131 http://api.example.test/ -p)
k=$(via 3128 http://api.example.test/ -p); e=$(ev_listener pub 1)
clear_log pub
record dd-06 $F "guard whose resolver is unreachable" "deny dns_timeout" "$o" allow "$k" "$e"

record dd-10 $F "workload queries Docker's embedded resolver (127.0.0.11:53, DNATed on loopback, then its real ports directly), UDP and TCP" \
    "udp refused tcp refused udp refused tcp refused untouched" "$o10" \
    "udp answered tcp connected udp answered tcp connected reached" "$k10" "$(ev_get dd10)"
record dd-11 $F "root workload sends an ND solicitation carrying data to a public address, hop limit 255" \
    untouched "$o11" reached "$k11" "$(ev_get dd11)"
record dd-12 $F "unprivileged workload: TCP to the guard's port with an IPv6 routing header (next segment: the guard)" \
    untouched "$o12" reached "$k12" "$(ev_get dd12)"
record dd-13 $F "workload with CAP_NET_RAW: TCP via the guard's port with an IPv4 LSRR option" \
    untouched "$o13" reached "$k13" "$(ev_get dd13)"

# Shared layout: SH holds the guard (exempt) and the workload. The guard
# is exempt by cgroup v2 where the machine has it; the controls exempt by
# uid, which root with CAP_SETUID walks through.
SH=egs-$$
CGM=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2" && $4 == "/") { print $5; exit } break } }' /proc/self/mountinfo)
CG=""
[ -n "$CGM" ] && mkdir "$CGM/egconf-$$" 2>/dev/null && CG=$CGM/egconf-$$
trap 'cleanup; ip netns del "$TW" 2>/dev/null; rm -rf "/etc/netns/$TW"; ip netns del "$SH" 2>/dev/null; [ -n "$CG" ] && rmdir "$CG" 2>/dev/null' EXIT INT TERM
ip netns add "$SH"
ip -n "$SH" link set lo up
ip link add sh0-$$ netns "$SH" type veth peer name is0-$$ netns "$IN"
ip -n "$SH" addr add 10.78.0.2/24 dev sh0-$$
ip -n "$IN" addr add 10.78.0.1/24 dev is0-$$
ip -n "$SH" link set sh0-$$ up
ip -n "$IN" link set is0-$$ up
ip -n "$SH" route add default via 10.78.0.1
insh() { ip netns exec "$SH" "$@"; }
insh nft -f "$T/dockernat.nft"
start_bg "$SH" "$T/dockerdns-sh.out" /usr/bin/python3 "$PROBE" dns-serve "$T/dockerdns-sh.log" "$T/dockerdns-sh.ready"
wait_file "$T/dockerdns-sh.ready" 50
dead "$LASTPID"
SHG="--netns $SH --guard 127.0.0.1:3128"
sh_apply() {	# cgroup|uid
	[ "${EG_CONF_SKIP_NFT:-0}" = 1 ] && return
	if [ "$1" = cgroup ] && [ -n "$CG" ] && [ "${EG_CONF_NFT_MUTANT:-}" != old_rules ]; then
		"$BIN" nft apply $SHG --exempt-cgroup "$CG" >/dev/null 2>&1
	else
		"$BIN" nft apply $SHG --exempt-uid 65534 >/dev/null 2>&1
	fi
	[ "${EG_CONF_NFT_MUTANT:-}" = old_rules ] && old_rules "$SH"
}
sh_tcp() {	# PREFIX...: direct TCP from SH to the public listener
	clear_log pub
	insh "$@" curl -sS --noproxy '*' --max-time 3 -o /dev/null http://198.18.1.10/ 2>/dev/null &&
	    r=reached || r=blocked
	echo "$r $(seen pub)"
	ev_keep shtcp pub
	clear_log pub
}
sh_dns() {
	: >"$T/dockerdns-sh.log"
	r=$(insh /usr/bin/python3 "$PROBE" dns-query)
	echo "$r $([ -s "$T/dockerdns-sh.log" ] && echo reached || echo untouched)"
	ev_resolver dockerdns-sh "$T/dockerdns-sh.log" >"$T/ev.sh"
}
SETUID="setpriv --reuid=65534 --regid=65534 --clear-groups"
KEPT="setpriv --reuid=12345 --regid=12345 --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all $SETUID"
sh_apply cgroup
o14=$(sh_dns)
o15=$(sh_tcp $SETUID)
sh_apply uid
k15=$(sh_tcp $SETUID); e15=$(ev_get shtcp)
o16=$(sh_tcp $KEPT)
[ "${EG_CONF_SKIP_NFT:-0}" != 1 ] && "$BIN" nft remove --netns "$SH" >/dev/null
ev_get sh >/dev/null
k14=$(sh_dns)
record dd-14 $F "shared layout: workload queries Docker's embedded resolver (the guard exempt beside it)" \
    "udp refused tcp refused untouched" "$o14" "udp answered tcp connected reached" "$k14" "$(ev_get sh)"
record dd-15 $F "shared layout, guard exempt by cgroup${CG:+ }${CG:-: NO cgroup v2, uid fallback}: root workload becomes the guard's uid (setpriv --reuid) and connects out (control: the uid exemption, precondition broken)" \
    "blocked untouched" "$o15" "reached reached" "$k15" "$e15"
record dd-16 $F "shared layout, uid exemption with its precondition kept (no CAP_SETUID/CAP_SETGID, no_new_privs): workload tries to become the guard's uid (control: root with CAP_SETUID)" \
    "blocked untouched" "$o16" "reached reached" "$k15" "$e15"
echo "(dd-10..16: $(( ($(date +%s%N) - DD_T0) / 1000000 )) ms)"
fi

# ------------------------------------------------------------- transparent
# The facts over the transparent path (run --transparent, issue 18): the
# workload TW dials with no proxy protocol; the name is the SNI or Host,
# never the address dialled. The controls run the same probe through
# guard B's transparent listener (unrestricted, private ranges allowed) or
# show that what must stay untouched is live.
TP_T0=$(date +%s%N)
# tpcurl PORT URL [curl args] → "allow" | "deny REASON" | "error"
tpcurl() {
	tp_to "$1" || { echo error; return; }
	shift
	tpreq "$@"
}
# tpreq URL [curl args]: the same, through whatever redirect is in place
tpreq() {
	out=$(ip netns exec "$TW" curl -sS -v --max-time 5 -o /dev/null -w 'code=%{http_code}' \
	    "$@" 2>"$T/tp.err")
	r=$(sed -n 's/^< X-Egress-Guard-Reason: \([a-z_]*\).*/\1/p' "$T/tp.err" | tr -d '\r' | head -n1)
	case "$out" in code=200) echo allow;; *) if [ -n "$r" ]; then echo "deny $r"; else echo error; fi;; esac
}
# tpkeep PORT HOST1 HOST2: two requests on one connection, "S1 R1, then S2 R2"
tpkeep() {
	tp_to "$1" || { echo error; return; }
	out=$(ip netns exec "$TW" python3 "$TI/tpkeep.py" 198.18.1.10 80 "$2" "$3" 2>/dev/null) ||
	    out=error
	echo "${out%; *}"
}
if want_fact exact_destination_match; then
	F=exact_destination_match
	clear_log pub; clear_log attacker
	o="$(tpcurl 15001 http://api.example.test/ --resolve api.example.test:80:198.18.1.66) pub $(seen pub) attacker $(seen attacker)"
	clear_log attacker
	k="attacker $(inin curl -s -o /dev/null --max-time 3 http://198.18.1.66/ && seen attacker)"
	e=$(ev_listener attacker 1)
	clear_log pub; clear_log attacker
	record tp-edm-05 $F "transparent: admitted name dialled at an attacker's address (its listener live): the guard dials its own answer" \
	    "allow pub reached attacker untouched" "$o" "attacker reached" "$k" "$e"
	o=$(tpcurl 15001 http://other.example.test/)
	k=$(tpcurl 15002 http://other.example.test/); e=$(ev_listener pub 1)
	clear_log pub
	record tp-edm-06 $F "transparent: Host names a host the policy does not admit" \
	    "deny not_allowlisted" "$o" allow "$k" "$e"
fi
if want_fact connect_time_public_address; then
	F=connect_time_public_address
	for c in "tp-ctpa-01 private.example.test" "tp-ctpa-02 mixed.example.test"; do
		set -- $c
		clear_log priv
		o="$(tpcurl 15001 "http://$2/") $(seen priv)"
		clear_log priv
		k="$(tpcurl 15002 "http://$2/") $(seen priv)"; e=$(ev_listener priv 1)
		clear_log priv
		record "$1" $F "transparent: admitted name $2 with a private answer (live private listener)" \
		    "deny non_public_address untouched" "$o" "allow reached" "$k" "$e"
	done
fi
if want_fact redirect_recheck; then
	F=redirect_recheck
	clear_log priv
	o="$(tpkeep 15001 tprebind.example.test tprebind.example.test) $(seen priv)"
	clear_log priv
	k="$(tpkeep 15002 tprebind.example.test tprebind.example.test) $(seen priv)"
	e=$(ev_listener priv 1)
	clear_log priv
	record tp-rr-01 $F "transparent keep-alive: the same Host again, its answer now private (TTL 0)" \
	    "200 -, then 403 non_public_address untouched" "$o" "200 -, then 200 - reached" "$k" "$e"
	o=$(tpkeep 15001 api.example.test 198.18.1.10)
	clear_log pub
	k=$(tpkeep 15001 198.18.1.10 198.18.1.10); e=$(ev_listener pub 2)
	clear_log pub
	record tp-rr-02 $F "transparent keep-alive: a second request with another (admitted) Host (control: the same Host twice, both answered by pub)" \
	    "200 -, then 400 host_changed" "$o" "200 -, then 200 -" "$k" "$e"
fi
if want_fact authority_separation; then
	F=authority_separation
	# Through guard B (unrestricted, private ranges allowed): the guard's
	# own address is refused whatever the policy and ranges say, so the
	# workload cannot reach the guard's own services through capture.
	o=$(tpcurl 15002 http://10.78.0.1:3129/v1/status)
	clear_log priv
	k=$(tpcurl 15002 http://private.example.test/); e=$(ev_listener priv 1)
	clear_log priv
	record tp-as-01 $F "transparent: the workload dials the guard's own address for its API (guard B: unrestricted, private ranges allowed; control: a private neighbour)" \
	    "deny non_public_address" "$o" allow "$k" "$e"
fi
if want_fact default_deny; then
	F=default_deny
	# The separate layout's own rules, as a deployment applies them
	# (docs/nft.md): the workload's TCP leaves only towards the guard,
	# the guard's side redirects what arrives on the link to guard A's
	# transparent listener and forwards nothing, though forwarding is on
	# in this namespace. The hand-made redirect above goes first.
	ingd nft delete table ip eg_transp_matrix
	tp_nft() {	# apply | remove
		if [ "$1" = apply ]; then
			"$BIN" nft apply --netns "$GD" --transparent-in "gt0-$$" \
			    --transparent 10.78.0.1:15001 >/dev/null 2>&1 &&
			    "$BIN" nft apply --netns "$TW" --guard 10.78.0.1:3128 \
			    --transparent-via 10.78.0.1 >/dev/null 2>&1
		else
			"$BIN" nft remove --netns "$GD" >/dev/null 2>&1
			"$BIN" nft remove --netns "$TW" >/dev/null 2>&1
		fi
	}
	# tp_direct: TCP to a literal no policy admits (the attacker's live
	# listener); "allow|deny R|error attacker reached|untouched"
	tp_direct() {
		clear_log attacker
		echo "$(tpreq http://198.18.1.66/) attacker $(seen attacker)"
		ev_keep tpdirect attacker 1
		clear_log attacker
	}
	# A route back to the workload through the guard's namespace (its /24
	# is also a network of the internet's own), so that anything the
	# guard's namespace forwarded would be answered: only the rules stop it.
	ip -n "$IN" route add 10.78.0.2/32 via 198.18.0.1
	if tp_nft apply; then
		o1=$(tp_direct); o2=$(direct_udp "$TW"); o3=$(direct_icmp "$TW")
		o4=$(ip netns exec "$TW" curl -sS --max-time 5 -o /dev/null -w '%{http_code}' http://api.example.test/ 2>/dev/null)
	else
		o1="apply failed"; o2=$o1; o3=$o1; o4=$o1
	fi
	tp_nft remove
	k1=$(tp_direct); e1=$(ev_get tpdirect); k2=$(direct_udp "$TW"); e2=$(ev_get udp)
	k3=$(direct_icmp "$TW"); e3=$(ev_get icmp)
	ip -n "$IN" route del 10.78.0.2/32 via 198.18.0.1
	record tp-dd-01 $F "transparent layout: TCP to an address no policy admits goes to the guard, never around it (control: the rules removed)" \
	    "deny not_allowlisted attacker untouched" "$o1" "allow attacker reached" "$k1" "$e1"
	record tp-dd-02 $F "transparent layout: UDP (DNS, QUIC) is not redirected and goes nowhere" blocked "$o2" \
	    answered "$k2" "$e2"
	record tp-dd-03 $F "transparent layout: ICMP echo goes nowhere" blocked "$o3" reached "$k3" "$e3"
	# The control: a name the policy does not admit, through the same
	# redirect: guard A's transparent listener must log its refusal.
	m=$(log_mark "$T/A.log")
	k=$(tp_nft apply && ip netns exec "$TW" curl -sS --max-time 5 -o /dev/null -w '%{http_code}' http://other.example.test/ 2>/dev/null; tp_nft remove)
	record tp-dd-04 $F "transparent layout: an admitted name through the guard's own redirect (control: a name the policy does not admit)" \
	    200 "$o4" 403 "$k" "$(ev_decision guardA "$T/A.log" "$m")"
fi
echo "(transparent cases: $(( ($(date +%s%N) - TP_T0) / 1000000 )) ms)"

# ------------------------------------------------------------------ report
write_report "$OUT" "$BIN" "$BIN_SHA256" lab
