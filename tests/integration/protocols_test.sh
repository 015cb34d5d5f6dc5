# Client protocols besides CONNECT, with real clients: absolute-form HTTP
# (curl, Python urllib) with keep-alive and per-request recheck, redirects
# followed by the client and refused, SOCKS5 (curl --socks5-hostname), the
# TLS SNI check (openssl s_client), and request-smuggling attempts. Every
# refusal has a negative control through guard B (policy widened, ranges
# allowed) or with the mechanism switched off.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
topo_up || { echo "FAIL topology"; exit 1; }

cat >"$T/zone.json" <<'Z'
{
 "api.example.test": {"A": ["198.18.1.10"]},
 "api2.example.test": {"A": ["198.18.1.10"]},
 "other.example.test": {"A": ["198.18.1.10"]},
 "private.example.test": {"A": ["10.99.0.5"]},
 "flip.example.test": {"cycle": [{"A": ["198.18.1.10"]}, {"A": ["10.99.0.5"]}], "ttl": 0},
 "swap.example.test": {"cycle": [{"A": ["198.18.1.13"]}, {"A": ["198.18.1.11", "198.18.1.13"]}],
   "AAAA": [], "ttl": 0}
}
Z
python3 - "$T/policy.json" api.example.test:80 api.example.test:443 api2.example.test:80 \
    private.example.test:80 flip.example.test:80 api.example.test:7 api.example.test:8000 <<'P'
import json, sys
allow = [{"host": h, "port": int(p)} for h, _, p in (a.rpartition(":") for a in sys.argv[2:])]
json.dump({"schema": "egress-guard.policy.v1", "mode": "allowlist", "epoch": 1,
           "allow": allow}, open(sys.argv[1], "w"))
P
echo '{"allow":[],"epoch":1,"mode":"unrestricted","schema":"egress-guard.policy.v1"}' >"$T/open.json"

make_cert api.example.test
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_listener pub 198.18.1.10:80
start_listener pubtls 198.18.1.10:443 --tls --cert "$T/cert.pem" --key "$T/key.pem"
start_listener priv 10.99.0.5:80
start_listener echo 198.18.1.10:7 --raw

COMMON="--dns 198.18.0.53 --dns-timeout 2 --connect-timeout 2"
start_guard A 3128 --policy "$T/policy.json" $COMMON --allow-range 198.18.0.0/15 || exit 1
start_guard B 3129 --policy "$T/open.json" $COMMON --allow-range 198.18.0.0/15 \
    --allow-range 10.0.0.0/8 || exit 1
start_guard C 3130 --policy "$T/policy.json" $COMMON --allow-range 198.18.0.0/15 \
    --sni-check off || exit 1

# decisions LOG: "id host port decision reason client" per decision line
decisions() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") == "decision":
        print(o["id"], o["host"], o["port"], o["proto"], o["decision"], o["reason"], o["client"])
' "$1"
}

# answer_after FIRST TEXT: on one connection from the workload, FIRST and
# its whole answer (a request for api.example.test/; empty: none), then
# TEXT (both with Python escapes); prints the status line and the body of
# what the guard answered to TEXT, read until it closes: "LINE | BODY".
answer_after() {
	inwl python3 - "$1" "$2" <<'PY'
import codecs, socket, sys
first, text = (codecs.decode(a, "unicode_escape").encode("latin-1") for a in sys.argv[1:3])
s = socket.create_connection(("10.77.0.1", 3128), timeout=10)
s.sendall(first)
d = b""
while first and b"hello from pub\n" not in d:
    x = s.recv(65536)
    if not x:
        break
    d += x
s.sendall(text)
r = b""
while True:
    x = s.recv(65536)
    if not x:
        break
    r += x
print(r.split(b"\r\n")[0].decode(), "|", r.split(b"\r\n\r\n", 1)[-1].decode().strip())
PY
}
GET_API='GET http://api.example.test/ HTTP/1.1\r\n\r\n'

# ---- absolute-form HTTP
out=$(curl_proxy 3128 http://api.example.test/headers -H 'Proxy-Authorization: Basic c2VjcmV0' \
    -H 'Connection: X-Secret' -H 'X-Secret: leaked' -H 'Keep-Alive: 5' -H 'X-Keep: yes')
r=1
case "$out" in *code=200*)
	grep -q '^GET /headers HTTP/1.1' "$T/body" && grep -qi '^Host: api.example.test' "$T/body" &&
	    grep -qi '^Via: 1.1 egress-guard' "$T/body" && grep -qi '^X-Keep: yes' "$T/body" &&
	    ! grep -qi -e '^Proxy-' -e '^X-Secret' -e '^Keep-Alive' -e '^Connection:' "$T/body"
	r=$?;;
esac
check absolute_form_forwarded_origin_form_hop_by_hop_removed $r "$out $(tr '\r\n' '  ' <"$T/body")"

