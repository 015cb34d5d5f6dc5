# egress-guard — plain Makefile. `make` builds, `make test` runs every test,
# `make run` starts the guard with the example policy.

CC       ?= cc
PKG      ?= pkg-config
BUILD    ?= build
PREFIX   ?= /usr/local
V        ?= 0

LIBS_PKG  = libevent libcares openssl libnftnl libmnl jansson
TEST_PKG  = cmocka

WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wcast-qual -Wsign-compare -Wformat=2 -Werror
HARDEN   = -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIE
OPT      ?= -O2 -g
CFLAGS   ?=
LDFLAGS  ?=
REVISION ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
EG_CFLAGS  = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(HARDEN) -I. -MMD -MP \
             $(shell $(PKG) --cflags $(LIBS_PKG) 2>/dev/null) $(CFLAGS)
EG_LDFLAGS = -pie -Wl,-z,relro,-z,now -Wl,--as-needed $(LDFLAGS)
EG_LIBS    = $(shell $(PKG) --libs $(LIBS_PKG) 2>/dev/null)
TEST_LIBS  = $(shell $(PKG) --libs $(TEST_PKG) 2>/dev/null)

ifeq ($(V),0)
Q = @
say = @printf '  %-6s %s\n' $(1) $(2);
else
Q =
say =
endif

