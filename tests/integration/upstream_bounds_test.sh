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
# - slow readers (4 KiB receive buffer, 1 KiB every 100 ms) of a body the
#   upstream has long finished sending (75 KB, the guard's send buffers
#   capped): close-delimited, de-chunked for an
#   HTTP/1.0 client, Content-Length on a kept-alive connection (whose
#   header timeout, 1 s, comes long before the client has the body), and
#   the same with a denied request pipelined behind it: every byte (the
#   last is 'E') and a close line "complete"; before the fix the guard
#   dropped what it still held 2 s after the upstream's end (or at the
#   header timeout), with a FIN, and logged complete;
# - a client that stops reading such a body: a reset about --idle-timeout
#   after it stopped, close reason idle_timeout (before: complete, FIN);
# - a body of 200,000 one-byte chunks de-chunked for an HTTP/1.0 client:
#   the guard's write calls (/proc/PID/io syscw) stay near one per read,
#   not one per chunk (before: 200,065).
# hostile_upstream.py serves the modes. About 45 s.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }

cat >"$T/zone.json" <<'Z'
{"up.test": {"A": ["198.18.1.10"], "ttl": 300}}
Z
cat >"$T/policy.json" <<'P'
{"allow":[{"host":"up.test","port":8001},{"host":"up.test","port":8002},{"host":"up.test","port":8003},{"host":"up.test","port":8004},{"host":"up.test","port":8005}],"epoch":1,"mode":"allowlist","schema":"egress-guard.policy.v1"}
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

# 5. Slow readers of answers the upstream has finished: each on its own
# connection, all at once (about 8 s). Guard C: header timeout 1 s. The
# guard's namespace caps its TCP send buffers at 16 KiB (the kernel then
# holds ~18 KB of an answer for a client that does not read, with its
# 4 KiB receive buffer): what the guard still holds when the upstream
# ends is then known, so the bodies below make the cases fail on a guard
# that drops it, whatever the kernel's autotuning would have done.
ingd sysctl -qw net.ipv4.tcp_wmem="4096 16384 16384" || { echo "FAIL tcp_wmem"; exit 1; }
start_guard C 3129 --dns 198.18.0.53 --policy "$T/policy.json" --allow-range 198.18.0.0/15 \
    --idle-timeout 3 --header-timeout 1 --workers 1 || exit 1
slow() {	# slow NAME PATH [slow_client.py args]: in the background, to $T/NAME.slow
	n=$1; p=$2; shift 2
	inwl python3 "$TI/slow_client.py" 10.77.0.1 3129 "http://up.test:8005$p" "$@" \
	    >"$T/$n.slow" 2>&1 &
	SLOW="$SLOW $!"
}
SLOW=""
slow close /close/75000 --read 1024
slow chunked10 /chunked/75000/1000 --http10 --read 1024
slow length /length/75000 --read 1024
slow pipelined /length/75000 --read 1024 --then 'GET http://other.test/ HTTP/1.1\r\n\r\n'
# These stop: a body larger than what the kernel takes (~18 KB) and
# smaller than that and the guard's 64 KiB together, so that the
# upstream's end is read while the guard still holds bytes for the client.
slow stopclose /close/50000 --hold 6 --every 0 --read 65536
slow stoplength /length/50000 --hold 6 --every 0 --read 65536
# shellcheck disable=SC2086
wait $SLOW
# exchange NAME: "reason duration_ms" of the first exchange of the client
# in $T/NAME.slow (its decision line names the client's address).
exchange() {
	python3 - "$T/C.log" "$(sed -n 's/^client=\([^ ]*\) .*/\1/p' "$T/$1.slow")" <<'PY'
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
ids = [o["id"] for o in ls if o.get("event") == "decision" and o["client"] == sys.argv[2]]
c = [o for o in ls if o.get("event") == "close" and ids and o["id"] == ids[0]]
print("%s %s" % (c[0]["reason"], c[0]["duration_ms"]) if c else "none 0")
PY
}
for n in close chunked10 length pipelined; do
	out=$(cat "$T/$n.slow"); cl=$(exchange "$n")
	case "$out" in *"status=200 body=75000 last=E end=eof"*) [ "${cl%% *}" = complete ]; r=$?;; *) r=1;; esac
	[ "$n" = pipelined ] && case "$out" in *next=403*) ;; *) r=1;; esac
	case $n in
	close) name=hostile_slow_reader_close_delimited_body_gets_last_byte_complete;;
	chunked10) name=hostile_slow_reader_http10_dechunked_body_gets_last_byte_complete;;
	length) name=hostile_slow_reader_kept_alive_body_outlives_header_timeout_complete;;
	pipelined) name=hostile_slow_reader_pipelined_deny_behind_body_gets_body_then_403;;
	esac
	check "$name" $r "$out / close: $cl"
done
for n in stopclose stoplength; do
	out=$(cat "$T/$n.slow"); cl=$(exchange "$n"); ms=${cl#* }
	case "$out" in *"end=reset"*) [ "${cl%% *}" = idle_timeout ] && [ "$ms" -ge 2500 ] &&
	    [ "$ms" -lt 6000 ]; r=$?;; *) r=1;; esac
	check "hostile_client_stops_reading_finished_${n#stop}_body_reset_at_idle_timeout" $r \
	    "$out / close: $cl"
done

# 6. 200,000 one-byte chunks de-chunked for an HTTP/1.0 client: written
# once per read of the upstream, not once per chunk (one write call each
# made the guard's writes 200,065 here).
w0=$(awk '/^syscw:/ {print $2}' "/proc/$PID_C/io")
out=$(inwl python3 "$TI/slow_client.py" 10.77.0.1 3129 http://up.test:8005/chunked/200000/1 \
    --http10 --every 0 --read 65536 --rcvbuf 262144 --timeout 20)
w1=$(awk '/^syscw:/ {print $2}' "/proc/$PID_C/io")
writes=$(( ${w1:-0} - ${w0:-0} ))
echo "# 200,000 one-byte chunks de-chunked: $writes write calls by the guard"
case "$out" in *"status=200 body=200000 last=E end=eof"*) [ -n "$w0" ] && [ "$writes" -lt 5000 ]; r=$?;; *) r=1;; esac
check hostile_200000_one_byte_chunks_dechunked_not_one_write_each $r "$writes writes / $out"

kill -0 "$PID_B" 2>/dev/null && kill -0 "$PID_C" 2>/dev/null
check guard_alive_after_hostile_upstreams $?

finish
