# Profile abbreviations, black-box: allow_package_managers compiled from a
# catalog into exact entries (egress-guardctl compile --catalog), their
# provenance through sign -> push -> GET /v1/policy and egress-guard check,
# the guard admitting exactly the expanded hosts (real curl, real DNS, a
# live listener), a newer catalog refused at the same epoch, a bundle
# whose provenance was edited refused by its signature, and diff and
# push --no-widen on widening and narrowing pairs.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "FAIL build: binaries missing"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }
mkdir -p "$T/state" "$T/keys"
chmod 0700 "$T/state" "$T/keys"

cat >"$T/zone.json" <<'Z'
{"api.example.test": {"A": ["198.18.1.10"]},
 "registry.npm.example.test": {"A": ["198.18.1.10"]},
 "npm2.example.test": {"A": ["198.18.1.10"]},
 "pypi.example.test": {"A": ["198.18.1.10"]}}
Z
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_listener pub 198.18.1.10:80

# The test's catalogs: port 80, where its listener is. v2 is v1 with one
# more npm host.
cat >"$T/cat1.json" <<'C'
{"schema":"egress-guard.catalog.v1","version":"t1",
 "ecosystems":{"npm":["registry.npm.example.test:80"],"pypi":["pypi.example.test:80"]}}
C
cat >"$T/cat2.json" <<'C'
{"schema":"egress-guard.catalog.v1","version":"t2",
 "ecosystems":{"npm":["registry.npm.example.test:80","npm2.example.test:80"],
               "pypi":["pypi.example.test:80"]}}
C
# prof NAME JSON-MEMBERS → $T/NAME.prof
prof() { echo "{\"network_policy\":\"allowlist\",$2}" >"$T/$1.prof"; }
# build NAME PROFILE CATALOG EPOCH → $T/NAME.pol and the bundle $T/NAME.b
build() {
	"$CTL" compile "$T/$2.prof" --catalog "$T/$3.json" --epoch "$4" >"$T/$1.pol" &&
	    "$CTL" sign "$T/$1.pol" --key "$T/keys/k.pem" >"$T/$1.b"
}
getpol() { ingd curl -sS --max-time 5 --unix-socket "$T/G.sock" http://localhost/v1/policy; }
active() { getpol | python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["epoch"], o["digest"])'; }

"$CTL" keygen --out "$T/keys/k.pem" >/dev/null 2>&1 || { echo "FAIL keygen"; exit 1; }
start_guard G 3128 --trust-key "$T/keys/k.pub.pem" --state-dir "$T/state" \
    --dns 198.18.0.53 --allow-range 198.18.0.0/15 || exit 1

# ---- compile: refusals named, exit 2
prof mcp '"allow_mcp_servers":true'
out=$("$CTL" compile "$T/mcp.prof" --catalog "$T/cat1.json" 2>&1); rc=$?
case "$out" in *"allow_mcp_servers grants no workload host"*) [ $rc -eq 2 ]; r=$?;; *) r=1;; esac
check hostile_mcp_alone_refused_at_compile $r "rc=$rc $out"
prof unk '"allow_package_managers":true,"package_managers":["npm","leftpad"]'
out=$("$CTL" compile "$T/unk.prof" --catalog "$T/cat1.json" 2>&1); rc=$?
case "$out" in *'package_managers[1] "leftpad": unknown ecosystem'*) [ $rc -eq 2 ]; r=$?;; *) r=1;; esac
check hostile_unknown_ecosystem_refused_with_its_name $r "rc=$rc $out"
printf '{"schema":"egress-guard.catalog.v1","version":"x","ecosystems":{"npm":["*.npm.example.test:80"]}}' >"$T/wild.json"
prof one '"allowed_hosts":["api.example.test:80"],"allow_package_managers":true,"package_managers":["npm"],"allow_mcp_servers":true'
out=$("$CTL" compile "$T/one.prof" --catalog "$T/wild.json" 2>&1); rc=$?
case "$out" in *'ecosystems.npm[0] "*.npm.example.test:80": wildcards'*) [ $rc -eq 2 ]; r=$?;; *) r=1;; esac
check hostile_wildcard_catalog_entry_refused_named $r "rc=$rc $out"
out=$("$CTL" compile "$T/one.prof" 2>&1); rc=$?
case "$out" in *"needs a catalog"*) [ $rc -eq 2 ]; r=$?;; *) r=1;; esac
check package_managers_without_catalog_refused $r "rc=$rc $out"
out=$("$CTL" compile "$T/one.prof" --catalog "$T/cat1.json" --catalog "$T/cat2.json" 2>&1); rc=$?
case "$out" in *"--catalog given twice"*) [ $rc -eq 2 ]; r=$?;; *) r=1;; esac
check hostile_catalog_given_twice_refused $r "rc=$rc $out"

