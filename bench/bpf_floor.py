#!/usr/bin/python3
"""What rsp's BPF scheduler programs cost above the floor of any BPF
scheduler tracer on this kernel.

usage: sudo bench/bpf_floor.py [--reps N] [--loops N] [--build DIR] [--out FILE | --no-write]
       sudo bench/bpf_floor.py --pgbench [--reps N] [--seconds S] [--build DIR] [--out FILE | --no-write]

Under `perf bench sched pipe` pinned to CPU 0, with kernel.bpf_stats_enabled
(the kernel times each program run: two clock reads more per run, in every
mode alike), each mode's sched_switch and sched_waking programs' mean run
time (run_time_ns / run_cnt, bpftool) and the pipe's time per round trip:

  floor 0   empty programs (rsp-bench-sched-floor 0): the cost of a
            tp_btf program being there, and of the statistics themselves
  floor 1   the clock read (bpf_ktime_get_ns), nothing else
  floor 2   a 40-byte record per event into one BPF ring buffer, drained
            every 50 ms: the smallest useful tracer (bpf/sched_floor.bpf.c)
  rspd --capture bpf --stacks none, and rspd's default (stacks cached)

Modes alternate within each repetition; figures are medians. Writes the
section "## BPF scheduler programs against the floor" of BENCHMARKS.md in
place; the hand-written reading of it is a section of its own after it.

--pgbench: the same floors and rspd's two policies under a real database
instead (bench/pgbench.py's cluster and load: pgbench -c 4 -j 2, synchronous
commit, UNIX socket), without the kernel's statistics, as throughput: what
the smallest tracer of the two events costs pgbench on this machine, the
floor under issue 12's (BPF loss <= 4%) and issue 13's (<= 5% with stacks)
targets. Its own section, "## pgbench against the BPF floor".
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import pgbench  # noqa: E402  (its Rspd: rspd on a private socket; its in-place write_section)

TITLE = "## BPF scheduler programs against the floor (issues 12, 13)"
TITLE_PG = "## pgbench against the BPF floor (issues 12, 13)"
SWITCH, WAKING = "sched_switch", "sched_waking"


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


# Program names as bpftool shows them (15 characters of rsp's) -> what they trace.
FLOOR_PROGS = {"rsp_floor_sched_switch": SWITCH, "rsp_floor_sched_waking": WAKING}
RSP_PROGS = {"rsp_sched_switc": SWITCH, "rsp_sched_switch": SWITCH,
             "rsp_sched_wakin": WAKING, "rsp_sched_waking": WAKING}


class Floor:
    def __init__(self, build, level):
        self.build, self.level = build, level
        self.name = "floor %d (%s)" % (level, ("empty programs", "the clock read",
                                               "a 40-byte record, one BPF ring")[level])

    def start(self):
        self.p = subprocess.Popen([os.path.join(self.build, "bench", "rsp-bench-sched-floor"),
                                   str(self.level)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        line = self.p.stderr.readline()
        if "ready" not in line:
            sys.exit("bench/bpf_floor.py: the floor programs did not load: %s" % line.strip())

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=30)


def prog_stats():
    out = sh(["bpftool", "prog", "show", "--json"]).stdout
    return {p["id"]: p for p in json.loads(out or "[]")}


def run(mode, progs, loops):
    """(switch ns per run, waking ns per run, pipe us per round trip); @progs:
    the mode's program names -> SWITCH or WAKING."""
    mode.start()
    time.sleep(1.0)
    before = prog_stats()
    p = sh(["taskset", "-c", "0", "perf", "bench", "sched", "pipe", "-l", str(loops)])
    after = prog_stats()
    mode.stop()
    us = None
    for line in p.stdout.splitlines():
        if "usecs/op" in line:
            us = float(line.split()[0])
    ns = {}
    for pid, a in after.items():
        what = progs.get(a.get("name", ""))
        if not what:
            continue
        b = before.get(pid, {})
        runs = a.get("run_cnt", 0) - b.get("run_cnt", 0)
        if runs:
            ns[what] = (a.get("run_time_ns", 0) - b.get("run_time_ns", 0)) / runs
    if us is None or SWITCH not in ns or WAKING not in ns:
        sys.exit("bench/bpf_floor.py: %s: no figure (pipe: %s; programs: %s)"
                 % (mode.name, p.stdout.strip()[-200:], ns))
    return ns[SWITCH], ns[WAKING], us


