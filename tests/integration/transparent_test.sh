# Transparent mode (run --transparent): real clients with no proxy
# variables at all (curl plain and TLS, Python urllib, Node's built-in
# fetch, git over dumb HTTP, openssl s_client) reach admitted names in
# both layouts, IPv4 and IPv6:
#   separate: the workload (WL) routes through the guard's address on
#     their link; the guard's namespace redirects TCP arriving on that link
#     to the transparent listener (forwarding stays off);
#   shared: the workload runs in the guard's namespace as uid 12345; TCP
#     from every uid but the guard's (0) is redirected.
# Names come from the workload's own /etc/hosts (ip netns exec mounts
# /etc/netns/NS/hosts), so the workload picks the addresses it dials:
# the hostile cases hard-code an attacker's address for an admitted name.
# Hostile cases: attacker address (its listener must see nothing), a name
# with a private answer (live private listener sees nothing), no SNI to an
# address the policy does not name, Host change on a kept-alive
# connection, neither TLS nor HTTP, every hostile first flight of the SNI
# gate (tlsdiff/flights.py --direct: malformed records, ECH, two names, a
# second ClientHello), a connection with no original destination, one to
# the listener itself, and UDP to 443. Most cases capture with rules
# written by the nft CLI (both layouts at once); the last ones with
# egress-guard nft apply --transparent-in (separate layout, guard side).
# 45 checks, one guard; about 10 minutes at load 22 on 2 cores (python and
# node start-ups dominate), far less on an idle machine.
#
# Negative controls (run by hand, see the commit): BUILD=build/mutant-trust_dialled
# fails the attacker cases; EG_TRANSP_ALLOW10=1 (--allow-range 10.0.0.0/8)
# fails the private-answer case.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN" ] || { echo "FAIL build: $BIN missing"; exit 1; }
for tool in nft curl node git openssl setpriv; do
	command -v "$tool" >/dev/null || { echo "FAIL missing tool: $tool"; exit 1; }
done
NETNS_ETC=""
transp_cleanup() {
	for d in $NETNS_ETC; do rm -rf "/etc/netns/$d"; done
	cleanup
}
trap transp_cleanup EXIT INT TERM
[ "${EG_TRANSP_TIMING:-0}" = 1 ] && pass() { echo "PASS $1 (${SECONDS}s)"; NPASS=$((NPASS + 1)); }
topo_up || { echo "FAIL topology"; exit 1; }
chmod 0755 "$T"
TP=15001
TP2=15002	# the listeners egress-guard nft apply DNATs to (its own address)
WUID=12345

# The workload's link gets IPv6 too, and default routes via the guard.
ip -n "$WL" addr add fd77::2/64 dev wl0-$$ nodad
ip -n "$GD" addr add fd77::1/64 dev gw0-$$ nodad
ip -n "$WL" route add default via 10.77.0.1
ip -n "$WL" -6 route add default via fd77::1
for a in 198.18.1.12 198.18.1.20 198.18.1.21 198.18.1.66; do ip -n "$IN" addr add "$a/32" dev lo; done
ip -n "$IN" addr add 2001:2:0:1::66/128 dev lo nodad

# The workload's own name table: the addresses it chooses to dial.
for ns in "$WL" "$GD"; do
	mkdir -p "/etc/netns/$ns" && NETNS_ETC="$NETNS_ETC $ns"
	cat >"/etc/netns/$ns/hosts" <<'H'
127.0.0.1 localhost
198.18.1.10 app.test
2001:2:0:1::10 app.test
198.18.1.12 git.test
198.18.1.20 mixed.test
198.18.1.20 evil.test
H
done

cat >"$T/zone.json" <<'Z'
{
 "app.test": {"A": ["198.18.1.10"], "AAAA": ["2001:2:0:1::10"]},
 "git.test": {"A": ["198.18.1.12"]},
 "mixed.test": {"A": ["10.99.0.5", "198.18.1.21"]},
 "evil.test": {"A": ["198.18.1.66"]}
}
Z
python3 - "$T/policy.json" app.test:80 app.test:443 git.test:80 mixed.test:80 \
    198.18.1.10:443 <<'P'
