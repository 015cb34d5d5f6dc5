# The benchmark (bench/): a load generator, an upstream target (both on
# libevent), a small UDP DNS server and the splice-only relay that the
# throughput sections use as a yardstick (bench/floor), built with the project's compiler
# and flags into $(BUILD)/bench/.
#
#   make bench         the full benchmark against Squid and tinyproxy
#                      (bench/run; minutes; installs squid and tinyproxy as
#                      root when missing) and its table on stdout
#   make bench-quick   the few-second smoke run (guard and direct only)
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

.PHONY: bench bench-quick bench-bins
bench-bins: $(BENCH_BINS)

bench: all
	$(Q)BUILD=$(BUILD) bash bench/run

bench-quick: all
	$(Q)BUILD=$(BUILD) bash bench/run --quick

-include $(wildcard $(BENCH_DIR)/*.d)
