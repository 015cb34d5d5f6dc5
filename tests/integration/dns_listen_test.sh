#!/usr/bin/env bash
# The guard's DNS listener (issue 18, `run --dns-listen`), against real
# clients (dig, glibc's getaddrinfo through the workload's resolv.conf)
# and the test's own upstream DNS server (dnsd.py), whose query log shows
# what left the guard.
#
# - an admitted name: its public A and AAAA answers, TTL <= 30, the case
#   of the question kept; over UDP and TCP; MX gets NODATA and no query
#   leaves; more answers than 512 bytes: TC over UDP, all of them over TCP;
# - a name the policy does not admit (or an IP literal as a name):
#   NXDOMAIN and the upstream server saw NO query for it;
# - an admitted name with a private answer: REFUSED, not the address.
#   Control: a guard with --allow-range 10.0.0.0/8 answers the address;
# - upstream silent: SERVFAIL; no policy: REFUSED; a policy installed
#   during the lookup that drops the name: NXDOMAIN (revoked);
# - hostile messages (compression loop, QDCOUNT 2, opcode, truncated,
#   a response, an oversized TCP frame, 300 lookups at once): an error,
#   REFUSED beyond 256 in flight, or nothing; two pipelined TCP queries
#   then a half-close are both answered; the guard still answers after;
# - an IPv6 listener;
# - every answer is a decision line (proto dns) and exactly its metrics.
# Negative control for "no upstream query": the mutant without the policy
# step (make build/mutant-dns_forward/egress-guard, then this script with
# BUILD=build/mutant-dns_forward) fails denied_name_never_queried_upstream. 65 s on the shared build
# machine at load ~40 (dig and python start-up dominate).
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
command -v dig >/dev/null || { echo "FAIL dig missing (bind9-dnsutils)"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }
# ip netns exec mounts /etc/netns/NAME/resolv.conf over /etc/resolv.conf.
mkdir -p "/etc/netns/$WL"
echo "nameserver 10.77.0.1" >"/etc/netns/$WL/resolv.conf"
# Longer than the guard's --dns-timeout: an answer the guard waits for
# upstream reaches getaddrinfo.
echo "options timeout:8 attempts:1" >>"/etc/netns/$WL/resolv.conf"
trap 'cleanup; rm -rf "/etc/netns/$WL"' EXIT INT TERM

many=$(for i in $(seq 40); do printf '"198.18.2.%d",' "$i"; done)
many="[${many%,}]"
cat >"$T/zone.json" <<Z
{
 "ok.test": {"A": ["198.18.1.10"], "AAAA": ["2001:2:0:1::10"], "ttl": 300},
 "v4only.test": {"A": ["198.18.1.10"], "ttl": 300},
 "denied.test": {"A": ["198.18.1.10"]},
 "priv.test": {"A": ["198.18.1.10", "10.99.0.5"]},
 "priv6.test": {"A": ["198.18.1.10"], "AAAA": ["fd00::5"]},
 "slow.test": {"drop": true},
 "slowok.test": {"drop": true},
 "many.test": {"A": $many}
}
Z
cat >"$T/policy.json" <<'P'
{"allow":[{"host":"many.test","port":443},{"host":"ok.test","port":443},{"host":"priv.test","port":443},{"host":"priv6.test","port":443},{"host":"slow.test","port":443},{"host":"slowok.test","port":443},{"host":"v4only.test","port":8080}],"epoch":1,"mode":"allowlist","schema":"egress-guard.policy.v1"}
P
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
# --dns-timeout 5: every answer G gives from upstream has 5 s to come
# (Python's upstream on a loaded machine: at 3 s, CI once saw no answer
# to OK.Test); dig waits 8 (SERVFAIL at 5 s).
# Each guard names its own timeout: the guard refuses a flag given twice.
COMMON="--dns 198.18.0.53 --policy $T/policy.json --allow-range 198.18.0.0/15 --allow-range 2001:2::/48"
start_guard G 3128 $COMMON --dns-listen 10.77.0.1:53 --dns-listen '[::1]:53' \
    --dns-timeout 5 || exit 1
