# Waiting on an asynchronous writer, shared by the integration tests (POSIX
# sh: nft_test.sh runs under sh, the others source it through lib.sh).

# lines FILE: how many lines FILE holds (0 when it does not exist yet).
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

# wait_lines FILE N: up to 3 s for FILE to hold at least N lines; the
# caller then compares the count exactly. Fails when it never does.
wait_lines() {
	_w=0
	while [ "$(lines "$1")" -lt "$2" ]; do
		[ "$_w" -ge 30 ] && return 1
		sleep 0.1
		_w=$((_w + 1))
	done
	return 0
}
