#!/usr/bin/python3
"""Capture overhead: perf bench sched pipe and sched messaging, bare, under
rsp's null consumer (the same attrs as rspd, a loop that only advances the
ring tails), under rspd, and under `perf record -a -g` of the same events
writing to /dev/shm; for each rspd stack policy. Runs alternate within each
repetition, so that drift on a shared machine hits every mode alike; each
mode's figure is the median of the repetitions, and every ratio is taken
against bare from the same run.

Also: rspd's own CPU seconds per million records, and for each stack policy
the share of off-CPU time (and of sleeps) whose sleep carries a stack.

With --hist: only bare, rspd (stacks sleeps) with its latency histograms
(the default) and rspd --no-hist, alternating, to show what the histograms'
analysis thread costs; written to its own section.

With --backends: bare, then for --stacks none and sleeps the null consumer
and rspd on each capture backend (perf, bpf), and perf record, alternating;
written to its own section with rspd's CPU per million records, the
window's bytes per record (and by kind of record, under each table) and the
records lost.

usage: bench/capture.py [--reps N] [--quick] [--hist | --study | --backends] [--build DIR]
                        [--out FILE]
Writes a section of BENCHMARKS.md (replacing an older one of the same title).
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TITLE = "## Capture overhead (rspd vs null consumer vs perf record)"
HIST_TITLE = "## Latency histograms on vs off (rspd --no-hist)"
BACKENDS_TITLE = "## Capture backends: BPF vs perf (issue 12)"
BACKEND_POLICIES = ["none", "sleeps"]
POLICIES = ["sleeps", "sampled:10", "all", "none"]
TRACEPOINTS = [
    "sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup_new",
    "sched:sched_process_fork", "sched:sched_process_exec", "sched:sched_process_exit",
    "block:block_rq_insert", "block:block_rq_issue", "block:block_rq_complete",
    "irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry", "irq:softirq_exit",
    "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit", "timer:hrtimer_start",
    # the net family's tracepoints (rspd opens them unfiltered; optional ones
    # the kernel lacks are left out below, as rspd leaves them out)
    "sock:sock_send_length", "sock:sock_recv_length", "sock:sk_data_ready",
    "sock:inet_sock_set_state", "tcp:tcp_rcv_space_adjust",
]


def present(tps):
    """The tracepoints this kernel has (perf record refuses an unknown one)."""
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.isdir(os.path.join(root, "events")):
            return [tp for tp in tps
                    if os.path.isdir(os.path.join(root, "events", *tp.split(":")))]
    return tps


TRACEPOINTS = present(TRACEPOINTS)


def workloads(quick):
    loops = 20000 if quick else 50000
    groups, mloops = (5, 100) if quick else (10, 150)
    return {
        # Pinned to CPU 0: unpinned, the two tasks land on one CPU or on both
        # from run to run, and this VM's throughput differs by ~2x between
        # the two (cross-CPU wakeups through idle), which swamps everything.
        "sched pipe (pinned to CPU 0)": (["taskset", "-c", "0", "perf", "bench", "sched", "pipe",
                                          "-l", str(loops)], "pipe"),
        "sched messaging": (["perf", "bench", "sched", "messaging", "-g", str(groups), "-l",
                             str(mloops)], "messaging"),
    }


def run_workload(cmd, kind):
    """Throughput of one run: ops/s for pipe, 1/total time for messaging."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    if kind == "pipe":
        return float(re.search(r"(\d+) ops/sec", out).group(1))
    return 1.0 / float(re.search(r"Total time: ([\d.]+)", out).group(1))


class Bare:
    name = "bare"

    def start(self):
        pass

    def stop(self):
        return {}


class NullConsumer:
    def __init__(self, build, policy, extra=(), label=None):
        self.cmd = [os.path.join(build, "bench", "rsp-null-consumer"), "--stacks", policy] + \
            list(extra)
        self.name = "null " + (label or policy)

    def start(self):
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        line = self.p.stderr.readline()
        if "ready" not in line:
            sys.exit("null consumer did not start: " + line + self.p.stderr.read())

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        out, _ = self.p.communicate(timeout=30)
        return json.loads(out)


