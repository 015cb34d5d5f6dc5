# The command lines of both programs, black-box: usage errors, exit
# statuses and where each message goes, for `egress-guard run|check` and
# egress-guardctl. A `run` that a lax parser would let start runs in a
# namespace of its own, under a 5 s bound; nothing here touches the
# network.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "FAIL build: binaries missing"; exit 1; }
ip netns add "$GD" && ip -n "$GD" link set lo up || { echo "FAIL netns"; exit 1; }

cat >"$T/prof.json" <<'P'
{"network_policy":"allowlist","allowed_hosts":["198.18.1.10:443"]}
P
"$CTL" compile "$T/prof.json" --epoch 1 >"$T/a.json" &&
    "$CTL" compile "$T/prof.json" --epoch 2 >"$T/b.json" &&
    "$CTL" keygen --out "$T/k1.pem" 2>/dev/null &&
    "$CTL" keygen --out "$T/k2.pem" 2>/dev/null || { echo "FAIL setup"; exit 1; }

# run_ns NAME ARGS...: `egress-guard run` in GD for at most 5 s; its
# output in $T/NAME.err, its status in RC.
run_ns() {
	local name=$1; shift
	ingd timeout 5 "$BIN" run --listen 127.0.0.1:3128 --control "$T/$name.sock" \
	    "$@" >"$T/$name.err" 2>&1
	RC=$?
}
# refused NAME WANT: RC is 2 and $T/NAME.err says WANT.
refused() { [ "$RC" -eq 2 ] && grep -qF -- "$2" "$T/$1.err"; }

# ---- run: a flag that holds one value is taken once
run_ns policy2 --no-state --policy "$T/a.json" --policy "$T/b.json"
refused policy2 "--policy given twice"
check hostile_run_policy_given_twice_refused $? "rc=$RC $(head -n1 "$T/policy2.err")"
run_ns user2 --no-state --user=nobody --user root
refused user2 "--user given twice"
check hostile_run_user_given_twice_refused $? "rc=$RC $(head -n1 "$T/user2.err")"
run_ns nostate2 --no-state --no-state
refused nostate2 "--no-state given twice"
check hostile_run_no_state_twice_named_as_given_twice $? "rc=$RC $(head -n1 "$T/nostate2.err")"
# Negative control: the repeatable flags repeat, and the guard starts
# (then --help stops it before anything is bound).
run_ns repeat --no-state --policy "$T/a.json" --listen 127.0.0.1:3129 \
    --allow-range 198.18.0.0/15 --allow-range 198.18.0.0/15 --help
[ "$RC" -eq 0 ] && grep -q -- "--listen ADDR:PORT" "$T/repeat.err"
check control_run_repeatable_flags_repeat $? "rc=$RC $(head -n1 "$T/repeat.err")"

# ---- run: a start short of descriptors is a failed start (exit 2, and
# the reason said), not libevent's own exit 1 with a raw line. Where the
# start runs short depends on how many descriptors the caller left open
# (lib.sh closes what CI's runner leaves open, but a start's own use
# moves too), so the limit sweeps 31 values: every one must be exit 2
# with a reason, and with 16 workers the sweep crosses a worker's loop
# (libevent's fatal path) more than once.
r=0; lev=0; out=""
for n in $(seq 10 40); do
	rc=$( (ulimit -n "$n"; ingd timeout 5 "$BIN" run --listen 127.0.0.1:3128 \
	    --control "$T/fdstart.sock" --no-state --dns 127.0.0.1 --workers 16 \
	    >"$T/fdstart.err" 2>&1; echo $?) )
	last=$(tail -n 1 "$T/fdstart.err" | cut -c1-160)
	if [ "$rc" -ne 2 ] || grep -q '^\[' "$T/fdstart.err" ||
	    ! printf '%s\n' "$last" | grep -qE '"event":"error".*Too many open files|^egress-guard: .*Too many open files'; then
		r=1; out="$out [$n: rc=$rc $last]"
	fi
	grep -q '"event":"error","msg":"libevent: ' "$T/fdstart.err" && lev=$((lev + 1))
