#!/bin/sh
# Flight-recorder benchmark: dump a full window, and what dumping costs the
# capture. As root, from a release build:
#   bench/dump.sh [REPEATS] [WINDOW]        (defaults: 5, 64M)
#
# 1. rspd with --window WINDOW; pipe_pingpong on both CPUs until the window
#    has evicted chunks (it is full).
# 2. REPEATS dumps of the whole window (rspctl dump --json -o): time, size.
# 3. Capture while dumping: REPEATS runs of pipe_pingpong 100000 on CPU 0
#    alone, then REPEATS runs with dumps back to back during the run; the
#    round-trip rate of each, and the records lost/dropped by rspd (its
#    status counters) across each phase.
# Prints one line per measurement and a summary; numbers go to BENCHMARKS.md.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RSP_BUILD:-$ROOT/build/release}
REP=${1:-5}
WIN=${2:-64M}
T=$(mktemp -d /tmp/rsp-bench-dump.XXXXXX)
SOCK=$T/rspd.sock
RSPD_PID=
cleanup() {
	[ -n "$RSPD_PID" ] && kill -INT "$RSPD_PID" 2>/dev/null && wait "$RSPD_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ctl() { "$B/cli/rspctl" --socket "$SOCK" "$@"; }
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

"$B/daemon/rspd" --foreground --socket "$SOCK" --window "$WIN" --dump-dir "$T/dumps" \
	>"$T/rspd.log" 2>&1 &
RSPD_PID=$!
i=0
while ! ctl status >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); [ $i -lt 100 ] || exit 1; done

echo "== filling a $WIN window"
while [ "$(ctl status --json | jget 'd["window"]["evicted_chunks"]')" -eq 0 ]; do
	"$B/workloads/pipe_pingpong" 50000 0 >/dev/null &
	w0=$!
	"$B/workloads/pipe_pingpong" 50000 1 >/dev/null
	wait "$w0"
done
ctl status --json | jget '"window: %.1f MiB, %d records, %.2f s" % (d["window"]["bytes"]/2**20, d["window"]["records"], d["window"]["span_s"])'

echo "== dump of the full window, $REP times"
for r in $(seq "$REP"); do
	ctl dump --json -o "$T/full.perf.data" |
		jget '"dump %.0f ms  %.1f MiB  %d records  %d processes" % (d["write_s"]*1e3, d["bytes"]/2**20, d["records"], d["processes"])'
done
cp "$T/full.perf.data" "${RSP_BENCH_KEEP:-/dev/null}" 2>/dev/null || true

lost() { ctl status --json | jget 'd["lost"] + d["window"]["dropped"]'; }
rate() { "$B/workloads/pipe_pingpong" 100000 0 | jget '"%.0f" % (d["round_trips"] / d["elapsed_s"])'; }

echo "== capture without dumps: pipe_pingpong 100000 on CPU 0, $REP runs"
l0=$(lost)
for r in $(seq "$REP"); do echo "quiet $(rate) round trips/s"; done
l1=$(lost)
echo "records lost or dropped: $((l1 - l0))"

echo "== capture while dumping back to back, $REP runs"
for r in $(seq "$REP"); do
	touch "$T/dumping"
	(n=0; while [ -e "$T/dumping" ]; do ctl dump -o "$T/bg.perf.data" >/dev/null; n=$((n + 1)); done; echo "$n" >"$T/n") &
	dp=$!
	x=$(rate)
	rm -f "$T/dumping"
	wait "$dp"
	echo "dumping $x round trips/s ($(cat "$T/n") dumps during the run)"
done
l2=$(lost)
echo "records lost or dropped: $((l2 - l1))"
ctl status --json | jget '"rspd: %.2f s CPU, RSS %.1f MiB" % (d["cpu_seconds"], d["rss_bytes"]/2**20)'