class Rspd:
    def __init__(self, build, policy, extra=(), label=None):
        self.build = build
        self.policy = policy
        self.extra = list(extra)
        self.name = "rspd " + (label or " ".join([policy] + self.extra))

    def ctl(self, *args):
        out = subprocess.run([os.path.join(self.build, "cli", "rspctl"), "--socket", self.sock]
                             + list(args) + ["--json"], capture_output=True, text=True,
                             check=True).stdout
        return json.loads(out)

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="rsp-bench.")
        self.sock = os.path.join(self.dir, "s")
        self.p = subprocess.Popen([os.path.join(self.build, "daemon", "rspd"), "--foreground",
                                   "--socket", self.sock, "--stacks", self.policy,
                                   "--log-level", "warning"] + self.extra)
        for _ in range(200):
            try:
                self.before = self.ctl("status")
                return
            except subprocess.CalledProcessError:
                time.sleep(0.05)
        sys.exit("rspd did not start")

    def stop(self):
        time.sleep(0.3)  # one flush interval, so the window holds the run
        after = self.ctl("status", "--events")
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=30)
        ev = after["events"]
        return {
            "window_bytes": after["window"]["bytes"], "window_records": after["window"]["records"],
            "records": after["records"] - self.before["records"],
            "cpu_seconds": after["cpu_seconds"] - self.before["cpu_seconds"],
            "lost": after["lost"], "kinds": after["window"].get("kinds", []),
            "sleeps": ev["sleeps"], "sleeps_with_stack": ev["sleeps_with_stack"],
            "off_cpu_s": ev["off_cpu_s"], "off_cpu_with_stack_s": ev["off_cpu_with_stack_s"],
        }


class PerfRecord:
    name = "perf record -a -g"

    def start(self):
        self.out = "/dev/shm/rsp-bench-perf.data"
        # Per-event terms: a global -F would make perf sample the
        # tracepoints at 99 Hz too; rspd takes every occurrence.
        self.p = subprocess.Popen(["perf", "record", "-q", "-a", "-g", "-o", self.out,
                                   "-e", ",".join(TRACEPOINTS), "-e", "cpu-clock/freq=99/"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)  # perf has no ready signal; it opens its events in well under that

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=120)
        size = os.path.getsize(self.out) if os.path.exists(self.out) else 0
        if os.path.exists(self.out):
            os.unlink(self.out)
        return {"bytes": size}


def cpu_busy(interval=0.5):
    """Fraction of all CPUs busy over @interval, from /proc/stat."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait
    t0, i0 = snap()
    time.sleep(interval)
    t1, i1 = snap()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


QUIET = []  # background CPU busy fraction seen before each run


def wait_quiet(limit=0.10, patience=120):
    """Wait until the machine is idle (other work would bias a run); record
    what was seen, so that the report can say how quiet it was."""
    deadline = time.time() + patience
    busy = cpu_busy()
    while busy > limit and time.time() < deadline:
        busy = cpu_busy(2.0)
    QUIET.append(busy)


def measure(modes, wl, reps):
    """results[workload][mode] = list of (throughput, extra)."""
    results = {w: {m.name: [] for m in modes} for w in wl}
    for rep in range(reps):
        for w, (cmd, kind) in wl.items():
            for m in modes:
                wait_quiet()
                m.start()
                thr = run_workload(cmd, kind)
                extra = m.stop()
                results[w][m.name].append((thr, extra))
                print("rep %d %-16s %-18s %12.1f  (idle before: %.0f%% busy)" % (
                    rep + 1, w, m.name, thr, 100 * QUIET[-1]), flush=True)
    return results


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def cpu_per_m(ex):
    """rspd's CPU seconds per million records over runs @ex, as the tables print it."""
    recs = sum(e["records"] for e in ex)
    return "%.2f" % (sum(e["cpu_seconds"] for e in ex) / recs * 1e6) if recs else ""


STUDY = [  # (label, policy, extra rspd options): what each stack choice costs
    ("sleeps", "sleeps", []),
    ("sleeps, no waker stacks", "sleeps", ["--no-waker-stacks"]),
    ("sleeps, kernel frames only", "sleeps", ["--callchain", "kernel"]),
    ("sleeps, 16 frames", "sleeps", ["--max-stack", "16"]),
    ("sleeps, kernel only, no waker stacks", "sleeps", ["--callchain", "kernel",
                                                        "--no-waker-stacks"]),
    ("sampled:4", "sampled:4", []),
    ("none", "none", []),
]