import json, sys
allow = [{"host": h, "port": int(p)} for h, _, p in (a.rpartition(":") for a in sys.argv[2:])]
json.dump({"schema": "egress-guard.policy.v1", "mode": "allowlist", "epoch": 1,
           "allow": allow}, open(sys.argv[1], "w"))
P

make_cert app.test
chmod 0644 "$T/cert.pem" "$T/key.pem"
start_dns "$T/zone.json" || { echo "FAIL dns server"; exit 1; }
start_listener pub 198.18.1.10:80
start_listener pub6 '[2001:2:0:1::10]:80'
start_listener pubtls 198.18.1.10:443 --tls --cert "$T/cert.pem" --key "$T/key.pem"
start_listener pubtls6 '[2001:2:0:1::10]:443' --tls --cert "$T/cert.pem" --key "$T/key.pem"
start_listener attacker 198.18.1.66:80
start_listener attackertls 198.18.1.66:443 --tls --cert "$T/cert.pem" --key "$T/key.pem"
start_listener attacker6 '[2001:2:0:1::66]:443' --tls --cert "$T/cert.pem" --key "$T/key.pem"
start_listener priv 10.99.0.5:80
start_listener sink 198.18.1.20:80
start_listener sinktls 198.18.1.20:443 --raw
# git over dumb HTTP: a bare repository served by python's http.server.
mkdir -p "$T/www" "$T/home" "$T/src"
chmod 0777 "$T/home"
git init -q --bare "$T/www/repo.git"
git -C "$T/src" init -q && echo transparent >"$T/src/README" &&
	git -C "$T/src" add README &&
	git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm one &&
	git -C "$T/src" push -q "$T/www/repo.git" HEAD:refs/heads/main 2>/dev/null
git -C "$T/www/repo.git" symbolic-ref HEAD refs/heads/main
git -C "$T/www/repo.git" update-server-info
chmod -R a+rX "$T/www"
start_bg "$IN" "$T/git.out" python3 -m http.server 80 --bind 198.18.1.12 --directory "$T/www"
for _ in $(seq 50); do inin curl -s -o /dev/null http://198.18.1.12/ && break; sleep 0.1; done

EXTRA=""
[ "${EG_TRANSP_ALLOW10:-0}" = 1 ] && EXTRA="--allow-range 10.0.0.0/8"
# shellcheck disable=SC2086
start_guard G 3128 --policy "$T/policy.json" --dns 198.18.0.53 --dns-timeout 2 \
    --connect-timeout 2 --header-timeout 3 --allow-range 198.18.0.0/15 \
    --allow-range 2001:2::/48 --transparent "0.0.0.0:$TP" --transparent "[::]:$TP" \
    --transparent "10.77.0.1:$TP2" --transparent "[fd77::1]:$TP2" \
    $EXTRA || exit 1

# The capture for most cases: written with the nft CLI, both layouts at
# once (egress-guard nft apply writes one layout per namespace: its
# separate layout's guard side is checked at the end).
ingd nft -f - <<N || { echo "FAIL nft rules"; exit 1; }
table inet egtransp {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		iifname "gw0-$$" meta l4proto tcp redirect to :$TP
	}
	chain out {
		type nat hook output priority -100; policy accept;
		meta skuid != 0 meta l4proto tcp redirect to :$TP
	}
	chain outf {
		type filter hook output priority 0; policy accept;
		meta skuid != 0 meta l4proto != tcp drop
	}
	chain raw {
		type filter hook output priority raw; policy accept;
		ip daddr 127.0.0.3 tcp dport $TP notrack
		ip saddr 127.0.0.3 tcp sport $TP notrack
	}
}
N
[ "$(ingd sysctl -n net.ipv4.ip_forward)" = 0 ] && [ "$(ingd sysctl -n net.ipv6.conf.all.forwarding)" = 0 ]
check forwarding_off_in_guard_namespace $? "the guard's namespace forwards"