out=$(curl_proxy 3128 http://other.example.test/)
case "$out" in *code=403*reason=not_allowlisted*) r=0;; *) r=1;; esac
check hostile_absolute_form_not_allowlisted_denied $r "$out"
out=$(curl_proxy 3128 http://private.example.test/)
case "$out" in *code=403*reason=non_public_address*) log_empty priv; r=$?;; *) r=1;; esac
check hostile_absolute_form_private_denied_listener_sees_nothing $r "$out"
out=$(curl_proxy 3129 http://private.example.test/)
case "$out" in *code=200*) [ -s "$T/priv.log" ]; r=$?;; *) r=1;; esac
check control_absolute_form_private_reached_when_range_allowed $r "$out"
: >"$T/priv.log"

# Keep-alive: two hosts on one client connection, each checked on its own.
: >"$T/A.log.mark"; n0=$(wc -l <"$T/A.log")
inwl curl -sS --max-time 10 -x http://10.77.0.1:3128 -o /dev/null -o /dev/null \
    -w '%{http_code} %{num_connects}\n' http://api.example.test/ http://other.example.test/ \
    >"$T/ka.out" 2>&1
tail -n +$((n0 + 1)) "$T/A.log" >"$T/ka.log"
decisions "$T/ka.log" >"$T/ka.dec"
c1=$(awk '$2=="api.example.test"{print $7}' "$T/ka.dec" | head -n1)
c2=$(awk '$2=="other.example.test"{print $7}' "$T/ka.dec" | head -n1)
r=1
grep -q 'api.example.test 80 http allow allowlisted' "$T/ka.dec" &&
    grep -q 'other.example.test 80 http deny not_allowlisted' "$T/ka.dec" &&
    [ -n "$c1" ] && [ "$c1" = "$c2" ] && r=0
check hostile_keepalive_second_host_rechecked_on_same_connection $r "$(cat "$T/ka.out" "$T/ka.dec")"

n0=$(wc -l <"$T/A.log")
: >"$T/pub.log"
inwl curl -sS --max-time 10 -x http://10.77.0.1:3128 -o /dev/null -o /dev/null \
    -w '%{http_code}\n' http://api.example.test/ http://api2.example.test/ >"$T/ka2.out" 2>&1
tail -n +$((n0 + 1)) "$T/A.log" >"$T/ka2.log"
r=1
[ "$(grep -c '^200' "$T/ka2.out")" = 2 ] && [ "$(grep -c '"event":"decision"' "$T/ka2.log")" = 2 ] &&
    [ "$(grep -c '^conn ' "$T/pub.log")" = 2 ] && r=0
check keepalive_other_host_same_address_gets_new_upstream $r "$(cat "$T/ka2.out"; grep -c '^conn ' "$T/pub.log")"
: >"$T/pub.log"
inwl curl -sS --max-time 10 -x http://10.77.0.1:3128 -o /dev/null -o /dev/null \
    -w '%{http_code}\n' http://api.example.test/ http://api.example.test/headers >"$T/ka3.out" 2>&1
[ "$(grep -c '^200' "$T/ka3.out")" = 2 ] && [ "$(grep -c '^conn ' "$T/pub.log")" = 1 ]
check keepalive_same_host_reuses_upstream_after_recheck $? "$(cat "$T/ka3.out"; grep -c '^conn ' "$T/pub.log")"

# DNS flips between two requests on one kept-alive connection.
inwl curl -sS --max-time 10 -x http://10.77.0.1:3128 -o /dev/null -o /dev/null \
    -w '%{http_code}\n' http://flip.example.test/ http://flip.example.test/ >"$T/flip.out" 2>&1
[ "$(head -n1 "$T/flip.out")" = 200 ] && [ "$(sed -n 2p "$T/flip.out")" = 403 ] && log_empty priv
check hostile_dns_flip_on_kept_alive_connection_second_refused $? "$(cat "$T/flip.out")"

# ---- redirects: passed to the client, its next request checked again
out=$(curl_proxy 3128 'http://api.example.test/redirect?to=http://other.example.test/' -L)
case "$out" in *code=403*reason=not_allowlisted*) r=0;; *) r=1;; esac
check hostile_redirect_to_not_allowlisted_name_refused $r "$out"
out=$(curl_proxy 3128 'http://api.example.test/redirect?to=http://private.example.test/' -L)
case "$out" in *code=403*reason=non_public_address*) log_empty priv; r=$?;; *) r=1;; esac
check hostile_redirect_to_private_resolving_admitted_name_refused $r "$out"
out=$(curl_proxy 3128 'http://api.example.test/redirect?to=http://api2.example.test/' -L)
case "$out" in *code=200*) grep -q "hello from pub" "$T/body"; r=$?;; *) r=1;; esac
check control_redirect_to_admitted_public_name_followed $r "$out"
out=$(curl_proxy 3129 'http://api.example.test/redirect?to=http://private.example.test/' -L)
case "$out" in *code=200*) r=0;; *) r=1;; esac
check control_redirect_to_private_followed_when_range_allowed $r "$out"
: >"$T/priv.log"

