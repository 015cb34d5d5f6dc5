# make sanitize: the whole project (both binaries and every unit test)
# built with clang, AddressSanitizer (LeakSanitizer included) and
# UndefinedBehaviorSanitizer into $(SAN_BUILD)/, then the whole suite run
# against those binaries (unit tests, then the namespace integration tests,
# whose scripts take the binaries from $BUILD).
#
# Every instrumented process, the daemons included, writes any report to
# its own file $(SAN_BUILD)/asan/{asan,ubsan}.PID instead of a stderr that
# a test may discard; the directory is world-writable because the guard
# may have dropped to --user nobody when it exits. The target fails if the
# suite fails or if any report file exists, and prints them. LeakSanitizer
# runs when a process exits, so the guard must exit on SIGTERM (it does:
# drain, exit 0); a process killed with SIGKILL is not checked for leaks.

SAN_BUILD  ?= build-asan
SAN_CC     ?= clang
SAN_FLAGS   = -fsanitize=address,undefined -fno-sanitize-recover=undefined
SAN_REPORTS = $(abspath $(SAN_BUILD))/asan
SAN_UNITS   = $(UNIT_SRCS:tests/unit/%.c=$(SAN_BUILD)/tests/%)
SAN_ENV     = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:log_path=$(SAN_REPORTS)/asan \
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(SAN_REPORTS)/ubsan

# The build variables go to the sub-make and, through the environment
# (the Makefile reads them with ?=), to any make a test runs itself
# (conformance mutants, bench tools), so nothing in $(SAN_BUILD) is ever
# rebuilt without the sanitizers. -U_FORTIFY_SOURCE (after the Makefile's
# -D) keeps glibc's __*_chk wrappers from hiding accesses from ASan; -pie
# and the other hardening flags stay.
SAN_VARS    = BUILD=$(SAN_BUILD) CC=$(SAN_CC) \
              OPT='-O1 -g -fno-omit-frame-pointer $(SAN_FLAGS)' \
              CFLAGS='-U_FORTIFY_SOURCE' LDFLAGS='$(SAN_FLAGS)'

.PHONY: sanitize sanitize-build
sanitize-build: deps
	$(Q)env $(SAN_VARS) $(MAKE) --no-print-directory all $(SAN_UNITS)

# Checks that cannot hold for an instrumented binary, whatever the code:
# deploy_test compares the shared libraries the binary loads with the
# container's package list, and the ASan runtime adds libgcc_s; workers_test
# starts a guard at RLIMIT_NPROC 1, where LeakSanitizer cannot start the
# task it checks leaks from and turns the expected exit 2 into 1. (faults_test's
# RSS bounds skip themselves under a sanitizer: rss_check.) Their FAIL
# lines are shown but do not fail this target.
SAN_XFAIL ?= dockerfile_runtime_packages_are_exactly_what_the_binaries_load \
             hostile_worker_thread_refused_is_a_failed_start

# A report is a finding, except LeakSanitizer's "fatal error" alone: it
# means no leak check could run because the process was being ptraced
# (deploy_test runs the guard under strace to list its system calls).
sanitize: sanitize-build
	$(Q)rm -rf $(SAN_REPORTS) && mkdir -p $(SAN_REPORTS) && chmod 1777 $(SAN_REPORTS)
	$(Q)env $(SAN_VARS) $(SAN_ENV) EG_SKIP_FUZZ=1 \
	    sh tests/run $(SAN_UNITS) | tee $(SAN_BUILD)/sanitize-tests.log; \
	rc=0; \
	bad=$$(grep '^FAIL ' $(SAN_BUILD)/sanitize-tests.log | \
	    grep -v -E '^FAIL ($(subst $(eval) ,|,$(strip $(SAN_XFAIL))))([: ]|$$)'); \
	if [ -n "$$bad" ]; then echo "sanitize: failing tests:"; echo "$$bad"; rc=1; fi; \
	n=0; for f in $(SAN_REPORTS)/*; do \
		[ -f "$$f" ] || continue; \
		if ! grep -q -E 'ERROR:|runtime error|SUMMARY:' "$$f" && \
		    grep -q 'LeakSanitizer has encountered a fatal error' "$$f"; then \
			echo "sanitize: $$f: no leak check (process under ptrace)"; \
			continue; \
		fi; \
		echo "==== $$f"; cat "$$f"; n=$$((n + 1)); rc=1; \
	done; \
	if [ "$$n" -eq 0 ]; then echo "sanitize: no ASan/LSan/UBSan finding"; \
	else echo "sanitize: $$n sanitizer report(s) above, in $(SAN_REPORTS)"; fi; \
	exit $$rc
