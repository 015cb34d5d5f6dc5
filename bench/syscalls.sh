#!/usr/bin/env bash
# bench/syscalls.sh [--dur S] [--only guard|floor] [--stacks] [--out DIR]
#
# System calls and event-loop passes per tunnel, one at a time (c=1), for
# one CONNECT tunnel (CONNECT, "GET /" through it, 2-byte reply, close) and
# one absolute-form GET (Connection: close), through the guard and through
# the CONNECT floor (bench/floor --rate --workers 1; CONNECT only). Issue 17
# item 2: the counts to bring down, and where each call comes from.
#
# Two measurements of the same workload, loopback only:
#   strace -f   every call of the proxy with its result: calls per tunnel
#               by name, the failed ones by errno (an EAGAIN is a call that
#               found nothing to do), and the calls of one tunnel in order.
#               strace slows the proxy, which can merge or split loop
#               passes: the counts are exact for the traced run only.
#   perf stat   raw_syscalls:sys_enter and epoll_wait entries over a run
#               without strace (when perf works): the same figures with
#               little perturbation.
# A tunnel is one successful accept4 of the proxy (perf and strace count
# those in their own windows). Loop passes are epoll_wait calls
# (libevent makes one per event_base_loop iteration).
#
# --stacks: strace -k as well, the call stack of every call of the one
# tunnel shown (file:function of the guard, for removing calls).
# Environment: BENCH_GUARD (the guard binary), BUILD, BENCH_DUR (s per run,
# default 1). Every process started here is stopped by PID on exit.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BD=$BUILD ;; *) BD=$TOP/$BUILD ;; esac
BIN=${BENCH_GUARD:-$BD/egress-guard}
CTL=${BENCH_CTL:-$BD/egress-guardctl}
LG=$BD/bench/loadgen
TG=$BD/bench/target
FLOOR=$BD/bench/floor
DUR=${BENCH_DUR:-1}
ONLY="guard floor"
STACKS=0
OUT=$BD/bench/syscalls
while [ $# -gt 0 ]; do
	case "$1" in
	--dur) DUR=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--stacks) STACKS=1 ;;
	--out) OUT=$2; shift ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
	*) echo "bench/syscalls.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
for f in "$BIN" "$CTL" "$LG" "$TG" "$FLOOR"; do
	[ -x "$f" ] || { echo "bench/syscalls.sh: $f missing: run make first" >&2; exit 1; }
done
command -v strace >/dev/null || { echo "bench/syscalls.sh: strace missing" >&2; exit 1; }
mkdir -p "$OUT"

T=$(mktemp -d /tmp/egsys.XXXXXX)
PIDS=""
cleanup() {
	local p
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do
		for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_free() { [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
BASE=""
for b in 28100 28200 28300 28400; do
	port_free $((b + 1)) && port_free $((b + 2)) && port_free $((b + 3)) && { BASE=$b; break; }
done
[ -n "$BASE" ] || { echo "bench/syscalls.sh: no free ports" >&2; exit 1; }
TARGET=127.0.0.1:$((BASE + 1))
wait_listen() {
	for _ in $(seq 200); do
		kill -0 "$2" 2>/dev/null || return 1
		port_free "$1" || return 0
		sleep 0.1
	done
	return 1
}
start() {	# start NAME CMD...: pid in PID_NAME
	local n=$1; shift
	"$@" >"$T/$n.out" 2>&1 &
	PIDS="$PIDS $!"
	eval "PID_$n=$!"
}

start target "$TG" --listen "$TARGET" --max-conns 60000
wait_listen $((BASE + 1)) "$PID_target" || { echo "target did not start" >&2; exit 1; }
printf '{"network_policy":"allowlist","allowed_hosts":["%s"]}\n' "$TARGET" >"$T/p.json"
"$CTL" compile "$T/p.json" --epoch 1 >"$T/p.policy" || exit 1
# No DNS server: both workloads name the target by its IP literal.
start guard "$BIN" run --listen "127.0.0.1:$((BASE + 2))" --policy "$T/p.policy" \
    --allow-range 127.0.0.0/8 --dns "127.0.0.1:$((BASE + 53))" \
    --log-file "$T/guard.log" --control "$T/guard.sock"
wait_listen $((BASE + 2)) "$PID_guard" || { echo "guard did not start: $(tail -3 "$T/guard.out")" >&2; exit 1; }
start floor "$FLOOR" --rate --workers 1 --listen "127.0.0.1:$((BASE + 3))"
wait_listen $((BASE + 3)) "$PID_floor" || { echo "floor did not start" >&2; exit 1; }

have_perf=0
perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1 && have_perf=1

loadgen() {	# loadgen PORT MODE: one c=1 run; prints completed iterations
	"$LG" rate --mode "$2" --proxy "127.0.0.1:$1" --target "$TARGET" --concurrency 1 \
	    --duration "$DUR" --warmup 0 --timeout 20 --label syscalls >"$T/lg.out" 2>>"$T/lg.err"
	sed -n 's/.*"completed":\([0-9]*\).*/\1/p' "$T/lg.out"
}

echo "# system calls per tunnel at c=1 ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "# guard: $BIN ($("$BIN" version 2>&1 | head -1)); tree at $(git -C "$TOP" rev-parse --short=12 HEAD 2>/dev/null)"
for who in $ONLY; do
	case $who in guard) port=$((BASE + 2)) ;; floor) port=$((BASE + 3)) ;; *) continue ;; esac
	pid=$(eval echo "\$PID_$who")
	for mode in connect get; do
		[ "$who" = floor ] && [ "$mode" = get ] && continue	# the floor speaks CONNECT only
		# one untraced tunnel first: lazy set-up (first accept, first
		# log write) stays out of the counts
		loadgen "$port" "$mode" >/dev/null
		sk=""; [ "$STACKS" = 1 ] && sk=-k
		timeout -k 5 120 strace -f -qq -tt $sk -s 40 -o "$T/tr" -p "$pid" 2>>"$T/strace.err" &
		spid=$!; PIDS="$PIDS $spid"
		sleep 0.5
		n=$(loadgen "$port" "$mode")
		sleep 0.3
		kill -INT "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
		cp "$T/tr" "$OUT/strace-$who-$mode.txt"
		pn=""
		if [ "$have_perf" = 1 ]; then
			timeout -k 5 120 perf stat -x, -e raw_syscalls:sys_enter \
			    -e syscalls:sys_enter_epoll_wait \
			    -e syscalls:sys_exit_accept4 --filter 'ret >= 0' \
			    -p "$pid" -o "$T/perf" 2>>"$T/perf.err" &
			ppid_=$!; PIDS="$PIDS $ppid_"
			sleep 0.5
			pn=$(loadgen "$port" "$mode")
			sleep 0.2
			kill -INT "$ppid_" 2>/dev/null; wait "$ppid_" 2>/dev/null
		fi
		python3 - "$T/tr" "$who" "$mode" "${n:-0}" "$T/perf" "${pn:-0}" "$STACKS" <<'PY' | tee "$OUT/syscalls-$who-$mode.txt"
