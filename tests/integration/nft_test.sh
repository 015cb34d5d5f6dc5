#!/bin/sh
# nftables default-deny (docs/design.md "nftables") against the real
# kernel and the real `nft` CLI, in network namespaces this script creates
# and always deletes. Needs root. One "PASS name" / "FAIL name" (or "SKIP
# name") line per check; exits non-zero on any FAIL.
#
# Layout (a), separate namespaces:
#   workload egnft-wl-$$ 10.200.0.2, fd00:200::2
#     | the workload HAS a route out: the guard namespace forwards
#   guard    egnft-gd-$$ 10.200.0.1, fd00:200::1 (guard: 10.200.0.1:3128)
#     |
#   internet egnft-in-$$ 198.18.1.10, 2001:2::10 (pretend-public listeners)
# Layout (b), shared namespace (a sidecar with --network container:...):
#   egnft-sh-$$ 10.202.0.2, fd00:202::2 -> internet; the guard on
#   127.0.0.1:3128 runs as uid 65534, exempt by uid, then by cgroup v2;
#   everyone else only reaches loopback (DNS and DNAT on it excepted).
#
# Docker's embedded resolver is stood in for in both: a resolver on
# 127.0.0.11:40054/udp and :40053/tcp and the nat rules Docker installs
# (table ip nat, OUTPUT -> DOCKER_OUTPUT, DNAT of 127.0.0.11:53).
# In (b) the guard is exempt by cgroup v2 (egnft-$$ under the cgroup2 mount)
# where this machine has one, and by uid in the checks that show the uid's
# precondition.
#
# Every check that shows something blocked has a control that shows the
# same thing getting through before `apply` (or for the exempt guard).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
BIN=${EGNFT_BIN:-${BUILD:-build}/egress-guard}
case $BIN in /*) ;; *) BIN=$top/$BIN ;; esac
LISTENER=$top/tests/integration/listener.py
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

WL=egnft-wl-$$
GD=egnft-gd-$$
IN=egnft-in-$$
SH=egnft-sh-$$
NOBODY=65534
PUB4=198.18.1.10
PUB6=2001:2::10
# Sources a workload forges: addresses of the pretend internet that no
# namespace holds. The guard host answers them over its own way out.
SPOOF4=198.18.77.77
SPOOF6=2001:2::77
T=$(mktemp -d /tmp/egnft.XXXXXX)
PIDS=""
fails=0

alive() { # pid: running and not a zombie
	[ -r "/proc/$1/stat" ] || return 1
	[ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]
}

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	i=0
	while [ $i -lt 30 ]; do
		left=""
		for p in $PIDS; do alive "$p" && left="$left $p"; done
		[ -z "$left" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	# Anything still in the cgroup this script made was started by it.
	if [ -n "${CG:-}" ] && [ -d "$CG" ]; then
		for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
	fi
	for ns in $WL $GD $IN $SH; do ip netns del "$ns" 2>/dev/null; done
	i=0	# rmdir waits for the killed to be reaped
	while [ -n "${CG:-}" ] && [ -d "$CG" ] && ! rmdir "$CG" 2>/dev/null &&
	    [ $i -lt 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+: $2}"; fails=$((fails + 1)); }
skip() { echo "SKIP $1${2:+ ($2)}"; }
nsx() { ns=$1; shift; ip netns exec "$ns" "$@"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
. "$top/tests/integration/wait.sh"	# lines, wait_lines

wait_file() { # file [tries]: up to tries x 0.1 s (default 50: 5 s)
	i=0
	while [ ! -s "$1" ] && [ $i -lt "${2:-50}" ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$1" ]
}

# wait_count ns n above: up to 3 s for counter n of egnft_probe in ns to
# pass above (a packet on its way through veths and softirqs).
wait_count() {
	i=0
	while [ "$(probe_count "$1" "$2")" -le "$3" ] && [ $i -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

wait_listen() { # ns port: up to 5 s for a TCP listener
	i=0
	while [ $i -lt 50 ]; do
		nsx "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

start() { # ns cmd...: in the background, PID kept for cleanup
	ns=$1
	shift
	ip netns exec "$ns" "$@" >>"$T/background.log" 2>&1 &
	PIDS="$PIDS $!"
}

# $AS, when set, is a command prefix (setpriv ...) for eg and try_curl;
# $PRE one run before `ip netns exec` ($T/in_cg: it remounts /sys, where
# the cgroup file system is). in_cg is a script that execs its command,
# not a shell function: a function run with & is a subshell whose $! is
# not the command's, and killing it left the shared layout's guard
# running after the test.
AS=""
PRE=""

# The cgroup2 mount (root "/"), and egnft-$$ under it for the exempt guard.
CG2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2" && $4 == "/") { print $5; exit } break } }' /proc/self/mountinfo)
CG=""

eg() { # egress-guard nft ...: sets RC, OUT (stdout), ERR (stderr)
	$AS "$BIN" nft "$@" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

no_table() { # ns: the table is not there
	! nsx "$1" nft list tables 2>/dev/null | grep -q egress_guard
}

expect_refused() { # name needle...: eg exited 2 saying so; no table in WL
	name=$1
	shift
	if [ "$RC" -ne 2 ]; then
		fail "$name" "exit $RC: $ERR"
	elif ! no_table "$WL"; then
		fail "$name" "a table was created"
	else
		has "$name" "$ERR" "$@"
	fi
}

try_curl() { # ns curl-args...: sets CRC, CMS, COUT
	ns=$1
	shift
	t0=$(now_ms)
	COUT=$($PRE ip netns exec "$ns" $AS curl -sS --max-time 5 "$@" 2>&1)
	CRC=$?
	CMS=$(( $(now_ms) - t0 ))
}

expect_reach() { # name log ns curl-args...
	name=$1 log=$2
	shift 2
	before=$(lines "$log")
	try_curl "$@"
	sleep 0.2
	if [ $CRC -ne 0 ]; then
		fail "$name" "curl rc $CRC: $COUT"
	elif [ "$(lines "$log")" = "$before" ]; then
		fail "$name" "listener logged nothing"
	else
		pass "$name"
	fi
}

# Blocked means: curl fails, in under a second (reset / admin-prohibited,
# never a timeout), and the listener logs nothing at all. The second is
# curl's own time_total (from its transfer's start to its failure), not the
# wall clock around `ip netns exec`, setpriv and curl starting up, which a
# loaded machine stretches past a second. curl prints it however the
# transfer ends (a timeout too); no figure means curl never started a
# transfer (the $AS prefix refused, as in the uid precondition's check),
# so nothing was sent that could have been dropped.
expect_blocked() { # name log ns curl-args...
	name=$1 log=$2
	shift 2
	before=$(lines "$log")
	try_curl "$@" -o /dev/null -w 'curl_time_total=%{time_total}\n'
	sleep 0.2
	ct=$(printf '%s\n' "$COUT" | sed -n 's/.*curl_time_total=\([0-9][0-9.]*\).*/\1/p' | tail -n 1)
	cms=$(LC_ALL=C awk -v t="${ct:-x}" 'BEGIN { if (t ~ /^[0-9.]+$/) printf "%d", t * 1000; else print -1 }')
	if [ $CRC -eq 0 ]; then
		fail "$name" "connection succeeded"
	elif [ "$cms" -ge 1000 ]; then
		fail "$name" "failed only after $cms ms (curl rc $CRC)"
	elif [ "$(lines "$log")" != "$before" ]; then
		fail "$name" "the listener saw traffic"
	elif [ "$cms" -lt 0 ]; then
		pass "$name"
		echo "  no transfer started, in $CMS ms (rc $CRC): $COUT"
	else
		pass "$name"
		echo "  refused in $cms ms by curl's clock, $CMS ms with start-up (curl rc $CRC)"
	fi
}

