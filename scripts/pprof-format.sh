#!/bin/sh
# Print the directory of the npm package `pprof-format` (Datadog's
# decoder and encoder of pprof's profile.proto, used by their Node.js
# profiler), installing it with npm into build/npm/ first if it is not
# there. The tests read rsp's --pprof files and rspd's /debug/pprof
# answers with it (tests/e2e/pprofread.js), a reader that is not rsp's
# own code. Exits 1 with one line when it cannot.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VERSION=2.3.2
PREFIX="$ROOT/build/npm"
DIR="$PREFIX/node_modules/pprof-format"

if ! grep -q "\"version\": \"$VERSION\"" "$DIR/package.json" 2>/dev/null; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "pprof-format: npm is not installed; run scripts/deps.sh" >&2
		exit 1
	fi
	mkdir -p "$PREFIX"
	if ! npm install --prefix "$PREFIX" --no-audit --no-fund --silent \
			"pprof-format@$VERSION" >/dev/null 2>&1; then
		echo "pprof-format: npm could not install pprof-format@$VERSION" \
			"(is registry.npmjs.org reachable?)" >&2
		exit 1
	fi
fi
if [ ! -f "$DIR/package.json" ]; then
	echo "pprof-format: pprof-format@$VERSION is not in $DIR" >&2
	exit 1
fi
echo "$DIR"