NOPROXY="env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=$T/home NODE_EXTRA_CA_CERTS=$T/cert.pem"
# wl LAYOUT CMD...: CMD as the workload, no proxy variable in its
# environment.
wl() {
	layout=$1; shift
	if [ "$layout" = separate ]; then
		# shellcheck disable=SC2086
		inwl $NOPROXY "$@"
	else
		# shellcheck disable=SC2086
		ingd setpriv --reuid=$WUID --regid=$WUID --clear-groups $NOPROXY "$@"
	fi
}

LOG=$T/G.log
# decs_since N: "proto host port decision reason orig_dst" for the
# decision lines after line N of the guard's log.
decs_since() {
	tail -n +"$(($1 + 1))" "$LOG" | python3 -c '
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    if o.get("event") == "decision":
        print(o["proto"], o["host"], o["port"], o["decision"], o["reason"], o.get("orig_dst", "-"))
'
}
mark() { wc -l <"$LOG"; }
# has_dec N PATTERN: a decision after line N matches PATTERN (grep -E).
has_dec() { decs_since "$1" | grep -Eq "$2"; }
nlines() { wc -l <"$T/$1.log"; }

# ---- real clients, both layouts, IPv4 and IPv6
for L in separate shared; do
	m=$(mark)
	out=$(wl $L curl -4 -sS --max-time 10 http://app.test/ 2>&1)
	[ "$out" = "hello from pub" ] && has_dec "$m" '^transparent app.test 80 allow allowlisted 198.18.1.10:80$'
	check "${L}_curl_http_ipv4" $? "$out / $(decs_since "$m")"

	m=$(mark)
	out=$(wl $L curl -6 -sS --max-time 10 http://app.test/ 2>&1)
	case "$out" in "hello from pub"*) r=0;; *) r=1;; esac
	[ $r = 0 ] && has_dec "$m" '^transparent app.test 80 allow allowlisted \[2001:2:0:1::10\]:80$'
	check "${L}_curl_http_ipv6" $? "$out / $(decs_since "$m")"

	m=$(mark)
	out=$(wl $L curl -4 -sS --max-time 10 --cacert "$T/cert.pem" https://app.test/ 2>&1)
	[ "$out" = "hello from pubtls" ] && has_dec "$m" '^transparent app.test 443 allow allowlisted 198.18.1.10:443$'
	check "${L}_curl_https_ipv4" $? "$out / $(decs_since "$m")"

	m=$(mark)
	out=$(wl $L curl -6 -sS --max-time 10 --cacert "$T/cert.pem" https://app.test/ 2>&1)
	case "$out" in "hello from pubtls"*) r=0;; *) r=1;; esac
	[ $r = 0 ] && has_dec "$m" '^transparent app.test 443 allow allowlisted \[2001:2:0:1::10\]:443$'
	check "${L}_curl_https_ipv6" $? "$out / $(decs_since "$m")"

	m=$(mark)
	out=$(wl $L python3 -c '
import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[1])
a = urllib.request.urlopen("http://app.test/", timeout=10).read().decode()
b = urllib.request.urlopen("https://app.test/", timeout=10, context=ctx).read().decode()
print(a.split()[-1], b.split()[-1])' "$T/cert.pem" 2>&1)
	case "$out" in "pub"*" pubtls"*) has_dec "$m" '^transparent app.test 443 allow';; *) false;; esac
	check "${L}_python_urllib" $? "$out"

	m=$(mark)
	out=$(wl $L node -e '
fetch(process.argv[1], {signal: AbortSignal.timeout(10000)}).then(r => r.text())
    .then(t => process.stdout.write(t), e => { console.error(String(e.cause || e)); process.exit(1); })' \
	    https://app.test/ 2>&1)
	case "$out" in "hello from pubtls"*) has_dec "$m" '^transparent app.test 443 allow';; *) false;; esac
	check "${L}_node_fetch" $? "$out"

	m=$(mark)
	rm -rf "$T/home/clone"
	out=$(wl $L timeout 20 git clone -q http://git.test/repo.git "$T/home/clone" 2>&1)
	[ "$(cat "$T/home/clone/README" 2>/dev/null)" = transparent ] &&
	    has_dec "$m" '^transparent git.test 80 allow allowlisted 198.18.1.12:80$'
	check "${L}_git_clone_dumb_http" $? "$out"

	m=$(mark)
	out=$(echo | wl $L timeout 10 openssl s_client -connect app.test:443 -servername app.test \
	    -CAfile "$T/cert.pem" -verify_return_error 2>&1)
	echo "$out" | grep -q 'Verify return code: 0' && has_dec "$m" '^transparent app.test 443 allow'
	check "${L}_openssl_s_client" $? "$(echo "$out" | tail -n 3)"
done

# ---- hostile: the workload hard-codes an attacker's address for an
# admitted name; the guard dials its own answer, the attacker sees nothing.
for L in separate shared; do
	m=$(mark)
	out=$(wl $L curl -sS --max-time 10 --resolve app.test:80:198.18.1.66 http://app.test/ 2>&1)
	[ "$out" = "hello from pub" ] && log_empty attacker &&
	    has_dec "$m" '^transparent app.test 80 allow allowlisted 198.18.1.66:80$'
	check "${L}_attacker_address_http_reaches_the_guards_answer" $? "$out / $(decs_since "$m")"

	out=$(wl $L curl -sS --max-time 10 --cacert "$T/cert.pem" \
	    --resolve app.test:443:198.18.1.66 https://app.test/ 2>&1)
	[ "$out" = "hello from pubtls" ] && log_empty attackertls
	check "${L}_attacker_address_tls_reaches_the_guards_answer" $? "$out"

	out=$(wl $L curl -sS --max-time 10 --cacert "$T/cert.pem" \
	    --resolve 'app.test:443:[2001:2:0:1::66]' https://app.test/ 2>&1)
	case "$out" in "hello from pubtls"*) log_empty attacker6;; *) false;; esac
	check "${L}_attacker_address_ipv6_reaches_the_guards_answer" $? "$out"
done
m=$(mark)
out=$(echo | wl separate timeout 10 openssl s_client -connect 198.18.1.66:443 \
    -servername app.test -CAfile "$T/cert.pem" 2>&1)
echo "$out" | grep -q 'Verify return code: 0' && log_empty attackertls
check openssl_attacker_address_admitted_sni $? "$(echo "$out" | tail -n 2)"

# ---- an admitted name whose answers include a private address (the
# public one has no listener: a guard that skipped classification would
# end up at the private listener)
for L in separate shared; do
	m=$(mark)
	out=$(wl $L curl -sS --max-time 10 -o /dev/null -w '%{http_code}' http://mixed.test/ 2>&1)
	[ "$out" = 403 ] && log_empty priv && log_empty sink &&
	    has_dec "$m" '^transparent mixed.test 80 deny non_public_address'
	check "${L}_private_answer_refused_nothing_reaches_it" $? "$out / $(decs_since "$m")"
done

# ---- a name the policy does not admit, by TLS and by HTTP
m=$(mark)
out=$(wl separate curl -sS --max-time 10 -o /dev/null -w '%{http_code}' http://evil.test/ 2>&1)
[ "$out" = 403 ] && log_empty sink && has_dec "$m" '^transparent evil.test 80 deny not_allowlisted'
check denied_name_http_refused $? "$out"
out=$(wl separate curl -sS --max-time 10 -k https://evil.test/ 2>&1)
[ $? != 0 ] && [ "$(nlines sinktls)" = 0 ] && has_dec "$m" '^transparent evil.test 443 deny not_allowlisted'
check denied_name_tls_refused $? "$out"

# ---- no SNI: decided as the original destination's IP literal
m=$(mark)
out=$(echo | wl separate timeout 10 openssl s_client -connect 198.18.1.66:443 -noservername 2>&1)
! echo "$out" | grep -q 'BEGIN CERTIFICATE\|Server certificate' && log_empty attackertls &&
    has_dec "$m" '^transparent 198.18.1.66 443 deny not_allowlisted 198.18.1.66:443$'
check no_sni_original_dst_not_in_policy_refused $? "$(decs_since "$m")"
m=$(mark)
out=$(echo | wl separate timeout 10 openssl s_client -connect 198.18.1.10:443 -noservername 2>&1)
echo "$out" | grep -q 'Server certificate' &&
    has_dec "$m" '^transparent 198.18.1.10 443 allow allowlisted 198.18.1.10:443$'
check no_sni_original_dst_in_policy_admitted $? "$(decs_since "$m")"

# ---- HTTP keep-alive: the same Host again is served, a changed Host is
# refused and nothing of it goes upstream.
n0=$(grep -c '^req ' "$T/pub.log")
m=$(mark)
out=$(inwl python3 "$TI/tpkeep.py" 198.18.1.10 80 app.test app.test evil.test 2>&1)
n1=$(grep -c '^req ' "$T/pub.log")
[ "$out" = "200 -, then 200 -, then 400 host_changed; closed" ] && [ $((n1 - n0)) = 2 ] && log_empty sink &&
    has_dec "$m" '^transparent evil.test 80 deny host_changed'
check keepalive_host_change_refused_and_closed $? "$out reqs=$((n1 - n0)) / $(decs_since "$m")"

m=$(mark)
out=$(inwl python3 "$TI/rawreq.py" 198.18.1.10 80 \
    --send 'GET http://app.test/ HTTP/1.1\r\nHost: app.test\r\n\r\n' 2>&1)
case "$out" in *status=400*) has_dec "$m" 'deny bad_request';; *) false;; esac
check absolute_form_on_transparent_refused $? "$out"

m=$(mark)
out=$(inwl python3 "$TI/rawreq.py" 198.18.1.10 8080 \
    --send 'GET / HTTP/1.1\r\nHost: app.test:80\r\n\r\n' 2>&1)
case "$out" in *status=400*) has_dec "$m" 'deny bad_request';; *) false;; esac
check host_port_differs_from_dialled_port_refused $? "$out"

# ---- neither TLS nor HTTP
m=$(mark)
out=$(inwl python3 "$TI/rawreq.py" 198.18.1.20 80 --send '\x01\x02\x03hello\r\n\r\n' 2>&1)
case "$out" in *status=0*closed=1*) log_empty sink && has_dec "$m" 'deny unidentified 198.18.1.20:80$';;
*) false;; esac
check not_tls_not_http_refused_closed $? "$out / $(decs_since "$m")"