udp_send() { # ns dst port: one DNS-shaped datagram; errors ignored
	nsx "$1" "$PY" -c '
import socket, sys
q = bytes.fromhex("123401000001000000000000076578616d706c6503636f6d0000010001")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(q, (sys.argv[1], int(sys.argv[2])))
except OSError as e:
    print("send refused: %s" % e)
' "$2" "$3"
}

icmp_echo() { # ns dst: 0 when an echo reply comes back within 1 s
	if command -v ping >/dev/null 2>&1; then
		nsx "$1" ping -c1 -W1 "$2" >/dev/null 2>&1
		return
	fi
	nsx "$1" "$PY" -c '
import os, socket, struct, sys, time
dst = sys.argv[1]
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff
ident, body = os.getpid() & 0xffff, b"egnft-probe!"
hdr = struct.pack("!BBHHH", 8, 0, 0, ident, 1)
pkt = struct.pack("!BBHHH", 8, 0, csum(hdr + body), ident, 1) + body
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.sendto(pkt, (dst, 0))
    end = time.time() + 1.0
    while time.time() < end:
        s.settimeout(max(0.01, end - time.time()))
        data, addr = s.recvfrom(4096)
        ihl = (data[0] & 0x0f) * 4
        t, _, _, i, _ = struct.unpack("!BBHHH", data[ihl:ihl + 8])
        if addr[0] == dst and t == 0 and i == ident:
            sys.exit(0)
except OSError:
    pass
sys.exit(1)
' "$2"
}

has() { # name haystack needle...: every needle is in haystack
	name=$1 hay=$2
	shift 2
	for n in "$@"; do
		case $hay in
		*"$n"*) ;;
		*) fail "$name" "missing [$n] in: $hay"; return 1 ;;
		esac
	done
	pass "$name"
}

# ---- preconditions ---------------------------------------------------------

if [ "$(id -u)" -ne 0 ]; then
	fail nft_preconditions "needs root"
	exit 1
fi
for tool in nft curl ip ss setpriv "$PY"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		fail nft_preconditions "$tool not installed"
		exit 1
	fi
done
if ! "$BIN" nft --help 2>/dev/null | grep -q 'egress-guard nft apply'; then
	fail nft_command_available "$BIN does not run 'nft' (not built?)"
	exit 1
fi
[ -f "$LISTENER" ] || { fail nft_preconditions "no $LISTENER"; exit 1; }
chmod 755 "$T"

# ---- topology --------------------------------------------------------------

setup() {
	for ns in $WL $GD $IN $SH; do
		ip netns add "$ns" || return 1
		nsx "$ns" ip link set lo up || return 1
	done
	ip -n "$WL" link add wl0 type veth peer name gd0 netns "$GD" &&
	ip -n "$GD" link add gi0 type veth peer name ig0 netns "$IN" &&
	ip -n "$SH" link add sh0 type veth peer name is0 netns "$IN" || return 1

	ip -n "$WL" addr add 10.200.0.2/24 dev wl0 &&
	ip -n "$WL" -6 addr add fd00:200::2/64 dev wl0 nodad &&
	ip -n "$WL" link set wl0 up &&
	ip -n "$WL" route add default via 10.200.0.1 &&
	ip -n "$WL" -6 route add default via fd00:200::1 || return 1

	ip -n "$GD" addr add 10.200.0.1/24 dev gd0 &&
	ip -n "$GD" -6 addr add fd00:200::1/64 dev gd0 nodad &&
	ip -n "$GD" addr add 10.201.0.1/24 dev gi0 &&
	ip -n "$GD" -6 addr add fd00:201::1/64 dev gi0 nodad &&
	ip -n "$GD" link set gd0 up && ip -n "$GD" link set gi0 up &&
	ip -n "$GD" route add default via 10.201.0.2 &&
	ip -n "$GD" -6 route add default via fd00:201::2 || return 1
	# A guard host that forwards: without nftables the workload's packets
	# reach the internet directly, which is what the rules must stop.
	nsx "$GD" sysctl -qw net.ipv4.ip_forward=1 \
	    net.ipv6.conf.all.forwarding=1 || return 1
	# The forged-source control leaves a half-open connection on the
	# guard's IPv6 listener: its SYN-ACK retransmissions (1, 3, 7 s...)
	# would reach the internet's counter during the check after apply.
	nsx "$GD" sysctl -qw net.ipv4.tcp_synack_retries=0 || return 1

	ip -n "$IN" addr add 10.201.0.2/24 dev ig0 &&
	ip -n "$IN" -6 addr add fd00:201::2/64 dev ig0 nodad &&
	ip -n "$IN" addr add 10.202.0.1/24 dev is0 &&
	ip -n "$IN" addr add $PUB4/32 dev lo &&
	ip -n "$IN" -6 addr add $PUB6/128 dev lo &&
	ip -n "$IN" link set ig0 up && ip -n "$IN" link set is0 up &&
	ip -n "$IN" route add 10.200.0.0/24 via 10.201.0.1 &&
	ip -n "$IN" -6 route add fd00:200::/64 via fd00:201::1 || return 1

	ip -n "$SH" addr add 10.202.0.2/24 dev sh0 &&
	ip -n "$SH" -6 addr add fd00:202::2/64 dev sh0 nodad &&
	ip -n "$SH" link set sh0 up &&
	ip -n "$SH" route add default via 10.202.0.1 &&
	ip -n "$SH" -6 route add default via fd00:202::1 &&
	ip -n "$IN" -6 addr add fd00:202::1/64 dev is0 nodad || return 1
	# What reaches the guard host and the internet, counted: packets
	# with a routing header or LSRR, and ND sent off the link.
	printf '%s\n' 'table inet egnft_probe {' ' chain pre {' \
	    '  type filter hook prerouting priority -300; policy accept;' \
	    '  exthdr rt exists counter' '  ip option lsrr exists counter' \
	    ' }' '}' | nsx "$GD" nft -f - || return 1
	printf '%s\n' 'table inet egnft_probe {' ' chain pre {' \
	    '  type filter hook prerouting priority -300; policy accept;' \
	    '  ip6 daddr 2001:2::/32 icmpv6 type 133-137 counter' \
	    "  ip daddr $SPOOF4 tcp sport 3128 counter" \
	    "  ip6 daddr $SPOOF6 tcp sport 3128 counter" \
	    ' }' '}' | nsx "$IN" nft -f - || return 1
}