# The control: the same, but 10.0.0.0/8 counts as public. Its 6 s are
# the window for the SIGHUP of the revoke case below.
start_guard C 3129 $COMMON --allow-range 10.0.0.0/8 --dns-listen 10.77.0.1:5353 \
    --dns-timeout 6 || exit 1
# No policy at all.
start_guard N 3130 --dns 198.18.0.53 --dns-listen 10.77.0.1:5354 || exit 1
# The flood's guard (inflight_bound_refuses_beyond_256): as G, but its
# lookups wait 5 s, so the 300 queries, however slowly they are sent on
# a loaded machine, are all within one timeout of the first.
start_guard F 3131 $COMMON --dns-listen 10.77.0.1:5355 --dns-timeout 5 || exit 1

# dq [dig args]: asks the guard from the workload; sets STATUS, FLAGS, ANS
# (the answer lines) and TTLMAX.
dq() {
	out=$(inwl dig @10.77.0.1 +tries=1 +time=8 +noall +comments +answer "$@" 2>&1)
	STATUS=$(printf '%s\n' "$out" | sed -n 's/.*status: \([A-Z]*\),.*/\1/p' | head -n1)
	FLAGS=$(printf '%s\n' "$out" | sed -n 's/^;; flags: \([a-z ]*\);.*/\1/p' | head -n1)
	ANS=$(printf '%s\n' "$out" | grep -v '^;' | grep -v '^$')
	TTLMAX=$(printf '%s\n' "$ANS" | awk 'NF>=5 {if ($2>m) m=$2} END {print m+0}')
}
qcount() { grep -c "^$1 " "$T/queries.log" 2>/dev/null; }

# ---- admitted names
dq ok.test A
case "$STATUS $ANS" in
NOERROR*198.18.1.10*) [ "$TTLMAX" -le 30 ] && [ "$TTLMAX" -gt 0 ]; r=$?;; *) r=1;; esac
check admitted_name_answers_public_a $r "$STATUS ttl=$TTLMAX $ANS"
dq ok.test AAAA
case "$STATUS $ANS" in NOERROR*2001:2:0:1::10*) r=0;; *) r=1;; esac
check admitted_name_answers_public_aaaa $r "$STATUS $ANS"
dq OK.Test A
case "$ANS" in OK.Test.*198.18.1.10*) r=0;; *) r=1;; esac
check answer_keeps_question_case $r "$STATUS $ANS"
dq ok.test A +tcp
case "$STATUS $ANS" in NOERROR*198.18.1.10*) r=0;; *) r=1;; esac
check tcp_query_answered $r "$STATUS $ANS"
out=$(ingd dig @::1 +tries=1 +time=8 +short ok.test AAAA 2>&1)
[ "$out" = "2001:2:0:1::10" ]
check ipv6_listener_answers $? "$out"
dq v4only.test AAAA
[ "$STATUS" = NOERROR ] && [ -z "$ANS" ]
check admitted_name_without_aaaa_is_nodata $? "$STATUS $ANS"
n0=$(qcount ok.test)
dq ok.test MX
[ "$STATUS" = NOERROR ] && [ -z "$ANS" ] && ! grep -q '^ok.test MX' "$T/queries.log"
check mx_for_admitted_name_is_nodata_without_query $? "$STATUS $ANS"
dq many.test A +ignore
case "$FLAGS" in *tc*) [ -z "$ANS" ]; r=$?;; *) r=1;; esac
check udp_answer_over_512_sets_tc $r "flags=$FLAGS"
dq many.test A
[ "$(printf '%s\n' "$ANS" | grep -c '198.18.2.')" -eq 40 ]
check tc_retry_over_tcp_gets_every_answer $? "$(printf '%s\n' "$ANS" | wc -l) answers"

