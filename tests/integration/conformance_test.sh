# `make test` runs the conformance matrix (one PASS/FAIL line per case: a
# case passes only when its probe shows the expected outcome, its negative
# control the opposite, and the control's far side logged it: its
# evidence) and the mutation check (each mutant of the guard, of the
# deployment or of the harness must turn its facts false).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
B=${BUILD:-build}
rc=0
mkdir -p "$B/conformance"
mrc=0
make -s BUILD="$B" conformance >"$B/conformance/matrix.log" 2>&1 || mrc=1
sed -n 's/^pass  *\([a-z0-9-]*\) .*/PASS conformance_\1/p; s/^\(fail\|inconclusive\) *\([a-z0-9-]*\) \(.*\)/FAIL conformance_\2 (\1): \3/p' \
    "$B/conformance/matrix.log"
sed -n '/^suite /,/^report/p' "$B/conformance/matrix.log"
# The three reports (the lab's, the transparent path's, the tenants
# target's) are schema v2, each graded by its suite with every fact true,
# and every case carries its control's expected words and evidence
# (report.py grades as verify does; a case without evidence never passes).
for s in lab:report transparent:report-transparent tenants:report-tenants; do
	if python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
ok = (r["schema"] == "egress-guard.conformance-report.v2" and r["suite"] == sys.argv[2]
      and r["facts"] and all(r["facts"].values())
      and all(c["control_expected"] and c["control_evidence"] and c["verdict"] == "pass"
              for c in r["cases"]))
sys.exit(0 if ok else 1)' "$B/conformance/${s#*:}.json" "${s%%:*}" 2>/dev/null; then
		echo "PASS conformance_report_v2_suite_${s%%:*}_facts_true_with_evidence"
	else echo "FAIL conformance_report_v2_suite_${s%%:*}_facts_true_with_evidence"; rc=1; fi
done
[ $mrc = 0 ] || rc=1
# The receipt of this run grades the exact build; the same receipt under
# an attester set that lacks its signer must not.
# The three receipts, the lab's, the transparent path's and the tenants
# target's, each graded by its own suite, which it names.
grades=$(sed -n 's/^grade: //p' "$B/conformance/matrix.log" | tr '\n' ' ')
if [ "$grades" = "security_boundary security_boundary security_boundary " ]; then echo "PASS conformance_receipt_grades_security_boundary"
else echo "FAIL conformance_receipt_grades_security_boundary: got '$grades'"; rc=1; fi
for s in transparent tenants; do
	show=$("$B/egress-guardctl" receipt show "$B/conformance/receipt-$s.json" 2>&1)
	case "$show" in *"suite:    $s version"*"5 of 5 facts proved"*) echo "PASS conformance_${s}_receipt_names_its_suite";;
	*) echo "FAIL conformance_${s}_receipt_names_its_suite: $(echo "$show" | head -n 8 | tr '\n' ' ')"; rc=1;; esac
done
# The tenants receipt admits where a grade earned on that deployment is
# required, and only there (admit --suite).
printf '{"network_policy":"allowlist","allowed_hosts":["a.example.test:80"],"required_egress_certification":"security_boundary"}' \
    >"$B/conformance/tenants-profile.json"
adm() { "$B/egress-guardctl" admit --profile "$B/conformance/tenants-profile.json" \
    --receipt "$B/conformance/receipt-tenants.json" --attesters "$B/conformance/attesters" --suite "$1" 2>&1; }
a1=$(adm tenants); r1=$?
a2=$(adm lab); r2=$?
if [ $r1 = 0 ] && [ $r2 = 3 ]; then echo "PASS conformance_tenants_receipt_admits_on_suite_tenants_only"
else echo "FAIL conformance_tenants_receipt_admits_on_suite_tenants_only: $r1 '$a1', $r2 '$a2'"; rc=1; fi
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
