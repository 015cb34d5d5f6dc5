# Faults and overload, black-box, in network namespaces: slowloris, running
# out of descriptors, upstreams that reset, stall, never complete the
# handshake or cut a body short, DNS servers that are slow, truncate or
# send garbage, tunnels whose readers or writers are slow, policy pushes
# while 200 tunnels stream, and SIGKILL in the middle of pushes. Each check
# prints the figures it measured; every security-relevant one has a
# negative control that shows it can fail.
#
# The workload side is tests/integration/faults_client.py (one asyncio
# process drives a thousand connections), the misbehaving upstreams are
# faults_upstream.py. About three minutes; every process is stopped and
# every namespace deleted by lib.sh's EXIT trap, by PID.
#
# FAULTS_ONLY="slowloris fds upstream memory pushes restart" runs a subset.
# EG_BUILD=DIR runs it against other binaries (a sanitizer build: the VmRSS
# bounds then print SKIP, and a leak fails the SIGTERM check).
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "FAIL build: binaries missing"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }
FC="python3 $TI/faults_client.py"
# Under a sanitizer build (make sanitize, EG_BUILD=...) VmRSS measures the
# sanitizer's shadow memory and quarantine, not the guard's: the memory
# bounds are reported as SKIP there, and leaks are LeakSanitizer's to find.
SANITIZED=0
grep -qa -e __asan_init -e __ubsan_handle "$BIN" && SANITIZED=1
# rss_check NAME RESULT DETAIL: check, or SKIP under a sanitizer build.
rss_check() {
	if [ "$SANITIZED" = 1 ]; then echo "SKIP $1: sanitizer build ($3)"; else check "$@"; fi
}
ONLY=${FAULTS_ONLY:-slowloris fds upstream memory pushes restart}
want() { case " $ONLY " in *" $1 "*) return 0;; esac; return 1; }
SECONDS=0

