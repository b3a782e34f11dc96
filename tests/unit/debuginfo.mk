# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# debuginfo.mk: fixtures of test_dwarf_lines (inline frames and source lines from DWARF).
OBJCOPY ?= objcopy
DEBUGINFO_FIX := $(OUTPUT)/tests/fixtures
INLINE_FIX := $(DEBUGINFO_FIX)/inline
INLINE_FIXTURES := $(INLINE_FIX) $(INLINE_FIX).debug $(INLINE_FIX).stripped $(INLINE_FIX).nolink \
	$(INLINE_FIX).clang $(DEBUGINFO_FIX)/inline_cxx $(INLINE_FIX).split $(INLINE_FIX).dwz

# Not $(CFLAGS): the fixture's code layout must not change with the project's flags. -O2 -g:
# the always_inline functions leave DW_TAG_inlined_subroutine trees; the build-id names the
# debug file.
$(INLINE_FIX): tests/fixtures/inline.c | $(DEBUGINFO_FIX)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -Wl,--build-id=sha1 $< -o $@

# clang emits no .debug_aranges: CUs are found by their own ranges.
$(INLINE_FIX).clang: tests/fixtures/inline.c | $(DEBUGINFO_FIX)
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) -O2 -g -Wl,--build-id=sha1 $< -o $@

$(DEBUGINFO_FIX)/inline_cxx: tests/fixtures/inline_cxx.cc | $(DEBUGINFO_FIX)
	$(call msg,CXX,$@)
	$(Q)$(CXX) -O2 -g -Wl,--build-id=sha1 $< -o $@

# Split DWARF: a skeleton unit in the executable, the rest in inline_split.dwo next to it
# (DW_AT_dwo_name), which libdw would open itself.
$(INLINE_FIX).split: tests/fixtures/inline.c | $(DEBUGINFO_FIX)
	$(call msg,CC,$@)
	$(Q)cd $(DEBUGINFO_FIX) && $(CC) -O2 -g -gsplit-dwarf -c $(abspath $<) -o inline_split.o && \
		$(CC) inline_split.o -Wl,--build-id=sha1 -o $(notdir $@)

# dwz: two copies of inline share their DWARF through the alt file inline.dwz, which their
# .gnu_debugaltlink names relative to their directory (libdw would open it itself). The copy
# kept is inline.dwz_a; the alt file is $(INLINE_FIX).dwz.
$(INLINE_FIX).dwz: $(INLINE_FIX) | $(DEBUGINFO_FIX)
	$(call msg,DWZ,$@)
	$(Q)rm -f $@ $@_a $@_b && cp $< $@_a && cp $< $@_b && \
		cd $(DEBUGINFO_FIX) && dwz -m $(notdir $@) -M $(notdir $@) $(notdir $@)_a $(notdir $@)_b

$(INLINE_FIX).debug: $(INLINE_FIX)
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --only-keep-debug $< $@

# No .symtab, no DWARF: only the debuglink to inline.debug.
$(INLINE_FIX).stripped: $(INLINE_FIX) $(INLINE_FIX).debug
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --strip-all --add-gnu-debuglink=$(INLINE_FIX).debug $< $@

# No .symtab, no DWARF, no debuglink: only the build-id leads to a debug file (build-id path,
# debuginfod).
$(INLINE_FIX).nolink: $(INLINE_FIX)
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --strip-all $< $@

# private: the library objects built for this binary must not get the test-only macros.
$(OUTPUT)/tests/unit/test_dwarf_lines: $(INLINE_FIXTURES)
$(OUTPUT)/tests/unit/test_dwarf_lines: private override CFLAGS += \
	-DINLINE_FIXTURES='"$(abspath $(DEBUGINFO_FIX))"' \
	-DINLINE_SOURCES='"$(abspath tests/fixtures)"'

# run-debuginfod.sh runs test_dwarf_lines' debuginfod test against its loopback server.
integration: $(OUTPUT)/tests/unit/test_dwarf_lines
