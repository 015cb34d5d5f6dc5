# make workers-mutant: the negative control of the push-ordering contract
# (tests/integration/workers_test.sh, 4 workers). Two test builds into
# $(BUILD)-wdelay and $(BUILD)-wmutant, both with EG_TEST_WORKER_DELAY_MS
# honoured (workers 1..3 read their mailbox 300 ms late while they go on
# serving): the real guard must pass, the one that answers a push before
# every worker acked (EG_MUTANT_NO_POLICY_ACK) must fail. Both builds
# recompile only the sources that name a mutant (MUTANT_BASE, see the
# Makefile). About 3 minutes.

WDELAY_BUILD  = $(BUILD)/mutant-wdelay
WMUTANT_BUILD = $(BUILD)/mutant-no_policy_ack

.PHONY: workers-mutant
workers-mutant: all
	$(Q)$(MAKE) -s BUILD=$(WDELAY_BUILD) MUTANT_BASE=$(BUILD) \
	    CFLAGS='-DEG_TEST_MUTANT_BUILD' $(WDELAY_BUILD)/egress-guard $(WDELAY_BUILD)/egress-guardctl
	$(Q)$(MAKE) -s BUILD=$(WMUTANT_BUILD) MUTANT_BASE=$(BUILD) \
	    CFLAGS='-DEG_TEST_MUTANT_BUILD -DEG_MUTANT_NO_POLICY_ACK' \
	    $(WMUTANT_BUILD)/egress-guard $(WMUTANT_BUILD)/egress-guardctl
	$(Q)EG_WORKERS_TEST=4 EG_TEST_WORKER_DELAY_MS=300 BUILD=$(WDELAY_BUILD) \
	    bash tests/integration/workers_test.sh | grep push_answered | \
	    grep -q '^PASS' || { echo "FAIL workers-mutant: the real guard failed"; exit 1; }
	$(Q)EG_WORKERS_TEST=4 EG_TEST_WORKER_DELAY_MS=300 BUILD=$(WMUTANT_BUILD) \
	    bash tests/integration/workers_test.sh | grep push_answered | \
	    grep -q '^FAIL' || { echo "FAIL workers-mutant: the mutant was not caught"; exit 1; }
	@echo "PASS workers-mutant: answer-before-acks caught, the real guard passes"

# The negative control of the handoff between workers (guard/handoff.h):
# every connection stays on the worker whose listener the kernel picked.
MUTANT_FLAGS_no_handoff = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_NO_HANDOFF
