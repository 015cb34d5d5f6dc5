# Shared by the conformance targets (sourced by tests/conformance/matrix.sh
# for the lab, and by tests/conformance/docker.sh for the Docker
# deployment): recording a case, the probes' verdict words, the report.
# A target defines curl_proxy PORT URL… and raw PORT TEXT… (lib.sh's, for
# the lab) and keeps its listeners' logs in $T/NAME.log.

RES=$T/results.tsv
: >"$RES"
FACTS=${EG_CONF_FACTS:-"exact_destination_match connect_time_public_address redirect_recheck authority_separation default_deny"}

want_fact() { case " $FACTS " in *" $1 "*) return 0;; esac; return 1; }

# record ID FACT PROBE EXPECTED OBSERVED CONTROL_EXPECTED CONTROL_OBSERVED EVIDENCE
# EVIDENCE is what the far side of the negative control saw, "KIND NAME:
# DETAIL" (docs/receipts.md, "Suites and evidence"; the ev_* helpers
# below): a control whose listener, resolver, socket or counter saw
# nothing proves nothing, so the case is inconclusive, never pass.
record() {
	[ $# = 8 ] || { echo "conformance: record $1: $# arguments, 8 wanted"; set -- "$1" "$2" "$3" "$4" "$5" "$6" "$7" ""; }
	# One line per case: a tab, newline or CR inside a field is a space.
	_f=()
	for _x in "$@"; do _x=${_x//$'\t'/ }; _x=${_x//$'\n'/ }; _f+=("${_x//$'\r'/ }"); done
	set -- "${_f[@]}"
	e=$8
	ev_valid "$e" || e=""
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$e" >>"$RES"
	v=pass
	if [ "$4" != "$5" ]; then v=fail
	elif [ "$6" != "$7" ] || [ -z "$e" ]; then v=inconclusive; fi
	printf '%-5s %-13s %s  [%s | control: %s | evidence: %s]\n' "$v" "$1" "$3" "$5" "$7" "${e:-NONE}"
}

# --------------------------------------------------- control evidence
# ev_valid TEXT: TEXT is "KIND NAME: DETAIL" as the report's schema has it
# (listener, resolver, socket and counter details start with a count >= 1).
ev_valid() {
	local LC_ALL=C re='^(listener|resolver|socket|counter|process) [A-Za-z0-9._:/-]{1,64}: ([ -~]{1,200})$'
	[[ $1 =~ $re ]] || return 1
	[ "${BASH_REMATCH[1]}" = process ] || [[ ${BASH_REMATCH[2]} =~ ^[1-9][0-9]* ]]
}
# ev_listener NAME [MIN_REQUESTS]: what listener NAME logged since its last
# clear_log, "listener NAME: N connections, B bytes[, R requests]"; empty
# when it logged no connection (or fewer than MIN_REQUESTS requests). A
# connection the guard made is logged once the listener accepts it, a
# moment after the guard saw it open: up to 0.5 s for the first line.
ev_listener() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$T/$1.log" ] && break; sleep 0.05; done
	awk -v n="$1" -v min="${2:-0}" '$1 == "conn" { c++ } $1 == "bytes" { b += $2 } $1 == "req" { r++ }
	    END { if (c > 0 && r >= min)
		printf "listener %s: %d connection%s, %d bytes%s\n", n, c, c == 1 ? "" : "s", b,
		    r ? sprintf(", %d request%s", r, r == 1 ? "" : "s") : "" }' "$T/$1.log" 2>/dev/null
}
# ev_keep KEY NAME [MIN_REQUESTS]: ev_listener's words kept in $T/ev.KEY,
# for a probe that runs in a subshell and clears its listener's log; ev_get
# KEY prints them once.
ev_keep() { k=$1; shift; ev_listener "$@" >"$T/ev.$k"; }
ev_get() { cat "$T/ev.$1" 2>/dev/null; rm -f "$T/ev.$1"; }
# ev_resolver NAME FILE [CLIENT]: "resolver NAME: N queries" for the lines
# of query log FILE (dnsd.py's "QNAME TYPE CLIENT", nftprobe.py's "udp
# query from ..."), those from CLIENT only when given.
ev_resolver() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$2" ] && break; sleep 0.05; done
	awk -v n="$1" -v cl="${3:-}" 'cl == "" || $3 == cl || $NF ~ "^" cl ":" { q++ }
	    END { if (q > 0) printf "resolver %s: %d quer%s\n", n, q, q == 1 ? "y" : "ies" }' "$2" 2>/dev/null
}
# log_of SRC: a guard's log, SRC its file or "-" for the guard under
# test's (the target's glog); log_mark SRC: its line count now, from
# which ev_control and ev_decision read.
log_of() { if [ "$1" = - ]; then glog; else cat "$1" 2>/dev/null; fi; }
log_mark() { log_of "$1" | wc -l; }
# ev_json SRC MARK EVENT PATTERN FORMAT: the EVENT lines of log SRC after
# MARK that match PATTERN (up to 0.5 s for the first), FORMAT'ed from the
# count N (S: "s" unless 1) and the last line's keys, {KEY} each (a string
# value's text, a number as written); nothing when a key is absent. awk,
# not a python start per case: seconds on a busy machine.
ev_json() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		log_of "$1" | tail -n "+$(($2 + 1))" | grep "\"event\":\"$3\"" | grep -e "$4" >"$T/ev.json"
		[ -s "$T/ev.json" ] && break
		sleep 0.05
	done
	awk -v fmt="$5" 'END {
		if (NR == 0)
			exit
		s = fmt; out = ""
		while (match(s, /[{][A-Za-z_]+[}]/)) {
			k = substr(s, RSTART + 1, RLENGTH - 2)
			out = out substr(s, 1, RSTART - 1)
			s = substr(s, RSTART + RLENGTH)
			if (k == "N")
				v = NR
			else if (k == "S")
				v = NR == 1 ? "" : "s"
			else {
				i = index($0, "\"" k "\":")
				if (i == 0)
					exit
				r = substr($0, i + length(k) + 3)
				if (substr(r, 1, 1) == "\"") {
					r = substr(r, 2)
					v = substr(r, 1, index(r, "\"") - 1)
				} else {
					match(r, /^[^,}]*/)
					v = substr(r, 1, RLENGTH)
				}
			}
			out = out v
		}
		out = out s
		sub(/[ \t]+$/, "", out)
		print out
	}' "$T/ev.json" 2>/dev/null
}
# ev_control NAME SRC MARK [PATTERN]: the guard's control API (socket NAME)
# logged a request: "socket NAME: N connections, METHOD PATH STATUS".
ev_control() {
	ev_json "$2" "$3" control "${4:-.}" "socket $1: {N} connection{S}, {method} {path} {status}"
}
# ev_decision NAME SRC MARK: a guard's proxy listener (NAME) logged a
# decision: "listener NAME: N decisions, the last DECISION REASON for HOST".
ev_decision() {
	ev_json "$2" "$3" decision . "listener $1: {N} decision{S}, the last {decision} {reason} for {host}"
}
# ev_counter NAME BEFORE AFTER: "counter NAME: N packets" when it moved.
ev_counter() {
	[ "${3:-0}" -gt "${2:-0}" ] 2>/dev/null &&
	    echo "counter $1: $(($3 - $2)) packet$([ $(($3 - $2)) = 1 ] || echo s)"
}
# ev_caps PID: "process PID: CapEff HEX" when PID runs with capabilities.
ev_caps() {
	c=$(awk '/^CapEff/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$c" ] && [ "$c" != 0000000000000000 ] && echo "process $1: CapEff $c"
}

# via PORT URL [curl args] → "allow" | "deny REASON" | "error"
via() {
	out=$(curl_proxy "$@")
	case "$out" in
	*reason=-*code=200*|*code=200*reason=-) echo allow ;;
	*reason=-) echo error ;;
	*) echo "deny ${out##*reason=}" ;;
	esac
}
# rawvia PORT TEXT → "allow" | "deny REASON" | "error"
rawvia() {
	out=$(raw "$@")
	case "$out" in
	*status=200*) echo allow ;;
	*reason=-*) echo error ;;
	*) r=${out#*reason=}; echo "deny ${r%% *}" ;;
	esac
}
# seen NAME: "reached" if listener NAME got any byte since the last clear
seen() { if [ -s "$T/$1.log" ]; then echo reached; else echo untouched; fi; }
clear_log() { : >"$T/$1.log"; }