# ---- SOCKS5
socks() {	# socks PORT URL
	inwl curl -sS --max-time 10 --socks5-hostname "10.77.0.1:$1" -o "$T/body" \
	    -w '%{http_code}' "$2" 2>"$T/curl.err"
	echo " rc=$?"
}
out=$(socks 3128 http://api.example.test/)
case "$out" in "200 rc=0") grep -q "hello from pub" "$T/body"; r=$?;; *) r=1;; esac
check socks5_hostname_allowed $r "$out"
out=$(socks 3128 http://other.example.test/)
case "$out" in *"rc=97"*) [ "$(last_decision "$T/A.log" other.example.test)" = deny:not_allowlisted ]; r=$?;; *) r=1;; esac
check hostile_socks5_not_allowlisted_denied $r "$out $(cat "$T/curl.err")"
out=$(socks 3128 http://private.example.test/)
case "$out" in *"rc=97"*) log_empty priv; r=$?;; *) r=1;; esac
check hostile_socks5_private_denied_listener_sees_nothing $r "$out"
out=$(socks 3129 http://private.example.test/)
case "$out" in "200 rc=0") r=0;; *) r=1;; esac
check control_socks5_private_reached_when_range_allowed $r "$out"
: >"$T/priv.log"
out=$(inwl python3 - <<'PY'
import socket
s = socket.create_connection(("10.77.0.1", 3128), timeout=5)
s.sendall(b"\x05\x01\x00")
a = s.recv(2)
s.sendall(b"\x05\x02\x00\x03\x10api.example.test\x00\x50")   # BIND
r = s.recv(10)
print(a.hex(), r[:2].hex())
PY
)
[ "$out" = "0500 0507" ]
check socks5_bind_command_answered_0x07 $? "$out"

# ---- SNI check
sclient() {	# sclient PORT SERVERNAME
	echo Q | inwl timeout 10 openssl s_client -proxy "10.77.0.1:$1" \
	    -connect api.example.test:443 -servername "$2" -CAfile "$T/cert.pem" \
	    -verify_return_error >"$T/sc.out" 2>&1
	# A finished handshake shows the server's certificate subject.
	grep -q "^subject=CN *= *api.example.test" "$T/sc.out"
}
b0=$(grep -c '^bytes' "$T/pubtls.log")
sclient 3128 evil.example.test; r=$?
b1=$(grep -c '^bytes' "$T/pubtls.log")
[ $r -ne 0 ] && [ "$b0" = "$b1" ] && grep -q '"reason":"sni_mismatch"' "$T/A.log"
check hostile_tls_sni_mismatch_closed_before_any_byte_upstream $? "rc=$r bytes $b0->$b1"
sclient 3128 api.example.test
check tls_matching_sni_passes $? "$(tail -n 3 "$T/sc.out")"
sclient 3130 evil.example.test
check control_sni_mismatch_passes_with_sni_check_off $? "$(tail -n 3 "$T/sc.out")"
# The ClientHello sent in the same write as the CONNECT, before the 200
# (early bytes: the relay's gate must judge them, and keep reading the
# client after them: the control sends a request inside the tunnel).
early_tls() {	# early_tls SERVERNAME: prints "ok" once the handshake is done
	inwl timeout 10 python3 - "$1" "$T/cert.pem" <<'PY'
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = ctx.wrap_bio(inc, out, server_hostname=sys.argv[1])
try:
    tls.do_handshake()
except ssl.SSLWantReadError:
    pass
s = socket.create_connection(("10.77.0.1", 3128), timeout=5)
s.sendall(b"CONNECT api.example.test:443 HTTP/1.1\r\nHost: api.example.test:443\r\n\r\n" + out.read())
buf = b""
while b"\r\n\r\n" not in buf:
    b = s.recv(4096)
    if not b:
        sys.exit("closed before the 200")
    buf += b
head, rest = buf.split(b"\r\n\r\n", 1)
if b" 200 " not in head.split(b"\r\n")[0]:
    sys.exit(head.decode(errors="replace"))
inc.write(rest)
for _ in range(50):
    try:
        tls.do_handshake()
        break
    except ssl.SSLWantReadError:
        s.sendall(out.read())
        b = s.recv(65536)
        if not b:
            sys.exit("closed during the handshake")
        inc.write(b)
# Then a request inside the tunnel: the client must still be read.
tls.write(b"GET /bytes/100 HTTP/1.1\r\nHost: api.example.test\r\nConnection: close\r\n\r\n")
resp = b""
for _ in range(200):
    s.sendall(out.read())
    try:
        for _ in range(100):
            b = tls.read(65536)
            if not b:
                break
            resp += b
    except ssl.SSLWantReadError:
        pass
    except ssl.SSLZeroReturnError:
        break
    if resp.endswith(b"x" * 100):
        break
    b = s.recv(65536)
    if not b:
        break
    inc.write(b)
if b" 200 " in resp.split(b"\r\n")[0] and resp.endswith(b"x" * 100):
    print("ok", tls.version())
else:
    sys.exit("no answer inside the tunnel: %r" % resp[:80])
PY
}
b0=$(grep -c '^bytes' "$T/pubtls.log")
out=$(early_tls evil.example.test 2>&1)
b1=$(grep -c '^bytes' "$T/pubtls.log")
case "$out" in ok*) r=1 ;; *) r=0 ;; esac
[ $r = 0 ] && [ "$b0" = "$b1" ]
check hostile_tls_sni_mismatch_in_early_bytes_closed_before_any_byte_upstream $? "$out bytes $b0->$b1"
out=$(early_tls api.example.test 2>&1)
case "$out" in ok*) r=0 ;; *) r=1 ;; esac
check control_tls_matching_sni_in_early_bytes_then_request_answered $r "$out"

