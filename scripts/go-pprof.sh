#!/bin/sh
# Print the path of Google's pprof (the `go tool pprof` program), building it
# first into build/go-pprof/ from Debian's Go sources: golang-go and
# golang-github-google-pprof-dev, which scripts/deps.sh installs (GOPATH
# mode, offline: no module is fetched). The tests check rsp's --pprof files
# with it as pprof's own users would (pprof -top, -traces, -tagfocus:
# tests/e2e/pprof.py). Exits 1 with one line when it cannot.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GOPATH_DEB=/usr/share/gocode
OUT="$ROOT/build/go-pprof/pprof"

if [ ! -x "$OUT" ]; then
	if ! command -v go >/dev/null 2>&1 ||
			[ ! -f "$GOPATH_DEB/src/github.com/google/pprof/pprof.go" ]; then
		echo "go-pprof: golang-go or golang-github-google-pprof-dev is not" \
			"installed; run scripts/deps.sh" >&2
		exit 1
	fi
	mkdir -p "$ROOT/build/go-pprof"
	if ! GOPATH="$GOPATH_DEB" GO111MODULE=off GOFLAGS='' \
			GOCACHE="$ROOT/build/go-pprof/cache" \
			go build -o "$OUT" github.com/google/pprof \
			>"$ROOT/build/go-pprof/build.log" 2>&1; then
		echo "go-pprof: go build of github.com/google/pprof failed" \
			"(build/go-pprof/build.log says why)" >&2
		exit 1
	fi
fi
echo "$OUT"
