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
    "$CTL" compile "$T/prof.json" --epoch 2 >"$T/b.json" || { echo "FAIL setup"; exit 1; }

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
chk policy2 198.18.1.10:443 --policy "$T/a.json" --policy "$T/b.json"
refused policy2 "--policy given twice" && [ ! -s "$T/policy2.out" ]
check hostile_check_policy_given_twice_refused $? "rc=$RC $(head -n1 "$T/policy2.err")"
chk timeout2 198.18.1.10:443 --policy "$T/a.json" --dns-timeout 1 --dns-timeout=2
refused timeout2 "--dns-timeout given twice"
check hostile_check_dns_timeout_given_twice_refused $? "rc=$RC $(head -n1 "$T/timeout2.err")"

finish
