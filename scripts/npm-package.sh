#!/bin/sh
# Print the directory of the npm package NAME at VERSION, installing it
# with npm into build/npm/ first if that version is not there. The tests'
# readers of other tools' formats come this way (speedscope-schema.sh,
# pprof-format.sh). Exits 1 with one line when it cannot.
# usage: npm-package.sh NAME VERSION
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
NAME=$1
VERSION=$2
PREFIX="$ROOT/build/npm"
DIR="$PREFIX/node_modules/$NAME"

if ! grep -q "\"version\": \"$VERSION\"" "$DIR/package.json" 2>/dev/null; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "$NAME: npm is not installed; run scripts/deps.sh" >&2
		exit 1
	fi
	mkdir -p "$PREFIX"
	if ! npm install --prefix "$PREFIX" --no-audit --no-fund --silent \
			"$NAME@$VERSION" >/dev/null 2>&1; then
		echo "$NAME: npm could not install $NAME@$VERSION" \
			"(is registry.npmjs.org reachable?)" >&2
		exit 1
	fi
fi
if ! grep -q "\"version\": \"$VERSION\"" "$DIR/package.json" 2>/dev/null; then
	echo "$NAME: $NAME@$VERSION is not in $DIR after npm install" >&2
	exit 1
fi
echo "$DIR"
