# `make deb`: $(BUILD)/egress-guard_VERSION_ARCH.deb (scripts/mkdeb.sh;
# dpkg-dev computes its dependencies). `make deb-lint`: lintian on it.
EG_VERSION_STR = $(shell sed -n 's/^\#define EG_VERSION "\(.*\)"/\1/p' guard/guard.h)
DEB = $(BUILD)/egress-guard_$(EG_VERSION_STR)_$(shell dpkg --print-architecture 2>/dev/null).deb

.PHONY: deb deb-lint
deb: $(BINS)
	$(Q)sh scripts/mkdeb.sh $(BUILD) $(BUILD) $(EG_VERSION_STR)

deb-lint: deb
	lintian --fail-on error --display-info $(DEB)
