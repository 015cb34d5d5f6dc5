# `make test` runs the conformance matrix (one PASS/FAIL line per case: a
# case passes only when its probe shows the expected outcome and its
# negative control the opposite) and the mutation check (each mutant of
# the guard or of the deployment must turn its fact false).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
B=${BUILD:-build}
rc=0
bash tests/conformance/matrix.sh "$B/conformance" >"$B/conformance/matrix.log" 2>&1 || rc=1
sed -n 's/^pass  *\([a-z0-9-]*\) .*/PASS conformance_\1/p; s/^\(fail\|inconclusive\) *\([a-z0-9-]*\) \(.*\)/FAIL conformance_\2 (\1): \3/p' \
    "$B/conformance/matrix.log"
sed -n '/^fact /,/^report/p' "$B/conformance/matrix.log"
make -s BUILD="$B" conformance-mutants >"$B/conformance/mutants.log" 2>&1 || rc=1
grep -E '^(PASS|FAIL) ' "$B/conformance/mutants.log" ||
    { echo "FAIL conformance_mutants: no result"; tail -n 20 "$B/conformance/mutants.log"; rc=1; }
exit $rc