# ---- the SNI gate's hostile first flights, dialled at the attacker's
# address with the admitted name: good hellos finish a handshake with the
# guard's answer, every hostile one is closed, no evil name reaches a
# server and the attacker sees nothing.
out=$(inwl timeout 120 python3 "$TI/tlsdiff/flights.py" --direct --target 198.18.1.66:443 \
    --good app.test --first 5 --quiet 0.5 2>&1)
echo "$out" >"$T/flights.out"
bad=$(echo "$out" | awk '
$1 ~ /^(valid|sni-absent)$/ { next }	# no SNI at the attacker address: refused
$1 ~ /good$/ { if ($2 != "handshake") print; next }
$1 ~ /^(two-hellos-good-then-evil|hrr-second-hello|hrr-ccs-second-hello|hrr-cke-second-hello)$/ { next }
{ if ($2 != "closed") print }')
n=$(echo "$out" | wc -l)
valid=$(echo "$out" | awk '$1 == "valid" { print $2 }')
[ -z "$bad" ] && [ "$n" -ge 25 ] && [ "$valid" = handshake ] && log_empty attackertls &&
    ! grep -q 'evil\.test' "$T/pubtls.log"
check tls_hostile_first_flights_refused $? "$bad valid=$valid n=$n $(grep evil "$T/pubtls.log" | head -3)"
grep -q 'sni-absent closed' "$T/flights.out"
check tls_no_sni_at_attacker_address_closed $? "$(grep sni-absent "$T/flights.out")"

# ---- no original destination, and the listener dialled directly
m=$(mark)
out=$(ingd python3 "$TI/rawreq.py" 127.0.0.3 "$TP" --send 'GET / HTTP/1.1\r\nHost: app.test\r\n\r\n' 2>&1)
case "$out" in *status=0*closed=1*) has_dec "$m" 'deny no_original_dst';; *) false;; esac
check untracked_connection_no_original_dst $? "$out / $(decs_since "$m")"
m=$(mark)
out=$(inwl python3 "$TI/rawreq.py" 10.77.0.1 "$TP" --send 'GET / HTTP/1.1\r\nHost: app.test\r\n\r\n' 2>&1)
case "$out" in *status=0*closed=1*) has_dec "$m" 'deny transparent_loop 10.77.0.1:15001$';; *) false;; esac
check listener_dialled_directly_is_a_loop $? "$out / $(decs_since "$m")"

