#!/bin/sh
# The JavaScript libraries `rspctl report` embeds in its page: d3 and
# d3-flame-graph from the npm registry, at the versions cli/report/
# package-lock.json pins (npm ci checks their integrity hashes), installed
# into the build tree, never committed.
#
# usage: report-assets.sh SRCDIR OUTDIR
#   writes OUTDIR/d3.min.js, d3-flamegraph.min.js, d3-flamegraph.css and
#   OUTDIR/report_libs.h. When npm or the registry is unreachable the build
#   goes on: the files are empty and report_libs.h names what is missing,
#   which rspctl report then says in one sentence (README, rspctl report).
set -u
src=$1
out=$2
npmdir="$out/npm"
mkdir -p "$npmdir"
cp "$src/package.json" "$src/package-lock.json" "$npmdir/"

missing=""
if ! command -v npm >/dev/null 2>&1; then
	missing="npm is not installed (scripts/deps.sh installs it)"
elif ! (cd "$npmdir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) \
	>"$out/npm.log" 2>&1; then
	missing="npm ci could not install them (see $out/npm.log; the registry may be unreachable)"
fi

d3="$npmdir/node_modules/d3/dist/d3.min.js"
fg="$npmdir/node_modules/d3-flame-graph/dist"
if [ -z "$missing" ] && [ -f "$d3" ] && [ -f "$fg/d3-flamegraph.min.js" ]; then
	# The page must name no URL (it opens offline, from a mail): d3's
	# banner comment names its site; keep the notice, drop the scheme.
	sed '1s|// https://d3js.org |// d3 (d3js.org) |' "$d3" >"$out/d3.min.js"
	cp "$fg/d3-flamegraph.min.js" "$out/d3-flamegraph.min.js"
	cp "$fg/d3-flamegraph.css" "$out/d3-flamegraph.css"
	echo '#define RSP_REPORT_LIBS_MISSING NULL' >"$out/report_libs.h.new"
else
	[ -n "$missing" ] || missing="npm ci did not leave their dist files"
	: >"$out/d3.min.js"
	: >"$out/d3-flamegraph.min.js"
	: >"$out/d3-flamegraph.css"
	printf '#define RSP_REPORT_LIBS_MISSING "d3 and d3-flame-graph: %s"\n' "$missing" \
		>"$out/report_libs.h.new"
	echo "report-assets: WARNING: rspctl report will lack its flame graph: $missing; delete $out/report_libs.h to try again" >&2
fi
mv "$out/report_libs.h.new" "$out/report_libs.h"
