#!/bin/sh
# The wait-for graph's speed: `rspctl graph` over a window of 1M records.
# usage: bench/graph_bench.sh [RECORDS]   (builds build/release first)
#
# Prints the machine, then the driver's JSON line: query_ms_min and
# query_ms_median are the whole query as rspd runs it (pin the window, run
# the timeline into a store, build and analyse the graph, render the text
# answer), best and median of 7 runs on one core; read_ms, timeline_only_ms,
# timeline_ms (timeline + store) and graph_ms are its phases. Twice: with
# false wakeups inferred (the default), then raw (--no-annotations).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/scripts/build.sh" release >/dev/null
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 0 "$ROOT/build/release/bench/rsp-graph-bench" "${1:-1000000}"
taskset -c 0 "$ROOT/build/release/bench/rsp-graph-bench" "${1:-1000000}" raw
