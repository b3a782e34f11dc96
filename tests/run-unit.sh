#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs each cmocka unit test binary given as an argument; prints one closing count line.
# Built with SANITIZE=1, any sanitizer report fails the test (tests/sanitizer-env.sh).
. "$(dirname "$0")/sanitizer-env.sh"
sanitizer_env
passed=0
failed=0
for t in "$@"; do
	if "$t"; then
		passed=$((passed + 1))
	else
		echo "FAILED: $t" >&2
		failed=$((failed + 1))
	fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
