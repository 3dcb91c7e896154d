#!/bin/sh
# Soak test: rspd runs for MINUTES (default 10) while `perf bench sched
# messaging` runs in a loop (400 tasks passing messages: about 100k
# scheduler records per second on this 2-CPU machine); every 10 s the
# script records rspd's RSS (VmRSS from /proc), the window's size and span,
# the record rate and what was lost. RSS must stay flat: at most the window
# budget + 16 MiB at every sample (the rings are mapped on top of the
# window; the 16 MiB covers them, the heap, libraries and query buffers).
#
# usage: bench/soak.sh [MINUTES] [BUILD_DIR]   (as root)
# Prints a Markdown table (the series for BENCHMARKS.md) and a verdict line;
# exits 1 if the budget was exceeded or rspd died.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MINUTES=${1:-10}
BUILD=${2:-$ROOT/build/release}
WINDOW_MIB=64
LIMIT_MIB=$((WINDOW_MIB + 16))
INTERVAL=10

tmp=$(mktemp -d /tmp/rsp-soak.XXXXXX)
sock=$tmp/rspd.sock
: >"$tmp/empty.conf"
"$BUILD/daemon/rspd" --foreground --config "$tmp/empty.conf" --socket "$sock" \
	--window ${WINDOW_MIB}M >"$tmp/rspd.log" 2>&1 &
rspd=$!
load=""
cleanup() {
	[ -n "$load" ] && kill "$load" 2>/dev/null || true
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

echo "| t (s) | RSS (MiB) | window (MiB) | window span (s) | records/s | lost (total) | queries ok |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
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
	ok=0
	# A query per sample: the server's memory is part of what must stay flat.
	if "$BUILD/cli/rspctl" --socket "$sock" status --json >"$tmp/st.json" 2>/dev/null; then
		ok=1
	fi
	python3 - "$tmp/st.json" "$rss_kb" "$(($(date +%s) - t0))" "$ok" <<'PY'
import json, sys
path, rss_kb, t, ok = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    st = json.load(open(path))
    w = st["window"]
    print("| %s | %.1f | %.1f | %.1f | %.0f | %d | %s |" % (t, rss_kb / 1024, w["bytes"] / 2**20,
          w["span_s"], st["records_per_s"], st["lost"], ok))
except Exception:
    print("| %s | %.1f | - | - | - | - | 0 |" % (t, rss_kb / 1024))
PY
	mib=$((rss_kb / 1024))
	[ "$mib" -gt "$max" ] && max=$mib
	[ "$mib" -gt "$LIMIT_MIB" ] && fail=1
	[ "$ok" -eq 1 ] || fail=1
done
if [ "$fail" -eq 0 ]; then
	echo "soak: PASS: ${MINUTES} min, peak RSS ${max} MiB <= window ${WINDOW_MIB} MiB + 16 MiB"
else
	echo "soak: FAIL: peak RSS ${max} MiB (limit ${LIMIT_MIB} MiB) or a query failed"
	exit 1
fi
