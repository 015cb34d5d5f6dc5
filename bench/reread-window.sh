#!/bin/bash
# bench/reread-window.sh [IDLE_LINKS]: what one address change on some
# other link costs a tenant's CONNECTs (session 16, bench/RESULTS.md).
#
# One `egress-guard run --tenants` in a network namespace of its own
# (egrw-g-PID; the workload's egrw-c-PID), tenant t0000 on a veth, and
# IDLE_LINKS (998) more ifb links each carrying an address, as
# bench/tenants makes them. bench/loadgen rate (c=8, 3 s) through t0000:
# calm, then while an address comes and goes on one more link (30 times
# added and removed, 50 ms apart: what adding and removing a tenant's
# link does), then calm again. Every change makes the guard re-read its
# own addresses (guard/ifaddr.c), and until it has, every address is
# refused ("own addresses unknown"): the run prints the errors and the
# guard's lines naming it. Root; the exit trap deletes both namespaces
# and stops what it started, by PID. No figure is asserted.
set -u
NL=${1:-998}
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BD=$BUILD ;; *) BD=$TOP/$BUILD ;; esac
[ "$(id -u)" -eq 0 ] || { echo "bench/reread-window.sh: root needed" >&2; exit 2; }
case "$NL" in ''|*[!0-9]*) echo "usage: bench/reread-window.sh [IDLE_LINKS <= 4095]" >&2; exit 2 ;; esac
[ "$NL" -le 4095 ] || { echo "usage: bench/reread-window.sh [IDLE_LINKS <= 4095]" >&2; exit 2; }
D=$(mktemp -d /tmp/egrw.XXXXXX)
G=egrw-g-$$
C=egrw-c-$$
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	ip netns del "$G" 2>/dev/null
	ip netns del "$C" 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT
for n in "$G" "$C"; do ip netns add "$n" && ip -n "$n" link set lo up || exit 1; done
ip link add ta netns "$G" type veth peer name ca netns "$C" || exit 1
ip -n "$G" addr add 10.81.10.1/24 dev ta && ip -n "$C" addr add 10.81.10.2/24 dev ca &&
	ip -n "$G" link set ta up && ip -n "$C" link set ca up || exit 1
ip -n "$G" link add egx type ifb && ip -n "$G" link set egx up || exit 1
for ((i = 1; i <= NL; i++)); do
	b=$((4 * i))
	printf 'link add egd%d type ifb\nlink set egd%d up\naddr add 10.82.%d.%d/30 dev egd%d\n' \
		"$i" "$i" $((b / 256)) $((b % 256 + 1)) "$i"
done >"$D/batch"
[ "$NL" -eq 0 ] || ip -n "$G" -batch "$D/batch" || exit 1
ip netns exec "$G" "$BD/bench/target" --listen 127.0.0.1:8080 --max-conns 60000 >"$D/t.out" 2>&1 &
PIDS+=($!)
ip netns exec "$G" "$BD/bench/dns" --listen 127.0.0.1:53 --name target.bench.test=127.0.0.1 \
	--ready "$D/dns.ready" >"$D/d.out" 2>&1 &
PIDS+=($!)
mkdir -m 700 "$D/st" "$D/k"
"$BD/egress-guardctl" keygen --out "$D/k/k.pem" >/dev/null 2>&1 || exit 1
echo '{"allow":[{"host":"127.0.0.1","port":8080}],"epoch":1,"mode":"allowlist","schema":"egress-guard.policy.v1","tenant":"t0000"}' >"$D/p.json"
"$BD/egress-guardctl" sign "$D/p.json" --key "$D/k/k.pem" >"$D/p.bundle" || exit 1
ip netns exec "$G" "$BD/egress-guard" run --tenants --control "$D/ctl.sock" --state-dir "$D/st" \
	--trust-key "$D/k/k.pub.pem" --allow-range 127.0.0.0/8 --dns 127.0.0.1:53 \
	--log-file "$D/g.log" --workers 1 --max-conns 3000 >"$D/g.out" 2>&1 &
PIDS+=($!)
for ((i = 0; i < 100; i++)); do [ -S "$D/ctl.sock" ] && [ -e "$D/dns.ready" ] && break; sleep 0.1; done
ctl() { curl -sS --max-time 10 --unix-socket "$D/ctl.sock" -o /dev/null -w '%{http_code}' -X PUT --data-binary "$2" "http://x$1"; }
a=$(ctl /v1/tenants/t0000 '{"address":"10.81.10.1","dns_port":0,"id":"t0000","link":"ta","max_conns":256,"max_dns":64,"peer":"10.81.10.2","port":3128,"transparent_port":0}')
p=$(ctl /v1/tenants/t0000/policy "@$D/p.bundle")
[ "$a" = 201 ] && [ "$p" = 200 ] || { echo "bench/reread-window.sh: tenant add $a, push $p"; cat "$D/g.out"; exit 1; }
lg() {
	ip netns exec "$C" "$BD/bench/loadgen" rate --proxy 10.81.10.1:3128 --target 127.0.0.1:8080 \
		--concurrency 8 --duration 3 --warmup 0.3 --max-error-pct 100 --label "$1" | grep '^# '
}
# The veth's IPv6 link-local is tentative for a second or two (DAD): its
# end is a change too, so the calm run starts after it.
for ((i = 0; i < 100; i++)); do
	[ -z "$(ip -n "$G" -6 addr show tentative)" ] && break
	sleep 0.1
done
sleep 0.5
echo "# $NL idle addressed links; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
lg calm
(for ((i = 0; i < 30; i++)); do
	ip -n "$G" addr add 10.99.0.1/32 dev egx; sleep 0.05
	ip -n "$G" addr del 10.99.0.1/32 dev egx; sleep 0.05
done) &
CH=$!
lg "address-changes"
wait "$CH"
echo "# the guard's lines naming 'own addresses unknown': $(grep -c 'own addresses unknown' "$D/g.log")"
lg calm-after
