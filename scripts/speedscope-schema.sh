#!/bin/sh
# Print the path of speedscope's published JSON schema of its file format
# (file-format-schema.json, shipped in the npm package `speedscope`),
# installing that package with npm into build/npm/ first if it is not there
# (npm-package.sh). The tests validate rspctl's --speedscope files against
# it (tests/e2e/sscope.py). Exits 1 with one line when it cannot.
set -eu

DIR=$("$(dirname "$0")/npm-package.sh" speedscope 1.25.0)
SCHEMA="$DIR/dist/release/file-format-schema.json"
if [ ! -f "$SCHEMA" ]; then
	echo "speedscope-schema: speedscope@1.25.0 has no $SCHEMA" >&2
	exit 1
fi
echo "$SCHEMA"
