# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# cfi.mk: fixtures of test_cfi_table (CFI row tables): one program, built from the test's own
# source with -DCFI_FIXTURE, with its CFI in .eh_frame (cfi_eh), in .debug_frame (cfi_dbg: no
# unwind tables, -g; the C runtime's objects keep their .eh_frame), in neither (cfi_nocfi) and
# in an .eh_frame that holds no entry, only its terminator (cfi_noentries).
# Its own directory variable: unit.mk (UNIT_FIXTURES) may be included after this file.
CFI_FIXTURES_DIR := $(OUTPUT)/tests/fixtures
CFI_FIXTURES := $(addprefix $(CFI_FIXTURES_DIR)/,cfi_eh cfi_dbg cfi_nocfi cfi_noentries)

# Not $(CFLAGS): the fixtures' code and CFI must not change with the project's flags.
$(CFI_FIXTURES_DIR)/cfi_eh: tests/unit/unwind/test_cfi_table.c tests/unit/cfi.mk
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g0 -fasynchronous-unwind-tables -DCFI_FIXTURE $< -o $@

$(CFI_FIXTURES_DIR)/cfi_dbg: tests/unit/unwind/test_cfi_table.c tests/unit/cfi.mk
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -DCFI_FIXTURE $< -o $@
	$(Q)readelf -S $@ | grep -q '\.debug_frame' || \
		{ echo "$@: no .debug_frame" >&2; exit 1; }

$(CFI_FIXTURES_DIR)/cfi_nocfi: $(CFI_FIXTURES_DIR)/cfi_eh
	$(call msg,OBJCOPY,$@)
	$(Q)$(or $(OBJCOPY),objcopy) -R .eh_frame -R .eh_frame_hdr -R .debug_frame $< $@

$(CFI_FIXTURES_DIR)/cfi_noentries: $(CFI_FIXTURES_DIR)/cfi_nocfi
	$(call msg,OBJCOPY,$@)
	$(Q)head -c 4 /dev/zero >$@.eh_frame
	$(Q)$(or $(OBJCOPY),objcopy) --add-section .eh_frame=$@.eh_frame \
		--set-section-flags .eh_frame=alloc,readonly,data $< $@ 2>/dev/null
	$(Q)rm -f $@.eh_frame

$(OUTPUT)/tests/unit/test_cfi_table: $(CFI_FIXTURES)
$(OUTPUT)/tests/unit/test_cfi_table: private override CFLAGS += \
	-DCFI_FIXTURE_EH='"$(abspath $(CFI_FIXTURES_DIR)/cfi_eh)"' \
	-DCFI_FIXTURE_DBG='"$(abspath $(CFI_FIXTURES_DIR)/cfi_dbg)"' \
	-DCFI_FIXTURE_NOCFI='"$(abspath $(CFI_FIXTURES_DIR)/cfi_nocfi)"' \
	-DCFI_FIXTURE_NOENTRIES='"$(abspath $(CFI_FIXTURES_DIR)/cfi_noentries)"'
