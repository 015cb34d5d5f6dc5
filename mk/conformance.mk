# The conformance matrix (tests/conformance/matrix.sh) and its mutation
# check: the matrix must turn a fact false when the guard is built, or
# deployed, with that fact's mechanism removed. A matrix that stays green
# against a mutant is a bug in the matrix.

MUTANT_FLAGS_no_classify = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_NO_CLASSIFY
MUTANT_FLAGS_no_recheck  = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_NO_RECHECK
MUTANT_FLAGS_lenient_sni = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_LENIENT_SNI
MUTANT_FLAGS_range_first = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_RANGE_FIRST
MUTANT_FLAGS_early_body  = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_EARLY_BODY
MUTANT_FLAGS_trust_dialled = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_TRUST_DIALLED
# Classification skipped on the SOCKS5 path only (proxy.c).
MUTANT_FLAGS_socks_no_classify = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_SOCKS_NO_CLASSIFY
# nft apply --transparent-in forwards instead of redirecting (nfttransp.c).
MUTANT_FLAGS_nft_forward = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_NFT_FORWARD
# nft tenants without the anti-spoofing drop (nfttenant.c, nfttext.c): the tenants
# target's (below); also BUILD=$(BUILD)/mutant-no_antispoof
# tests/integration/nft_tenants_test.sh must fail
# hostile_spoofed_source_dropped (the script builds it itself).
MUTANT_FLAGS_no_antispoof = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_NO_ANTISPOOF
# Not in the matrix: BUILD=$(BUILD)/mutant-dns_forward tests/integration/dns_listen_test.sh
# must fail denied_name_never_queried_upstream (guard/dnsd.c).
MUTANT_FLAGS_dns_forward = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_DNS_FORWARD
# Issue 33's tenants target (tests/conformance/tenants.sh), with
# no_antispoof above: the guard's tenant taken from the connection's
# source address, its listeners not bound to their links (guard/).
MUTANT_FLAGS_tenant_by_source = -DEG_TEST_MUTANT_BUILD -DEG_MUTANT_TENANT_BY_SOURCE
# The range-first mutant is also the matrix's control guard for the
# connect_time_public_address cases under --allow-range ::/0.
RANGE_FIRST_BIN = $(BUILD)/mutant-range_first/egress-guard

.PHONY: conformance conformance-mutants conformance-mutants-harness conformance-mutants-more conformance-mutants-nft conformance-docker \
    conformance-mutants-docker conformance-tenants conformance-mutants-tenants
# The matrix, then a receipt for this exact build, signed by a local
# attester key made for the purpose, and the grade it earns. The target
# fails when the matrix does, and when no authentic receipt results (sign
# refuses a binary that changed since the matrix ran; verify exits
# non-zero on anything not authentic).
CONF = $(BUILD)/conformance
# sign-receipt DIR [VERIFY ARGS] [NAME]: DIR/NAME.json (default report)
# → DIR/receipt-NAME.json (DIR/receipt.json for report), signed by the
# local attester, then its grade; rc=1 unless it is authentic.
define sign-receipt
	mkdir -p $(CONF)/attesters && chmod 0700 $(CONF)/attesters; \
	[ -f $(CONF)/attesters/local.pem ] || \
	    $(BUILD)/egress-guardctl keygen --out $(CONF)/attesters/local.pem 2>/dev/null; \
	in=$(1)/$(or $(3),report).json; out=$(1)/receipt$(if $(3),-$(patsubst report-%,%,$(3))).json; \
	$(BUILD)/egress-guardctl receipt sign $$in \
	    --key $(CONF)/attesters/local.pem >$$out && \
	printf 'grade: ' && $(BUILD)/egress-guardctl receipt verify $$out \
	    --attesters $(CONF)/attesters $(2) || rc=1
