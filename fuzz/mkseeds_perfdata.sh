#!/bin/sh
# Make the fuzz seed corpus from real dumps, small enough to commit:
#   usage: tests/fuzz/mkseeds.sh BUILD_DIR OUT_DIR     (as root)
# rspd runs in its own PID namespace so that its process model holds only
# itself and the workload (a few records, not the machine's hundreds), with
# few families and a short --last. Plus a small file perf record wrote.
set -eu
B=${1:?usage: mkseeds.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: mkseeds.sh BUILD_DIR OUT_DIR}
mkdir -p "$OUT"
T=$(mktemp -d /tmp/rsp-seeds.XXXXXX)
trap 'rm -rf "$T"' EXIT

seed() { # NAME RSPD-OPTIONS...
	name=$1
	shift
	unshare --pid --fork --mount-proc --kill-child=SIGINT \
		"$B/daemon/rspd" --foreground --socket "$T/s.sock" --window 1M "$@" \
		>"$T/rspd.log" 2>&1 &
	pid=$!
	i=0
	while [ ! -S "$T/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	"$B/workloads/pipe_pingpong" 20 0 >/dev/null
	"$B/cli/rspctl" --socket "$T/s.sock" dump --last 30ms -o "$OUT/$name" >/dev/null
	# unshare holds on to TERM and INT: stop rspd itself, its only child.
	kill -INT "$(pgrep -P "$pid")"
	wait "$pid" || true
	rm -f "$T/s.sock"
}

seed sleeps.perf.data --families sched,sideband --freq 0
seed sampled.perf.data --families sched,irq,timer --stacks sampled:2 --freq 0
# rsp's RSP_HOST section (boot id, socket table) with sockets: rspctl merge's input
seed rsp_host.perf.data --families sched,net --freq 0
# rsp's RSP_CGROUPS section (each process's cgroup and namespaced pid); a dump
# of a window with no records has none: --last must cover pipe_pingpong
seed rsp_cgroups.perf.data --families sched,sideband --freq 0
perf record -q -o "$T/perf.data" -e sched:sched_switch -e sched:sched_waking -- \
	"$B/workloads/pipe_pingpong" 5 0 >/dev/null
cp "$T/perf.data" "$OUT/perf-record.perf.data"
ls -l "$OUT"
