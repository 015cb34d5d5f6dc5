# Conformance receipts and admission, black-box (docs/receipts.md): an
# attester key made by egress-guardctl, a report shaped like the matrix
# runner's, receipt sign / verify, and admit's typed exit codes. The
# receipt is checked by Python (canonical bytes, revision) and Node.js
# (the Ed25519 signature) too. Needs no root and no namespace.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "FAIL build: binaries missing"; exit 1; }
cd "$T" || exit 1

# rc CMD...: runs CMD, stdout to out, stderr to err; echoes the exit code.
rc() { "$@" >out 2>err; echo $?; }
# expect NAME WANT_RC CMD...: PASS when CMD exits WANT_RC.
expect() {
	name=$1 want=$2; shift 2
	got=$(rc "$@")
	if [ "$got" = "$want" ]; then pass "$name"
	else fail "$name" "exit $got, want $want: $(head -c 300 err)"; fi
}
# grade_is NAME GRADE WANT_RC RECEIPT ARGS...: receipt verify prints GRADE
# and exits WANT_RC (0 only for an authentic receipt: docs/receipts.md).
grade_is() {
	name=$1 want=$2 wantrc=$3; shift 3
	got=$(rc "$CTL" receipt verify "$@")
	if [ "$got" = "$wantrc" ] && [ "$(cat out)" = "$want" ]; then pass "$name"
	else fail "$name" "exit $got, grade '$(cat out)', want $want exit $wantrc: $(head -c 300 err)"; fi
}

# report OUT [python edits on r]: a report like tests/conformance/matrix.sh
# writes (indent=1, sort_keys), for the guard binary under test ($RBIN,
# default $BIN) with its SHA-256 as the matrix records it: every case the
# built-in lab suite requires, each passing with the suite's words and
# evidence of the suite's kind, ran now. Edits see r, case(ID) and
# first(FACT) (a case of that fact).
SUITE=$TOP/conform/suites/lab.json
report() {
	out=$1; shift
	python3 - "${RBIN:-$BIN}" "$out" "$SUITE" "${1:-}" <<'PY'
import datetime, hashlib, json, sys
binary, out, suite, edit = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), sys.argv[4]
ev = {"listener": "listener pub80: 1 connection, 78 bytes", "resolver": "resolver dns198: 2 queries",
      "socket": "socket A.sock: 1 connection", "counter": "counter in-icmp: 1 packet",
      "process": "process 4242: CapEff 000001ffffffffff"}
cases = [{"id": c["id"], "fact": c["fact"], "probe": "probe of " + c["id"],
          "expected": c["expected"], "observed": c["expected"],
          "control_expected": c["control_expected"], "control": c["control_expected"],
          "control_evidence": ev[c["evidence"]], "verdict": "pass"} for c in suite["cases"]]
cases[0]["probe"] = "answer flips public\u2192private, TTL 0"
def case(cid): return [c for c in cases if c["id"] == cid][0]
def first(fact): return [c for c in cases if c["fact"] == fact][0]
now = datetime.datetime.now(datetime.timezone.utc)
r = {"schema": "egress-guard.conformance-report.v2", "provider": "egress-guard",
     "guard_binary": binary, "guard_sha256": hashlib.sha256(open(binary, "rb").read()).hexdigest(),
     "version": "0.1.0", "ran_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "suite": suite["id"],
     "facts": {f: True for f in ["exact_destination_match", "connect_time_public_address",
                                 "redirect_recheck", "authority_separation", "default_deny"]},
     "cases": cases}
exec(edit)
json.dump(r, open(out, "w"), indent=1, sort_keys=True)
PY
}

# forge OUT RECEIPT [python edits on rec]: the signed receipt of RECEIPT,
# edited, written canonically and signed again with att.pem by Node.js: a
# receipt an attester's own tooling could have signed, past egress-
# guardctl's signer, so that only verify's rules stand between it and a
# grade.
forge() {
	out=$1 in=$2; shift 2
	python3 - "$in" "${1:-}" <<'PY' >forged.raw
import base64, datetime, json, sys
rec = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["receipt"]))
now = datetime.datetime.now(datetime.timezone.utc)
exec(sys.argv[2])
sys.stdout.write(json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=True))
PY
	node - forged.raw att.pem >"$out" <<'JS'