# ---- UDP (QUIC) to 443: no route in either layout
start_bg "$IN" "$T/udp.log" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.1.10", 443))
open(sys.argv[1], "w").write("ready\n")
while True:
    d, a = s.recvfrom(2048)
    print("got", len(d), a, flush=True)' "$T/udp.ready"
wait_file "$T/udp.ready" 50
wl separate python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(3): s.sendto(b"\xc0quic-initial", ("198.18.1.10", 443))' 2>/dev/null
wl shared python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(3): s.sendto(b"\xc0quic-initial", ("198.18.1.10", 443))' 2>/dev/null
# The positive control: the same datagram from the internet side arrives.
inin python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"control", ("198.18.1.10", 443))'
for _ in $(seq 20); do grep -q got "$T/udp.log" && break; sleep 0.1; done
[ "$(grep -c got "$T/udp.log")" = 1 ]
check udp_quic_443_no_route $? "$(cat "$T/udp.log")"

# ---- the capture by egress-guard nft apply, separate layout, guard
# side (DNAT to the listener's own address, forward chain drop)
ingd nft delete table inet egtransp
out=$("$BIN" nft apply --netns "$GD" --transparent-in "gw0-$$" --transparent "10.77.0.1:$TP2" \
    --transparent "[fd77::1]:$TP2" --guard 10.77.0.1:3128 2>&1)
check nft_apply_transparent_in_guard_side $? "$out"
m=$(mark)
out=$(wl separate curl -sS --max-time 10 --resolve app.test:80:198.18.1.66 http://app.test/ 2>&1)
[ "$out" = "hello from pub" ] && log_empty attacker &&
    has_dec "$m" '^transparent app.test 80 allow allowlisted 198.18.1.66:80$'
check nft_apply_attacker_address_http_reaches_the_guards_answer $? "$out / $(decs_since "$m")"
m=$(mark)
out=$(wl separate curl -6 -sS --max-time 10 --cacert "$T/cert.pem" https://app.test/ 2>&1)
case "$out" in "hello from pubtls"*)
	has_dec "$m" '^transparent app.test 443 allow allowlisted \[2001:2:0:1::10\]:443$';; *) false;; esac
check nft_apply_curl_https_ipv6 $? "$out / $(decs_since "$m")"

json_lines_valid "$LOG"
check log_json_valid $?
finish