# probe_count ns N: packets counted by the Nth counter of egnft_probe
probe_count() {
	nsx "$1" nft list table inet egnft_probe 2>/dev/null |
	    sed -n 's/.*counter packets \([0-9]*\) .*/\1/p' | sed -n "${2}p"
}

# counted NAME leaves|stays NS K PROBE V: runs "PROBE $WL V"; the Kth
# counter of NS's egnft_probe must then grow (leaves) or stay (stays).
counted() {
	n=$(probe_count "$3" "$4")
	o=$($5 "$WL" "$6")
	if [ "$2" = leaves ]; then
		wait_count "$3" "$4" "$n"
		if [ "$(probe_count "$3" "$4")" -gt "$n" ]; then pass "$1"
		else fail "$1" "$3 counted none $o"; fi
	else
		sleep 0.3
		if [ "$(probe_count "$3" "$4")" = "$n" ]; then pass "$1"
		else fail "$1" "$3 counted one $o"; fi
	fi
}

# Docker's embedded resolver, stood in for: the nat rules it installs in the
# container's namespace, and a resolver on 127.0.0.11 that logs each query.
docker_dns() { # ns
	nsx "$1" nft -f "$top/tests/integration/docker_dns.nft" || return 1
	start "$1" "$PY" "$PROBE" dns-serve "$T/dns-$1.log" "$T/dns-$1.ready"
}

listen() { # ns addr:port name
	start "$1" "$PY" "$LISTENER" --listen "$2" --log "$T/$3.log" \
	    --ready "$T/$3.ready" --name "$3"
}

cat >"$T/udprecv.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
log = open(sys.argv[3], "a")
open(sys.argv[4], "w").write("ready\n")
for _ in range(1 << 20):
    data, peer = s.recvfrom(65535)
    log.write("dgram %s:%d %d\n" % (peer[0], peer[1], len(data)))
    log.flush()
EOF

PROBE=$top/tests/integration/nftprobe.py

# dns_query ns [prefix...]: "udp answered|refused tcp connected|refused";
# with DNSQ_PORTS="UDP TCP", the resolver's real ports asked directly
dns_query() {
	ns=$1
	shift
	$PRE ip netns exec "$ns" "$@" "$PY" "$PROBE" dns-query ${DNSQ_PORTS:-}
}

# dns_case NAME reached|refused NS [prefix...]: dns_query says so, and the
# resolver logged both queries (reached) or none (refused); log emptied.
dns_case() {
	name=$1 want="udp $2 tcp $2" ns=$3
	shift 3
	[ "$want" = "udp reached tcp reached" ] && want="udp answered tcp connected"
	r=$(dns_query "$ns" "$@")
	n=0
	case $want in *answered*) n=2; [ "$r" = "$want" ] && wait_lines "$T/dns-$ns.log" 2 ;; esac
	if [ "$r" = "$want" ] && [ "$(lines "$T/dns-$ns.log")" = $n ]; then pass "$name"
	else fail "$name" "$r; resolver log: $(cat "$T/dns-$ns.log")"; fi
	: >"$T/dns-$ns.log"
}

if ! setup; then
	fail nft_topology "could not build the namespaces"
	exit 1
fi
listen "$IN" "$PUB4:80" pub4
listen "$IN" "[$PUB6]:80" pub6
listen "$GD" "10.200.0.1:8080" gdother
listen "$GD" "[fd00:200::1]:3128" gd6
start "$IN" "$PY" "$T/udprecv.py" $PUB4 53 "$T/udp.log" "$T/udp.ready"
if ! docker_dns "$WL" || ! docker_dns "$SH"; then
	fail nft_topology "the Docker resolver stand-in"
	exit 1
fi
for f in pub4 pub6 gdother gd6 udp "dns-$WL" "dns-$SH"; do
	if ! wait_file "$T/$f.ready"; then
		fail nft_topology "listener $f did not start"
		cat "$T/background.log"
		exit 1
	fi
done
pass nft_topology

# ---- (a) before apply: every path the rules must close is open -------------

expect_reach control_direct_tcp_before_apply "$T/pub4.log" "$WL" http://$PUB4/
expect_reach control_direct_ipv6_before_apply "$T/pub6.log" "$WL" -g "http://[$PUB6]/"
expect_reach control_guard_other_port_before_apply "$T/gdother.log" "$WL" \
    http://10.200.0.1:8080/
n=$(lines "$T/udp.log")
udp_send "$WL" $PUB4 53
wait_lines "$T/udp.log" $((n + 1))	# the receiver logs asynchronously
if [ "$(lines "$T/udp.log")" != "$n" ]; then
	pass control_udp_dns_before_apply
else
	fail control_udp_dns_before_apply "the receiver logged nothing"
fi
# Up to three echoes of 1 s each: a loaded machine may answer the first
# late; a closed path answers none.
if icmp_echo "$WL" $PUB4 || icmp_echo "$WL" $PUB4 || icmp_echo "$WL" $PUB4; then
	pass control_icmp_before_apply
else
	fail control_icmp_before_apply "no echo reply"
fi

