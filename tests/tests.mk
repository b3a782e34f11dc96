# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make test: unit tests (cmocka, no privileges), then integration tests (root, BPF).
# tests/unit/<folder>/test_<module>.c, in the folders of user/ (tests/unit/runtime/<name>/ too).
# Each builds into $(OUTPUT)/tests/unit/test_<module>: the names are unique, so the per-test rules
# of tests/unit/*.mk name a test without its folder, and a test moved to another folder keeps
# its rules.
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c tests/unit/*/*/test_*.c)
UNIT_BINS := $(addprefix $(OUTPUT)/tests/unit/,$(basename $(notdir $(UNIT_SRCS))))
ifneq ($(words $(UNIT_BINS)),$(words $(sort $(UNIT_BINS))))
$(error tests/unit: two tests of one name: $(sort $(notdir $(UNIT_SRCS))))
endif
vpath test_%.c $(sort $(dir $(UNIT_SRCS)))
TARGETS_DIR := $(OUTPUT)/tests/targets
TARGET_CFLAGS := -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -Wall

$(OUTPUT)/tests/unit $(TARGETS_DIR):
	$(Q)mkdir -p $@

# --as-needed: a test depends only on the libraries of the objects it uses (test_ksyms on no
# libcurl).
$(OUTPUT)/tests/unit/%: %.c $(LIB_AR) | $(OUTPUT)/tests/unit
	$(call msg,CC-TEST,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -Wl,--as-needed -Itests/unit -MMD -MP $< $(LIB_AR) $(LDLIBS) \
		$(shell $(PKG_CONFIG) --libs cmocka) -o $@

# Per-test fixtures and flags: tests/unit/*.mk (one file per feature keeps edits apart).
include $(wildcard tests/unit/*.mk)

# Test programs: tests/targets/*.mk add to TEST_TARGETS and give their rules, with these.
TARGETS_SRC := tests/targets
# TARGET_CFLAGS omits frame pointers on purpose (bpfprof must unwind with DWARF CFI); on top:
# no sibling calls (a tail call would replace its caller's frame) and unwind tables everywhere.
TARGET_CHAIN_CFLAGS := $(TARGET_CFLAGS) -fno-optimize-sibling-calls -fasynchronous-unwind-tables \
	-D_GNU_SOURCE
# Rebuilt when the shared header or the rules (flags) change.
TARGET_DEPS := $(TARGETS_SRC)/targets.h $(TARGETS_SRC)/targets.mk
include $(sort $(wildcard tests/targets/*.mk))

# The test programs alone (to run one tests/integration/run-*.sh by hand).
targets: $(TEST_TARGETS)

unit: $(UNIT_BINS)
	$(Q)tests/run-unit.sh $(UNIT_BINS)

# run-errors.sh renders the man page built next to the binary.
integration: $(MAN)
integration: $(BIN) $(TEST_TARGETS)
	$(Q)BPFPROF=$(abspath $(BIN)) TARGETS=$(abspath $(TARGETS_DIR)) \
		tests/run-integration.sh

# make check-includes: no include cycle among user/'s modules (a .c/.h pair); make
# check-functions: no function of user/**/*.c over 120 lines. Both print what they find
# (tools/check-includes.py, tools/check-functions.py); make test runs both first.
check-includes:
	$(Q)python3 tools/check-includes.py

check-functions:
	$(Q)python3 tools/check-functions.py

# make check-deploy: the deployment files (deploy/) checked offline (tests/deploy/check-deploy.sh;
# no BPF, no root; npm ci from the registry at its first run). .ci/run runs it after make test;
# the live part is tests/integration/run-deploy.sh, in make integration.
check-deploy: $(BIN)
	$(Q)BPFPROF=$(abspath $(BIN)) TARGETS=$(abspath $(TARGETS_DIR)) tests/deploy/check-deploy.sh

test: deps
	$(Q)$(MAKE) check-includes check-functions
	$(Q)$(MAKE) all
	$(Q)root=$$(bash tests/container.sh prepare) || { echo "make test: no container root:" \
		"test_python_lines reads no 3.14 or 3.15" >&2; [ "$${CI:-}" != true ] || exit 1; }; \
		$(MAKE) unit PY_LINES_ROOT="$$root"
	$(Q)$(MAKE) integration
	$(Q)$(if $(filter 1,$(SANITIZE)),$(MAKE) fuzz FUZZ_RUNS=$(FUZZ_TEST_RUNS) FUZZ_TIME=120)

-include $(UNIT_BINS:=.d)

# make core-check: every kernel field the BPF programs read exists on the oldest kernels that
# load them (tools/core_check.c): the programs for >= 5.17 against Debian 12's 6.1, the compat
# programs against Debian 11's 5.10. Downloads both kernel packages (tools/vmtest/), root.
CORE_CHECK := $(OUTPUT)/tools/core_check
$(CORE_CHECK): tools/core_check.c
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(shell $(PKG_CONFIG) --libs libbpf) -o $@

core-check: $(OUTPUT)/bpfprof.bpf.o $(CORE_CHECK)
	$(Q)tools/vmtest/install-deps.sh
	$(Q)$(CORE_CHECK) $(OUTPUT)/bpfprof.bpf.o "$$(tools/vmtest/kernel-btf.sh 6.1 $(VMTEST_DIR))" full
	$(Q)$(CORE_CHECK) $(OUTPUT)/bpfprof.bpf.o "$$(tools/vmtest/kernel-btf.sh 5.10 $(VMTEST_DIR))" compat

.PHONY: core-check
