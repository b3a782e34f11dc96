# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# inline.mk: the inlined-frames test program (run-inline.sh) and its stripped copy whose debug
# file only a debuginfod serves (run-debuginfod.sh). Included by tests/tests.mk.
OBJCOPY ?= objcopy
TEST_TARGETS += $(addprefix $(TARGETS_DIR)/,inline inline.debug inline_stripped)

# -g (in TARGET_CFLAGS): the inlined frames come from DWARF. The build-id names the debug file.
$(TARGETS_DIR)/inline: $(TARGETS_SRC)/inline.c $(TARGET_DEPS) $(TARGETS_SRC)/inline.mk | \
		$(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) -Wl,--build-id=sha1 $< -o $@

$(TARGETS_DIR)/inline.debug: $(TARGETS_DIR)/inline
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --only-keep-debug $< $@

# No .symtab, no DWARF, no .gnu_debuglink: only its build-id leads to inline.debug.
$(TARGETS_DIR)/inline_stripped: $(TARGETS_DIR)/inline
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --strip-all $< $@
