#!/bin/sh
# Print the path of speedscope's published JSON schema of its file format
# (file-format-schema.json, shipped in the npm package `speedscope`),
# installing that package with npm into build/npm/ first if it is not there.
# The tests validate rspctl's --speedscope files against it
# (tests/e2e/sscope.py). Exits 1 with one line when it cannot.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VERSION=1.25.0
PREFIX="$ROOT/build/npm"
SCHEMA="$PREFIX/node_modules/speedscope/dist/release/file-format-schema.json"

if [ ! -f "$SCHEMA" ] || ! grep -q "\"version\": \"$VERSION\"" \
		"$PREFIX/node_modules/speedscope/package.json" 2>/dev/null; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "speedscope-schema: npm is not installed; run scripts/deps.sh" >&2
		exit 1
	fi
	mkdir -p "$PREFIX"
	if ! npm install --prefix "$PREFIX" --no-audit --no-fund --silent \
			"speedscope@$VERSION" >/dev/null 2>&1; then
		echo "speedscope-schema: npm could not install speedscope@$VERSION" \
			"(is registry.npmjs.org reachable?)" >&2
		exit 1
	fi
fi
if [ ! -f "$SCHEMA" ]; then
	echo "speedscope-schema: speedscope@$VERSION has no $SCHEMA" >&2
	exit 1
fi
echo "$SCHEMA"
