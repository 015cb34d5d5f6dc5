# The tenants target (issue 33): one `egress-guard run --tenants` serving
# three sandboxes, each exactly as safe as with a guard of its own, none
# able to use another's policy, listener or address. Sourced by matrix.sh
# (EG_CONF_TARGET=tenants) after lib.sh and common.sh:
#
#   EG_CONF_TARGET=tenants tests/conformance/matrix.sh OUT
#       OUT/report-tenants.json (suite tenants); exit 0 when every fact is true.
#   EG_CONF_TENANT_MUTANTS=1 (make conformance-mutants): ONE topology, the
#       guard under test swapped within it, its state and tables set up anew:
#       BUILD/mutant-tenant_by_source (the guard's identity from the source
#       address) over exact_destination_match's cases, then
#       BUILD/mutant-no_antispoof (the guard-side table applied by that build,
#       without its anti-spoofing rule) over default_deny's:
#       OUT/report-tenants-tenant_by_source.json, report-tenants-no_antispoof.json;
#       the make target checks that each turned its fact false.
#
# Topology, namespaces carrying the PID (lib.sh's GD and IN; its WL idle):
#
#   tenant a  egta-PID 10.81.1.2 ── 10.81.1.1 tga-PID ┐
#   tenant b  egtb-PID 10.81.2.2 ── 10.81.2.1 tgb-PID ├─ guard GD 198.18.0.1 ── IN 198.18.0.2
#   tenant c  egtc-PID 10.81.3.2 ── 10.81.3.1 tgc-PID ┘
#
# IN: the DNS server the test controls (198.18.0.53) and live listeners:
# la lb lc (a/b/c.example.test, 198.18.2.1-3:80), pub (shared.example.test,
# 198.18.1.10:80) and priv (private.example.test, 10.99.0.5:80).
# Guard G (the one under test): run --tenants as nobody, tenants a, b, c
# added over its control socket (proxy ports 3181-3183 on their link
# addresses), each pushed its own signed policy naming it: its own name,
# shared.example.test:80 and private.example.test:80. The workload-side
# default-deny table in each tenant's namespace, the guard-side tenants
# table in GD. Guard K, the control guard: single-tenant, unrestricted,
# private ranges allowed, on 10.77.0.1:3129 in GD (its controls run there).
# Every tenant namespace routes by default through its link: only the
# tables stand between a tenant and anything else.

[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "conformance: build the binaries first"; exit 2; }
TEN="a b c"
tn() { case $1 in a) echo 1;; b) echo 2;; c) echo 3;; esac; }
tns() { echo "egt$1-$$"; }
tlink() { echo "tg$1-$$"; }
prev() { case $1 in a) echo c;; b) echo a;; c) echo b;; esac; }
next() { case $1 in a) echo b;; b) echo c;; c) echo a;; esac; }
# Where WHO (a tenant, or K the control guard) sends its proxy requests.
gaddr() { if [ "$1" = K ]; then echo 10.77.0.1; else echo "10.81.$(tn "$1").1"; fi; }
gport() { if [ "$1" = K ]; then echo 3129; else echo "318$(tn "$1")"; fi; }
# inat WHO CMD...: in WHO's namespace (K: the guard's), as root: a
# tenant's workload is root in its namespace, which is what lets it add
# addresses and remove its own table (the attacker cases do both).
inat() { w=$1; shift; if [ "$w" = K ]; then ingd "$@"; else ip netns exec "$(tns "$w")" "$@"; fi; }
trap 'cleanup; for t in $TEN; do ip netns del "$(tns "$t")" 2>/dev/null; done' EXIT INT TERM

topo_up || { echo "conformance: topology failed"; exit 2; }
# The guard host's reverse-path filter off: the guard-side table, not the
# host's sysctls, is the mechanism under test (a host with rp_filter on
# would also drop the spoofed packets, hiding a table without the rule).
ingd sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
for t in $TEN; do
	n=$(tn "$t") ns=$(tns "$t")
	ip netns add "$ns" && ip -n "$ns" link set lo up &&
	    ip link add "tw$t-$$" netns "$ns" type veth peer name "$(tlink "$t")" netns "$GD" &&
	    ip -n "$ns" addr add "10.81.$n.2/24" dev "tw$t-$$" &&
	    ip -n "$GD" addr add "10.81.$n.1/24" dev "$(tlink "$t")" &&
	    ip -n "$ns" link set "tw$t-$$" up && ip -n "$GD" link set "$(tlink "$t")" up &&
	    ip -n "$ns" route add default via "10.81.$n.1" ||
	    { echo "conformance: tenant $t's link failed"; exit 2; }
	ingd sysctl -qw "net.ipv4.conf.$(tlink "$t").rp_filter=0"
	ip netns exec "$ns" sysctl -qw net.ipv4.ping_group_range="1 0"
