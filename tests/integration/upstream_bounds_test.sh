#!/usr/bin/env bash
# An admitted upstream that attacks the guard's bounds on an absolute-form
# exchange (docs/design.md, Bounds and timeouts; Absolute-form HTTP):
# - 1xx heads without end to a client that does not read: the 64 KiB per
#   direction bound holds for them as for a body (the guard's RSS stays
#   flat; before the fix it grew by hundreds of MB in seconds);
# - a client that stops reading a large response: the exchange is closed
#   at --idle-timeout (reason idle_timeout), as a tunnel is; before, it
#   stayed open for as long as the client liked;
# - a response head past 64 KiB: 502 and close reason "response head too
#   large" (it was "malformed response head");
# - control: 40 1xx heads and the final response in one write, to a
#   client that reads late, complete through the new pause. (The resume
#   from bytes already read when the pause came, which the socket does not
#   announce again, is in cl_write_cb; this case does not force that
#   timing: the kernel's buffers decide where the pause falls.)
# hostile_upstream.py serves the four modes. About 20 s.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }

cat >"$T/zone.json" <<'Z'
{"up.test": {"A": ["198.18.1.10"], "ttl": 300}}
Z
cat >"$T/policy.json" <<'P'
{"allow":[{"host":"up.test","port":8001},{"host":"up.test","port":8002},{"host":"up.test","port":8003},{"host":"up.test","port":8004}],"epoch":1,"mode":"allowlist","schema":"egress-guard.policy.v1"}
P
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_bg "$IN" "$T/hostile.out" python3 "$TI/hostile_upstream.py" --listen 198.18.1.10 \
    --ready "$T/hostile.ready"
wait_file "$T/hostile.ready" || { echo "FAIL hostile upstream"; exit 1; }
start_guard B 3128 --dns 198.18.0.53 --policy "$T/policy.json" --allow-range 198.18.0.0/15 \
    --idle-timeout 3 --workers 1 || exit 1

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$PID_B/status" 2>/dev/null; }
# client PORT HOLD: GET http://up.test:PORT/ with a 4 KiB receive buffer,
# reads nothing for HOLD s, then reads until close (at most 10 s more);
# prints the status line and how long the guard took to close it.
client() {
	inwl python3 - "$1" "$2" <<'PY'
import socket, sys, time
port, hold = int(sys.argv[1]), float(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.settimeout(10)
s.connect(("10.77.0.1", 3128))
t0 = time.monotonic()
s.sendall(b"GET http://up.test:%d/ HTTP/1.1\r\n\r\n" % port)
time.sleep(hold)
got = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
        if port == 8004 and got.endswith(b"ok"):
            break
except OSError as e:
    got += b"<%s>" % type(e).__name__.encode()
first = got.split(b"\r\n")[0].decode(errors="replace")
print("%s|%d|%s|%.1f" % (first, len(got), got.endswith(b"ok"), time.monotonic() - t0))
PY
}
close_of() {	# close_of PORT: the close line of the exchange to up.test:PORT
	id=$(grep '"event":"decision"' "$T/B.log" | grep "\"port\":$1," |
	    sed -n 's/.*"id":\([0-9]*\),.*/\1/p' | tail -n1)
	grep '"event":"close"' "$T/B.log" | grep "\"id\":${id:-x}," | tail -n1
}

# 1. The 1xx storm, client not reading for 4 s.
r0=$(rss_kb)
client 8001 4 >"$T/storm.out" &
CP=$!
PIDS="$PIDS $CP"
sleep 3.5
r1=$(rss_kb)
wait "$CP"
grow=$(( ${r1:-0} - ${r0:-0} ))
[ -n "$r0" ] && [ -n "$r1" ] && [ "$grow" -lt 16384 ]
check hostile_1xx_storm_to_non_reading_client_guard_memory_bounded $? \
    "RSS $r0 -> $r1 KiB (+$grow) / $(cat "$T/storm.out")"

# 2. A client that stops reading a 100 MB response.
out=$(client 8003 12)
cl=$(close_of 8003)
ms=$(printf '%s' "$cl" | sed -n 's/.*"duration_ms":\([0-9]*\).*/\1/p')
case "$cl" in *'"reason":"idle_timeout"'*) [ "${ms:-0}" -ge 2500 ] && [ "${ms:-0}" -lt 9000 ]; r=$?;; *) r=1;; esac
check hostile_stalled_client_exchange_closed_at_idle_timeout $r "${cl:-no close line} / $out"

# 3. A response head past 64 KiB.
out=$(client 8002 0)
cl=$(close_of 8002)
case "$out/$cl" in "HTTP/1.1 502"*'"reason":"response head too large"'*) r=0;; *) r=1;; esac
check hostile_response_head_over_64k_502_reason_too_large $r "$out / ${cl:-no close line}"

# 4. 1xx heads and the answer in one write, to a client that reads late.
out=$(client 8004 2)
case "$out" in "HTTP/1.1 103"*"|True|"*) r=0;; *) r=1;; esac
check control_1xx_heads_then_response_to_late_reader_complete $r "$out"

kill -0 "$PID_B" 2>/dev/null
check guard_alive_after_hostile_upstreams $?

finish
