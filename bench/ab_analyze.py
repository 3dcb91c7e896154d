#!/usr/bin/python3
"""Two builds of rspctl side by side on one dump: `rspctl analyze DUMP QUERY...`
under each, alternating (A B, then B A), pinned to one CPU, REPS times; the
CPU time (user + system) of each run, its minimum, quartile and median per
build, and the median of the paired ratios B / A. On this shared 2-vCPU VM
wall times of the same run spread by 30% and more from one minute to the
next: only ratios of runs taken side by side say whether a change helped.

usage: bench/ab_analyze.py --a BUILD_A --b BUILD_B [--reps N] DUMP QUERY...
  e.g. bench/ab_analyze.py --a /tmp/old/build/release --b build/release \\
           --reps 20 /var/tmp/pgbench.perf.data graph
BUILD_*: a build tree (its cli/rspctl is run). Make the dump with rspd
(`rspctl dump -o FILE`, or bench/realwin.py's recorders).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys


def cpu_of(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["taskset", "-c", "1"] + cmd, stdout=subprocess.DEVNULL, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="build tree A (the base)")
    ap.add_argument("--b", required=True, help="build tree B (the change)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("dump")
    ap.add_argument("query", nargs="+")
    a = ap.parse_args()
    bins = {}
    for k in ("a", "b"):
        b = os.path.join(getattr(a, k), "cli", "rspctl")
        if not os.access(b, os.X_OK):
            sys.exit("bench/ab_analyze.py: no rspctl in %s (build it first)" % getattr(a, k))
        bins[k] = b
    if not os.path.exists(a.dump):
        sys.exit("bench/ab_analyze.py: no dump %s" % a.dump)
    cpu = {"a": [], "b": []}
    for r in range(a.reps):
        for k in (("a", "b") if r % 2 == 0 else ("b", "a")):
            cpu[k].append(cpu_of([bins[k], "analyze", a.dump] + a.query))
    for k in ("a", "b"):
        c = sorted(cpu[k])
        print("%s %-40s cpu s: min %.3f  p25 %.3f  median %.3f" %
              (k, bins[k], c[0], c[len(c) // 4], statistics.median(c)))
    ratio = statistics.median(y / x for x, y in zip(cpu["a"], cpu["b"]) if x > 0)
    print("paired median B/A: %.3f  (%s, %d reps)" % (ratio, " ".join(a.query), a.reps))


if __name__ == "__main__":
    main()
