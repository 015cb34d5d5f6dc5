# The benchmark (bench/): a load generator, an upstream target (both on
# libevent), a small UDP DNS server and bench/floor, the relay that checks
# nothing (the yardstick: splice mode for throughput, --rate for CONNECT
# rate), built with the project's compiler and flags into $(BUILD)/bench/.
#
#   make bench         the full benchmark against Squid and tinyproxy
#                      (and dnsmasq for the DNS listener) (bench/run, 5
#                      repetitions, about 45 minutes on 2 CPUs; installs
#                      squid, tinyproxy and dnsmasq-base as root when
#                      missing) and its table on stdout
#   make bench-quick   the few-second smoke run (guard, direct, floor)
#   make bench-syscalls  system calls and loop passes per tunnel at c=1
#                      (bench/syscalls.sh: strace, perf stat)
#   make bench-stall-control  the swap section's stall reading against a
#                      guard whose loop waits for the push's check: it must
#                      see that stall (bench/stall-control, ~30 s)
#
# `make` builds the two tools too, so that `make test` can run the smoke
# run (tests/integration/bench_smoke_test.sh). No figure is ever asserted.

BENCH_DIR  = $(BUILD)/bench
BENCH_BINS = $(BENCH_DIR)/loadgen $(BENCH_DIR)/target $(BENCH_DIR)/dns $(BENCH_DIR)/floor
BENCH_LIBS = $(shell $(PKG) --libs libevent 2>/dev/null) -lm

all: $(BENCH_BINS)

# loadgen, target and floor share bench/common.c; dns stands alone.
$(BENCH_DIR)/loadgen $(BENCH_DIR)/target: $(BENCH_DIR)/%: bench/%.c bench/common.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(EG_CFLAGS) $(EG_LDFLAGS) -o $@ $< bench/common.c $(BENCH_LIBS)

$(BENCH_DIR)/floor: bench/floor.c bench/common.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(EG_CFLAGS) $(EG_LDFLAGS) -o $@ $< bench/common.c -lpthread

$(BENCH_DIR)/dns: bench/dns.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(EG_CFLAGS) $(EG_LDFLAGS) -o $@ $< $(BENCH_LIBS)

.PHONY: bench bench-quick bench-bins bench-syscalls bench-stall-control
bench-bins: $(BENCH_BINS)

bench: all
	$(Q)BUILD=$(BUILD) bash bench/run

bench-quick: all
	$(Q)BUILD=$(BUILD) bash bench/run --quick

bench-syscalls: all
	$(Q)BUILD=$(BUILD) bash bench/syscalls.sh

bench-stall-control: all $(BUILD)/mutant-sync_check/egress-guard
	$(Q)BUILD=$(BUILD) bash bench/stall-control

# The negative control of the swap section's stall reading (bench/stall.py):
# the loop that takes a push waits for its check. With --workers 1 that
# loop serves the echo tunnel too, so the check's time must show as a
# stall (make bench-stall-control).
MUTANT_FLAGS_sync_check = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_SYNC_CHECK

-include $(wildcard $(BENCH_DIR)/*.d)