# write_report OUT_DIR BINARY SHA256 SUITE [DEPLOYMENT_JSON] [NAME]:
# OUT_DIR/NAME.json (default report.json) from the recorded cases (schema
# v2, graded against conform/suites/SUITE.json), and the summary table;
# exit status 0 only when every fact run is true. The lab's run adds
# OUT_DIR/report-transparent.json (suite transparent: its tp-* cases).
write_report() {
	_rp=$(dirname "${BASH_SOURCE[0]}")/report.py
	python3 "$_rp" "$RES" "$1/${6:-report}.json" "$2" "$FACTS" "$3" --suite "$4" ${5:+--deployment "$5"}
	_rc=$?
	[ $_rc = 2 ] && return 2
	if [ "$4" = lab ]; then
		python3 "$_rp" "$RES" "$1/report-transparent.json" "$2" "$FACTS" "$3" \
		    --suite transparent --only tp- || _rc=1
	fi
	return $_rc
}

# ------------------------------------------------ cases both targets run
# A target also defines inwl CMD… (in the workload's namespace, as its
# user), gaddr PORT and gport PORT (where guard PORT listens: 3128 the
# guard under test, 3129 the control guard), push_bundle NAME (the plane
# pushes bundle NAME to the guard under test: prints the "error" or the
# "epoch" it answered) and policy_epoch (the guard's epoch); listeners
# priv, meta and cgnat; the zone's names.