const c = require('crypto'), fs = require('fs');
const raw = fs.readFileSync(process.argv[2]);
const k = c.createPrivateKey(fs.readFileSync(process.argv[3]));
const pub = c.createPublicKey(k).export({ format: 'der', type: 'spki' }).subarray(12);
const msg = Buffer.concat([Buffer.from('egress-guard.sandbox-egress-conformance.v1'), Buffer.from([0]), raw]);
process.stdout.write(JSON.stringify({ schema: 'egress-guard.receipt-envelope.v1',
  key_id: c.createHash('sha256').update(pub).digest('hex'), receipt: raw.toString('base64'),
  signature: c.sign(null, msg, k).toString('base64') }) + '\n');
JS
}

profile() {	# profile NAME JSON
	printf '%s\n' "$2" >"$1.json"
}

# ---------------------------------------------------------------- setup
mkdir -p att other empty
printf 'not json\n' >garbage.json
"$CTL" keygen --out att.pem 2>/dev/null && cp att.pub.pem att/ &&
    "$CTL" keygen --out other.pem 2>/dev/null && cp other.pub.pem other/
check keygen_attester $? "keygen failed"
[ -f "$SUITE" ] || { fail built_in_lab_suite "no $SUITE"; finish; exit 1; }
report report.json
profile sb '{"network_policy":"allowlist","allowed_hosts":["api.example.test:443"],"required_egress_certification":"security_boundary"}'
profile af '{"network_policy":"allowlist","allowed_hosts":["api.example.test:443"],"required_egress_certification":"advisory_filter"}'
profile al '{"network_policy":"allowlist","allowed_hosts":["api.example.test:443"]}'
profile un '{"network_policy":"unrestricted"}'
profile no '{"network_policy":"none"}'
profile us '{"network_policy":"allowlist","allowed_hosts":[],"required_egress_certification":"unsupported"}'

# ---------------------------------------------------------------- sign, verify
expect sign_exit_0 0 "$CTL" receipt sign report.json --key att.pem
cp out receipt.json
[ "$(wc -l <receipt.json)" -eq 1 ] && python3 -c '
import json, sys
e = json.load(open("receipt.json"))
assert sorted(e) == ["key_id", "receipt", "schema", "signature"], e.keys()
assert e["schema"] == "egress-guard.receipt-envelope.v1"' 2>/dev/null
check sign_prints_one_envelope_line $? "$(head -c 300 receipt.json)"

# Python: the signed bytes are json.dumps(sort_keys, compact, ensure_ascii)
# of themselves, and the revision is the version and the binary's SHA-256.
python3 - "$BIN" "$SUITE" report.json <<'PY' 2>err
import base64, hashlib, json, sys
e = json.load(open("receipt.json"))
raw = base64.b64decode(e["receipt"], validate=True)
rec = json.loads(raw)
assert raw == json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
assert rec["schema"] == "egress-guard.conformance.v2" and rec["provider"] == "egress-guard"
want = "0.1.0+sha256:" + hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()
assert rec["provider_revision"] == want, (rec["provider_revision"], want)
assert rec["facts"] == {f: True for f in ["authority_separation", "connect_time_public_address",
    "default_deny", "exact_destination_match", "redirect_recheck"]}, rec["facts"]
suite = open(sys.argv[2], "rb").read()
assert rec["suite"] == {"id": "lab", "version": str(json.loads(suite)["version"]),
                        "digest": hashlib.sha256(suite).hexdigest()}, rec["suite"]
rep = json.load(open(sys.argv[3]))
assert rec["cases"] == rep["cases"] and rec["ran_at"] == rep["ran_at"]
assert rec["cases"][0]["probe"] == "answer flips public\u2192private, TTL 0"
PY
check receipt_bytes_canonical_and_bound_to_binary $? "$(tail -n 3 err)"

# Node: the signature verifies over the context, 0x00, the receipt bytes,
# under the attester's public key, whose SHA-256 (raw) is key_id.
if command -v node >/dev/null; then
	node - <<'JS' 2>err
const crypto = require('crypto'), fs = require('fs');
const e = JSON.parse(fs.readFileSync('receipt.json'));
const pub = crypto.createPublicKey(fs.readFileSync('att.pub.pem'));
const raw = pub.export({ format: 'der', type: 'spki' }).subarray(12);
if (crypto.createHash('sha256').update(raw).digest('hex') !== e.key_id) throw new Error('key_id');
const msg = Buffer.concat([Buffer.from('egress-guard.sandbox-egress-conformance.v1'),
  Buffer.from([0]), Buffer.from(e.receipt, 'base64')]);