# ---- names the policy does not admit: no query leaves
dq denied.test A
[ "$STATUS" = NXDOMAIN ]
check denied_name_is_nxdomain $? "$STATUS"
dq denied.test AAAA +tcp
dq Denied.Test MX
dq 198.18.1.10 A
[ "$STATUS" = NXDOMAIN ]
check ip_literal_as_name_is_nxdomain $? "$STATUS"
! grep -qi '^denied.test \|^198.18.1.10 ' "$T/queries.log"
check denied_name_never_queried_upstream $? "$(grep -i 'denied\|^198' "$T/queries.log")"

# ---- non-public answers
dq priv.test A
[ "$STATUS" = REFUSED ] && [ -z "$ANS" ]
check private_answer_refused_not_answered $? "$STATUS $ANS"
dq priv6.test A
[ "$STATUS" = REFUSED ] && [ -z "$ANS" ]
check private_aaaa_refuses_the_a_query_too $? "$STATUS $ANS"
dq priv.test A -p 5353
case "$STATUS $ANS" in NOERROR*10.99.0.5*) r=0;; *) r=1;; esac
check control_allow_range_answers_private_address $r "$STATUS $ANS"

# ---- failures
dq slow.test A
[ "$STATUS" = SERVFAIL ]
check upstream_silent_is_servfail $? "$STATUS"
dq ok.test A -p 5354
[ "$STATUS" = REFUSED ]
check no_policy_is_refused $? "$STATUS"

# ---- a policy installed during the lookup that no longer admits the name
# (SIGHUP on C): NXDOMAIN "revoked", not the answer or SERVFAIL.
inwl dig @10.77.0.1 -p 5353 +tries=1 +time=10 slowok.test A >"$T/revoke.out" 2>&1 &
DIGPID=$!
for _ in $(seq 50); do grep -q '^slowok.test A' "$T/queries.log" && break; sleep 0.1; done
sed 's/{"host":"slowok.test","port":443},//; s/"epoch":1/"epoch":2/' "$T/policy.json" >"$T/policy2.json"
cp "$T/policy2.json" "$T/policy.json"
n0=$(grep -c '"event":"policy"' "$T/C.log")
kill -HUP "$PID_C"
for _ in $(seq 50); do [ "$(grep -c '"event":"policy"' "$T/C.log")" -gt "$n0" ] && break; sleep 0.1; done
wait "$DIGPID"
st=$(sed -n 's/.*status: \([A-Z]*\),.*/\1/p' "$T/revoke.out")
# The line is written at the end of the loop pass that sent the answer.
for _ in $(seq 30); do
	grep -q '"host":"slowok.test".*"reason":"revoked"' "$T/C.log" && break; sleep 0.1
done
[ "$st" = NXDOMAIN ] && [ "$(last_decision "$T/C.log" slowok.test)" = deny:revoked ]
check policy_change_during_lookup_revokes_name $? "$st $(last_decision "$T/C.log" slowok.test)"

# ---- getaddrinfo through the workload's resolv.conf
out=$(inwl python3 -c '
import socket, sys
def ask(n):
    try:
        return sorted({a[4][0] for a in socket.getaddrinfo(n, 443, proto=socket.IPPROTO_TCP)})
    except socket.gaierror as e:
        return "error"
print(ask("ok.test"), ask("denied.test"))
' 2>&1)
case "$out" in *"'198.18.1.10'"*"'2001:2:0:1::10'"*"] error") r=0;; *) r=1;; esac
check getaddrinfo_admitted_resolves_denied_fails $r "$out"