done
[ "$r" -eq 0 ] && [ "$lev" -ge 1 ]
check hostile_start_short_of_descriptors_exits_2_with_a_log_line $? \
    "libevent fatal seen $lev times;$out"

# ---- run: the descriptor limit is raised to what the bounds need
# (6 x 100 + 80 x 2 + 160 = 920), as far as the hard limit lets; what
# stays short is a warning. nofile_run NAME SOFT HARD: SOFT is then the
# guard's soft limit once it has started.
nofile_run() {
	local name=$1 pid
	ip netns exec "$GD" bash -c 'ulimit -S -n "$2" && ulimit -H -n "$1" && exec "$3" run \
	    --listen 127.0.0.1:3130 --control "$4" --no-state --dns 127.0.0.1 \
	    --max-conns 100 --workers 2' _ "$3" "$2" "$BIN" "$T/$name.sock" \
	    >"$T/$name.err" 2>&1 &
	pid=$!; PIDS="$PIDS $pid"
	for _ in $(seq 50); do
		grep -q '"event":"policy"' "$T/$name.err" && break; sleep 0.1
	done
	SOFT=$(awk '/^Max open files/ {print $4}' "/proc/$pid/limits")
	kill "$pid"; wait "$pid" 2>/dev/null
}
nofile_run nofile1 256 4096
[ "$SOFT" = 920 ] && ! grep -q 'descriptor limit' "$T/nofile1.err"
check hostile_low_soft_descriptor_limit_raised_to_the_bounds $? \
    "soft=$SOFT $(grep 'descriptor limit' "$T/nofile1.err")"
nofile_run nofile2 256 500
[ "$SOFT" = 500 ] && grep -q '"event":"warning","msg":"descriptor limit 500 is below the 920 that --max-conns 100 and 2 workers need' "$T/nofile2.err"
check hostile_hard_descriptor_limit_below_the_bounds_warned $? \
    "soft=$SOFT $(grep 'descriptor limit' "$T/nofile2.err")"

# ---- run: messages name what was given
run_ns cluster -xy
refused cluster "unknown or incomplete option: -xy"
check hostile_run_short_option_cluster_named_as_given $? "rc=$RC $(head -n1 "$T/cluster.err")"