# ---- smuggling and framing
out=$(raw 3128 "POST http://api.example.test/echo HTTP/1.1\r\nHost: api.example.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
case "$out" in *status=400*reason=bad_request*) r=0;; *) r=1;; esac
check hostile_cl_te_refused $r "$out"
out=$(raw 3128 "POST http://api.example.test/echo HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n")
case "$out" in *status=400*) r=0;; *) r=1;; esac
check hostile_te_not_final_chunked_refused $r "$out"
out=$(raw 3128 "POST http://api.example.test/echo HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n")
case "$out" in *status=400*) r=0;; *) r=1;; esac
check hostile_te_space_before_colon_refused $r "$out"
out=$(raw 3128 "POST http://api.example.test/echo HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello")
case "$out" in *status=400*) r=0;; *) r=1;; esac
check hostile_duplicate_content_length_refused $r "$out"
out=$(raw 3128 "GET http://api.example.test/ HTTP/1.1\r\nHost: other.example.test\r\n\r\n")
case "$out" in *status=400*) r=0;; *) r=1;; esac
check hostile_host_header_disagreeing_with_target_refused $r "$out"
# A framing refusal after the target parsed names that destination: in
# the decision line (host and port were null) and in the answer's body.
n0=$(wc -l <"$T/A.log")
out=$(answer_after '' 'GET http://a.test:8080/ HTTP/1.1\r\nHost: b.test:8080\r\n\r\n')
got=$(tail -n +$((n0 + 1)) "$T/A.log" | grep '"event":"decision"' | tail -n1 |
    sed -n 's/.*"host":\([^,]*\),"port":\([^,]*\),.*"reason":"\([a-z_]*\)".*/\1 \2 \3/p')
case "$out/$got" in 'HTTP/1.1 400'*'| egress-guard: bad_request: a.test:8080/"a.test" 8080 bad_request') r=0;; *) r=1;; esac
check hostile_host_disagreeing_refusal_logged_with_target_destination $r "$out / $got"
out=$(raw 3128 "GET http://api.example.test/ HTTP/1.1\r\nConnection: Content-Length\r\nContent-Length: 0\r\n\r\n")
case "$out" in *status=400*) r=0;; *) r=1;; esac
check hostile_connection_naming_content_length_refused $r "$out"
out=$(raw 3128 "GET http://user@api.example.test/ HTTP/1.1\r\n\r\n")
case "$out" in *status=400*) r=0;; *) r=1;; esac
check hostile_userinfo_in_absolute_form_refused $r "$out"

