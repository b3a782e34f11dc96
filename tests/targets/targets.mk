# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Test programs of the integration tests (tests/integration/): known call chains without frame
# pointers, through an executable and a shared library. Included by the top Makefile.
TARGETS_SRC := tests/targets
TEST_TARGETS := $(addprefix $(TARGETS_DIR)/,libchain.so libchain_dl.so chain threads sysread \
	cxxchain)

# TARGET_CFLAGS omits frame pointers on purpose (bpfprof must unwind with DWARF CFI); on top:
# no sibling calls (a tail call would replace its caller's frame) and unwind tables everywhere.
TARGET_CHAIN_CFLAGS := $(TARGET_CFLAGS) -fno-optimize-sibling-calls -fasynchronous-unwind-tables \
	-D_GNU_SOURCE
# Rebuilt when the shared header or these rules (flags) change.
TARGET_DEPS := $(TARGETS_SRC)/targets.h $(TARGETS_SRC)/targets.mk

# Only the chain entry points are exported (CHAIN_EXPORT); the programs find the library next
# to themselves ($ORIGIN), wherever the build directory is.
# libchain_dl.so is the same library under another name, for chain -l to dlopen.
$(TARGETS_DIR)/libchain.so $(TARGETS_DIR)/libchain_dl.so: $(TARGETS_DIR)/%.so: \
		$(TARGETS_SRC)/libchain.c $(TARGET_DEPS) | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) -fPIC -fvisibility=hidden -shared \
		-Wl,-soname,$*.so $< -o $@

$(TARGETS_DIR)/chain $(TARGETS_DIR)/threads: $(TARGETS_DIR)/%: $(TARGETS_SRC)/%.c $(TARGET_DEPS) \
		$(TARGETS_DIR)/libchain.so | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) $< -L$(TARGETS_DIR) -lchain -Wl,-rpath,'$$ORIGIN' \
		-lpthread -o $@
# chain -l needs its dlopen library next to it.
$(TARGETS_DIR)/chain: $(TARGETS_DIR)/libchain_dl.so

$(TARGETS_DIR)/sysread: $(TARGETS_SRC)/sysread.c $(TARGET_DEPS) | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) $< -o $@

# C++: the frames' names are mangled in the ELF file, demangled in the profile.
$(TARGETS_DIR)/cxxchain: $(TARGETS_SRC)/cxxchain.cc $(TARGET_DEPS) | $(TARGETS_DIR)
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(TARGET_CHAIN_CFLAGS) $< -o $@
