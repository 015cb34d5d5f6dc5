# `make test` runs the conformance matrix (one PASS/FAIL line per case: a
# case passes only when its probe shows the expected outcome and its
# negative control the opposite) and the mutation check (each mutant of
# the guard or of the deployment must turn its fact false).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
B=${BUILD:-build}
rc=0
mkdir -p "$B/conformance"
make -s BUILD="$B" conformance >"$B/conformance/matrix.log" 2>&1 || rc=1
sed -n 's/^pass  *\([a-z0-9-]*\) .*/PASS conformance_\1/p; s/^\(fail\|inconclusive\) *\([a-z0-9-]*\) \(.*\)/FAIL conformance_\2 (\1): \3/p' \
    "$B/conformance/matrix.log"
sed -n '/^fact /,/^report/p' "$B/conformance/matrix.log"
# The receipt of this run grades the exact build; the same receipt under
# an attester set that lacks its signer must not.
grade=$(sed -n 's/^grade: //p' "$B/conformance/matrix.log")
if [ "$grade" = security_boundary ]; then echo "PASS conformance_receipt_grades_security_boundary"
else echo "FAIL conformance_receipt_grades_security_boundary: got '$grade'"; rc=1; fi
# The report names the bytes the matrix ran, which receipt sign holds the
# binary to.
if python3 -c 'import hashlib, json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["guard_sha256"] == hashlib.sha256(open(r["guard_binary"], "rb").read()).hexdigest() else 1)' \
    "$B/conformance/report.json" 2>/dev/null; then
	echo "PASS conformance_report_records_tested_binary_sha256"
else echo "FAIL conformance_report_records_tested_binary_sha256"; rc=1; fi
mkdir -p "$B/conformance/no-attesters"
# It still prints its grade, and exits 5 (untrusted signer), so that
# `verify && deploy` stops.
g2=$("$B/egress-guardctl" receipt verify "$B/conformance/receipt.json" \
    --attesters "$B/conformance/no-attesters" 2>/dev/null); rc2=$?
if [ "$g2" = advisory_filter ] && [ "$rc2" = 5 ]; then
	echo "PASS control_receipt_untrusted_signer_is_advisory_filter_exit_5"
else
	echo "FAIL control_receipt_untrusted_signer_is_advisory_filter_exit_5: got '$g2' exit $rc2"; rc=1
fi
make -s BUILD="$B" conformance-mutants >"$B/conformance/mutants.log" 2>&1 || rc=1
grep -E '^(PASS|FAIL) ' "$B/conformance/mutants.log" ||
    { echo "FAIL conformance_mutants: no result"; tail -n 20 "$B/conformance/mutants.log"; rc=1; }
exit $rc