done
for a in 198.18.2.1 198.18.2.2 198.18.2.3; do ip -n "$IN" addr add "$a/32" dev lo; done
# Counted where a tenant's packets arrive on the guard's side, before any
# table there (priority -400): default_deny's controls.
ingd nft -f - <<N || { echo "conformance: probe counters failed"; exit 2; }
table ip egconf_tprobe {
	chain pre {
		type filter hook prerouting priority -400; policy accept;
		iifname "$(tlink a)" icmp type echo-request counter
		iifname "$(tlink b)" icmp type echo-request counter
		iifname "$(tlink c)" icmp type echo-request counter
	}
}
N
rawcount() { ingd nft list chain ip egconf_tprobe pre | grep "\"$(tlink "$1")\"" |
    sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'; }

chmod 0755 "$T"
mkdir -p "$T/run" "$T/keys"
chmod 0700 "$T/keys"
cat >"$T/zone.json" <<'Z'
{
 "a.example.test": {"A": ["198.18.2.1"]},
 "b.example.test": {"A": ["198.18.2.2"]},
 "c.example.test": {"A": ["198.18.2.3"]},
 "shared.example.test": {"A": ["198.18.1.10"]},
 "private.example.test": {"A": ["10.99.0.5"]}
}
Z
start_dns "$T/zone.json" || { echo "conformance: dns server failed"; exit 2; }
# The listeners start together (a python start each, slow on a busy
# machine), then each is waited for.
LIS="la:198.18.2.1:80 lb:198.18.2.2:80 lc:198.18.2.3:80 pub:198.18.1.10:80 priv:10.99.0.5:80"
for l in $LIS; do
	start_bg "$IN" "$T/${l%%:*}.out" python3 "$TI/listener.py" --listen "${l#*:}" \
	    --log "$T/${l%%:*}.log" --ready "$T/${l%%:*}.ready" --name "${l%%:*}"
done
for l in $LIS; do wait_file "$T/${l%%:*}.ready" || { echo "conformance: listener ${l%%:*} failed"; exit 2; }; done

# The plane's keys; per tenant T, bundles naming T: strict (epoch 10, in
# force), forged (an untrusted key, 50), genuine (50), newer (60) for
# as-06/07, x70 (70) for the wrong-tenant pushes; a's revoke (80) drops
# shared.example.test:80; u-x70 names no tenant.
"$CTL" keygen --out "$T/keys/plane.pem" >/dev/null 2>&1 &&
    "$CTL" keygen --out "$T/keys/rogue.pem" >/dev/null 2>&1 &&
    cp "$T/keys/plane.pub.pem" "$T/trust.pub.pem" || { echo "conformance: keygen failed"; exit 2; }
hosts() { echo "$1.example.test:80 shared.example.test:80 private.example.test:80"; }
for t in $TEN; do
	TENANT=$t bundle "$t-strict" 10 allowlist $(hosts "$t") &&
	    TENANT=$t KEY=$T/keys/rogue.pem bundle "$t-forged" 50 allowlist $(hosts "$t") evil.example.test:80 &&
	    TENANT=$t bundle "$t-genuine" 50 allowlist $(hosts "$t") &&
	    TENANT=$t bundle "$t-newer" 60 allowlist $(hosts "$t") &&
	    TENANT=$t bundle "$t-x70" 70 allowlist $(hosts "$t") ||
	    { echo "conformance: tenant $t's bundles failed"; exit 2; }
done
TENANT=a bundle a-revoke 80 allowlist a.example.test:80 private.example.test:80 &&
    bundle u-x70 70 allowlist $(hosts b) && bundle open 10 unrestricted ||
    { echo "conformance: bundles failed"; exit 2; }

# ------------------------------------------------------------ primitives
# curl_proxy WHO URL [curl args]: through WHO's guard (PROXY=IP:PORT: another).
curl_proxy() {
	who=$1 url=$2; shift 2
	inat "$who" curl -sS -v --max-time 5 --connect-timeout 2 -o /dev/null \
	    -x "http://${PROXY:-$(gaddr "$who"):$(gport "$who")}" \
	    -w 'code=%{http_code} connect=%{http_connect}' "$@" "$url" 2>"$T/curl.err"
	r=$(sed -n 's/^< X-Egress-Guard-Reason: \([a-z_]*\).*/\1/p' "$T/curl.err" | tr -d '\r' | head -n1)
	echo " reason=${r:--}"
}
# api METHOD PATH [FILE]: G's control API, FILE the body; prints the answer.
api() {
	curl -sS --max-time 10 --unix-socket "$T/run/G.sock" -X "$1" \
	    ${3:+-H 'Content-Type: application/json' --data-binary "@$3"} "http://localhost$2" 2>&1
}
push_to() { api PUT "/v1/tenants/$1/policy" "$T/$2.bundle" | push_words; }	# TENANT BUNDLE
epoch_of() { api GET "/v1/tenants/$1/policy" | grep -o '"epoch":[0-9]*' | head -n1 | cut -d: -f2; }
# common.sh's as-06/07 for tenant CUR.
push_bundle() { push_to "$CUR" "$CUR-$1"; }
policy_epoch() { epoch_of "$CUR"; }
GSOCK=G.sock
glog() { cat "$GLOG" 2>/dev/null; }
# decided MARK: the tenant of G's last decision line since MARK ("none").
decided() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		d=$(glog | tail -n "+$(($1 + 1))" | grep '"event":"decision"' |
		    sed -n 's/.*"tenant":"\([a-z0-9-]*\)".*/\1/p' | tail -n1)
		[ -n "$d" ] && break
		sleep 0.05
	done
	echo "${d:-none}"
}
# logged MARK: whether G wrote any decision line since MARK. "unlogged"
# only after 0.5 s without one: a late line must not pass for none.
logged() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		glog | tail -n "+$(($1 + 1))" | grep -q '"event":"decision"' && { echo logged; return; }
		sleep 0.05
	done
	echo unlogged
}
# ev_tenant NAME MARK TENANT: G's decision lines for TENANT since MARK.
ev_tenant() {
	ev_json - "$2" decision "\"tenant\":\"$3\"" \
	    "listener $1: {N} decision{S}, the last {decision} {reason} for {host}, tenant {tenant}"
}
wl_table() {	# TENANT apply|remove: the workload-side default-deny table
	if [ "$2" = apply ]; then
		"$GBIN" nft apply --netns "$(tns "$1")" --guard "$(gaddr "$1"):$(gport "$1")" \
		    >/dev/null 2>"$T/nftapply.err" || { cat "$T/nftapply.err" >&2; return 1; }
	else "$GBIN" nft remove --netns "$(tns "$1")" >/dev/null 2>&1; fi
}
gd_table() {	# apply|remove: the guard-side tenants table, from G's own list
	if [ "$1" = apply ]; then
		curl -sS --max-time 10 --unix-socket "$T/run/G.sock" -o "$T/tenants.json" \
		    http://localhost/v1/tenants &&
		    "$GBIN" nft tenants --tenants "$T/tenants.json" --netns "$GD" >/dev/null 2>"$T/nfttenants.err" ||
		    { cat "$T/nfttenants.err" >&2; return 1; }
	else ingd nft delete table inet egress_guard_tenants 2>/dev/null; :; fi
}
# spoof on|off: tenant a takes b's address (10.81.2.2) beside its own, and
# the guard host routes what it sends from a tenant's address out that
# tenant's link (source routing, as multi-homed hosts do): a spoofed
# connection then completes, the worst case for identity.
spoof() {
	if [ "$1" = on ]; then
		ip -n "$(tns a)" addr add 10.81.2.2/32 dev "twa-$$"
		for t in $TEN; do
			ip -n "$GD" rule add from "$(gaddr "$t")" table "10$(tn "$t")"
			ip -n "$GD" route add default dev "$(tlink "$t")" table "10$(tn "$t")"
		done
	else
		ip -n "$(tns a)" addr del 10.81.2.2/32 dev "twa-$$" 2>/dev/null
		for t in $TEN; do
			ip -n "$GD" rule del from "$(gaddr "$t")" table "10$(tn "$t")" 2>/dev/null
			ip -n "$GD" route flush table "10$(tn "$t")" 2>/dev/null
		done
	fi
}
# rawping WHO: an ICMP echo request to pub's address from WHO's
# namespace as root, through a raw socket (ping_group_range is "1 0"
# there: ping's datagram socket is refused and it falls back to
# SOCK_RAW); what became of it is counted on the guard's side (rawcount).
rawping() { inat "$1" ping -n -q -c1 -W 0.1 198.18.1.10 >/dev/null 2>&1; :; }
moved() { if [ "$1" = "$2" ]; then echo untouched; else echo reached; fi; }

