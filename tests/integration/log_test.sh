#!/usr/bin/env bash
# The decision log's own failures (docs/design.md, Decision log, Signals,
# Metrics):
# - a log reader that stops reading (stderr a FIFO nobody reads, two
#   workers) costs lines, never the guard: requests and
#   `egress-guardctl status` are still answered within a bound, and once
#   the reader reads again the first line is a `log_lost` record whose
#   count equals /metrics' egress_guard_log_lines_lost_total;
# - rotation: rename + SIGHUP, and rename + SIGUSR1, send the next lines
#   to a new file at the path (SIGUSR1 without any policy reload line);
#   a link planted at the path after start is refused: a warning that
#   says why, and lines go on in the old file, none to the link's target;
# - SIGHUP with no --policy is refused as `no_policy_file`, not
#   `malformed`.
# Negative control: the binary before the fix hung on the stalled FIFO
# (every worker and the control socket in a blocking write), kept writing
# the renamed file after SIGHUP, died of SIGUSR1 and logged `malformed`;
# every check below goes red on it.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }

# reqs PORT N [FIRST]: N requests, one after another, from the workload
# (each denied: the guards here run without a policy), to xFIRST.example.test
# and on. Prints how many got an answer and the seconds taken; stops at
# the first one unanswered in 3 s.
cat >"$T/reqs.py" <<'PY'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
t0 = time.monotonic()
got = 0
for i in range(n):
    try:
        s = socket.create_connection(("10.77.0.1", port), timeout=3)
        s.sendall(b"CONNECT x%d.example.test:443 HTTP/1.1\r\nHost: x\r\n\r\n" % (first + i))
        if not s.recv(100).startswith(b"HTTP/1.1 403"):
            break
        s.close()
        got += 1
    except OSError:
        break
print("%d %.1f" % (got, time.monotonic() - t0))
PY
reqs() { inwl python3 "$T/reqs.py" "$@"; }

