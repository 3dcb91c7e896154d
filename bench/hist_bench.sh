#!/bin/sh
# The latency profiles' costs. As root, from a release build:
#   bench/hist_bench.sh [REPEATS]           (default 7)
#
# 1. One histogram update (rsp-hist-bench, r=1 and r=2): the target is
#    <= 20 ns per profile.
# 2. The feed that rspd's analysis thread runs over every record (block,
#    irq and softirq spans, and the timeline for off-CPU and run-queue
#    times), on real records: rspd records `perf bench sched messaging`
#    and `pipe_pingpong`, dumps its window, and `rspctl analyze FILE hist`
#    (which loads the file and feeds every record) is timed against
#    `rspctl analyze FILE status` (which only loads it). The difference
#    over the records is the feed's cost per record, on one core; median
#    of REPEATS runs each.
# The on/off overhead of rspd with histograms under load is in
# bench/capture.py --hist. Numbers go to BENCHMARKS.md.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RSP_BUILD:-$ROOT/build/release}
REP=${1:-7}
T=$(mktemp -d /tmp/rsp-bench-hist.XXXXXX)
SOCK=$T/rspd.sock
RSPD_PID=
cleanup() {
	[ -n "$RSPD_PID" ] && kill -INT "$RSPD_PID" 2>/dev/null && wait "$RSPD_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ctl() { "$B/cli/rspctl" --socket "$SOCK" "$@"; }
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== update cost (rsp-hist-bench --reps 9)"
for r in 1 2; do
	taskset -c 0 "$B/bench/rsp-hist-bench" --reps 9 --resolution $r
done

echo "== feed cost on real records"
"$B/daemon/rspd" --foreground --socket "$SOCK" --window 256M --dump-dir "$T/dumps" \
	>"$T/rspd.log" 2>&1 &
RSPD_PID=$!
i=0
while ! ctl status >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); [ $i -lt 100 ] || exit 1; done
perf bench sched messaging -l 200 >/dev/null 2>&1 || true
"$B/workloads/pipe_pingpong" 100000 0 >/dev/null
"$B/workloads/sleep_two_peaks" 100 >/dev/null
sleep 0.5
FILE=$T/window.perf.data
ctl dump -o "$FILE" --json >"$T/dump.json"
echo "dump: $(jget 'd["records"]' <"$T/dump.json") records over $(jget '"%.2f" % d["span_s"]' <"$T/dump.json") s"

# Median wall time of REPEATS runs of rspctl analyze FILE ARGS, on CPU 0.
timed() {
	python3 - "$REP" "$B/cli/rspctl" "$FILE" "$@" <<'EOF'
import subprocess, sys, time
rep, ctl, f, args = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
ts = []
for _ in range(rep):
    t0 = time.monotonic()
    subprocess.run(["taskset", "-c", "0", ctl, "analyze", f] + args, check=True,
                   stdout=subprocess.DEVNULL)
    ts.append(time.monotonic() - t0)
print("%.4f" % sorted(ts)[len(ts) // 2])
EOF
}
LOAD=$(timed status)
FEED=$(timed hist --top 1)
RECORDS=$(jget 'd["records"]' <"$T/dump.json")
echo "analyze status (load only): $LOAD s; analyze hist (load + feed + answer): $FEED s"
python3 -c "import sys; l,f,n=float(sys.argv[1]),float(sys.argv[2]),int(sys.argv[3]); print('feed: %.0f ns per record (%d records), %.2f M records/s on one core' % ((f-l)/n*1e9, n, n/(f-l)/1e6))" "$LOAD" "$FEED" "$RECORDS"
ctl hist --op offcpu --op runq --top 5 | sed -n '1,12p'
