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
commit, UNIX socket), and rspd --stacks none --no-hist (capture and the
window without the histograms' thread), without the kernel's statistics,
as throughput: what the smallest tracer of the two events costs pgbench on this machine, the
floor under issue 12's (BPF loss <= 4%) and issue 13's (<= 5% with stacks)
targets; with each loss a bootstrap interval over the repetitions (what the
run can tell apart on a shared host), and the machine's CPU time per
transaction (busy jiffies over transactions), which the host's contention
moves less than throughput. Its own section, "## pgbench against the BPF
floor".
"""
import argparse
import json
import os
import platform
import random
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


def cpu_times():
    """(busy, steal) jiffies of the whole machine: busy is user, nice, system,
    irq and softirq (/proc/stat's first line); steal is what the host took."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[0] + v[1] + v[2] + v[5] + v[6], v[7]


def interval(mode, base, stat, n=2000, seed=1):
    """The 5th and 95th percentiles of stat(mode's resampled runs, base's) over
    @n bootstrap resamples of the repetitions, paired: a resample takes the
    same repetitions of both, so a slow minute of the host weighs on both
    sides as it did. Deterministic (@seed)."""
    rnd = random.Random(seed)
    reps = min(len(mode), len(base))
    out = []
    for _ in range(n):
        idx = [rnd.randrange(reps) for _ in range(reps)]
        out.append(stat([mode[i] for i in idx], [base[i] for i in idx]))
    out.sort()
    return out[int(0.05 * n)], out[int(0.95 * n) - 1]


def loss(mode, base):
    return 1 - statistics.median(mode) / statistics.median(base)


def cpu_more(mode, base):
    return statistics.median(mode) / statistics.median(base) - 1


def on_pgbench(a):
    """pgbench's TPS bare, under each floor and under rspd, alternating; and the
    machine's CPU time per transaction, which the host's contention moves less."""
    # --no-hist: capture and the window without the histograms' thread (the
    # largest of rspd's own), to split what userspace costs from the programs
    modes = [pgbench.Bare(), Floor(a.build, 0), Floor(a.build, 2),
             pgbench.Rspd(a.build, "bpf", "none", ["--no-hist"]),
             pgbench.Rspd(a.build, "bpf", "none"), pgbench.Rspd(a.build, "bpf", None)]
    cluster = pgbench.Cluster(pgbench.need_postgres(), port=54341)
    tps = {m.name: [] for m in modes}
    cpu = {m.name: [] for m in modes}  # ms of CPU per transaction
    steal = {m.name: [] for m in modes}
    hz = os.sysconf("SC_CLK_TCK")
    try:
        cluster.start()
        cluster.run(5)  # warm the cache
        for rep in range(a.reps):
            for m in modes:
                m.start()
                b0, s0 = cpu_times()
                t = cluster.run(a.seconds)
                b1, s1 = cpu_times()
                m.stop()
                tps[m.name].append(t)
                cpu[m.name].append((b1 - b0) * 1000.0 / hz / max(t * a.seconds, 1))
                steal[m.name].append(100.0 * (s1 - s0) / hz / a.seconds / os.cpu_count())
                print("rep %d %-40s %8.1f tps %6.3f ms CPU/tx steal %4.1f%%"
                      % (rep + 1, m.name, t, cpu[m.name][-1], steal[m.name][-1]), flush=True)
    finally:
        cluster.stop()
    bare = statistics.median(tps["bare"])
    lines = [TITLE_PG, "",
             pgbench.setup_line("bench/bpf_floor.py", a.reps, a.seconds, " --pgbench") +
             "; no kernel.bpf_stats; modes alternate within each repetition; medians, ratios "
             "to bare from the same run; the spread is the lowest and highest of the mode's "
             "runs. The intervals are the 5th-95th percentiles over 2,000 bootstrap "
             "resamples of the repetitions (paired: the same repetitions of the mode and of "
             "bare): what the run can tell apart. CPU per transaction is the machine's busy "
             "time (user, system, irq, softirq: pgbench, PostgreSQL, rspd and the BPF "
             "programs alike) over the run's transactions; steal is the share of the CPUs "
             "the host took.", "",
             "| mode | tps | loss | loss, 90% interval | runs' spread (tps) "
             "| CPU per transaction | more CPU, 90% interval | steal |",
             "|---|---:|---:|---|---|---:|---|---:|"]
    for m in modes:
        t = statistics.median(tps[m.name])
        c = statistics.median(cpu[m.name])
        if m.name == "bare":
            li = ci = ""
        else:
            li = "%.1f%% .. %.1f%%" % tuple(100 * x for x in interval(tps[m.name], tps["bare"],
                                                                      loss))
            ci = "%+.1f%% .. %+.1f%%" % tuple(100 * x for x in interval(cpu[m.name],
                                                                        cpu["bare"], cpu_more))
        lines.append("| %s | %.1f | %.1f%% | %s | %.0f-%.0f | %.3f ms (%+.1f%%) | %s | %.1f%% |"
                     % (m.name, t, 100 * (1 - t / bare), li, min(tps[m.name]),
                        max(tps[m.name]), c, 100 * cpu_more(cpu[m.name], cpu["bare"]), ci,
                        statistics.median(steal[m.name])))
    pgbench.report(lines, a.out, TITLE_PG, a.no_write)


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
    pgbench.report(lines, a.out, TITLE, a.no_write)


if __name__ == "__main__":
    main()
