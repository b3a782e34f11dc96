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
