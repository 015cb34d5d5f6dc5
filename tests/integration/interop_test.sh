# Signed bundles across implementations (docs/design.md "Signed bundle"): keys
# from `egress-guardctl keygen`, bundles built by Node.js's built-in crypto
# from docs/design.md alone (interop_sign.js), checked by `egress-guardctl
# verify`, and the reverse (interop_verify.js). Then `push` and `status`
# against Node's own HTTP server on a Unix socket (interop_server.js).
# Every acceptance has a refusal next to it that shows the check can fail.
# Needs no root and no network namespace. One PASS/FAIL line per check.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TI=$TOP/tests/integration
CTL=${EG_CTL:-$TOP/${BUILD:-build}/egress-guardctl}
T=$(mktemp -d /tmp/eginterop.XXXXXX)
SERVER_PID=""
NPASS=0
NFAIL=0

cleanup() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

pass() { echo "PASS $1"; NPASS=$((NPASS + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; NFAIL=$((NFAIL + 1)); }
finish() {
	echo "# $NPASS passed, $NFAIL failed"
	[ "$NFAIL" -eq 0 ]
}

if ! command -v node >/dev/null 2>&1; then
	echo "FAIL interop: node missing"
	exit 1
fi
[ -x "$CTL" ] || { echo "FAIL interop: $CTL missing"; exit 1; }

# ---- keys and the policy ----
"$CTL" keygen --out "$T/signing.pem" 2>"$T/keygen.err"
rc=$?
mode=$(stat -c %a "$T/signing.pem" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "$mode" = 600 ] && [ -s "$T/signing.pub.pem" ] &&
    grep -q -- '-----BEGIN PRIVATE KEY-----' "$T/signing.pem" &&
    grep -q -- '-----BEGIN PUBLIC KEY-----' "$T/signing.pub.pem"; then
	pass interop_keygen_pkcs8_0600_and_spki
else
	fail interop_keygen_pkcs8_0600_and_spki "rc=$rc mode=$mode $(cat "$T/keygen.err")"
fi
cp "$T/signing.pem" "$T/before.pem"
"$CTL" keygen --out "$T/signing.pem" 2>/dev/null
rc=$?
if [ "$rc" -eq 1 ] && cmp -s "$T/signing.pem" "$T/before.pem"; then
	pass interop_keygen_refuses_overwrite
else
	fail interop_keygen_refuses_overwrite "rc=$rc"
fi
"$CTL" keygen --out "$T/other" 2>/dev/null   # other.pub.pem: a stranger

printf '%s\n' '{"network_policy":"allowlist","allowed_hosts":["api.example.com:443","example.org:80","[2001:db8::1]:8443"]}' >"$T/profile.json"
"$CTL" compile "$T/profile.json" --epoch 2 >"$T/policy.json" &&
    "$CTL" compile "$T/profile.json" --epoch 1 >"$T/policy1.json" ||
    { echo "FAIL interop: compile"; exit 1; }
# The digest, computed without either implementation's help.
want_digest=sha256:$(head -c -1 "$T/policy.json" | sha256sum | cut -d' ' -f1)

# ---- (1) Node signs, egress-guardctl verifies ----
if node "$TI/interop_sign.js" "$T/signing.pem" "$T/policy.json" >"$T/node.json" 2>"$T/node.err"; then
	pass interop_node_signs_ctl_key
else
	fail interop_node_signs_ctl_key "$(cat "$T/node.err")"
fi
out=$("$CTL" verify "$T/node.json" --trust-key "$T/signing.pub.pem" 2>"$T/v.err")
rc=$?
node_kid=$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).key_id)' "$T/node.json")
want="{\"key_id\":\"$node_kid\",\"epoch\":2,\"digest\":\"$want_digest\"}"
if [ "$rc" -eq 0 ] && [ "$out" = "$want" ]; then
	pass interop_node_bundle_verifies_in_ctl
else
	fail interop_node_bundle_verifies_in_ctl "rc=$rc out=$out want=$want $(cat "$T/v.err")"
fi

# ---- (2) egress-guardctl signs, Node verifies ----
"$CTL" sign "$T/policy.json" --key "$T/signing.pem" >"$T/ctl.json" 2>"$T/s.err"
rc=$?
nout=$(node "$TI/interop_verify.js" "$T/signing.pub.pem" "$T/ctl.json" 2>"$T/nv.err")
nrc=$?
if [ "$rc" -eq 0 ] && [ "$nrc" -eq 0 ] && [ "$nout" = "$want" ]; then
	pass interop_ctl_bundle_verifies_in_node
else
	fail interop_ctl_bundle_verifies_in_node "sign rc=$rc node rc=$nrc out=$nout $(cat "$T/s.err" "$T/nv.err")"
fi
# Ed25519 is deterministic and the format has one spelling: the two
# implementations must produce the very same bytes.
if cmp -s "$T/ctl.json" "$T/node.json"; then
	pass interop_bundles_byte_identical
else
	fail interop_bundles_byte_identical "$(diff "$T/ctl.json" "$T/node.json" | head -4)"
