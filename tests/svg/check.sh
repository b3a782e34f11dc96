#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# check.sh: checks a bpfprof SVG flame graph in headless Chromium (check.html): the expected
# frames are there, boxes are as wide as their counts, clicking a frame zooms into it, Ctrl-F
# search highlights the matches and shows their share; optionally saves a PNG of the graph.
usage() {
	cat <<'EOF'
usage: check.sh [--click NAME] [--min-hidden N] [--search REGEX] [--screenshot PNG] SVG FRAME...
  FRAME...          names of frames that must be in the graph
  --click NAME      click the widest frame named NAME: it must span the full width, its callers
                    stay greyed at full width, its callees scale, every other frame is hidden
                    (at least N of them, --min-hidden, default 0); then Reset Zoom
  --search REGEX    Ctrl-F, answer REGEX: exactly the matching frames are highlighted and
                    "Matched: P%" is their share of the samples; then Reset Search
  --screenshot PNG  save the graph as rendered (--window-size: the SVG's own size)
Prints "PASS|FAIL check: detail" lines; exit status 0 when every check passed, 1 when one
failed, 2 on a usage or setup error (no chromium, SVG missing). Environment: CHROMIUM (the
browser command, default chromium), CHECK_TIMEOUT_S (default 60).
EOF
}
set -u

here=$(cd "$(dirname "$0")" && pwd)
click=
search=
shot=
min_hidden=0
while [ $# -gt 0 ]; do
	case $1 in
	--click) click=$2; shift 2 ;;
	--search) search=$2; shift 2 ;;
	--screenshot) shot=$2; shift 2 ;;
	--min-hidden) min_hidden=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ]; then
	usage >&2
	exit 2
fi
svg=$1
shift
chromium=${CHROMIUM:-chromium}
limit=${CHECK_TIMEOUT_S:-60}

if [ ! -s "$svg" ]; then
	echo "FAIL svg_file: '$svg' is missing or empty"
	exit 2
fi
if ! command -v "$chromium" >/dev/null; then
	echo "FAIL chromium: '$chromium' not found (Debian package chromium)"
	exit 2
fi
if ! command -v python3 >/dev/null; then
	echo "FAIL python3: not found (needed to encode the parameters)"
	exit 2
fi

tmp=$(mktemp -d /tmp/svg-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# A browser of its own per run (profile, crash dumps), no first-run work, no network;
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
browser() {
	timeout -k 5 "$limit" "$chromium" --headless=new --no-sandbox --disable-gpu \
		--disable-dev-shm-usage --no-first-run --no-default-browser-check \
		--disable-extensions --disable-background-networking --disable-sync \
		--user-data-dir="$tmp/profile" --crash-dumps-dir="$tmp" "$@"
}

# The parameters as JSON in the URL fragment: names may hold any character.
svg_url=$(python3 -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).resolve().as_uri())' \
	"$svg")
fragment=$(python3 - "$svg_url" "$click" "$search" "$min_hidden" "$@" <<'EOF'
import json, sys, urllib.parse
url, click, search, min_hidden, *expect = sys.argv[1:]
p = {"svg": url, "expect": expect, "click": click or None, "search": search or None,
     "min_hidden": int(min_hidden)}
print(urllib.parse.quote(json.dumps(p), safe=""))
EOF
)
page="file://$here/check.html#$fragment"

browser --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom "$page" \
	>"$tmp/dom.html" 2>"$tmp/chromium.err"
rc=$?
# The results as text: <pre id="results"> of the page, entities decoded.
sed -n '/<pre id="results">/,/<\/pre>/p' "$tmp/dom.html" |
	sed -e 's/<pre id="results">//' -e 's/<\/pre>.*//' -e '/^$/d' \
	    -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e "s/&#39;/'/g" -e 's/&amp;/\&/g' \
	>"$tmp/results"
cat "$tmp/results"
failed=0
if [ "$rc" -ne 0 ]; then
	echo "FAIL chromium_run: $chromium exited $rc (124: over ${limit}s); its stderr:"
	sed -n '1,20s/^/  | /p' "$tmp/chromium.err"
	failed=1
fi
if ! grep -q '^DONE pass=[0-9]* fail=0$' "$tmp/results"; then
	if ! grep -q '^DONE ' "$tmp/results"; then
		echo "FAIL check_page: check.html did not finish (no DONE line); chromium said:"
		sed -n '1,20s/^/  | /p' "$tmp/chromium.err"
	fi
	failed=1
fi

if [ -n "$shot" ]; then
	# The graph at its own size, so that the root row (at the bottom) is in the picture.
	read -r w h < <(sed -n \
		's/.*<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p;T;q' "$svg")
	w=${w:-1200}
	h=${h:-800}
	[ "$h" -lt 100 ] && h=100
	[ "$h" -gt 8000 ] && h=8000
	rm -f "$shot"
	browser --screenshot="$shot" --window-size="$w,$h" --hide-scrollbars "$svg_url" \
		>"$tmp/shot.out" 2>&1
	# The PNG signature (RFC 2083).
	sig=$(head -c 8 "$shot" 2>/dev/null | od -An -tx1 | tr -d ' \n')
	if [ "$sig" = 89504e470d0a1a0a ]; then
		echo "PASS screenshot: $shot (${w}x$h, $(stat -c %s "$shot") bytes)"
	else
		echo "FAIL screenshot: no PNG written to $shot; chromium said:"
		sed -n '1,20s/^/  | /p' "$tmp/shot.out"
		failed=1
	fi
fi
exit "$failed"
