# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bpfprof: bpf/*.bpf.c -> linked BPF object -> skeleton -> user/*/*.c -> $(OUTPUT)/bpfprof
# SANITIZE=1: AddressSanitizer and UndefinedBehaviorSanitizer, into build-asan
# (docs/sanitizers.md; `make test SANITIZE=1` runs the tests against that binary).
ifeq ($(SANITIZE),1)
OUTPUT ?= build-asan
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
OUTPUT ?= build
ARCH ?= $(shell uname -m | sed 's/x86_64/x86/' | sed 's/aarch64/arm64/')
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
CC := $(if $(filter default,$(origin CC)),gcc,$(CC))
PKG_CONFIG ?= pkg-config
VERSION := 0.1.0

# VMLINUX_BTF=/sys/kernel/btf/vmlinux generates a vmlinux.h into $(OUTPUT) instead of the
# committed one (vmlinux/README.md).
ifdef VMLINUX_BTF
VMLINUX_DIR := $(OUTPUT)/vmlinux
else
VMLINUX_DIR := vmlinux/$(ARCH)
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS += --no-print-directory
endif

DEPS_PKGS := libbpf libelf libdw zlib libdebuginfod libcurl json-c libmicrohttpd libprotobuf-c
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(DEPS_PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(DEPS_PKGS) 2>/dev/null)

WERROR ?= $(if $(filter true,$(CI)),-Werror)
CFLAGS ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	$(WERROR) -D_GNU_SOURCE -DBPFPROF_VERSION='"$(VERSION)"' \
	-I. -I$(OUTPUT) -I$(OUTPUT)/proto -Iuser $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -liberty -lpthread
override CFLAGS += $(SANITIZE_FLAGS)
override LDFLAGS += $(SANITIZE_FLAGS)

# clang -target bpf does not search the multiarch include dirs: pass the host's (as
# libbpf-bootstrap does).
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-I$(VMLINUX_DIR) -Ibpf $(CLANG_BPF_SYS_INCLUDES)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
# Protocol buffers (pprof's profile.proto): C generated at build time with protoc-c.
PROTOC_C ?= protoc-c
PROTO_SRCS := $(wildcard user/proto/*.proto)
PROTO_HDRS := $(patsubst user/proto/%.proto,$(OUTPUT)/proto/%.pb-c.h,$(PROTO_SRCS))
PROTO_OBJS := $(patsubst user/proto/%.proto,$(OUTPUT)/proto/%.pb-c.o,$(PROTO_SRCS))
# user/: one folder per step of the data path (docs/design.md).
USER_SRCS := $(wildcard user/*/*.c user/*/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) $(PROTO_OBJS)
LIB_OBJS := $(filter-out $(OUTPUT)/user/cmd/main.o,$(USER_OBJS))
# The unit tests link this archive: the linker takes only the objects a test needs, and a test
# may give its own stand-in for a module (tests/unit/sampling/test_targets.c's loader).
LIB_AR := $(OUTPUT)/libbpfprof.a
SKEL := $(OUTPUT)/bpfprof.skel.h
BIN := $(OUTPUT)/bpfprof
MAN := $(OUTPUT)/bpfprof.1

.DELETE_ON_ERROR:
.PHONY: all clean test unit integration check-deploy check-includes check-functions targets deps \
	demo bench install vmtest man format
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man

all: $(BIN)

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/user $(OUTPUT)/vmlinux $(OUTPUT)/proto:
	$(Q)mkdir -p $@

$(OUTPUT)/vmlinux/vmlinux.h: | $(OUTPUT)/vmlinux
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(if $(VMLINUX_BTF),$(OUTPUT)/vmlinux/vmlinux.h) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

# Both programs write into one ringbuf: link them into one object, one skeleton.
$(OUTPUT)/bpfprof.bpf.o: $(BPF_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(SKEL): $(OUTPUT)/bpfprof.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name bpfprof_bpf > $@.tmp && mv $@.tmp $@

$(OUTPUT)/user/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/proto/%.pb-c.c $(OUTPUT)/proto/%.pb-c.h: user/proto/%.proto | $(OUTPUT)/proto
	$(call msg,PROTOC,$@)
	$(Q)$(PROTOC_C) --c_out=$(OUTPUT)/proto -Iuser/proto $<

$(OUTPUT)/proto/%.pb-c.o: $(OUTPUT)/proto/%.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB_AR): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# Generated headers exist before any user object is compiled (-MMD tracks them after).
$(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)): | $(PROTO_HDRS)

# Only the loader includes the skeleton.
$(OUTPUT)/user/sampling/loader.o: $(SKEL)

$(BIN): $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# make format: the C sources in kernel style (.clang-format).
CLANG_FORMAT ?= clang-format
format:
	$(Q)$(CLANG_FORMAT) -i $(wildcard user/*/*.[ch] user/*/*/*.[ch] bpf/*.[ch] bpf/*/*.[ch])

# make man: build/bpfprof.1 is --help and --version (help2man; docs/bpfprof.h2m adds what they
# lack): it cannot drift from the options. help2man runs the binary, which needs no privileges
# for that. Not part of all: the container image's build stage has no help2man and no docs/.
man: $(MAN)

$(MAN): $(BIN) docs/bpfprof.h2m
	$(call msg,MAN,$@)
	$(Q)help2man --no-info --no-discard-stderr --section=1 --include=docs/bpfprof.h2m \
		--name='sample CPU stacks with eBPF, unwound with DWARF CFI' \
		--output=$@.tmp ./$(BIN) && mv $@.tmp $@

# The binary (the BPF object is inside it: skeleton) and its man page; DESTDIR for packaging.
install: $(BIN) $(MAN)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/bin/bpfprof)
	$(Q)install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/bpfprof
	$(call msg,INSTALL,$(DESTDIR)$(MANDIR)/man1/bpfprof.1)
	$(Q)install -D -m 644 $(MAN) $(DESTDIR)$(MANDIR)/man1/bpfprof.1

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

demo: deps
	$(Q)$(MAKE) all
	$(Q)tools/demo.sh $(BIN) $(OUTPUT)/demo.folded

# bpfprof against perf in the same run (not part of make test: timings need a quiet machine).
bench: deps
	$(Q)$(MAKE) all
	$(Q)$(MAKE) $(TARGETS_DIR)/chain
	$(Q)tools/bench.sh $(BIN) $(TARGETS_DIR) $(OUTPUT)/bench
	$(Q)tools/bench-agent.sh $(BIN) $(OUTPUT)/bench $${BENCH_AGENT_S:-600}

# Installs what the build and the tests need on Debian 12 or 13 (root): apt-get, once.
deps:
	$(Q)tools/install-deps.sh

include tests/tests.mk
include tests/vmtest.mk
include tests/fuzz/fuzz.mk

-include $(BPF_OBJS:.o=.d) $(USER_OBJS:.o=.d)