# ---- helpers (lib.sh is shared: these stay here)
# fds_back PID WANT [TRIES]: the descriptor count of PID once it is WANT
# again (a closing connection's socket goes a moment after its client has
# seen the end), or the last count after TRIES x 0.1 s (default 30).
fds_back() {
	for _ in $(seq "${3:-30}"); do
		n=$(fds "$1"); [ "$n" -eq "$2" ] && break; sleep 0.1
	done
	echo "$n"
}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# jget FILE EXPR: EXPR is Python over the JSON object o.
jget() { python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# start_guard_nofile NAME PORT NOFILE ARGS...: start_guard under `ulimit -n`.
start_guard_nofile() {
	name=$1; port=$2; nofile=$3; shift 3
	# shellcheck disable=SC2086
	start_bg "$GD" "$T/$name.out" bash -c "ulimit -n $nofile && exec \"\$0\" \"\$@\"" \
	    ${EG_WRAP:-} "$BIN" run --listen "10.77.0.1:$port" --log-file "$T/$name.log" \
	    --control "$T/$name.sock" --no-state ${EG_WORKERS:+--workers "$EG_WORKERS"} "$@"
	eval "PID_$name=$LASTPID"
	for _ in $(seq 100); do
		grep -q '"event":"policy"' "$T/$name.log" 2>/dev/null && return 0
		kill -0 "$LASTPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "guard $name did not start:"; cat "$T/$name.out" "$T/$name.log" 2>/dev/null
	return 1
}
pidof_guard() { eval echo "\$PID_$1"; }
# curl_t PORT URL [args]: "code connect-code seconds size reason exit"
# through the guard; body in $T/$CT.body (CT: a name for calls run side by
# side; default c).
curl_t() {
	port=$1; url=$2; shift 2
	o=$(inwl curl -sS -v --max-time 15 -o "$T/${CT:-c}.body" -x "http://10.77.0.1:$port" \
	    -w '%{http_code} %{http_connect} %{time_total} %{size_download}' "$@" "$url" \
	    2>"$T/${CT:-c}.err")
	rc=$?
	r=$(sed -n 's/^< X-Egress-Guard-Reason: \([a-z_]*\).*/\1/p' "$T/${CT:-c}.err" |
	    tr -d '\r' | head -n1)
	echo "$o ${r:--} $rc"
}
# wait_quiet NAME [S]: until guard NAME has no live connection (at most S s,
# default 10, and 10 looks a second); fails if it still has one then.
wait_quiet() {
	end=$((SECONDS + ${2:-10}))
	for _ in $(seq $((${2:-10} * 10))); do
		[ "$(active_conns "$1")" = 0 ] && return 0
		[ "$SECONDS" -lt "$end" ] || break
		sleep 0.1
	done
	return 1
}
# quiet_or_why NAME [S]: wait_quiet, printing nothing when it succeeded and
# why not otherwise (for a check's detail).
quiet_or_why() {
	wait_quiet "$@" && return 0
	echo "guard $1 still had $(active_conns "$1") live connections after ${2:-10} s; "
	return 1
}
# logq LOG EXPR: evaluates EXPR (Python) over L, the list of log objects.
logq() {
	python3 -c '
import datetime, json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
def dec(host=None, port=None):
    return [o for o in L if o.get("event") == "decision" and
            (host is None or o.get("host") == host) and (port is None or o.get("port") == port)]
def closes(peer=None):
    return [o for o in L if o.get("event") == "close" and (peer is None or o.get("peer") == peer)]
def last(xs, k):
    return xs[-1][k] if xs else "-"
def admitted_closes(peer, proto):
    """The close lines of the exchanges admitted to peer over proto."""
    ids = {d["id"] for d in dec() if d["decision"] == "allow" and d["proto"] == proto and
           d.get("peer") == peer}
    return [c for c in closes(peer) if c["id"] in ids]
def close_of(peer, proto, k="reason"):
    """Field k (reason) of the last close of an exchange admitted to peer
    over proto: "duration_ms" is the time by the guard from the start of
    the tunnel, or from forwarding the request, to the close."""
    return last(admitted_closes(peer, proto), k)
def ts(o):
    """The "ts" of log line o as a wall clock (s)."""
    return datetime.datetime.strptime(o["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
def react(peer, proto, at):
    """N MS REASONS for the closes of exchanges admitted to peer over
    proto: how many, ms from at (a wall clock, s) to the last of them."""
    cs = admitted_closes(peer, proto)
    if not cs:
        return "0 -1 none"
    return "%d %d %s" % (len(cs), int(1000 * (max(ts(c) for c in cs) - at)),
                         ",".join(sorted(set(c["reason"] for c in cs))))
print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- the internet: names, listeners, misbehaving upstreams
for a in 198.18.1.11/32 198.18.1.20/32; do ip -n "$IN" addr add "$a" dev lo; done
# 198.18.1.30 is routed nowhere from the guard: an immediate failure.
ip -n "$GD" route add blackhole 198.18.1.30/32
cat >"$T/zone.json" <<'Z'
{
 "api.example.test": {"A": ["198.18.1.10"]},
 "keep.example.test": {"A": ["198.18.1.10"]},
 "drop.example.test": {"A": ["198.18.1.10"]},
 "synd.example.test": {"A": ["198.18.1.20"]},
 "bh.example.test": {"A": ["198.18.1.30"]},
 "slow.example.test": {"A": ["198.18.1.11"], "delay_ms": 6000},
 "quick.example.test": {"A": ["198.18.1.11"], "delay_ms": 500},
 "trunc.example.test": {"A": ["198.18.1.11", "198.18.1.12", "198.18.1.13", "198.18.1.14"],
                        "mode": "truncate"},
 "garbage.example.test": {"A": ["198.18.1.11"], "mode": "garbage"}
}
Z
hosts="api.example.test:80 198.18.1.10:80 api.example.test:7 api.example.test:9001 api.example.test:9002
api.example.test:9004 api.example.test:9005 api.example.test:9006 synd.example.test:80
synd.example.test:81 bh.example.test:80 slow.example.test:80 quick.example.test:80
trunc.example.test:80 garbage.example.test:80 keep.example.test:7 drop.example.test:7"
python3 - "$T/policy.json" $hosts <<'P'
import json, sys
allow = [{"host": h, "port": int(p)} for h, _, p in (a.rpartition(":") for a in sys.argv[2:])]
json.dump({"schema": "egress-guard.policy.v1", "mode": "allowlist", "epoch": 1,
           "allow": allow}, open(sys.argv[1], "w"))
P
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_listener pub 198.18.1.10:80
start_listener echo 198.18.1.10:7 --raw
start_listener dnsdst 198.18.1.11:80
start_listener synd 198.18.1.20:80
start_listener synd81 198.18.1.20:81
upstream() {	# upstream NAME PORT MODE
	start_bg "$IN" "$T/$1.out" python3 "$TI/faults_upstream.py" --listen "198.18.1.10:$2" \
	    --mode "$3" --log "$T/$1.log" --ready "$T/$1.ready"
	wait_file "$T/$1.ready"
}
upstream rst 9001 rst
upstream silent 9002 silent
upstream half 9004 halfbody
upstream slowread 9005 slowread
upstream sink 9006 sink
# Nothing from the guard completes a handshake with 198.18.1.20:80.
inin nft -f - <<'N'
table inet faults {
	chain input {
		type filter hook input priority 0; policy accept;
		ip daddr 198.18.1.20 tcp dport 80 tcp flags syn drop
	}
}
N
COMMON="--dns 198.18.0.53 --allow-range 198.18.0.0/15"

# =====================================================================
# slowloris: 1,000 connections sending a byte a second
if want slowloris; then
start_guard_nofile S 3140 8192 --policy "$T/policy.json" $COMMON --header-timeout 3 || exit 1
start_guard SC 3141 --policy "$T/policy.json" $COMMON || exit 1	# header timeout 10 s
S=$PID_S
fd0=$(fds "$S")
set -- $(curl_t 3140 http://api.example.test/ -p)
lat0=$3
inwl $FC slowloris --target 10.77.0.1:3140:1000 --target 10.77.0.1:3141:50 \
    --observe 7 --ready "$T/slow.ready" --times "$T/slow.times" >"$T/slow.json" 2>"$T/slow.err" &
SLOWPID=$!; PIDS="$PIDS $SLOWPID"
wait_file "$T/slow.ready" 200
# The slow clients are all connected as the client sees it: until the
# guard holds them all (it may still be accepting; they get their 408 3 s
# after their accept, so this is short: at most 3 s).
fdmax=0
for _ in $(seq 60); do
	f=$(fds "$S"); [ "$f" -gt "$fdmax" ] && fdmax=$f
	[ "$fdmax" -ge $((fd0 + 1000)) ] && break
	sleep 0.05
done
lats=""; bad=0
for _ in $(seq 12); do
	f=$(fds "$S"); [ "$f" -gt "$fdmax" ] && fdmax=$f
	set -- $(curl_t 3140 http://api.example.test/ -p)
	[ "$1" = 200 ] && grep -q "hello from pub" "$T/c.body" || bad=$((bad + 1))
	lats="$lats $3"
	sleep 0.25
done
wait $SLOWPID
latmax=$(echo $lats | tr ' ' '\n' | sort -n | tail -n1)
latmed=$(echo $lats | tr ' ' '\n' | sort -n | sed -n 6p)
echo "# slowloris: guard fds $fd0 idle, $fdmax with the slow clients connected"
echo "# slowloris: curl latency idle ${lat0}s; under load median ${latmed}s max ${latmax}s ($lats )"
echo "# slowloris: $(cat "$T/slow.json")"
# Judged on the median, with a looser bound on the worst: curl's time
# includes the test's Python DNS server and listener, which share the two
# CPUs with the Python client driving 1,050 connections, and a sample can
# land on the moment the 1,000 408s go out. A guard that stalls behind the
# slow heads is slow on every sample (or times out: bad), not on one.
[ "$bad" -eq 0 ] && [ "$fdmax" -ge $((fd0 + 1000)) ] &&
    python3 -c "import sys; sys.exit(0 if float('$latmed') < 1.5 and float('$latmax') < 4.0 else 1)"
check slowloris_guard_keeps_serving_new_clients $? "bad=$bad fds=$fdmax median=${latmed}s max=${latmax}s"
# When the guard sent each 408, by its own log ("ts", wall clock), against
# the client's wall clock just before that connection's connect (T_PRE)
# and once it completed (T_CONN), matched by the client's port. The guard's
# timer starts at its accept, which comes after T_PRE: ts - T_PRE is at
# least the timeout the guard applied, whatever the load (lo). ts - T_CONN
# is the timeout plus how late the guard accepted (hi). The client's own
# close_min_s/close_max_s also carry its asyncio loop's lag: printed only.
python3 - "$T/S.log" "$T/slow.times" >"$T/slowt.json" <<'PY'
import datetime, json, sys
ts = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") == "decision" and o.get("reason") == "header_timeout":
        ts[o["client"]] = datetime.datetime.strptime(o["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
d_pre, d_conn = [], []
for line in open(sys.argv[2]):
    target, port, t_pre, t_conn = line.split()
    c = "10.77.0.2:" + port
    if target == "10.77.0.1:3140" and c in ts:
        d_pre.append(ts[c] - float(t_pre))
        d_conn.append(ts[c] - float(t_conn))
d_conn.sort()
print(json.dumps({"n": len(d_pre), "lo": round(min(d_pre), 3) if d_pre else None,
                  "hi": round(max(d_conn), 3) if d_conn else None,
                  "median": round(d_conn[len(d_conn) // 2], 3) if d_conn else None}))
PY
echo "# slowloris: 408 by the guard's log, s after connect: $(cat "$T/slowt.json")"
jget "$T/slow.json" 'o[0]' >/dev/null 2>&1 &&
    [ "$(jget "$T/slow.json" 'int(o[0]["connected"] == 1000 and o[0]["closed"] == 1000 and
        o[0]["status"].get("408", 0) == 1000)')" = 1 ] &&
    [ "$(jget "$T/slowt.json" 'int(o["n"] == 1000 and o["lo"] >= 2.5 and o["hi"] <= 5.5)')" = 1 ]
check slowloris_slow_heads_get_408_at_header_timeout $? "$(cat "$T/slow.json" "$T/slowt.json" "$T/slow.err")"
n408=$(logq "$T/S.log" 'sum(1 for d in dec() if d["reason"] == "header_timeout")')
[ "$n408" -ge 1000 ]
check slowloris_each_slow_head_logged_header_timeout $? "$n408"
# Control: the same slow clients against a 10 s header timeout are all
# still connected at 7 s: the closes above were the timeout's doing.
[ "$(jget "$T/slow.json" 'int(o[1]["connected"] == 50 and o[1]["open_at_end"] == 50)')" = 1 ]
check control_slowloris_longer_header_timeout_keeps_them_open $? "$(cat "$T/slow.json")"
why=$(quiet_or_why S); q=$?
fd1=$(fds_back "$S" "$fd0")
[ "$q" = 0 ] && [ "$fd1" -eq "$fd0" ]
check slowloris_fds_back_to_baseline $? "$why$fd0 -> $fd1"
kill "$S" "$PID_SC" 2>/dev/null
fi

# =====================================================================
# out of descriptors
if want fds; then
# F: ulimit -n 64, default --max-conns: accept has to pause. The workload
# gets 48 of the 64: the top 16 are the control socket's reserve
# (util/fdres.h, a quarter of a limit under 288).
start_guard_nofile F 3142 64 --policy "$T/policy.json" $COMMON || exit 1
F=$PID_F
fd0=$(fds "$F")
inwl $FC hold --proxy 10.77.0.1:3142 --n 150 --send "CONNECT a" --hold 4 \
    >"$T/hold1.json" 2>&1 &
HPID=$!; PIDS="$PIDS $HPID"
# Until the holders have taken every descriptor they may (python's
# start-up alone can take a second on a loaded machine): at most 3 s.
for _ in $(seq 30); do [ "$(fds "$F")" -ge 47 ] && break; sleep 0.1; done
fdfull=$(fds "$F")
# The operator asks for the status meanwhile: the control socket answers
# from its reserve.
"$CTL" status --control "$T/F.sock" >"$T/Fstatus.out" 2>&1 &
SPID=$!; PIDS="$PIDS $SPID"
t0=$(ticks "$F"); sleep 2; t1=$(ticks "$F")
# A new client while every descriptor is taken: it waits in the backlog and
# is served once the holders leave.
set -- $(curl_t 3142 http://api.example.test/ -p)
wait $HPID
echo "# fd exhaustion: fds $fd0 idle, $fdfull full (limit 64); cpu $((t1 - t0)) ticks in 2 s; curl during: $*"
echo "# fd exhaustion: holders $(cat "$T/hold1.json")"
grep -q "accept paused" "$T/F.log"; paused=$?
[ $paused -eq 0 ] && [ "$fdfull" -ge 47 ] && [ $((t1 - t0)) -lt 20 ]
check fd_exhaustion_pauses_accept_without_spinning $? "fds=$fdfull ticks=$((t1 - t0)) paused=$paused"
[ "$1" = 200 ]
check fd_exhaustion_client_waiting_in_backlog_served_after_recovery $? "$*"
# The listeners pause for 100 ms at a time through the whole hold (about
# 40 pauses per worker): the log has one line per worker for it, not one
# per pause (a client that holds every descriptor must not flood the
# log as well).
npaused=$(grep -c '"msg":"accept paused' "$T/F.log")
[ "$npaused" -ge 1 ] && [ "$npaused" -le "${EG_WORKERS:-$(nproc)}" ]
check fd_exhaustion_accept_paused_logged_once_per_worker_not_per_pause $? \
    "$npaused lines, workers ${EG_WORKERS:-$(nproc)}: $(grep -m3 "accept paused" "$T/F.log")"
wait "$SPID"; src=$?
[ "$src" -eq 0 ] && grep -q '"epoch"' "$T/Fstatus.out"
check fd_exhaustion_control_answers_from_its_reserve $? \
    "exit $src: $(head -c 300 "$T/Fstatus.out")"
# It never ran out: no pause, no line.
nctl=$(grep -c '"msg":"control: accept paused' "$T/F.log")
[ "$nctl" -eq 0 ]
check fd_exhaustion_control_never_paused $? "$nctl lines"
why=$(quiet_or_why F); q=$?
fd1=$(fds_back "$F" "$fd0")
[ "$q" = 0 ] && [ "$fd1" -eq "$fd0" ]
check fd_exhaustion_fds_back_to_baseline $? "$why$fd0 -> $fd1"

# Admitted requests while descriptors run out: the upstream socket and the
# resolver's socket cannot be opened. Every client still gets an answer
# (a tunnel, 502 or 504), none hangs, the guard survives.
inwl $FC hold --proxy 10.77.0.1:3142 --n 100 --send "CONNECT " \
    --then '198.18.1.10:80 HTTP/1.1\r\n\r\n' --then-at 1.5 --hold 9 >"$T/hold2.json" 2>&1 &
H1=$!
inwl $FC hold --proxy 10.77.0.1:3142 --n 100 --send "CONNECT " \
    --then 'api.example.test:80 HTTP/1.1\r\n\r\n' --then-at 1.5 --hold 9 >"$T/hold3.json" 2>&1 &
H2=$!
PIDS="$PIDS $H1 $H2"
sleep 2; t0=$(ticks "$F"); sleep 2; t1=$(ticks "$F")
wait $H1 $H2
echo "# fd exhaustion, admitted requests: literal $(cat "$T/hold2.json"); name $(cat "$T/hold3.json"); cpu $((t1 - t0)) ticks in 2 s"
r=0
for f in hold2 hold3; do
	[ "$(jget "$T/$f.json" 'int(o["connected"] == 100 and
	    sum(v for k, v in o["answers"].items() if k.split(":")[0] in ("200", "502", "504")) == 100)')" = 1 ] || r=1
done
kill -0 "$F" && [ $((t1 - t0)) -lt 100 ] || r=1
# On failure, what the guard says it did: decisions and closes by reason.
check fd_exhaustion_admitted_requests_all_answered_none_hang $r \
    "$(grep -o '"event":"[a-z]*"\|"reason":"[a-z_]*"' "$T/F.log" | sort | uniq -c | tr -s ' \n' ' ')"
out=$(curl_t 3142 http://api.example.test/ -p)
why=$(quiet_or_why F); q=$?
fd1=$(fds_back "$F" "$fd0")
case "$out" in 200*) [ "$q" = 0 ] && [ "$fd1" -eq "$fd0" ]; r=$?;; *) r=1;; esac
check fd_exhaustion_recovers_and_fds_back_after_admitted_storm $r "$why$out; fds $fd0 -> $fd1"

# F2: --max-conns 40 below the descriptor limit: refuse with 503. The
# limit leaves room for 40 clients beside what the guard holds idle,
# which grows with --workers (each has its loop, eventfd, resolver and
# listeners: 20 descriptors idle with 2 workers, 32 with 4), so 96,
# not F's 64: at 64, 4 workers ran out of descriptors before 40 clients
# and the limit under test was never reached.
start_guard_nofile F2 3143 96 --policy "$T/policy.json" $COMMON --max-conns 40 || exit 1
F2=$PID_F2
fd0=$(fds "$F2")
inwl $FC hold --proxy 10.77.0.1:3143 --n 100 --send "CONNECT a" --hold 4 \
    >"$T/hold4.json" 2>&1 &
HPID=$!; PIDS="$PIDS $HPID"
# Until the 40 admitted holders are in (at most 10 s), as above.
for _ in $(seq 100); do [ "$(fds "$F2")" -ge $((fd0 + 40)) ] && break; sleep 0.1; done
t0=$(ticks "$F2")
out=$(curl_t 3143 http://api.example.test/ -p)
sleep 1.5; t1=$(ticks "$F2")
wait $HPID
echo "# max-conns 40: holders $(cat "$T/hold4.json"); curl during: $out; cpu $((t1 - t0)) ticks"
case "$out" in *503*overloaded*) r=0;; *) r=1;; esac
[ "$(jget "$T/hold4.json" 'o["answers"].get("503:overloaded", 0)')" -ge 55 ] &&
    [ "$(jget "$T/hold4.json" 'o["answers"].get("0:-", 0)')" -le 40 ] &&
    [ $((t1 - t0)) -lt 20 ] || r=1
check max_conns_below_fd_limit_answers_503_overloaded $r "$out"
why=$(quiet_or_why F2); q=$?
out=$(curl_t 3143 http://api.example.test/ -p)
# The guard closes its side of the tunnel just after curl has seen the end:
# until the count is back (at most 3 s).
fd1=$(fds_back "$F2" "$fd0")
case "$out" in 200*) [ "$q" = 0 ] && [ "$fd1" -eq "$fd0" ]; r=$?;; *) r=1;; esac
check max_conns_recovers_and_fds_back_to_baseline $r "$why$out; fds $fd0 -> $fd1"
kill "$F" "$F2" 2>/dev/null
fi

# =====================================================================
# upstream and DNS faults
if want upstream || want memory; then
# U: short timeouts. M: the defaults (300 s idle), the control for U and
# the guard of the memory tests.
start_guard U 3144 --policy "$T/policy.json" $COMMON --idle-timeout 2 \
    --connect-timeout 2 --dns-timeout 2 || exit 1
start_guard M 3145 --policy "$T/policy.json" $COMMON || exit 1
fi
if want upstream; then
U=$PID_U
PR="inwl $FC probe --proxy 10.77.0.1:3144"

# One pass of every fault, checking each outcome (and warming the guard up
# for the leak check after it).
fault_pass() {
	# The faults that take a timeout run side by side in the background.
	# An upstream that accepts and never answers: a tunnel, a request.
	$PR --connect api.example.test:9002 --send hello --wait 6 >"$T/p_silent.json" &
	fp="$!"
	CT=silent curl_t 3144 http://api.example.test:9002/ >"$T/h_silent" &
	fp="$fp $!"
	# Control: through M (idle timeout 300 s) the same tunnel stays open.
	inwl $FC probe --proxy 10.77.0.1:3145 --connect api.example.test:9002 --send hello \
	    --wait 4 >"$T/p_silent_ctl.json" &
	fp="$fp $!"
	# SYNs dropped: no handshake ever.
	CT=synd curl_t 3144 http://synd.example.test/ -p >"$T/h_synd" &
	fp="$fp $!"
	CT=synda curl_t 3144 http://synd.example.test/ >"$T/h_synd_abs" &
	fp="$fp $!"
	# DNS: slow beyond the timeout, truncated, garbage.
	for n in slow trunc garbage; do
		CT=$n curl_t 3144 "http://$n.example.test/" -p >"$T/h_$n" &
		fp="$fp $!"
	done
	PIDS="$PIDS $fp"
	# RST in the middle of a tunnel: the bytes before it arrive, then the
	# client's connection ends; the close says reset.
	$PR --connect api.example.test:9001 --send hello --wait 5 >"$T/p_rst.json"
	# ... and in the middle of an absolute-form response.
	h_rst=$(curl_t 3144 http://api.example.test:9001/)
	# A blackhole route: fails at once.
	h_bh=$(curl_t 3144 http://bh.example.test/ -p)
	# Content-Length 100000, 50000 sent, then FIN.
	h_half=$(curl_t 3144 http://api.example.test:9004/)
	inwl python3 -c '
import socket, time
s = socket.create_connection(("10.77.0.1", 3144), timeout=8)
s.sendall(b"GET http://api.example.test:9004/ HTTP/1.1\r\nHost: api.example.test:9004\r\n\r\n")
t0, got, how = time.monotonic(), b"", "timeout"
try:
    while True:
        d = s.recv(65536)
        if not d:
            how = "eof"; break
        got += d
except socket.timeout:
    pass
except ConnectionResetError:
    how = "reset"
body = got.partition(b"\r\n\r\n")[2]
print(how, len(body), int((time.monotonic() - t0) * 1000))' >"$T/p_half.txt"
	# The same truncated answer through a CONNECT tunnel: the FIN is
	# passed on, the tunnel ends as eof.
	$PR --connect api.example.test:9004 --send 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' \
	    --wait 5 >"$T/p_halft.json"
	for p in $fp; do wait "$p"; done
	h_silent=$(cat "$T/h_silent"); h_synd=$(cat "$T/h_synd"); h_synd_abs=$(cat "$T/h_synd_abs")
	h_slow=$(cat "$T/h_slow"); h_trunc=$(cat "$T/h_trunc"); h_garb=$(cat "$T/h_garbage")
	dnsdst_empty=1; log_empty dnsdst || dnsdst_empty=0
	# Within the DNS timeout: works (after the check above that nothing
	# reached 198.18.1.11).
	h_quick=$(curl_t 3144 http://quick.example.test/ -p)
	c_rst=$(logq "$T/U.log" 'close_of("198.18.1.10:9001", "connect")')
	c_hrst=$(logq "$T/U.log" 'close_of("198.18.1.10:9001", "http")')
	c_silent=$(logq "$T/U.log" 'close_of("198.18.1.10:9002", "connect")')
	c_half=$(logq "$T/U.log" 'close_of("198.18.1.10:9004", "http")')
	# The guard's own durations (ms) of the same exchanges, from its close
	# lines: the figures the time bounds below judge, free of the test's
	# load (Python start-up, the DNS server, curl).
	d_rst=$(logq "$T/U.log" 'close_of("198.18.1.10:9001", "connect", "duration_ms")')
	d_silent=$(logq "$T/U.log" 'close_of("198.18.1.10:9002", "connect", "duration_ms")')
	d_hsilent=$(logq "$T/U.log" 'close_of("198.18.1.10:9002", "http", "duration_ms")')
	d_half=$(logq "$T/U.log" 'close_of("198.18.1.10:9004", "http", "duration_ms")')
}
fault_pass
echo "# rst tunnel $(cat "$T/p_rst.json") close=$c_rst after ${d_rst} ms; absolute-form: $h_rst close=$c_hrst"
echo "# silent tunnel $(cat "$T/p_silent.json") close=$c_silent after ${d_silent} ms; absolute-form: $h_silent, guard ${d_hsilent} ms"
echo "# syn-drop: $h_synd; absolute-form: $h_synd_abs; blackhole: $h_bh"
echo "# half body: $h_half close=$c_half after ${d_half} ms; raw: $(cat "$T/p_half.txt"); tunnel: $(cat "$T/p_halft.json")"
echo "# dns slow: $h_slow; truncated: $h_trunc; garbage: $h_garb; quick: $h_quick"

# Timing bounds. The guard's own durations are judged where its log has
# them; the figures measured by the test (curl's time_total, the probes'
# elapsed_ms) include the guard's DNS lookup through the test's Python
# server and the scheduling of eight background jobs (most of them Python
# start-ups) on two loaded CPUs: they get twice the old slack, and stay
# below what the broken behaviour gives (U: --connect-timeout 2,
# --idle-timeout 2, --dns-timeout 2; the defaults 10, 300 and 5).
# The RST closes the tunnel about 0.5 s after it opened (faults_upstream
# rst): well before the 2 s idle timeout that a guard deaf to the reset
# would close it at (as idle_timeout).
[ "$(jget "$T/p_rst.json" 'int(o["status"] == 200 and o["got"] >= 20000 and
    o["how"] in ("eof", "reset") and o["elapsed_ms"] < 6000)')" = 1 ] && [ "$c_rst" = reset ] &&
    [ "$d_rst" != - ] && [ "$d_rst" -lt 1500 ]
check upstream_rst_mid_tunnel_closes_client_reason_reset $? "$(cat "$T/p_rst.json") close=$c_rst after ${d_rst} ms"
set -- $h_rst
[ "$1" = 200 ] && [ "$4" -ge 20000 ] && [ "$4" -lt 1000000 ] && [ "$6" != 0 ] &&
    case "$c_hrst" in reset|"upstream closed mid-response") true;; *) false;; esac
check upstream_rst_mid_response_closes_client_and_logs $? "$h_rst close=$c_hrst"

# The idle timeout by the guard's clock (1.5 to 4.5 s: 2 s after the
# probe's "hello"); the probe, which waits 6 s, saw the end (eof) and not
# before 1.5 s.
[ "$(jget "$T/p_silent.json" 'int(o["status"] == 200 and o["how"] == "eof" and
    1500 <= o["elapsed_ms"])')" = 1 ] && [ "$c_silent" = idle_timeout ] &&
    [ "$d_silent" != - ] && [ "$d_silent" -ge 1500 ] && [ "$d_silent" -le 4500 ]
check upstream_silent_tunnel_closed_at_idle_timeout $? "$(cat "$T/p_silent.json") close=$c_silent after ${d_silent} ms"
set -- $h_silent
[ "$1" = 504 ] && [ "$5" = upstream_timeout ] &&
    [ "$d_hsilent" != - ] && [ "$d_hsilent" -ge 1500 ] && [ "$d_hsilent" -le 4500 ] &&
    python3 -c "import sys; sys.exit(0 if 1.5 <= $3 <= 6.5 else 1)"
check upstream_silent_absolute_form_is_504_upstream_timeout $? "$h_silent; guard ${d_hsilent} ms"
[ "$(jget "$T/p_silent_ctl.json" 'int(o["status"] == 200 and o["how"] == "timeout")')" = 1 ]
check control_silent_tunnel_stays_open_with_long_idle_timeout $? "$(cat "$T/p_silent_ctl.json")"

set -- $h_synd
a=$*
set -- $h_synd_abs
[ "$(echo "$a" | cut -d' ' -f2)" = 504 ] && [ "$(echo "$a" | cut -d' ' -f5)" = upstream_timeout ] &&
    [ "$1" = 504 ] && [ "$5" = upstream_timeout ] &&
    python3 -c "import sys; sys.exit(0 if 1.5 <= $(echo "$a" | cut -d' ' -f3) <= 6.5 and 1.5 <= $3 <= 6.5 else 1)" &&
    log_empty synd
check upstream_syn_dropped_is_504_upstream_timeout_within_connect_timeout $? "$a / $h_synd_abs"
# "At once": under the 2 s connect timeout that a guard waiting out the
# unreachable route would take (and then answer 504 upstream_timeout).
set -- $h_bh
[ "$2" = 502 ] && [ "$5" = upstream_unreachable ] &&
    python3 -c "import sys; sys.exit(0 if $3 < 1.8 else 1)"
check upstream_blackhole_route_is_502_unreachable_at_once $? "$h_bh"

set -- $h_half
read -r how blen bms <"$T/p_half.txt"
[ "$1" = 200 ] && [ "$4" = 50000 ] && [ "$6" = 18 ] &&
    [ "$c_half" = "upstream closed mid-response" ] && [ "$d_half" != - ] && [ "$d_half" -lt 1500 ] &&
    [ "$how" = eof ] && [ "$blen" = 50000 ] && [ "$bms" -lt 6000 ]
check upstream_short_content_length_body_closes_client_and_logs $? "$h_half close=$c_half after ${d_half} ms raw=$how/$blen/${bms}ms"
[ "$(jget "$T/p_halft.json" 'int(o["status"] == 200 and o["how"] == "eof" and o["got"] > 50000)')" = 1 ]
check upstream_short_body_in_tunnel_passes_eof_on $? "$(cat "$T/p_halft.json")"

# slow.example.test answers after 6 s: a guard that waited for the answer
# (or for the guard's default --dns-timeout, 5 s) is past 4.5 s; the 2 s one is not.
set -- $h_slow
[ "$2" = 504 ] && [ "$5" = dns_timeout ] &&
    python3 -c "import sys; sys.exit(0 if $3 < 4.5 else 1)"
check dns_slower_than_dns_timeout_is_504_dns_timeout $? "$h_slow"
r=0
for h in "$h_trunc" "$h_garb"; do
	set -- $h
	case "$2:$5" in 502:dns_failure|504:dns_timeout) ;; *) r=1;; esac
done
[ "$dnsdst_empty" = 1 ] || r=1
check dns_truncated_and_garbage_answers_deny_never_connect $r "trunc: $h_trunc; garbage: $h_garb; dnsdst_empty=$dnsdst_empty"
set -- $h_quick
[ "$2" = 200 ] && [ -s "$T/dnsdst.log" ]
check control_dns_slow_but_within_timeout_works $? "$h_quick"
# Control: without the drop rule the same destination answers.
inin nft delete table inet faults
out=$(curl_t 3144 http://synd.example.test/ -p)
case "$out" in 200*) r=0;; *) r=1;; esac
check control_syn_drop_removed_same_destination_connects $r "$out"
inin nft -f - <<'N'
table inet faults {
	chain input {
		type filter hook input priority 0; policy accept;
		ip daddr 198.18.1.20 tcp dport 80 tcp flags syn drop
	}
}
N

# Leaks: ten of every fault at once, twice. The first storm brings the
# guard to its high-water mark (the allocator keeps freed memory); after
# the second, descriptors must be exactly where the first left them and
# VmRSS within 1 MiB (heap fragmentation under 130 concurrent faults moves
# it by a few hundred KiB; a leaked head buffer per request would be 2 MiB).
# For byte-exact leak checking run this script with EG_BUILD pointing at a
# sanitizer build: the SIGTERM check below then fails on any leak (the
# VmRSS bounds do not apply to a sanitizer build).
storm() {
	spids=""
	for i in $(seq 10); do
		$PR --connect api.example.test:9001 --send hello --wait 5 >/dev/null 2>&1 &
		spids="$spids $!"
		$PR --connect api.example.test:9002 --send hello --wait 6 >/dev/null 2>&1 &
		spids="$spids $!"
		$PR --connect api.example.test:9004 --send 'GET / HTTP/1.1\r\n\r\n' --wait 5 \
		    >/dev/null 2>&1 &
		spids="$spids $!"
		for u in http://api.example.test:9001/ http://api.example.test:9002/ \
		    http://api.example.test:9004/ http://synd.example.test/; do
			inwl curl -s -o /dev/null --max-time 10 -x http://10.77.0.1:3144 "$u" &
			spids="$spids $!"
		done
		for u in http://synd.example.test/ http://bh.example.test/ http://slow.example.test/ \
		    http://trunc.example.test/ http://garbage.example.test/ http://quick.example.test/; do
			inwl curl -s -o /dev/null --max-time 10 -p -x http://10.77.0.1:3144 "$u" &
			spids="$spids $!"
		done
	done
	PIDS="$PIDS $spids"
	for p in $spids; do wait "$p" 2>/dev/null; done
	why=$why$(quiet_or_why U) || sq=1
	sleep 3		# c-ares gives up on the garbage and truncated queries
}
why=$(quiet_or_why U); sq=$?
sleep 3
fdw=$(fds "$U"); rssw=$(rss "$U")
storm
# Then until the descriptors are back where they were (at most 5 s more).
fd0=$(fds_back "$U" "$fdw" 50); rss0=$(rss "$U")
storm
fd1=$(fds_back "$U" "$fdw" 50); rss1=$(rss "$U")
echo "# upstream faults, 130 at once, twice: fds $fdw -> $fd0 -> $fd1; VmRSS $rssw -> $rss0 -> $rss1 KiB (tolerance +1024 KiB)"
[ "$sq" = 0 ] && [ "$fd1" -eq "$fdw" ] && [ "$fd0" -eq "$fdw" ] && kill -0 "$U"
check upstream_faults_leak_no_fd $? "${why}fds $fdw -> $fd0 -> $fd1"
[ "$rss1" -le $((rss0 + 1024)) ]
rss_check upstream_faults_vmrss_back_within_1mib $? "rss $rss0 -> $rss1"
json_lines_valid "$T/U.log"
check upstream_faults_log_stays_one_json_object_per_line $?
# SIGTERM after all that: exits 0 (a sanitizer build, EG_BUILD=..., would
# exit non-zero here on a leak or a memory error).
kill -TERM "$U"
for _ in $(seq 50); do kill -0 "$U" 2>/dev/null || break; sleep 0.1; done
wait "$U"
check upstream_faults_guard_exits_0_on_sigterm $? "$(head -c 2000 "$T/U.out")"
fi

# =====================================================================
# memory bound: 8 tunnels with a slow reader at one end
if want memory; then
M=$PID_M
out=$(curl_t 3145 http://api.example.test/ -p)	# warm up
rss0=$(rss "$M")
BOUND=$((rss0 + 4096))
# flood_case NAME FLOOD-ARGS...: runs one flood (the client aborts its
# connections with a RST at the end), prints "peak sent received quiet_ms"
# (quiet_ms: from the abort until the guard holds no connection, as the
# test polls it) "aborted_at" (wall clock, seconds).
flood_case() {
	name=$1; shift
	echo 5 >"/proc/$M/clear_refs"	# VmHWM := VmRSS
	inwl $FC flood --proxy 10.77.0.1:3145 --n 8 --secs 3 "$@" >"$T/fl_$name.json" 2>&1
	peak=$(hwm "$M")
	t0=$(date +%s%N)
	wait_quiet M 20
	t1=$(date +%s%N)
	echo "$peak $(jget "$T/fl_$name.json" 'o["sent"]') $(jget "$T/fl_$name.json" 'o["received"]')" \
	    "$(( (t1 - t0) / 1000000 )) $(jget "$T/fl_$name.json" 'o["aborted_at"]')"
}
# react_ms PEER ABORTED_AT: from the client's abort to the last of the 8
# tunnels' close lines for PEER, by the log's own timestamps (the guard's
# reaction, whatever the load on the test's poller).
react_ms() {
	logq "$T/M.log" 'int(1000 * (max(ts(o) for o in closes("'"$1"'")[-8:]) - '"$2"'))'
}
# The controls (a reader at the far end) move a fixed count of bytes,
# with up to 15 s to do it, and stop there: UPC_WANT, 32 MiB past what
# the slow case got into the kernel's buffers (and 100 MB at least); 100 MB
# down. A rate (twice the slow case, or 100 MB, within 3 s) measured the
# Python sink and listener on two loaded CPUs as much as the guard.
set -- $(flood_case up --mode up --dest api.example.test:9005); up_peak=$1 up_sent=$2 up_quiet=$4
up_react=$(react_ms 198.18.1.10:9005 "$5")
up_reasons=$(logq "$T/M.log" '",".join(sorted(set(o["reason"] for o in closes("198.18.1.10:9005"))))')
UPC_WANT=$((up_sent + 33554432)); [ "$UPC_WANT" -ge 100000000 ] || UPC_WANT=100000000
set -- $(flood_case upctl --mode up --dest api.example.test:9006 --secs 15 --until "$UPC_WANT")
upc_peak=$1 upc_sent=$2 upc_quiet=$4
set -- $(flood_case down --mode down --dest api.example.test:80); dn_peak=$1 dn_quiet=$4
dn_react=$(react_ms 198.18.1.10:80 "$5")
set -- $(flood_case downctl --mode down --dest api.example.test:80 --read --secs 15 --until 100000000)
dnc_peak=$1 dnc_recv=$3
set -- $(flood_case uph --mode up-http --dest api.example.test:9005); uph_peak=$1 uph_sent=$2 uph_quiet=$4
uph_react=$(logq "$T/M.log" "react('198.18.1.10:9005', 'http', $5)")
set -- $(flood_case dnh --mode down-http --dest api.example.test:80); dnh_peak=$1
set -- $(flood_case dnhctl --mode down-http --dest api.example.test:80 --read --secs 15 --until 100000000)
dnhc_peak=$1 dnhc_recv=$3
echo "# memory: baseline VmRSS $rss0 KiB, bound $BOUND KiB; peaks (VmHWM, KiB):"
echo "#   tunnel up to slow reader $up_peak (client pushed $up_sent B); control fast reader $upc_peak ($upc_sent B)"
echo "#   tunnel down to non-reader $dn_peak; control reader $dnc_peak (received $dnc_recv B)"
echo "#   absolute-form POST to slow reader $uph_peak ($uph_sent B); GET to non-reader $dnh_peak; control reader $dnhc_peak ($dnhc_recv B)"
[ "$up_peak" -le "$BOUND" ] && [ "$uph_peak" -le "$BOUND" ]
rss_check memory_bound_fast_writer_slow_upstream_8_tunnels $? "up $up_peak, up-http $uph_peak, bound $BOUND"
[ "$dn_peak" -le "$BOUND" ] && [ "$dnh_peak" -le "$BOUND" ]
rss_check memory_bound_fast_upstream_non_reading_client_8_tunnels $? "down $dn_peak, down-http $dnh_peak, bound $BOUND"
# Controls: with a reader at the far end the same clients move far more,
# so the slow side really was what held them back. What the slow case
# still "sends" is the kernel's buffers filling (8 tunnels of up to 32 MiB
# of receive buffer, net.ipv4.tcp_rmem, plus send buffers: about 250 MB
# here), so the fast case need only be well past that: 32 MiB past it
# (8 times the 4 MiB the memory bound allows), and 100 MB. A guard that
# did not relay to the reader stalls at the slow case's figure.
[ "$upc_sent" -ge "$UPC_WANT" ]
check control_memory_fast_reader_moves_the_bytes_up $? "$up_sent vs $upc_sent (wanted $UPC_WANT)"
[ "$dnc_recv" -ge 100000000 ] && [ "$dnhc_recv" -ge 100000000 ]
check control_memory_reading_client_moves_the_bytes_down $? "$dnc_recv / $dnhc_recv"
# A client that aborts (RST) while its upload waits for the slow reader:
# the guard notices at once (within its 1 s look at paused sources) and
# releases the upstream, rather than keeping it until the queued bytes
# drain at 20 KiB/s or the 300 s idle timeout. The non-reading download
# case is the control: there the guard is writing to the client and the
# reset shows as a write error.
# Judged on the guard's own close lines: a poller on a loaded machine
# (curl and python per look) added up to 2 s to the same reaction.
echo "# after the abort, last close line in: up ${up_react} ms (closes: $up_reasons), down ${dn_react} ms"
echo "# after the abort, guard quiet (as polled) in: up ${up_quiet} ms, down ${dn_quiet} ms, upload to fast reader ${upc_quiet} ms, absolute-form upload ${uph_quiet} ms"
[ "$up_react" -lt 2500 ] && [ "$up_reasons" = reset ] && [ "$dn_react" -lt 2500 ]
check tunnel_client_abort_while_backpressured_released_at_once $? "up ${up_react} ms ($up_reasons), down ${dn_react} ms"
# The same for absolute-form uploads: while the client's body waits for the
# slow reader the guard does not read the client, and looks at it once a
# second for the reset (as the relay does): all 8 exchanges closed, "reset".
set -- $uph_react
[ "$1" = 8 ] && [ "$2" -ge 0 ] && [ "$2" -lt 2500 ] && [ "$3" = reset ]
check absolute_form_upload_client_abort_while_backpressured_released_at_once $? \
    "closes, ms after the abort, reasons: $uph_react"
# A request sent whole, its answer awaited from an upstream that never
# answers (9002), the client aborting (RST) after 1.5 s: through M (idle
# timeout 300 s) the guard releases the upstream within its 1 s look, not
# at the idle timeout. Judged on M's close line (polled up to 5 s).
at=$(inwl python3 - <<'PY'
import socket, struct, time
s = socket.create_connection(("10.77.0.1", 3145), timeout=5)
s.sendall(b"GET http://api.example.test:9002/ HTTP/1.1\r\nHost: api.example.test:9002\r\n\r\n")
time.sleep(1.5)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
print("%.3f" % time.time())
s.close()
PY
)
for _ in $(seq 50); do
	aw=$(logq "$T/M.log" "react('198.18.1.10:9002', 'http', ${at:-0})")
	[ "${aw%% *}" = 1 ] && break
	sleep 0.1
done
set -- $aw
[ "$1" = 1 ] && [ "$2" -ge 0 ] && [ "$2" -lt 2500 ] && [ "$3" = reset ]
check absolute_form_client_abort_while_answer_awaited_released_at_once $? \
    "closes, ms after the abort, reasons: $aw"
fi

# =====================================================================
# 100 policy pushes while 200 tunnels stream
if want pushes; then
mkdir -p "$T/keys" "$T/lstate" "$T/lb"
chmod 0700 "$T/keys"
"$CTL" keygen --out "$T/keys/k.pem" >/dev/null 2>&1
# A admits keep and drop, B keep only. Epoch 1 (before the load) and the
# even epochs are A, the odd ones from 3 are B: the 100 pushes (epochs 2 to
# 101) alternate A, B, ..., B and end on B. Compiled policies written here
# (canonical form: keys sorted, no whitespace), signed by egress-guardctl.
python3 - "$T/lb" <<'PY'
import json, sys
for e in range(1, 102):
    hosts = ["drop.example.test", "keep.example.test"] if e == 1 or e % 2 == 0 \
        else ["keep.example.test"]
    p = {"allow": [{"host": h, "port": 7} for h in hosts], "epoch": e, "mode": "allowlist",
         "schema": "egress-guard.policy.v1"}
    open("%s/p%d.json" % (sys.argv[1], e), "w").write(
        json.dumps(p, separators=(",", ":"), sort_keys=True))
PY
seq 1 101 | xargs -P 2 -I{} sh -c "\"$CTL\" sign \"$T/lb/p{}.json\" --key \"$T/keys/k.pem\" >\"$T/lb/b{}.json\""
start_guard L 3146 $COMMON --trust-key "$T/keys/k.pub.pem" --state-dir "$T/lstate" || exit 1
"$CTL" push "$T/lb/b1.json" --control "$T/L.sock" >/dev/null 2>&1
rm -f "$T/tstop"
inwl $FC tunnels --proxy 10.77.0.1:3146 --keep keep.example.test:7 --nkeep 160 \
    --drop drop.example.test:7 --ndrop 40 --ready "$T/tready" --stop "$T/tstop" \
    >"$T/tunnels.json" 2>"$T/tunnels.err" &
TPID=$!; PIDS="$PIDS $TPID"
wait_file "$T/tready" 200
sleep 1
# drop_allowed OFFSET EPOCHS: tunnels to drop.example.test the guard admitted
# under one of EPOCHS (a regex) in L's log after byte OFFSET.
drop_allowed() {
	tail -c +$(($1 + 1)) "$T/L.log" |
	    grep -cE '"host":"drop\.example\.test","port":7,"decision":"allow".*"policy_epoch":('"$2"'),'
}
: >"$T/pushes.txt"; : >"$T/pushwait.txt"
off=0
for e in $(seq 2 101); do
	if [ $((e % 2)) = 1 ]; then
		# A B push: first until the 40 drop tunnels are live again, as the
		# guard's log has them: admitted under the A just pushed (the
		# first B: under epoch 1 or 2), after the last B's log lines. They
		# reopen 0.05 s after a 403, through the test's Python DNS server
		# and echo listener: on a loaded machine that can take longer
		# than one push. At most 2 s; the B push goes anyway then.
		w0=$(date +%s%N); n=0
		eps=$((e - 1)); [ "$e" = 3 ] && eps="1|2"
		for _ in $(seq 100); do
			n=$(drop_allowed "$off" "$eps")
			[ "$n" -ge 40 ] || [ "$(date +%s%N)" -ge $((w0 + 2000000000)) ] && break
			sleep 0.02
		done
		echo "$e $n $(( ($(date +%s%N) - w0) / 1000000 ))" >>"$T/pushwait.txt"
	fi
	t0=$(date +%s%N)
	o=$("$CTL" push "$T/lb/b$e.json" --control "$T/L.sock" 2>&1)
	t1=$(date +%s%N)
	echo "$e $(( (t1 - t0) / 1000 )) $o" >>"$T/pushes.txt"
	# B is in: no tunnel to drop is admitted from here until the next A.
	[ $((e % 2)) = 1 ] && off=$(stat -c %s "$T/L.log")
	sleep 0.07
done
sleep 0.5
touch "$T/tstop"
wait $TPID
ms=$(awk '{print $2}' "$T/pushes.txt" | sort -n)
echo "# pushes: 100 in $(awk '{s += $2} END {printf "%.1f", s / 1000}' "$T/pushes.txt") ms total;" \
    "per push min $(echo "$ms" | head -n1) median $(echo "$ms" | sed -n 50p) max $(echo "$ms" | tail -n1) us"
echo "# pushes: revoked per B push: $(grep -o '"revoked":[0-9]*' "$T/pushes.txt" | sort | uniq -c | tr '\n' ' ')"
nlive=$(awk '$2 < 40' "$T/pushwait.txt" | wc -l)
echo "# pushes: before each B push, drop tunnels live again (of 40), min $(awk '{print $2}' "$T/pushwait.txt" | sort -n | head -n1);" \
    "$nlive B pushes went with fewer than 40; waited ms median $(awk '{print $3}' "$T/pushwait.txt" | sort -n | sed -n 25p) max $(awk '{print $3}' "$T/pushwait.txt" | sort -n | tail -n1)"
echo "# tunnels: ready $(cat "$T/tready")"
echo "# tunnels: end $(cat "$T/tunnels.json")"
ok=$(grep -c '"epoch":[0-9]*,"digest"' "$T/pushes.txt")
[ "$ok" = 100 ]
check pushes_under_load_all_100_accepted $? "$ok"
[ "$(jget "$T/tunnels.json" 'int(o["keep_opened"] == 160 and o["keep_errors"] == 0 and
    o["keep_mismatch"] == 0 and o["keep_final_ok"] == 160)')" = 1 ]
check pushes_under_load_admitted_tunnels_all_survive_and_echo $? "$(cat "$T/tunnels.json" "$T/tunnels.err")"
# From the log, in the guard's own order: at every B policy, no tunnel to
# drop.example.test is still open, and none was ever admitted under B;
# no tunnel to keep.example.test was ever revoked.
cat >"$T/revcheck.py" <<'PY'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
host_of, open_drop, viol, admitted_under_b, keep_revoked, b_events = {}, set(), 0, 0, 0, 0
revoked_closes, early = 0, 0
entries = {}	# epoch -> entries: 2 for A, 1 for B
for o in L:
    ev = o.get("event")
    if ev == "decision" and o.get("policy_epoch") not in entries:
        early += 1	# names a policy whose line is not above it
    if ev == "decision" and o["decision"] == "allow":
        host_of[o["id"]] = o["host"]
        if o["host"] == "drop.example.test":
            open_drop.add(o["id"])
            if entries.get(o["policy_epoch"]) != 2:
                admitted_under_b += 1
    elif ev == "close":
        h = host_of.get(o["id"])
        if o["reason"] == "revoked":
            revoked_closes += 1
            if h == "keep.example.test":
                keep_revoked += 1
        open_drop.discard(o["id"])
    elif ev == "policy" and o.get("policy_epoch") is not None:
        entries[o["policy_epoch"]] = o["entries"]
        if o["entries"] == 1:
            b_events += 1
            viol += len(open_drop)
print(b_events, viol, admitted_under_b, keep_revoked, revoked_closes, early)
PY
set -- $(python3 "$T/revcheck.py" "$T/L.log")
echo "# log: $1 B policies, $2 drop tunnels alive at one, $3 admitted under B, $4 keep revoked, $5 revoked closes, $6 decisions above their policy line"
[ "$1" = 50 ] && [ "$2" = 0 ] && [ "$3" = 0 ] && [ "$4" = 0 ] &&
    [ "$(jget "$T/tunnels.json" 'o["drop_open_at_end"] + o["drop_stalled"] + o["drop_mismatch"]')" = 0 ]
check pushes_under_load_no_refused_tunnel_survives_a_push $? "$*"
# Every worker holds its decisions under a new policy until the main
# thread has written that policy's line (log_hold): read in order, the
# log never names a policy before installing it.
[ "$6" = 0 ]
check pushes_under_load_no_decision_above_its_policy_line $? "$*"
# Control: the refused tunnels really were open and echoing, and were
# reopened under every A: each B push had something to revoke.
nrev=$(grep -c '"revoked":[1-9]' "$T/pushes.txt")
[ "$(jget "$T/tready" 'o["drop_opened"]')" -ge 40 ] && [ "$nrev" -ge 45 ] && [ "$5" -ge 200 ] &&
    [ "$(jget "$T/tunnels.json" 'int(o["echoes"] > 10000 and o["drop_closed"] >= 200)')" = 1 ]
check control_pushes_refused_tunnels_were_live_before_each_b_push $? "B pushes that revoked: $nrev, revoked closes $5, B pushes before all 40 were back: $nlive"
fi

# =====================================================================
# SIGKILL in the middle of pushes, 20 rounds
if want restart; then
mkdir -p "$T/keys" "$T/rstate" "$T/rb"
chmod 0700 "$T/keys"
[ -f "$T/keys/k.pem" ] || "$CTL" keygen --out "$T/keys/k.pem" >/dev/null 2>&1
# Big bundles (2,000 entries, ~110 KB) make each store take a while, so a
# kill often lands inside one.
python3 - "$T/rb" 1 121 <<'PY'
import json, sys
d, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
allow = sorted(({"host": "h%04d.example.test" % i, "port": 443} for i in range(2000)),
               key=lambda a: (a["host"], a["port"]))
for e in range(lo, hi + 1):
    with open("%s/p%d.json" % (d, e), "w") as f:
        f.write(json.dumps({"allow": allow, "epoch": e, "mode": "allowlist",
                            "schema": "egress-guard.policy.v1"}, separators=(",", ":"),
                           sort_keys=True))
PY
t0=$(date +%s%N)
seq 1 121 | xargs -P 2 -I{} sh -c "\"$CTL\" sign \"$T/rb/p{}.json\" --key \"$T/keys/k.pem\" >\"$T/rb/b{}.json\""
t1=$(date +%s%N)
echo "# restart: signed 121 bundles of $(wc -c <"$T/rb/b1.json") bytes in $(( (t1 - t0) / 1000000 )) ms"
# "EPOCH DIGEST" of every bundle, decoded here (not by the guard).
python3 - "$T/rb" 121 >"$T/rb/digests" <<'PY'
import base64, hashlib, json, sys
for e in range(1, int(sys.argv[2]) + 1):
    b = json.load(open("%s/b%d.json" % (sys.argv[1], e)))
    p = base64.b64decode(b["policy"])
    print(json.loads(p)["epoch"], "sha256:" + hashlib.sha256(p).hexdigest())
PY
epoch_digest() { awk -v e="$1" '$1 == e {print; exit}' "$T/rb/digests"; }
active() {
	ingd curl -sS --max-time 5 --unix-socket "$T/$1.sock" http://localhost/v1/policy |
	    python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["epoch"], o["digest"])'
}
RARGS="$COMMON --trust-key $T/keys/k.pub.pem --state-dir $T/rstate"
start_guard R0 3147 $RARGS || exit 1
"$CTL" push "$T/rb/b1.json" --control "$T/R0.sock" >/dev/null 2>&1
prev=R0; cur_epoch=1
whole=0; floor=0; ctl_old=0; inflight=0; newwon=0; tmpleft=0; restart_ms=""
for round in $(seq 1 20); do
	# Control: before the kill the state file is exactly the active bundle.
	cmp -s "$T/rstate/bundle.json" "$T/rb/b$cur_epoch.json" && ctl_old=$((ctl_old + 1))
	rm -f "$T/pl.state"
	# 2 to 6 pushes; right after the body of the last one has been sent,
	# while the guard verifies and stores it, the pusher SIGKILLs the guard
	# at a random moment within the time the push before it took.
	n=$((RANDOM % 5 + 2))
	python3 "$TI/faults_client.py" pushloop --control "$T/$prev.sock" --bundles "$T/rb" \
	    --from $((cur_epoch + 1)) --to $((cur_epoch + n)) --state "$T/pl.state" \
	    --kill-pid "$(pidof_guard "$prev")" >/dev/null 2>&1
	wait "$(pidof_guard "$prev")" 2>/dev/null
	read -r _ sent _ acked <"$T/pl.state"
	[ "$sent" != "$acked" ] && inflight=$((inflight + 1))
	[ -e "$T/rstate/.bundle.json.tmp" ] && tmpleft=$((tmpleft + 1))
	t0=$(date +%s%N)
	start_guard "R$round" 3147 $RARGS || break
	t1=$(date +%s%N)
	restart_ms="$restart_ms $(( (t1 - t0) / 1000000 ))"
	set -- $(active "R$round")
	ae=$1; ad=$2
	# Acknowledged means stored (fsync before the answer): then only the
	# new one will do. Unacknowledged: the old or the new, whole.
	r=1
	if [ "$ae" = "$sent" ] || { [ "$ae" = "$acked" ] && [ "$acked" != "$sent" ]; }; then
		set -- $(epoch_digest "$ae")
		[ "$2" = "$ad" ] && cmp -s "$T/rstate/bundle.json" "$T/rb/b$ae.json" &&
		    "$CTL" verify "$T/rstate/bundle.json" --trust-key "$T/keys/k.pub.pem" >/dev/null 2>&1 &&
		    r=0
	fi
	[ $r = 0 ] && whole=$((whole + 1)) ||
	    echo "# round $round: sent=$sent acked=$acked active=$ae $ad"
	[ "$ae" = "$sent" ] && [ "$sent" != "$acked" ] && newwon=$((newwon + 1))
	# The floor: one epoch lower is refused.
	o=$("$CTL" push "$T/rb/b$((ae - 1)).json" --control "$T/R$round.sock" 2>&1)
	case "$o" in *stale_epoch*) floor=$((floor + 1));; esac
	cur_epoch=$ae; prev=R$round
done
echo "# restart: 20 rounds, $inflight killed before the last push was answered ($newwon of them kept that bundle), temp file left in $tmpleft; restart times (ms):$restart_ms; final epoch $cur_epoch"
[ "$whole" = 20 ]
check restart_after_sigkill_holds_old_or_new_bundle_whole $? "$whole/20"
[ "$floor" = 20 ]
check restart_after_sigkill_epoch_floor_holds_409 $? "$floor/20"
[ "$ctl_old" = 20 ] && [ "$inflight" -ge 3 ] && [ "$cur_epoch" -gt 40 ]
check control_restart_state_before_each_kill_was_the_old_bundle $? "old=$ctl_old inflight=$inflight epoch=$cur_epoch"
fi

echo "# faults_test: ${SECONDS}s"
finish