# ---- sign -> push -> GET: the provenance and the catalog survive
build one one cat1 1 || { echo "FAIL compile/sign"; exit 1; }
out=$("$CTL" verify "$T/one.b" --trust-key "$T/keys/k.pub.pem" 2>&1)
case "$out" in *'"catalog":{"digest":"sha256:'*'"version":"t1"}}') r=0;; *) r=1;; esac
check verify_shows_the_pinned_catalog $r "$out"
out=$("$CTL" push "$T/one.b" --control "$T/G.sock" 2>&1)
case "$out" in *'"epoch":1'*) r=0;; *) r=1;; esac
check push_expanded_policy_accepted $r "$out"
getpol >"$T/get1.json"
python3 - "$T/get1.json" "$T/one.pol" "$T/cat1.json" <<'PY'
import hashlib, json, sys
o = json.load(open(sys.argv[1]))
pol = open(sys.argv[2]).read().strip()
served = json.dumps(o["policy"], separators=(",", ":"), sort_keys=True)
assert served == pol, (served, pol)
assert o["digest"] == "sha256:" + hashlib.sha256(pol.encode()).hexdigest()
assert o["catalog"]["version"] == "t1", o["catalog"]
assert o["catalog"] == o["policy"]["catalog"]
assert o["granted"] == {"profile": 1, "package_managers:npm": 1}, o["granted"]
via = {(e["host"], e["port"]): e.get("via", "profile") for e in o["policy"]["allow"]}
assert via == {("api.example.test", 80): "profile",
               ("registry.npm.example.test", 80): "package_managers:npm"}, via
PY
check provenance_survives_sign_push_get $? "$(head -c 600 "$T/get1.json")"
out=$(ingd "$BIN" check registry.npm.example.test:80 --policy "$T/one.b" \
    --trust-key "$T/keys/k.pub.pem" --dns 198.18.0.53 --allow-range 198.18.0.0/15 2>&1)
case "$out" in *"catalog: t1 sha256:"*"policy match: admitted (allowlisted) via package_managers:npm"*) r=0;; *) r=1;; esac
check check_prints_catalog_and_provenance $r "$out"

# The guard matches exactly: the expanded host reaches the live
# listener; the ecosystem not declared (pypi, in the same catalog, same
# address) is denied and never reaches it.
# (The listener logs each request's target: the path tells them apart.)
out=$(curl_proxy 3128 http://registry.npm.example.test/?npm)
case "$out" in *code=200*) grep -q "^req GET /?npm" "$T/pub.log"; r=$?;; *) r=1;; esac
check expanded_package_manager_host_admitted_live $r "$out"
out=$(curl_proxy 3128 http://pypi.example.test/?pypi)
case "$out" in *code=403*reason=not_allowlisted*) ! grep -q "^req GET /?pypi" "$T/pub.log"; r=$?;; *) r=1;; esac
check hostile_undeclared_ecosystem_host_denied $r "$out"

# ---- a newer catalog is a new policy: refused at the same epoch
before=$(active)
build one_t2 one cat2 1
out=$("$CTL" push "$T/one_t2.b" --control "$T/G.sock" 2>&1); rc=$?
case "$out" in *epoch_conflict*) [ $rc -eq 1 ] && [ "$(active)" = "$before" ]; r=$?;; *) r=1;; esac
check hostile_newer_catalog_same_epoch_refused_409 $r "rc=$rc $out"
out=$(curl_proxy 3128 http://npm2.example.test/?npm2)
case "$out" in *code=403*reason=not_allowlisted*) ! grep -q "^req GET /?npm2" "$T/pub.log"; r=$?;; *) r=1;; esac
check hostile_newer_catalog_host_denied_until_pushed $r "$out"
out=$("$CTL" diff "$T/one.pol" "$T/one_t2.pol"); rc=$?
case "$out" in *"catalog: t1 sha256:"*"-> t2 sha256:"*"+ npm2.example.test:80 package_managers:npm"*"widens: yes"*)
    [ $rc -eq 9 ]; r=$?;; *) r=1;; esac
