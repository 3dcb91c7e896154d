#!/usr/bin/python3
"""Costs of issue 6's capture: libc uprobes and DWARF user stacks.

1. The default uprobe set on a syscall-heavy workload: perf bench sched pipe
   (each round trip is a write and a read in each of two processes: four
   probed libc calls), pinned to CPU 0 as bench/capture.py does, run
     - bare,
     - under rspd with its defaults (the libc family is off),
     - under rspd with the libc family on (the default uprobe set; each hit
       copies 8 KiB of user stack for DWARF, rspd's default --dwarf),
     - the same with no stack copy on uprobes (--dwarf cpu_clock).
   Runs alternate within each repetition, each after waiting for an idle
   machine; every ratio is taken against bare (and against rspd's defaults)
   from the same repetition, and the median over repetitions is reported.
   The cost per probe hit follows from the kernel's count of hits.

2. DWARF stack capture per cpu-clock sample: the sampled thread's cost
   from rsp-bench-dwarf-sample (bench/dwarf_sample.c: a loop sampling
   itself with and without the stack copy, in alternating slices); rspd's
   CPU time per record and window bytes per record under --dwarf none and
   --dwarf cpu_clock (cpu_nofp pinned to CPU 0, sampled at --freq HZ); and
   the query-time cost of unwinding: `rspctl top --stacks` against plain
   `rspctl top` over the same window, per sample unwound.

usage: bench/uprobes.py [--reps N] [--loops N] [--seconds S] [--freq HZ]
                        [--quick] [--build DIR] [--out FILE]
Writes a section of BENCHMARKS.md (replacing an older one of the same title).
"""
import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TITLE = "## libc uprobes and DWARF user stacks (issue 6)"
PIN = ["taskset", "-c", "0"]


class Rspd:
    def __init__(self, build, args):
        self.build = build
        self.args = args

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="rspbench.")
        self.sock = os.path.join(self.dir, "s.sock")
        conf = os.path.join(self.dir, "c.conf")
        open(conf, "w").close()
        self.p = subprocess.Popen([os.path.join(self.build, "daemon", "rspd"), "--foreground",
                                   "--socket", self.sock, "--config", conf,
                                   "--log-level", "warning"] + self.args,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            if os.path.exists(self.sock) and self.ctl("status")[0] == 0:
                return self
            time.sleep(0.05)
        sys.exit("rspd did not start: %s" % self.args)

    def __exit__(self, *exc):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=60)

    def ctl(self, *args):
        p = subprocess.run([os.path.join(self.build, "cli", "rspctl"), "--socket", self.sock]
                           + list(args), capture_output=True, text=True)
        return p.returncode, p.stdout

    def json(self, *args):
        rc, out = self.ctl(*(list(args) + ["--json"]))
        if rc:
            sys.exit("rspctl %s failed" % " ".join(args))
        return json.loads(out)

    def uprobe_fired(self):
        for f in self.json("status")["families"]:
            for e in f["events"]:
                if e["name"] == "uprobe":
                    return e.get("fired") or 0
        return 0


