# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Test programs of the integration tests (tests/integration/): known call chains without frame
# pointers, through an executable and a shared library. Included by the top Makefile.
TEST_TARGETS += $(addprefix $(TARGETS_DIR)/,libchain.so libchain_dl.so chain threads sysread \
	cxxchain libdla.so libdlb.so dlswap forkexec blip shortlived crowd libnocfi.so nocfi \
	rustchain_legacy rustchain_v0 chain_stripped offcpu wake)

# Debian's rustc (tools/install-deps.sh), not one a user put first in PATH.
RUSTC ?= /usr/bin/rustc


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

# chain without symbols (strip --strip-all: no .symtab, no DWARF; the .dynsym of a PIE names
# none of its functions): its frames are named by the start of their function (FDE), which
# the unstripped chain's symbol table gives.
$(TARGETS_DIR)/chain_stripped: $(TARGETS_DIR)/chain
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<
	$(Q)if readelf -SW $@ | grep -qE ' \.(symtab|debug_info) ' || \
		nm -D $@ | grep -q ' chain_leaf$$'; then echo "$@: symbols remain" >&2; exit 1; fi

# Programs of one file each: no library of their own.
$(TARGETS_DIR)/sysread $(TARGETS_DIR)/forkexec $(TARGETS_DIR)/blip $(TARGETS_DIR)/shortlived \
		$(TARGETS_DIR)/crowd $(TARGETS_DIR)/offcpu $(TARGETS_DIR)/wake: \
		$(TARGETS_DIR)/%: $(TARGETS_SRC)/%.c $(TARGET_DEPS) | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) $< -o $@

# C++: the frames' names are mangled in the ELF file, demangled in the profile.
$(TARGETS_DIR)/cxxchain: $(TARGETS_SRC)/cxxchain.cc $(TARGET_DEPS) | $(TARGETS_DIR)
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(TARGET_CHAIN_CFLAGS) $< -o $@

# libdla.so and libdlb.so: one source, symbol prefixes dla_ and dlb_ of the same length, so both
# have the same layout and dlswap can load the second where it unloaded the first.
$(TARGETS_DIR)/libdla.so $(TARGETS_DIR)/libdlb.so: $(TARGETS_DIR)/lib%.so: \
		$(TARGETS_SRC)/libdlswap.c $(TARGET_DEPS) | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) -fPIC -fvisibility=hidden -shared -DDL_PREFIX=$* \
		-Wl,-soname,lib$*.so $< -o $@

# dlswap dlopens both libraries next to itself ($ORIGIN); it does not link with them.
$(TARGETS_DIR)/dlswap: $(TARGETS_SRC)/dlswap.c $(TARGET_DEPS) $(TARGETS_DIR)/libdla.so \
		$(TARGETS_DIR)/libdlb.so | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) $< -Wl,-rpath,'$$ORIGIN' -ldl -o $@

# libnocfi.so has no CFI at all: no unwind tables (.eh_frame) and no debug info, since -g
# would add a .debug_frame. The build fails if some FDE remains all the same.
TARGET_NOCFI_CFLAGS := $(TARGET_CFLAGS) -fno-optimize-sibling-calls \
	-fno-asynchronous-unwind-tables -fno-unwind-tables -fomit-frame-pointer -g0 -D_GNU_SOURCE
$(TARGETS_DIR)/libnocfi.so: $(TARGETS_SRC)/libnocfi.c $(TARGET_DEPS) | $(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_NOCFI_CFLAGS) -fPIC -fvisibility=hidden -shared -Wl,-soname,libnocfi.so \
		$< -o $@
	$(Q)if readelf --debug-dump=frames $@ | grep -q FDE; then \
		echo "$@: has CFI (FDEs) despite $(TARGET_NOCFI_CFLAGS)" >&2; exit 1; fi

$(TARGETS_DIR)/nocfi: $(TARGETS_SRC)/nocfi.c $(TARGET_DEPS) $(TARGETS_DIR)/libnocfi.so | \
		$(TARGETS_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TARGET_CHAIN_CFLAGS) $< -L$(TARGETS_DIR) -lnocfi -Wl,-rpath,'$$ORIGIN' -o $@

# Rust: the same program with rustc's default (legacy) mangling and with v0 (_R...). Frame pointers off,
# as in the C targets; -g for line tables only.
$(TARGETS_DIR)/rustchain_legacy: $(TARGETS_SRC)/rustchain.rs | $(TARGETS_DIR)
	$(call msg,RUSTC,$@)
	$(Q)$(RUSTC) -O -g -C force-frame-pointers=no $< -o $@
$(TARGETS_DIR)/rustchain_v0: $(TARGETS_SRC)/rustchain.rs | $(TARGETS_DIR)
	$(call msg,RUSTC,$@)
	$(Q)$(RUSTC) -O -g -C force-frame-pointers=no -C symbol-mangling-version=v0 $< -o $@