# Docker's resolver answers the workload through the DNAT (and would
# forward the query out).
# (The resolver logs the TCP connection after its accept(), which may come
# after the client has connected and exited: dns_case waits for it.)
dns_case control_docker_dns_reached_before_apply reached "$WL"
# The resolver's real ports, asked directly: no DNAT, not port 53. Any uid
# reads them in /proc/net/udp and /proc/net/tcp.
DNSQ_PORTS="40054 40053" dns_case control_docker_dns_real_port_reached_before_apply \
    reached "$WL" setpriv --reuid=12345 --regid=12345 --clear-groups

# A forged source: the guard host answers it over its own way out (a
# SYN-ACK or a reset to an address the workload chose, port and timing
# too). IPv6 by an unprivileged user (IPV6_FREEBIND), IPv4 by a raw socket.
spoof() { # ns 6|4
	if [ "$2" = 6 ]; then
		nsx "$1" setpriv --reuid=12345 --regid=12345 --clear-groups \
		    "$PY" "$PROBE" spoof6 $SPOOF6 fd00:200::1 3128 2>&1
	else
		nsx "$1" "$PY" "$PROBE" spoof4 $SPOOF4 10.200.0.1 3128 2>&1
	fi
}
counted control_forged_source_ipv6_answered_outside_before_apply leaves "$IN" 3 spoof 6
counted control_forged_source_ipv4_answered_outside_before_apply leaves "$IN" 2 spoof 4

# A root workload's raw socket sends a neighbour solicitation carrying
# data to a public address (hop limit 255): the internet sees it.
nd_offlink() { nsx "$1" "$PY" "$PROBE" nd "$2"; }	# ns dst
n=$(probe_count "$IN" 1)
nd_offlink "$WL" $PUB6
wait_count "$IN" 1 "$n"
if [ "$(probe_count "$IN" 1)" -gt "$n" ]; then pass control_nd_to_public_address_leaves_before_apply
else fail control_nd_to_public_address_leaves_before_apply "the internet counted none"; fi

# TCP to the guard's port carrying an IPv6 routing header (a segment
# routing header naming the guard) or an IPv4 LSRR option: the rule for the
# guard's address would accept it, and a host with seg6_enabled or
# accept_source_route forwards it on. IPv6: sent by an unprivileged user;
# IPv4 source routes need CAP_NET_RAW, which Docker grants by default.
srcroute() { # ns 6|4: to the pretend internet's port 3128, next hop the guard
	if [ "$2" = 6 ]; then
		nsx "$1" setpriv --reuid=12345 --regid=12345 --clear-groups \
		    "$PY" "$PROBE" rthdr $PUB6 3128 fd00:200::1 2>&1
	else
		nsx "$1" "$PY" "$PROBE" lsrr $PUB4 3128 10.200.0.1 2>&1
	fi
}
counted control_source_routed_ipv6_leaves_before_apply leaves "$GD" 1 srcroute 6
counted control_source_routed_ipv4_leaves_before_apply leaves "$GD" 2 srcroute 4

# ---- bad input: exit 2, a clear message, no table --------------------------

eg apply --netns egnft-nosuch-$$ --guard 10.200.0.1:3128
expect_refused bad_unknown_namespace "no network namespace"
for g in 10.200.0.999:3128 010.200.0.1:3128 10.200.0.1:0 10.200.0.1:65536 \
    guard.example:3128 fd00:200::1:3128; do
	eg apply --netns "$WL" --guard "$g"
	expect_refused "bad_guard_address_refused $g" "bad guard address"
done
eg apply --netns "$WL" --guard 10.200.0.1:3128 --exempt-uid 0
expect_refused bad_exempt_uid_zero_refused "exempt uid 0 refused"

# An unprivileged user cannot even enter the namespace.
AS="setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups --inh-caps=-all --bounding-set=-all"
eg apply --netns "$WL" --guard 10.200.0.1:3128
expect_refused no_privilege_refused "not permitted"
# Root without CAP_NET_ADMIN enters the namespace; the kernel refuses the
# whole batch, so nothing is half-applied.
AS="setpriv --bounding-set=-net_admin --inh-caps=-net_admin"
eg apply --netns "$WL" --guard 10.200.0.1:3128
expect_refused no_cap_net_admin_refused "CAP_NET_ADMIN" "nothing changed"
AS=""

# ---- (a) apply ---------------------------------------------------------------

APPLY="--netns $WL --guard 10.200.0.1:3128 --guard [fd00:200::1]:3128"
eg apply $APPLY
if [ $RC -eq 0 ]; then pass apply_separate_namespaces
else fail apply_separate_namespaces "exit $RC: $ERR"; fi

listing=$(nsx "$WL" nft list table inet egress_guard 2>&1)
has nft_cli_lists_table "$listing" "table inet egress_guard" \
    "hook output priority filter; policy drop;" \
    "hook input priority filter; policy drop;" \
    "hook forward priority filter; policy drop;" 'oif "lo" accept' \
    "ip daddr 10.200.0.1 tcp dport 3128" "ip6 daddr fd00:200::1 tcp dport 3128" \
    "reject with tcp reset" "reject with icmpx admin-prohibited" \
    "ct state established,related accept" "exthdr rt exists" \
    "ip option lsrr exists" "ip option ssrr exists" \
    'oif "lo" ct direction original meta l4proto udp ct original proto-dst 53' \
    'oif "lo" ct direction original meta l4proto tcp ct original proto-dst 53' \
    'oif "lo" ct direction original ct status dnat' \
    'oif "lo" ct direction original ip daddr 127.0.0.11' \
    "ip6 saddr != :: ct state != related fib saddr type != local counter" \
    "meta nfproto ipv4 ct state != related fib saddr type != local counter" \
    "ip6 daddr fe80::/10 ip6 hoplimit 255 icmpv6 type 135-136 accept" \
    "ip6 daddr ff02::/16 ip6 hoplimit 255 icmpv6 type 135-136 accept" \
    "ip6 daddr fd00:200::1 ip6 hoplimit 255 icmpv6 type 135-136 accept"

eg verify $APPLY
if [ $RC -eq 0 ]; then pass verify_after_apply
else fail verify_after_apply "exit $RC: $ERR"; fi

expect_blocked direct_tcp_blocked_fast "$T/pub4.log" "$WL" http://$PUB4/
expect_blocked direct_ipv6_blocked_fast "$T/pub6.log" "$WL" -g "http://[$PUB6]/"
expect_blocked guard_other_port_blocked_fast "$T/gdother.log" "$WL" \
    http://10.200.0.1:8080/