def report_study(results, reps):
    lines = ["## Stack policy study", "",
             "Same method and machine as the capture benchmark above (`bench/capture.py "
             "--study`, %d repetitions, %s). What each way of getting stacks costs the "
             "workload, and how much of the off-CPU time it covers with a stack." % (
                 reps, time.strftime("%Y-%m-%d")), ""]
    for w, per in results.items():
        bare = med([t for t, _ in per["bare"]])
        prec = 1 - med([t for t, _ in per["perf record -a -g"]]) / bare
        lines += ["### %s" % w, "",
                  "| rspd | loss | loss / perf record's (%.1f%%) | sleeps with stack "
                  "| off-CPU time with stack |" % (100 * prec), "|---|---|---|---|---|"]
        for label, _, _ in STUDY:
            runs = per["rspd " + label]
            loss = 1 - med([t for t, _ in runs]) / bare
            ex = [e for _, e in runs]
            sl = sum(e["sleeps"] for e in ex)
            off = sum(e["off_cpu_s"] for e in ex)
            lines.append("| %s | %.1f%% | %s | %s | %s |" % (
                label, 100 * loss, "%.2f" % (loss / prec) if prec > 0.002 else "n/a",
                "%.1f%%" % (100.0 * sum(e["sleeps_with_stack"] for e in ex) / sl) if sl else "",
                "%.1f%%" % (100.0 * sum(e["off_cpu_with_stack_s"] for e in ex) / off)
                if off else ""))
        lines.append("")
    return "\n".join(lines) + "\n"


def report(results, reps, args):
    lines = [TITLE, "",
             "Command: `sudo bench/capture.py --reps %d%s` (%s)." % (
                 reps, " --quick" if args.quick else "", time.strftime("%Y-%m-%d")),
             "Machine: %s, %d CPUs, kernel %s; no hardware PMU. Runs alternate mode by mode "
             "within each repetition; figures are medians of %d runs; throughput ratios are "
             "to bare in the same run (1.000 = no loss). Before each run the script waits "
             "until the CPUs are at most 10%% busy (2 min at most); the background it saw: "
             "median %.0f%%, max %.0f%% busy." % (
                 "Debian 12 VM", os.cpu_count(), os.uname().release, reps,
                 100 * statistics.median(QUIET), 100 * max(QUIET)),
             ""]
    for w, per in results.items():
        bare = med([t for t, _ in per["bare"]])
        lines += ["### %s" % w, "",
                  "| mode | throughput | ratio to bare | loss | rspd CPU s per M records "
                  "| sleeps with stack | off-CPU time with stack |",
                  "|---|---|---|---|---|---|---|"]
        for mode, runs in per.items():
            thr = med([t for t, _ in runs])
            ratio = thr / bare
            cpu = stack = stack_t = ""
            ex = [e for _, e in runs]
            if mode.startswith("rspd"):
                cpu = cpu_per_m(ex)
                sl = sum(e["sleeps"] for e in ex)
                off = sum(e["off_cpu_s"] for e in ex)
                stack = "%.1f%%" % (100.0 * sum(e["sleeps_with_stack"] for e in ex) / sl) if sl else ""
                stack_t = "%.1f%%" % (100.0 * sum(e["off_cpu_with_stack_s"] for e in ex) / off) if off else ""
            lines.append("| %s | %.1f | %.3f | %.1f%% | %s | %s | %s |" % (
                mode, thr, ratio, 100 * (1 - ratio), cpu, stack, stack_t))
        lines.append("")
        # rspd's loss against the null consumer's, per policy.
        lines += ["rspd's loss relative to the null consumer's (target ≤ 1.1×), and to "
                  "`perf record -a -g`'s:", ""]
        prec = 1 - med([t for t, _ in per["perf record -a -g"]]) / bare
        for pol in POLICIES:
            lr = 1 - med([t for t, _ in per["rspd " + pol]]) / bare
            ln = 1 - med([t for t, _ in per["null " + pol]]) / bare
            lines.append("- `%s`: rspd loses %.1f%%, null consumer %.1f%% (%s), perf record "
                         "-a -g %.1f%% (rspd/perf = %s)" % (
                             pol, 100 * lr, 100 * ln,
                             "%.2f×" % (lr / ln) if ln > 0.002 else "null loss within noise",
                             100 * prec, "%.2f" % (lr / prec) if prec > 0.002 else "n/a"))
        lines.append("")
    return "\n".join(lines) + "\n"


