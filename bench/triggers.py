#!/usr/bin/python3
"""What evaluating triggers costs (issue 41): rspd's CPU at the pgbench load
of bench/pgbench_split.py (bench/pgbench.py's cluster: pgbench -c 4 -j 2,
scale 10, synchronous_commit on) with no trigger and with 100 triggers, in
alternating runs.

The 100 triggers are of the kinds the histogram thread evaluates (the
costly ones: one collection over the profiles' slices each second each):
hist conditions on syscall, off-CPU, run-queue and block profiles of the
whole system and of `comm postgres`, runnable and offcpu, over 1 to 60 s,
thresholds that never hold (no dump is written: the cost measured is the
evaluation's). rspd runs --capture bpf with the syscall family, so that
syscall:* conditions read real profiles.

Measured for S seconds in the middle of each run: rspd's CPU (all threads,
/proc/PID/task/*/stat), its histogram thread's (rspd-hist) alone, and tps.

usage: sudo bench/triggers.py [--reps N] [--seconds S] [--build DIR]
                              [--out FILE | --no-write]
Writes the section "## Triggers: the cost of 100 conditions" of BENCHMARKS.md.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import pgbench  # noqa: E402
from pgbench_split import threads  # noqa: E402

TITLE = "## Triggers: the cost of 100 conditions (issue 41)"
OPS = ["syscall:fsync", "syscall:read", "syscall:write", "syscall:pwrite64", "offcpu:block_io",
       "offcpu:lock", "offcpu:network", "runq", "blk_service", "syscall:sendto"]
SUBJECTS = ["", " comm postgres"]
STATS = ["p99 > 10s", "p999 > 20s", "max > 30s", "count > 1000000/s"]


def conditions(n):
    """@n conditions that never hold, of the kinds the histogram thread reads."""
    out = []
    i = 0
    while len(out) < n:
        op, subj = OPS[i % len(OPS)], SUBJECTS[(i // len(OPS)) % 2]
        stat = STATS[(i // (2 * len(OPS))) % len(STATS)]
        out.append("hist %s%s %s over %ds" % (op, subj, stat, 1 + (i * 7) % 60))
        i += 1
    if n >= 2:
        out[-2:] = ["runnable > 30s", "offcpu 1 block_io > 99% over 10s"]
    return out


def run(a, cluster, n):
    rspd = pgbench.Rspd(a.build, "bpf", None, ["--families", "+syscall"])
    rspd.start()
    for k, cond in enumerate(conditions(n)):
        pgbench.sh([os.path.join(a.build, "cli", "rspctl"), "--socket", rspd.sock, "trigger",
                    "add", "t%d" % k, cond, "--action", "log"], check=True)
    res = {}
    load = threading.Thread(target=lambda: res.setdefault("tps", cluster.run(a.seconds + 6)))
    load.start()
    time.sleep(3)
    hz = os.sysconf("SC_CLK_TCK")
    t0, w0 = threads(rspd.p.pid), time.time()
    time.sleep(a.seconds)
    t1, w1 = threads(rspd.p.pid), time.time()
    fires = sum(x["fires"] for x in rspd.ctl("trigger", "list")["triggers"])
    load.join()
    rspd.stop()
    el = w1 - w0
    cpu = {}
    for tid, (name, j) in t1.items():
        cpu[name] = cpu.get(name, 0) + (j - t0.get(tid, (name, 0))[1]) / hz / el
    return {"tps": res.get("tps", 0), "rspd": sum(cpu.values()), "hist": cpu.get("rspd-hist", 0),
            "fires": fires}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--triggers", type=int, default=100)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench/triggers.py: run as root (rspd)")
    cluster = pgbench.Cluster(pgbench.need_postgres(), port=54346)
    runs = {0: [], a.triggers: []}
    try:
        cluster.start()
        cluster.run(5)  # warm the cache
        for _ in range(a.reps):
            for n in runs:
                runs[n].append(run(a, cluster, n))
    finally:
        cluster.stop()
    lines = [TITLE, "",
             "Command: `sudo bench/triggers.py --reps %d --seconds %d` (%s). Machine: %s, %d "
             "CPUs, kernel %s. pgbench -c 4 -j 2, scale 10, synchronous_commit on, under rspd "
             "--capture bpf --families +syscall; rspd's CPU over %d s in the middle of each "
             "run, runs alternating; medians of %d. The %d triggers: hist conditions on "
             "syscall, off-CPU, run-queue and block profiles (system and comm postgres), "
             "runnable and offcpu, that never hold (their evaluation, not dumps)."
             % (a.reps, a.seconds, time.strftime("%Y-%m-%d"), platform.node(), os.cpu_count(),
                platform.release(), a.seconds, a.reps, a.triggers), "",
             "| triggers | rspd, share of a CPU | of it rspd-hist | tps | fires |",
             "|---:|---:|---:|---:|---:|"]
    for n, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("rspd", "hist", "tps")}
        lines.append("| %d | %.2f%% (%s) | %.2f%% | %.0f | %d |"
                     % (n, 100 * med["rspd"], ", ".join("%.2f" % (100 * r["rspd"]) for r in rs),
                        100 * med["hist"], med["tps"], sum(r["fires"] for r in rs)))
    pgbench.report(lines, a.out, TITLE, a.no_write)


if __name__ == "__main__":
    main()