# A body framed by Content-Length followed by a smuggled request: the
# smuggled request is a request of its own, checked (and refused) by the
# guard; the upstream sees one request.
: >"$T/pub.log"
out=$(inwl python3 - <<'PY'
import socket
s = socket.create_connection(("10.77.0.1", 3128), timeout=5)
s.sendall(b"POST http://api.example.test/echo HTTP/1.1\r\nHost: api.example.test\r\n"
          b"Content-Length: 5\r\n\r\nhello"
          b"GET http://other.example.test/admin HTTP/1.1\r\nHost: other.example.test\r\n\r\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
print(data.count(b"HTTP/1.1 200"), data.count(b"X-Egress-Guard-Reason: not_allowlisted"),
      b"\r\n\r\nhello" in data)
PY
)
[ "$out" = "1 1 True" ] && [ "$(grep -c '^req ' "$T/pub.log")" = 1 ]
check hostile_smuggled_request_after_cl_body_rechecked_and_refused $? "$out $(grep '^req' "$T/pub.log" | tr '\n' ' ')"
: >"$T/pub.log"
out=$(inwl python3 - <<'PY'
import socket
s = socket.create_connection(("10.77.0.1", 3128), timeout=5)
s.sendall(b"POST http://api.example.test/echo HTTP/1.1\r\nHost: api.example.test\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
          b"GET http://other.example.test/admin HTTP/1.1\r\n\r\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
print(data.count(b"HTTP/1.1 200"), data.count(b"X-Egress-Guard-Reason: not_allowlisted"), b"hello world" in data)
PY
)
[ "$out" = "1 1 True" ] && [ "$(grep -c '^req ' "$T/pub.log")" = 1 ]
check hostile_smuggled_request_after_chunked_body_with_trailers_refused $? "$out"

# Pipelined requests while the first response streams; HEAD and 204
# framing keep the connection usable.
out=$(inwl python3 - <<'PY'
import socket
s = socket.create_connection(("10.77.0.1", 3128), timeout=10)
s.sendall(b"GET http://api.example.test/bytes/300000 HTTP/1.1\r\n\r\n"
          b"HEAD http://api.example.test/bytes/100 HTTP/1.1\r\n\r\n"
          b"GET http://api.example.test/status/204 HTTP/1.1\r\n\r\n"
          b"GET http://api.example.test/ HTTP/1.1\r\nConnection: close\r\n\r\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
print(data.count(b"HTTP/1.1 200"), data.count(b"HTTP/1.1 204"), data.count(b"x" * 300000),
      data.endswith(b"hello from pub\n"))
PY
)
[ "$out" = "3 1 1 True" ]
check pipelined_requests_answered_in_order_with_exact_framing $? "$out"

# A kept-alive connection's next request is another request from its
# first byte: refused before its head is whole (a bare LF, 431), it gets
# its own id, and no policy fields (it never reached the policy step),
# not the id and epoch of the exchange before it.
for bad in bare_lf too_large; do
	n0=$(wc -l <"$T/A.log")
	if [ "$bad" = bare_lf ]; then
		out=$(answer_after "$GET_API" 'GET http://api.example.test/ HTTP/1.1\nX: y\n\n')
	else
		out=$(answer_after "$GET_API" \
		    "GET http://api.example.test/ HTTP/1.1\r\nX: $(printf '%17000s' '' | tr ' ' a)")
	fi
	got=$(tail -n +$((n0 + 1)) "$T/A.log" | python3 -c '
import json, sys
ls = [json.loads(l) for l in sys.stdin]
d = [o for o in ls if o.get("event") == "decision"]
c = [o for o in ls if o.get("event") == "close"]
ok = (len(d) == 2 and d[0]["decision"] == "allow" and d[1]["decision"] == "deny"
      and len(c) == 1 and c[0]["id"] == d[0]["id"] and d[1]["id"] != d[0]["id"]
      and d[1]["policy_epoch"] is None and d[1]["policy_digest"] is None)
print("ok" if ok else "bad", [(o["event"], o["id"], o.get("decision"), o.get("policy_epoch")) for o in d + c])')
	case "$out/$got" in "HTTP/1.1 4"*/ok*) r=0;; *) r=1;; esac
	check "hostile_keepalive_next_request_refused_mid_head_${bad}_own_id_no_policy" $r "$out / $got"
done

# A head refused before it is parsed is logged with the protocol its
# method names: absolute-form HTTP as http (obs-fold, a bare LF, 431),
# CONNECT as connect; the control is the same CONNECT refusal.
for t in "http obs_fold GET http://api.example.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n" \
    "http bare_lf GET http://api.example.test/ HTTP/1.1\nX: y\n\n" \
    "connect bare_lf_connect CONNECT api.example.test:443 HTTP/1.1\nX: y\n\n"; do
	want=${t%% *}; rest=${t#* }; name=${rest%% *}; req=${rest#* }
	n0=$(wc -l <"$T/A.log")
	out=$(raw 3128 "$req")
	got=$(tail -n +$((n0 + 1)) "$T/A.log" | grep '"event":"decision"' | head -n1 |
	    sed -n 's/.*"proto":"\([a-z0-9]*\)".*"decision":"\([a-z]*\)".*/\1 \2/p')
	[ "$got" = "$want deny" ]
	check "refused_head_logged_with_its_protocol_${name}_${want}" $? "$out / $got"
done
n0=$(wc -l <"$T/A.log")
out=$(raw 3128 "GET http://api.example.test/ HTTP/1.1\r\nX: $(printf '%17000s' '' | tr ' ' a)")
got=$(tail -n +$((n0 + 1)) "$T/A.log" | grep '"event":"decision"' | head -n1 |
    sed -n 's/.*"proto":"\([a-z0-9]*\)".*"reason":"\([a-z_]*\)".*/\1 \2/p')
[ "$got" = "http header_too_large" ]
check refused_head_logged_with_its_protocol_too_large_http $? "$out / $got"

# The same on a kept-alive connection: each head is judged by its own
# method, not by the request before it on the connection (a CONNECT head
# refused after a GET exchange was logged http). The control: an
# absolute-form head refused there is still http.
for t in "connect CONNECT a.test:8080 HTTP/1.1\r\nX: a\nb\r\n\r\n" \
    "http GET http://a.test:8080/ HTTP/1.1\r\nX: a\nb\r\n\r\n"; do
	want=${t%% *}; req=${t#* }
	n0=$(wc -l <"$T/A.log")
	out=$(answer_after "$GET_API" "$req")
	got=$(tail -n +$((n0 + 1)) "$T/A.log" | grep '"event":"decision"' | tail -n1 |
	    sed -n 's/.*"proto":"\([a-z0-9]*\)".*"decision":"\([a-z]*\)".*/\1 \2/p')
	case "$out/$got" in "HTTP/1.1 400"*"/$want deny") r=0;; *) r=1;; esac
	name=hostile_keepalive_refused_connect_head_logged_connect
	[ "$want" = http ] && name=control_keepalive_refused_absolute_form_head_logged_http
	check "$name" $r "$out / $got"
done

# A CONNECT pipelined behind a POST on a kept-alive connection, 40,000
# plain bytes behind it: what the guard holds of them when the head is
# decided goes to the tunnel first (with the head, at most 16 KiB: more
# is refused), the rest through the relay's own reads; all are echoed.
# The control of the bound's check: it counts only the bytes after the
# CONNECT head, not the exchange's body.
n0=$(wc -l <"$T/A.log")
out=$(inwl python3 - <<'PY'
import socket
s = socket.create_connection(("10.77.0.1", 3128), timeout=10)
s.sendall(b"POST http://api.example.test/echo HTTP/1.1\r\nContent-Length: 20000\r\n\r\n" +
          b"p" * 20000 + b"CONNECT api.example.test:7 HTTP/1.1\r\n\r\n" + b"x" * 40000)
r = b""
try:
    while r.count(b"x") < 40000:
        x = s.recv(65536)
        if not x:
            break
        r += x
except OSError:
    pass
print(r.count(b"HTTP/1.1 200"), r.count(b"x"))
PY
)
got=$(tail -n +$((n0 + 1)) "$T/A.log" | grep '"event":"decision"' | tail -n1 |
    sed -n 's/.*"proto":"\([a-z0-9]*\)".*"decision":"\([a-z]*\)".*/\1 \2/p')
[ "$out" = "2 40000" ] && [ "$got" = "connect allow" ]
check control_connect_behind_post_on_kept_alive_connection_early_bytes_relayed $? "$out / $got"

# two_gets URL: two GETs of URL on one kept-alive connection to guard B;
# prints both bodies.
two_gets() {
	inwl python3 - "$1" <<'PY'
import socket, sys
s = socket.create_connection(("10.77.0.1", 3129), timeout=5)
def ask():
    s.sendall(b"GET %s HTTP/1.1\r\n\r\n" % sys.argv[1].encode())
    d = b""
    while not d.endswith(b"\n") or b"\r\n\r\n" not in d:
        x = s.recv(4096)
        if not x:
            break
        d += x
    return d.split(b"\r\n\r\n", 1)[-1].decode().strip()
print(ask(), ask())
PY
}

# A pooled upstream that closes as the next request arrives (the
# keep-alive race): the guard retries a bodiless request once on a fresh
# connection instead of answering 502.
start_bg "$IN" "$T/racy.out" python3 -c '
import socket, sys
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("198.18.1.10", 8081)); srv.listen(8)
open(sys.argv[1], "w").write("ready\n")
for n in range(3):
    c, _ = srv.accept()
    f = c.makefile("rb")
    while f.readline() not in (b"\r\n", b""):
        pass
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nfirst\n" if n == 0 else
              b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nsecond\n")
    if n == 0:
        while f.readline() not in (b"\r\n", b""):   # the next request, then drop it
            pass
    f.close()
    c.shutdown(socket.SHUT_RDWR)
    c.close()
' "$T/racy.ready"
if ! wait_file "$T/racy.ready"; then
	out="race server on 198.18.1.10:8081 never became ready: $(tail -n 3 "$T/racy.out" 2>/dev/null)"
else
out=$(two_gets http://198.18.1.10:8081/)
fi
[ "$out" = "first second" ]
check keepalive_race_pooled_upstream_closed_request_retried_once $? "$out"

# The same race where the retry lands elsewhere: the second request's
# answers are .11 then .13, the pooled upstream is .13 (reused: it is
# among them) and closes, the retry dials .11 first. The allow line's
# peer must be the upstream that served (.11), as its close line's is.
ip -n "$IN" addr add 198.18.1.11/32 dev lo
ip -n "$IN" addr add 198.18.1.13/32 dev lo
start_bg "$IN" "$T/swap.out" python3 -c '
import socket, sys, threading
def serve(addr, body, drop_next):
    srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, 8083)); srv.listen(8)
    c, _ = srv.accept()
    f = c.makefile("rb")
    while f.readline() not in (b"\r\n", b""):
        pass
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    if drop_next:
        while f.readline() not in (b"\r\n", b""):
            pass
    f.close(); c.shutdown(socket.SHUT_RDWR); c.close()