# ---- hostile messages: an error rcode or nothing, never a crash. One
# client process for all of them (each line: test name, udp|tcp, hex, the
# answer expected: "rcode=N qd=N" or "none"). An answer is waited for 2 s
# (the guard's own, no upstream); "none" 1 s: an answer later than that
# would pass for none (the check can only miss it, never fail for it),
# and cannot land on a later case, each case keeping its own UDP socket
# (port) open until the end. The flood goes to F (port 5355).
H="abcd01000001000000000000"	# id, RD, QDCOUNT 1
cat >"$T/hostile.txt" <<X
refuses_compression_loop udp ${H}c00c00010001 rcode=1_qd=0
refuses_qdcount_2 udp abcd01000002000000000000026f6b04746573740000010001026f6b04746573740000010001 rcode=1_qd=0
refuses_opcode_not_query udp abcd11000001000000000000026f6b04746573740000010001 rcode=4_qd=0
refuses_truncated_question udp ${H}026f6b0474657374 rcode=1_qd=0
refuses_class_not_in udp ${H}026f6b04746573740000010003 rcode=5_qd=1
refuses_label_over_63_bytes udp ${H}40$(printf '%0128d' 0)0000010001 rcode=1_qd=0
refuses_answer_section_in_query udp abcd01000001000100000000026f6b04746573740000010001 rcode=1_qd=0
refuses_trailing_bytes udp ${H}026f6b04746573740000010001ff rcode=1_qd=0
never_answers_a_response udp abcd81800001000000000000026f6b04746573740000010001 none
drops_message_shorter_than_header udp abcd0100 none
closes_oversized_tcp_frame tcp ffff$(printf '%01200d' 0) none
tcp_two_queries_then_half_close_both_answered tcppipe ${H}026f6b04746573740000010001 answers=2
inflight_bound_refuses_beyond_256 flood ${H}04736c6f7704746573740000010001 bound
X
inwl python3 - "$T/hostile.txt" >"$T/hostile.out" 2>&1 <<'PY'
import socket, struct, sys, time
keep = []	# every case's UDP socket, open to the end: a port of its own
for line in open(sys.argv[1]):
    name, kind, hexmsg, want = line.split()
    msg = bytes.fromhex(hexmsg)
    try:
        if kind == "tcppipe":
            # two framed queries at once, then the write side closed: both
            # are answered before the guard closes
            s = socket.create_connection(("10.77.0.1", 53), timeout=8)
            s.sendall((struct.pack("!H", len(msg)) + msg) * 2)
            s.shutdown(socket.SHUT_WR)
            buf = b""
            while True:
                c = s.recv(65535)
                if not c:
                    break
                buf += c
            n = 0
            while len(buf) >= 2 and len(buf) >= 2 + struct.unpack("!H", buf[:2])[0]:
                ln = struct.unpack("!H", buf[:2])[0]
                n += buf[2 + 3] & 15 == 0
                buf = buf[2 + ln:]
            print(name, "ok" if "answers=%d" % n == want else "got answers=%d" % n)
            continue
        if kind == "flood":
            # 300 lookups of a silent name within ~0.5 s, well inside F's
            # --dns-timeout 5: at most 256 wait (SERVFAIL after the
            # timeout), the rest are REFUSED at once. Without the bound
            # all 300 wait: none REFUSED.
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            for i in range(300):
                s.sendto(struct.pack("!H", i) + msg[2:], ("10.77.0.1", 5355))
                if i % 30 == 29:
                    time.sleep(0.05)	# paced: the guard's socket buffer holds ~250
            got, deadline = {}, time.monotonic() + 10	# F's 5 s, and 5 more
            while len(got) < 300 and time.monotonic() < deadline:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                try:
                    r = s.recv(512)
                except socket.timeout:
                    break
                got[r[:2]] = r[3] & 15
            rc = sorted(got.values())
            ok = rc.count(5) >= 1 and rc.count(2) <= 256 and rc.count(2) + rc.count(5) == len(rc)
            print(name, "ok" if ok else "got refused=%d servfail=%d of %d" % (rc.count(5), rc.count(2), len(rc)))
            continue
        if kind == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            keep.append(s)
            s.settimeout(1.0 if want == "none" else 2.0)
            s.sendto(msg, ("10.77.0.1", 53))
            r = s.recv(65535)
        else:
            s = socket.create_connection(("10.77.0.1", 53), timeout=1)
            s.sendall(msg)
            h = s.recv(2)
            r = s.recv(65535) if len(h) == 2 else b""
        got = "rcode=%d_qd=%d" % (r[3] & 15, struct.unpack("!H", r[4:6])[0]) if len(r) >= 12 else "none"
    except (socket.timeout, ConnectionError):
        got = "none"
    print(name, "ok" if got == want else "got " + got)
