#!/usr/bin/env bash
# SIGHUP reloads a large --policy off the event loop (docs/design.md,
# Policy authority, SIGHUP): the file is read, parsed and checked on a
# check thread, in the pushes' queue, and only installed on the loop.
# - a reload of a 200,000-entry policy is measured first; during a second
#   one, echo round trips through a live tunnel (worker 0: --workers 1)
#   and GET /v1/health must stay well below the reload's duration;
# - SIGHUPs while a reload is checked are queued, and one while a reload
#   already waits is folded into it, with a `reload` line that says so;
# - SIGTERM while a reload waits answers it `reload_refused` `unavailable`
#   (never lost in silence); the one in flight completes.
# Negative control: the binary before the fix parsed the file on the loop:
# the tunnel and /v1/health froze for the whole reload, and three SIGHUPs
# were three reloads one after another (no "already waits" line).
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "FAIL build: binaries missing"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }
cat >"$T/zone.json" <<'Z'
{"api.example.test": {"A": ["198.18.1.10"]}}
Z
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_listener echo 198.18.1.10:7 --raw

# policy EPOCH N [TAG]: an unsigned compiled policy of N entries,
# api.example.test:7 and others (TAG makes their names differ) → $T/pEPOCH.json.
policy() {
	python3 -c '
import json, sys
n, tag = int(sys.argv[1]), sys.argv[2]
h = ["api.example.test:7"] + ["h%d.%s.example.test:443" % (i, tag) for i in range(n - 1)]
print(json.dumps({"network_policy": "allowlist", "allowed_hosts": h}))' \
	    "$2" "${3:-a}" >"$T/prof$1.json"
	"$CTL" compile "$T/prof$1.json" --epoch "$1" >"$T/p$1.json"
}
# install EPOCH: the --policy file becomes $T/pEPOCH.json (rename: a
# reload reads the old file or the new one, never half of it).
install() { cp "$T/p$1.json" "$T/live.tmp" && mv "$T/live.tmp" "$T/live.json"; }
count() { grep -c "$1" "$T/R.log" 2>/dev/null; }
now() { date +%s.%N; }
# reload_wait EPOCH: after a SIGHUP, until the policy line of EPOCH (at
# most 60 s); prints the seconds since $T0.
reload_wait() {
	for _ in $(seq 3000); do
		grep -q "\"event\":\"policy\",\"policy_epoch\":$1," "$T/R.log" && break
		sleep 0.02
	done
	python3 -c 'import sys; print("%.3f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$T0" "$(now)"
}

policy 1 5
# 999,999 entries, 47 MB: the audit's file, under the 1,000,000-entry /
# 64 MiB bounds. Parsing it takes ~0.25 s here (200,000: ~0.1 s, too
# short to tell a stall from scheduling noise on two shared CPUs).
N=${RELOAD_ENTRIES:-999999}
policy 2 "$N" a
policy 3 "$N" b
policy 14 "$N" c
policy 15 "$N" d
install 1
chmod 0755 "$T"

# --workers 1: the tunnel is on worker 0, the loop SIGHUP runs on.
start_guard R 3128 --policy "$T/live.json" --workers 1 --dns 198.18.0.53 \
    --allow-range 198.18.0.0/15 || exit 1

# ---- the reload's own duration, with nothing else running
install 2
T0=$(now); kill -HUP "$PID_R"; d2=$(reload_wait 2)

# ---- a second one, timed from a live tunnel and from /v1/health
# probe.py echo|health T: every 5 ms until $T/stop (at most 60 s), an
# 8-byte round trip through one tunnel, or a GET /v1/health on a new
# connection; prints "n=N worst_ms=W bad=B" (B: answers other than 200).
cat >"$T/probe.py" <<'PY'
import os, socket, sys, time
mode, T = sys.argv[1], sys.argv[2]
def read_exactly(s, n):
    got = b""
    while len(got) < n:
        c = s.recv(n - len(got))
        if not c:
            sys.exit("closed after %r" % got)
        got += c
    return got
def tunnel():
    s = socket.create_connection(("10.77.0.1", 3128), timeout=5)
    s.sendall(b"CONNECT api.example.test:7 HTTP/1.1\r\nHost: x\r\n\r\n")
    h = b""
    while b"\r\n\r\n" not in h:
        h += read_exactly(s, 1)
    assert h.startswith(b"HTTP/1.1 200"), h
    s.settimeout(60)
    return s
def echo(s):
    s.sendall(b"12345678")
    return read_exactly(s, 8) == b"12345678"
def health(_):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)
    s.connect(T + "/R.sock")
    s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    r = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        r += c
    s.close()
    return r.startswith(b"HTTP/1.1 200")
s, once = (tunnel(), echo) if mode == "echo" else (None, health)
n, worst, bad, end = 0, 0.0, 0, time.monotonic() + 60
while time.monotonic() < end:
    t = time.monotonic()
    bad += not once(s)
    worst = max(worst, time.monotonic() - t)
    n += 1
    if n == 1:
        open("%s/%s.ready" % (T, mode), "w").write("1")
    if os.path.exists(T + "/stop"):
        break
    time.sleep(0.005)
