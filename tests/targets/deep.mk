# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# deep: 80 KiB of live stack under its leaf (adaptive stack copy sizes).
TEST_TARGETS += $(TARGETS_DIR)/deep

$(TARGETS_DIR)/deep: $(TARGETS_SRC)/deep.c $(TARGET_DEPS) | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) $< -o $@
