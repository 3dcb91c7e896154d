#!/bin/sh
# Fuzz the perf.data reader with libFuzzer for DURATION seconds (default 600)
# from the seed corpus of real dumps (tests/fuzz/corpus), and report how many
# inputs ran and how many crashed.
#   usage: bench/fuzz.sh [DURATION_S]
# Builds build/fuzz with clang, -fsanitize=fuzzer,address,undefined. New
# inputs go to a scratch corpus, crashes to build/fuzz/crashes/ (reproduce
# one with: build/fuzz/tests/fuzz/fuzz_perfdata FILE).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUR=${1:-600}
B=$ROOT/build/fuzz

cmake -S "$ROOT" -B "$B" -DCMAKE_C_COMPILER=clang -DRSP_FUZZ=ON -DRSP_WERROR=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$B" -j "$(nproc)" --target fuzz_perfdata >"$B/build.log" 2>&1 || {
	cat "$B/build.log" >&2
	exit 1
}
WORK=$(mktemp -d /tmp/rsp-fuzz.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp "$ROOT"/tests/fuzz/corpus/* "$WORK/"
mkdir -p "$B/crashes"
echo "fuzz: fuzz_perfdata for ${DUR}s from $(ls "$ROOT"/tests/fuzz/corpus | wc -l) seeds"
start=$(date +%s)
set +e
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$B/tests/fuzz/fuzz_perfdata" "$WORK" -max_total_time="$DUR" -max_len=262144 \
	-timeout=20 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$B/crashes/" \
	>"$B/fuzz.log" 2>&1
rc=$?
set -e
end=$(date +%s)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$B/fuzz.log" | tail -1)
cov=$(grep -o 'cov: [0-9]*' "$B/fuzz.log" | tail -1 | cut -d' ' -f2)
crashes=$(ls "$B/crashes" | grep -c -E '^(crash|leak|timeout|oom)-' || true)
echo "fuzz: $((end - start)) s, ${runs:-?} executions ($(( ${runs:-0} / (end - start + 1) ))/s), coverage ${cov:-?} edges, corpus $(ls "$WORK" | wc -l) inputs, $crashes crashes (libFuzzer exit $rc)"
if [ "$crashes" -gt 0 ] || [ $rc -ne 0 ]; then
	tail -40 "$B/fuzz.log" >&2
	exit 1
fi
