#!/usr/bin/python3
"""What the syscall family (per-syscall latency profiles counted in the
kernel, issue 16) costs: PostgreSQL's pgbench (bench/pgbench.py's cluster,
4 clients) bare, under rspd --capture bpf without syscall programs, with
the family on (per-thread profiles), and with rspd's default (the
system's profile per syscall number, issue 35); and a tight getppid() loop
(bench/getppid_loop.c) in the same modes, reported in ns per system call. Modes alternate within each
repetition; figures are medians; ratios to bare from the same run.

Target (issue 16): the family on costs pgbench at most 2 points of TPS
more than rspd without it.

usage: sudo bench/syscalls.py [--reps N] [--seconds S] [--calls N] [--build DIR] [--out FILE]
Writes its section of BENCHMARKS.md (replacing an older one of the same title).
"""
import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from capture import Bare  # noqa: E402
from pgbench import Cluster, Rspd, need_postgres, write_section  # noqa: E402

TITLE = "## Syscall profiles: what the syscall family costs (issue 16)"
# rspd's default families without syscall (libc is off by default too)
NO_SYSCALL = "sched,block,irq,timer,sample,net,sideband"


class Family(Rspd):
    """rspd --capture bpf with the syscall family on or off; checks which it got."""

    def __init__(self, build, on):
        super().__init__(build, "bpf", "cached",
                         ["--families", "+syscall"] if on == "thread" else
                         ["--families", NO_SYSCALL, "--syscall-system"] if on == "system"
                         else ["--families", NO_SYSCALL])
        self.on = on != "off"
        self.name = {"off": "rspd bpf, no syscall programs",
                     "system": "rspd bpf, --syscall-system",
                     "thread": "rspd bpf, syscall family on"}[on]

    def start(self):
        super().start()
        fam = [f for f in self.ctl("status")["families"] if f["name"] == "syscall"][0]
        if fam["enabled"] != self.on:
            self.stop()
            sys.exit("bench/syscalls.py: the syscall family is %s, wanted %s: %s"
                     % ("on" if fam["enabled"] else "off", "on" if self.on else "off",
                        fam.get("note", "")))


class Floor(Family):
    """rspd without syscall programs, plus empty BPF programs on sys_enter,
    sys_exit and sched_switch (rsp-bench-sc-floor): what any BPF syscall
    profiler costs on this kernel before it does any work."""

    def __init__(self, build):
        super().__init__(build, "off")
        self.floor = os.path.join(build, "bench", "rsp-bench-sc-floor")
        self.name = "rspd bpf, family off, empty syscall programs"

    def start(self):
        super().start()
        # self.p is rspd's (the runner's): the empty programs' process has its own name
        self.fp = subprocess.Popen([self.floor, "--switch"], stderr=subprocess.PIPE, text=True)
        line = self.fp.stderr.readline()
        if "ready" not in line:
            super().stop()
            sys.exit("bench/syscalls.py: the empty programs did not attach: " + line)

    def stop(self):
        self.fp.send_signal(signal.SIGINT)
        self.fp.wait(timeout=30)
        return super().stop()


