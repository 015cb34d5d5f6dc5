# Shared by the namespace integration tests (bash). Builds a three-host
# topology in network namespaces named with this shell's PID:
#
#   workload (WL) 10.77.0.2 ── 10.77.0.1 guard (GD) 198.18.0.1 ── 198.18.0.2 internet (IN)
#                                          2001:2::1           2001:2::2
#
# IN holds the test's DNS server (198.18.0.53) and live listeners on
# pretend-public (198.18.1.10, 2001:2:0:1::10) and private (10.99.0.5,
# 169.254.169.254, fd00::5) addresses. WL has no route past the guard. No
# namespace has any link to the real network. An EXIT trap stops every
# process started here, by PID, and deletes the namespaces.

set -u
# Descriptors the caller left open (CI's runner leaves some) would pass
# to every process started here and move where a low `ulimit -n` bites:
# only 0-2 are kept (bash's own script descriptor is close-on-exec, and
# `.` has read this file whole).
for _fd in /proc/$$/fd/*; do
	_fd=${_fd##*/}
	case $_fd in 0|1|2|255) ;; *) eval "exec $_fd>&-" 2>/dev/null ;; esac
done
unset _fd
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
EG_BUILD=${EG_BUILD:-$TOP/${BUILD:-build}}
BIN=$EG_BUILD/egress-guard
CTL=$EG_BUILD/egress-guardctl
TI=$TOP/tests/integration
. "$TI/wait.sh"	# lines, wait_lines
T=$(mktemp -d /tmp/egtest.XXXXXX)
WL=egw-$$
GD=egg-$$
IN=egi-$$
PIDS=""
NPASS=0
NFAIL=0

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	# A guard under $EG_WRAP (valgrind) needs longer to exit and write
	# its report.
	tries=10; [ -n "${EG_WRAP:-}" ] && tries=100
	for p in $PIDS; do
		for _ in $(seq "$tries"); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	# EXTRA_NS: namespaces a script adds to the three (named with $$).
	for n in "$WL" "$GD" "$IN" ${EXTRA_NS:-}; do ip netns del "$n" 2>/dev/null; done
	[ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM

pass() { echo "PASS $1"; NPASS=$((NPASS + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; NFAIL=$((NFAIL + 1)); }
# check NAME CONDITION-RESULT DETAIL: records PASS when $2 is 0.
check() { if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1" "${3:-}"; fi; }
finish() {
	echo "# $NPASS passed, $NFAIL failed"
	[ "$NFAIL" -eq 0 ]
}

inwl() { ip netns exec "$WL" "$@"; }
ingd() { ip netns exec "$GD" "$@"; }
inin() { ip netns exec "$IN" "$@"; }

topo_up() {
	ip netns add "$WL" && ip netns add "$GD" && ip netns add "$IN" || return 1
	for n in "$WL" "$GD" "$IN"; do ip -n "$n" link set lo up; done
	ip link add wl0-$$ netns "$WL" type veth peer name gw0-$$ netns "$GD" || return 1
	ip link add gi0-$$ netns "$GD" type veth peer name ig0-$$ netns "$IN" || return 1
	ip -n "$WL" addr add 10.77.0.2/24 dev wl0-$$
	ip -n "$GD" addr add 10.77.0.1/24 dev gw0-$$
	ip -n "$GD" addr add 198.18.0.1/24 dev gi0-$$
	ip -n "$IN" addr add 198.18.0.2/24 dev ig0-$$
	ip -n "$GD" addr add 2001:2::1/64 dev gi0-$$ nodad
	ip -n "$IN" addr add 2001:2::2/64 dev ig0-$$ nodad
	for a in 198.18.0.53/32 198.18.1.10/32 10.99.0.5/32 169.254.169.254/32 \
	    100.100.100.200/32; do
		ip -n "$IN" addr add "$a" dev lo
	done
	ip -n "$IN" addr add 2001:2:0:1::10/128 dev lo nodad
	ip -n "$IN" addr add fd00::5/128 dev lo nodad
	ip -n "$WL" link set wl0-$$ up
	ip -n "$GD" link set gw0-$$ up
	ip -n "$GD" link set gi0-$$ up
	ip -n "$IN" link set ig0-$$ up
	ip -n "$GD" route add default via 198.18.0.2
	ip -n "$GD" -6 route add default via 2001:2::2
	# IN answers for every private address too: a guard that skipped
	# classification would reach them.
	ip -n "$IN" route add 10.77.0.0/24 via 198.18.0.1
}

# wait_file FILE [TRIES]: bounded wait (TRIES x 0.1 s) for FILE to exist.
wait_file() {
	for _ in $(seq "${2:-100}"); do [ -s "$1" ] && return 0; sleep 0.1; done
	return 1
}

# fds PID: how many descriptors PID holds.
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
# active_conns NAME: active_connections in the /v1/status of the guard
# whose control socket is $T/NAME.sock (empty if it does not answer).
active_conns() {
	"$CTL" status --control "$T/$1.sock" 2>/dev/null |
	    sed -n 's/.*"active_connections":\([0-9]*\).*/\1/p'
}

# start_bg NS LOGFILE CMD...: starts CMD in NS, records its PID.
start_bg() {
	ns=$1; out=$2; shift 2
	ip netns exec "$ns" "$@" >"$out" 2>&1 &
	PIDS="$PIDS $!"
	LASTPID=$!
}

start_dns() {	# start_dns ZONEFILE
	start_bg "$IN" "$T/dnsd.out" python3 "$TI/dnsd.py" --listen 198.18.0.53 \
	    --zone "$1" --log "$T/queries.log" --ready "$T/dnsd.ready"
	DNSPID=$LASTPID
	wait_file "$T/dnsd.ready"
}

# start_listener NAME ADDR:PORT [extra args]: log in $T/NAME.log
start_listener() {
	name=$1; addr=$2; shift 2
	start_bg "$IN" "$T/$name.out" python3 "$TI/listener.py" --listen "$addr" \
	    --log "$T/$name.log" --ready "$T/$name.ready" --name "$name" "$@"
	wait_file "$T/$name.ready"
}

make_cert() {	# make_cert CN [SAN...] → $T/cert.pem $T/key.pem
	cn=$1; shift
	san="DNS:$cn"
	for s in "$@"; do san="$san,DNS:$s"; done
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -subj "/CN=$cn" -addext "subjectAltName=$san" -days 1 \
	    -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
}

# start_guard NAME LISTEN_PORT ARGS...: guard in GD on 10.77.0.1:PORT, JSON
# log in $T/NAME.log.
start_guard() {
	name=$1; port=$2; shift 2
	# Ready once THIS start logged its policy line: a restarted guard
	# appends to the log of the one before.
	n0=$(cat "$T/$name.log" 2>/dev/null | grep -c '"event":"policy"')
	# No --state-dir: --no-state, never the host's /var/lib/egress-guard
	# (tests that keep a floor name their own folder).
	# EG_DEFAULT_STATE=1: neither (the default folder, under a wrapper
	# that puts a folder of the test's over /var/lib).
	case " $* " in *" --state-dir "*|*" --no-state "*) ;;
	*) [ -n "${EG_DEFAULT_STATE:-}" ] || set -- "$@" --no-state;; esac
	# EG_WORKERS: --workers for every guard a script starts that names
	# none (default: the guard's own, one per usable CPU).
	case " $* " in *" --workers "*) ;;
	*) [ -z "${EG_WORKERS:-}" ] || set -- "$@" --workers "$EG_WORKERS";; esac
	# EG_WRAP: a command the guard runs under, e.g. valgrind (make valgrind).
	# shellcheck disable=SC2086
	start_bg "$GD" "$T/$name.out" ${EG_WRAP:-} "$BIN" run --listen "10.77.0.1:$port" \
	    --log-file "$T/$name.log" --control "$T/$name.sock" "$@"
	eval "PID_$name=$LASTPID"
	for _ in $(seq 100); do
		[ "$(cat "$T/$name.log" 2>/dev/null | grep -c '"event":"policy"')" -gt "$n0" ] && return 0
		kill -0 "$LASTPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "guard $name did not start:"; cat "$T/$name.out" "$T/$name.log" 2>/dev/null
	return 1
}