t = [threading.Thread(target=serve, args=("198.18.1.13", b"thirteen\n", True)),
     threading.Thread(target=serve, args=("198.18.1.11", b"eleven\n", False))]
for x in t: x.start()
open(sys.argv[1], "w").write("ready\n")
for x in t: x.join(20)
' "$T/swap.ready"
if ! wait_file "$T/swap.ready"; then
	out="swap servers never became ready: $(tail -n 3 "$T/swap.out" 2>/dev/null)"
else
out=$(two_gets http://swap.example.test:8083/)
fi
peers=$(python3 -c '
import json, sys
ids, dec, clo = [], {}, {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") == "decision" and o.get("host") == "swap.example.test":
        ids.append(o["id"]); dec[o["id"]] = o.get("peer")
    elif o.get("event") == "close":
        clo[o["id"]] = o.get("peer")
i = ids[-1] if ids else None
print(len(ids), dec.get(i), clo.get(i))' "$T/B.log")
[ "$out" = "thirteen eleven" ] && [ "$peers" = "2 198.18.1.11:8083 198.18.1.11:8083" ]
check keepalive_race_retry_elsewhere_allow_line_names_the_serving_peer $? "$out; decisions, allow peer, close peer: $peers"

# The same race, with the retry's dial held (SYNs to 198.18.1.10:8082
# dropped in the internet namespace, after the first connection) and the
# policy revoking the origin meanwhile. The request was admitted: the
# revocation closes it with a `close` line, reason revoked, and no answer;
# never a second decision, nor a 403 for an admitted request.
start_bg "$IN" "$T/racy2.out" python3 -c '
import socket, sys
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("198.18.1.10", 8082)); srv.listen(8)
open(sys.argv[1], "w").write("ready\n")
c, _ = srv.accept()
f = c.makefile("rb")
while f.readline() not in (b"\r\n", b""):
    pass
c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nfirst\n")
while f.readline() not in (b"\r\n", b""):	# the next request, then drop it
    pass
open(sys.argv[1] + ".second", "w").write("1\n")
f.close(); c.shutdown(socket.SHUT_RDWR); c.close()
' "$T/racy2.ready"
# rvpolicy EPOCH HOST:PORT...: guard R's policy file
rvpolicy() {
	python3 - "$T/rv.json" "$@" <<'P'
import json, sys
allow = [{"host": h, "port": int(p)} for h, _, p in (a.rpartition(":") for a in sys.argv[3:])]
json.dump({"schema": "egress-guard.policy.v1", "mode": "allowlist", "epoch": int(sys.argv[2]),
           "allow": allow}, open(sys.argv[1], "w"))
P
}
rvpolicy 1 api.example.test:8082
start_guard R 3131 --policy "$T/rv.json" --dns 198.18.0.53 --dns-timeout 2 \
    --connect-timeout 10 --allow-range 198.18.0.0/15 --workers 1 || exit 1
if ! wait_file "$T/racy2.ready"; then
	out="race server on 198.18.1.10:8082 never became ready"
else
inwl python3 - "$T/rv.client" <<'PY' &
import socket, sys, time
s = socket.create_connection(("10.77.0.1", 3131), timeout=15)
s.sendall(b"GET http://api.example.test:8082/one HTTP/1.1\r\n\r\n")
d = b""
while b"first\n" not in d:
    x = s.recv(4096)
    if not x:
        break
    d += x
open(sys.argv[1] + ".first", "w").write("1\n")
for _ in range(50):		# until the SYN drop is in (the test writes .go)
    try:
        open(sys.argv[1] + ".go"); break
    except OSError:
        time.sleep(0.1)
s.sendall(b"GET http://api.example.test:8082/two HTTP/1.1\r\n\r\n")
rest = b""
try:
    while True:
        x = s.recv(4096)
        if not x:
            break
        rest += x
except OSError as e:
    rest += b"<%s>" % type(e).__name__.encode()
open(sys.argv[1], "w").write(repr(rest) + "\n")
PY
CPID=$!
PIDS="$PIDS $CPID"
wait_file "$T/rv.client.first"
inin nft -f - <<'N'
table inet egtest_syn {
	chain input {
		type filter hook input priority 0;
		ip daddr 198.18.1.10 tcp dport 8082 tcp flags & (syn | ack) == syn drop
	}
}
N
: >"$T/rv.client.go"
# The upstream has the second request and closed: the guard is dialling
# again, into dropped SYNs (a 10 s connect timeout). Revoke meanwhile.
wait_file "$T/racy2.ready.second"
sleep 0.5
rvpolicy 2 api.example.test:80
kill -HUP "$PID_R"
for _ in $(seq 50); do [ -s "$T/rv.client" ] && break; sleep 0.1; done
inin nft delete table inet egtest_syn
out="client after the first response: $(cat "$T/rv.client" 2>/dev/null)"
fi
# id 2 is the second request: one allow decision, one close (revoked).
d2=$(grep '"id":2,' "$T/R.log" | grep -c '"event":"decision"')
c2=$(grep '"id":2,' "$T/R.log" | grep '"event":"close"' | grep -c '"reason":"revoked"')
[ "$out" = "client after the first response: b''" ] && [ "$d2" = 1 ] && [ "$c2" = 1 ]
check hostile_revoked_during_retry_of_admitted_exchange_closed_not_decided_twice $? \
    "$out; id 2: $d2 decisions, $c2 revoked closes: $(grep '"id":2,' "$T/R.log" | cut -c1-200)"

# ---- git over HTTP (git http-backend behind Python's CGI server)
chmod 0755 "$T"
mkdir -p "$T/git/srv/cgi-bin" "$T/git/repos"
git init -q --bare "$T/git/repos/demo.git"
git -C "$T/git/repos/demo.git" -c user.email=t@t -c user.name=t commit-tree -m init \
    "$(git -C "$T/git/repos/demo.git" mktree </dev/null)" >"$T/git/commit"
git -C "$T/git/repos/demo.git" update-ref refs/heads/main "$(cat "$T/git/commit")"
printf '#!/bin/sh\nexport GIT_PROJECT_ROOT=%s GIT_HTTP_EXPORT_ALL=1\nexec git -c safe.directory="*" http-backend\n' \
    "$T/git/repos" >"$T/git/srv/cgi-bin/git"
chmod -R a+rX "$T/git"; chmod a+x "$T/git/srv/cgi-bin/git"
start_bg "$IN" "$T/git.out" python3 -m http.server --cgi --directory "$T/git/srv" --bind 198.18.1.10 8000
# Up once its port listens (its "Serving HTTP" line sits in a block-
# buffered stdout, so waiting for that line would only be a fixed sleep).
git_up() { [ -n "$(inin ss -Hltn 'sport = :8000')" ]; }
for _ in $(seq 100); do git_up && break; sleep 0.1; done
if git_up; then
	out=$(inwl git -c http.proxy=http://10.77.0.1:3128 ls-remote \
	    http://api.example.test:8000/cgi-bin/git/demo.git 2>&1)
else
	out="git HTTP server on 198.18.1.10:8000 never listened: $(tail -n 3 "$T/git.out" 2>/dev/null)"
fi
case "$out" in "$(cat "$T/git/commit")"*refs/heads/main*) r=0;; *) r=1;; esac
check git_ls_remote_over_http_through_proxy $r "$out"
out=$(inwl git -c http.proxy=http://10.77.0.1:3128 ls-remote \
    http://other.example.test:8000/cgi-bin/git/demo.git 2>&1)
case "$out" in *403*) r=0;; *) r=1;; esac
check hostile_git_to_not_allowlisted_host_refused $r "$out"

