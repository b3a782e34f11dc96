# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make vmtest: a command run as root in a Debian kernel booted under qemu (tools/vmtest/).
#
#   make vmtest KERNEL=6.1|6.12|5.10|7.2|/path/to/linux-image-*.deb [VMTEST_CMD='make integration']
#   make vmtest-btf KERNEL=5.10	# the guest's /sys/kernel/btf/vmlinux -> $(VMTEST_DIR)/<kver>/vmlinux.btf
#
# The guest runs the host's programs from its root file system: build what the command uses on
# the host first (make all targets). VMTEST_CMD, VMTEST_TIMEOUT, VMTEST_ACCEL, VMTEST_ENV, ...
# are read by tools/vmtest/vmtest.sh from the environment.
KERNEL ?= 6.1
# The command as typed: $PWD reaches the guest's shell (make would expand it to $(P)WD).
override VMTEST_CMD := $(value VMTEST_CMD)
VMTEST_DIR ?= $(OUTPUT)/vmtest
export VMTEST_DIR VMTEST_CMD VMTEST_TIMEOUT VMTEST_IDLE_TIMEOUT VMTEST_HEADERS VMTEST_ACCEL VMTEST_TCG_THREAD VMTEST_ENV VMTEST_MEM VMTEST_SMP VMTEST_9P_MODEL \
	VMTEST_APPEND

vmtest:
	$(Q)tools/vmtest/vmtest.sh '$(KERNEL)' "$$VMTEST_CMD"

vmtest-btf:
	$(Q)tools/vmtest/vmtest.sh '$(KERNEL)' \
		'install -m 644 /sys/kernel/btf/vmlinux "$$VMTEST_OUT/vmlinux.btf" && ls -l "$$VMTEST_OUT/vmlinux.btf"'

.PHONY: vmtest-btf

# make bench's sections (BENCH_VM_SECTIONS, default offcpu) on a Debian kernel under qemu, with
# its headers: section 9's peer, bcc's offcputime, compiles against them, and attaches a kprobe
# (this VM's kernel has neither). TCG's figures: compare within the run (ratios), not with the
# host's. BENCH_RUNS etc. pass through (docs/performance.md).
BENCH_VM_SECTIONS ?= offcpu
bench-vm: deps all targets
	$(Q)VMTEST_HEADERS=1 VMTEST_ENV="BENCH_RUNS BENCH_RUNS_CHEAP BENCH_RUNS_LONG BENCH_PINGPONG_ROUNDS" \
		tools/vmtest/vmtest.sh '$(KERNEL)' "BENCH_SECTIONS='$(BENCH_VM_SECTIONS)' \
		tools/bench.sh $(BIN) $(TARGETS_DIR) $(OUTPUT)/bench-vm-$(notdir $(KERNEL))"

.PHONY: bench-vm