if (!crypto.verify(null, msg, pub, Buffer.from(e.signature, 'base64'))) throw new Error('signature');
JS
	check node_verifies_signature $? "$(tail -n 3 err)"
else
	pass "node_verifies_signature (skipped: node missing)"
fi

grade_is verify_security_boundary_default_binary security_boundary 0 receipt.json --attesters att
grade_is verify_security_boundary_explicit_binary security_boundary 0 receipt.json --attesters att --binary "$BIN"
expect admit_security_boundary_with_receipt 0 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att
expect admit_default_requirement_with_receipt 0 "$CTL" admit --profile al.json --receipt receipt.json --attesters att

# ---------------------------------------------------------------- another binary
cp "$BIN" guard-copy && printf '\0' >>guard-copy
grade_is verify_appended_byte_advisory advisory_filter 4 receipt.json --attesters att --binary guard-copy
grep -q 'revision_mismatch' err
check verify_appended_byte_says_revision_mismatch $? "$(cat err)"
expect admit_appended_byte_exit_4 4 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --binary guard-copy
# Typed even when advisory_filter would have met the requirement.
expect admit_revision_mismatch_typed_for_advisory_profile 4 "$CTL" admit --profile af.json --receipt receipt.json --attesters att --binary guard-copy
grep -q '^egress-guardctl: admit: revision mismatch: ' err && [ "$(wc -l <err)" -eq 1 ]
check admit_revision_mismatch_one_line $? "$(cat err)"
# Signed for the copy (the matrix ran the copy): the real binary is not
# what was tested.
RBIN=$T/guard-copy report report-copy.json
"$CTL" receipt sign report-copy.json --key att.pem >receipt-copy.json 2>/dev/null
grade_is verify_receipt_for_other_binary_advisory advisory_filter 4 receipt-copy.json --attesters att
grade_is verify_receipt_for_copy_with_copy security_boundary 0 receipt-copy.json --attesters att --binary guard-copy

# ---------------------------------------------------------------- the binary that ran
# A receipt certifies the binary the matrix ran (the report's
# guard_sha256), never whatever is on disk when it is signed.
cp "$BIN" guard-b && RBIN=$T/guard-b report report-b.json
printf '\0' >>guard-b
expect sign_refuses_binary_modified_after_matrix_exit_4 4 "$CTL" receipt sign report-b.json --key att.pem
[ ! -s out ] && grep -q 'changed since the run, refusing to sign' err
check sign_modified_binary_no_envelope_and_says_why $? "$(head -c 300 out err)"
cp "$CTL" guard-b
expect sign_refuses_binary_replaced_after_matrix_exit_4 4 "$CTL" receipt sign report-b.json --key att.pem
expect sign_refuses_other_binary_flag_exit_4 4 "$CTL" receipt sign report.json --key att.pem --binary guard-copy
# Controls: the same bytes back (or the same bytes under another path,
# e.g. installed elsewhere) are signed.
cp "$BIN" guard-b
expect sign_unchanged_binary_after_matrix_exit_0 0 "$CTL" receipt sign report-b.json --key att.pem
cp "$BIN" guard-installed
expect sign_same_bytes_other_path_exit_0 0 "$CTL" receipt sign report-b.json --key att.pem --binary guard-installed
report no-sha.json 'del r["guard_sha256"]'
expect sign_report_without_guard_sha256_exit_2 2 "$CTL" receipt sign no-sha.json --key att.pem
report upper-sha.json 'r["guard_sha256"] = r["guard_sha256"].upper()'
expect sign_report_uppercase_guard_sha256_exit_2 2 "$CTL" receipt sign upper-sha.json --key att.pem

# ---------------------------------------------------------------- signer
grade_is verify_untrusted_signer_advisory advisory_filter 5 receipt.json --attesters other
expect admit_untrusted_signer_exit_5 5 "$CTL" admit --profile sb.json --receipt receipt.json --attesters other
expect admit_no_attesters_exit_5 5 "$CTL" admit --profile al.json --receipt receipt.json --attesters empty
"$CTL" receipt sign report.json --key other.pem >receipt-other.json 2>/dev/null
expect admit_other_attester_with_its_key_exit_0 0 "$CTL" admit --profile sb.json --receipt receipt-other.json --attesters other
# A private key dropped into the attester directory is refused, not used.
mkdir -p bad && cp att.pem bad/att.pub.pem
expect admit_private_key_in_attesters_exit_2 2 "$CTL" admit --profile sb.json --receipt receipt.json --attesters bad

