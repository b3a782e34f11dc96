#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make demo: profile Debian's python3 running tools/demo.py and show the top of the profile.
set -eu
bin=${1:-build/bpfprof}
out=${2:-build/demo.folded}
here=$(cd "$(dirname "$0")" && pwd)

echo "== bpfprof -F 499 -o $out -- /usr/bin/python3 tools/demo.py 5"
"$bin" -F 499 -o "$out" -- /usr/bin/python3 "$here/demo.py" 5
echo
echo "== the 10 hottest stacks of $out (root first, leaf last; count at the end):"
sort -t' ' -k2 -n -r "$out" | head -n 10 | awk '{
	n = split($1, f, ";"); s = f[1] ";" f[2] ";...";
	for (i = (n > 6 ? n - 5 : 3); i <= n; i++) s = s ";" f[i];
	print "  " $NF "  " s }'
echo
echo "Open $out in speedscope (https://www.speedscope.app) or pipe it to flamegraph.pl."
