#!/usr/bin/env bash
# Transparent mode's nftables rules (docs/nft.md "Transparent mode")
# against the real kernel and the real `nft` CLI, in both layouts, IPv4 and
# IPv6, with stand-in listeners that log the original destination the
# kernel reports (SO_ORIGINAL_DST). Needs root. One PASS/FAIL line per
# check. About 30 s.
#
# Separate namespaces (lib.sh's topology, the workload's default route set
# to the guard, as the docs say to):
#   WL 10.77.0.2 fd77::2 ── GD 10.77.0.1 fd77::1 (forwarding ON: the worst
#   case; the table must forward nothing) ── IN 198.18.1.10 2001:2:0:1::10
#   GD: transparent listener 10.77.0.1:3129 [fd77::1]:3129, DNS 10.77.0.1:5353
# Shared namespace:
#   SH 10.78.0.2 fd78::2 ── IN; transparent listener 127.0.0.1:3129 [::1]:3129,
#   DNS 127.0.0.1:5353; the guard's uid 65534 is exempt.
# IN: far listeners 198.18.1.10:80, [2001:2:0:1::10]:80, UDP 198.18.1.10:53
# and :5000. Every "goes nowhere" check reads the far side's log, and has a
# control showing the same packet arriving without the rules.
#
# EGNFT_BIN runs another build (the nft_forward mutant must turn
# guard_side_* red).
. "$(dirname "$0")/lib.sh"

