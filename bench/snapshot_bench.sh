#!/bin/sh
# The recursive snapshot's speed: `rspctl snapshot PID` over a window of 1M
# records, symbol cache warm.
# usage: bench/snapshot_bench.sh [RECORDS]   (builds build/release first)
#
# Prints the machine, then the driver's JSON line: query_ms_min and
# query_ms_median are the whole query as rspd runs it (pin the window, run
# the timeline into a full store and index the cpu-clock samples, build the
# chain, render the text answer with symbols), best and median of 7 runs on
# one core after one run that warms the symbol cache; load_ms (timeline,
# store, samples), chain_ms and render_ms are its phases.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/scripts/build.sh" release >/dev/null
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 0 "$ROOT/build/release/bench/rsp-snapshot-bench" "${1:-1000000}"
