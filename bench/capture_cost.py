#!/usr/bin/python3
"""Capture's cost near the floor (issue 35): CPU per transaction and per record
at a fixed load, which is stable, and throughput beside it.

usage: sudo bench/capture_cost.py [--reps N] [--seconds S] [--rate TPS] [--build DIR]
                                  [--modes a,b,..] [--no-saturated] [--out FILE | --no-write]

PostgreSQL's pgbench (bench/pgbench.py's cluster: -c 4 -j 2, scale 10,
synchronous_commit on, UNIX socket) under each mode, the modes alternating
within each of --reps rounds:

  bare          nothing recording
  floor         the smallest BPF tracer of the same scheduler facts: a 40-byte
                record per sched_switch and sched_waking into one BPF ring,
                drained every 50 ms (bench/sched_floor.c, bpf/sched_floor.bpf.c)
  rspd          rspd --capture bpf with its defaults (stacks cached, DWARF
                cpu-clock samples, histograms, every family)
  rspd none     rspd --capture bpf --stacks none
  rspd perf     rspd --capture perf (the tracepoint backend)
  perf record   perf record -a -g of the scheduler's events

1. At a fixed rate (pgbench -R, --rate, about half of what the machine does
   saturated), with kernel.bpf_stats_enabled (every mode alike: two clock reads
   more per program run):
   - capture's CPU per transaction: the BPF programs' run time (bpftool's
     run_time_ns of the mode's programs) plus the recorder's threads
     (/proc/PID/task/*/stat: rspd's, or perf record's and the floor's);
   - records per transaction (rspd: what its rings delivered; the events they
     stand for, folded ones counted apart) and capture's CPU per record;
   - the machine's busy CPU per transaction (/proc/stat), and how much more
     than bare's in the same round (paired bootstrap interval over rounds);
   - rspd's window: bytes per record and the history 64 MiB holds at this load.
2. Saturated (pgbench without -R), without the statistics: transactions a
   second and the loss against bare in the same round, with intervals.

Medians over rounds. Writes the section "## Capture's cost near the floor"
of BENCHMARKS.md in place.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import pgbench  # noqa: E402  (Cluster, Rspd, PerfRecord, report, setup_line)
from bpf_floor import Floor, cpu_times, interval, loss, cpu_more  # noqa: E402

TITLE = "## Capture's cost near the floor (issue 35)"
WINDOW = 64 << 20


def threads_cpu(pid):
    """CPU seconds of @pid's threads (user + system), 0 if it is gone."""
    hz = os.sysconf("SC_CLK_TCK")
    tot = 0
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return 0.0
    for t in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                st = f.read()
        except OSError:
            continue
        f = st[st.rindex(")") + 2:].split()
        tot += int(f[11]) + int(f[12])
    return tot / hz


def prog_ns(prefixes):
    """Run time (ns) of the loaded BPF programs whose names start with @prefixes."""
    out = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True,
                         text=True).stdout
    ns = 0
    for p in json.loads(out or "[]"):
        if any(p.get("name", "").startswith(x) for x in prefixes):
            ns += p.get("run_time_ns", 0)
    return ns


class Mode:
    """A recorder: its name, its process (for its threads' CPU), its programs."""

    def __init__(self, name, inner, prefixes=(), pid=None):
        self.name, self.inner, self.prefixes, self.pid_of = name, inner, prefixes, pid

    def start(self):
        self.inner.start()

    def stop(self):
        return self.inner.stop()

    def pid(self):
        return self.pid_of(self.inner) if self.pid_of else None

    def status(self):
        if isinstance(self.inner, pgbench.Rspd):
            return self.inner.ctl("status")
        return None


