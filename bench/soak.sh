#!/bin/sh
# Soak test: rspd runs for MINUTES (default 10) while `perf bench sched
# messaging` runs in a loop (400 tasks passing messages: about 100k
# scheduler records per second on this 2-CPU machine) and a client asks
# every query type in turn, in a loop (status, status --pid/--events, top,
# top --stacks, graph, graph --no-merge --json, net, snapshot, hist, dump).
# Every 10 s the script records rspd's RSS (VmRSS from /proc), the window's
# size and span, the record rate, what was lost and the queries answered.
# RSS must stay within window + rings + histograms + --query-memory +
# 16 MiB at every sample (one query runs at a time; rings: the perf rings,
# and under the BPF backend its 1 MiB rings, mapped twice; the 16 MiB
# cover the heap, libraries and thread stacks).
#
# usage: bench/soak.sh [MINUTES] [BUILD_DIR]   (as root)
# Prints a Markdown table (the series for BENCHMARKS.md) and a verdict line;
# exits 1 if the bound was exceeded, a query failed otherwise than by
# naming --query-memory, or rspd died.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MINUTES=${1:-10}
BUILD=${2:-$ROOT/build/release}
WINDOW_MIB=64
QUERY_MIB=256 # --query-memory auto at a 64M window
INTERVAL=10
RSPCTL=$BUILD/cli/rspctl

tmp=$(mktemp -d /tmp/rsp-soak.XXXXXX)
sock=$tmp/rspd.sock
: >"$tmp/empty.conf"
"$BUILD/daemon/rspd" --foreground --config "$tmp/empty.conf" --socket "$sock" \
	--window ${WINDOW_MIB}M --query-memory ${QUERY_MIB}M --dump-dir "$tmp/dumps" \
	--dump-keep 1 >"$tmp/rspd.log" 2>&1 &
rspd=$!
load=""
queries=""
cleanup() {
	[ -n "$load" ] && kill "$load" 2>/dev/null || true
	[ -n "$queries" ] && kill "$queries" 2>/dev/null || true
	kill -INT "$rspd" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$sock" ] || { cat "$tmp/rspd.log" >&2; echo "soak: rspd did not start" >&2; exit 1; }

# The load: perf bench in a loop until this script stops it.
(
	trap 'exit 0' TERM
	while :; do perf bench sched messaging -l 200 >/dev/null 2>&1 || sleep 1; done
) &
load=$!

# Every query type in turn, one at a time; each outcome is a line in a
# file: ok, budget (refused, naming --query-memory) or failed.
ask() {
	if "$RSPCTL" --socket "$sock" "$@" >/dev/null 2>"$tmp/q.err"; then
		echo ok
	elif grep -q -- "--query-memory" "$tmp/q.err"; then
		echo budget
	else
		echo "failed: $* : $(cat "$tmp/q.err")" >&2
		echo failed
	fi
}
(
	trap 'exit 0' TERM
	while :; do
		ask status
		ask status --pid "$rspd"
		ask status --events
		ask top
		ask top --stacks 10 --limit 0
		ask graph
		ask graph --format json --no-merge
		ask net
		ask snapshot "$rspd" --last 10s
		ask hist
		ask dump --last 2s
	done >>"$tmp/outcomes" 2>>"$tmp/failures"
) &
queries=$!

echo "| t (s) | RSS (MiB) | bound (MiB) | window (MiB) | histograms (MiB) | window span (s) | records/s | lost (total) | queries ok | over budget | failed |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
end=$(($(date +%s) + MINUTES * 60))
t0=$(date +%s)
max=0
fail=0
while [ "$(date +%s)" -lt "$end" ]; do
	sleep $INTERVAL
	if ! kill -0 "$rspd" 2>/dev/null; then
		echo "soak: rspd died" >&2
		cat "$tmp/rspd.log" >&2
		exit 1
	fi
	rss_kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$rspd/status")
	"$RSPCTL" --socket "$sock" status --json >"$tmp/st.json" 2>/dev/null || echo '{}' >"$tmp/st.json"
	touch "$tmp/outcomes"
	line=$(python3 - "$tmp/st.json" "$rss_kb" "$(($(date +%s) - t0))" "$tmp/outcomes" \
		"$QUERY_MIB" <<'PY'
import json, sys
path, rss_kb, t, outcomes, query_mib = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
o = open(outcomes).read().split()
ok, budget, failed = o.count("ok"), o.count("budget"), o.count("failed")
try:
    st = json.load(open(path))
    w, cpus = st["window"], len(st["cpus"])
    rings = cpus * (st["config"]["ring_pages"] + 1) * 4096
    if st["config"]["capture"] == "bpf":
        rings += cpus * 2 * (1 << 20)
    hist = st["hist"]["bytes"] if st.get("hist") else 0
    bound = w["budget_bytes"] + rings + hist + (query_mib << 20) + (16 << 20)
    over = rss_kb * 1024 > bound
    print("%d | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %d | %d | %d | %d |" % (
        over or failed > 0, t, rss_kb / 1024, bound / 2**20, w["bytes"] / 2**20, hist / 2**20,
        w["span_s"], st["records_per_s"], st["lost"], ok, budget, failed))
except Exception:
    print("1 | %s | %.1f | - | - | - | - | - | - | %d | %d | %d |" % (t, rss_kb / 1024, ok, budget, failed))
PY
	)
	echo "| ${line#* | }"
	[ "${line%% *}" = 0 ] || fail=1
	mib=$((rss_kb / 1024))
	[ "$mib" -gt "$max" ] && max=$mib
done
if [ "$fail" -eq 0 ]; then
	echo "soak: PASS: ${MINUTES} min, peak RSS ${max} MiB within window + rings + histograms + query-memory ${QUERY_MIB} MiB + 16 MiB; every query answered or refused by its budget"
else
	echo "soak: FAIL: peak RSS ${max} MiB over window + rings + histograms + query-memory + 16 MiB at a sample, status failed, or a query failed:"
	head -5 "$tmp/failures" 2>/dev/null || true
	exit 1
fi