print("n=%d worst_ms=%.0f bad=%d" % (n, worst * 1000, bad))
PY
# measure EPOCH: the probes through a reload to $T/pEPOCH.json; sets d3,
# ew, hw, echo_out, health_out and figures.
measure() {
	rm -f "$T/stop" "$T/echo.ready" "$T/health.ready"
	inwl python3 "$T/probe.py" echo "$T" >"$T/echo.out" 2>&1 &
	EPID=$!; PIDS="$PIDS $EPID"
	ingd python3 "$T/probe.py" health "$T" >"$T/health.out" 2>&1 &
	HPID=$!; PIDS="$PIDS $HPID"
	wait_file "$T/echo.ready" 50 && wait_file "$T/health.ready" 50
	sleep 0.3
	install "$1"
	T0=$(now); kill -HUP "$PID_R"; d3=$(reload_wait "$1")
	sleep 0.2
	touch "$T/stop"
	wait "$EPID"; wait "$HPID"
	echo_out=$(cat "$T/echo.out"); health_out=$(cat "$T/health.out")
	ew=$(sed -n 's/.*worst_ms=\([0-9]*\).*/\1/p' "$T/echo.out")
	hw=$(sed -n 's/.*worst_ms=\([0-9]*\).*/\1/p' "$T/health.out")
	figures="reload ${d2}s / ${d3}s; echo $echo_out; health $health_out"
	echo "# $figures"
}
under() { [ -n "$1" ] && python3 -c 'import sys; sys.exit(not (int(sys.argv[1]) < 100 and int(sys.argv[1]) < float(sys.argv[2]) * 500))' "$1" "$d3"; }
calm() { under "$ew" && under "$hw" && case "$echo_out$health_out" in *bad=0*bad=0) true;; *) false;; esac; }
measure 3
# Two shared CPUs (the suite runs two scripts at once): a probe
# descheduled once can pass 100 ms while the loop is free, which the other
# probe, on the same loop, does not see. A stall of the loop repeats: one
# more reload, of another policy of the same size, must then be calm too.
if ! calm; then
	echo "# one retry: $figures"
	policy 13 "$N" e
	measure 13
fi
# The reload must be long enough for a stall to show (0.15-0.6 s here;
# a loaded machine is slower, not faster); the worst round trip must
# stay under 100 ms and under half of it.
python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 0.1)' "$d3"
check reload_of_large_policy_long_enough_to_show_a_stall $? "$figures"
under "$ew" && case "$echo_out" in *bad=0) true;; *) false;; esac
check tunnel_echo_not_stalled_during_sighup_reload $? "$figures"
under "$hw" && case "$health_out" in *bad=0) true;; *) false;; esac
check health_not_stalled_during_sighup_reload $? "$figures"

# sigs.py PID SIG...: SIGHUP, then, once its parse runs (polled every ms:
# the thread count rises, the check thread's and the digest's), each SIG
# 10 ms apart; prints "in_flight=1" when they still ran after the last
# one (what the checks below need: else the detail says so).
cat >"$T/sigs.py" <<'PY'
import os, signal, sys, time
pid, sigs = int(sys.argv[1]), sys.argv[2:]
def threads():	# but the own-address re-readers (eg-ifaddr)
    n = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                n += f.read().strip() != "eg-ifaddr"
        except OSError:
            pass
    return n
base = threads()
os.kill(pid, signal.SIGHUP)
end = time.monotonic() + 10
while threads() <= base and time.monotonic() < end:
    time.sleep(0.001)
for s in sigs:
    time.sleep(0.01)
    os.kill(pid, getattr(signal, "SIG" + s))
print("in_flight=%d" % (threads() > base))
PY
# ---- SIGHUPs while a reload is checked: the first waits behind it (and
# finds the file unchanged), the next is folded into the one waiting,
# which has not read the file yet.
install 14
PU='"event":"reload","msg":"SIGHUP: policy unchanged"'
PW='"msg":"SIGHUP: a reload already waits'
u0=$(count "$PU"); w0=$(count "$PW")
T0=$(now)
fl=$(python3 "$T/sigs.py" "$PID_R" HUP HUP)
d4=$(reload_wait 14)
for _ in $(seq 250); do [ "$(count "$PU")" -gt "$u0" ] && break; sleep 0.02; done
sleep 0.3
u=$(( $(count "$PU") - u0 )); w=$(( $(count "$PW") - w0 ))
[ "$fl" = in_flight=1 ] && [ "$u" = 1 ] && [ "$w" = 1 ]
check sighup_during_reload_queued_and_a_third_folded_into_the_waiting_one $? \
    "$fl reload ${d4}s unchanged=$u folded=$w"

# ---- hostile: SIGTERM while a reload waits. The one in flight completes
# (installed), the waiting one is refused `unavailable` with a line, and
# the guard exits 0.
install 15
T0=$(now)
fl=$(python3 "$T/sigs.py" "$PID_R" HUP TERM)
for _ in $(seq 300); do kill -0 "$PID_R" 2>/dev/null || break; sleep 0.1; done
wait "$PID_R"; rc=$?
p5=$(count '"event":"policy","policy_epoch":15,')
ref=$(count '"event":"reload_refused","result":"unavailable"')
[ "$fl" = in_flight=1 ] && [ "$rc" = 0 ] && [ "$p5" = 1 ] && [ "$ref" = 1 ]
check hostile_sigterm_while_a_reload_waits_refused_unavailable_not_lost $? \
    "$fl rc=$rc installed=$p5 refused=$ref $(grep reload_refused "$T/R.log" | tail -n1)"

json_lines_valid "$T/R.log"
check reload_log_lines_valid_json $?
finish