n=$(lines "$T/udp.log")
udp_send "$WL" $PUB4 53 >/dev/null
sleep 0.3
if [ "$(lines "$T/udp.log")" = "$n" ]; then pass udp_dns_blocked
else fail udp_dns_blocked "the receiver got a datagram"; fi
if icmp_echo "$WL" $PUB4; then fail icmp_blocked "echo reply came back"
else pass icmp_blocked; fi

# 14.5: no DNS query reaches Docker's resolver, DNAT or not.
dns_case docker_dns_dnat_refused_listener_sees_nothing refused "$WL"
DNSQ_PORTS="40054 40053" dns_case hostile_docker_dns_real_port_refused_listener_sees_nothing \
    refused "$WL" setpriv --reuid=12345 --regid=12345 --clear-groups

counted hostile_forged_source_ipv6_to_guard_port_dropped stays "$IN" 3 spoof 6
counted hostile_forged_source_ipv4_to_guard_port_dropped stays "$IN" 2 spoof 4

# 19.11: ND leaves only on the link.
n=$(probe_count "$IN" 1)
nd_offlink "$WL" $PUB6
sleep 0.2
if [ "$(probe_count "$IN" 1)" = "$n" ]; then pass nd_to_public_address_dropped
else fail nd_to_public_address_dropped "the internet counted an ND packet"; fi

# 19.12: source-routed packets to the guard's own port are dropped.
counted source_routed_ipv6_to_guard_port_dropped stays "$GD" 1 srcroute 6
counted source_routed_ipv4_to_guard_port_dropped stays "$GD" 2 srcroute 4

# 19.13: ICMPv6 echo is refused at once (admin-prohibited), not dropped.
t0=$(now_ms)
r=$(nsx "$WL" ping -6 -c1 -W3 $PUB6 2>&1)
ms=$(( $(now_ms) - t0 ))
case $r in
*"Administratively prohibited"*) pass icmpv6_echo_refused_at_once; echo "  refused in $ms ms" ;;
*) fail icmpv6_echo_refused_at_once "no admin-prohibited error ($ms ms): $r" ;;
esac

# The IPv6 guard address is reachable on its port: the ip6 rule and the
# neighbour discovery it needs both work.
expect_reach ipv6_guard_port_reachable "$T/gd6.log" "$WL" -g \
    "http://[fd00:200::1]:3128/"

# The proxy path: the guard daemon on 10.200.0.1:3128 in its namespace.
"$BIN" run --help >"$T/runhelp" 2>&1
rc=$?
GUARD_BUILT=1
if [ $rc -eq 2 ] && ! grep -qi usage "$T/runhelp"; then
	GUARD_BUILT=0
fi
if [ $GUARD_BUILT = 0 ]; then
	skip proxy_path "guard not built yet"
else
	printf '%s\n' '{"allow":[{"host":"198.18.1.10","port":80}],"epoch":1,"mode":"allowlist","schema":"egress-guard.policy.v1"}' >"$T/policy.json"
	chmod 644 "$T/policy.json"
	start "$GD" "$BIN" run --listen 10.200.0.1:3128 --policy "$T/policy.json" \
	    --allow-range 198.18.0.0/15 --dns 10.201.0.2 \
	    --control "$T/gd-control.sock" --no-state
	if ! wait_listen "$GD" 3128; then
		fail proxy_path "the guard did not start listening"
		tail -n 5 "$T/background.log"
	else
		before=$(grep -c 'conn 10.201.0.1:' "$T/pub4.log")
		try_curl "$WL" -p -x http://10.200.0.1:3128 http://$PUB4/
		if [ $CRC -ne 0 ]; then
			fail proxy_path "curl rc $CRC: $COUT"
		elif [ "$(grep -c 'conn 10.201.0.1:' "$T/pub4.log")" = "$before" ]; then
			fail proxy_path "the listener saw no connection from the guard"
		else
			has proxy_path "$COUT" "hello from pub4"
		fi
	fi
fi

eg show --netns "$WL"
resets=$(printf '%s\n' "$OUT" | sed -n 's/.*meta l4proto tcp counter packets \([0-9]*\) bytes [0-9]* reject with tcp reset.*/\1/p')
if [ $RC -eq 0 ] && [ "${resets:-0}" -gt 0 ]; then
	pass show_prints_rules_and_counters
else
	fail show_prints_rules_and_counters "exit $RC, reset counter [${resets:-}]: $OUT"
fi

# Re-applying replaces the table in one transaction: a workload hammering
# the direct route meanwhile never gets a connection through.
cat >"$T/hammer.py" <<'EOF'
import os, socket, sys, time
host, port, stop, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ready = sys.argv[5]
n = ok = 0
end = time.time() + 30
while time.time() < end and not os.path.exists(stop):
    s = socket.socket()
    s.settimeout(0.5)
    try:
        s.connect((host, port))
        ok += 1
    except OSError:
        pass
    finally:
        s.close()
    n += 1
    if n == 1:
        open(ready, "w").write("hammering\n")
open(out, "w").write("%d %d\n" % (n, ok))
EOF
before=$(lines "$T/pub4.log")
start "$WL" "$PY" "$T/hammer.py" $PUB4 80 "$T/hammer.stop" "$T/hammer.out" \
    "$T/hammer.ready"
# The re-applies start once the probe has made its first attempt (a
# loaded machine can take seconds to start Python; stopping it before
# then left it no attempts to make).
wait_file "$T/hammer.ready" 150	# 15 s; if not, "too few attempts" says so
bad=0
i=0
while [ $i -lt 10 ]; do
	"$BIN" nft apply $APPLY >/dev/null 2>>"$T/reapply.err" || bad=$((bad + 1))
	i=$((i + 1))
done
touch "$T/hammer.stop"
wait_file "$T/hammer.out"
set -- $(cat "$T/hammer.out" 2>/dev/null) x x
if [ $bad -ne 0 ]; then
	fail reapply_is_atomic "$bad of 10 re-applies failed: $(cat "$T/reapply.err")"
elif [ "$1" = x ] || [ "$1" -lt 10 ]; then
	fail reapply_is_atomic "the probe made too few attempts ($1)"
elif [ "$2" != 0 ] || [ "$(lines "$T/pub4.log")" != "$before" ]; then
	fail reapply_is_atomic "$2 of $1 direct connections got through"
else
	pass reapply_is_atomic
	echo "  10 re-applies, $1 direct connection attempts, none through"
fi

# ---- verify notices tampering; re-apply repairs it ---------------------------

nsx "$WL" nft add rule inet egress_guard output tcp dport 80 accept
eg verify $APPLY
if [ $RC -eq 1 ]; then
	has verify_detects_added_rule "$ERR" "output: unexpected rule #" \
	    "(tcp dport 80 accept)"