def getppid(build, calls):
    p = subprocess.run([os.path.join(build, "bench", "rsp-bench-getppid"), str(calls)],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)["ns_per_call"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=5000000)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench/syscalls.py: run as root (rspd loads BPF programs)")
    cluster = Cluster(need_postgres())
    modes = [Bare(), Family(a.build, "off"), Floor(a.build), Family(a.build, "thread"),
             Family(a.build, "system")]
    tps = {m.name: [] for m in modes}
    ns = {m.name: [] for m in modes}
    try:
        cluster.start()
        cluster.run(min(5, a.seconds))  # warm the cache
        for rep in range(a.reps):
            for m in modes:
                m.start()
                t = cluster.run(a.seconds)
                c = getppid(a.build, a.calls)
                m.stop()
                tps[m.name].append(t)
                ns[m.name].append(c)
                print("rep %d %-32s %8.1f tps %8.1f ns/getppid" % (rep + 1, m.name, t, c),
                      flush=True)
    finally:
        cluster.stop()
    med = {m.name: (statistics.median(tps[m.name]), statistics.median(ns[m.name]))
           for m in modes}
    bare_tps, bare_ns = med["bare"]
    off_tps, off_ns = med[modes[1].name]
    floor_tps, floor_ns = med[modes[2].name]
    on_tps, on_ns = med[modes[3].name]
    lines = [TITLE, "",
             "Command: `sudo bench/syscalls.py --reps %d --seconds %d --calls %d` (%s). "
             "Machine: %s, %d CPUs, kernel %s. pgbench -c 4 -j 2 -T %d, scale 10, "
             "synchronous_commit on; then %d getppid() calls in a tight loop; modes "
             "alternate within each repetition, figures are medians, ratios to bare from "
             "the same run."
             % (a.reps, a.seconds, a.calls, time.strftime("%Y-%m-%d"), platform.node(),
                os.cpu_count(), platform.release(), a.seconds, a.calls), "",
             "| mode | pgbench tps | ratio to bare | ns per getppid |", "|---|---|---|---|"]
    for m in modes:
        t, c = med[m.name]
        lines.append("| %s | %.1f | %.3f | %.1f |" % (m.name, t, t / bare_tps, c))
    pts = 100 * (off_tps - on_tps) / bare_tps
    # Modes alternate within each repetition, so each repetition gives one
    # paired difference (family off minus on, in points of that repetition's
    # bare): the machine's drift between repetitions, larger than the cost,
    # cancels in it. A verdict needs two thirds of the pairs on one side.
    pairs = sorted(100 * (o - n) / b for b, o, n in
                   zip(tps["bare"], tps[modes[1].name], tps[modes[3].name]))
    # The same for the empty programs: the part no BPF syscall profiler avoids.
    fpairs = sorted(100 * (o - f) / b for b, o, f in
                    zip(tps["bare"], tps[modes[1].name], tps[modes[2].name]))
    # And the family's own work: the empty programs minus the family.
    wpairs = sorted(100 * (f - n) / b for b, f, n in
                    zip(tps["bare"], tps[modes[2].name], tps[modes[3].name]))
    above = sum(d > 2 for d in pairs)
    mid = statistics.median(pairs)
    if a.reps < 5:
        verdict = "no verdict from fewer than 5 repetitions"
    elif mid > 2 and above * 3 >= 2 * len(pairs):
        verdict = "NOT met"
    elif mid <= 2 and (len(pairs) - above) * 3 >= 2 * len(pairs):
        verdict = "met"
    else:
        verdict = "no verdict: the pairs fall on both sides of the target"
    lines += ["",
              "The family on costs pgbench %.1f points of TPS beyond rspd without it "
              "(medians of each mode; target: at most 2). Paired within each repetition "
              "(off minus on, points of that repetition's bare): median %.1f, %d of %d "
              "above 2 (%s): %s. Each system call costs %.0f ns more with it on "
              "(%.0f ns bare)."
              % (pts, mid, above, len(pairs), ", ".join("%.1f" % d for d in pairs), verdict,
                 on_ns - off_ns, bare_ns),
              "",
              "The floor: empty programs on sys_enter, sys_exit and sched_switch (no "
              "work at all) cost pgbench %.1f points paired median (%s) and each system "
              "call %.0f ns; the family's own work is the rest: %.1f points paired median "
              "(%s), %.0f ns a call."
              % (statistics.median(fpairs), ", ".join("%.1f" % d for d in fpairs),
                 floor_ns - off_ns, statistics.median(wpairs),
                 ", ".join("%.1f" % d for d in wpairs), on_ns - floor_ns), ""]
    write_section(a.out, "\n".join(lines) + "\n", TITLE)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
