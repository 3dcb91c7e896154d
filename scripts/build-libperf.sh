#!/bin/sh
# Build libperf (tools/lib/perf of the kernel) from Debian's linux-source-6.1
# into DEPS/libperf. Debian packages no libperf, so we take it from the
# kernel sources: extract only what tools/lib/perf needs (~8 s), then
# install_lib/install_headers/install_pkgconfig (~1 s). The plain `install`
# target also builds the docs and fails without asciidoc.
#
# Results:
#   DEPS/libperf/lib64/libperf.a, libapi.a, pkgconfig/libperf.pc
#   DEPS/libperf/include/perf/*.h
#   DEPS/linux-source-6.1/tools/...   (kept: internal headers and perf docs)
# Idempotent: a stamp records the tarball it was built from.
set -eu

DEPS=${1:?usage: build-libperf.sh DEPS_DIR}
TARBALL=/usr/src/linux-source-6.1.tar.xz
SRC=$DEPS/linux-source-6.1
PREFIX=$DEPS/libperf
STAMP=$PREFIX/.built-from

if [ ! -r "$TARBALL" ]; then
	echo "libperf: $TARBALL is missing; install it with 'apt-get install linux-source-6.1' (scripts/deps.sh does)" >&2
	exit 1
fi

want="$(stat -c '%s %Y' "$TARBALL")"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -f "$PREFIX/lib64/libperf.a" ]; then
	echo "libperf: up to date in $PREFIX"
	exit 0
fi

mkdir -p "$DEPS"
rm -rf "$SRC" "$PREFIX"
echo "libperf: extracting tools/lib/perf and its dependencies from $TARBALL"
tar -C "$DEPS" -xf "$TARBALL" --wildcards \
	'linux-source-6.1/tools/lib/*' \
	'linux-source-6.1/tools/include/*' \
	'linux-source-6.1/tools/arch/x86/*' \
	'linux-source-6.1/tools/build/*' \
	'linux-source-6.1/tools/scripts/*' \
	'linux-source-6.1/tools/perf/Documentation/perf.data-file-format.txt' \
	'linux-source-6.1/tools/perf/util/trace-event-info.c' \
	'linux-source-6.1/tools/perf/util/trace-event-read.c' \
	'linux-source-6.1/tools/perf/util/header.c' \
	'linux-source-6.1/tools/perf/util/header.h' \
	'linux-source-6.1/include/uapi/*' \
	'linux-source-6.1/arch/x86/include/uapi/*' \
	'linux-source-6.1/scripts/*'

echo "libperf: building into $PREFIX"
make -s -C "$SRC/tools/lib/perf" prefix="$PREFIX" \
	install_lib install_headers install_pkgconfig >"$DEPS/libperf-build.log" 2>&1 || {
	echo "libperf: build failed; see $DEPS/libperf-build.log" >&2
	exit 1
}
# A program using libperf must also link libapi (fdarray, io helpers).
cp "$SRC/tools/lib/api/libapi.a" "$PREFIX/lib64/"
# The shared objects are not used: rsp links libperf statically.
rm -f "$PREFIX"/lib64/libperf.so*
echo "$want" >"$STAMP"
echo "libperf: built"
