# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# gopclntab.mk: the Go fixture of test_gopclntab (Debian's Go toolchain: make deps installs it).
GOCHAIN := $(OUTPUT)/tests/fixtures/gochain
GOCHAIN_DIR := $(OUTPUT)/tests/fixtures

# With its symbol table: the test compares .gopclntab's functions with it. GOPATH mode, no
# module download; go wants writable cache and home directories.
$(GOCHAIN): tests/targets/gochain.go | $(GOCHAIN_DIR)
	$(call msg,GO,$@)
	$(Q)HOME=$(abspath $(GOCHAIN_DIR)) GOCACHE=$(abspath $(GOCHAIN_DIR))/gocache \
		GO111MODULE=off go build -o $@ $<

# The same program linked with -ldflags='-s -w': no .symtab, no DWARF.
$(GOCHAIN).stripped: tests/targets/gochain.go | $(GOCHAIN_DIR)
	$(call msg,GO,$@)
	$(Q)HOME=$(abspath $(GOCHAIN_DIR)) GOCACHE=$(abspath $(GOCHAIN_DIR))/gocache \
		GO111MODULE=off go build -ldflags='-s -w' -o $@ $<

$(OUTPUT)/tests/unit/test_gopclntab: $(GOCHAIN) $(GOCHAIN).stripped
$(OUTPUT)/tests/unit/test_gopclntab: private override CFLAGS += \
	-DGOCHAIN='"$(abspath $(GOCHAIN))"'

# Crafted tables (tests/fixtures/gopclntab_craft.py) added to a stripped C program, as any
# local user can without a Go toolchain: names that cost a naive reader functions x bytes (a
# 4 MB program, what docs/performance.md's figures were measured on), and a pcsp table whose
# value overflows int32.
CRAFTED_SPIN := $(GOCHAIN_DIR)/crafted_spin
GO_CRAFTED := $(GOCHAIN_DIR)/go-crafted
$(CRAFTED_SPIN): tests/fixtures/crafted_spin.c | $(GOCHAIN_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) -O1 -g $< -o $@

$(GO_CRAFTED)-names.gopclntab: tests/fixtures/gopclntab_craft.py | $(GOCHAIN_DIR)
	$(call msg,GEN,$@)
	$(Q)python3 $< names $@ 4000000

$(GO_CRAFTED)-pcsp.gopclntab: tests/fixtures/gopclntab_craft.py | $(GOCHAIN_DIR)
	$(call msg,GEN,$@)
	$(Q)python3 $< pcsp $@

# A whole ELF file whose .symtab's names are crafted alike, for symtab.c's .symtab reader.
$(GOCHAIN_DIR)/crafted-symtab: tests/fixtures/gopclntab_craft.py | $(GOCHAIN_DIR)
	$(call msg,GEN,$@)
	$(Q)python3 $< symtab $@ 4000000

$(GO_CRAFTED)-%: $(GO_CRAFTED)-%.gopclntab $(CRAFTED_SPIN)
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --strip-all --add-section .gopclntab=$< $(CRAFTED_SPIN) $@

$(OUTPUT)/tests/unit/test_gopclntab: $(GO_CRAFTED)-names $(GO_CRAFTED)-pcsp \
	$(GOCHAIN_DIR)/crafted-symtab
$(OUTPUT)/tests/unit/test_gopclntab: private override CFLAGS += \
	-DGO_CRAFTED='"$(abspath $(GO_CRAFTED))"' \
	-DCRAFTED_SYMTAB='"$(abspath $(GOCHAIN_DIR)/crafted-symtab)"'