# Every .c under the module folders is library code except the two mains:
# a new module needs no Makefile edit.
MODULES  = util proto policy resolver guard plane conform nft ctl
MAINS    = guard/main.c ctl/main.c
LIB_SRCS = $(filter-out $(MAINS),$(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
LIB_OBJS = $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
LIB      = $(BUILD)/libegress.a
# The conformance suites, built into the library as const data
# (conform/suiteblob.h): a receipt is graded by the suite its digest names.
SUITES   = $(sort $(wildcard conform/suites/*.json))
GEN_OBJ  = $(BUILD)/obj/gen/suites.o

# A mutant build (mk/conformance.mk sets MUTANT_BASE) recompiles only the
# sources that name a macro its flags define (or EG_MUTANT_TAG, which
# util/mutant.h derives from them), and takes every other object from the
# normal build in MUTANT_BASE: a mutant costs two or three compiles, not
# the fifteen of every source naming any mutant. A header that names a
# mutant would make every includer differ, so it stops the build instead.
ifdef MUTANT_BASE
ifneq ($(shell grep -l EG_MUTANT $(filter-out util/mutant.h,$(foreach m,$(MODULES),$(wildcard $(m)/*.h)))),)
$(error a header other than util/mutant.h names EG_MUTANT: mutant builds would be stale)
endif
MUTANT_DEFS := $(foreach d,$(filter -D%,$(CFLAGS)),$(firstword $(subst =, ,$(d:-D%=%)))) EG_MUTANT_TAG
MUTANT_SRCS := $(shell grep -l -w $(addprefix -e ,$(MUTANT_DEFS)) $(LIB_SRCS))
LIB_OBJS := $(foreach s,$(LIB_SRCS),$(if $(filter $(s),$(MUTANT_SRCS)),$(BUILD)/obj/$(s:.c=.o),$(MUTANT_BASE)/obj/$(s:.c=.o)))
GEN_OBJ  := $(MUTANT_BASE)/obj/gen/suites.o
endif

UNIT_SRCS = $(wildcard tests/unit/test_*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%) $(BUILD)/tests/test_dest_scalar

BINS = $(BUILD)/egress-guard $(BUILD)/egress-guardctl

.PHONY: all deps test unit integration run clean check install
all: deps $(BINS)

# Every compile and link waits for the packages (order-only: deps runs
# first under make -j, and being phony it never makes a target stale).
deps:
	$(Q)sh scripts/deps.sh

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(EG_CFLAGS) -c -o $@ $<

# The revision is a file rewritten only when it changes, and the one object
# that reports it (guard.c for /v1/status, main.c for --version) depends on it, so a
# commit rebuilds that object and nothing else.
$(BUILD)/revision: FORCE | deps
	@mkdir -p $(dir $@)
	@echo '$(REVISION)' | cmp -s - $@ || echo '$(REVISION)' >$@

$(BUILD)/obj/guard/guard.o $(BUILD)/obj/guard/main.o: EG_CFLAGS += -DEG_REVISION='"$(REVISION)"'
$(BUILD)/obj/guard/guard.o $(BUILD)/obj/guard/main.o: $(BUILD)/revision

# The list of suites is a file rewritten only when it changes, so that a
# suite added or removed regenerates the table, and nothing else does.
$(BUILD)/gen/suites.list: FORCE | deps
	@mkdir -p $(dir $@)
	@echo '$(SUITES)' | cmp -s - $@ || echo '$(SUITES)' >$@

$(BUILD)/gen/suites.c: $(BUILD)/gen/suites.list $(SUITES) scripts/embed-suites.sh
	$(call say,GEN,$@)sh scripts/embed-suites.sh $@ $(SUITES)

$(BUILD)/obj/gen/suites.o: $(BUILD)/gen/suites.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(EG_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS) $(GEN_OBJ)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

$(BUILD)/egress-guard: $(BUILD)/obj/guard/main.o $(LIB)
	$(call say,LD,$@)$(CC) $(EG_LDFLAGS) -o $@ $^ $(EG_LIBS)

$(BUILD)/egress-guardctl: $(BUILD)/obj/ctl/main.o $(LIB)
	$(call say,LD,$@)$(CC) $(EG_LDFLAGS) -o $@ $^ $(EG_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(EG_LDFLAGS) -o $@ $^ $(TEST_LIBS) $(EG_LIBS)

# test_plane swaps a symlink between a trust key's check and its read.
$(BUILD)/tests/test_plane: EG_LDFLAGS += -Wl,--wrap=safepath_open_path

# The destination tests once more against the portable one-byte-at-a-time
# name check, which x86-64 builds otherwise never run (policy/dest.c).
$(BUILD)/obj/tests/dest_scalar.o: policy/dest.c | deps
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(EG_CFLAGS) -DEG_DEST_SCALAR -c -o $@ $<

$(BUILD)/tests/test_dest_scalar: $(BUILD)/obj/tests/unit/test_dest.o $(BUILD)/obj/tests/dest_scalar.o $(LIB)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(EG_LDFLAGS) -o $@ $^ $(TEST_LIBS) $(EG_LIBS)

unit: all $(UNIT_BINS)
	$(Q)BUILD=$(BUILD) EG_SKIP_INTEGRATION=1 sh tests/run $(UNIT_BINS)

integration: all
	$(Q)BUILD=$(BUILD) sh tests/run

# The one test command: unit tests, then the namespace integration tests
# (root needed). tests/run prints the closing "N passed, N failed" line.
test: all $(UNIT_BINS)
	$(Q)BUILD=$(BUILD) sh tests/run $(UNIT_BINS)

run: all
	@mkdir -p -m 0700 $(BUILD)/state
	$(BUILD)/egress-guard run --listen 127.0.0.1:3128 --policy examples/policy.json \
	    --control $(BUILD)/control.sock --state-dir $(BUILD)/state

# cppcheck skips system headers, but <sys/queue.h> is macros that declare
# members (TAILQ_HEAD): without it those lines are syntax errors to it.
QUEUE_H = $(firstword $(wildcard /usr/include/*/sys/queue.h /usr/include/sys/queue.h))
check:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	  --suppress=missingIncludeSystem --include=$(QUEUE_H) -I. $(MODULES)

# Installs only what is built and shipped; it does not run scripts/deps.sh
# (no test tools on an install target such as the container image). The
# unit's ExecStart is rewritten to $(BINDIR).
BINDIR        ?= $(PREFIX)/bin
MANDIR        ?= $(PREFIX)/share/man
DOCDIR        ?= $(PREFIX)/share/doc/egress-guard
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

install: $(BINS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(wildcard docs/*.8) $(DESTDIR)$(MANDIR)/man8/
	$(if $(wildcard docs/*.5),install -m 0644 $(wildcard docs/*.5) $(DESTDIR)$(MANDIR)/man5/)
	install -m 0644 README.md docs/reference.md docs/deploy.md docs/nft.md docs/design.md \
	    docs/receipts.md $(DESTDIR)$(DOCDIR)/
	sed 's|/usr/local/bin/egress-guard|$(BINDIR)/egress-guard|g' \
	    container/egress-guard.service >$(DESTDIR)$(SYSTEMDUNITDIR)/egress-guard.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/egress-guard.service

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
.SECONDARY:

# Further targets (fuzz, sanitize, conformance, bench, …) live one file
# each in mk/, so that each stays small and readable.
include $(wildcard mk/*.mk)

.PHONY: FORCE
FORCE:
