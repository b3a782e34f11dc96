#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The BPF programs' run time per call on this kernel (kernel.bpf_stats_enabled), from
# bpfprof --stats: the sampler at 999 Hz on the chain test program, and the tracepoints on a
# program that forks and execs. Run inside make vmtest to compare kernels (the fallbacks of
# 5.10 against 6.1's programs); under TCG the times are emulated, their ratio is what counts.
#
#   tools/vmtest/bpf-cost.sh [BPFPROF [TARGETS]]
set -euo pipefail

bpfprof=${1:-build/bpfprof}
targets=${2:-build/tests/targets}
out=$(mktemp /tmp/bpf-cost.XXXXXX)
trap 'rm -f "$out"; sysctl -qw kernel.bpf_stats_enabled=0' EXIT

sysctl -qw kernel.bpf_stats_enabled=1
"$bpfprof" --stats -F 999 -o /dev/null -- "$targets/chain" 4 2>"$out"
"$bpfprof" --stats -F 999 -o /dev/null -- "$targets/forkexec" 0.5 "$targets/chain" 1 2>>"$out"
echo "bpf-cost: kernel $(uname -r)"
grep 'BPF program' "$out" | sed 's/^bpfprof: /bpf-cost: /'
