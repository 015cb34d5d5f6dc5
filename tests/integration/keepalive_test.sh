# Kept-alive absolute-form HTTP, byte-exact (issue 14, finding 4): on one
# client connection, several requests deep, to an admitted IP literal and to
# an admitted name, the upstream (a recorder that keeps every byte it
# received, tests/integration/keepalive.py) must receive exactly the
# rewritten heads and the bodies, and never a Proxy-* field: Content-Length,
# chunked, Expect: 100-continue, zero-length and HEAD, pipelined in one
# write, smuggling shapes on a later request, another origin on the same
# connection, CONNECT after a pooled upstream, HTTP/1.0 clients and chunked
# or 1xx answers, an upstream sending bytes nobody asked for.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }

cat >"$T/zone.json" <<'Z'
{
 "api.example.test": {"A": ["198.18.1.10"]},
 "api2.example.test": {"A": ["198.18.1.10"]},
 "other.example.test": {"A": ["198.18.1.10"]}
}
Z
cat >"$T/policy.json" <<'P'
{"schema": "egress-guard.policy.v1", "mode": "allowlist", "epoch": 1, "allow": [
 {"host": "198.18.1.10", "port": 8080}, {"host": "198.18.1.10", "port": 8081},
 {"host": "api.example.test", "port": 8080}, {"host": "api2.example.test", "port": 8080},
 {"host": "198.18.1.10", "port": 7}, {"host": "2001:2:0:1::10", "port": 8080}]}
P
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
mkdir -p "$T/rec"
chmod 0777 "$T/rec"
for r in "r8080 198.18.1.10:8080" "r8081 198.18.1.10:8081" "r6 [2001:2:0:1::10]:8080"; do
	set -- $r
	start_bg "$IN" "$T/$1.out" python3 "$TI/keepalive.py" serve --listen "$2" \
	    --dir "$T/rec" --name "$1" --ready "$T/$1.ready"
	wait_file "$T/$1.ready" || { echo "FAIL recorder $1"; cat "$T/$1.out"; exit 1; }
done
start_listener echo 198.18.1.10:7 --raw || { echo "FAIL echo listener"; exit 1; }
start_guard A 3128 --policy "$T/policy.json" --dns 198.18.0.53 --dns-timeout 2 \
    --connect-timeout 2 --allow-range 198.18.0.0/15 --allow-range 2001:2::/48 || exit 1

# The cases print PASS/FAIL lines of their own; count them here.
run_cases() {
	while IFS= read -r line; do
		case "$line" in
		"PASS "*) pass "${line#PASS }" ;;
		"FAIL "*) n=${line#FAIL }; fail "${n%%:*}" "${n#*: }" ;;
		*) echo "$line" ;;
		esac
	done
}
run_cases < <(inwl timeout 300 python3 "$TI/keepalive.py" cases --proxy 10.77.0.1:3128 \
    --dir "$T/rec" --direct 198.18.1.10:8080 --policy "$T/policy.json" --guard-pid "$PID_A" \
    --control "$T/A.sock" --only "${KA_ONLY:-}" 2>&1)
# The negative control of the recorder's check goes straight to it, from the
# guard's namespace (the workload has no route there).
run_cases < <(ingd timeout 30 python3 "$TI/keepalive.py" cases --proxy 10.77.0.1:3128 \
    --dir "$T/rec" --direct 198.18.1.10:8080 --policy "$T/policy.json" --guard-pid "$PID_A" \
    --control "$T/A.sock" --only control_direct_to_upstream_proxy_auth_is_recorded 2>&1)
kill -0 "$PID_A" 2>/dev/null
check guard_still_running $? "$(tail -n 5 "$T/A.out")"
finish
