#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make demo: profile Debian's python3 running tools/demo.py: folded stacks, a flame graph and a
# pprof profile of one run, and the top of the profile.
set -eu
bin=${1:-build/bpfprof}
out=${2:-build/demo.folded}
here=$(cd "$(dirname "$0")" && pwd)

base=${out%.folded}
echo "== bpfprof -F 499 -o $out -o $base.svg -o $base.pb.gz -- /usr/bin/python3 tools/demo.py 5"
"$bin" -F 499 -o "$out" -o "$base.svg" -o "$base.pb.gz" --title "bpfprof demo: python3" \
	-- /usr/bin/python3 "$here/demo.py" 5
echo
echo "== the 10 hottest stacks of $out (root first, leaf last; count at the end):"
sort -t' ' -k2 -n -r "$out" | head -n 10 | awk '{
	n = split($1, f, ";"); s = f[1] ";" f[2] ";...";
	for (i = (n > 6 ? n - 5 : 3); i <= n; i++) s = s ";" f[i];
	print "  " $NF "  " s }'
echo
echo "Open $base.svg in a browser (click to zoom, Ctrl-F to search),"
echo "$base.pb.gz with 'go tool pprof -http=: $base.pb.gz', $out in speedscope or flamegraph.pl."
