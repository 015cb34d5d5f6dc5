# The conformance matrix (tests/conformance/matrix.sh) and its mutation
# check: the matrix must turn a fact false when the guard is built, or
# deployed, with that fact's mechanism removed. A matrix that stays green
# against a mutant is a bug in the matrix.

MUTANT_FLAGS_no_classify = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_NO_CLASSIFY
MUTANT_FLAGS_no_recheck  = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_NO_RECHECK

.PHONY: conformance conformance-mutants
# The matrix, then a receipt for this exact build, signed by a local
# attester key made for the purpose, and the grade it earns. The target
# fails when the matrix does, and when no authentic receipt results (sign
# refuses a binary that changed since the matrix ran; verify exits
# non-zero on anything not authentic).
CONF = $(BUILD)/conformance
conformance: all
	$(Q)BUILD=$(BUILD) bash tests/conformance/matrix.sh $(CONF); rc=$$?; \
	mkdir -p $(CONF)/attesters && chmod 0700 $(CONF)/attesters; \
	[ -f $(CONF)/attesters/local.pem ] || \
	    $(BUILD)/egress-guardctl keygen --out $(CONF)/attesters/local.pem 2>/dev/null; \
	$(BUILD)/egress-guardctl receipt sign $(CONF)/report.json \
	    --key $(CONF)/attesters/local.pem >$(CONF)/receipt.json && \
	printf 'grade: ' && $(BUILD)/egress-guardctl receipt verify $(CONF)/receipt.json \
	    --attesters $(CONF)/attesters || rc=1; exit $$rc

$(BUILD)/mutant-%/egress-guard: FORCE
	$(Q)$(MAKE) -s BUILD=$(BUILD)/mutant-$* CFLAGS='$(MUTANT_FLAGS_$*)' \
	    $(BUILD)/mutant-$*/egress-guard $(BUILD)/mutant-$*/egress-guardctl


# mutant-run MUTANT_BUILD FACT [ENV]: the matrix over FACT must fail it.
define mutant-run
	$(Q)out=$(BUILD)/conformance/mutant-$(2); mkdir -p $$out; \
	if BUILD=$(1) EG_CONF_FACTS=$(2) $(3) bash tests/conformance/matrix.sh $$out \
	    >$$out/matrix.log 2>&1; then \
		echo "FAIL mutant $(4): the matrix stayed green"; exit 1; \
	fi; \
	if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["facts"][sys.argv[2]] is False else 1)' \
	    $$out/report.json $(2); then \
		echo "PASS mutant $(4): $(2) turned false"; \
	else echo "FAIL mutant $(4): no report or fact not false"; exit 1; fi
endef

conformance-mutants: all $(BUILD)/mutant-no_classify/egress-guard $(BUILD)/mutant-no_recheck/egress-guard
	$(call mutant-run,$(BUILD)/mutant-no_classify,connect_time_public_address,,no_classify)
	$(call mutant-run,$(BUILD)/mutant-no_recheck,redirect_recheck,,no_recheck)
	$(call mutant-run,$(BUILD),default_deny,EG_CONF_SKIP_NFT=1,skip_nft)