check diff_newer_catalog_widens_exit_9 $r "rc=$rc $out"

# ---- a bundle whose provenance was edited: refused by its signature
python3 - "$T/one.b" "$T/lie.b" <<'PY'
import base64, json, sys
b = json.load(open(sys.argv[1]))
pol = base64.b64decode(b["policy"]).decode()
lie = pol.replace(',"via":"package_managers:npm"', "")
assert lie != pol
b["policy"] = base64.b64encode(lie.encode()).decode()
open(sys.argv[2], "w").write(json.dumps(b, separators=(",", ":")))
PY
out=$("$CTL" push "$T/lie.b" --control "$T/G.sock" 2>&1); rc=$?
case "$out" in *bad_signature*) [ $rc -eq 1 ] && [ "$(active)" = "$before" ]; r=$?;; *) r=1;; esac
check hostile_edited_provenance_refused_by_signature $r "rc=$rc $out"

# The control: the newer catalog compiled at a new epoch is taken, and
# its new host reaches the listener.
build one_t2e2 one cat2 2
out=$("$CTL" push "$T/one_t2e2.b" --control "$T/G.sock" 2>&1); rc=$?
out2=$(curl_proxy 3128 http://npm2.example.test/?npm2)
case "$out/$out2" in *'"epoch":2'*code=200*) [ $rc -eq 0 ] && grep -q "^req GET /?npm2" "$T/pub.log"; r=$?;; *) r=1;; esac
check control_newer_catalog_at_new_epoch_taken $r "rc=$rc $out $out2"

# ---- push --no-widen
# Narrowing (api.example.test dropped): pushed.
prof two '"allow_package_managers":true,"package_managers":["npm"]'
build two two cat1 3
out=$("$CTL" diff "$T/one.b" "$T/two.b"); rc=$?
case "$out" in *"- api.example.test:80 profile"*"widens: no"*) [ $rc -eq 0 ]; r=$?;; *) r=1;; esac
check diff_narrowing_bundles_exit_0 $r "rc=$rc $out"
out=$("$CTL" push "$T/two.b" --control "$T/G.sock" --no-widen 2>&1); rc=$?
case "$out" in *'"epoch":3'*) [ $rc -eq 0 ]; r=$?;; *) r=1;; esac
check no_widen_narrowing_pushed $r "rc=$rc $out"
out=$("$CTL" push "$T/two.b" --control "$T/G.sock" --no-widen --no-widen 2>&1); rc=$?
case "$out" in *"--no-widen given twice"*) [ $rc -eq 2 ]; r=$?;; *) r=1;; esac
check hostile_no_widen_given_twice_refused $r "rc=$rc $out"
# Widening (pypi added): refused with exit 9, nothing sent.
prof three '"allow_package_managers":true,"package_managers":["npm","pypi"]'
build three three cat1 4
before=$(active)
n0=$(grep -c '"method":"PUT"' "$T/G.log")
out=$("$CTL" push "$T/three.b" --control "$T/G.sock" --no-widen 2>&1); rc=$?
n1=$(grep -c '"method":"PUT"' "$T/G.log")
case "$out" in *"refused (--no-widen)"*"+ pypi.example.test:80 package_managers:pypi"*)
    [ $rc -eq 9 ] && [ "$(active)" = "$before" ] && [ "$n0" = "$n1" ]; r=$?;; *) r=1;; esac
check hostile_no_widen_refuses_widening_exit_9 $r "rc=$rc puts=$n0/$n1 $out"
out=$(curl_proxy 3128 http://pypi.example.test/?pypi)
case "$out" in *code=403*) ! grep -q "^req GET /?pypi" "$T/pub.log"; r=$?;; *) r=1;; esac
check no_widen_refused_host_still_denied $r "$out"
# The control: the same bundle without --no-widen is taken, and its
# host then reaches the listener.
out=$("$CTL" push "$T/three.b" --control "$T/G.sock" 2>&1); rc=$?
out2=$(curl_proxy 3128 http://pypi.example.test/?pypi)
case "$out/$out2" in *'"epoch":4'*code=200*) [ $rc -eq 0 ] && grep -q "^req GET /?pypi" "$T/pub.log"; r=$?;; *) r=1;; esac
check control_widening_bundle_pushed_without_no_widen $r "rc=$rc $out $out2"

finish