# ------------------------------------------------------------------ cases
# pair_case ID ASKER OWNER: ASKER asks for OWNER's own name, which only
# OWNER admits; the control is OWNER's own request, reaching its listener.
pair_case() {
	clear_log "l$3"
	o="$(via "$2" "http://$3.example.test/") $(seen "l$3")"
	clear_log "l$3"
	k="$(via "$3" "http://$3.example.test/") $(seen "l$3")"; e=$(ev_listener "l$3" 1)
	clear_log "l$3"
	record "$1" exact_destination_match "tenant $2 asks for $3.example.test:80, which only tenant $3 admits (control: tenant $3 asks, reaching its listener)" \
	    "deny not_allowlisted untouched" "$o" "allow reached" "$k" "$e"
}
# The five facts of tenant T.
cases_tenant() {
	t=$1 p=$(prev "$1") n=$(next "$1")
	if want_fact exact_destination_match; then pair_case "t$t-edm-01" "$t" "$p"; fi
	if want_fact connect_time_public_address; then
		UNDER=$t CONTROL=K ctpa "t$t-ctpa-01" private.example.test priv \
		    "tenant $t: admitted name resolving to a live private listener (control: guard K, private ranges allowed)"
	fi
	if want_fact redirect_recheck; then
		u="http://$t.example.test/redirect?to=http://$n.example.test/"
		clear_log "l$t"; clear_log "l$n"
		o="$(via "$t" "$u" -L) $(seen "l$t") $(seen "l$n")"
		clear_log "l$t"; clear_log "l$n"
		k="$(via K "$u" -L) $(seen "l$t") $(seen "l$n")"; e=$(ev_listener "l$n" 1)
		clear_log "l$t"; clear_log "l$n"
		record "t$t-rr-01" redirect_recheck "tenant $t, curl -L: its own name (reached) answers 302 to $n.example.test, which only tenant $n admits (control: guard K follows it)" \
		    "deny not_allowlisted reached untouched" "$o" "allow reached reached" "$k" "$e"
	fi
	if want_fact authority_separation; then
		CUR=$t
		cases_as_push "tenant $t: " "t$t-"
	fi
	if want_fact default_deny; then
		c0=$(rawcount "$t"); rawping "$t"; c1=$(rawcount "$t")
		wl_table "$t" remove
		rawping "$t"; c2=$(rawcount "$t")
		wl_table "$t" apply || echo "conformance: tenant $t's table not re-applied"
		record "t$t-dd-01" default_deny "tenant $t, root: a raw ICMP socket (ping) sends an echo request to a public address (control: its workload table removed; counted on the guard's side of its link)" \
		    untouched "$(moved "$c0" "$c1")" reached "$(moved "$c1" "$c2")" \
		    "$(ev_counter "gd-raw-$t" "$c1" "$c2")"
	fi
}

