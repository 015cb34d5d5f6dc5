#!/bin/sh
# Self-test of the test servers dnsd.py and listener.py (not part of the
# suite: its name does not end in _test.sh). Needs root: runs everything in
# a private network namespace eg-selftest-$$. Prints PASS/FAIL lines, exits
# non-zero on any failure. Usage: sh tests/integration/selftest_servers.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
NS=eg-selftest-$$
T=$(mktemp -d /tmp/eg-selftest.XXXXXX)
PIDS=""
fails=0

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+: $2}"; fails=$((fails + 1)); }
check() { # name expected actual
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected [$2] got [$3]"; fi
}
nsx() { ip netns exec "$NS" "$@"; }
wait_file() { # file, up to 5 s
	i=0
	while [ ! -s "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s "$1" ]
}
start() { # name cmd...: runs in the namespace, remembers the pid
	n=$1; shift
	ip netns exec "$NS" "$@" >"$T/$n.out" 2>&1 &
	PIDS="$PIDS $!"
	eval "pid_$n=$!"
}

[ "$(id -u)" -eq 0 ] || { echo "FAIL selftest: needs root"; exit 1; }
ip netns add "$NS" || exit 1
ip -n "$NS" link set lo up
for a in 198.18.0.53/32 198.18.1.10/32 198.18.1.11/32 10.99.0.5/32; do ip -n "$NS" addr add "$a" dev lo; done
ip -n "$NS" -6 addr add 2001:2::53/128 dev lo nodad
ip -n "$NS" -6 addr add 2001:2::10/128 dev lo nodad

cat >"$T/zone.json" <<'EOF'
{"api.example.test": {"A": ["198.18.1.10"], "AAAA": ["2001:2::10"], "ttl": 0},
 "cname.example.test": {"CNAME": "api.example.test"},
 "flip.example.test": {"cycle": [{"A": ["198.18.1.10"]}, {"A": ["10.99.0.5"]}], "ttl": 0},
 "nx.example.test": {"rcode": "NXDOMAIN"}, "sf.example.test": {"rcode": "SERVFAIL"},
 "slow.example.test": {"A": ["198.18.1.10"], "delay_ms": 1500},
 "drop.example.test": {"drop": true},
 "garbage.example.test": {"mode": "garbage"}, "trunc.example.test": {"mode": "truncate"},
 "ttl.example.test": {"A": ["198.18.1.11", "198.18.1.10"], "ttl": 300}}
EOF

# q.py SERVER NAME TYPE [tcp|raw-hex]: prints "RCODE ans1,ans2 ttl=N" or "TIMEOUT"
# or "UNPARSABLE" (answer did not parse; "id-ok" when the id matched).
cat >"$T/q.py" <<'EOF'
import random, socket, struct, sys
srv, name, qt = sys.argv[1], sys.argv[2], sys.argv[3]
mode = sys.argv[4] if len(sys.argv) > 4 else "udp"
T = {"A": 1, "CNAME": 5, "TXT": 16, "AAAA": 28, "HTTPS": 65}
qid = random.randrange(65536)
q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + b"".join(
    bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack("!HH", T[qt], 1)
if mode.startswith("hex:"):
    q = bytes.fromhex(mode[4:]); mode = "udp"; qid = struct.unpack("!H", q[:2])[0]
fam = socket.AF_INET6 if ":" in srv else socket.AF_INET
try:
    if mode == "tcp":
        s = socket.create_connection((srv, 53), timeout=2); s.sendall(struct.pack("!H", len(q)) + q)
        r = b""
        while len(r) < 2 or len(r) < 2 + struct.unpack("!H", r[:2])[0]:
            c = s.recv(4096)
            if not c: break
            r += c
        r = r[2:]
    else:
        s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(2); s.sendto(q, (srv, 53)); r = s.recv(4096)
except (socket.timeout, TimeoutError):
    print("TIMEOUT"); sys.exit()
def name_at(m, o):
    out = []
    for _ in range(64):
        n = m[o]
        if n >= 0xC0: return name_at(m, ((n & 63) << 8) | m[o + 1])[0], o + 2
        if n == 0: return ".".join(out), o + 1
        out.append(m[o + 1:o + 1 + n].decode()); o += 1 + n
try:
    rid, fl, qd, an = struct.unpack("!HHHH", r[:8])
    rc = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}[fl & 15]
    o = 12
    for _ in range(qd): o = name_at(r, o)[1] + 4
    ans, ttl = [], None
    for _ in range(an):
        o = name_at(r, o)[1]; t, c, ttl, ln = struct.unpack("!HHIH", r[o:o + 10]); o += 10; d = r[o:o + ln]; o += ln
        assert len(d) == ln
        ans.append({1: lambda: "A:" + socket.inet_ntop(socket.AF_INET, d), 28: lambda: "AAAA:" + socket.inet_ntop(socket.AF_INET6, d),
                    5: lambda: "CNAME:" + name_at(r, o - ln)[0]}[t]())
    assert o == len(r) and rid == qid and fl & 0x8400 == 0x8400 and not fl & 0x0080
    print(rc, ",".join(ans) or "-", "ttl=%s" % ttl)
except Exception:
    print("UNPARSABLE", "id-ok" if r[:2] == q[:2] else "id-bad")
EOF
q() { nsx python3 "$T/q.py" "$@"; }

# ---------------------------------------------------------------- dnsd
start dns python3 "$here/dnsd.py" --listen 198.18.0.53 --listen '[2001:2::53]' \
	--zone "$T/zone.json" --log "$T/dns.log" --ready "$T/dns.ready" --pidfile "$T/dns.pid"
wait_file "$T/dns.ready" && pass "dnsd ready" || { fail "dnsd ready" "$(cat "$T/dns.out")"; exit 1; }
check "dnsd pidfile" "$pid_dns" "$(cat "$T/dns.pid")"
check "dns A" "NOERROR A:198.18.1.10 ttl=0" "$(q 198.18.0.53 api.example.test A)"
check "dns AAAA" "NOERROR AAAA:2001:2::10 ttl=0" "$(q 198.18.0.53 api.example.test AAAA)"
check "dns AAAA over IPv6" "NOERROR AAAA:2001:2::10 ttl=0" "$(q 2001:2::53 api.example.test AAAA)"
check "dns A over TCP" "NOERROR A:198.18.1.10 ttl=0" "$(q 198.18.0.53 api.example.test A tcp)"
check "dns case-insensitive" "NOERROR A:198.18.1.10 ttl=0" "$(q 198.18.0.53 ApI.ExAmPlE.TeSt A)"
check "dns ttl + 2 records" "NOERROR A:198.18.1.11,A:198.18.1.10 ttl=300" "$(q 198.18.0.53 ttl.example.test A)"
check "dns NODATA" "NOERROR - ttl=None" "$(q 198.18.0.53 api.example.test TXT)"
check "dns unknown NXDOMAIN" "NXDOMAIN - ttl=None" "$(q 198.18.0.53 other.example.test A)"
check "dns rcode NXDOMAIN" "NXDOMAIN - ttl=None" "$(q 198.18.0.53 nx.example.test A)"
check "dns rcode SERVFAIL" "SERVFAIL - ttl=None" "$(q 198.18.0.53 sf.example.test A)"
check "dns CNAME A" "NOERROR CNAME:api.example.test,A:198.18.1.10 ttl=0" "$(q 198.18.0.53 cname.example.test A)"
check "dns CNAME AAAA" "NOERROR CNAME:api.example.test,AAAA:2001:2::10 ttl=0" "$(q 198.18.0.53 cname.example.test AAAA)"
c=""; for i in 1 2 3 4; do c="$c $(q 198.18.0.53 flip.example.test A | cut -d' ' -f2)"; done
check "dns cycle alternates" " A:198.18.1.10 A:10.99.0.5 A:198.18.1.10 A:10.99.0.5" "$c"
check "dns cycle per qtype" "NOERROR - ttl=None" "$(q 198.18.0.53 flip.example.test AAAA)"
check "dns cycle continues" "NOERROR A:198.18.1.10 ttl=0" "$(q 198.18.0.53 flip.example.test A)"
check "dns drop" "TIMEOUT" "$(q 198.18.0.53 drop.example.test A)"
check "dns garbage" "UNPARSABLE id-ok" "$(q 198.18.0.53 garbage.example.test A)"
check "dns truncate (UDP)" "UNPARSABLE id-ok" "$(q 198.18.0.53 trunc.example.test A)"
check "dns malformed -> FORMERR" "FORMERR - ttl=None" "$(q 198.18.0.53 x.test A hex:abcd01000001000000000000c00c)"
check "dns alive after malformed" "NOERROR A:198.18.1.10 ttl=0" "$(q 198.18.0.53 api.example.test A)"
# a slow answer must not hold up others
t0=$(date +%s%N)
q 198.18.0.53 slow.example.test A >"$T/slow.out" &
slowpid=$!
sleep 0.2
check "dns fast while slow pending (TCP)" "NOERROR A:198.18.1.10 ttl=0" "$(q 198.18.0.53 api.example.test A tcp)"
check "dns fast while slow pending (UDP)" "NOERROR A:198.18.1.10 ttl=0" "$(q 198.18.0.53 api.example.test A)"
t1=$(date +%s%N)
wait $slowpid
t2=$(date +%s%N)
check "dns slow answer" "NOERROR A:198.18.1.10 ttl=0" "$(cat "$T/slow.out")"
[ $(((t1 - t0) / 1000000)) -lt 1200 ] && [ $(((t2 - t0) / 1000000)) -ge 1400 ] &&
	pass "dns delay timing" || fail "dns delay timing" "fast $(((t1 - t0) / 1000000))ms slow $(((t2 - t0) / 1000000))ms"
# zone reload
sed 's/"198.18.1.11", "198.18.1.10"/"198.18.1.11"/' "$T/zone.json" >"$T/zone.new" && mv "$T/zone.new" "$T/zone.json"
check "dns zone reload" "NOERROR A:198.18.1.11 ttl=300" "$(q 198.18.0.53 ttl.example.test A)"
grep -q '^api\.example\.test A 198\.18\.0\.53$' "$T/dns.log" && pass "dns log A line" || fail "dns log A line" "$(head -3 "$T/dns.log")"
grep -q '^api\.example\.test TXT ' "$T/dns.log" && grep -q '^api\.example\.test AAAA 2001:2::53$' "$T/dns.log" &&
	grep -q '^api\.example\.test A ' "$T/dns.log" && grep -q '^- MALFORMED ' "$T/dns.log" &&
	grep -q '^drop\.example\.test A ' "$T/dns.log" && pass "dns log types" || fail "dns log types"
check "dns log lower-cases" "0" "$(grep -c '^[^ ]*[A-Z]' "$T/dns.log")"
check "dns log has no names never asked" "0" "$(grep -c '^never\.' "$T/dns.log")"
check "dns log line count" "27" "$(wc -l <"$T/dns.log")"

# ---------------------------------------------------------------- listener
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=api.example.test \
	-days 1 -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null || fail "openssl cert"
L="python3 $here/listener.py"
start http $L --listen 198.18.1.10:80 --log "$T/http.log" --name api --ready "$T/http.ready" --pidfile "$T/http.pid"
start tls $L --listen 198.18.1.10:443 --log "$T/tls.log" --name api-tls --tls --cert "$T/cert.pem" --key "$T/key.pem" --ready "$T/tls.ready"
start h6 $L --listen '[2001:2::10]:80' --log "$T/h6.log" --ready "$T/h6.ready"
start raw $L --listen 10.99.0.5:7 --log "$T/raw.log" --raw --ready "$T/raw.ready"
start idle $L --listen 10.99.0.5:80 --log "$T/idle.log" --ready "$T/idle.ready"
for n in http tls h6 raw idle; do wait_file "$T/$n.ready" || fail "listener $n ready" "$(cat "$T/$n.out")"; done
check "listener ready file" "198.18.1.10 80" "$(cat "$T/http.ready")"
check "listener log empty at start" "" "$(cat "$T/http.log")"
C="nsx curl -sS --max-time 10"
check "http GET /" "hello from api" "$($C http://198.18.1.10/)"
check "http X-Served-By" "X-Served-By: api" "$($C -D - -o /dev/null http://198.18.1.10/ | tr -d '\r' | grep '^X-Served-By')"
: >"$T/http.log"
out=$($C -v http://198.18.1.10/ http://198.18.1.10/status/201 -w '%{http_code}\n' 2>"$T/ka.err")
check "http keep-alive bodies" "hello from api
200
status 201
201" "$out"
check "http keep-alive one conn" "1" "$(grep -c '^conn ' "$T/http.log")"
check "http req lines" "req GET /
req GET /status/201" "$(grep '^req ' "$T/http.log")"
grep -q '^conn 198\.18\.[0-9.]*:[0-9]*$' "$T/http.log" && grep -q '^bytes [1-9]' "$T/http.log" &&
	pass "http byte log" || fail "http byte log" "$(cat "$T/http.log")"
check "http redirect" "201 http://198.18.1.10/status/201" \
	"$($C -L -o /dev/null -w '%{http_code} %{url_effective}' 'http://198.18.1.10/redirect?to=http%3A%2F%2F198.18.1.10%2Fstatus%2F201')"
check "http redirect Location" "Location: http://x.test/a?b=1&c=2" \
	"$($C -D - -o /dev/null 'http://198.18.1.10/redirect?to=http://x.test/a%3Fb=1%26c=2' | tr -d '\r' | grep '^Location')"
check "http /status/503" "503" "$($C -o /dev/null -w '%{http_code}' http://198.18.1.10/status/503)"
check "http /status/204" "204" "$($C -o /dev/null -w '%{http_code}' http://198.18.1.10/status/204)"
check "http /bytes/N" "1000000 0" "$($C http://198.18.1.10/bytes/1000000 | wc -c) $($C http://198.18.1.10/bytes/1000000 | tr -d x | wc -c)"
check "http /bytes/0" "0" "$($C http://198.18.1.10/bytes/0 | wc -c)"
check "http 404" "404" "$($C -o /dev/null -w '%{http_code}' http://198.18.1.10/nope)"
check "http HEAD" "0" "$($C -I http://198.18.1.10/bytes/5000 -o /dev/null -w '%{size_download}')"
check "http /echo" "ping-pong" "$($C --data-binary ping-pong http://198.18.1.10/echo)"
head -c 3000000 /dev/urandom >"$T/big"
check "http /echo 3 MB (Expect: 100-continue)" "$(md5sum <"$T/big")" "$($C --data-binary @"$T/big" http://198.18.1.10/echo | md5sum)"
check "http /echo chunked" "$(md5sum <"$T/big")" \
	"$($C -H 'Transfer-Encoding: chunked' --data-binary @"$T/big" http://198.18.1.10/echo | md5sum)"
h=$($C -H 'X-Test: one  two' http://198.18.1.10/headers | tr -d '\r')
case "$h" in "GET /headers HTTP/1.1
Host: 198.18.1.10
User-Agent: curl/"*"X-Test: one  two") pass "http /headers verbatim" ;; *) fail "http /headers verbatim" "$h" ;; esac
: >"$T/http.log"
out=$($C http://198.18.1.10/close http://198.18.1.10/ -D - 2>&1 | tr -d '\r' | grep -c '^Connection: close')
check "http /close closes" "1 2" "$out $(grep -c '^conn ' "$T/http.log")"
check "http over IPv6" "hello from [2001:2::10]:80" "$($C 'http://[2001:2::10]/')"
grep -q '^conn \[2001:2::10\]:[0-9]*$' "$T/h6.log" && pass "http v6 conn log" || fail "http v6 conn log" "$(cat "$T/h6.log")"
# malformed and oversized requests get 400/431 and the listener lives on
r=$(nsx python3 -c '
import socket, sys
def ask(data):
    s = socket.create_connection(("198.18.1.10", 80), timeout=5); s.sendall(data)
    r = b""
    while True:
        c = s.recv(65536)
        if not c: break
        r += c
    return r.split(b"\r\n")[0].decode()
print(ask(b"garbage\r\n\r\n"), "|", ask(b"GET / HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n"), "|",
      ask(b"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), "|",
      ask(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n"))')
check "http malformed requests" "HTTP/1.1 400 Bad Request | HTTP/1.1 431 Request Header Fields Too Large | HTTP/1.1 400 Bad Request | HTTP/1.1 200 OK" "$r"

# TLS
check "tls log empty at start" "" "$(cat "$T/tls.log")"
check "https GET /" "hello from api-tls" "$($C -k --resolve api.example.test:443:198.18.1.10 https://api.example.test/)"
check "https keep-alive" "hello from api-tls
status 202" "$($C -k --resolve api.example.test:443:198.18.1.10 https://api.example.test/ https://api.example.test/status/202)"
check "https with CA file" "hello from api-tls" "$($C --cacert "$T/cert.pem" --resolve api.example.test:443:198.18.1.10 https://api.example.test/)"
check "tls conn count" "3" "$(grep -c '^conn ' "$T/tls.log")"
check "tls sni logged" "3" "$(grep -c '^sni api\.example\.test$' "$T/tls.log")"
check "tls req logged" "4" "$(grep -c '^req GET ' "$T/tls.log")"
nsx python3 -c 'import socket; s = socket.create_connection(("198.18.1.10", 443)); s.close()'
sleep 0.2
check "tls bare connect logged, no bytes" "conn" "$(tail -n 1 "$T/tls.log" | cut -d' ' -f1)"
check "https echo 3 MB" "$(md5sum <"$T/big")" "$($C -k --resolve api.example.test:443:198.18.1.10 --data-binary @"$T/big" https://api.example.test/echo | md5sum)"

# raw echo
r=$(nsx python3 -c '
import socket
s = socket.create_connection(("10.99.0.5", 7), timeout=5)
data = bytes(range(256)) * 100
s.sendall(data); s.shutdown(socket.SHUT_WR)
r = b""
while True:
    c = s.recv(65536)
    if not c: break
    r += c
print(r == data)')
check "raw echo" "True" "$r"
check "raw byte log sum" "25600" "$(awk '$1 == "bytes" {n += $2} END {print n}' "$T/raw.log")"
check "untouched listener log empty" "" "$(cat "$T/idle.log")"
[ -f "$T/idle.log" ] && pass "untouched listener log exists" || fail "untouched listener log exists"

# SIGTERM: prompt exit 0
for n in dns http tls; do
	eval "p=\$pid_$n"
	kill "$p"
	i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
	wait "$p"; rc=$?
	check "$n exits 0 on SIGTERM" "0 stopped" "$rc $(kill -0 "$p" 2>/dev/null && echo running || echo stopped)"
done

echo "selftest: $fails failure(s)"
[ "$fails" -eq 0 ]
