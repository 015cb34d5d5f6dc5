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
# default $BIN) with its SHA-256 as the matrix records it.
report() {
	out=$1; shift
	python3 - "${RBIN:-$BIN}" "$out" "${1:-}" <<'PY'
import hashlib, json, sys
binary, out, edit = sys.argv[1], sys.argv[2], sys.argv[3]
def case(cid, fact, probe, exp, obs, cexp, cobs):
    v = "pass" if exp == obs and cexp == cobs else ("fail" if exp != obs else "inconclusive")
    return {"id": cid, "fact": fact, "probe": probe, "expected": exp, "observed": obs,
            "control_expected": cexp, "control": cobs, "verdict": v}
cases = [
    case("edm-01", "exact_destination_match", "CONNECT www.api.example.test:443",
         "deny not_allowlisted", "deny not_allowlisted", "allow", "allow"),
    case("ctpa-08", "connect_time_public_address", "answer flips public\u2192private, TTL 0",
         "deny non_public_address", "deny non_public_address", "allow", "allow"),
    case("rr-01", "redirect_recheck", "curl -L: 302 to a non-admitted name",
         "deny not_allowlisted", "deny not_allowlisted", "allow", "allow"),
    case("as-03", "authority_separation", "control API over the workload-facing TCP listener",
         "400", "400", "200", "200"),
    case("dd-03", "default_deny", "workload ignores the proxy: ICMP echo",
         "blocked", "blocked", "reached", "reached"),
]
r = {"schema": "egress-guard.conformance-report.v1", "provider": "egress-guard",
     "guard_binary": binary, "guard_sha256": hashlib.sha256(open(binary, "rb").read()).hexdigest(),
     "version": "0.1.0", "ran_at": "2026-11-29T10:00:00Z",
     "facts": {f: True for f in ["exact_destination_match", "connect_time_public_address",
                                 "redirect_recheck", "authority_separation", "default_deny"]},
     "cases": cases}
exec(edit)
json.dump(r, open(out, "w"), indent=1, sort_keys=True)
PY
}

profile() {	# profile NAME JSON
	printf '%s\n' "$2" >"$1.json"
}

# ---------------------------------------------------------------- setup
mkdir -p att other empty
"$CTL" keygen --out att.pem 2>/dev/null && cp att.pub.pem att/ &&
    "$CTL" keygen --out other.pem 2>/dev/null && cp other.pub.pem other/
check keygen_attester $? "keygen failed"
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
python3 - "$BIN" <<'PY' 2>err
import base64, hashlib, json, sys
e = json.load(open("receipt.json"))
raw = base64.b64decode(e["receipt"], validate=True)
rec = json.loads(raw)
assert raw == json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
assert rec["schema"] == "egress-guard.conformance.v1" and rec["provider"] == "egress-guard"
want = "0.1.0+sha256:" + hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()
assert rec["provider_revision"] == want, (rec["provider_revision"], want)
assert rec["facts"] == {f: True for f in ["authority_separation", "connect_time_public_address",
    "default_deny", "exact_destination_match", "redirect_recheck"]}, rec["facts"]
assert len(rec["cases"]) == 5 and rec["cases"][1]["probe"] == "answer flips public\u2192private, TTL 0"
assert rec["ran_at"] == "2026-11-29T10:00:00Z"
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
raw = base64.b64decode(e["receipt"]).replace(b'2026-11-29T10:00:00Z', b'2026-11-29T10:00:01Z')
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
report inconclusive.json 'r["cases"][3]["control"] = "400"; r["cases"][3]["verdict"] = "inconclusive"'
expect sign_inconclusive_report_exit_0 0 "$CTL" receipt sign inconclusive.json --key att.pem
cp out receipt-inconclusive.json
grep -q 'authority_separation is claimed true but case as-03 does not pass' err
check sign_warns_fact_not_proved $? "$(cat err)"
grade_is verify_inconclusive_case_advisory advisory_filter 0 receipt-inconclusive.json --attesters att
expect admit_inconclusive_case_exit_3 3 "$CTL" admit --profile sb.json --receipt receipt-inconclusive.json --attesters att
expect admit_inconclusive_case_advisory_profile_exit_0 0 "$CTL" admit --profile al.json --receipt receipt-inconclusive.json --attesters att

report four.json 'del r["facts"]["default_deny"]'
"$CTL" receipt sign four.json --key att.pem >receipt-four.json 2>/dev/null
grade_is verify_four_facts_advisory advisory_filter 0 receipt-four.json --attesters att
report failing.json 'r["cases"][0]["observed"] = "allow"; r["cases"][0]["verdict"] = "fail"'
"$CTL" receipt sign failing.json --key att.pem >receipt-failing.json 2>/dev/null
grade_is verify_failing_case_advisory advisory_filter 0 receipt-failing.json --attesters att

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

# ---------------------------------------------------------------- malformed
printf 'not json\n' >garbage.json
expect verify_garbage_exit_2 2 "$CTL" receipt verify garbage.json --attesters att
expect admit_garbage_exit_2 2 "$CTL" admit --profile sb.json --receipt garbage.json --attesters att
report extra.json 'r["summary"] = "all good"'
expect sign_unknown_report_key_exit_2 2 "$CTL" receipt sign extra.json --key att.pem
grep -q 'unknown key "summary"' err
check sign_names_unknown_key $? "$(cat err)"
report liar.json 'r["cases"][2]["observed"] = "allow"'
expect sign_pass_contradicting_observation_exit_2 2 "$CTL" receipt sign liar.json --key att.pem
expect sign_without_key_exit_2 2 "$CTL" receipt sign report.json
expect sign_with_public_key_exit_2 2 "$CTL" receipt sign report.json --key att.pub.pem
expect sign_missing_binary_exit_2 2 "$CTL" receipt sign report.json --key att.pem --binary nonexistent
expect verify_without_attesters_exit_2 2 "$CTL" receipt verify receipt.json
expect receipt_unknown_subcommand_exit_2 2 "$CTL" receipt check receipt.json

finish
