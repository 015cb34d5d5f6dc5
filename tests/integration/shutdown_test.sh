#!/usr/bin/env bash
# SIGTERM (docs/design.md, Signals; Decision log, `close` reasons):
# - at the signal every listener closes, the DNS listener included: a
#   query after the "stopped accepting" line gets no answer and no
#   upstream lookup (the query log shows none), a new connection is
#   refused;
# - a live tunnel keeps relaying during --grace;
# - when the grace ends, the tunnel still open is closed with a `close`
#   line (reason shutdown, its bytes counted), then the guard exits 0;
# - with nothing live, SIGTERM exits at once.
# Controls: the same DNS query and CONNECT before the signal are served.
# Negative control: the binary before the fix answered the query after
# the signal (and looked it up) and wrote no close line at the grace's
# end; both checks go red on it.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
command -v dig >/dev/null || { echo "FAIL dig missing (bind9-dnsutils)"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }

cat >"$T/zone.json" <<'Z'
{
 "ok.test": {"A": ["198.18.1.10"], "ttl": 300},
 "after.test": {"A": ["198.18.1.10"], "ttl": 300}
}
Z
cat >"$T/policy.json" <<'P'
{"allow":[{"host":"after.test","port":7},{"host":"ok.test","port":7}],"epoch":1,"mode":"allowlist","schema":"egress-guard.policy.v1"}
P
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_listener echo 198.18.1.10:7 --raw || { echo "FAIL echo listener"; exit 1; }
start_guard S 3128 --dns 198.18.0.53 --dns-timeout 2 --policy "$T/policy.json" \
    --allow-range 198.18.0.0/15 --dns-listen 10.77.0.1:5353 --grace 3 || exit 1

# dq NAME: the status of an A query for NAME to the guard's DNS listener
# ("none" when nothing answers within 2 s).
dq() {
	s=$(inwl dig @10.77.0.1 -p 5353 +tries=1 +time=2 +noall +comments A "$1" 2>&1 |
	    sed -n 's/.*status: \([A-Z]*\),.*/\1/p' | head -n1)
	echo "${s:-none}"
}

st=$(dq ok.test)
[ "$st" = NOERROR ] && queried ok.test
check control_dns_listener_answers_before_sigterm $? "$st"

# A tunnel held open by a client that echoes a line, waits for the go
# file, echoes another, then waits for the guard to close it.
inwl python3 - "$T/tun" <<'PY' &
import os, socket, sys, time
base = sys.argv[1]
s = socket.create_connection(("10.77.0.1", 3128), timeout=20)
s.sendall(b"CONNECT ok.test:7 HTTP/1.1\r\n\r\n")
def until(want):
    d = b""
    while want not in d:
        x = s.recv(4096)
        if not x:
            return d + b"<EOF>"
        d += x
    return d
head = until(b"\r\n\r\n")
s.sendall(b"ping-before\n")
a = until(b"ping-before\n")
open(base + ".up", "w").write("1\n")
for _ in range(100):
    if os.path.exists(base + ".go"):
        break
    time.sleep(0.05)
s.sendall(b"ping-during-grace\n")
b = until(b"ping-during-grace\n")
t0 = time.monotonic()
c = until(b"\0never\0")		# until the guard closes it
open(base, "w").write("%s|%s|%s|%.1f\n" % (
    head.split(b"\r\n")[0].decode(), b"ping-during-grace\n" in b,
    c.endswith(b"<EOF>"), time.monotonic() - t0))
PY
PIDS="$PIDS $!"
wait_file "$T/tun.up" || { echo "FAIL tunnel never up"; exit 1; }

kill -TERM "$PID_S"
t0=$(date +%s%N)
for _ in $(seq 30); do
	grep -q '"event":"shutdown".*stopped accepting' "$T/S.log" && break
	sleep 0.1
done
# after.test was never asked before: any upstream query for it is new.
st=$(dq after.test)
[ "$st" = none ] && ! queried after.test
check hostile_dns_listener_silent_and_no_upstream_lookup_after_sigterm $? \
    "status $st, upstream: $(cat "$T/queries.log")"
out=$(inwl curl -sS --max-time 3 -x http://10.77.0.1:3128 http://ok.test:7/ 2>&1)
case "$out" in *"Connection refused"*|*"Failed to connect"*) r=0;; *) r=1;; esac
check new_connection_refused_after_sigterm $r "$out"

: >"$T/tun.go"
# The guard exits once the grace (3 s) has cut the tunnel: within 10 s.
for _ in $(seq 100); do kill -0 "$PID_S" 2>/dev/null || break; sleep 0.1; done
wait "$PID_S"; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
for _ in $(seq 30); do [ -s "$T/tun" ] && break; sleep 0.1; done
res=$(cat "$T/tun" 2>/dev/null)
case "$res" in "HTTP/1.1 200 Connection established|True|True|"*) r=0;; *) r=1;; esac
check live_tunnel_relays_during_grace_then_closed $r "$res"
[ $rc -eq 0 ] && [ $ms -ge 2500 ] && [ $ms -lt 10000 ]
check sigterm_with_live_tunnel_exits_0_at_grace_end $? "exit $rc after $ms ms"
# The tunnel's allow decision, and its close line: reason shutdown, the
# bytes it carried (two lines each way).
id=$(grep '"event":"decision"' "$T/S.log" | grep '"host":"ok.test"' | grep '"proto":"connect"' |
    sed -n 's/.*"id":\([0-9]*\),.*/\1/p' | head -n1)
cl=$(grep '"event":"close"' "$T/S.log" | grep "\"id\":${id:-x}," | head -n1)
case "$cl" in *'"reason":"shutdown"'*'"bytes_up":30,"bytes_down":30'*) r=0;; *) r=1;; esac
check hostile_tunnel_cut_at_grace_end_gets_close_line_with_bytes $r "id ${id:-?}: ${cl:-no close line}"

# Nothing live: SIGTERM exits at once.
start_guard Q 3129 --dns 198.18.0.53 --policy "$T/policy.json" --grace 30 || exit 1
t0=$(date +%s%N)
kill -TERM "$PID_Q"
for _ in $(seq 50); do kill -0 "$PID_Q" 2>/dev/null || break; sleep 0.1; done
wait "$PID_Q"; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc -eq 0 ] && [ $ms -lt 3000 ]
check sigterm_with_nothing_live_exits_0_at_once $? "exit $rc after $ms ms"

finish