def modes(build, names):
    every = {
        "bare": lambda: Mode("bare", pgbench.Bare()),
        "floor": lambda: Mode("floor (40-byte record, one ring)", Floor(build, 2),
                              ("rsp_floor_",), lambda m: m.p.pid),
        "rspd": lambda: Mode("rspd --capture bpf (defaults)", pgbench.Rspd(build, "bpf", None),
                             ("rsp_",), lambda m: m.p.pid),
        "rspd-none": lambda: Mode("rspd --capture bpf --stacks none",
                                  pgbench.Rspd(build, "bpf", "none"), ("rsp_",),
                                  lambda m: m.p.pid),
        "rspd-perf": lambda: Mode("rspd --capture perf (defaults)",
                                  pgbench.Rspd(build, "perf", None), (), lambda m: m.p.pid),
        "perf-record": lambda: Mode(pgbench.PerfRecord.name, pgbench.PerfRecord(), (),
                                    lambda m: m.p.pid),
    }
    return [every[n]() for n in names]


def counters(st):
    """(ring records, folded events, window bytes, window records, window span s)."""
    if not st:
        return None
    w = st["window"]
    return (st.get("records", 0), st.get("folded", 0),
            w.get("bytes", 0), w.get("records", 0),
            max(w.get("newest_s", 0) - w.get("oldest_s", 0), 0))


def fixed_rate(a, cluster, ms):
    """Phase 1: each mode at --rate, with the kernel's program statistics."""
    hz = os.sysconf("SC_CLK_TCK")
    res = {m.name: [] for m in ms}
    old = subprocess.run(["sysctl", "-n", "kernel.bpf_stats_enabled"], capture_output=True,
                         text=True).stdout.strip() or "0"
    subprocess.run(["sysctl", "-q", "-w", "kernel.bpf_stats_enabled=1"])
    try:
        for rnd in range(a.reps):
            for m in ms:
                m.start()
                time.sleep(2)
                pid = m.pid()
                c0, p0, (b0, _), s0 = (threads_cpu(pid) if pid else 0,
                                       prog_ns(m.prefixes) if m.prefixes else 0,
                                       cpu_times(), counters(m.status()))
                tps = cluster.run(a.seconds, a.rate)
                c1, p1, (b1, _), s1 = (threads_cpu(pid) if pid else 0,
                                       prog_ns(m.prefixes) if m.prefixes else 0,
                                       cpu_times(), counters(m.status()))
                m.stop()
                tx = max(tps * a.seconds, 1)
                r = {"tps": tps, "busy_us": (b1 - b0) * 1e6 / hz / tx,
                     "user_us": (c1 - c0) * 1e6 / tx, "bpf_us": (p1 - p0) / 1e3 / tx}
                r["capture_us"] = r["user_us"] + r["bpf_us"]
                if s0 and s1:
                    r["records_tx"] = (s1[0] - s0[0]) / tx
                    r["events_tx"] = (s1[0] - s0[0] + s1[1] - s0[1]) / tx
                    r["us_record"] = r["capture_us"] / r["records_tx"] if r["records_tx"] else 0
                    r["bytes_record"] = s1[2] / s1[3] if s1[3] else 0
                    rate = s1[2] / s1[4] if s1[4] else 0
                    r["history_s"] = WINDOW / rate if rate else 0
                res[m.name].append(r)
                print("round %d %-40s %7.1f tps busy %6.1f us/tx capture %6.1f us/tx "
                      "(rspd/threads %5.1f, BPF %5.1f)%s"
                      % (rnd + 1, m.name, tps, r["busy_us"], r["capture_us"], r["user_us"],
                         r["bpf_us"], "; %.1f records/tx, %.2f us/record" % (
                             r["records_tx"], r["us_record"]) if "records_tx" in r else ""),
                      flush=True)
    finally:
        subprocess.run(["sysctl", "-q", "-w", "kernel.bpf_stats_enabled=" + old])
    return res


def saturated(a, cluster, ms):
    """Phase 2: each mode at the machine's limit, without the statistics."""
    tps = {m.name: [] for m in ms}
    for rnd in range(a.reps):
        for m in ms:
            m.start()
            time.sleep(1)
            tps[m.name].append(cluster.run(a.seconds))
            m.stop()
            print("round %d %-40s %7.1f tps (saturated)" % (rnd + 1, m.name, tps[m.name][-1]),
                  flush=True)
    return tps