def cpu_busy(interval=0.5):
    """Fraction of all CPUs busy over @interval, from /proc/stat."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    t0, i0 = snap()
    time.sleep(interval)
    t1, i1 = snap()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


QUIET = []


def wait_quiet(limit=0.10, patience=120):
    """Wait until the machine is idle (other work would bias a run)."""
    deadline = time.time() + patience
    busy = cpu_busy()
    while busy > limit and time.time() < deadline:
        busy = cpu_busy(2.0)
    QUIET.append(busy)


def pipe_ops(loops):
    out = subprocess.run(PIN + ["perf", "bench", "sched", "pipe", "-l", str(loops)],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"(\d+) ops/sec", out).group(1))


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def uprobe_section(build, reps, loops):
    modes = [
        ("bare", None),
        ("rspd, defaults (libc family off)", []),
        ("rspd + default uprobe set, 8 KiB stack per hit", ["--families", "all"]),
        ("rspd + default uprobe set, no stack copy", ["--families", "all", "--dwarf",
                                                      "cpu_clock"]),
    ]
    ops = {m: [] for m, _ in modes}
    vs_bare = {m: [] for m, _ in modes}
    vs_rspd = {m: [] for m, _ in modes}
    hits = {m: [] for m, _ in modes}
    for rep in range(reps):
        got = {}
        for name, args in modes:
            wait_quiet()
            if args is None:
                got[name] = pipe_ops(loops)
            else:
                with Rspd(build, args) as d:
                    before = d.uprobe_fired()
                    got[name] = pipe_ops(loops)
                    time.sleep(1.2)  # rspd takes the kernel counts once a second
                    hits[name].append(d.uprobe_fired() - before)
            print("rep %d %-50s %10.0f ops/s (idle before: %.0f%% busy)" %
                  (rep + 1, name, got[name], 100 * QUIET[-1]), flush=True)
        base, rspd = got[modes[0][0]], got[modes[1][0]]
        for name, _ in modes:
            ops[name].append(got[name])
            vs_bare[name].append(got[name] / base)
            vs_rspd[name].append(got[name] / rspd)
    lines = ["### The default uprobe set on `perf bench sched pipe` (pinned to CPU 0)", "",
             "Command: `taskset -c 0 perf bench sched pipe -l %d`, %d repetitions, the "
             "modes alternating within each; medians. Ratios are throughput against bare, "
             "and against rspd with its defaults, from the same repetition." % (loops, reps),
             "",
             "| mode | ops/s | vs bare | vs rspd defaults | probe hits per op |",
             "|---|---:|---:|---:|---:|"]
    for name, _ in modes:
        h = med(hits[name]) / loops if hits[name] else None
        lines.append("| %s | %.0f | %.3f | %.3f | %s |" %
                     (name, med(ops[name]), med(vs_bare[name]), med(vs_rspd[name]),
                      "%.2f" % h if h else "-"))
    lines.append("")
    for name, _ in modes[2:]:
        h = med(hits[name]) / loops
        if h > 0:
            per_op = (1 / med(ops[name]) - 1 / med(ops[modes[1][0]])) * 1e6
            lines.append("%s: %.2f us more per round trip than rspd's defaults, %.2f us per "
                         "probe hit (%.1f hits per round trip)." % (name, per_op, per_op / h, h))
    lines += ["", "A syscall-heavy process runs at %.2f of its speed under rspd's defaults "
              "once the default uprobe set is on (every call of read and write, in every "
              "process, traps): this is why the libc family is off by default. Turn it on to "
              "repair stacks while diagnosing, with a short `--uprobes` list." %
              med(vs_rspd[modes[2][0]]), ""]
    return lines


def cpu_run(build, seconds):
    out = subprocess.run(PIN + [os.path.join(build, "workloads", "cpu_nofp"), str(seconds)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def sample_cost(build, freq, slices):
    out = subprocess.run(PIN + [os.path.join(build, "bench", "rsp-bench-dwarf-sample"), "--freq",
                                str(freq), "--slices", str(slices), "--slice-ms", "100"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def dwarf_section(build, reps, seconds, freq):
    # 1. The sampled thread's cost, from rsp-bench-dwarf-sample.
    runs = []
    for rep in range(reps):
        wait_quiet()
        j = sample_cost(build, freq, 30)
        runs.append(j)
        print("rep %d sample cost: fp %.2f us, dwarf %.2f us, stack copy %.2f us (%d bytes) "
              "(idle before: %.0f%% busy)" % (rep + 1, j["fp_us_per_sample"],
                                               j["dwarf_us_per_sample"],
                                               j["stack_copy_us_per_sample"],
                                               j["stack_bytes_per_sample"], 100 * QUIET[-1]),
              flush=True)
    copy = [j["stack_copy_us_per_sample"] for j in runs]
    # 2. rspd's side: drain cost, window bytes, unwinding at query time.
    modes = [("--dwarf none", ["--dwarf", "none"]), ("--dwarf cpu_clock", ["--dwarf",
                                                                            "cpu_clock"])]
    rspd_us = {m: [] for m, _ in modes}
    bytes_rec = {m: [] for m, _ in modes}
    top_ms, stacks_ms, unwound, methods = [], [], [], {}
    for rep in range(reps):
        for m, args in modes:
            wait_quiet()
            with Rspd(build, ["--freq", str(freq), "--window", "1G"] + args) as d:
                before = d.json("status")
                w = cpu_run(build, seconds)
                time.sleep(0.5)
                after = d.json("status")
                if m == "--dwarf cpu_clock":
                    last = "%dms" % int((w["seconds"] + 0.5) * 1000)
                    t0 = time.time()
                    d.json("top", "--pid", str(w["pid"]), "--last", last)
                    t1 = time.time()
                    deep = d.json("top", "--pid", str(w["pid"]), "--last", last, "--stacks",
                                  "5")
                    t2 = time.time()
                    top_ms.append((t1 - t0) * 1e3)
                    stacks_ms.append((t2 - t1) * 1e3)
                    unwound.append(deep["samples"])
                    methods = deep.get("user_stacks", {})
            recs = after["records"] - before["records"]
            rspd_us[m].append((after["cpu_seconds"] - before["cpu_seconds"]) * 1e6 / max(recs, 1))
            win = after["window"]
            bytes_rec[m].append(win["bytes"] / max(win["records"], 1))
            print("rep %d rspd %-18s %.2f us of rspd CPU per record, %.0f B/record "
                  "(idle before: %.0f%% busy)" % (rep + 1, m, rspd_us[m][-1], bytes_rec[m][-1],
                                                  100 * QUIET[-1]), flush=True)
    n, d_ = "--dwarf none", "--dwarf cpu_clock"
    j = runs[0]
    lines = ["### DWARF stack capture per cpu-clock sample", "",
             "The sampled thread's cost: `taskset -c 0 rsp-bench-dwarf-sample --freq %d "
             "--slices 30 --slice-ms 100` (bench/dwarf_sample.c), %d runs. A loop samples "
             "itself with a cpu-clock event as rspd opens it, with and without the user "
             "registers and %d bytes of user stack (all of them present above the stack "
             "pointer: the kernel copies no further than the first absent page), in 100 ms "
             "slices alternating with an unsampled slice; the cost is the extra CPU time "
             "of the loop per sample (interrupt time is charged to the interrupted thread on "
             "this kernel: no CONFIG_IRQ_TIME_ACCOUNTING)." % (freq, reps, j["stack"]), "",
             "| per cpu-clock sample | median | min | max |", "|---|---:|---:|---:|"]
    for key, what in (("fp_us_per_sample", "a sample with a frame-pointer callchain"),
                      ("dwarf_us_per_sample", "the same with registers and stack copy"),
                      ("stack_copy_us_per_sample", "the stack copy alone")):
        xs = [r[key] for r in runs]
        lines.append("| %s | %.2f us | %.2f us | %.2f us |" % (what, med(xs), min(xs), max(xs)))
    lines += ["",
              "rspd's side: `taskset -c 0 cpu_nofp %d` under `rspd --freq %d` with "
              "`--dwarf none` and `--dwarf cpu_clock`, %d repetitions alternating; medians." %
              (seconds, freq, reps), "",
              "| rspd | rspd CPU per record | window bytes per record (all records) |",
              "|---|---:|---:|"]
    for m, _ in modes:
        lines.append("| %s | %.2f us | %.0f |" % (m, med(rspd_us[m]), med(bytes_rec[m])))
    lines += ["",
              "Each DWARF sample carries %d more bytes (17 registers, the stack and its two "
              "size words); draining them costs rspd %.2f us more per record." %
              (8 + 17 * 8 + 8 + j["stack"] + 8, med(rspd_us[d_]) - med(rspd_us[n])),
              "",
              "Unwinding is lazy, at query time: over one run's window (%d samples of the "
              "process; user stacks by method %s) `rspctl top` takes %.1f ms and "
              "`rspctl top --stacks 5` %.1f ms: %.1f us per sample unwound (CFI cached per "
              "object)." % (med(unwound), methods, med(top_ms), med(stacks_ms),
                            (med(stacks_ms) - med(top_ms)) * 1e3 / max(med(unwound), 1)),
              ""]
    return lines, med(copy)


def write_section(path, lines):
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    body = "\n".join([TITLE, ""] + lines).rstrip() + "\n"
    start = text.find(TITLE)
    if start >= 0:
        end = text.find("\n## ", start + len(TITLE))
        text = text[:start] + body + ("\n" + text[end + 1:] if end >= 0 else "")
    else:
        text = text.rstrip() + "\n\n" + body
    with open(path, "w") as f:
        f.write(text)


def machine():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "%s, %d CPUs, kernel %s" % (model, os.cpu_count(), platform.release())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--loops", type=int, default=50000)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--freq", type=int, default=4999)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 2 repetitions, 20000 loops, 2-second runs")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    a = ap.parse_args()
    if a.quick:
        a.reps, a.loops, a.seconds = 2, 20000, 2
    if os.geteuid() != 0:
        sys.exit("bench/uprobes.py needs root (perf events, uprobes)")
    lines = []
    lines += uprobe_section(a.build, a.reps, a.loops)
    more, _ = dwarf_section(a.build, a.reps, a.seconds, a.freq)
    lines += more
    lines = ["Measured by `bench/uprobes.py --reps %d` (`sudo bench/run --only uprobes`) "
             "on %s (a VM shared with other work; "
             "each run waited for an idle machine, %.0f%% busy at most before a run: read "
             "the ratios more than the absolute figures)." %
             (a.reps, machine(), 100 * max(QUIET)), ""] + lines
    write_section(a.out, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