# ---- Python's urllib through http_proxy
out=$(inwl env http_proxy=http://10.77.0.1:3128 python3 -c '
import urllib.request
print(urllib.request.urlopen("http://api.example.test/", timeout=10).read().decode().strip())
' 2>&1)
[ "$out" = "hello from pub" ]
check python_urllib_through_http_proxy $? "$out"

# ---- metrics add up to the decision log
out=$(ingd curl -sS --max-time 5 --unix-socket "$T/A.sock" http://localhost/metrics)
python3 - "$T/A.log" <<PY
import json, re, sys
metrics = """$out"""
want = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") == "decision":
        k = (o["decision"], o["reason"], o["proto"])
        want[k] = want.get(k, 0) + 1
got = {}
for m in re.finditer(r'^egress_guard_decisions_total\{decision="(\w+)",reason="(\w+)",proto="(\w+)"\} (\d+)$', metrics, re.M):
    got[(m[1], m[2], m[3])] = int(m[4])
assert got == want, (got, want)
for name, typ in [("egress_guard_decisions_total", "counter"), ("egress_guard_active_connections", "gauge"),
                  ("egress_guard_bytes_total", "counter"), ("egress_guard_dns_seconds", "histogram"),
                  ("egress_guard_policy_epoch", "gauge")]:
    assert "# TYPE %s %s" % (name, typ) in metrics, name
    assert "# HELP %s " % name in metrics, name
PY
check metrics_counters_add_up_to_decision_log $?

finish
