#!/usr/bin/env bash
# The resolver's bounds under hostile timing, against the test's own
# upstream (dnsd.py), whose query log shows what left the guard.
#
# - TCP churn on the DNS listener: connections that each pipeline 16 A
#   queries for a silent name, then reset 20 ms later. Their lookups are
#   cancelled, but c-ares asks on; they stay counted against the 256 in
#   flight until it lets go, so at most 256 lookups (x A and AAAA x 2
#   tries) reach upstream and a fresh query is REFUSED at once, and the
#   guard's memory does not grow with the churn.
# - Three --dns servers, the first two black-holed: the third is asked
#   in time (c-ares' per-try timeout sized to the number of servers) and
#   the request is allowed within --dns-timeout.
# Negative control: EG_BUILD=<a build of the revision before the fix>:
# tcp_churn_* and third_dns_server_* fail (queries past the bound, the
# fresh query waits, RSS grows; 504 dns_timeout). About 15 s.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
command -v dig >/dev/null || { echo "FAIL dig missing (bind9-dnsutils)"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }

cat >"$T/zone.json" <<'Z'
{
 "ok.test": {"A": ["198.18.1.10"]},
 "slow.test": {"drop": true}
}
Z
cat >"$T/policy.json" <<'P'
{"allow":[{"host":"ok.test","port":8080},{"host":"slow.test","port":443}],"epoch":1,"mode":"allowlist","schema":"egress-guard.policy.v1"}
P
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_listener web 198.18.1.10:8080
COMMON="--policy $T/policy.json --allow-range 198.18.0.0/15 --workers 1"
# --dns-timeout 30: no lookup of the churn ends (nor retries) while the
# test runs, so whatever reached upstream is what the bound let through.
start_guard D 3128 $COMMON --dns 198.18.0.53 --dns-listen 10.77.0.1:53 \
    --dns-timeout 30 || exit 1

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }
qcount() { grep -c "^$1 " "$T/queries.log" 2>/dev/null; }

# ---- TCP churn: 100 connections x 16 lookups = 1600 against the 256
rss0=$(rss_kb "$PID_D")
inwl python3 - <<'PY' >"$T/churn.out" 2>&1
import socket, struct, time
q = bytes.fromhex("0001010000010000000000000473" "6c6f7704746573740000010001")
for c in range(100):
    s = socket.create_connection(("10.77.0.1", 53), timeout=5)
    s.sendall(b"".join(struct.pack("!H", len(q)) + struct.pack("!H", c * 16 + i) + q[2:]
                       for i in range(16)))
    time.sleep(0.02)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()	# a reset: the guard's lookups for it are cancelled
print("sent")
PY
# Wait (bounded) until upstream has seen every query it is going to.
n=-1
for _ in $(seq 30); do
	sleep 0.3
	m=$(qcount slow.test)
	[ "$m" = "$n" ] && break
	n=$m
done
rss1=$(rss_kb "$PID_D")
n=$(qcount slow.test)
echo "# churn: $n queries upstream, guard RSS ${rss0} -> ${rss1} kB"
# 256 lookups x (A + AAAA) x 2 tries; the old guard let all 1600 ask.
[ "$(cat "$T/churn.out")" = sent ] && [ "$n" -gt 0 ] && [ "$n" -le 1024 ]
check tcp_churn_queries_upstream_stay_within_256_lookups $? \
    "$n queries upstream ($(cat "$T/churn.out"))"
# Still counted: a fresh query is refused at once, not sent upstream.
out=$(inwl dig @10.77.0.1 +tries=1 +time=3 slow.test A 2>&1)
case "$out" in *"status: REFUSED"*) r=0;; *) r=1;; esac
check tcp_churn_reset_lookups_still_count_fresh_query_refused $r \
    "$(printf '%s\n' "$out" | grep -m1 'status:\|timed out')"
# 1600 lookups held 20 KiB each before the fix (about 32 MB).
[ $((rss1 - rss0)) -lt 8192 ]
check tcp_churn_rss_growth_under_8_mib $? "RSS ${rss0} -> ${rss1} kB"
kill -0 "$PID_D" 2>/dev/null
check tcp_churn_guard_alive $?

# ---- three servers, the first two black-holed (silently dropped in IN)
ip -n "$IN" route add blackhole 198.18.0.54/32
ip -n "$IN" route add blackhole 198.18.0.55/32
start_guard P 3129 $COMMON --dns 198.18.0.54 --dns 198.18.0.55 \
    --dns 198.18.0.53 --dns-timeout 3 || exit 1
t0=$(date +%s%N)
out=$(curl_proxy 3129 http://ok.test:8080/)
ms=$((($(date +%s%N) - t0) / 1000000))
case "$out" in code=200*) r=0;; *) r=1;; esac
check third_dns_server_asked_within_dns_timeout $r \
    "$out in ${ms} ms, $(last_decision "$T/P.log" ok.test)"
[ "$ms" -lt 3000 ]
check third_dns_server_answer_before_deadline $? "${ms} ms"

finish