fi
# Negative control for Node's verifier: one flipped signature bit.
node -e '
const fs = require("fs"); const b = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const s = Buffer.from(b.signature, "base64"); s[17] ^= 4; b.signature = s.toString("base64");
fs.writeFileSync(process.argv[2], JSON.stringify(b) + "\n");' "$T/ctl.json" "$T/ctlbad.json"
if node "$TI/interop_verify.js" "$T/signing.pub.pem" "$T/ctlbad.json" >/dev/null 2>&1; then
	fail interop_node_refuses_flipped_signature
else
	pass interop_node_refuses_flipped_signature
fi

# ---- (3) a Node bundle with one flipped policy bit is refused ----
node "$TI/interop_sign.js" "$T/signing.pem" "$T/policy.json" --flip-each-byte >"$T/flips" 2>/dev/null
n=0
bad=""
while IFS= read -r line; do
	n=$((n + 1))
	printf '%s\n' "$line" >"$T/flip.json"
	"$CTL" verify "$T/flip.json" --trust-key "$T/signing.pub.pem" >/dev/null 2>"$T/flip.err"
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q 'refused (bad_signature)' "$T/flip.err"; then
		bad="$bad byte$n:rc=$rc"
	fi
done <"$T/flips"
if [ "$n" -gt 100 ] && [ -z "$bad" ]; then
	pass interop_node_bundle_with_flipped_bit_refused
else
	fail interop_node_bundle_with_flipped_bit_refused "lines=$n$bad"
fi

# ---- verify's exit statuses ----
"$CTL" verify "$T/node.json" --trust-key "$T/other.pub.pem" >/dev/null 2>"$T/u.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'refused (unknown_key)' "$T/u.err"; then
	pass interop_ctl_refuses_unknown_key
else
	fail interop_ctl_refuses_unknown_key "rc=$rc $(cat "$T/u.err")"
fi
"$CTL" verify "$T/node.json" --trust-key "$T/other.pub.pem" --trust-key "$T/signing.pub.pem" >/dev/null 2>&1
rc1=$?
"$CTL" verify "$T/node.json" --trust-key "$T/signing.pem" >/dev/null 2>"$T/p.err"
rc2=$?
"$CTL" verify "$T/profile.json" --trust-key "$T/signing.pub.pem" >/dev/null 2>&1
rc3=$?
"$CTL" verify "$T/node.json" >/dev/null 2>&1
rc4=$?
if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 2 ] && grep -q 'private key' "$T/p.err" &&
    [ "$rc3" -eq 2 ] && [ "$rc4" -eq 2 ]; then
	pass interop_ctl_verify_exit_statuses
else
	fail interop_ctl_verify_exit_statuses "two keys=$rc1 private=$rc2 malformed=$rc3 no key=$rc4"
fi

# ---- push and status against Node's HTTP server ----
SOCK=$T/control.sock
node "$TI/interop_server.js" "$SOCK" "$T/signing.pub.pem" 2>"$T/server.err" &
SERVER_PID=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
"$CTL" sign "$T/policy1.json" --key "$T/signing.pem" >"$T/epoch1.json"
node "$TI/interop_sign.js" "$T/other" "$T/policy.json" >"$T/stranger.json"

out=$("$CTL" push "$T/ctl.json" --control "$SOCK" 2>"$T/push.err")
rc=$?
if [ "$rc" -eq 0 ] && [ "$out" = "{\"epoch\":2,\"digest\":\"$want_digest\",\"revoked\":0}" ] &&
    cmp -s "$SOCK.last" "$T/ctl.json"; then
	pass interop_push_sends_bundle_bytes_and_prints_answer
else
	fail interop_push_sends_bundle_bytes_and_prints_answer "rc=$rc out=$out $(cat "$T/push.err")"
fi
out=$("$CTL" status --control "$SOCK" 2>"$T/status.err")
rc=$?
if [ "$rc" -eq 0 ] && [ "$out" = "{\"version\":\"interop\",\"epoch\":2,\"digest\":\"$want_digest\"}" ]; then
	pass interop_status_reads_chunked_answer
else
	fail interop_status_reads_chunked_answer "rc=$rc out=$out $(cat "$T/status.err")"
fi
out=$("$CTL" push "$T/epoch1.json" --control "$SOCK" 2>/dev/null)
rc1=$?
"$CTL" push "$T/stranger.json" --control "$SOCK" >/dev/null 2>&1
rc2=$?
"$CTL" push "$T/profile.json" --control "$SOCK" >/dev/null 2>&1
rc3=$?
"$CTL" push "$T/ctl.json" --control "$SOCK" >/dev/null 2>&1
rc4=$?
if [ "$rc1" -eq 1 ] && echo "$out" | grep -q '"stale_epoch"' && [ "$rc2" -eq 1 ] &&
    [ "$rc3" -eq 2 ] && [ "$rc4" -eq 0 ]; then
	pass interop_push_exit_statuses
else
	fail interop_push_exit_statuses "stale=$rc1 unknown=$rc2 malformed=$rc3 same=$rc4"
fi
"$CTL" push "$T/ctl.json" --control "$T/nowhere.sock" >/dev/null 2>"$T/nw.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "$T/nowhere.sock" "$T/nw.err"; then
	pass interop_push_names_unreachable_socket
else
	fail interop_push_names_unreachable_socket "rc=$rc $(cat "$T/nw.err")"
fi

finish