def med(rs, k):
    v = [r[k] for r in rs if k in r]
    return statistics.median(v) if v else None


def section(a, fixed, sat, ms):
    lines = [TITLE, "",
             pgbench.setup_line("bench/capture_cost.py", a.reps, a.seconds,
                                " --rate %d" % a.rate) +
             ". Modes alternate within each round; medians over rounds. At the fixed rate "
             "(pgbench -R %d) kernel.bpf_stats_enabled is on in every mode: capture's CPU is "
             "the mode's BPF programs' run time plus its own threads' CPU (rspd's; the "
             "floor's and perf record's process), per transaction; `perf record` and rspd's "
             "perf backend spend most of theirs in the kernel's perf code, which neither "
             "count shows: their machine CPU is the honest figure. Records are what rspd's "
             "rings delivered; events what they stand for (folded events counted apart). "
             "More busy CPU is the machine's (/proc/stat) over bare's in the same round, "
             "with the 5th-95th percentile of 2,000 paired bootstrap resamples of the "
             "rounds." % a.rate, "",
             "| mode | capture CPU per tx | of it BPF | of it threads | records per tx "
             "(events) | CPU per record | machine busy per tx | more than bare, 90% "
             "interval | bytes per record | history in 64 MiB |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    bare = [r["busy_us"] for r in fixed.get("bare", [])]
    for m in ms:
        rs = fixed[m.name]
        busy = [r["busy_us"] for r in rs]
        more = ""
        if bare and m.name != "bare":
            lo, hi = interval(busy, bare, lambda x, y: statistics.median(x) -
                              statistics.median(y))
            more = "%+.1f us (%+.1f .. %+.1f)" % (statistics.median(busy) -
                                                 statistics.median(bare), lo, hi)
        rec = med(rs, "records_tx")
        lines.append("| %s | %s | %s | %s | %s | %s | %.1f us | %s | %s | %s |" % (
            m.name,
            "%.1f us" % med(rs, "capture_us") if m.name != "bare" else "",
            "%.1f us" % med(rs, "bpf_us") if m.prefixes else "",
            "%.1f us" % med(rs, "user_us") if m.name != "bare" else "",
            "%.1f (%.1f)" % (rec, med(rs, "events_tx")) if rec is not None else "",
            "%.2f us" % med(rs, "us_record") if rec else "",
            statistics.median(busy), more,
            "%.0f" % med(rs, "bytes_record") if rec else "",
            "%.0f s" % med(rs, "history_s") if rec else ""))
    if sat:
        lines += ["", "Saturated (pgbench without -R, no statistics):", "",
                  "| mode | tps | loss | loss, 90% interval |", "|---|---:|---:|---|"]
        b = statistics.median(sat["bare"])
        for m in ms:
            t = statistics.median(sat[m.name])
            li = "" if m.name == "bare" else "%.1f%% .. %.1f%%" % tuple(
                100 * x for x in interval(sat[m.name], sat["bare"], loss))
            lines.append("| %s | %.1f | %.1f%% | %s |" % (m.name, t, 100 * (1 - t / b), li))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=12)
    ap.add_argument("--rate", type=int, default=1000, help="pgbench -R for the fixed load")
    ap.add_argument("--modes", default="bare,floor,rspd,rspd-none,rspd-perf,perf-record")
    ap.add_argument("--no-saturated", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench/capture_cost.py: run as root (BPF, perf, bpf_stats)")
    ms = modes(a.build, a.modes.split(","))
    cluster = pgbench.Cluster(pgbench.need_postgres(), port=54351)
    try:
        cluster.start()
        cluster.run(5)  # warm the cache
        fixed = fixed_rate(a, cluster, ms)
        sat = None if a.no_saturated else saturated(a, cluster, ms)
    finally:
        cluster.stop()
    pgbench.report(section(a, fixed, sat, ms), a.out, TITLE, a.no_write)


if __name__ == "__main__":
    main()