def on_pgbench(a):
    """pgbench's TPS bare, under each floor and under rspd, alternating."""
    modes = [pgbench.Bare(), Floor(a.build, 0), Floor(a.build, 2),
             pgbench.Rspd(a.build, "bpf", "none"), pgbench.Rspd(a.build, "bpf", None)]
    tps, _ = pgbench.alternate(pgbench.Cluster(pgbench.need_postgres(), port=54341), modes,
                               a.reps, a.seconds)
    bare = statistics.median(tps["bare"])
    lines = [TITLE_PG, "",
             pgbench.setup_line("bench/bpf_floor.py", a.reps, a.seconds, " --pgbench") +
             "; no kernel.bpf_stats; modes alternate within each repetition; medians, ratios "
             "to bare from the same run; the spread is the lowest and highest of the mode's "
             "runs.", "",
             "| mode | tps | loss | runs' spread (tps) |", "|---|---:|---:|---|"]
    for m in modes:
        t = statistics.median(tps[m.name])
        lines.append("| %s | %.1f | %.1f%% | %.0f-%.0f |"
                     % (m.name, t, 100 * (1 - t / bare), min(tps[m.name]), max(tps[m.name])))
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_write:
        pgbench.write_section(a.out, text, TITLE_PG)
        print("wrote %s" % a.out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--loops", type=int, default=200000, help="sched pipe round trips per run")
    ap.add_argument("--pgbench", action="store_true", help="pgbench instead of sched pipe")
    ap.add_argument("--seconds", type=int, default=10, help="--pgbench: seconds per run")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench/bpf_floor.py: run as root (BPF programs and their statistics)")
    if a.pgbench:
        return on_pgbench(a)
    modes = [(Floor(a.build, 0), FLOOR_PROGS), (Floor(a.build, 1), FLOOR_PROGS),
             (Floor(a.build, 2), FLOOR_PROGS), (pgbench.Rspd(a.build, "bpf", "none"), RSP_PROGS),
             (pgbench.Rspd(a.build, "bpf", None), RSP_PROGS)]
    old = sh(["sysctl", "-n", "kernel.bpf_stats_enabled"]).stdout.strip() or "0"
    res = {m.name: [] for m, _ in modes}
    bare = []
    sh(["sysctl", "-q", "-w", "kernel.bpf_stats_enabled=1"])
    try:
        for rep in range(a.reps):
            p = sh(["taskset", "-c", "0", "perf", "bench", "sched", "pipe", "-l", str(a.loops)])
            bare += [float(l.split()[0]) for l in p.stdout.splitlines() if "usecs/op" in l]
            for m, progs in modes:
                res[m.name].append(run(m, progs, a.loops))
                print("rep %d %-40s switch %4.0f ns  waking %4.0f ns  pipe %.2f us"
                      % ((rep + 1, m.name) + res[m.name][-1]), flush=True)
    finally:
        sh(["sysctl", "-q", "-w", "kernel.bpf_stats_enabled=" + old])

    def med(name, i):
        return statistics.median(r[i] for r in res[name])

    top = modes[2][0].name
    lines = [TITLE, "",
             "Command: `sudo bench/bpf_floor.py --reps %d --loops %d` (%s). Machine: %s, %d CPUs, "
             "kernel %s. `taskset -c 0 perf bench sched pipe -l %d` under each mode, "
             "kernel.bpf_stats_enabled=1 (each run timed by the kernel: two clock reads more per "
             "run in every mode); a program's figure is its run_time_ns / run_cnt over the "
             "run; modes alternate within each repetition; medians. Bare sched pipe: %.2f us "
             "per round trip."
             % (a.reps, a.loops, time.strftime("%Y-%m-%d"), platform.node(), os.cpu_count(),
                platform.release(), a.loops, statistics.median(bare) if bare else 0), "",
             "| mode | sched_switch ns/run | sched_waking ns/run | over floor 2 (switch, waking) "
             "| sched pipe us/op |",
             "|---|---:|---:|---:|---:|"]
    for m, _ in modes:
        s, w, us = med(m.name, 0), med(m.name, 1), med(m.name, 2)
        lines.append("| %s | %.0f | %.0f | %+.0f, %+.0f | %.2f |"
                     % (m.name, s, w, s - med(top, 0), w - med(top, 1), us))
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_write:
        # in place: the hand-written section that follows it stays after it
        pgbench.write_section(a.out, text, TITLE)
        print("wrote %s" % a.out)


if __name__ == "__main__":
    main()