# status NAME: exit 0 when the guard whose socket is $T/NAME.sock answers
# /v1/status within 5 s.
status() { timeout 5 "$CTL" status --control "$T/$1.sock" >/dev/null 2>&1; }
# stop PID: SIGTERM, then SIGKILL after 5 s (a hung guard ignores TERM).
stop() {
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# ---- a FIFO reader that stops reading. The reader opens the FIFO, reads
# nothing until $T/go exists, then copies everything to $T/drained until
# $T/stop exists (bounded: 120 s).
cat >"$T/reader.py" <<'PY'
import os, select, sys, time
fifo, go, stop, out = sys.argv[1:5]
fd = os.open(fifo, os.O_RDWR)	# never blocks; the guard's open finds a reader
open(fifo + ".ready", "w").close()
t0 = time.monotonic()
while not os.path.exists(go) and time.monotonic() - t0 < 120:
    time.sleep(0.05)
with open(out, "wb") as f:
    while time.monotonic() - t0 < 120:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            f.write(os.read(fd, 65536))
            f.flush()
        elif os.path.exists(stop):
            break
PY
mkfifo "$T/fifo"
start_bg "$GD" "$T/reader.out" python3 "$T/reader.py" "$T/fifo" "$T/go" "$T/stop" "$T/drained"
wait_file "$T/fifo.ready" || touch "$T/fifo.ready"
sleep 0.2
ip netns exec "$GD" "$BIN" run --listen 10.77.0.1:3128 --control "$T/P.sock" \
    --workers 2 --no-state --dns 198.18.0.53 2>"$T/fifo" &
PIDS="$PIDS $!"
PID_P=$!
for _ in $(seq 100); do status P && break; sleep 0.1; done
# 400 denied requests: their lines (~250 bytes each) are more than the
# FIFO holds (64 KiB), and nothing reads it.
set -- $(reqs 3128 400)
got=${1:-0}; secs=${2:-0}
# Twice: the first answer can leave before its own log line blocks.
status P && status P; st=$?
echo "# stalled FIFO: $got of 400 requests answered in ${secs}s; status rc=$st"
[ "$got" = 400 ] && [ "$st" -eq 0 ]
check hostile_stalled_log_fifo_never_stops_workers_or_control $? "answered=$got status_rc=$st"

touch "$T/go"
sleep 0.5
set -- $(reqs 3128 3 1000)
metric() {
	ingd curl -sS --max-time 3 --unix-socket "$T/P.sock" http://localhost/metrics |
	    sed -n 's/^egress_guard_log_lines_lost_total \([0-9]*\)$/\1/p'
}
# The log_lost line reaches the reader with the lines after it.
lost=""
for _ in $(seq 50); do
	lost=$(python3 -c '
import json, sys
n = 0; seen = 0
for line in open(sys.argv[1], "rb").read().decode().splitlines():
    o = json.loads(line)
    if o["event"] == "log_lost":
        n += o["lines"]; seen = 1
print(n if seen else "")
' "$T/drained" 2>/dev/null)
	[ -n "$lost" ] && break
	sleep 0.1
done
m=$(metric)
json_lines_valid "$T/drained"; valid=$?
echo "# drained: log_lost lines=${lost:-none}, metric=${m:-none}, valid JSON lines rc=$valid"
[ -n "$lost" ] && [ "$lost" -gt 0 ] && [ "$lost" = "$m" ] && [ "$valid" -eq 0 ] &&
    [ "${1:-0}" = 3 ]
check hostile_stalled_log_fifo_lost_lines_counted_in_log_lost_and_metric $? \
    "log_lost=${lost:-none} metric=${m:-none} valid=$valid after=${1:-0}"
touch "$T/stop"
stop "$PID_P"

# ---- rotation
start_guard R 3129 --dns 198.18.0.53 || exit 1
# has FILE EVENT [TRIES]: bounded wait for a line of EVENT in FILE.
has() {
	for _ in $(seq "${3:-50}"); do
		grep -q "\"event\":\"$2\"" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
decided() { grep -c "\"host\":\"x$2.example.test\"" "$1" 2>/dev/null; }

mv "$T/R.log" "$T/R.log.1"
kill -HUP "$PID_R"
has "$T/R.log" reload_refused
reqs 3129 1 100 >/dev/null
has "$T/R.log" decision
[ "$(decided "$T/R.log" 100)" = 1 ] && [ "$(decided "$T/R.log.1" 100)" = 0 ]
check rotate_rename_then_sighup_next_lines_in_new_file $? \
    "new=$(decided "$T/R.log" 100) old=$(decided "$T/R.log.1" 100)"
r=$(sed -n 's/.*"event":"reload_refused","result":"\([a-z_]*\)".*/\1/p' "$T/R.log" "$T/R.log.1" | head -n1)
[ "$r" = no_policy_file ]
check sighup_without_policy_refused_as_no_policy_file $? "result=${r:-none}"

mv "$T/R.log" "$T/R.log.2"
kill -USR1 "$PID_R"
for _ in $(seq 50); do [ -e "$T/R.log" ] && break; sleep 0.1; done
reqs 3129 1 200 >/dev/null
has "$T/R.log" decision
n=$(grep -c '"event":"\(reload\|reload_refused\|policy\)"' "$T/R.log" 2>/dev/null)
[ "$(decided "$T/R.log" 200)" = 1 ] && [ "$(decided "$T/R.log.2" 200)" = 0 ] &&
    [ "$n" = 0 ] && kill -0 "$PID_R"
check rotate_rename_then_sigusr1_next_lines_in_new_file_no_reload $? \
    "new=$(decided "$T/R.log" 200) old=$(decided "$T/R.log.2" 200) reload_lines=$n"

# hostile: a link planted at the path after start (to a file the guard
# must not append to). The reopen refuses it; the old file goes on.
mv "$T/R.log" "$T/R.log.3"
: >"$T/victim"
ln -s "$T/victim" "$T/R.log"
kill -USR1 "$PID_R"
has "$T/R.log.3" warning
reqs 3129 1 300 >/dev/null
for _ in $(seq 50); do [ "$(decided "$T/R.log.3" 300)" = 1 ] && break; sleep 0.1; done
w=$(grep -c '"msg":"SIGUSR1: log file not reopened.*symbolic link' "$T/R.log.3")
[ "$w" = 1 ] && [ "$(decided "$T/R.log.3" 300)" = 1 ] && [ ! -s "$T/victim" ] &&
    [ -L "$T/R.log" ]
check hostile_reopen_refuses_link_planted_at_path_old_file_kept $? \
    "warning=$w old=$(decided "$T/R.log.3" 300) victim_bytes=$(stat -c %s "$T/victim")"
cat "$T/R.log.1" "$T/R.log.2" "$T/R.log.3" >"$T/R.all"
json_lines_valid "$T/R.all"
check rotated_logs_stay_one_json_object_per_line $?
stop "$PID_R"

finish
