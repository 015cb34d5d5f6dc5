# make valgrind: integration tests with every guard that start_guard
# starts (tests/integration/lib.sh) running under valgrind's memcheck, via
# EG_WRAP. One log per guard process in $(VG_LOGS)/guard.PID.log.
#
# Gates on valgrind alone: each log must end with "ERROR SUMMARY: 0
# errors" (definite leaks count as errors here), so a log without that
# line (a guard that did not exit on SIGTERM and was killed) fails too.
# The tests' own PASS/FAIL lines are reported but do not gate: under
# valgrind the guard is ~20x slower and some timing checks (header and idle
# timeouts measured in seconds) may miss. VG_TESTS picks the scripts.

VG_LOGS  = $(abspath $(BUILD))/valgrind
VG_TESTS ?= guard protocols
VG_WRAP  = valgrind --leak-check=full --errors-for-leak-kinds=definite \
           --show-leak-kinds=definite --error-exitcode=99 --num-callers=30 \
           --log-file=$(VG_LOGS)/guard.%p.log

.PHONY: valgrind
valgrind: all
	$(Q)command -v valgrind >/dev/null || \
	    { echo "valgrind missing: apt-get install -y valgrind"; exit 1; }
	$(Q)[ "$$(id -u)" -eq 0 ] || { echo "valgrind: the integration tests need root"; exit 1; }
	$(Q)rm -rf $(VG_LOGS) && mkdir -p $(VG_LOGS) && chmod 1777 $(VG_LOGS)
	$(Q)for t in $(VG_TESTS); do \
		echo "---- $${t}_test (guard under valgrind)"; \
		BUILD=$(BUILD) EG_WRAP='$(VG_WRAP)' timeout -k 10 1800 \
		    bash tests/integration/$${t}_test.sh >$(VG_LOGS)/$$t.out 2>&1; \
		echo "$${t}_test: $$(grep -c '^PASS ' $(VG_LOGS)/$$t.out) passed," \
		    "$$(grep -c '^FAIL ' $(VG_LOGS)/$$t.out) failed (not gating)"; \
		grep '^FAIL ' $(VG_LOGS)/$$t.out | sed 's/^/  /'; \
	done; \
	rc=0; n=0; \
	for f in $(VG_LOGS)/guard.*.log; do \
		[ -f "$$f" ] || continue; n=$$((n + 1)); \
		if ! grep -q 'ERROR SUMMARY: 0 errors' "$$f"; then \
			echo "==== $$f"; cat "$$f"; rc=1; \
		fi; \
	done; \
	if [ "$$n" -eq 0 ]; then echo "valgrind: no guard log written"; rc=1; fi; \
	if [ "$$rc" -eq 0 ]; then \
		echo "valgrind: $$n guard process(es), 0 errors, 0 bytes definitely lost"; \
	else echo "valgrind: errors or leaks above (logs in $(VG_LOGS))"; fi; \
	exit $$rc