endef
# The lab run writes two reports: the lab suite's and the transparent
# path's (its tp-* cases, graded by the transparent suite); the tenants
# target a third (report-tenants.json, suite tenants: one guard serving
# three sandboxes).
conformance: all $(RANGE_FIRST_BIN)
	$(Q)BUILD=$(BUILD) EG_CONF_RANGE_FIRST_BIN=$(abspath $(RANGE_FIRST_BIN)) \
	    bash tests/conformance/matrix.sh $(CONF); rc=$$?; \
	BUILD=$(BUILD) EG_CONF_TARGET=tenants bash tests/conformance/matrix.sh $(CONF) || rc=1; \
	$(call sign-receipt,$(CONF)); \
	$(call sign-receipt,$(CONF),,report-transparent); \
	$(call sign-receipt,$(CONF),,report-tenants); exit $$rc

# The matrix against the guard as Docker deploys it (layout (a),
# tests/conformance/docker.sh), on docker_test.sh's own dockerd and image
# (built from container/Dockerfile; its cache makes a re-run a few
# minutes). The receipt certifies the guard binary copied out of the image
# and names the engine, the layout and the image (its "deployment").
CONF_DOCKER = $(BUILD)/conformance-docker
conformance-docker: all
	$(Q)mkdir -p $(CONF_DOCKER); EG_DOCKER_PARTS=matrix EG_DOCKER_CONF_OUT=$(abspath $(CONF_DOCKER)) \
	    BUILD=$(BUILD) bash tests/integration/docker_test.sh; rc=$$?; \
	$(call sign-receipt,$(CONF_DOCKER),--binary $(CONF_DOCKER)/image/egress-guard); exit $$rc

$(BUILD)/mutant-%/egress-guard: FORCE
	$(Q)$(MAKE) -s BUILD=$(BUILD)/mutant-$* MUTANT_BASE=$(BUILD) CFLAGS='$(MUTANT_FLAGS_$*)' \
	    $(BUILD)/mutant-$*/egress-guard $(BUILD)/mutant-$*/egress-guardctl


# mutant-check REPORT FACT CASES MUTANT NAME: REPORT has FACT false;
# with CASES (an id prefix, e.g. tp- for the transparent path), one of
# those cases is among the failed ones; its version says -MUTANT exactly
# when MUTANT is 1. (One shell command, for a recipe line.)
define mutant-check
	if python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); p=sys.argv[3]; \
	    sys.exit(0 if r["facts"][sys.argv[2]] is False and \
	    ("-MUTANT" in r["version"]) == (sys.argv[4] == "1") and \
	    (not p or any(c["id"].startswith(p) and c["verdict"] == "fail" for c in r["cases"])) else 1)' \
	    $(1) $(2) '$(3)' $(4); then \
		echo "PASS mutant $(5): $(2) turned false$(if $(3), ($(3)* cases too))"; \
	else echo "FAIL mutant $(5): no report, fact not false, or version wrong about -MUTANT"; exit 1; fi
endef
# mutant-run MUTANT_BUILD FACT [ENV] NAME [CASES]: the matrix over FACT
# must fail it (mutant-check). The report's version must say -MUTANT
# exactly when MUTANT_BUILD is not $(BUILD).
define mutant-run
	$(Q)out=$(BUILD)/conformance/mutant-$(2); mkdir -p $$out; \
	if BUILD=$(1) EG_CONF_FACTS=$(2) EG_CONF_RANGE_FIRST_BIN=$(abspath $(RANGE_FIRST_BIN)) \
	    $(3) bash tests/conformance/matrix.sh $$out \
	    >$$out/matrix.log 2>&1; then \
		echo "FAIL mutant $(4): the matrix stayed green"; exit 1; \
	fi; \
	$(call mutant-check,$$out/report.json,$(2),$(5),$(if $(filter $(BUILD),$(1)),0,1),$(4))
endef

