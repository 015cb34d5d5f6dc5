# libFuzzer harnesses, one per parser (tests/fuzz/fuzz_*.c).
#
#   make fuzz          builds every harness into $(BUILD)/fuzz/
#   make fuzz-smoke    builds them, then runs each for FUZZ_SMOKE_TIME
#                      seconds over a copy of its checked-in corpus
#                      (tests/fuzz/corpus/NAME, never written to); prints
#                      "PASS fuzz_x" / "FAIL fuzz_x" and fails on any crash
#
# The library sources are compiled again with clang and ASan/UBSan into a
# separate object dir, instrumented for coverage (-fsanitize=fuzzer-no-link);
# only the link of each harness brings in libFuzzer's main.

FUZZ_CC    ?= clang
FUZZ_DIR    = $(BUILD)/fuzz
FUZZ_OBJDIR = $(FUZZ_DIR)/obj
FUZZ_SAN    = -fsanitize=address,undefined -fno-sanitize-recover=undefined
# No _FORTIFY_SOURCE: its __*_chk wrappers would hide accesses from ASan.
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer $(WARN) \
              -I. -MMD -MP -DEG_REVISION='"fuzz"' \
              $(shell $(PKG) --cflags $(LIBS_PKG) 2>/dev/null) \
              $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_LIB    = $(FUZZ_DIR)/libegress-fuzz.a
FUZZ_LIB_OBJS = $(LIB_SRCS:%.c=$(FUZZ_OBJDIR)/%.o)
FUZZ_SRCS   = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES  = $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_BINS   = $(FUZZ_NAMES:%=$(FUZZ_DIR)/%)
FUZZ_SMOKE_TIME ?= 6
FUZZ_JOBS   ?= 2

.PHONY: fuzz fuzz-smoke
fuzz: $(FUZZ_BINS)

$(FUZZ_OBJDIR)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$<)$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

# The built-in suites (conform/suiteblob.h) are generated C: compiled here
# like the library, or every harness that reaches conform/suite.o would
# lack the table.
FUZZ_GEN_OBJ = $(FUZZ_OBJDIR)/gen/suites.o
$(FUZZ_GEN_OBJ): $(BUILD)/gen/suites.c
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$<)$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJS) $(FUZZ_GEN_OBJ)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(FUZZ_OBJDIR)/tests/fuzz/fuzz_%.o $(FUZZ_LIB)
	$(call say,LD,$@)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(EG_LIBS)

# The unit tests read by clang too, syntax only: gcc builds them for make
# test, clang for make sanitize, and clang warns where gcc does not
# (-Wstring-plus-int once broke make sanitize unseen). A stamp per file.
CLANG_TEST_OKS = $(UNIT_SRCS:tests/unit/%.c=$(FUZZ_OBJDIR)/tests/unit/%.clang-ok)
$(FUZZ_OBJDIR)/tests/unit/%.clang-ok: tests/unit/%.c | deps
	@mkdir -p $(dir $@)
	$(call say,CLANG,$<)$(FUZZ_CC) -std=c11 -D_GNU_SOURCE $(WARN) -I. \
	    $(shell $(PKG) --cflags $(LIBS_PKG) $(TEST_PKG) 2>/dev/null) \
	    -fsyntax-only $< && touch $@

fuzz-smoke: $(FUZZ_BINS) $(CLANG_TEST_OKS)
	$(Q)FUZZ_DIR=$(FUZZ_DIR) FUZZ_SMOKE_TIME=$(FUZZ_SMOKE_TIME) \
	    FUZZ_JOBS=$(FUZZ_JOBS) sh tests/fuzz/smoke.sh $(FUZZ_NAMES)

-include $(shell find $(FUZZ_OBJDIR) -name '*.d' 2>/dev/null)
