# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# jit: C code called from generated x86-64 code in anonymous memory, named by a perf map
# (tests/integration/run-jit.sh). Like the other targets: no frame pointers, CFI everywhere;
# the generated code makes its own frame pointer (jit.c says why that is all it takes).
ifeq ($(shell uname -m),x86_64)
TEST_TARGETS += $(TARGETS_DIR)/jit
endif

$(TARGETS_DIR)/jit: $(TARGETS_SRC)/jit.c $(TARGET_DEPS) $(TARGETS_SRC)/jit.mk | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) $< -o $@
