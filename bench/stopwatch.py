#!/usr/bin/python3
"""Cost per probed call of rspctl stopwatch (issue 16).

tests/workloads/stopwatch_work loop N calls an empty function tiny() N
times, then the getppid system call N times, and prints the ns per call of
each (pinned to CPU 0). Run, alternating within each repetition:
  - bare (rspd running, no stopwatch);
  - a stopwatch on tiny() and one on syscall:getppid (the BPF path rspd
    uses: a uprobe and a uretprobe, or sys_enter/sys_exit, each running a
    BPF program that matches and adds into per-CPU totals);
  - the same two stopwatches added with --callers (a user stack walk and a
    caller-table update per call, on top);
  - for comparison, the perf-event path's floor: perf record of a perf
    uprobe and uretprobe on tiny() (perf probe -x), each hit a ring record
    (what rspd would have to write, copy and decode before matching).
The cost per call is the difference with bare; medians over repetitions.

usage: sudo bench/stopwatch.py [--reps N] [--calls N] [--build DIR] [--out FILE]
Writes its section of BENCHMARKS.md (replacing an older one of the same title).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from pgbench import Rspd as PgRspd, sh, write_section  # noqa: E402  (one runner for the benches)
TITLE = "## Stopwatches: cost per probed call (issue 16)"
PIN = ["taskset", "-c", "0"]


class Rspd(PgRspd):
    """pgbench.py's rspd (private socket, --capture bpf), as a context, with
    rspctl commands that answer in text (stopwatch add, rm)."""

    def __init__(self, build):
        super().__init__(build, "bpf", "cached", ["--log-level", "warning"])

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def cmd(self, *args):
        p = sh([os.path.join(self.build, "cli", "rspctl"), "--socket", self.sock] + list(args))
        if p.returncode:
            sys.exit("bench/stopwatch.py: rspctl %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.stdout


def loop(wl, calls):
    p = subprocess.run(PIN + [wl, "loop", str(calls)], capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def perf_probe(wl, calls):
    """tiny() under perf record of a perf uprobe + uretprobe (the perf-event path)."""
    subprocess.run(["perf", "probe", "-q", "-d", "probe_stopwatch_work:*"],
                   capture_output=True)
    for spec in ("tiny", "tiny%return"):
        p = subprocess.run(["perf", "probe", "-q", "-x", wl, spec], capture_output=True,
                           text=True)
        if p.returncode:
            return None, "perf probe -x %s %s: %s" % (wl, spec, p.stderr.strip())
    out = tempfile.mktemp(prefix="rspbench.", suffix=".data")
    try:
        p = subprocess.run(["perf", "record", "-q", "-e", "probe_stopwatch_work:*", "-o", out,
                            "--"] + PIN + [wl, "loop", str(calls)], capture_output=True,
                           text=True)
        if p.returncode:
            return None, "perf record: " + p.stderr.strip()
        return json.loads(p.stdout.strip().splitlines()[-1]), None
    finally:
        subprocess.run(["perf", "probe", "-q", "-d", "probe_stopwatch_work:*"],
                       capture_output=True)
        if os.path.exists(out):
            os.unlink(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench/stopwatch.py: run as root (rspd loads BPF programs)")
    wl = os.path.join(a.build, "workloads", "stopwatch_work")
    bare, sw, swc, perf = [], [], [], []
    perf_note = None
    with Rspd(a.build) as d:
        for _ in range(a.reps):
            bare.append(loop(wl, a.calls))
            d.cmd("stopwatch", "add", wl + ":tiny", "--name", "tiny")
            d.cmd("stopwatch", "add", "syscall:getppid", "--name", "getppid")
            sw.append(loop(wl, a.calls))
            shown = d.ctl("stopwatch", "show")["stopwatches"]
            counts = {s["name"]: s["count"] for s in shown}
            if counts.get("tiny", 0) < a.calls or counts.get("getppid", 0) < a.calls:
                sys.exit("bench/stopwatch.py: the stopwatches missed calls: %s" % counts)
            d.cmd("stopwatch", "rm", "tiny")
            d.cmd("stopwatch", "rm", "getppid")
            d.cmd("stopwatch", "add", wl + ":tiny", "--name", "tiny", "--callers")
            d.cmd("stopwatch", "add", "syscall:getppid", "--name", "getppid", "--callers")
            swc.append(loop(wl, a.calls))
            shown = d.ctl("stopwatch", "show", "--callers")["stopwatches"]
            by_caller = {s["name"]: s["callers_calls"] for s in shown}
            if by_caller.get("tiny", 0) < a.calls or by_caller.get("getppid", 0) < a.calls:
                sys.exit("bench/stopwatch.py: --callers missed calls: %s; the stopwatches: %s"
                         % (by_caller, [{k: v for k, v in x.items() if k.startswith("callers_")
                                         or k in ("name", "count")} for x in shown]))
            d.cmd("stopwatch", "rm", "tiny")
            d.cmd("stopwatch", "rm", "getppid")
            r, perf_note = perf_probe(wl, a.calls)
            if r:
                perf.append(r)

    def med(rs, key):
        return statistics.median(r[key] for r in rs)

    lines = [TITLE, "",
             "`sudo bench/stopwatch.py --reps %d --calls %d` on %s, %s, kernel %s: "
             "tests/workloads/stopwatch_work loop, pinned to CPU 0; medians of %d "
             "repetitions, bare and probed runs alternating." % (
                 a.reps, a.calls, time.strftime("%Y-%m-%d"), platform.node(),
                 platform.release(), a.reps), "",
             "| path | tiny() ns/call | added per call | getppid ns/call | added per call |",
             "|---|---|---|---|---|",
             "| bare (rspd running, no stopwatch) | %.1f | | %.1f | |" % (
                 med(bare, "tiny_ns"), med(bare, "getppid_ns")),
             "| stopwatch, BPF (rspd's path) | %.1f | %.1f | %.1f | %.1f |" % (
                 med(sw, "tiny_ns"), med(sw, "tiny_ns") - med(bare, "tiny_ns"),
                 med(sw, "getppid_ns"), med(sw, "getppid_ns") - med(bare, "getppid_ns")),
             "| stopwatch --callers, BPF (+ user stack per call) | %.1f | %.1f | %.1f | %.1f |" % (
                 med(swc, "tiny_ns"), med(swc, "tiny_ns") - med(bare, "tiny_ns"),
                 med(swc, "getppid_ns"), med(swc, "getppid_ns") - med(bare, "getppid_ns"))]
    if perf:
        lines.append("| perf uprobe+uretprobe records (perf record; the perf path's floor) "
                     "| %.1f | %.1f | | |" % (med(perf, "tiny_ns"),
                                              med(perf, "tiny_ns") - med(bare, "tiny_ns")))
    else:
        lines.append("")
        lines.append("The perf-event path was not measured: %s" % perf_note)
    text = "\n".join(lines) + "\n"
    print(text)
    write_section(a.out, text, TITLE)


if __name__ == "__main__":
    main()
