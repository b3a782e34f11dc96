# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# unit.mk: fixtures and per-test flags of the unit tests (included by tests/tests.mk).
OBJCOPY ?= objcopy
UNIT_FIXTURES := $(OUTPUT)/tests/fixtures
SYMTEST := $(UNIT_FIXTURES)/symtest

$(UNIT_FIXTURES):
	$(Q)mkdir -p $@

# Not $(CFLAGS): the fixture's code layout must not change with the project's flags.
# -fno-inline keeps one body per function; the build-id names its debug file.
$(SYMTEST): tests/fixtures/symtest.c | $(UNIT_FIXTURES)
	$(call msg,CC,$@)
	$(Q)$(CC) -O1 -g -fno-inline -fasynchronous-unwind-tables -Wl,--build-id=sha1 $< -o $@

$(SYMTEST).debug: $(SYMTEST)
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --only-keep-debug $< $@

# Only .dynsym and the debuglink are left: the symbols must come from symtest.debug.
$(SYMTEST).stripped: $(SYMTEST) $(SYMTEST).debug
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --strip-all --add-gnu-debuglink=$(SYMTEST).debug $< $@

# private: the library objects built for these binaries must not get the test-only macros.
$(OUTPUT)/tests/unit/test_symtab: $(SYMTEST) $(SYMTEST).debug $(SYMTEST).stripped
$(OUTPUT)/tests/unit/test_symtab: private override CFLAGS += \
	-DSYMTEST_ELF='"$(abspath $(SYMTEST))"'
$(OUTPUT)/tests/unit/test_proc_maps $(OUTPUT)/tests/unit/test_ksyms: private override CFLAGS += \
	-DFIXTURES_DIR='"$(abspath tests/fixtures)"'
