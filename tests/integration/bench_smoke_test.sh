# The benchmark still runs: bench/run --quick (a few seconds, loopback only,
# guard, direct and the CONNECT floor, bench/floor --rate). A smoke test
# only: no figure is asserted, whatever the machine's load; `make bench` is
# the real benchmark.
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
# Every test ran and was recorded (the floor's CONNECT runs too), and the
# table came out with the per-repetition targets.
n=$(grep -c '"rc":0' "$OUT/results.jsonl" 2>/dev/null)
fl=$(grep -c '"section":"rate-connect[^"]*","rep":1,"contender":"floor","rc":0' "$OUT/results.jsonl" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "${n:-0}" -ge 18 ] && [ "${fl:-0}" -eq 2 ] &&
    grep -q 'CONNECT tunnels/s' "$OUT/table.md" 2>/dev/null &&
    grep -q 'repetitions that met it' "$OUT/table.md" 2>/dev/null; then
	echo "PASS bench_quick_runs"
else
	echo "FAIL bench_quick_runs: bench/run --quick exited $rc, $n successful runs recorded, $fl of the floor's 2 (see $OUT/run.log)"
	exit 1
fi