else
	fail verify_detects_added_rule "exit $RC: $ERR"
fi
eg apply $APPLY
rc=$RC
eg verify $APPLY
if [ $rc -eq 0 ] && [ $RC -eq 0 ]; then pass reapply_repairs_added_rule
else fail reapply_repairs_added_rule "apply $rc, verify $RC: $ERR"; fi

nsx "$WL" nft chain inet egress_guard input '{ policy accept; }'
eg verify $APPLY
if [ $RC -eq 1 ]; then
	has verify_detects_policy_change "$ERR" "input: policy accept, expected drop"
else
	fail verify_detects_policy_change "exit $RC: $ERR"
fi
eg apply $APPLY
rc=$RC
eg verify $APPLY
if [ $rc -eq 0 ] && [ $RC -eq 0 ]; then pass reapply_repairs_policy
else fail reapply_repairs_policy "apply $rc, verify $RC: $ERR"; fi

nsx "$WL" nft delete chain inet egress_guard forward
eg verify $APPLY
if [ $RC -eq 1 ]; then has verify_detects_missing_chain "$ERR" "forward: chain missing"
else fail verify_detects_missing_chain "exit $RC: $ERR"; fi
eg apply $APPLY

# A set and a named counter added inside the table: no rule refers to
# them yet, but a later rule could (a set of addresses to accept); apply
# makes chains only.
nsx "$WL" nft add set inet egress_guard hostile_set '{ type ipv4_addr; }'
nsx "$WL" nft add element inet egress_guard hostile_set '{ 198.18.9.9 }'
nsx "$WL" nft add counter inet egress_guard hostile_counter
eg verify $APPLY
if [ $RC -eq 1 ]; then
	has hostile_verify_detects_set_and_object_added_in_table "$ERR" \
	    "table inet egress_guard: 2 objects beside its 3 chains"
else
	fail hostile_verify_detects_set_and_object_added_in_table "exit $RC: $ERR"
fi
eg apply $APPLY
rc=$RC
eg verify $APPLY
if [ $rc -eq 0 ] && [ $RC -eq 0 ] && ! nsx "$WL" nft list sets 2>/dev/null | grep -q hostile_set
then pass reapply_removes_added_set_and_object
else fail reapply_removes_added_set_and_object "apply $rc, verify $RC: $ERR"; fi

eg verify --netns "$WL" --guard 10.200.0.9:3128 --guard "[fd00:200::1]:3128"
if [ $RC -eq 1 ]; then
	has verify_detects_changed_guard_address "$ERR" \
	    "expected (ip daddr 10.200.0.9 tcp dport 3128"
else
	fail verify_detects_changed_guard_address "exit $RC: $ERR"
fi
eg verify $APPLY
if [ $RC -eq 0 ]; then pass verify_after_repairs
else fail verify_after_repairs "exit $RC: $ERR"; fi

# ---- a workload's router advertisement never reaches the guard host.
# A root workload's raw ICMPv6 socket (CAP_NET_RAW is in Docker's default
# set) sends an RA with a prefix of its choosing; the guard host's kernel
# takes it (accept_ra 2 here, so forwarding does not decide) and would
# route that prefix over the workload's link. With the table: refused,
# no route. The control: the table deleted, the same RA adds the route.
nsx "$GD" sysctl -qw net.ipv6.conf.gd0.accept_ra=2
ra() {	# ra N: three RAs on wl0 for 2001:db8:77:N::/64 (on-link)
	nsx "$WL" python3 - "$1" <<'PY'
import socket, struct, sys, time
n = int(sys.argv[1])
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"wl0")
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
pfx = bytes([0x20, 0x01, 0x0d, 0xb8, 0, 0x77, 0, n]) + bytes(8)
ra = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 0, 0, 0) + \
    struct.pack("!BBBBIII", 3, 4, 64, 0x80, 600, 600, 0) + pfx
for _ in range(3):
    try:
        s.sendto(ra, ("ff02::1", 0, 0, socket.if_nametoindex("wl0")))
    except OSError:
        pass
    time.sleep(0.1)
PY
}
ra_route() { nsx "$GD" ip -6 route show "2001:db8:77:$1::/64"; }
ra 1
sleep 0.5
r=$(ra_route 1)
if [ -z "$r" ]; then pass hostile_workload_router_advertisement_refused
else fail hostile_workload_router_advertisement_refused "guard host took: $r"; fi
nsx "$WL" nft delete table inet egress_guard
ra 2
r=""
for _ in $(seq 20); do r=$(ra_route 2); [ -n "$r" ] && break; sleep 0.1; done
if [ -n "$r" ]; then pass control_router_advertisement_without_table_reaches_guard_host
else fail control_router_advertisement_without_table_reaches_guard_host "no route for the RA's prefix"; fi
eg apply $APPLY
nsx "$GD" ip -6 route flush 2001:db8:77::/48 2>/dev/null
nsx "$GD" sysctl -qw net.ipv6.conf.gd0.accept_ra=0

# 19.14: verify names every other base chain on our hooks (here Docker's
# nat OUTPUT and a filter chain someone added, which could as well hold a
# queue rule whose userspace answers NF_STOP), and says so when none is.
printf '%s\n' 'table inet egnft_other {' ' chain out {' \
    '  type filter hook output priority -10; policy accept;' \
    '  meta l4proto udp accept' ' }' '}' | nsx "$WL" nft -f -
# Hostile: a netdev chain on the workload's link rewrites what leaves after
# every inet hook (egress), or what arrives before them (ingress), and a nat
# postrouting chain rewrites after the filter: none is on our hooks.
printf '%s\n' 'table netdev egnft_dev {' ' chain in {' \
    '  type filter hook ingress device "wl0" priority 0; policy accept;' \
    ' }' '}' 'table ip egnft_post {' ' chain post {' \
    '  type nat hook postrouting priority 100; policy accept;' ' }' '}' |
    nsx "$WL" nft -f -
eg verify $APPLY
if [ $RC -eq 0 ]; then
	has verify_reports_other_base_chains "$ERR" \
	    "warning: another base chain on the output hook: table inet egnft_other chain out { type filter hook output priority -10;" \
	    "table ip nat chain OUTPUT { type nat hook output priority -100;" \
	    "warning: another base chain on the ingress hook: table netdev egnft_dev chain in { type filter hook ingress priority 0;" \
	    "warning: another base chain on the postrouting hook: table ip egnft_post chain post { type nat hook postrouting priority 100;"