# curl_proxy PORT URL [curl args]: from the workload through the guard on
# 10.77.0.1:PORT. Prints "code=NNN connect=NNN reason=R" and the body to
# $T/body.
curl_proxy() {
	port=$1; url=$2; shift 2
	inwl curl -sS -v --max-time 15 -o "$T/body" -x "http://10.77.0.1:$port" \
	    -w 'code=%{http_code} connect=%{http_connect}' "$@" "$url" \
	    2>"$T/curl.err"
	r=$(sed -n 's/^< X-Egress-Guard-Reason: \([a-z_]*\).*/\1/p' "$T/curl.err" | tr -d '\r' | head -n1)
	echo " reason=${r:--}"
}

# raw PORT TEXT [rawreq args]: exact bytes from the workload to the guard.
raw() {
	port=$1; shift
	inwl python3 "$TI/rawreq.py" 10.77.0.1 "$port" --send "$@"
}

# log_empty NAME: the listener NAME received no connection and no byte.
log_empty() { [ ! -s "$T/$1.log" ]; }

# queried NAME: the DNS server saw a query for NAME.
queried() { grep -q "^$1 " "$T/queries.log" 2>/dev/null; }

# json_lines_valid FILE: every line of FILE is one JSON object.
json_lines_valid() {
	python3 -c '
import json, sys
for n, line in enumerate(open(sys.argv[1], encoding="ascii"), 1):
    o = json.loads(line)
    assert isinstance(o, dict), n
' "$1"
}

# last_decision LOG HOST: the reason of the last decision for HOST.
last_decision() {
	python3 -c '
import json, sys
r = "-"
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") == "decision" and o.get("host") == sys.argv[2]:
        r = o["decision"] + ":" + o["reason"]
print(r)
' "$1" "$2"
}