# ---- check
# chk NAME ARGS...: `egress-guard check`, stdout in $T/NAME.out, stderr
# in $T/NAME.err, status in RC.
chk() {
	local name=$1; shift
	"$BIN" check "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}
chk nopolicy 198.18.1.10:443
refused nopolicy "missing --policy" && [ ! -s "$T/nopolicy.out" ]
check check_without_policy_says_missing_policy $? "rc=$RC $(head -n1 "$T/nopolicy.err")"
chk policy2 198.18.1.10:443 --policy "$T/a.json" --policy "$T/b.json"
refused policy2 "--policy given twice" && [ ! -s "$T/policy2.out" ]
check hostile_check_policy_given_twice_refused $? "rc=$RC $(head -n1 "$T/policy2.err")"
chk timeout2 198.18.1.10:443 --policy "$T/a.json" --dns-timeout 1 --dns-timeout=2
refused timeout2 "--dns-timeout given twice"
check hostile_check_dns_timeout_given_twice_refused $? "rc=$RC $(head -n1 "$T/timeout2.err")"

# A target that is no HOST:PORT is a usage error (exit 2, said on
# stderr), not a verdict.
r=0; out=""
for t in example.com x:99999 "$(printf 'ex\303\244mple.com:443')" ":443"; do
	chk badtarget "$t" --policy "$T/a.json"
	out="$out [$t: $RC $(head -n1 "$T/badtarget.err")]"
	refused badtarget "not a HOST:PORT destination" && [ ! -s "$T/badtarget.out" ] || r=1
done
check hostile_check_unparsable_target_is_usage_error_exit_2 $r "$out"
# Output that cannot be written is an error, whatever the verdict.
"$BIN" check 198.18.1.10:443 --policy "$T/a.json" --allow-range 198.18.0.0/15 \
    >/dev/full 2>"$T/full.err"; RC=$?
refused full "cannot write to standard output"
check hostile_check_stdout_full_exits_2 $? "rc=$RC $(cat "$T/full.err")"
# Negative control: the same check to a readable stdout, the ranges
# repeated, allows (0).
chk allow 198.18.1.10:443 --policy "$T/a.json" --allow-range 198.18.0.0/15 \
    --allow-range 198.18.0.0/15
[ "$RC" -eq 0 ] && grep -q "^verdict: allow" "$T/allow.out"
check control_check_allow_exit_0_ranges_repeat $? "rc=$RC $(tail -n1 "$T/allow.out") $(cat "$T/allow.err")"
# check takes --policy as run does: a signed bundle is checked against
# --trust-key (the verdict then follows its policy), refused without one
# or under a key that did not sign it.
"$CTL" sign "$T/a.json" --key "$T/k1.pem" >"$T/a.bundle"
chk bsigned 198.18.1.10:443 --policy "$T/a.bundle" --trust-key "$T/k2.pub.pem" \
    --trust-key "$T/k1.pub.pem" --allow-range 198.18.0.0/15
r=1; [ "$RC" -eq 0 ] && grep -q "^signature: verified, key [0-9a-f]\{64\}$" "$T/bsigned.out" &&
    grep -q "^verdict: allow allowlisted" "$T/bsigned.out" && r=0
chk bnokey 198.18.1.10:443 --policy "$T/a.bundle" --allow-range 198.18.0.0/15
refused bnokey "is a signed bundle: give the --trust-key it is checked against" &&
    [ ! -s "$T/bnokey.out" ] || r=1
chk bother 198.18.1.10:443 --policy "$T/a.bundle" --trust-key "$T/k2.pub.pem" \
    --allow-range 198.18.0.0/15
refused bother "bundle refused (unknown_key)" && [ ! -s "$T/bother.out" ] || r=1
# Every --trust-key is read as run reads it, whatever --policy holds: a
# private key given as one is refused with a compiled policy too.
chk bprivkey 198.18.1.10:443 --policy "$T/a.json" --trust-key "$T/k1.pem" \
    --allow-range 198.18.0.0/15
[ "$RC" -eq 2 ] && grep -q -- "--trust-key\|k1.pem" "$T/bprivkey.err" &&
    [ ! -s "$T/bprivkey.out" ] || r=1
check hostile_check_bundle_verified_against_trust_key_as_run_does $r \
    "rc=$RC $(cat "$T/bsigned.out" "$T/bsigned.err" "$T/bnokey.err" "$T/bother.err" "$T/bprivkey.err" | tr '\n' ' ')"

# ---- the usage: on stdout when asked for, on stderr after an error
r=0; out=""
for h in --help help; do
	"$BIN" "$h" >"$T/help.out" 2>"$T/help.err"; RC=$?
	out="$out [$h: rc=$RC out=$(wc -l <"$T/help.out") err=$(wc -l <"$T/help.err")]"
	[ "$RC" -eq 0 ] && [ ! -s "$T/help.err" ] &&
	    grep -q -- "check HOST:PORT --policy FILE" "$T/help.out" &&
	    grep -q -- "--deny-range CIDR.*--dns-timeout S" "$T/help.out" || r=1
done
"$BIN" >"$T/help.out" 2>"$T/help.err"; RC=$?
out="$out [none: rc=$RC out=$(wc -l <"$T/help.out")]"
[ "$RC" -eq 2 ] && [ ! -s "$T/help.out" ] && grep -q "^usage:" "$T/help.err" || r=1
check help_on_stdout_when_asked_on_stderr_on_error $r "$out"

# ---- egress-guardctl: the same rule
# ctl NAME ARGS...: egress-guardctl, output in $T/NAME.err, status in RC.
ctl() {
	local name=$1; shift
	"$CTL" "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}
ctl epoch2 compile "$T/prof.json" --epoch 1 --epoch 2
refused epoch2 "--epoch given twice" && [ ! -s "$T/epoch2.out" ]
check hostile_ctl_compile_epoch_given_twice_refused $? "rc=$RC $(head -n1 "$T/epoch2.err")"
ctl key2 sign "$T/a.json" --key "$T/k1.pem" --key="$T/k2.pem"
refused key2 "--key given twice" && [ ! -s "$T/key2.out" ]
check hostile_ctl_sign_key_given_twice_refused $? "rc=$RC $(head -n1 "$T/key2.err")"
# A policy too large for any bundle (8 MiB once in base64) is bad input,
# exit 2 before the key is read, not a failure to sign (1). The control:
# the same key signs a small policy.
python3 - >"$T/huge.json" <<'PY'
import json
a = [{"host": "h%06d.example.test" % i, "port": 443} for i in range(170000)]
print(json.dumps({"allow": a, "epoch": 1, "mode": "allowlist",
    "schema": "egress-guard.policy.v1"}, sort_keys=True, separators=(",", ":")))
PY
ctl huge sign "$T/huge.json" --key "$T/k1.pem"
refused huge "policy too large: a bundle is at most 8388608 bytes" && [ ! -s "$T/huge.out" ]
check hostile_ctl_sign_policy_too_large_for_a_bundle_exits_2 $? "rc=$RC $(head -n1 "$T/huge.err")"
ctl small sign "$T/a.json" --key "$T/k1.pem"
[ "$RC" -eq 0 ] && [ -s "$T/small.out" ]
check control_ctl_sign_small_policy_exits_0 $? "rc=$RC $(head -n1 "$T/small.err")"
ctl out2 keygen --out "$T/k3.pem" --out "$T/k4.pem"
refused out2 "--out given twice" && [ ! -e "$T/k3.pem" ] && [ ! -e "$T/k4.pem" ]
check hostile_ctl_keygen_out_given_twice_refused_nothing_written $? "rc=$RC $(head -n1 "$T/out2.err")"
r=0; out=""
for c in "push $T/a.json" status; do
	# shellcheck disable=SC2086
	ctl ctl2 $c --control "$T/x.sock" --control "$T/y.sock"
	out="$out [$c: $RC $(head -n1 "$T/ctl2.err")]"
	refused ctl2 "--control given twice" || r=1
	# shellcheck disable=SC2086
	ctl uid2 $c --control "$T/x.sock" --guard-uid 0 --guard-uid 65534
	out="$out [$c: $RC $(head -n1 "$T/uid2.err")]"
	refused uid2 "--guard-uid given twice" || r=1
done
check hostile_ctl_push_status_control_and_guard_uid_given_twice_refused $r "$out"
# Negative control: verify's --trust-key is repeatable, and the one
# signature checks.
"$CTL" sign "$T/a.json" --key "$T/k1.pem" >"$T/a.bundle" 2>/dev/null
ctl verify verify "$T/a.bundle" --trust-key "$T/k2.pub.pem" --trust-key "$T/k1.pub.pem"
[ "$RC" -eq 0 ] && grep -q '"epoch":1' "$T/verify.out"
check control_ctl_verify_trust_key_repeats $? "rc=$RC $(cat "$T/verify.err")"

# ---- tenants (issue 33): compile --tenant, sign, verify, diff
ctl tcomp compile "$T/prof.json" --epoch 3 --tenant a
[ "$RC" -eq 0 ] && grep -q '"schema":"egress-guard.policy.v1","tenant":"a"}$' "$T/tcomp.out"
check ctl_compile_tenant_written_last $? "rc=$RC $(cat "$T/tcomp.out" "$T/tcomp.err")"
cp "$T/tcomp.out" "$T/ta.json"
"$CTL" compile "$T/prof.json" --epoch 4 --tenant b >"$T/tb.json" &&
    "$CTL" compile "$T/prof.json" --epoch 4 --tenant a >"$T/ta4.json" &&
    "$CTL" sign "$T/ta.json" --key "$T/k1.pem" >"$T/ta.bundle" 2>/dev/null &&
    "$CTL" sign "$T/tb.json" --key "$T/k1.pem" >"$T/tb.bundle" 2>/dev/null
check ctl_tenant_policies_compile_and_sign $? ""
ctl tverify verify "$T/ta.bundle" --trust-key "$T/k1.pub.pem"
r=1; [ "$RC" -eq 0 ] && grep -q '"epoch":3,.*"tenant":"a"}$' "$T/tverify.out" && r=0
# Negative control: a bundle of a policy without one shows none.
ctl tverify0 verify "$T/a.bundle" --trust-key "$T/k1.pub.pem"
[ "$RC" -eq 0 ] && ! grep -q tenant "$T/tverify0.out" || r=1
check ctl_verify_prints_the_tenant $r "$(cat "$T/tverify.out" "$T/tverify.err" "$T/tverify0.out")"
r=0; out=""
for bad in A -a "" abcdefghijklmnopqrstuvwxyz0123456 a/b "a b"; do
	ctl tbad compile "$T/prof.json" --tenant="$bad"
	out="$out [$bad: $RC $(head -n1 "$T/tbad.err")]"
	{ refused tbad "a tenant ID is 1-32 characters of [a-z0-9-]" ||
	    refused tbad "--tenant needs a value"; } && [ ! -s "$T/tbad.out" ] || r=1
done
ctl tbad2 compile "$T/prof.json" --tenant a --tenant b
refused tbad2 "--tenant given twice" || r=1
check hostile_ctl_compile_bad_tenant_refused_exit_2 $r "$out $(head -n1 "$T/tbad2.err")"
# A tenant change moves every grant to another sandbox: widening (9),
# the same entries notwithstanding; and from none to a tenant too.
ctl tdiff diff "$T/ta.json" "$T/tb.bundle"
r=1; [ "$RC" -eq 9 ] && grep -q '^tenant: a -> b$' "$T/tdiff.out" &&
    grep -q '^widens: yes (tenant a -> b' "$T/tdiff.out" && r=0
ctl tdiff0 diff "$T/a.json" "$T/ta.json"
[ "$RC" -eq 9 ] && grep -q '^tenant: none -> a$' "$T/tdiff0.out" || r=1
check hostile_ctl_diff_tenant_change_widens_exit_9 $r "rc=$RC $(cat "$T/tdiff.out" "$T/tdiff0.out")"
# Negative control: the same tenant at a new epoch does not widen.
ctl tdiffs diff "$T/ta.bundle" "$T/ta4.json"
[ "$RC" -eq 0 ] && ! grep -q '^tenant:' "$T/tdiffs.out" && grep -q "^widens: no" "$T/tdiffs.out"
check control_ctl_diff_same_tenant_exit_0 $? "rc=$RC $(cat "$T/tdiffs.out")"

# ---- tenants: the control-socket commands' usage errors (2), and an
# unreachable guard (2, as push and status)
printf '{"id":"a","link":"eg-a"}' >"$T/spec-a.json"
printf '{"link":"eg-a"}' >"$T/spec-noid.json"
printf '{"id":7}' >"$T/spec-numid.json"
printf '{"id":"a/../b"}' >"$T/spec-path.json"
printf '{"id":"a","id":"b"}' >"$T/spec-dup.json"
r=0; out=""
tusage() {	# tusage WANT ARGS...: exit 2, WANT on stderr, nothing on stdout
	local want=$1; shift
	ctl tusage "$@"
	out="$out [$*: $RC $(head -n1 "$T/tusage.err")]"
	refused tusage "$want" && [ ! -s "$T/tusage.out" ] || r=1
}
tusage "missing add, remove or list" tenant
tusage "unknown tenant command" tenant frob --control "$T/x.sock"
tusage "missing SPEC.json" tenant add --control "$T/x.sock"
tusage "missing --control" tenant add "$T/spec-a.json"
tusage "missing ID" tenant remove --control "$T/x.sock"
tusage "unexpected argument" tenant list --control "$T/x.sock" extra
tusage "--control given twice" tenant list --control "$T/x.sock" --control "$T/y.sock"
tusage "unknown option" tenant list --control "$T/x.sock" --tenant a
tusage 'no string "id"' tenant add --control "$T/x.sock" "$T/spec-noid.json"
tusage 'no string "id"' tenant add --control "$T/x.sock" "$T/spec-numid.json"
tusage 'id "a/../b": a tenant ID' tenant add --control "$T/x.sock" "$T/spec-path.json"
tusage "duplicate" tenant add --control "$T/x.sock" "$T/spec-dup.json"
tusage "a tenant ID is 1-32" tenant remove --control "$T/x.sock" ../a
tusage "a tenant ID is 1-32" status --control "$T/x.sock" --tenant A
tusage "a tenant ID is 1-32" push "$T/ta.bundle" --control "$T/x.sock" --tenant "a?b"
tusage "--tenant given twice" push "$T/ta.bundle" --control "$T/x.sock" --tenant a --tenant a
check hostile_ctl_tenant_usage_errors_exit_2 $r "$out"
r=0; out=""
for c in "tenant add --control $T/none.sock $T/spec-a.json" \
    "tenant remove --control $T/none.sock a" "tenant list --control $T/none.sock" \
    "status --control $T/none.sock --tenant a" \
    "push $T/ta.bundle --control $T/none.sock --tenant a" \
    "push $T/ta.bundle --control $T/none.sock --tenant a --no-widen"; do
	# shellcheck disable=SC2086
	ctl tunr $c
	out="$out [$c: $RC $(head -n1 "$T/tunr.err")]"
	if echo "$c" | grep -q no-widen; then
		[ "$RC" -eq 1 ] && grep -q "cannot tell what the guard runs.*none.sock: connect" "$T/tunr.err" || r=1
	else
		refused tunr "none.sock: connect: No such file or directory" || r=1
	fi
done
check hostile_ctl_tenant_commands_unreachable_guard $r "$out"
# Negative control: a live guard (no tenant mode) answers the same calls,
# its JSON reason printed, a refusal (1): the calls reach a listener.
ingd "$BIN" run --listen 127.0.0.1:3131 --control "$T/tg.sock" --no-state \
    --dns 127.0.0.1 >"$T/tg.err" 2>&1 &
PIDS="$PIDS $!"; tgpid=$!
for _ in $(seq 50); do
	grep -q '"event":"policy"' "$T/tg.err" && break; sleep 0.1
done
r=0; out=""
for c in "tenant list --control $T/tg.sock" "status --control $T/tg.sock --tenant a"; do
	# shellcheck disable=SC2086
	ctl tlive $c
	out="$out [$c: $RC $(cat "$T/tlive.out") $(head -n1 "$T/tlive.err")]"
	[ "$RC" -eq 1 ] && grep -q '"error":' "$T/tlive.out" &&
	    grep -q "refused by $T/tg.sock (HTTP 404)" "$T/tlive.err" || r=1
done
grep -q '"event":"control".*"status":404' "$T/tg.err" || r=1
check control_ctl_tenant_calls_reach_a_live_guard $r "$out"
kill "$tgpid" 2>/dev/null; wait "$tgpid" 2>/dev/null

finish
