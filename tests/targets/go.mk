# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# go.mk: gochain linked with -ldflags='-s -w' (no .symtab, no DWARF, no CFI: only .gopclntab),
# by Debian's Go toolchain (make deps installs it). GOPATH mode: nothing to download.
TEST_TARGETS += $(TARGETS_DIR)/gochain_stripped

$(TARGETS_DIR)/gochain_stripped: $(TARGETS_SRC)/gochain.go | $(TARGETS_DIR)
	$(call msg,GO,$@)
	$(Q)HOME=$(abspath $(TARGETS_DIR)) GOCACHE=$(abspath $(TARGETS_DIR))/gocache \
		GO111MODULE=off go build -ldflags='-s -w' -o $@ $<

# gocgo: Go calling C through cgo, linked the same way; the C functions are exported
# (-rdynamic: .dynsym) so that their frames have names without .symtab.
TEST_TARGETS += $(TARGETS_DIR)/gocgo_stripped

$(TARGETS_DIR)/gocgo_stripped: $(TARGETS_SRC)/gocgo.go | $(TARGETS_DIR)
	$(call msg,GO,$@)
	$(Q)HOME=$(abspath $(TARGETS_DIR)) GOCACHE=$(abspath $(TARGETS_DIR))/gocache \
		GO111MODULE=off CGO_ENABLED=1 go build -ldflags='-s -w -extldflags=-rdynamic' -o $@ $<
