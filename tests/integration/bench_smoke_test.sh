# The benchmark still runs: bench/run --quick (a few seconds, loopback only,
# guard, direct and the CONNECT floor, bench/floor --rate; the transparent
# sections in a namespace of the run's own, the DNS listener's). A smoke test
# only: no figure is asserted, whatever the machine's load; `make bench` is
# the real benchmark. Then bench/tenants --quick (1 and 10 tenants, a few
# seconds; bench/tenants is the many-sandbox benchmark of issue 33).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BD=$BUILD ;; *) BD=$TOP/$BUILD ;; esac
OUT=$BD/bench/results-quick

for b in loadgen target dns floor; do
	[ -x "$BD/bench/$b" ] || { echo "FAIL bench_quick_runs: $BD/bench/$b missing (make builds it)"; exit 1; }
done
cd "$TOP" || exit 1
BUILD=$BUILD timeout -k 5 300 bash bench/run --quick --out "$OUT"
rc=$?
# Every test ran and was recorded (the floor's CONNECT runs too, the
# redirected connections through the guard's transparent listener, the
# DNS listener's answers), and the table came out with the CPU per
# operation first and the judged targets.
n=$(grep -c '"rc":0' "$OUT/results.jsonl" 2>/dev/null)
fl=$(grep -c '"section":"rate-connect[^"]*","rep":1,"contender":"floor","rc":0' "$OUT/results.jsonl" 2>/dev/null)
tp=$(grep -c '"section":"tp-\(tls\|http\)-1","rep":1,"contender":"transparent","rc":0' "$OUT/results.jsonl" 2>/dev/null)
dn=$(grep -c '"section":"dns-[a-z]*","rep":1,"contender":"guard","rc":0' "$OUT/results.jsonl" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "${n:-0}" -ge 18 ] && [ "${fl:-0}" -eq 2 ] && [ "${tp:-0}" -eq 2 ] &&
    [ "${dn:-0}" -eq 2 ] &&
    grep -q 'CONNECT tunnels/s' "$OUT/table.md" 2>/dev/null &&
    grep -q 'proxy CPU µs per tunnel, median | per repetition' "$OUT/table.md" 2>/dev/null &&
    grep -q 'verdict (repetitions within it)' "$OUT/table.md" 2>/dev/null; then
	echo "PASS bench_quick_runs"
else
	echo "FAIL bench_quick_runs: bench/run --quick exited $rc, $n successful runs recorded, $fl of the floor's 2, $tp of the 2 transparent, $dn of the 2 DNS listener runs (see $OUT/run.log)"
	exit 1
fi

# bench/tenants --quick (issue 33): a guard with 1 and one with 10 tenants,
# each in a namespace of the run's own, the idle tenants' links carrying
# their addresses; every measurement once, a few seconds; no figure
# asserted, only that each was taken (the RSS with the links' addresses
# too, and B at its max_conns had its extra CONNECTs refused 503
# overloaded while A's were served).
TOUT=$BD/bench/tenants-quick
BUILD=$BUILD timeout -k 5 120 python3 bench/tenants --quick --out "$TOUT" >/dev/null 2>&1
trc=$?
tr=$(grep -c '"section":"\(rate\|start\)","rep":1,"tenants":\(1\|10\),"rc":0' "$TOUT/results.jsonl" 2>/dev/null)
ts=$(grep -c '"section":"rss".*"rss_links_kib":[0-9]' "$TOUT/results.jsonl" 2>/dev/null)
th=$(grep -c '"section":"noisy-hold","rep":1,"tenants":10,"rc":0' "$TOUT/results.jsonl" 2>/dev/null)
if [ "$trc" -eq 0 ] && [ "${tr:-0}" -eq 4 ] && [ "${ts:-0}" -eq 2 ] && [ "${th:-0}" -eq 1 ] &&
    grep -q '"idle_link_address":true' "$TOUT/results.jsonl" 2>/dev/null &&
    grep -q 'RSS per idle tenant' "$TOUT/report.md" 2>/dev/null; then
	echo "PASS bench_tenants_quick_runs"
else
	echo "FAIL bench_tenants_quick_runs: bench/tenants --quick exited $trc, $tr of 4 rate/start runs, $ts of 2 RSS readings (links addressed), $th of 1 noisy-hold (see $TOUT/run.log)"
	exit 1
fi