# ---------------------------------------------------------------- signature
python3 - <<'PY'
import base64, json
e = json.load(open("receipt.json"))
s = e["signature"]
e["signature"] = s[:10] + ("B" if s[10] != "B" else "C") + s[11:]
json.dump(e, open("flipped-sig.json", "w"))
e = json.load(open("receipt.json"))
raw = base64.b64decode(e["receipt"]).replace(b'"default_deny":true', b'"default_deny":false')
e["receipt"] = base64.b64encode(raw).decode()
json.dump(e, open("tampered-fact.json", "w"))
e = json.load(open("receipt.json"))
raw = base64.b64decode(e["receipt"])
at = json.loads(raw)["ran_at"].encode()
raw = raw.replace(at, at[:-2] + (b"1Z" if at[-2:] != b"1Z" else b"2Z"))
e["receipt"] = base64.b64encode(raw).decode()
json.dump(e, open("tampered-ran-at.json", "w"))
PY
grade_is verify_flipped_signature_advisory advisory_filter 6 flipped-sig.json --attesters att
grade_is verify_tampered_fact_bad_signature_exit_6 advisory_filter 6 tampered-fact.json --attesters att
grade_is verify_no_attesters_untrusted_exit_5 advisory_filter 5 receipt.json --attesters empty
# The gate a deployment writes: it must stop on every receipt that is not
# authentic (forged, foreign signer, another binary) and pass the real one.
for r in "flipped-sig.json att $BIN" "tampered-fact.json att $BIN" \
    "receipt.json other $BIN" "receipt.json att $T/guard-copy"; do
	set -- $r
	rm -f deployed
	"$CTL" receipt verify "$1" --attesters "$2" --binary "$3" >/dev/null 2>&1 && touch deployed
	[ ! -e deployed ]; st=$?
	check "verify_and_deploy_stops_on_$(echo "$1-$2-${3##*/}" | tr '.-' '__')" $st "deployed"
done
rm -f deployed
"$CTL" receipt verify receipt.json --attesters att >/dev/null 2>&1 && touch deployed
[ -e deployed ]
check verify_and_deploy_passes_authentic_receipt $? "not deployed"
expect admit_flipped_signature_exit_6 6 "$CTL" admit --profile sb.json --receipt flipped-sig.json --attesters att
expect admit_flipped_signature_typed_for_advisory_profile 6 "$CTL" admit --profile al.json --receipt flipped-sig.json --attesters att
expect admit_tampered_fact_exit_6 6 "$CTL" admit --profile sb.json --receipt tampered-fact.json --attesters att
expect admit_tampered_ran_at_exit_6 6 "$CTL" admit --profile sb.json --receipt tampered-ran-at.json --attesters att

# ---------------------------------------------------------------- facts
report inconclusive.json 'c = first("authority_separation"); c["control"] = c["observed"]; c["verdict"] = "inconclusive"; AS = c["id"]'
expect sign_inconclusive_report_exit_0 0 "$CTL" receipt sign inconclusive.json --key att.pem
cp out receipt-inconclusive.json
grep -q 'authority_separation is claimed true but case .* (suite lab) does not pass' err
check sign_warns_fact_not_proved $? "$(cat err)"
grade_is verify_inconclusive_case_advisory advisory_filter 0 receipt-inconclusive.json --attesters att
expect admit_inconclusive_case_exit_3 3 "$CTL" admit --profile sb.json --receipt receipt-inconclusive.json --attesters att
expect admit_inconclusive_case_advisory_profile_exit_0 0 "$CTL" admit --profile al.json --receipt receipt-inconclusive.json --attesters att

report four.json 'del r["facts"]["default_deny"]'
"$CTL" receipt sign four.json --key att.pem >receipt-four.json 2>/dev/null
grade_is verify_four_facts_advisory advisory_filter 0 receipt-four.json --attesters att
report failing.json 'c = first("exact_destination_match"); c["observed"] = "allow"; c["verdict"] = "fail"'
"$CTL" receipt sign failing.json --key att.pem >receipt-failing.json 2>/dev/null
grade_is verify_failing_case_advisory advisory_filter 0 receipt-failing.json --attesters att

# ---------------------------------------------------------------- hollow reports
# Issue 29's shapes, each signed by a TRUSTED attester: none may grade
# security_boundary, and each says which case made a fact false.
# hollow NAME EDIT REASON_RE [ADMIT_RC]: sign (it may refuse: then nothing
# to grade), verify, admit a security_boundary profile (refused with
# ADMIT_RC, default 3: requirement not met).
hollow() {
	name=$1; report "$name.json" "$2"
	if "$CTL" receipt sign "$name.json" --key att.pem >"r-$name.json" 2>sign.err; then
		got=$(rc "$CTL" receipt verify "r-$name.json" --attesters att)
		if [ "$(cat out)" != security_boundary ] && grep -Eq "$3" err; then pass "hostile_${name}_not_security_boundary"
		else fail "hostile_${name}_not_security_boundary" "exit $got grade '$(cat out)': $(head -c 300 err)"; fi
		expect "hostile_${name}_admit_refused_exit_${4:-3}" "${4:-3}" "$CTL" admit --profile sb.json --receipt "r-$name.json" --attesters att
	else
		grep -Eq "$3" sign.err
		check "hostile_${name}_refused_at_sign" $? "$(head -c 300 sign.err)"
	fi
}
hollow not_run_controls 'for c in cases: c["control"] = "not run"; c["control_evidence"] = ""; c["verdict"] = "inconclusive"; del c["control_expected"]' 'control_expected. missing'
hollow placeholder_controls 'for c in cases: c["control"] = c["control_expected"] = "not run"; c["control_evidence"] = "listener x: 1 connection"' 'has a control the suite does not expect'
hollow one_case_per_fact 'r["cases"] = [first(f) for f in r["facts"]]' 'is missing'
hollow zero_count_evidence 'first("default_deny")["control_evidence"] = "listener pub80: 0 connections"' 'no live evidence of its control'
hollow evidence_of_another_kind 'c = first("exact_destination_match"); c["control_evidence"] = "process 1: CapEff 0" if not c["control_evidence"].startswith("process") else "listener pub80: 1 connection"' 'no live evidence of its control'
hollow evidence_junk 'first("redirect_recheck")["control_evidence"] = "reached"' 'no live evidence of its control'
hollow control_guard_absent 'c = first("connect_time_public_address"); c["control"] = c["control_expected"] = "error"; c["control_evidence"] = "listener pub80: 1 connection"' 'has a control the suite does not expect'
hollow evidence_empty_verdict_inconclusive 'c = first("authority_separation"); c["control_evidence"] = ""; c["verdict"] = "inconclusive"' 'does not pass'
hollow ran_at_2020 'r["ran_at"] = "2020-01-01T00:00:00Z"' 'stale: ran_at 2020-01-01T00:00:00Z is older than 30 days' 7
hollow ran_at_tomorrow 'r["ran_at"] = (now + datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")' 'is in the future'
report v1.json 'r["schema"] = "egress-guard.conformance-report.v1"; del r["suite"]'
expect hostile_v1_report_without_suite_refused_exit_2 2 "$CTL" receipt sign v1.json --key att.pem
report unknown-suite.json 'r["suite"] = "made-up"'
expect hostile_report_naming_unknown_suite_refused_exit_2 2 "$CTL" receipt sign unknown-suite.json --key att.pem
# Signed past egress-guardctl's signer (Node.js, the same attester key):
# verify's own rules must hold.
forge f-claims.json receipt-inconclusive.json 'rec["facts"] = {k: True for k in rec["facts"]}'
grade_is hostile_signed_facts_true_cases_unproved_advisory advisory_filter 0 f-claims.json --attesters att
forge f-suite.json receipt.json 'rec["suite"]["digest"] = "0" * 64'
grade_is hostile_unknown_suite_digest_advisory advisory_filter 0 f-suite.json --attesters att
grep -q 'unknown_suite' err
check hostile_unknown_suite_digest_says_unknown_suite $? "$(cat err)"
forge f-ver.json receipt.json 'rec["suite"]["version"] = str(int(rec["suite"]["version"]) + 1)'
grade_is hostile_suite_version_not_the_digests_advisory advisory_filter 0 f-ver.json --attesters att
forge f-future.json receipt.json 'rec["ran_at"] = (now + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")'
grade_is hostile_signed_ran_at_in_future_exit_7 advisory_filter 7 f-future.json --attesters att
grep -q 'ran_at_in_future' err
check hostile_signed_ran_at_in_future_named $? "$(cat err)"
# Controls: the same forging path with nothing changed grades
# security_boundary, so the refusals above are the rules, not the path.
forge f-same.json receipt.json ''
grade_is control_forged_unchanged_receipt_security_boundary security_boundary 0 f-same.json --attesters att

# ---------------------------------------------------------------- the target
# The suite a grade was earned on is part of the decision when the Runner
# names it: a receipt of the lab suite does not admit where the Docker
# deployment's is required, and says which it is.
expect admit_suite_lab_required_lab_receipt_exit_0 0 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --suite lab
grep -q 'met by grade security_boundary on suite lab$' out
check admit_names_the_suite_it_admitted_on $? "$(cat out)"
expect hostile_admit_lab_receipt_where_docker_required_exit_3 3 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --suite docker
grep -q 'graded by suite lab, not one of docker' err
check hostile_admit_other_suite_says_which $? "$(cat err)"
expect admit_suite_list_exit_0 0 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --suite docker,lab
expect hostile_admit_unknown_suite_receipt_with_suite_exit_3 3 "$CTL" admit --profile al.json --receipt f-suite.json --attesters att --suite lab
expect admit_suite_without_receipt_exit_2 2 "$CTL" admit --profile sb.json --grade security_boundary --suite lab

# ---------------------------------------------------------------- freshness
forge f-40d.json receipt.json 'rec["ran_at"] = (now - datetime.timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%SZ")'
grade_is verify_40_days_old_stale_exit_7 advisory_filter 7 f-40d.json --attesters att
expect admit_40_days_old_exit_7 7 "$CTL" admit --profile sb.json --receipt f-40d.json --attesters att
grep -q '^egress-guardctl: admit: stale receipt: ' err
check admit_stale_says_stale $? "$(cat err)"
expect admit_40_days_old_with_max_age_60_exit_0 0 "$CTL" admit --profile sb.json --receipt f-40d.json --attesters att --max-age 60
expect admit_fresh_with_max_age_1_exit_0 0 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --max-age 1
expect admit_max_age_0_exit_2 2 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --max-age 0
expect admit_max_age_junk_exit_2 2 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --max-age 3d

# ---------------------------------------------------------------- the running guard
# admit --control: the receipt must be for the bytes the guard at that
# socket runs (its /v1/status binary_sha256, hashed from /proc/self/exe at
# its start). A guard from another build (here: the same code with one
# byte appended, so another SHA-256) is refused; the guard the receipt
# was made for is admitted.
ip netns add "$GD" && ip -n "$GD" link set lo up
GPORT=3127
run_guard() {	# NAME BINARY: each on its own port
	GPORT=$((GPORT + 1))
	start_bg "$GD" "$T/$1.out" "$2" run --listen "127.0.0.1:$GPORT" --no-state \
	    --log-file "$T/$1.log" --control "$T/$1.sock"
	for _ in $(seq 50); do [ -S "$T/$1.sock" ] && break; sleep 0.1; done
}
run_guard other "$T/guard-copy"
expect hostile_admit_against_guard_of_another_build_exit_4 4 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --control "$T/other.sock"
grep -q 'revision mismatch' err
check hostile_admit_other_build_says_revision_mismatch $? "$(cat err)"
kill "$LASTPID" 2>/dev/null; wait "$LASTPID" 2>/dev/null
run_guard same "$BIN"
"$CTL" status --control "$T/same.sock" 2>/dev/null | python3 -c '
import hashlib, json, sys
assert json.load(sys.stdin)["binary_sha256"] == hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()' "$BIN"
check status_reports_running_binary_sha256 $? "status: $("$CTL" status --control "$T/same.sock" 2>&1 | head -c 300)"
expect control_admit_against_guard_it_was_made_for_exit_0 0 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --control "$T/same.sock"
grade_is verify_against_running_guard_security_boundary security_boundary 0 receipt.json --attesters att --control "$T/same.sock"
expect admit_running_guard_and_other_binary_in_hand_exit_4 4 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --control "$T/same.sock" --binary "$T/guard-copy"
# The binary on disk replaced while the guard runs: it still reports the
# bytes it runs.
cp "$BIN" swapped && run_guard swapped "$T/swapped"
cp "$T/guard-copy" "$T/swapped.new" && mv "$T/swapped.new" "$T/swapped"
expect admit_running_guard_whose_file_was_replaced_exit_0 0 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --control "$T/swapped.sock"
expect admit_unreachable_guard_exit_8 8 "$CTL" admit --profile sb.json --receipt receipt.json --attesters att --control "$T/nothing.sock"

# ---------------------------------------------------------------- show
expect show_exit_0 0 "$CTL" receipt show receipt-inconclusive.json --attesters att
grep -q "^fact authority_separation: FALSE" out && grep -q "^  NO  .*does not pass" out &&
    grep -q "^fact default_deny: TRUE" out && grep -q "control reached: " out &&
    grep -q "the signature verifies" out
check show_names_false_fact_case_and_evidence $? "$(head -c 600 out)"
expect show_one_case_per_fact_exit_0 0 "$CTL" receipt show r-one_case_per_fact.json
grep -q "^  MISSING" out && grep -q "not checked" out
check show_names_missing_cases $? "$(head -c 600 out)"
expect show_garbage_exit_2 2 "$CTL" receipt show garbage.json

# ---------------------------------------------------------------- grades
expect admit_grade_below_requirement_exit_3 3 "$CTL" admit --profile sb.json --grade advisory_filter
[ "$(cat err)" = "egress-guardctl: admit: requirement security_boundary not met by grade advisory_filter" ]
check admit_not_met_message $? "$(cat err)"
expect admit_allowlist_default_advisory_exit_0 0 "$CTL" admit --profile al.json --grade advisory_filter
expect admit_allowlist_security_boundary_exit_0 0 "$CTL" admit --profile sb.json --grade security_boundary
expect admit_unsupported_grade_exit_3 3 "$CTL" admit --profile al.json --grade unsupported
expect admit_unrestricted_no_grade_exit_0 0 "$CTL" admit --profile un.json
expect admit_none_no_grade_exit_0 0 "$CTL" admit --profile no.json
expect admit_unsupported_requirement_exit_2 2 "$CTL" admit --profile us.json --grade security_boundary
expect admit_allowlist_without_grade_exit_2 2 "$CTL" admit --profile al.json
expect admit_unknown_grade_exit_2 2 "$CTL" admit --profile al.json --grade gold
expect admit_grade_and_receipt_exit_2 2 "$CTL" admit --profile al.json --grade advisory_filter --receipt receipt.json --attesters att
expect admit_receipt_without_attesters_exit_2 2 "$CTL" admit --profile al.json --receipt receipt.json
expect admit_missing_profile_file_exit_2 2 "$CTL" admit --profile missing.json --grade advisory_filter
# A profile with package managers is admitted as compile would compile it:
# with the catalog it names hosts from (issue 31), refused without one.
expect admit_package_managers_without_catalog_exit_2 2 "$CTL" admit --profile "$TOP/examples/profile-package-managers.json" --grade advisory_filter
expect admit_package_managers_with_catalog_exit_0 0 "$CTL" admit --profile "$TOP/examples/profile-package-managers.json" --catalog "$TOP/examples/catalog.json" --grade advisory_filter

# ---------------------------------------------------------------- malformed
expect verify_garbage_exit_2 2 "$CTL" receipt verify garbage.json --attesters att
expect admit_garbage_exit_2 2 "$CTL" admit --profile sb.json --receipt garbage.json --attesters att
report extra.json 'r["summary"] = "all good"'
expect sign_unknown_report_key_exit_2 2 "$CTL" receipt sign extra.json --key att.pem
grep -q 'unknown key "summary"' err
check sign_names_unknown_key $? "$(cat err)"
report liar.json 'first("redirect_recheck")["observed"] = "allow"'
expect sign_pass_contradicting_observation_exit_2 2 "$CTL" receipt sign liar.json --key att.pem
expect sign_without_key_exit_2 2 "$CTL" receipt sign report.json
expect sign_with_public_key_exit_2 2 "$CTL" receipt sign report.json --key att.pub.pem
expect sign_missing_binary_exit_2 2 "$CTL" receipt sign report.json --key att.pem --binary nonexistent
expect verify_without_attesters_exit_2 2 "$CTL" receipt verify receipt.json
expect receipt_unknown_subcommand_exit_2 2 "$CTL" receipt check receipt.json

finish
