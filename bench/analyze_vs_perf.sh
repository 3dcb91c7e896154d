#!/bin/sh
# rspctl analyze FILE COMMAND against perf script -i FILE > /dev/null on the
# same dump, REPEATS times each, as a ratio of medians. As root:
#   bench/analyze_vs_perf.sh FILE [REPEATS] [COMMAND...]
# COMMAND defaults to "graph" when rspctl has it, else "status --events
# --pid 1" (a full pass over the window: every record decoded and counted).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RSP_BUILD:-$ROOT/build/release}
F=${1:?usage: analyze_vs_perf.sh FILE [REPEATS] [COMMAND...]}
REP=${2:-5}
[ $# -ge 2 ] && shift 2 || shift $#
if [ $# -eq 0 ]; then
	if "$B/cli/rspctl" help graph >/dev/null 2>&1; then set -- graph; else set -- status --events --pid 1; fi
fi
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
secs() { # COMMAND...: wall seconds
	python3 -c 'import subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print("%.4f" % (time.monotonic() - t))' "$@"
}
echo "file: $F ($(du -h "$F" | cut -f1)); rspctl analyze FILE $*; $REP runs each"
: >/tmp/rsp-avp.$$.a
: >/tmp/rsp-avp.$$.p
for r in $(seq "$REP"); do
	a=$(secs "$B/cli/rspctl" analyze "$F" "$@")
	p=$(secs perf script -i "$F")
	echo "$a" >>/tmp/rsp-avp.$$.a
	echo "$p" >>/tmp/rsp-avp.$$.p
	printf 'run %d: rspctl analyze %.3f s, perf script %.3f s\n' "$r" "$a" "$p"
done
ma=$(median </tmp/rsp-avp.$$.a)
mp=$(median </tmp/rsp-avp.$$.p)
rm -f /tmp/rsp-avp.$$.a /tmp/rsp-avp.$$.p
python3 -c "import sys; a, p = float(sys.argv[1]), float(sys.argv[2]); print('median: rspctl analyze %.3f s, perf script %.3f s, ratio %.1fx' % (a, p, p / a))" "$ma" "$mp"