else
	fail verify_reports_other_base_chains "exit $RC: $ERR"
fi
nsx "$WL" nft delete table inet egnft_other
nsx "$WL" nft delete table netdev egnft_dev
nsx "$WL" nft delete table ip egnft_post
nsx "$WL" nft delete table ip nat
eg verify $APPLY
case $ERR in
*"another base chain"*) fail verify_quiet_without_other_chains "$ERR" ;;
*) has verify_quiet_without_other_chains "$OUT" "no other base chain" ;;
esac

# ---- remove --------------------------------------------------------------------

eg remove --netns "$WL"
if [ $RC -eq 0 ] && no_table "$WL"; then pass remove_deletes_table
else fail remove_deletes_table "exit $RC: $ERR"; fi
expect_reach remove_restores_direct_route "$T/pub4.log" "$WL" http://$PUB4/
eg remove --netns "$WL"
if [ $RC -eq 0 ]; then has remove_absent_table_ok "$OUT" "not present"
else fail remove_absent_table_ok "exit $RC: $ERR"; fi
eg verify $APPLY
if [ $RC -eq 1 ]; then has verify_detects_missing_table "$ERR" "missing"
else fail verify_detects_missing_table "exit $RC: $ERR"; fi

# ---- (b) shared namespace: the guard is exempt by uid ------------------------

expect_reach control_shared_root_before_apply "$T/pub4.log" "$SH" http://$PUB4/
SHARED="--netns $SH --guard 127.0.0.1:3128 --exempt-uid $NOBODY"
eg apply $SHARED
if [ $RC -eq 0 ]; then has apply_shared_namespace_states_uid_precondition "$OUT" \
    "exempt: uid 65534, which holds only while the workload has no CAP_SETUID/CAP_SETGID and runs with no_new_privs"
else fail apply_shared_namespace_states_uid_precondition "exit $RC: $ERR"; fi
eg verify $SHARED
if [ $RC -eq 0 ]; then has verify_shared_namespace_states_uid_precondition "$OUT" \
    "CAP_SETUID/CAP_SETGID" "no_new_privs"
else fail verify_shared_namespace_states_uid_precondition "exit $RC: $ERR"; fi
# The same namespace named by a process in it and by its file's path.
start "$SH" sleep 60
sleeper=${PIDS##* }
want=$(stat -L -c %i "/run/netns/$SH")
i=0	# until `ip netns exec` has moved it (it execs sleep after setns)
while [ "$(stat -L -c %i "/proc/$sleeper/ns/net" 2>/dev/null)" != "$want" ] &&
    [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
eg verify --netns "$sleeper" --guard 127.0.0.1:3128 --exempt-uid $NOBODY
rc=$RC
eg show --netns "/run/netns/$SH"
if [ $rc -eq 0 ] && [ $RC -eq 0 ]; then
	has netns_by_pid_and_path "$OUT" "meta skuid 65534 counter packets" \
	    "# uid exemption: holds only while the workload has no CAP_SETUID/CAP_SETGID"
else
	fail netns_by_pid_and_path "verify by pid $rc, show by path $RC: $ERR"
fi

AS="setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups"
expect_reach exempt_uid_reaches_outside "$T/pub4.log" "$SH" http://$PUB4/
# 19.13: the exempt guard's IPv6 works (the kernel's own neighbour
# solicitations carry no uid); negative control: without the ND rules it
# times out.
expect_reach exempt_uid_reaches_outside_over_ipv6 "$T/pub6.log" "$SH" -g "http://[$PUB6]/"
r=$(nsx "$SH" $AS ping -6 -c1 -W3 $PUB6 2>&1)
case $r in
*"bytes from"*) pass exempt_uid_icmpv6_echo_answered ;;
*) fail exempt_uid_icmpv6_echo_answered "$r" ;;
esac
t0=$(now_ms)
r=$(nsx "$SH" ping -6 -c1 -W3 $PUB6 2>&1)
ms=$(( $(now_ms) - t0 ))
case $r in
*"Administratively prohibited"*) pass shared_workload_icmpv6_echo_refused_at_once; echo "  refused in $ms ms" ;;
*) fail shared_workload_icmpv6_echo_refused_at_once "($ms ms) $r" ;;
esac
for h in $(nsx "$SH" nft -a list chain inet egress_guard output |
    sed -n 's/.*icmpv6 type 135-136 accept # handle \([0-9]*\)/\1/p'); do
	nsx "$SH" nft delete rule inet egress_guard output handle "$h"
done
nsx "$SH" ip neigh flush all
before=$(lines "$T/pub6.log")
try_curl "$SH" --max-time 2 -g "http://[$PUB6]/"
if [ $CRC -ne 0 ] && [ "$(lines "$T/pub6.log")" = "$before" ]; then
	pass control_exempt_ipv6_fails_without_nd_rules
else
	fail control_exempt_ipv6_fails_without_nd_rules "curl rc $CRC"
fi
AS=""
eg apply $SHARED >/dev/null
expect_blocked root_blocked_in_shared_namespace "$T/pub4.log" "$SH" http://$PUB4/
AS="setpriv --reuid=12345 --regid=12345 --clear-groups"
expect_blocked other_uid_blocked_in_shared_namespace "$T/pub4.log" "$SH" \
    http://$PUB4/
# 19.10: the uid exemption's precondition. Kept (no CAP_SETUID, no_new_privs):
# becoming the exempt uid fails. Broken (root, Docker's default caps): it
# walks through, which is why the cgroup exemption is preferred.
AS="setpriv --reuid=12345 --regid=12345 --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all setpriv --reuid=$NOBODY"
expect_blocked uid_exemption_precondition_kept_setuid_refused "$T/pub4.log" "$SH" http://$PUB4/
AS="setpriv --reuid=$NOBODY"
expect_reach uid_exemption_precondition_broken_root_setuid_walks_through \
    "$T/pub4.log" "$SH" http://$PUB4/
AS=""
r=$(nsx "$SH" "$PY" "$PROBE" fsuid $NOBODY $PUB4 80)
if [ "$r" = reached ]; then pass uid_exemption_precondition_broken_root_setfsuid_walks_through
else fail uid_exemption_precondition_broken_root_setfsuid_walks_through "$r"; fi

