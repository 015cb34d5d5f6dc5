#!/bin/sh
# Bounded libFuzzer run of each harness named on the command line (behind
# `make fuzz-smoke`). Each one starts from a fresh copy of its checked-in
# corpus in $FUZZ_DIR/work/NAME (the checked-in corpus is never written)
# and runs for FUZZ_SMOKE_TIME seconds, FUZZ_JOBS harnesses at a time.
# Prints "PASS NAME" or "FAIL NAME" per harness (the log and any crash
# input are kept in $FUZZ_DIR/logs and $FUZZ_DIR/artifacts), then exits
# non-zero if any failed.
set -u
dir=${FUZZ_DIR:-build/fuzz}
secs=${FUZZ_SMOKE_TIME:-10}
jobs=${FUZZ_JOBS:-2}
corpus=tests/fuzz/corpus
mkdir -p "$dir/work" "$dir/logs" "$dir/artifacts"

run_one() {
	name=$1
	work=$dir/work/$name
	rm -rf "$work" "$dir/artifacts/$name" "$dir/logs/$name.rc"
	mkdir -p "$work" "$dir/artifacts/$name"
	[ -d "$corpus/$name" ] && cp "$corpus/$name"/* "$work"/ 2>/dev/null
	dict=
	[ -f "tests/fuzz/dict/$name.dict" ] && dict=-dict=tests/fuzz/dict/$name.dict
	"$dir/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="$dir/artifacts/$name/" \
	    $dict "$work" >"$dir/logs/$name.log" 2>&1
	echo $? >"$dir/logs/$name.rc"
}

names="$*"
# FUZZ_JOBS at a time: start a batch in the background, wait for it.
while [ $# -gt 0 ]; do
	n=0
	while [ $# -gt 0 ] && [ "$n" -lt "$jobs" ]; do
		run_one "$1" &
		n=$((n + 1))
		shift
	done
	wait
done

fail=0
for name in $names; do
	rc=$(cat "$dir/logs/$name.rc" 2>/dev/null || echo 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/logs/$name.log")
	if [ "$rc" -eq 0 ] && [ -z "$(ls "$dir/artifacts/$name")" ]; then
		echo "PASS $name (${execs:-?} runs in ${secs}s)"
	else
		echo "FAIL $name: exit $rc, see $dir/logs/$name.log"
		grep -E '^(==[0-9]+==|SUMMARY|.*runtime error|fuzz check failed)' \
		    "$dir/logs/$name.log" | head -n 20
		ls "$dir/artifacts/$name" | sed "s|^|  input: $dir/artifacts/$name/|"
		fail=1
	fi
done
exit "$fail"
