# Issue 30, the third outside review, as it drove the guard: real Python
# http.server and Node http upstreams (tests/integration/review.py,
# review_upstream.js), its own namespaces, the guard's own DNS listener.
#
#   1. CL.0 desync through a pooled upstream: a body on GET is refused, so
#      no upstream parses a request the guard did not decide; an upstream
#      that answers 4xx before reading a body is not pooled.
#   2. Routing fields (Forwarded, X-Forwarded-*, X-Original-URL, ...) never
#      reach the upstream.
#   3. A decision line written after a `policy` line names that policy's
#      epoch, for a pooled request and for a DNS listener lookup in flight.
#   4. A push closes a pooled upstream it revokes at once, while the
#      connection's next request is still resolving.
#   5. The control socket and /v1/health answer while the workload holds
#      the guard at its descriptor limit; the DNS listener's lines are
#      bounded per client, the metrics exact.
# Negative control: EG_BUILD=<the build before issue 30> (9406157) fails
# every hostile case except hostile_cl0_desync_node_* (Node frames a
# GET's body and does not desync: that case is the cross-check of the
# Python one). The control_* cases show the upstreams live and the
# descriptor limit reached. About 55 s.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
command -v node >/dev/null || { echo "FAIL node: not installed"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }

cat >"$T/zone.json" <<'Z'
{
 "api.example.test": {"A": ["198.18.1.10"]},
 "secret.example.test": {"A": ["198.18.1.10"]},
 "slow.example.test": {"A": ["198.18.1.10"], "delay_ms": 2500},
 "dnsslow.example.test": {"A": ["198.18.1.10"], "delay_ms": 1500}
}
Z
# policy EPOCH [without]: the allowlist at EPOCH, less the entry WITHOUT.
policy() {
	python3 - "$1" "${2:-}" <<'PY'
import json, sys
allow = [{"host": h, "port": p} for h, p in (("api.example.test", 8080),
         ("api.example.test", 8081), ("slow.example.test", 8080),
         ("dnsslow.example.test", 8080)) if "%s:%d" % (h, p) != sys.argv[2]]
print(json.dumps({"schema": "egress-guard.policy.v1", "mode": "allowlist",
                  "epoch": int(sys.argv[1]), "allow": allow}))
PY
}
policy 1 >"$T/policy.json"
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_bg "$IN" "$T/py.out" python3 "$TI/review.py" upstream --listen 198.18.1.10:8080 \
    --log "$T/py.log" --ready "$T/py.ready"
wait_file "$T/py.ready" || { echo "FAIL python upstream"; cat "$T/py.out"; exit 1; }
start_bg "$IN" "$T/node.out" node "$TI/review_upstream.js" 198.18.1.10 8081 \
    "$T/node.log" "$T/node.ready"
wait_file "$T/node.ready" || { echo "FAIL node upstream"; cat "$T/node.out"; exit 1; }
start_guard A 3128 --policy "$T/policy.json" --dns 198.18.0.53 --dns-timeout 6 \
    --connect-timeout 2 --allow-range 198.18.0.0/15 --workers 2 \
    --dns-listen 10.77.0.1:53 || exit 1
RV="python3 $TI/review.py"
EPOCH=1

# upstream_since LOG N: the JSON lines of LOG after its first N lines.
upstream_since() { tail -n +"$(($2 + 1))" "$1" 2>/dev/null; }
nlines() { wc -l <"$1" 2>/dev/null || echo 0; }

# ---- 1. CL.0 desync ------------------------------------------------------
# The upstream must parse no request the guard did not decide: never the
# smuggled POST /smug, never the secret virtual host; the client's second
# answer is never the secret host's.
for up in "python 8080 py" "node 8081 node"; do
	set -- $up
	n0=$(nlines "$T/$3.log")
	out=$(inwl $RV desync --proxy 10.77.0.1:3128 --origin "api.example.test:$2")
	parsed=$(upstream_since "$T/$3.log" "$n0" | grep -v '"event": *"close"')
	smug=$(printf '%s\n' "$parsed" | grep -c -e '/smug' -e 'secret.example.test')
	echo "$out" | grep -q 'secret.example.test'; leak=$?
	[ "$smug" -eq 0 ] && [ "$leak" -ne 0 ]
	check "hostile_cl0_desync_$1_no_undecided_request_upstream" $? \
	    "client: $out; upstream parsed: $parsed"
done
# The refusal is the guard's, with its reason (new behaviour; the old build
# forwarded the body).
out=$(inwl $RV desync --proxy 10.77.0.1:3128 --origin api.example.test:8080)
echo "$out" | grep -q '"status1": 400, "reason1": "bad_request"' &&
    grep -q '"detail":"a body on this method is refused' "$T/A.log"
check hostile_cl0_body_on_get_refused_400_with_reason $? "$out"
# Negative control: the same body on POST, which the upstream reads, is
# framed and forwarded; the live upstream parses exactly POST /a and GET /b,
# and the second answer is /b's.
n0=$(nlines "$T/py.log")
out=$(inwl $RV desync --proxy 10.77.0.1:3128 --origin api.example.test:8080 --method1 POST)
parsed=$(upstream_since "$T/py.log" "$n0" | grep -v '"event": *"close"' |
    python3 -c 'import json,sys; print(" ".join(json.loads(l)["method"] + json.loads(l)["path"] for l in sys.stdin))')