PY
while read -r name verdict; do
	check "$name" "$([ "$verdict" = ok ]; echo $?)" "$verdict"
done <"$T/hostile.out"
[ "$(wc -l <"$T/hostile.out")" -eq "$(wc -l <"$T/hostile.txt")" ]
check hostile_client_ran_every_case $? "$(cat "$T/hostile.out")"
dq ok.test A
case "$STATUS $ANS" in NOERROR*198.18.1.10*) r=0;; *) r=1;; esac
st=$STATUS
# The flood's guard too: its 256 lookups over, it answers again.
dq ok.test A -p 5355
case "$STATUS $ANS" in NOERROR*198.18.1.10*) ;; *) r=1;; esac
check still_answers_after_hostile_messages $r "$st, after the flood $STATUS"
kill -0 "$PID_G" 2>/dev/null && kill -0 "$PID_F" 2>/dev/null
check guard_alive $? "G $(kill -0 "$PID_G" 2>&1 && echo alive), F $(kill -0 "$PID_F" 2>&1 && echo alive)"

# ---- the decision log and the metrics
ingd curl -sS --max-time 5 --unix-socket "$T/G.sock" http://localhost/metrics >"$T/metrics.txt"
out=$(python3 - "$T/G.log" "$T/metrics.txt" <<'PY'
import json, re, sys
want = {
    ("ok.test", "A"): ("allow", "allowlisted", "NOERROR"),
    ("ok.test", "MX"): ("allow", "allowlisted", "NOERROR"),
    ("denied.test", "A"): ("deny", "not_allowlisted", "NXDOMAIN"),
    ("priv.test", "A"): ("deny", "non_public_address", "REFUSED"),
    ("slow.test", "A"): ("deny", "dns_timeout", "SERVFAIL"),
    (None, None): ("deny", "bad_request", "FORMERR"),
}
seen, per_reason, per_rcode = set(), {}, {}
for line in open(sys.argv[1], encoding="ascii"):
    o = json.loads(line)
    assert isinstance(o, dict), line
    if o.get("event") != "decision" or o.get("proto") != "dns":
        continue
    for k in ("id", "client", "transport", "host", "qtype", "decision", "reason",
              "rcode", "addrs", "policy_epoch", "policy_digest"):
        assert k in o, (k, o)
    k = (o["host"], o["qtype"])
    if want.get(k) == (o["decision"], o["reason"], o["rcode"]):
        seen.add(k)
    if k == ("priv.test", "A"):
        assert "10.99.0.5" in o["addrs"], o
    r = (o["decision"], o["reason"])
    per_reason[r] = per_reason.get(r, 0) + 1
    per_rcode[o["rcode"]] = per_rcode.get(o["rcode"], 0) + 1
if set(want) - seen:
    print("missing", sorted(set(want) - seen, key=str))
    sys.exit()
m = open(sys.argv[2]).read()
got = {(a, b): int(n) for a, b, n in re.findall(
    r'^egress_guard_decisions_total\{decision="(\w+)",reason="(\w+)",proto="dns"\} (\d+)$', m, re.M)}
rc = {a: int(n) for a, n in re.findall(r'^egress_guard_dns_answers_total\{rcode="(\w+)"\} (\d+)$', m, re.M)}
dropped = re.findall(r'^egress_guard_dns_dropped_total (\d+)$', m, re.M)
if got != per_reason or {k: v for k, v in rc.items() if v} != per_rcode or dropped != ["3"]:
    print("metrics", got, per_reason, rc, per_rcode, dropped)
    sys.exit()
print("ok")
PY
)
check decision_log_and_metrics_name_each_outcome "$([ "$out" = ok ]; echo $?)" "$out"

finish
