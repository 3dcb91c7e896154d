#!/bin/sh
# Configure and build one tree. usage: build.sh release|asan|fuzz
#   release  RelWithDebInfo, warnings are errors      -> build/release
#   asan     Debug with AddressSanitizer and UBSan    -> build/asan
# Both are test builds: daemon/rspd, the one the tests run, obeys their hooks
# (RSP_TEST_HOOKS); `cmake --install` installs daemon/installed/rspd, the same
# objects linked without them.
#   fuzz     clang, libFuzzer targets only (fuzz/)    -> build/fuzz
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-release}
target=""
case $kind in
release) flags="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRSP_TEST_HOOKS=ON" ;;
asan) flags="-DCMAKE_BUILD_TYPE=Debug -DRSP_SANITIZE=ON -DRSP_TEST_HOOKS=ON" ;;
fuzz) flags="-DCMAKE_BUILD_TYPE=Debug -DRSP_FUZZ=ON -DCMAKE_C_COMPILER=clang"; target="--target fuzz" ;;
*) echo "usage: build.sh release|asan|fuzz" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
cmake -S "$ROOT" -B "$ROOT/build/$kind" -DRSP_WERROR=ON $flags >/dev/null
# shellcheck disable=SC2086
cmake --build "$ROOT/build/$kind" -j "$(nproc)" $target -- --no-print-directory >"$ROOT/build/$kind.log" 2>&1 || {
	cat "$ROOT/build/$kind.log" >&2
	echo "build ($kind) failed" >&2
	exit 1
}
echo "build: $kind ok ($ROOT/build/$kind)"