# The control is the same CONNECT through the control guard, which must
# reach the live listener (pub, or pub8443 for the other port) behind the
# name: a control that got no answer proves nothing (inconclusive).
cases_edm_names() {
	F=exact_destination_match
	for c in "edm-01 http://www.api.example.test/ subdomain pub" \
	    "edm-02 http://api.example.test.evil.test/ suffix-extension pub" \
	    "edm-03 http://other.example.test/ other-name pub" \
	    "edm-04 http://api.example.test:8443/ other-port pub8443"; do
		set -- $c
		o=$(via 3128 "$2" -p -k)
		clear_log "$4"
		k=$(via 3129 "$2" -p -k); e=$(ev_listener "$4" 1)
		clear_log "$4"
		record "$1" $F "CONNECT $3 ${2#*//}" "deny not_allowlisted" "$o" "allow" "$k" "$e"
	done
}

# cases_edm_literals IP: edm-06…: other spellings of an admitted IPv4
# literal (IP:80 is admitted; the control is that spelling itself, which
# the guard must dial: the listener pub logs the connection).
cases_edm_literals() {
	F=exact_destination_match
	n=6
	for s in $(python3 -c 'import sys; a, b, c, d = map(int, sys.argv[1].split("."))
ip = sys.argv[1]
print((a << 24 | b << 16 | c << 8 | d), "0x%x.0x%x.%d.%d" % (a, b, c, d),
      ".".join("0%o" % x for x in (a, b, c, d)), "%d.%d.%d" % (a, b, c << 8 | d),
      "[::ffff:%s]" % ip, "u@" + ip, sep=":80 ", end=":80 ")
print("%s:080 %s%%3a80:80" % (ip, ip))' "$1"); do
		o=$(rawvia 3128 "CONNECT $s HTTP/1.1\r\n\r\n")
		clear_log pub
		k=$(rawvia 3128 "CONNECT $1:80 HTTP/1.1\r\n\r\n"); e=$(ev_listener pub)
		clear_log pub
		record "$(printf 'edm-%02d' $n)" $F "CONNECT IP-literal spelling $s" "deny bad_request" "$o" \
		    allow "$k" "$e"
		n=$((n + 1))
	done
}

ctpa() {	# ID NAME LISTENER PROBE; UNDER and CONTROL: other guards than 3128, 3129
	clear_log "$3"
	o="$(via "${UNDER:-3128}" "http://$2/" -p) $(seen "$3")"
	clear_log "$3"
	k="$(via "${CONTROL:-3129}" "http://$2/" -p) $(seen "$3")"; e=$(ev_listener "$3" 1)
	clear_log "$3"
	record "$1" connect_time_public_address "$4" "deny non_public_address untouched" "$o" \
	    "allow reached" "$k" "$e"
}
# socks PORT HOST: a SOCKS5 CONNECT to HOST:80 through guard PORT (an
# IPv4 literal goes as ATYP 1, a name as ATYP 3, resolved by the guard),
# then a GET on the tunnel → "allow" | "deny rep=0xNN" | "error".
socks() {
	out=$(raw "$1" "GET / HTTP/1.0\r\n\r\n" --socks5 "$2:80")
	case "$out" in
	socks_rep=*) echo "deny rep=${out#socks_rep=}" ;;
	*status=200*) echo allow ;;
	*) echo error ;;
	esac
}
ctpa_socks() {	# ID HOST LISTENER PROBE
	clear_log "$3"
	o="$(socks 3128 "$2") $(seen "$3")"
	clear_log "$3"
	k="$(socks 3129 "$2") $(seen "$3")"; e=$(ev_listener "$3" 1)
	clear_log "$3"
	record "$1" connect_time_public_address "$4" "deny rep=0x02 untouched" "$o" \
	    "allow reached" "$k" "$e"
}
cases_ctpa_names() {
	ctpa ctpa-01 private.example.test priv "admitted name resolving to a live private listener"
	ctpa ctpa-02 mixed.example.test priv "admitted name with mixed public and private answers"
	ctpa ctpa-03 metadata.example.test meta "admitted name resolving to the cloud metadata address"
	ctpa ctpa-04 cgnat.example.test cgnat "admitted name resolving to CGNAT metadata 100.100.100.200"
	ctpa ctpa-05 10.99.0.5 priv "admitted private IP literal with a live listener"
	# The same check on the SOCKS5 path, which routes on its own.
	ctpa_socks ctpa-30 private.example.test priv \
	    "SOCKS5 ATYP domain: admitted name resolving to a live private listener"
	ctpa_socks ctpa-31 10.99.0.5 priv \
	    "SOCKS5 ATYP IPv4: admitted private IP literal with a live listener"
}
case_ctpa_rebind() {
	clear_log priv
	o1=$(via 3128 http://rebind.example.test/ -p); o2=$(via 3128 http://rebind.example.test/ -p)
	o="$o1, then $o2 $(seen priv)"
	clear_log priv
	k1=$(via 3129 http://rebind.example.test/ -p); k2=$(via 3129 http://rebind.example.test/ -p)
	k="$k1, then $k2 $(seen priv)"; e=$(ev_listener priv 1)
	clear_log priv
	record ctpa-08 connect_time_public_address "answer flips public→private between queries, TTL 0" \
	    "allow, then deny non_public_address untouched" "$o" "allow, then allow reached" "$k" "$e"
}

cases_rr() {	# rr-01…04
	F=redirect_recheck
	clear_log priv
	o=$(via 3128 'http://api.example.test/redirect?to=http://other.example.test/' -L)
	# The control: the redirect and the request it leads to, both on pub.
	clear_log pub
	k=$(via 3129 'http://api.example.test/redirect?to=http://other.example.test/' -L)
	e=$(ev_listener pub 2)
	clear_log pub
	record rr-01 $F "curl -L: 302 to a non-admitted name" "deny not_allowlisted" "$o" allow "$k" "$e"
	o="$(via 3128 'http://api.example.test/redirect?to=http://private.example.test/' -L) $(seen priv)"
	clear_log priv
	k="$(via 3129 'http://api.example.test/redirect?to=http://private.example.test/' -L) $(seen priv)"
	e=$(ev_listener priv 1)
	clear_log priv
	record rr-02 $F "curl -L: 302 to an admitted name resolving private" \
	    "deny non_public_address untouched" "$o" "allow reached" "$k" "$e"
	ka() {	# PORT: two requests on one client connection
		inwl curl -sS --max-time 10 -x "http://$(gaddr "$1"):$(gport "$1")" -o /dev/null \
		    -o /dev/null -w '%{http_code} ' http://api.example.test/ http://other.example.test/ \
		    2>/dev/null | sed 's/ $//'
	}
	o=$(ka 3128)
	clear_log pub
	k=$(ka 3129); e=$(ev_listener pub 2)
	clear_log pub
	record rr-03 $F "second request on a kept-alive connection, to a non-admitted name" \
	    "200 403" "$o" "200 200" "$k" "$e"
	rc() {	# PORT: upstream closes after the first answer; the name now resolves private
		inwl python3 - "$(gaddr "$1")" "$(gport "$1")" <<'PY'
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
def ask(path):
    s.sendall(b"GET http://reconnect.example.test%s HTTP/1.1\r\n\r\n" % path)
    d = b""
    while b"\r\n\r\n" not in d:
        x = s.recv(4096)
        if not x:
            return "closed"
        d += x
    return d.split(b" ")[1].decode()
print(ask(b"/close"), ask(b"/"))
PY
	}
	clear_log priv
	o="$(rc 3128) $(seen priv)"
	clear_log priv
	k="$(rc 3129) $(seen priv)"; e=$(ev_listener priv 1)
	clear_log priv
	record rr-04 $F "reconnect after the upstream closed: fresh resolution, now private" \
	    "200 403 untouched" "$o" "200 200 reached" "$k" "$e"
}

# as-06, as-07 [PROBE_PREFIX [ID_PREFIX]]: bundles forged (an untrusted
# key, epoch 50), genuine (50), strict (the current one, 10) and newer (60)
# from the plane. The target defines glog (the guard under test's log, to
# stdout) and GSOCK (its control socket's name): the control push must be
# logged as accepted. ID_PREFIX names the cases of one of several policies
# (the tenants target: ta-as-06).
cases_as_push() {
	F=authority_separation
	o="$(push_bundle forged) epoch=$(policy_epoch)"
	m=$(log_mark -)
	k="$(push_bundle genuine) epoch=$(policy_epoch)"
	e=$(ev_control "$GSOCK" - "$m" '"PUT".*"accepted"')
	record "${2:-}as-06" $F "${1:-}push a bundle signed by an untrusted key" '"error":"unknown_key" epoch=10' \
	    "$o" '"epoch":50 epoch=50' "$k" "$e"
	o="$(push_bundle strict) epoch=$(policy_epoch)"
	m=$(log_mark -)
	k="$(push_bundle newer) epoch=$(policy_epoch)"
	e=$(ev_control "$GSOCK" - "$m" '"PUT".*"accepted"')
	record "${2:-}as-07" $F "${1:-}replay an older, validly signed bundle (stale epoch)" \
	    '"error":"stale_epoch" epoch=50' "$o" '"epoch":60 epoch=60' "$k" "$e"
}
# bundle NAME EPOCH MODE HOST:PORT... → $T/NAME.bundle, compiled and signed
# by the plane (KEY, default $T/keys/plane.pem); with TENANT set, the
# policy names that tenant (compile --tenant).
bundle() {
	n=$1 e=$2 m=$3; shift 3
	if [ "$m" = allowlist ]; then
		h=$(printf ',"%s"' "$@")
		echo "{\"network_policy\":\"$m\",\"allowed_hosts\":[${h#,}]}"
	else echo "{\"network_policy\":\"$m\"}"; fi >"$T/$n.profile"
	"$CTL" compile "$T/$n.profile" --epoch "$e" ${TENANT:+--tenant "$TENANT"} >"$T/$n.policy" &&
	    "$CTL" sign "$T/$n.policy" --key "${KEY:-$T/keys/plane.pem}" >"$T/$n.bundle"
}
# push_words: the "error" or "epoch" of a push answer on stdin
push_words() { grep -o '"error":"[a-z_]*"\|"epoch":[0-9]*' | head -n1; }

holds_key() {	# PID: private key material in its open files or environment
	for f in /proc/$1/fd/*; do
		t=$(readlink "$f" 2>/dev/null)
		case "$t" in /*) [ -f "$t" ] && grep -q "PRIVATE KEY" "$t" 2>/dev/null && { echo holds-key; return; };; esac
	done
	tr '\0' '\n' </proc/$1/environ | grep -q "PRIVATE KEY" && { echo holds-key; return; }
	echo no-key
}
# case_as_key PID KEYFILE [PROBE PREFIX]: as-08, the control a process holding KEYFILE
case_as_key() {
	sleep 20 3<"$2" &
	KP=$!; PIDS="$PIDS $KP"
	# Its fd 3 is opened in the child after the fork: up to 5 s for it.
	for _ in $(seq 100); do [ -e "/proc/$KP/fd/3" ] && break; sleep 0.05; done
	k=$(holds_key "$KP")
	e=""; [ "$k" = holds-key ] && e="process $KP: fd 3 holds a PRIVATE KEY ($(basename "$2"))"
	record as-08 authority_separation "key material in the guard${3:-}'s open files and environment" \
	    no-key "$(holds_key "$1")" holds-key "$k" "$e"
	kill "$KP" 2>/dev/null
}
caps() { awk '/^CapEff/ {print ($2 == "0000000000000000") ? "no-caps" : "caps"}' /proc/$1/status; }