def report_hist(results, reps, args):
    lines = [HIST_TITLE, "",
             "Command: `sudo bench/capture.py --hist --reps %d%s` (%s)." % (
                 reps, " --quick" if args.quick else "", time.strftime("%Y-%m-%d")),
             "Machine: %s, %d CPUs, kernel %s. Runs alternate bare, rspd and rspd "
             "--no-hist within each repetition; medians of %d runs; ratios to bare in the "
             "same run. rspd's CPU includes its analysis thread, which feeds every record "
             "to the histograms." % ("Debian 12 VM", os.cpu_count(), os.uname().release, reps),
             ""]
    for w, per in results.items():
        bare = med([t for t, _ in per["bare"]])
        lines += ["### %s" % w, "", "| mode | throughput | ratio to bare | loss "
                  "| rspd CPU s per M records |", "|---|---|---|---|---|"]
        cpu = {}
        for mode, runs in per.items():
            thr = med([t for t, _ in runs])
            c = ""
            if mode.startswith("rspd"):
                recs = sum(e["records"] for _, e in runs)
                cpu[mode] = sum(e["cpu_seconds"] for _, e in runs) / recs * 1e6 if recs else 0
                c = "%.2f" % cpu[mode]
            lines.append("| %s | %.1f | %.3f | %.1f%% | %s |" % (
                mode, thr, thr / bare, 100 * (1 - thr / bare), c))
        on, off = "rspd sleeps", "rspd sleeps --no-hist"
        if cpu.get(off):
            lines += ["", "Histograms on vs off: rspd's CPU per record is %.2f× (%.2f vs "
                      "%.2f s per M records); throughput with histograms is %.3f of that "
                      "without." % (cpu[on] / cpu[off], cpu[on], cpu[off],
                                    med([t for t, _ in per[on]]) /
                                    med([t for t, _ in per[off]]))]
        lines.append("")
    return "\n".join(lines) + "\n"


def kinds_table(per_mode, top=8):
    """Where the window's bytes go: for each mode, its records and bytes by kind
    (rspctl status: window.kinds, perf records by event, BPF records by kind)
    summed over its runs' windows, as shares of the mode's, with bytes per
    record; the @top kinds by bytes, the rest on one line. @per_mode: (mode,
    list of runs' extras with "kinds")."""
    lines = ["Window bytes by kind (rspctl status at the end of each run, summed over the "
             "runs; shares of the mode's window):", "",
             "| mode | kind | records | bytes | bytes per record |", "|---|---|---|---|---|"]
    for mode, ex in per_mode:
        tot = {}
        for e in ex:
            for k in e.get("kinds", []):
                r, b = tot.get(k["kind"], (0, 0))
                tot[k["kind"]] = (r + k["records"], b + k["bytes"])
        recs = sum(r for r, _ in tot.values())
        byts = sum(b for _, b in tot.values())
        if not recs or not byts:
            continue
        ranked = sorted(tot.items(), key=lambda kv: (-kv[1][1], kv[0]))
        if len(ranked) > top + 1:
            rest = ranked[top:]
            ranked = ranked[:top] + [("(%d more)" % len(rest),
                                      (sum(r for _, (r, _) in rest),
                                       sum(b for _, (_, b) in rest)))]
        for kind, (r, b) in ranked:
            lines.append("| %s | %s | %.1f%% | %.1f%% | %.0f |" % (
                mode, kind, 100 * r / recs, 100 * b / byts, b / r if r else 0))
    return lines + [""]