# 14.5 in the shared layout: the exempt guard may resolve through Docker's
# resolver (its answers come back); the workload's queries never arrive.
: >"$T/dns-$SH.log"
r=$(dns_query "$SH" setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)
if [ "$r" = "udp answered tcp connected" ]; then pass exempt_uid_resolves_through_docker_dns
else fail exempt_uid_resolves_through_docker_dns "$r"; fi
: >"$T/dns-$SH.log"
dns_case shared_workload_docker_dns_refused_listener_sees_nothing refused "$SH"
DNSQ_PORTS="40054 40053" dns_case hostile_shared_workload_docker_dns_real_port_refused \
    refused "$SH"

# ---- (b) shared namespace: the guard is exempt by cgroup v2 -----------------

# Without cgroup v2 for it, the cgroup option falls back to the uid and
# says so; without a uid to fall back to, it refuses.
eg apply --netns "$SH" --guard 127.0.0.1:3128 --exempt-cgroup "$T" --exempt-uid $NOBODY
if [ $RC -eq 0 ]; then has cgroup_unavailable_falls_back_to_uid_and_says_so "$ERR" \
    "warning: cgroup exemption unavailable" "not on a cgroup2 file system" \
    "falling back to uid 65534, which holds only while the workload has no CAP_SETUID/CAP_SETGID"
else fail cgroup_unavailable_falls_back_to_uid_and_says_so "exit $RC: $ERR"; fi
eg apply --netns "$WL" --guard 127.0.0.1:3128 --exempt-cgroup "$T"
expect_refused cgroup_unavailable_without_uid_refused "cgroup exemption" "unavailable"

if [ -n "$CG2" ] && mkdir "$CG2/egnft-$$" 2>/dev/null; then
	CG=$CG2/egnft-$$
	# cmd...: runs cmd in the exempt cgroup, under this very PID
	printf '#!/bin/sh\necho $$ >"%s/cgroup.procs" && exec "$@"\n' "$CG" >"$T/in_cg"
	chmod 755 "$T/in_cg"
fi
if [ -z "$CG" ]; then
	skip cgroup_exemption "no writable cgroup2 mount on this machine (cgroup v1 only?)"
else
	start "$SH" sleep 120
	cgpid=${PIDS##* }
	echo "$cgpid" >"$CG/cgroup.procs"
	eg apply $SHARED --exempt-cgroup-of "$cgpid"
	if [ $RC -eq 0 ]; then has apply_exempts_by_cgroup_of_pid "$OUT" "exempt: cgroup $CG (level"
	else fail apply_exempts_by_cgroup_of_pid "exit $RC: $ERR"; fi
	listing=$(nsenter --net="/run/netns/$SH" nft list chain inet egress_guard output 2>&1)
	case $listing in
	*"meta skuid"*) fail nft_cli_lists_cgroup_rule "a uid rule is left: $listing" ;;
	*) has nft_cli_lists_cgroup_rule "$listing" "socket cgroupv2 level" ;;
	esac
	eg verify --netns "$SH" --guard 127.0.0.1:3128 --exempt-cgroup "$CG"
	if [ $RC -eq 0 ]; then pass verify_cgroup_exemption
	else fail verify_cgroup_exemption "exit $RC: $ERR"; fi
	eg verify --netns "$SH" --guard 127.0.0.1:3128 --exempt-uid $NOBODY
	if [ $RC -eq 1 ]; then pass verify_notices_uid_in_place_of_cgroup
	else fail verify_notices_uid_in_place_of_cgroup "exit $RC: $ERR"; fi

	PRE=$T/in_cg
	expect_reach cgroup_exempt_guard_reaches_outside "$T/pub4.log" "$SH" http://$PUB4/
	expect_reach cgroup_exempt_guard_reaches_outside_over_ipv6 "$T/pub6.log" "$SH" -g "http://[$PUB6]/"
	r=$(dns_query "$SH")
	if [ "$r" = "udp answered tcp connected" ]; then pass cgroup_exempt_guard_resolves_through_docker_dns
	else fail cgroup_exempt_guard_resolves_through_docker_dns "$r"; fi
	PRE=""
	# No uid change leaves the cgroup: root becoming the guard's uid (the
	# escape above) is refused now, over TCP and UDP.
	AS="setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups"
	expect_blocked cgroup_exemption_holds_against_setuid_to_guard_uid "$T/pub4.log" "$SH" http://$PUB4/
	AS=""
	before=$(lines "$T/pub4.log")
	r=$(nsx "$SH" "$PY" "$PROBE" fsuid $NOBODY $PUB4 80)
	sleep 0.2
	if [ "$r" = blocked ] && [ "$(lines "$T/pub4.log")" = "$before" ]; then
		pass cgroup_exemption_holds_against_setfsuid_around_socket
	else
		fail cgroup_exemption_holds_against_setfsuid_around_socket "$r"
	fi
	: >"$T/dns-$SH.log"
	r=$(dns_query "$SH" setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)
	if [ "$r" = "udp refused tcp refused" ] && [ "$(lines "$T/dns-$SH.log")" = 0 ]; then
		pass cgroup_exemption_holds_dns_for_guard_uid_outside_cgroup
	else
		fail cgroup_exemption_holds_dns_for_guard_uid_outside_cgroup "$r"
	fi
fi

if [ $GUARD_BUILT = 0 ]; then
	skip shared_proxy_path "guard not built yet"
else
	mkdir -p "$T/sh"
	chown $NOBODY:$NOBODY "$T/sh"
	# In the exempt cgroup when there is one (the table says so), else by
	# uid.
	[ -n "$CG" ] && PRE=$T/in_cg
	$PRE ip netns exec "$SH" setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
	    "$BIN" run --listen 127.0.0.1:3128 --policy "$T/policy.json" \
	    --allow-range 198.18.0.0/15 --dns 10.202.0.1 \
	    --control "$T/sh/control.sock" --no-state >>"$T/background.log" 2>&1 &
	PIDS="$PIDS $!"
	PRE=""
	if ! wait_listen "$SH" 3128; then
		fail shared_proxy_path "the guard did not start listening"
		tail -n 5 "$T/background.log"
	else
		try_curl "$SH" -p -x http://127.0.0.1:3128 http://$PUB4/
		if [ $CRC -ne 0 ]; then fail shared_proxy_path "curl rc $CRC: $COUT"
		else has shared_proxy_path "$COUT" "hello from pub4"; fi
	fi
fi

eg remove --netns "$SH"
if [ $RC -eq 0 ] && no_table "$SH"; then pass remove_shared_namespace
else fail remove_shared_namespace "exit $RC: $ERR"; fi

echo "nft_test: $fails failed"
[ $fails -eq 0 ]