import collections, re, sys
path, who, mode, lgn, perf, pn, stacks = sys.argv[1:8]
line_re = re.compile(r'^(\d+)\s+(\d+):(\d+):([\d.]+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$')
calls = collections.Counter()
fails = collections.Counter()
events = []		# (name, text, result, stack lines)
pending = {}		# pid -> (name, text) of an unfinished call
for raw in open(path, encoding="utf-8", errors="replace"):
    raw = raw.rstrip("\n")
    if raw.startswith(" > "):
        if events:
            events[-1][3].append(raw.strip())
        continue
    m = line_re.match(raw)
    if not m:
        continue
    pid, hh, mm, ss, resumed, name, rest = m.groups()
    ts = int(hh) * 3600 + int(mm) * 60 + float(ss)
    if name and rest.endswith("<unfinished ...>"):
        pending[pid] = (name, name + "(" + rest[:-len("<unfinished ...>")].rstrip())
        continue
    if resumed:
        name, head = pending.pop(pid, (resumed, resumed + "("))
        text = head + " " + rest
    else:
        text = name + "(" + rest
    res = text.rsplit(" = ", 1)[-1] if " = " in text else "?"
    calls[name] += 1
    em = re.match(r'-1 (E[A-Z]+)', res)
    if em:
        fails[(name, em.group(1))] += 1
    events.append([name, text, res, [], ts])
accepts = [i for i, e in enumerate(events)
           if e[0] in ("accept4", "accept") and re.match(r'\d+', e[2])]
n = len(accepts)
print(f"## {who}, {'CONNECT tunnel' if mode == 'connect' else 'absolute-form GET'}, c=1")
if n == 0:
    print("no accepted connection traced")
    sys.exit(0)
tot = sum(calls.values())
passes = sum(calls[k] for k in ("epoll_wait", "epoll_pwait", "epoll_pwait2"))
print(f"strace -f: {n} connections accepted (load generator: {lgn} completed); "
      f"{tot / n:.2f} system calls per tunnel, of which {passes / n:.2f} loop passes (epoll_wait)")
if int(pn or 0) > 0:
    vals = {}
    for l in open(perf, encoding="utf-8", errors="replace"):
        f = l.strip().split(",")
        if len(f) > 2 and f[0].replace(".", "").isdigit():
            vals[f[2]] = float(f[0])
    t, e = vals.get("raw_syscalls:sys_enter"), vals.get("syscalls:sys_enter_epoll_wait")
    a = vals.get("syscalls:sys_exit_accept4")
    if t is not None and a:
        print(f"perf stat (no strace): {t / a:.2f} system calls per tunnel, "
              f"{(e or 0) / a:.2f} epoll_wait ({a:.0f} connections accepted; "
              f"load generator: {pn} completed)")
print()
print("| call | per tunnel | failed per tunnel |")
print("|---|---|---|")
for name, c in calls.most_common():
    fl = ", ".join(f"{e} {k / n:.2f}" for (nm, e), k in sorted(fails.items()) if nm == name)
    print(f"| {name} | {c / n:.2f} | {fl} |")
# one tunnel in order: from the middle accept to the next one
k = accepts[len(accepts) // 2]
end = accepts[accepts.index(k) + 1] if accepts.index(k) + 1 < len(accepts) else len(events)
print()
print(f"one tunnel in order ({end - k} calls; ms since its accept4, as traced):")
t0 = events[k][4]
for name, text, res, st, ts in events[k:end]:
    text = text if len(text) < 100 else text[:90] + " ... = " + res
    print(f"  {(ts - t0) * 1000:7.3f}  {text}")
    if stacks == "1":
        for s in st[:8]:
            print("      " + s)
print()
PY
	done
done
echo "# traces: $OUT/strace-*.txt; summaries: $OUT/syscalls-*.txt"