# The tenants target's two mutants in ONE topology run (tenants.sh with
# EG_CONF_TENANT_MUTANTS=1 swaps the guard under test within it):
# tenant_by_source must turn exact_destination_match false (its cross-
# tenant identity cases, xt-edm-*), no_antispoof default_deny (the
# spoofed connection, xt-dd-01).
define tenants-mutants-run
	$(Q)out=$(BUILD)/conformance/mutant-tenants; mkdir -p $$out; rm -f $$out/report*.json; \
	BUILD=$(BUILD) EG_CONF_TARGET=tenants EG_CONF_TENANT_MUTANTS=1 \
	    bash tests/conformance/matrix.sh $$out >$$out/matrix.log 2>&1; \
	$(call mutant-check,$$out/report-tenants-tenant_by_source.json,exact_destination_match,xt-edm-0,1,tenant_by_source); \
	$(call mutant-check,$$out/report-tenants-no_antispoof.json,default_deny,xt-dd-01,1,no_antispoof)
endef

# The harness's own mutant (one matrix run over every fact, about as long
# as the matrix): the pretend internet's listeners and the control
# resolver killed once up, the control guards never started
# (EG_CONF_HARNESS_MUTANT=dead_controls). Every fact of both the lab and
# the transparent report must turn false, no case whose control needs a
# live listener or resolver may pass, and a sample of cases whose probe
# the mutant leaves alone (their control is the control guard or a killed
# listener) must be inconclusive: neither pass nor a fail of the guard.
DEAD_CONTROL_CASES = edm-01 edm-04 edm-20 ctpa-01 ctpa-07 ctpa-20 as-04 dd-01 tp-edm-06 tp-ctpa-01 tp-dd-01
define harness-mutant-run
	$(Q)out=$(BUILD)/conformance/mutant-dead_controls; mkdir -p $$out; rm -f $$out/report*.json; \
	if BUILD=$(BUILD) EG_CONF_HARNESS_MUTANT=dead_controls \
	    EG_CONF_RANGE_FIRST_BIN=$(abspath $(RANGE_FIRST_BIN)) bash tests/conformance/matrix.sh $$out \
	    >$$out/matrix.log 2>&1; then \
		echo "FAIL harness mutant dead_controls: the matrix stayed green"; exit 1; \
	fi; \
	if python3 tests/conformance/dead_check.py $$out/report.json conform/suites/lab.json \
	    $$out/report-transparent.json conform/suites/transparent.json -- $(DEAD_CONTROL_CASES) \
	    >$$out/check.log 2>&1; then \
		echo "PASS harness mutant dead_controls: every fact false, no dead control passed"; \
	else echo "FAIL harness mutant dead_controls: $$(grep -m3 '^dead_controls' $$out/check.log | tr '\n' ' ')"; exit 1; fi
endef

# The tenants target alone (its report and receipt in $(CONF)), and its
# two mutants alone.
conformance-tenants: all
	$(Q)BUILD=$(BUILD) EG_CONF_TARGET=tenants bash tests/conformance/matrix.sh $(CONF); rc=$$?; \
	$(call sign-receipt,$(CONF),,report-tenants); exit $$rc
conformance-mutants-tenants: all $(BUILD)/mutant-tenant_by_source/egress-guard $(BUILD)/mutant-no_antispoof/egress-guard
	$(call tenants-mutants-run)

# The harness mutant alone.
conformance-mutants-harness: all $(RANGE_FIRST_BIN)
	$(call harness-mutant-run)