[ "$parsed" = "POST/a GET/b" ] && echo "$out" | grep -q '"body2": "vhost=api.example.test:8080 path=/b'
check control_cl0_body_on_post_framed_upstream_live $? "parsed: $parsed; client: $out"
# An upstream that answers 413 without reading a POST body: the body (a
# GET for the secret host) must not become the answer to the next request.
out=$(inwl $RV reject --proxy 10.77.0.1:3128 --origin api.example.test:8080)
echo "$out" | grep -q '"status1": 413' &&
    echo "$out" | grep -q '"body2": "vhost=api.example.test:8080 path=/b'
check hostile_body_answered_413_upstream_not_pooled $? "$out"

# ---- 2. routing fields ---------------------------------------------------
for up in "python 8080 py" "node 8081 node"; do
	set -- $up
	n0=$(nlines "$T/$3.log")
	out=$(inwl $RV routing --proxy 10.77.0.1:3128 --origin "api.example.test:$2")
	got=$(upstream_since "$T/$3.log" "$n0" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o.get("path") == "/routing":
        names = sorted(k.lower() for k, v in o["headers"])
        print(" ".join(names))
')
	bad=$(printf '%s\n' "$got" | tr ' ' '\n' | grep -c -i -E \
	    '^(forwarded|x-forwarded-.*|x-original-url|x-rewrite-url|x-original-host|x-host|x-http-host-override|x-real-ip|true-client-ip|x-client-ip)$')
	# Control in the same request: the recorder saw it, X-Keep reached it.
	printf '%s\n' "$got" | tr ' ' '\n' | grep -qx x-keep && [ "$bad" -eq 0 ]
	check "hostile_routing_fields_never_reach_$1_upstream" $? "$out; upstream got: $got"
done

# ---- 3. lines after a push ----------------------------------------------
# after_policy_epochs EPOCH HOST PROTO: the policy_epoch of every decision
# line for HOST (and PROTO) below the `policy` line of EPOCH.
after_policy_epochs() {
	python3 - "$T/A.log" "$1" "$2" "$3" <<'PY'
import json, sys
seen, out = False, []
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("event") == "policy" and o.get("policy_epoch") == int(sys.argv[2]):
        seen = True
    elif seen and o.get("event") == "decision" and o.get("host") == sys.argv[3] \
            and o.get("proto") == sys.argv[4]:
        out.append(str(o.get("policy_epoch")))
print(" ".join(out) if seen else "no-policy-line")
PY
}
# The review's timing: request 2 on the pooled upstream, its answer 1.5 s
# late, the push 0.3 s after it was sent (the line waited for the first
# byte of the answer).
EPOCH=$((EPOCH + 1)); policy "$EPOCH" >"$T/next.json"
out=$(inwl $RV pushed --proxy 10.77.0.1:3128 --origin api.example.test:8080 \
    --path2 '/slow?ms=1500' --after 0.3 --policy "$T/policy.json" \
    --new-policy "$T/next.json" --pid "$PID_A")
e=$(after_policy_epochs "$EPOCH" api.example.test http)
echo "$out" | grep -q '"status2": 200' && [ -n "$e" ] &&
    ! printf '%s\n' $e | grep -vqx "$EPOCH"
check hostile_pooled_allow_line_after_push_names_new_epoch $? \
    "client: $out; epochs below policy $EPOCH: $e"
# A DNS listener lookup in flight (1.5 s) when the push lands (0.3 s).
EPOCH=$((EPOCH + 1)); policy "$EPOCH" >"$T/next.json"
inwl python3 -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
q = b"".join(bytes([len(l)]) + l.encode() for l in "dnsslow.example.test".split(".")) + b"\0"
s.sendto(struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + q + struct.pack(">HH", 1, 1),
         ("10.77.0.1", 53))
print(len(s.recv(512)))' >"$T/dnsq.out" 2>&1 &
qpid=$!
# The push once the lookup is in flight (the DNS server saw it), 0.3 s in.
for _ in $(seq 50); do queried dnsslow.example.test && break; sleep 0.1; done
sleep 0.3
mv "$T/next.json" "$T/policy.json"; kill -HUP "$PID_A"
wait "$qpid"
sleep 0.2
e=$(after_policy_epochs "$EPOCH" dnsslow.example.test dns)
[ -n "$e" ] && [ "$e" != no-policy-line ] && ! printf '%s\n' $e | grep -vqx "$EPOCH"
check hostile_dns_line_after_push_names_new_epoch $? \
    "answer: $(cat "$T/dnsq.out"); epochs below policy $EPOCH: $e"

# ---- 4. a pooled upstream revoked while the next request resolves --------
# Request 1 pools an upstream to api.example.test:8080; request 2 is for
# slow.example.test (2.5 s to resolve); 0.3 s in, a push drops
# api.example.test:8080. The pooled connection must close at the push, not
# when the lookup ends.
EPOCH=$((EPOCH + 1)); policy "$EPOCH" api.example.test:8080 >"$T/next.json"
n0=$(nlines "$T/py.log")
out=$(inwl $RV pushed --proxy 10.77.0.1:3128 --origin api.example.test:8080 \
    --origin2 slow.example.test:8080 --path2 /s --after 0.3 --policy "$T/policy.json" \
    --new-policy "$T/next.json" --pid "$PID_A")
lag=$(upstream_since "$T/py.log" "$n0" | python3 -c '
import json, sys
push = json.loads(sys.argv[1]).get("push_t")
lines = [json.loads(l) for l in sys.stdin]
first = next((o["conn"] for o in lines if o.get("path") == "/a"), None)
close = next((o["t"] for o in lines if o.get("event") == "close" and o["conn"] == first), None)
print("none" if push is None or close is None else "%.2f" % (close - push))
' "$out")
echo "$out" | grep -q '"status2": 200' && [ "$lag" != none ] &&
    python3 -c "import sys; sys.exit(0 if $lag < 1.0 else 1)"
check hostile_pooled_upstream_revoked_closed_at_push $? \
    "client: $out; pooled upstream closed ${lag}s after the push (lookup: 2.5 s)"
EPOCH=$((EPOCH + 1)); policy "$EPOCH" >"$T/policy.json"; kill -HUP "$PID_A"

# ---- 5b. DNS listener lines bounded per client ---------------------------
metric() {
	curl -s --max-time 3 --unix-socket "$T/A.sock" http://localhost/metrics |
	    sed -n "s/^$1 \([0-9]*\)$/\1/p"
}
m0=$(metric 'egress_guard_dns_answers_total{rcode="NOERROR"}')
n0=$(nlines "$T/A.log")
out=$(inwl $RV dnsflood --server 10.77.0.1 --name api.example.test --count 2000)
sleep 1.5	# the last aggregate line: at most DNSLOG_EVERY_S after
m1=$(metric 'egress_guard_dns_answers_total{rcode="NOERROR"}')
res=$(tail -n +"$((n0 + 1))" "$T/A.log" | python3 -c '
import json, sys
lines = supp = 0
for l in sys.stdin:
    o = json.loads(l)
    if o.get("event") == "decision" and o.get("proto") == "dns" and o.get("qtype") == "TXT":
        lines += 1
    elif o.get("event") == "dns_log_suppressed" and o.get("client") == "10.77.0.2":
        supp += o["lines"]
print(lines, supp)')
set -- $res
secs=$(echo "$out" | sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p')
answered=$(echo "$out" | sed -n 's/.*"answered": \([0-9]*\).*/\1/p')
python3 -c "
import sys
lines, supp, secs, ans, m = $1, $2, ${secs:-0}, ${answered:-0}, ${m1:-0} - ${m0:-0}
# At most the burst and the refill, exact counts: lines + suppressed = answers.
sys.exit(0 if lines <= 100 + 20 * secs + 5 and lines + supp == m and m >= ans >= 1900 else 1)"
check hostile_dns_listener_log_bounded_per_client $? \
    "flood: $out; lines $1, suppressed $2, metrics answers $((${m1:-0} - ${m0:-0}))"

# ---- 5a. the control socket's descriptor reserve -------------------------
# A second guard at 256 descriptors; the workload opens 400 idle
# connections and holds them: the control socket must still answer.
EG_WRAP="prlimit --nofile=256:256" start_guard R 3129 --policy "$T/policy.json" \
    --dns 198.18.0.53 --allow-range 198.18.0.0/15 --workers 1 --max-conns 1000 \
    --header-timeout 30 || exit 1
inwl $RV hold --proxy 10.77.0.1:3129 --count 400 --seconds 15 >"$T/hold.out" 2>&1 &
hpid=$!
PIDS="$PIDS $hpid"
for _ in $(seq 50); do grep -q 'accept paused' "$T/R.log" && break; sleep 0.1; done
grep -q 'accept paused: out of file descriptors' "$T/R.log"
check control_workload_reached_descriptor_limit $? "guard fds: $(fds "$PID_R")"
h=$(timeout 5 curl -s -o /dev/null -w '%{http_code}' --max-time 3 \
    --unix-socket "$T/R.sock" http://localhost/v1/health)
s=$(timeout 5 "$CTL" status --control "$T/R.sock" 2>&1 | head -c 4000)
[ "$h" = 200 ] && echo "$s" | grep -q '"active_connections"'
check hostile_control_answers_at_descriptor_limit $? \
    "health: $h; status: $s; guard fds: $(fds "$PID_R")"
kill "$hpid" 2>/dev/null; wait "$hpid" 2>/dev/null

for p in A R; do
	eval "pid=\$PID_$p"
	kill -0 "$pid" 2>/dev/null
	check "guard_${p}_still_running" $? "$(tail -n 5 "$T/$p.out")"
done
finish