BIN=${EGNFT_BIN:-$BIN}
case $BIN in /*) ;; *) BIN=$TOP/$BIN ;; esac
PROBE=$TI/nftprobe.py
SH=egs-$$
WLIF=wl0-$$
GDIF=gw0-$$
PUB4=198.18.1.10
PUB6=2001:2:0:1::10
trap 'cleanup; ip netns del "$SH" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

probe() { ns=$1; shift; ip netns exec "$ns" python3 "$PROBE" "$@"; }
serve() { # ns kind addr port name
	start_bg "$1" "$T/$5.out" python3 "$PROBE" "$2" "$3" "$4" "$T/$5.log" \
	    "$T/$5.ready"
}
has() { # name haystack needle...
	local name=$1 hay=$2 n
	shift 2
	for n in "$@"; do
		case $hay in *"$n"*) ;; *) fail "$name" "missing [$n] in: $hay"; return ;; esac
	done
	pass "$name"
}
egnft() { # egress-guard nft ...: RC, OUT, ERR
	"$BIN" nft "$@" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}
# grows NAME LOG BEFORE NEEDLE: the log gained a line with NEEDLE.
grew() { tail -n +"$(($3 + 1))" "$2" 2>/dev/null | grep -qF -- "$4"; }

# reach NAME NS URL LOG NEEDLE: curl succeeds and LOG gains NEEDLE.
reach() {
	local name=$1 ns=$2 url=$3 log=$4 needle=$5 n out rc
	n=$(lines "$log")
	out=$(ip netns exec "$ns" $AS curl -sS -g --max-time 5 "$url" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then fail "$name" "curl rc $rc: $out"
	elif ! grew "$name" "$log" "$n" "$needle"; then
		fail "$name" "[$needle] not logged; got: $(tail -n +$((n + 1)) "$log" 2>/dev/null) / $out"
	else pass "$name"; fi
}
# nowhere NAME NS URL LOG...: curl fails and no LOG gains a line.
nowhere() {
	local name=$1 ns=$2 url=$3 before after out rc l
	shift 3
	before=""
	for l in "$@"; do before="$before $(lines "$l")"; done
	out=$(ip netns exec "$ns" curl -sS -g --max-time 2 "$url" 2>&1)
	rc=$?
	sleep 0.2
	after=""
	for l in "$@"; do after="$after $(lines "$l")"; done
	if [ $rc -eq 0 ]; then fail "$name" "connection succeeded: $out"
	elif [ "$before" != "$after" ]; then fail "$name" "a far listener saw it"
	else pass "$name"; fi
}
# udp NAME NS DST PORT LOG EXPECT: EXPECT "arrives" or "nowhere" at LOG.
# "arrives" waits (bounded, 3 s) for the line; "nowhere" gives the datagram
# 0.2 s to show up, as long as an arriving one takes on an idle machine.
udp() {
	local name=$1 ns=$2 dst=$3 port=$4 log=$5 want=$6 n r
	n=$(lines "$log")
	r=$(probe "$ns" udp "$dst" "$port")
	if [ "$want" = arrives ]; then wait_lines "$log" $((n + 1)); else sleep 0.2; fi
	if [ "$want" = arrives ] && [ "$(lines "$log")" != "$n" ]; then pass "$name"
	elif [ "$want" = nowhere ] && [ "$(lines "$log")" = "$n" ]; then pass "$name"
	else fail "$name" "$r; log $n -> $(lines "$log"), wanted $want"; fi
}

[ "$(id -u)" = 0 ] || { echo "FAIL nft_transparent_preconditions: needs root"; exit 1; }
"$BIN" nft --help 2>/dev/null | grep -q -- --transparent-in ||
    { echo "FAIL nft_transparent_preconditions: $BIN has no transparent mode"; exit 1; }

# ---- topology ----------------------------------------------------------------
setup() {
	topo_up || return 1
	ip -n "$WL" -6 addr add fd77::2/64 dev "$WLIF" nodad &&
	ip -n "$GD" -6 addr add fd77::1/64 dev "$GDIF" nodad &&
	ip -n "$WL" route add default via 10.77.0.1 &&
	ip -n "$WL" -6 route add default via fd77::1 &&
	ip -n "$IN" -6 route add fd77::/64 via 2001:2::1 &&
	ip netns exec "$GD" sysctl -qw net.ipv4.ip_forward=1 \
	    net.ipv6.conf.all.forwarding=1 || return 1
	ip netns add "$SH" && ip -n "$SH" link set lo up &&
	ip link add sh0-$$ netns "$SH" type veth peer name is0-$$ netns "$IN" &&
	ip -n "$SH" addr add 10.78.0.2/24 dev sh0-$$ &&
	ip -n "$SH" -6 addr add fd78::2/64 dev sh0-$$ nodad &&
	ip -n "$IN" addr add 10.78.0.1/24 dev is0-$$ &&
	ip -n "$IN" -6 addr add fd78::1/64 dev is0-$$ nodad &&
	ip -n "$SH" link set sh0-$$ up && ip -n "$IN" link set is0-$$ up &&
	ip -n "$SH" route add default via 10.78.0.1 &&
	ip -n "$SH" -6 route add default via fd78::1
}
setup || { fail nft_transparent_topology "could not build the namespaces"; finish; exit 1; }
start_bg "$IN" "$T/far4.out" python3 "$TI/listener.py" --listen "$PUB4:80" \
    --log "$T/far4.log" --ready "$T/far4.ready" --name far4
start_bg "$IN" "$T/far6.out" python3 "$TI/listener.py" --listen "[$PUB6]:80" \
    --log "$T/far6.log" --ready "$T/far6.ready" --name far6
serve "$IN" udp-serve $PUB4 53 fardns
serve "$IN" udp-serve $PUB4 5000 farudp
serve "$GD" origdst-serve 10.77.0.1 3129 gdt4
serve "$GD" origdst-serve fd77::1 3129 gdt6
serve "$GD" udp-serve 10.77.0.1 5353 gddns
serve "$GD" origdst-serve 10.77.0.1 5353 gddnstcp
serve "$SH" origdst-serve 127.0.0.1 3129 sht4
serve "$SH" origdst-serve ::1 3129 sht6
serve "$SH" udp-serve 127.0.0.1 5353 shdns
start_bg "$GD" "$T/gdproxy.out" python3 "$TI/listener.py" --listen 10.77.0.1:3128 \
    --log "$T/gdproxy.log" --ready "$T/gdproxy.ready" --name gdproxy
for f in far4 far6 fardns farudp gdt4 gdt6 gddns gddnstcp sht4 sht6 shdns gdproxy; do
	wait_file "$T/$f.ready" 150 || { fail nft_transparent_topology "$f did not start"; finish; exit 1; }
done
pass nft_transparent_topology

# ---- separate layout: controls, no table anywhere ----------------------------
AS=""
reach control_separate_direct_tcp_reaches_far_listener "$WL" "http://$PUB4/" "$T/far4.log" conn
reach control_separate_direct_ipv6_reaches_far_listener "$WL" "http://[$PUB6]/" "$T/far6.log" conn
udp control_separate_udp_reaches_far_side "$WL" $PUB4 5000 "$T/farudp.log" arrives

# ---- separate layout, guard side alone ---------------------------------------
GUARD_SIDE="--netns $GD --transparent-in $GDIF --transparent 10.77.0.1:3129 --transparent [fd77::1]:3129 --dns-listen 10.77.0.1:5353 --guard 10.77.0.1:3128"
# A mistyped link: the rules match the name only, so the real link stays
# unfiltered; apply says so (the link may come later, so not refused).
egnft apply --netns "$GD" --transparent-in egtypo0 --transparent 10.77.0.1:3129 --guard 10.77.0.1:3128
if [ $RC -eq 0 ]; then has hostile_transparent_in_mistyped_link_warned "$ERR" \
    "warning: no interface egtypo0 in $GD (yet)"
else fail hostile_transparent_in_mistyped_link_warned "exit $RC: $ERR"; fi
egnft apply $GUARD_SIDE
case $ERR in *"no interface"*) fail guard_side_apply_no_missing_link_warning "$ERR" ;; esac
if [ $RC -eq 0 ]; then
	has guard_side_apply_warns_forwarding_on "$ERR" "warning: forwarding is on" \
	    "net.ipv4.ip_forward=1" "net.ipv6.conf.all.forwarding=1"
else
	fail guard_side_apply "exit $RC: $ERR"
fi
listing=$(ip netns exec "$GD" nft list table inet egress_guard 2>&1)
has guard_side_nft_cli_lists_rules "$listing" \
    "type nat hook prerouting priority dstnat - 10; policy accept;" \
    "iifname \"$GDIF\" ip daddr 10.77.0.1 tcp dport 3128 counter" \
    "iifname \"$GDIF\" meta nfproto ipv4 udp dport 53 counter packets 0 bytes 0 dnat ip to 10.77.0.1:5353" \
    "iifname \"$GDIF\" meta nfproto ipv4 meta l4proto tcp counter packets 0 bytes 0 dnat ip to 10.77.0.1:3129" \
    "iifname \"$GDIF\" meta nfproto ipv6 meta l4proto tcp counter packets 0 bytes 0 dnat ip6 to [fd77::1]:3129" \
    "iifname \"$GDIF\" ct direction original ct status dnat ip daddr 10.77.0.1 tcp dport 3129 counter" \
    "type filter hook forward priority filter; policy drop;"
egnft verify $GUARD_SIDE
check guard_side_verify_after_apply "$RC" "exit $RC: $ERR"

# A packet the guard side does not redirect goes nowhere, forwarding on.
udp guard_side_udp_not_redirected_goes_nowhere "$WL" $PUB4 5000 "$T/farudp.log" nowhere
far=$(lines "$T/far4.log")$(lines "$T/far6.log")
reach guard_side_tcp_redirected_original_destination_kept "$WL" "http://$PUB4/" \
    "$T/gdt4.log" "orig $PUB4:80"
reach guard_side_ipv6_tcp_redirected_original_destination_kept "$WL" "http://[$PUB6]/" \
    "$T/gdt6.log" "orig [$PUB6]:80"
if [ "$far" = "$(lines "$T/far4.log")$(lines "$T/far6.log")" ]; then pass guard_side_far_listeners_saw_nothing
else fail guard_side_far_listeners_saw_nothing "a far listener logged a connection"; fi
udp guard_side_dns_udp_to_any_address_answered_by_guard "$WL" $PUB4 53 "$T/gddns.log" arrives
udp guard_side_dns_udp_never_reaches_far_resolver "$WL" $PUB4 53 "$T/fardns.log" nowhere
reach guard_side_dns_tcp_redirected "$WL" "http://$PUB4:53/" "$T/gddnstcp.log" "orig $PUB4:53"
n=$(lines "$T/gdt4.log")
reach guard_side_explicit_proxy_port_not_redirected "$WL" "http://10.77.0.1:3128/" "$T/gdproxy.log" conn
[ "$(lines "$T/gdt4.log")" = "$n" ] || fail guard_side_explicit_proxy_port_not_redirected "the transparent listener got it: $(tail -n +$((n + 1)) "$T/gdt4.log"); all: $(cat "$T/gdt4.log" "$T/gdproxy.log")"

# Drift: the v4 redirect deleted. verify says so; and the connection then
# goes nowhere (dropped in forward), while with the forward chain
# accepting (the nft_forward mutant's table) it reaches the far side.
h=$(ip netns exec "$GD" nft -a list chain inet egress_guard nat_prerouting |
    sed -n 's/.*meta nfproto ipv4 meta l4proto tcp .*dnat ip to .* # handle \([0-9]*\)$/\1/p')
ip netns exec "$GD" nft delete rule inet egress_guard nat_prerouting handle "$h"
egnft verify $GUARD_SIDE
if [ $RC -eq 1 ]; then has guard_side_verify_detects_missing_redirect "$ERR" \
    "nat_prerouting: missing rule (iifname \"$GDIF\" meta nfproto ipv4 meta l4proto tcp counter dnat ip to 10.77.0.1:3129)"
else fail guard_side_verify_detects_missing_redirect "exit $RC: $ERR"; fi
nowhere guard_side_tcp_without_redirect_goes_nowhere "$WL" "http://$PUB4/" "$T/far4.log"
ip netns exec "$GD" nft chain inet egress_guard forward '{ policy accept; }'
egnft verify $GUARD_SIDE
has guard_side_verify_detects_forward_accept "$ERR" "forward: policy accept, expected drop"
reach control_guard_side_forward_accept_reaches_far_listener "$WL" "http://$PUB4/" "$T/far4.log" conn
egnft apply $GUARD_SIDE
check guard_side_reapply_repairs "$RC" "exit $RC: $ERR"

# ---- separate layout, workload side -----------------------------------------
WL_SIDE="--netns $WL --guard 10.77.0.1:3128 --guard [fd77::1]:3128 --transparent-via 10.77.0.1 --transparent-via fd77::1 --transparent-dns"
egnft apply $WL_SIDE
check workload_side_apply "$RC" "exit $RC: $ERR"
listing=$(ip netns exec "$WL" nft list chain inet egress_guard output 2>&1)
has workload_side_nft_cli_lists_next_hop_rules "$listing" \
    "meta l4proto tcp rt ip nexthop 10.77.0.1 counter" \
    "udp dport 53 rt ip nexthop 10.77.0.1 counter" \
    "meta l4proto tcp rt ip6 nexthop fd77::1 counter"
egnft verify $WL_SIDE
check workload_side_verify_after_apply "$RC" "exit $RC: $ERR"
reach workload_side_tcp_via_guard_redirected "$WL" "http://$PUB4/" "$T/gdt4.log" "orig $PUB4:80"
reach workload_side_ipv6_tcp_via_guard_redirected "$WL" "http://[$PUB6]/" "$T/gdt6.log" "orig [$PUB6]:80"
udp workload_side_dns_via_guard_answered "$WL" $PUB4 53 "$T/gddns.log" arrives
n=$(lines "$T/farudp.log")
r=$(probe "$WL" udp $PUB4 5000)
sleep 0.2
if [ "$r" = "udp refused" ] && [ "$(lines "$T/farudp.log")" = "$n" ]; then pass workload_side_other_udp_refused_at_once
else fail workload_side_other_udp_refused_at_once "$r"; fi
# A route whose next hop is not the guard: TCP refused at once.
ip -n "$WL" route add $PUB4/32 via 10.77.0.9
nowhere workload_side_tcp_via_other_next_hop_refused "$WL" "http://$PUB4/" \
    "$T/far4.log" "$T/gdt4.log"
ip -n "$WL" route del $PUB4/32 via 10.77.0.9
egnft verify --netns "$WL" --guard 10.77.0.1:3128 --guard "[fd77::1]:3128" --transparent-via 10.77.0.9
if [ $RC -eq 1 ]; then has workload_side_verify_detects_changed_next_hop "$ERR" "rt ip nexthop 10.77.0.9"
else fail workload_side_verify_detects_changed_next_hop "exit $RC: $ERR"; fi

# ---- shared layout ------------------------------------------------------------
reach control_shared_direct_tcp_reaches_far_listener "$SH" "http://$PUB4/" "$T/far4.log" conn
udp control_shared_dns_reaches_far_resolver "$SH" $PUB4 53 "$T/fardns.log" arrives
# Docker's embedded resolver, stood in for: its nat OUTPUT DNAT of
# 127.0.0.11:53 (priority -100) and a resolver that logs each query.
ip netns exec "$SH" nft -f "$TI/docker_dns.nft"
start_bg "$SH" "$T/docker.out" python3 "$PROBE" dns-serve "$T/docker.log" "$T/docker.ready"
wait_file "$T/docker.ready" 150
r=$(probe "$SH" dns-query)
# The resolver logs the TCP connection after its accept(), which may come
# after the client has connected and exited: wait for it, then count.
[ "$r" = "udp answered tcp connected" ] && wait_lines "$T/docker.log" 2
if [ "$r" = "udp answered tcp connected" ] && [ "$(lines "$T/docker.log")" = 2 ]; then
	pass control_shared_docker_dns_reached_before_apply
else
	fail control_shared_docker_dns_reached_before_apply "$r; $(cat "$T/docker.log")"
fi
SHARED="--netns $SH --guard 127.0.0.1:3128 --exempt-uid 65534 --transparent 127.0.0.1:3129 --transparent [::1]:3129 --dns-listen 127.0.0.1:5353"
egnft apply $SHARED
check shared_apply "$RC" "exit $RC: $ERR"
listing=$(ip netns exec "$SH" nft list table inet egress_guard 2>&1)
has shared_nft_cli_lists_rules "$listing" \
    "chain nat_output {" "type nat hook output priority -110; policy accept;" \
    "meta skuid 65534 counter" \
    "meta nfproto ipv4 udp dport 53 counter packets 0 bytes 0 redirect to :5353" \
    "meta nfproto ipv4 meta l4proto tcp counter packets 0 bytes 0 redirect to :3129" \
    "meta nfproto ipv6 meta l4proto tcp counter packets 0 bytes 0 redirect to :3129" \
    'ct direction original ct status dnat ip daddr 127.0.0.1 tcp dport 3129 counter'
egnft verify $SHARED
check shared_verify_after_apply "$RC" "exit $RC: $ERR"
far=$(lines "$T/far4.log")$(lines "$T/far6.log")
reach shared_tcp_redirected_original_destination_kept "$SH" "http://$PUB4/" "$T/sht4.log" "orig $PUB4:80"
reach shared_ipv6_tcp_redirected_original_destination_kept "$SH" "http://[$PUB6]/" "$T/sht6.log" "orig [$PUB6]:80"
if [ "$far" = "$(lines "$T/far4.log")$(lines "$T/far6.log")" ]; then pass shared_far_listeners_saw_nothing
else fail shared_far_listeners_saw_nothing "a far listener logged a connection"; fi
udp shared_dns_redirected_to_guard "$SH" $PUB4 53 "$T/shdns.log" arrives
udp shared_dns_never_reaches_far_resolver "$SH" $PUB4 53 "$T/fardns.log" nowhere
udp shared_other_udp_goes_nowhere "$SH" $PUB4 5000 "$T/farudp.log" nowhere
# Our nat chain (-110) runs before Docker's (-100): the query to
# 127.0.0.11:53 reaches the guard's DNS listener, never Docker's resolver.
n=$(lines "$T/shdns.log")
d=$(lines "$T/docker.log")
r=$(probe "$SH" dns-query)
if [ "$r" = "udp answered tcp refused" ] && [ "$(lines "$T/docker.log")" = "$d" ] &&
    [ "$(lines "$T/shdns.log")" != "$n" ]; then
	pass shared_docker_dns_redirected_to_guard_not_docker
else
	fail shared_docker_dns_redirected_to_guard_not_docker "$r; docker log: $(cat "$T/docker.log")"
fi
AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
reach shared_exempt_socket_not_redirected "$SH" "http://$PUB4/" "$T/far4.log" conn
AS=""
h=$(ip netns exec "$SH" nft -a list chain inet egress_guard nat_output |
    sed -n 's/.*meta nfproto ipv4 meta l4proto tcp .*redirect to :3129 # handle \([0-9]*\)$/\1/p')
ip netns exec "$SH" nft delete rule inet egress_guard nat_output handle "$h"
egnft verify $SHARED
if [ $RC -eq 1 ]; then has shared_verify_detects_missing_redirect "$ERR" \
    "nat_output: missing rule (meta nfproto ipv4 meta l4proto tcp counter redirect to :3129)"
else fail shared_verify_detects_missing_redirect "exit $RC: $ERR"; fi
nowhere shared_tcp_without_redirect_refused "$SH" "http://$PUB4/" "$T/far4.log" "$T/sht4.log"

for ns in "$GD" "$WL" "$SH"; do
	egnft remove --netns "$ns"
	[ $RC -eq 0 ] || fail nft_transparent_remove "$ns: $ERR"
done
finish