# conformance-mutants (make test runs it): one mutant per fact of the
# transparent path and of the deploy, each made to fail its own cases,
# the tenants target's two, and the harness's dead_controls.
conformance-mutants: all $(BUILD)/mutant-no_classify/egress-guard $(BUILD)/mutant-no_recheck/egress-guard \
    $(BUILD)/mutant-nft_forward/egress-guard $(BUILD)/mutant-trust_dialled/egress-guard $(RANGE_FIRST_BIN) \
    $(BUILD)/mutant-tenant_by_source/egress-guard $(BUILD)/mutant-no_antispoof/egress-guard
	$(call harness-mutant-run)
	$(call tenants-mutants-run)
	$(call mutant-run,$(BUILD)/mutant-no_classify,connect_time_public_address,,no_classify,tp-ctpa)
	$(call mutant-run,$(BUILD)/mutant-no_recheck,redirect_recheck,,no_recheck,tp-rr)
	$(call mutant-run,$(BUILD),default_deny,EG_CONF_SKIP_NFT=1,skip_nft)
	$(call mutant-run,$(BUILD)/mutant-nft_forward,default_deny,,nft_forward,tp-dd)
	$(call mutant-run,$(BUILD)/mutant-trust_dialled,exact_destination_match,,trust_dialled,tp-edm)

# Four more, each about 45 s of matrix: not in make test, which must fit
# in 20 minutes on two cores. Their mechanisms keep negative controls in
# make test elsewhere: the allow-range rows in classify_test.sh and the
# matrix's own ctpa-20..27 controls (range_first is their control guard),
# the SNI gate in tls_differential_test.sh (--sni-check off), the
# kept-alive body in keepalive_test.sh.
conformance-mutants-more: all $(BUILD)/mutant-lenient_sni/egress-guard \
    $(BUILD)/mutant-early_body/egress-guard $(RANGE_FIRST_BIN) \
    $(BUILD)/mutant-socks_no_classify/egress-guard
	$(call mutant-run,$(BUILD)/mutant-range_first,connect_time_public_address,,range_first)
	$(call mutant-run,$(BUILD)/mutant-socks_no_classify,connect_time_public_address,,socks_no_classify,ctpa-3)
	$(call mutant-run,$(BUILD)/mutant-lenient_sni,exact_destination_match,,lenient_sni)
	$(call mutant-run,$(BUILD)/mutant-early_body,redirect_recheck,,early_body)

# The table without the rules for loopback DNS/DNAT, ND scope and source
# routing, uid exemption in the shared layout: dd-10..dd-15 must fail. A
# whole default_deny run (about a minute on a busy machine), so not part of
# conformance-mutants, which make test runs.
conformance-mutants-nft: all
	$(call mutant-run,$(BUILD),default_deny,EG_CONF_NFT_MUTANT=old_rules,nft_old_rules)

# docker-mutant-run FACT ENV NAME: the Docker target's matrix over FACT,
# deployed with ENV, must turn FACT false.
define docker-mutant-run
	$(Q)out=$(abspath $(CONF_DOCKER))/mutant-$(3); mkdir -p $$out; rm -f $$out/report.json; \
	EG_DOCKER_PARTS=matrix EG_DOCKER_CONF_OUT=$$out EG_CONF_FACTS=$(1) $(2) BUILD=$(BUILD) \
	    bash tests/integration/docker_test.sh >$$out/docker_test.log 2>&1; \
	if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["facts"][sys.argv[2]] is False else 1)' \
	    $$out/report.json $(1); then \
		echo "PASS docker mutant $(3): $(1) turned false"; \
	else echo "FAIL docker mutant $(3): no report or $(1) not false ($$out)"; exit 1; fi
endef

# The Docker target's own negative control (heavy: two daemon runs, so not
# in make test): the deploy with the holder's table deleted once it is up
# (EG_CONF_SKIP_NFT=1) must fail default_deny; the image with the no_classify guard over its own
# (a derived image: FROM it, the host-built mutant copied in) must fail
# connect_time_public_address.
conformance-mutants-docker: all $(BUILD)/mutant-no_classify/egress-guard
	$(call docker-mutant-run,default_deny,EG_CONF_SKIP_NFT=1,skip_nft)
	$(call docker-mutant-run,connect_time_public_address,EG_DOCKER_GUARD_BIN=$(abspath $(BUILD)/mutant-no_classify/egress-guard),no_classify)