def report_backends(results, reps, args):
    lines = [BACKENDS_TITLE, "",
             "Command: `sudo bench/capture.py --backends --reps %d%s` (%s). Machine: %s, %d "
             "CPUs, kernel %s. Runs alternate mode by mode within each repetition; medians "
             "of %d runs; ratios to bare in the same run. Null consumers open the same "
             "events (and, for bpf, load the same programs) and skip every record; rspd "
             "CPU is its own (drain, window, histograms, queries) per million records; "
             "window bytes per record include the window's 8-byte time prefix on perf "
             "records (BPF records, which carry their time, are stored without it)." % (
                 reps, " --quick" if args.quick else "", time.strftime("%Y-%m-%d"),
                 "Debian 12 VM", os.cpu_count(), os.uname().release, reps), ""]
    for w, per in results.items():
        bare = med([t for t, _ in per["bare"]])
        lines += ["### %s" % w, "",
                  "| mode | throughput | ratio to bare | loss | rspd CPU s per M records "
                  "| window bytes per record | records lost |", "|---|---|---|---|---|---|---|"]
        for mode, runs in per.items():
            thr = med([t for t, _ in runs])
            cpu = bpr = lost = ""
            ex = [e for _, e in runs]
            if mode.startswith("rspd"):
                cpu = cpu_per_m(ex)
                wr = sum(e["window_records"] for e in ex)
                bpr = "%.0f" % (sum(e["window_bytes"] for e in ex) / wr) if wr else ""
                lost = str(sum(e["lost"] for e in ex))
            lines.append("| %s | %.1f | %.3f | %.1f%% | %s | %s | %s |" % (
                mode, thr, thr / bare, 100 * (1 - thr / bare), cpu, bpr, lost))
        lines.append("")
        lines += kinds_table([(mode, [e for _, e in runs]) for mode, runs in per.items()
                              if mode.startswith("rspd")])
        for pol in BACKEND_POLICIES:
            lp = 1 - med([t for t, _ in per["rspd perf " + pol]]) / bare
            lb = 1 - med([t for t, _ in per["rspd bpf " + pol]]) / bare
            lines.append("- `--stacks %s`: rspd loses %.1f%% with BPF, %.1f%% with perf: "
                         "BPF/perf = %s (target ≤ 0.5×)" % (
                             pol, 100 * lb, 100 * lp,
                             "%.2f×" % (lb / lp) if lp > 0.002 else "perf loss within noise"))
        lines.append("")
    return "\n".join(lines) + "\n"


def write_section(path, text, title=TITLE):
    old = open(path).read() if os.path.exists(path) else "# rsp benchmarks\n\n"
    start = old.find(title)
    if start >= 0:
        end = old.find("\n## ", start + len(title))
        old = old[:start] + old[end + 1:] if end >= 0 else old[:start]
    with open(path, "w") as f:
        f.write(old.rstrip("\n") + "\n\n" + text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="shorter workloads (a smoke run)")
    ap.add_argument("--hist", action="store_true", help="only histograms on vs off")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--study", action="store_true",
                    help="instead: the stack policy study (rspd variants only)")
    ap.add_argument("--backends", action="store_true",
                    help="instead: BPF vs perf capture backend, side by side")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/capture.py: run as root (perf events)")
    if args.hist:
        modes = [Bare(), Rspd(args.build, "sleeps"), Rspd(args.build, "sleeps", ["--no-hist"])]
        results = measure(modes, workloads(args.quick), args.reps)
        text = report_hist(results, args.reps, args)
        print(text)
        write_section(args.out, text, HIST_TITLE)
        print("wrote " + args.out)
        return
    modes = [Bare()]
    if args.backends:
        for pol in BACKEND_POLICIES:
            for be in ("perf", "bpf"):
                modes += [NullConsumer(args.build, pol, ["--capture", be], "%s %s" % (be, pol)),
                          Rspd(args.build, pol, ["--capture", be], "%s %s" % (be, pol))]
        modes.append(PerfRecord())
        results = measure(modes, workloads(args.quick), args.reps)
        text = report_backends(results, args.reps, args)
        print(text)
        write_section(args.out, text, BACKENDS_TITLE)
        print("wrote " + args.out)
        return
    if args.study:
        modes += [Rspd(args.build, pol, extra, label) for label, pol, extra in STUDY]
    else:
        for pol in POLICIES:
            modes += [NullConsumer(args.build, pol), Rspd(args.build, pol)]
        modes.append(Rspd(args.build, "sleeps", ["--no-hist"]))
    modes.append(PerfRecord())
    results = measure(modes, workloads(args.quick), args.reps)
    text = report_study(results, args.reps) if args.study else report(results, args.reps, args)
    print(text)
    write_section(args.out, text, "## Stack policy study" if args.study else TITLE)
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