# ask_b HOW WHO [curl args]: WHO asks for b.example.test through its
# guard (PROXY: another address); "RESULT WORD SEEN": WORD what G logged
# (HOW logged: logged|unlogged; HOW tenant: tenant=ID decided), SEEN
# whether b's listener lb was reached. lb's log is kept for the evidence.
ask_b() {
	how=$1; shift
	m=$(log_mark -); clear_log lb
	r=$(via "$1" http://b.example.test/ "${@:2}")
	if [ "$how" = tenant ]; then w="tenant=$(decided "$m")"; else w=$(logged "$m"); fi
	echo "$r $w $(seen lb)"
}
# Identity and isolation across tenants. Tenant a is the attacker: root
# in its namespace, so its own workload table is removed for these (what
# then stops it is the guard's side: the listeners' device binding and
# the guard-side table).
cases_cross_identity() {
	wl_table a remove
	# A table left in place would refuse a's probes itself: "error" would
	# then say nothing of the guard's side.
	! inat a nft list table inet egress_guard >/dev/null 2>&1 ||
	    { echo "conformance: tenant a's own table is still there"; exit 2; }
	if want_fact exact_destination_match; then
		# No guard-side table: only the device binding of b's listener.
		o=$(PROXY=10.81.2.1:3182 ask_b logged a)
		k=$(ask_b logged b); e=$(ev_listener lb 1)
		record xt-edm-03 exact_destination_match "tenant a (its table removed) connects to tenant b's listener address and port over a's link, asking for b's name; no guard-side table: b's listener is bound to b's link (control: b asks)" \
		    "error unlogged untouched" "$o" "allow logged reached" "$k" "$e"
	fi
	spoof on
	if want_fact exact_destination_match; then
		o=$(ask_b tenant a --interface 10.81.2.2)
		k=$(ask_b tenant b); e=$(ev_listener lb 1)
		record xt-edm-02 exact_destination_match "tenant a spoofs tenant b's address (10.81.2.2) on its own link, no guard-side table, and asks for b's name: decided as a (control: b asks)" \
		    "deny not_allowlisted tenant=a untouched" "$o" "allow tenant=b reached" "$k" "$e"
	fi
	if want_fact default_deny; then
		# The control before the guard-side table: the spoofed connection
		# reaches the guard's listener on a's link, decided as tenant a.
		m=$(log_mark -)
		k1=$(ask_b tenant a --interface 10.81.2.2); k1=${k1% *}
		e1=$(ev_tenant G-a "$m" a)
	fi
	gd_table apply || { echo "conformance: guard-side table failed"; exit 2; }
	if want_fact default_deny; then
		o=$(ask_b logged a --interface 10.81.2.2 --connect-timeout 1)
		record xt-dd-01 default_deny "tenant a spoofs tenant b's address (10.81.2.2) on its own link, to a's own listener: the guard-side table drops it (control: the same before the table, decided as a)" \
		    "error unlogged untouched" "$o" "deny not_allowlisted tenant=a" "$k1" "$e1"
		o=$(PROXY=10.81.2.1:3182 ask_b logged a --connect-timeout 1)
		k=$(ask_b logged b); e=$(ev_listener lb 1)
		record xt-dd-02 default_deny "tenant a (its table removed) connects to tenant b's listener address and port over a's link, with the guard-side table (control: b does)" \
		    "error unlogged untouched" "$o" "allow logged reached" "$k" "$e"
	fi
	spoof off
	wl_table a apply || echo "conformance: tenant a's table not re-applied"
}

# push_case ID BUNDLE TENANT PROBE: BUNDLE pushed as tenant b's is
# refused; the control, TENANT's x70 pushed as TENANT's, is accepted.
push_case() {
	o="$(push_to b "$2") epoch=$(epoch_of b)"
	m=$(log_mark -)
	k="$(push_to "$3" "$3-x70") epoch=$(epoch_of "$3")"
	e=$(ev_control "$GSOCK" - "$m" '"PUT".*"accepted"')
	record "$1" authority_separation "$4" '"error":"wrong_tenant" epoch=60' "$o" '"epoch":70 epoch=70' "$k" "$e"
}
cases_cross_policy() {
	if want_fact exact_destination_match; then pair_case xt-edm-01 a b; fi
	if want_fact authority_separation; then
		push_case xt-as-01 a-x70 a "tenant a's bundle (validly signed, epoch 70, naming a) pushed as tenant b's (control: pushed as a's)"
		push_case xt-as-02 u-x70 b "a bundle naming no tenant (validly signed, epoch 70, b's pairs) pushed as tenant b's (control: the same naming b, pushed as b's)"
	fi
	if want_fact redirect_recheck; then
		# a and b each hold a live tunnel to pub; a's push drops the pair.
		rm -f "$T/tun.go" "$T/tun-a.ready" "$T/tun-b.ready"
		clear_log pub
		for t in a b; do
			inat "$t" python3 "$TI/tunnel_hold.py" --mode get "$(gaddr "$t")" \
			    "$(gport "$t")" shared.example.test:80 "$T/tun-$t.ready" "$T/tun.go" >"$T/tun-$t.out" 2>&1 &
			PIDS="$PIDS $!"; eval "TUN_$t=$!"
		done
		wait_file "$T/tun-a.ready" 50; wait_file "$T/tun-b.ready" 50
		r=$(push_to a a-revoke)
		touch "$T/tun.go"
		wait "$TUN_a" "$TUN_b"
		o=$(cat "$T/tun-a.out"); k=$(cat "$T/tun-b.out"); e=$(ev_listener pub 3)
		clear_log pub
		record xt-rr-01 redirect_recheck "tenant a's push dropping shared.example.test:80 ($r) while a and b each hold a live tunnel to it: a's is closed (control: b's, to the same listener, relays after it)" \
		    "200, then closed" "$o" "200, then 200" "$k" "$e"
	fi
}

# ------------------------------------------------------------------ phases
# phase BIN FACTS NAME: G started from BIN (and its tables applied by
# BIN) with a state folder of its own, the tenants added and their
# policies pushed, the cases over FACTS, OUT/NAME.json; G stopped and its
# tables taken away after. Returns write_report's status.
phase() {
	GBIN=$1 FACTS=$2
	: >"$RES"
	rm -f "$OUT/$3.json" "$T/run/G.sock"
	sha=$(sha256sum <"$GBIN" | cut -d' ' -f1)
	[ ${#sha} -eq 64 ] || { echo "conformance: cannot hash $GBIN"; return 2; }
	GLOG=$T/$3.log
	# root's, as a deployment makes it: the guard hands it to its --user.
	mkdir -p "$T/state-$3"
	start_bg "$GD" "$T/$3.out" "$GBIN" run --tenants --control "$T/run/G.sock" \
	    --state-dir "$T/state-$3" --trust-key "$T/trust.pub.pem" --user nobody \
	    --log-file "$GLOG" --dns 198.18.0.53 --dns-timeout 2 --connect-timeout 2 \
	    --allow-range 198.18.0.0/15
	GPID=$LASTPID
	for _ in $(seq 100); do
		api GET /v1/tenants | grep -q "$TSCHEMA" && break
		kill -0 "$GPID" 2>/dev/null || break
		sleep 0.1
	done
	for t in $TEN; do
		n=$(tn "$t")
		printf '{"address":"10.81.%s.1","dns_port":0,"id":"%s","link":"%s","max_conns":256,"max_dns":64,"peer":"10.81.%s.2","port":%s,"transparent_port":0}' \
		    "$n" "$t" "$(tlink "$t")" "$n" "$(gport "$t")" >"$T/spec-$t.json"
		a=$(api PUT "/v1/tenants/$t" "$T/spec-$t.json")
		case $a in *'"added"'*) ;; *) echo "conformance: tenant $t not added: $a"; cat "$T/$3.out"; return 2;; esac
		[ "$(push_to "$t" "$t-strict")" = '"epoch":10' ] || { echo "conformance: tenant $t's push failed"; return 2; }
		wl_table "$t" apply || { echo "conformance: tenant $t's table failed"; return 2; }
	done
	t0=$(date +%s%N)
	cases_cross_identity
	for t in $TEN; do cases_tenant "$t"; done
	cases_cross_policy
	echo "($3: cases $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
	kill "$GPID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$GPID" 2>/dev/null || break; sleep 0.1; done
	gd_table remove
	write_report "$OUT" "$GBIN" "$sha" tenants "" "$3"
}
TSCHEMA=egress-guard.tenants.v1

if [ "${EG_CONF_TENANT_MUTANTS:-0}" = 1 ]; then
	rc=0
	for mu in tenant_by_source:exact_destination_match no_antispoof:default_deny; do
		phase "$EG_BUILD/mutant-${mu%%:*}/egress-guard" "${mu#*:}" "report-tenants-${mu%%:*}"
		r=$?
		[ $r = 2 ] && rc=2
		[ $r = 1 ] && [ $rc = 0 ] && rc=1
	done
	exit $rc
fi
# The control guard, for connect_time_public_address and redirect_recheck.
start_guard K 3129 --user nobody --trust-key "$T/trust.pub.pem" --policy "$T/open.bundle" \
    --dns 198.18.0.53 --dns-timeout 2 --connect-timeout 2 --allow-range 198.18.0.0/15 \
    --allow-range 10.0.0.0/8 || exit 2
phase "$BIN" "$FACTS" report-tenants
