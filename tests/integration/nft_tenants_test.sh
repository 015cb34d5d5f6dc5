#!/bin/sh
# The tenants table (docs/nft.md "Tenants": `egress-guard nft tenants`)
# against the real kernel and the real `nft` CLI, in namespaces this
# script creates and always deletes. Needs root. One "PASS name" /
# "FAIL name" (or "SKIP name") line per check; exits non-zero on any FAIL.
#
#   tenant A  egtn-a-$$  wa 10.81.1.2 ---- eg-a 10.81.1.1  guard egtn-gd-$$
#   tenant B  egtn-b-$$  wb 10.81.2.2 ---- eg-b 10.81.2.1  (forwarding on)
#   far   egtn-far-$$    wf 10.81.3.2 ---- eg-far 10.81.3.1 (no tenant)
#
# Live listeners in the guard namespace: LA on 10.81.1.1:3128 bound to
# eg-a (SO_BINDTODEVICE, as a tenant-mode guard binds), LB on
# 10.81.2.1:3128 NOT bound to a device, LX on 10.81.1.1:9999 (a port of
# the guard that is no tenant's), LD on 10.81.1.1:5353 NOT bound (A's DNS
# port, the target of B's cross-tenant attempt); LF in far on 10.81.3.2:8080 (reached
# from B only by forwarding); LT on 10.81.1.1:3129 bound to eg-a, A's
# transparent listener, logs the original destination (SO_ORIGINAL_DST).
# Tenant C (egtn-c-$$, IPv6: wc fd81:3::2 ---- eg-c fd81:3::1, listener
# LC bound to eg-c) shows neighbour discovery passing the input chain and
# an IPv6 spoof dropped. rp_filter is off in the guard: the table, not
# the kernel's reverse-path check, is what is tested. Every hostile case is
# first shown to reach its live listener (its log says so) before the
# table, then dropped after it (the drop counter moves, the log does not);
# the anti-spoofing case once more with the rule deleted (and with the
# no_antispoof mutant build when it is there).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
BIN=${EGNFT_BIN:-${BUILD:-build}/egress-guard}
case $BIN in /*) ;; *) BIN=$top/$BIN ;; esac
MUTANT=${EGNFT_MUTANT_BIN:-${BUILD:-build}/mutant-no_antispoof/egress-guard}
case $MUTANT in /*) ;; *) MUTANT=$top/$MUTANT ;; esac
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

GD=egtn-gd-$$
NA=egtn-a-$$
NB=egtn-b-$$
NC=egtn-c-$$
NF=egtn-far-$$
TABLE=egress_guard_tenants
T=$(mktemp -d /tmp/egtn.XXXXXX)
PIDS=""
fails=0

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	for ns in $GD $NA $NB $NC $NF; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+: $2}"; fails=$((fails + 1)); }
skip() { echo "SKIP $1${2:+ ($2)}"; }
check() { # name condition-exit-status [detail]
	if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1" "${3:-}"; fi
}
nsx() { ns=$1; shift; ip netns exec "$ns" "$@"; }
. "$top/tests/integration/wait.sh"	# lines, wait_lines

if [ "$(id -u)" != 0 ] || ! command -v nft >/dev/null 2>&1; then
	skip nft_tenants "needs root and nft"
	exit 0
fi

# A TCP listener that logs "conn PEER" per accepted connection and answers
# one HTTP request; DEV "-" means no SO_BINDTODEVICE.
cat >"$T/lsn.py" <<'EOF'
import socket, struct, sys
addr, port, dev, logf, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if dev != "-":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
s.bind((addr, port))
s.listen(16)
log = open(logf, "a")
open(ready, "w").write("up\n")
while True:
    c, peer = s.accept()
    orig = ""
    if s.family == socket.AF_INET:
        try:  # SO_ORIGINAL_DST: where the client meant to go, before DNAT
            raw = c.getsockopt(socket.SOL_IP, 80, 16)
            orig = " orig %s:%d" % (socket.inet_ntoa(raw[4:8]), struct.unpack("!H", raw[2:4])[0])
        except OSError:
            pass
    log.write("conn %s:%d%s\n" % (peer[0], peer[1], orig))
    log.flush()
    c.settimeout(2)
    try:
        c.recv(4096)
        body = b"hello from %s\n" % addr.encode()
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    except OSError:
        pass
    c.close()
EOF

start_listener() { # ns addr port dev name
	: >"$T/$5.log"
	ip netns exec "$1" "$PY" "$T/lsn.py" "$2" "$3" "$4" "$T/$5.log" \
	    "$T/$5.ready" >>"$T/background.log" 2>&1 &
	PIDS="$PIDS $!"
}

# try NAME NS SRC URL: curl from NS with source SRC; 0 when the
# listener answered. At most 1 s to connect.
try() {
	nsx "$2" curl -s -o "$T/$1.body" --max-time 2 --connect-timeout 1 \
	    --interface "$3" "$4" >/dev/null 2>&1
}

# The packets counted by the drop rule of CHAIN (its last rule).
drops() {
	nsx "$GD" nft -j list chain inet $TABLE "$1" 2>/dev/null | "$PY" -c '
import json, sys
n = 0
for o in json.load(sys.stdin)["nftables"]:
    r = o.get("rule")
    if not r:
        continue
    ex = r["expr"]
    if any("drop" in e for e in ex) and r.get("handle") is not None:
        for e in ex:
            if "counter" in e:
                n += e["counter"]["packets"]
print(n)' 2>/dev/null || echo -1
}

eg() { # egress-guard nft ...: sets RC, OUT, ERR
	"$BIN" nft "$@" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# ---- topology -----------------------------------------------------------
for ns in $GD $NA $NB $NC $NF; do ip netns add "$ns" || exit 1; done
ip -n "$GD" link add eg-a type veth peer name wa netns "$NA" &&
ip -n "$GD" link add eg-b type veth peer name wb netns "$NB" &&
ip -n "$GD" link add eg-c type veth peer name wc netns "$NC" &&
ip -n "$GD" link add eg-far type veth peer name wf netns "$NF" || exit 1
nsx "$GD" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
    net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.eg-a.rp_filter=0 \
    net.ipv4.conf.eg-b.rp_filter=0 net.ipv4.ip_forward=1
ip -n "$GD" addr add 10.81.1.1/24 dev eg-a
ip -n "$GD" addr add 10.81.2.1/24 dev eg-b
ip -n "$NA" addr add 10.81.1.2/24 dev wa
ip -n "$NB" addr add 10.81.2.2/24 dev wb
ip -n "$GD" addr add 10.81.3.1/24 dev eg-far
ip -n "$NF" addr add 10.81.3.2/24 dev wf
ip -n "$GD" addr add fd81:3::1/64 dev eg-c nodad
ip -n "$NC" addr add fd81:3::2/64 dev wc nodad
ip -n "$NC" addr add fd81:3::9/64 dev wc nodad
for l in "$GD eg-a" "$GD eg-b" "$GD eg-c" "$GD eg-far" "$GD lo" "$NA wa" \
    "$NA lo" "$NB wb" "$NB lo" "$NC wc" "$NC lo" "$NF wf" "$NF lo"; do
	set -- $l
	ip -n "$1" link set "$2" up
done
# A spoofs B's peer address; reaches B's listener address and B through
# the guard.
ip -n "$NA" addr add 10.81.2.2/32 dev wa
ip -n "$NA" route add 10.81.2.1/32 dev wa
ip -n "$NA" route add 198.18.5.0/24 via 10.81.1.1	# A is transparent
ip -n "$NB" route add 10.81.3.0/24 via 10.81.2.1	# B reaches far via the guard
ip -n "$NB" route add 10.81.1.1/32 dev wb	# and A's address on its own link
ip -n "$NF" route add 10.81.2.0/24 via 10.81.3.1

start_listener "$GD" 10.81.1.1 3128 eg-a LA
start_listener "$GD" 10.81.2.1 3128 - LB
start_listener "$GD" 10.81.1.1 9999 - LX
start_listener "$NF" 10.81.3.2 8080 - LF
start_listener "$GD" fd81:3::1 3128 eg-c LC
start_listener "$GD" 10.81.1.1 3129 eg-a LT
start_listener "$GD" 10.81.1.1 5353 - LD
for l in LA LB LX LF LC LT LD; do
	wait_lines "$T/$l.ready" 1 || { fail setup "listener $l did not start"; exit 1; }
done

cat >"$T/tenants.json" <<'EOF'
{"schema":"egress-guard.tenants.v1","tenants":[
 {"id":"b","link":"eg-b","address":"10.81.2.1","peer":"10.81.2.2","port":3128},
 {"id":"a","link":"eg-a","address":"10.81.1.1","peer":"10.81.1.2","port":3128,"dns_port":5353,"transparent_port":3129},
 {"id":"c","link":"eg-c","address":"fd81:3::1","peer":"fd81:3::2","port":3128}
]}
EOF

# ---- controls: before the table, every hostile path is open --------------
try own "$NA" 10.81.1.2 http://10.81.1.1:3128/
check control_own_listener_reached $? "A could not reach its own listener"
try spoof "$NA" 10.81.2.2 http://10.81.1.1:3128/
grep -q "^conn 10.81.2.2:" "$T/LA.log"
check control_spoofed_source_reaches_live_listener $? \
    "A's connection from B's peer address never reached LA"
try cross "$NB" 10.81.2.2 http://10.81.1.1:5353/
grep -q "^conn 10.81.2.2:" "$T/LD.log"
check control_cross_tenant_reaches_live_listener $? \
    "B never reached A's (unbound) DNS listener"
try cross_a "$NA" 10.81.1.2 http://10.81.2.1:3128/
grep -q "^conn 10.81.1.2:" "$T/LB.log"
check control_a_reaches_b_listener $? "A never reached B's listener address"
try other "$NA" 10.81.1.2 http://10.81.1.1:9999/
grep -q "^conn 10.81.1.2:" "$T/LX.log"
check control_other_guard_port_reached $?
try fwd "$NB" 10.81.2.2 http://10.81.3.2:8080/
grep -q "^conn 10.81.2.2:" "$T/LF.log"
check control_forwarded_through_guard $?
try tproxy0 "$NA" 10.81.1.2 http://198.18.5.5:80/
[ $? -ne 0 ] && [ "$(lines "$T/LT.log")" -eq 0 ]
check control_no_redirect_before_table $?
try spoof6 "$NC" fd81:3::9 'http://[fd81:3::1]:3128/'
grep -q "^conn fd81:3::9:" "$T/LC.log"
check control_ipv6_spoofed_source_reaches_live_listener $?

# ---- bad input changes nothing ------------------------------------------
sed 's/"10.81.1.2"/"10.81.1.1"/' "$T/tenants.json" >"$T/bad.json"
eg tenants --tenants "$T/bad.json" --netns "$GD"
if [ $RC -eq 2 ] && echo "$ERR" | grep -q '"peer"' &&
    ! nsx "$GD" nft list table inet $TABLE >/dev/null 2>&1; then
	pass refuses_bad_spec_without_table
else
	fail refuses_bad_spec_without_table "rc $RC: $ERR"
fi

# ---- apply -----------------------------------------------------------------
eg tenants --tenants "$T/tenants.json" --netns "$GD"
check apply_ok $RC "$ERR"
eg tenants-verify --tenants "$T/tenants.json" --netns "$GD"
check verify_ok $RC "$ERR"

# The table as the real nft reads it back.
nsx "$GD" nft -j list table inet $TABLE >"$T/table.json" 2>"$T/nft.err"
"$PY" - "$T/table.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))["nftables"]
sets = {o["set"]["name"]: o["set"] for o in doc if "set" in o}
chains = {o["chain"]["name"]: o["chain"] for o in doc if "chain" in o}
rules = [o["rule"] for o in doc if "rule" in o]
sets.update({o["map"]["name"]: o["map"] for o in doc if "map" in o})
def elems(name):
    out = []
    for e in sets[name].get("elem", []):
        if isinstance(e, list):  # a map: [key, {"concat": data}]
            out.append((e[0], tuple(e[1]["concat"])))
        else:
            out.append(tuple(e["concat"]) if isinstance(e, dict) else e)
    return sorted(out, key=str)
want = {
    "links": sorted(["eg-a", "eg-b", "eg-c"]),
    "peers4": sorted([("eg-a", "10.81.1.2"), ("eg-b", "10.81.2.2")], key=str),
    "listen4": sorted([("eg-a", "10.81.1.1", "tcp", 3128), ("eg-a", "10.81.1.1", "tcp", 5353),
                       ("eg-a", "10.81.1.1", "udp", 5353), ("eg-a", "10.81.1.1", "tcp", 3129),
                       ("eg-b", "10.81.2.1", "tcp", 3128)], key=str),
    "own4": [("eg-a", "10.81.1.1")], "own6": [],
    "tproxy4": [("eg-a", ("10.81.1.1", 3129))], "tproxy6": [],
    "links6": ["eg-c"], "peers6": [("eg-c", "fd81:3::2")],
    "listen6": [("eg-c", "fd81:3::1", "tcp", 3128)],
}
bad = []
for k, v in want.items():
    got = elems(k) if k in sets else None
    if got != v:
        bad.append("set %s: %r, expected %r" % (k, got, v))
pre = chains.get("prerouting", {})
if (pre.get("hook"), pre.get("prio"), pre.get("policy")) != ("prerouting", -300, "accept"):
    bad.append("prerouting chain %r" % pre)
for name, hook in (("input", "input"), ("forward", "forward")):
    c = chains.get(name, {})
    if (c.get("hook"), c.get("prio"), c.get("policy")) != (hook, 0, "accept"):
        bad.append("%s chain %r" % (name, c))
n = {c: sum(1 for r in rules if r["chain"] == c) for c in chains}
nat = chains.get("nat_prerouting", {})
if (nat.get("type"), nat.get("hook"), nat.get("prio")) != ("nat", "prerouting", -110):
    bad.append("nat_prerouting chain %r" % nat)
if n != {"prerouting": 4, "nat_prerouting": 4, "input": 4, "forward": 2}:
    bad.append("rules per chain %r" % n)
for r in rules:
    if any("drop" in e for e in r["expr"]) and not any("counter" in e for e in r["expr"]):
        bad.append("a drop without a counter in %s" % r["chain"])
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
check table_read_back_by_nft $? "$(cat "$T/nft.err")"

# ---- after: the same hostile paths are dropped -------------------------------
# dropped NAME CHAIN LISTENER NS SRC URL: the connection fails, CHAIN's
# drop counter moves and the listener's log stays as it was.
dropped() {
	cp "$T/$3.log" "$T/$3.before"
	c0=$(drops "$2")
	try "$1" "$4" "$5" "$6"
	rc=$?
	c1=$(drops "$2")
	if [ $rc -ne 0 ] && [ "$c1" -gt "$c0" ] &&
	    cmp -s "$T/$3.log" "$T/$3.before"; then
		pass "$1"
	else
		fail "$1" "curl rc $rc, $2 drops $c0 -> $c1, $3 log: $(tail -n 2 "$T/$3.log")"
	fi
}
n=$(lines "$T/LA.log")
try own2 "$NA" 10.81.1.2 http://10.81.1.1:3128/
[ $? -eq 0 ] && [ "$(lines "$T/LA.log")" -gt "$n" ]
check own_listener_still_reached $? "A's own listener not reached after the table"
# A is transparent: its TCP to any other address goes to its transparent
# listener, which reads the original destination.
try tproxy "$NA" 10.81.1.2 http://198.18.5.5:80/
[ $? -eq 0 ] && grep -q "^conn 10.81.1.2:[0-9]* orig 198.18.5.5:80$" "$T/LT.log"
check transparent_tcp_redirected_to_own_listener $? "LT log: $(cat "$T/LT.log")"
dropped hostile_spoofed_source_dropped prerouting LA "$NA" 10.81.2.2 \
    http://10.81.1.1:3128/
dropped hostile_cross_tenant_listener_dropped input LD "$NB" 10.81.2.2 \
    http://10.81.1.1:5353/
# A (transparent) asking for B's listener address lands on its own
# transparent listener, never on B's.
cp "$T/LB.log" "$T/LB.before"
try cross_a2 "$NA" 10.81.1.2 http://10.81.2.1:3128/
cmp -s "$T/LB.log" "$T/LB.before" &&
    grep -q "^conn 10.81.1.2:[0-9]* orig 10.81.2.1:3128$" "$T/LT.log"
check hostile_transparent_tenant_redirected_not_to_other_tenant $? \
    "LB: $(tail -n 1 "$T/LB.log") LT: $(tail -n 1 "$T/LT.log")"
dropped hostile_other_guard_port_dropped input LX "$NA" 10.81.1.2 \
    http://10.81.1.1:9999/
dropped hostile_forward_dropped forward LF "$NB" 10.81.2.2 \
    http://10.81.3.2:8080/
try ownb "$NB" 10.81.2.2 http://10.81.2.1:3128/
check other_tenant_own_listener_reached $?
# IPv6: both neighbour caches are flushed first, so the connection needs
# neighbour discovery through the input chain.
nsx "$NC" ip -6 neigh flush dev wc
nsx "$GD" ip -6 neigh flush dev eg-c
try own6 "$NC" fd81:3::2 'http://[fd81:3::1]:3128/'
check ipv6_own_listener_reached_with_nd $? "C could not reach its own listener"
dropped hostile_ipv6_spoofed_source_dropped prerouting LC "$NC" fd81:3::9 \
    'http://[fd81:3::1]:3128/'

# ---- the anti-spoofing rule is what drops the spoof ----------------------
h=$(nsx "$GD" nft -a list chain inet $TABLE prerouting |
    sed -n 's/.*iifname @links counter.*drop # handle \([0-9]*\)$/\1/p')
nsx "$GD" nft delete rule inet $TABLE prerouting handle "${h:-0}"
eg tenants-verify --tenants "$T/tenants.json" --netns "$GD"
if [ $RC -eq 1 ] && echo "$ERR" | grep -q "prerouting: missing rule"; then
	pass verify_names_deleted_antispoof_rule
else
	fail verify_names_deleted_antispoof_rule "rc $RC: $ERR"
fi
n=$(grep -c '^conn 10.81.2.2:' "$T/LA.log")
try spoof3 "$NA" 10.81.2.2 http://10.81.1.1:3128/
[ "$(grep -c '^conn 10.81.2.2:' "$T/LA.log")" -gt "$n" ]
check control_spoof_reaches_listener_without_rule $?

if [ -x "$MUTANT" ]; then
	"$MUTANT" nft tenants --tenants "$T/tenants.json" --netns "$GD" \
	    >/dev/null 2>&1
	n=$(grep -c '^conn 10.81.2.2:' "$T/LA.log")
	try spoof4 "$NA" 10.81.2.2 http://10.81.1.1:3128/
	[ "$(grep -c '^conn 10.81.2.2:' "$T/LA.log")" -gt "$n" ]
	check control_no_antispoof_mutant_lets_spoof_through $?
else
	skip control_no_antispoof_mutant_lets_spoof_through \
	    "make $(dirname "${MUTANT#$top/}")/egress-guard first"
fi

# ---- refusals and scale ----------------------------------------------------
eg tenants --tenants "$T/none.json" --netns "$GD"
[ $RC -eq 2 ] && echo "$ERR" | grep -q "$T/none.json"
check refuses_missing_list_naming_it $? "rc $RC: $ERR"
eg tenants --tenants "$T/tenants.json" --netns "egtn-nosuch-$$"
check refuses_unknown_namespace $([ $RC -eq 2 ]; echo $?) "rc $RC: $ERR"
if command -v setpriv >/dev/null 2>&1; then
	# In the guard's namespace itself (no setns), without any capability;
	# the list readable by the unprivileged uid.
	eg tenants-remove --netns "$GD"
	chmod 0755 "$T"
	chmod 0644 "$T/tenants.json"
	nsx "$GD" setpriv --reuid 65534 --regid 65534 --clear-groups \
	    --inh-caps=-all --bounding-set=-all "$BIN" nft tenants \
	    --tenants "$T/tenants.json" --netns /proc/self/ns/net \
	    >"$T/out" 2>"$T/err"
	RC=$?
	[ $RC -eq 2 ] && grep -q "CAP_NET_ADMIN" "$T/err" &&
	    ! nsx "$GD" nft list table inet $TABLE >/dev/null 2>&1
	check refuses_without_cap_net_admin $? "rc $RC: $(cat "$T/err")"
fi
# The most tenants a list holds, every one with a DNS and a transparent
# port: one transaction of about 300 messages and 1.5 MB, through buffers
# raised for it, and read back equal.
"$PY" - "$T/big.json" <<'EOF2'
import json, sys
t = []
for i in range(4096):
    v6 = i % 2
    a = ("fd82:%x::1" % i, "fd82:%x::2" % i) if v6 else \
        ("10.%d.%d.1" % (100 + i // 256, i % 256), "10.%d.%d.2" % (100 + i // 256, i % 256))
    t.append({"id": "t%04d" % i, "link": "x%04d" % i, "address": a[0], "peer": a[1],
              "port": 3128, "dns_port": 53, "transparent_port": 3129})
json.dump({"schema": "egress-guard.tenants.v1", "tenants": t}, open(sys.argv[1], "w"))
EOF2
eg tenants --tenants "$T/big.json" --netns "$GD"
r1=$RC; e1=$ERR
eg tenants-verify --tenants "$T/big.json" --netns "$GD"
[ $r1 -eq 0 ] && [ $RC -eq 0 ] && echo "$OUT" | grep -q "4096 tenants"
check largest_list_applies_and_verifies $? "apply $r1: $e1; verify $RC: $ERR"

# ---- re-apply, dry run, remove ------------------------------------------------
eg tenants --tenants "$T/tenants.json" --netns "$GD"
check reapply_restores $RC "$ERR"
eg tenants --tenants "$T/tenants.json" --dry-run
echo "$OUT" >"$T/dry.nft"
eg tenants-remove --netns "$GD"
check remove_ok $RC "$ERR"
eg tenants-verify --tenants "$T/tenants.json" --netns "$GD"
if [ $RC -eq 1 ] && echo "$ERR" | grep -q "$TABLE: missing"; then
	pass verify_names_missing_table
else
	fail verify_names_missing_table "rc $RC: $ERR"
fi
# The dry run's text, loaded by the real nft, is the table apply makes.
nsx "$GD" nft -f "$T/dry.nft" &&
    "$BIN" nft tenants-verify --tenants "$T/tenants.json" --netns "$GD" \
    >/dev/null 2>&1
check dry_run_text_is_the_table $?
eg tenants-remove --netns "$GD"
eg tenants-remove --netns "$GD"
if [ $RC -eq 0 ] && echo "$OUT" | grep -q "not present"; then
	pass remove_absent_ok
else
	fail remove_absent_ok "rc $RC: $OUT $ERR"
fi

[ $fails -eq 0 ]
