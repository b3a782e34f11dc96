# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# fuzz.mk: libFuzzer targets of the parsers of untrusted input (docs/sanitizers.md), one
# tests/fuzz/fuzz_NAME.c each, seeds in tests/fuzz/seeds/NAME (python_records' are written at
# build time: records in the layout of bpf/record.h). Built with clang (libFuzzer's runtime:
# libclang-rt-dev, make deps), ASan and UBSan, into build-fuzz/ (FUZZ_OUT) whatever OUTPUT is:
#   make fuzz                  each target FUZZ_TIME seconds (default 60), one after the other
#   make fuzz FUZZ_RUNS=N      each target N inputs from its seeds, libFuzzer seed 1 (repeatable)
#   make fuzz FUZZ_TARGETS=perf_map FUZZ_TIME=600
# A finding stops that target (exit status non-zero, make fails) and is left in
# build-fuzz/artifacts/NAME/ (crash-*, leak-*, timeout-*, oom-*); run the target on that file
# to reproduce it: build-fuzz/fuzz_NAME FILE. The corpus grows in build-fuzz/corpus/NAME.
FUZZ_OUT ?= build-fuzz
FUZZ_CC ?= $(CLANG)
FUZZ_TIME ?= 60
# make test SANITIZE=1 runs each target for FUZZ_TEST_RUNS inputs (tests/tests.mk), after the
# integration tests: with FUZZ_RUNS set, a run starts from the seeds alone with libFuzzer's seed
# 1, so it is the same run on every machine and a failure is found again (FUZZ_TIME bounds it).
FUZZ_TEST_RUNS ?= 100000
FUZZ_ALL := gopclntab plt python_lines python_records perf_map
FUZZ_TARGETS ?= $(FUZZ_ALL)
# Per input: past this many seconds a timeout, past this many MiB an OOM (both findings).
FUZZ_FLAGS ?= -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The project's flags (includes, -std, warnings), without gcc's sanitizer flags of SANITIZE=1.
FUZZ_CFLAGS = $(filter-out $(SANITIZE_FLAGS) -I$(OUTPUT) -I$(OUTPUT)/proto,$(CFLAGS)) $(FUZZ_SAN)
# The library, instrumented for coverage (no main: -fsanitize=fuzzer-no-link): what the parsers
# need. Not the command, output or agent modules (protobuf headers, the BPF skeleton).
FUZZ_LIB_SRCS := $(filter-out user/cmd/% user/output/% user/agent/% user/sampling/loader.c, \
	$(USER_SRCS))
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(FUZZ_OUT)/user/%.o,$(FUZZ_LIB_SRCS))
FUZZ_LIB := $(FUZZ_OUT)/libbpfprof-fuzz.a
FUZZ_BINS := $(FUZZ_ALL:%=$(FUZZ_OUT)/fuzz_%)

$(FUZZ_OUT)/user/%.o: user/%.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	$(call msg,CC-FUZZ,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Wl,--as-needed -Itests/fuzz -MMD -MP \
		$< $(FUZZ_LIB) $(LDLIBS) -o $@

# python_records' seeds: records written by a program built against bpf/record.h, so they
# follow its layout.
$(FUZZ_OUT)/gen_python_records: tests/fuzz/gen_python_records.c bpf/record.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out $(SANITIZE_FLAGS),$(CFLAGS)) $< -o $@

$(FUZZ_OUT)/seeds/python_records/.done: $(FUZZ_OUT)/gen_python_records \
		$(wildcard tests/fuzz/seeds/python_lines/*)
	$(call msg,GEN,$(@D))
	$(Q)rm -rf $(@D) && mkdir -p $(@D) && $< $(@D) tests/fuzz/seeds/python_lines && touch $@

fuzz-build: $(FUZZ_BINS) $(FUZZ_OUT)/seeds/python_records/.done

# Each target in turn on its corpus (the seeds first), FUZZ_TIME seconds; one that fails does
# not stop the others, make fails at the end.
fuzz: fuzz-build
	$(Q)failed=; for t in $(FUZZ_TARGETS); do \
		seeds=tests/fuzz/seeds/$$t; \
		[ -d $$seeds ] || seeds=$(FUZZ_OUT)/seeds/$$t; \
		corpus=$(FUZZ_OUT)/corpus$(if $(FUZZ_RUNS),-runs)/$$t; \
		$(if $(FUZZ_RUNS),rm -rf $$corpus;) \
		mkdir -p $$corpus $(FUZZ_OUT)/artifacts/$$t || exit 1; \
		printf '  %-8s %s\n' FUZZ "fuzz_$$t $(if $(FUZZ_RUNS),$(FUZZ_RUNS) inputs,$(FUZZ_TIME) s)"; \
		if $(FUZZ_OUT)/fuzz_$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_TIME) \
			$(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS) -seed=1) \
			-artifact_prefix=$(FUZZ_OUT)/artifacts/$$t/ $$corpus $$seeds \
			>$(FUZZ_OUT)/fuzz_$$t.log 2>&1; then \
			grep -E '^stat::(number_of_executed_units|peak_rss_mb)' \
				$(FUZZ_OUT)/fuzz_$$t.log | tr -s '\n ' '  '; echo; \
		else \
			tail -n 60 $(FUZZ_OUT)/fuzz_$$t.log; failed="$$failed $$t"; \
			echo "fuzz_$$t: FAILED (log: $(FUZZ_OUT)/fuzz_$$t.log)" >&2; \
		fi; \
	done; [ -z "$$failed" ] || { echo "make fuzz: failed:$$failed" >&2; exit 1; }

.PHONY: fuzz fuzz-build

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_BINS:=.d)
