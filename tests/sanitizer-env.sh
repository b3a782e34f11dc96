# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# sanitizer-env.sh (sourced by tests/run-unit.sh and tests/lib.sh): the runtime options of a
# bpfprof built with `make SANITIZE=1` (AddressSanitizer, UndefinedBehaviorSanitizer), such
# that any report fails the test that ran it (docs/sanitizers.md). Harmless for a normal build:
# the options are only read by the sanitizers' runtime.
#
# sanitizer_env [LOG_DIR]: exports ASAN_OPTIONS and UBSAN_OPTIONS, each unless already set:
# - halt_on_error=1: the first report ends the process (UBSan's checks are also built with
#   -fno-sanitize-recover=all);
# - exitcode=SANITIZER_EXIT (99): not one of bpfprof's own statuses (0, 1, 64), so a test
#   that expects a failure (exit 1) cannot mistake a report for it;
# - detect_leaks=1: LeakSanitizer at exit. The agent runs for weeks: memory left unreachable
#   at exit is what a long run would lose, so a leak fails the test like any other report;
# - log_path=LOG_DIR/report: reports go to LOG_DIR/report.PID, where the caller looks for them
#   after the run (stderr may be redirected away or asserted on); without LOG_DIR, stderr.
SANITIZER_EXIT=99

sanitizer_env() {
	local common="halt_on_error=1:exitcode=$SANITIZER_EXIT:print_stacktrace=1"

	[ -n "${1:-}" ] && common+=":log_path=$1/report"
	: "${ASAN_OPTIONS=$common:detect_leaks=1:abort_on_error=0}"
	: "${UBSAN_OPTIONS=$common}"
	export ASAN_OPTIONS UBSAN_OPTIONS
}
