#!/usr/bin/python3
"""Where capture's CPU goes under a real database: pgbench (bench/pgbench.py's
cluster and load) under rspd --capture bpf with each stack policy asked for,
and for S seconds in the middle of the run, with kernel.bpf_stats_enabled:

  - rspd's CPU by thread (/proc/PID/task/*/stat; the threads are named:
    rspd is capture, rspd-hist the histograms, rspd-zip the compression...)
  - every BPF program's runs a second, mean run time and share of a CPU
    (bpftool's run_cnt and run_time_ns; the statistics add two clock reads
    to every run, in every program alike)
  - the stack cache's counters from rspctl status: sites, walks, of those
    without a key, and the checked sleep time whose reason differed.

One run per policy, no bare run: a cost split, not a loss (bench/bpf_floor.py
--pgbench measures the loss). Shares are of one CPU.

usage: sudo bench/pgbench_split.py [--policies none,default] [--seconds S] [--build DIR]
                                   [--out FILE | --no-write] [--perf PREFIX]
Writes the section "## Where capture's CPU goes under pgbench" of BENCHMARKS.md.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import pgbench  # noqa: E402  (its Cluster, Rspd and in-place write_section)

TITLE = "## Where capture's CPU goes under pgbench (issues 12, 13)"


def threads(pid):
    """{tid: (name, CPU jiffies)} of @pid's threads."""
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                st = f.read()
        except OSError:
            continue
        name = st[st.index("(") + 1:st.rindex(")")]
        f = st[st.rindex(")") + 2:].split()
        out[t] = (name, int(f[11]) + int(f[12]))
    return out


def progs():
    out = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True,
                         text=True).stdout
    return {p["id"]: p for p in json.loads(out or "[]")}


def split(a, cluster, policy):
    rspd = pgbench.Rspd(a.build, "bpf", None if policy == "default" else policy)
    rspd.start()
    res = {}
    load = threading.Thread(target=lambda: res.setdefault("tps", cluster.run(a.seconds + 6)))
    load.start()
    time.sleep(3)
    hz = os.sysconf("SC_CLK_TCK")
    old = subprocess.run(["sysctl", "-n", "kernel.bpf_stats_enabled"], capture_output=True,
                         text=True).stdout.strip() or "0"
    subprocess.run(["sysctl", "-q", "-w", "kernel.bpf_stats_enabled=1"])
    prof = None
    try:
        p0, t0, w0 = progs(), threads(rspd.p.pid), time.time()
        if a.perf:  # rspd's threads sampled too: what each spends its CPU on
            prof = subprocess.Popen(["perf", "record", "-q", "-F", "999", "-e", "cpu-clock",
                                     "-p", str(rspd.p.pid), "-o", "%s.%s" % (a.perf, policy),
                                     "--", "sleep", str(a.seconds)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(a.seconds)
        p1, t1, w1 = progs(), threads(rspd.p.pid), time.time()
    finally:
        subprocess.run(["sysctl", "-q", "-w", "kernel.bpf_stats_enabled=" + old])
        if prof:
            prof.wait()
    st = rspd.ctl("status")
    load.join()
    rspd.stop()
    el = w1 - w0
    by_thread = {}
    for tid, (name, cpu) in t1.items():
        by_thread[name] = by_thread.get(name, 0) + (cpu - t0.get(tid, (name, 0))[1]) / hz / el
    bpf = []
    for pid, p in p1.items():
        b = p0.get(pid, {})
        runs = p.get("run_cnt", 0) - b.get("run_cnt", 0)
        if runs and p.get("name", "").startswith("rsp_"):
            ns = p.get("run_time_ns", 0) - b.get("run_time_ns", 0)
            bpf.append((ns / 1e9 / el, p["name"], runs / el, ns / runs))
    return {"tps": res.get("tps", 0), "threads": by_thread, "bpf": sorted(bpf, reverse=True),
            "stack_cache": st.get("stack_cache") or {}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--policies", default="none,default",
                    help="stack policies, comma-separated (default: rspd's default)")
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--perf", metavar="PREFIX",
                    help="also sample rspd with perf record into PREFIX.POLICY and print "
                    "each thread's top functions (perturbs the run: implies --no-write)")
    a = ap.parse_args()
    if a.perf:
        a.no_write = True
    if os.geteuid():
        sys.exit("bench/pgbench_split.py: run as root (rspd, BPF statistics)")
    cluster = pgbench.Cluster(pgbench.need_postgres(), port=54345)
    runs = {}
    try:
        cluster.start()
        cluster.run(5)  # warm the cache
        for pol in a.policies.split(","):
            runs[pol] = split(a, cluster, pol)
    finally:
        cluster.stop()
    lines = [TITLE, "",
             "Command: `sudo bench/pgbench_split.py --policies %s --seconds %d` (%s). Machine: "
             "%s, %d CPUs, kernel %s. pgbench -c 4 -j 2, scale 10, synchronous_commit on, UNIX "
             "socket, under rspd --capture bpf; for %d s in the middle of the run, with "
             "kernel.bpf_stats_enabled (two clock reads more per program run). One run per "
             "policy; shares are of one CPU."
             % (a.policies, a.seconds, time.strftime("%Y-%m-%d"), platform.node(),
                os.cpu_count(), platform.release(), a.seconds), "",
             "| policy | tps | rspd threads (share of a CPU) | BPF programs | BPF, the "
             "largest (runs/s, ns/run, share) |", "|---|---:|---|---:|---|"]
    for pol, r in runs.items():
        th = ", ".join("%s %.2f%%" % (n, 100 * v) for n, v in
                       sorted(r["threads"].items(), key=lambda kv: -kv[1]) if v >= 0.0005)
        top = "; ".join("%s %.0f/s %.0f ns %.2f%%" % (name, rate, ns, 100 * share)
                        for share, name, rate, ns in r["bpf"][:4])
        lines.append("| %s | %.0f | %s (total %.2f%%) | %.2f%% | %s |"
                     % (pol, r["tps"], th, 100 * sum(r["threads"].values()),
                        100 * sum(b[0] for b in r["bpf"]), top))
    lines += ["", "The stack cache (rspctl status at the end of each run; the whole machine):", "",
              "| policy | sites | walked | no key (walked) | checked sleep time | its reason "
              "differs |", "|---|---:|---:|---:|---:|---:|"]
    for pol, r in runs.items():
        sc = r["stack_cache"]
        if not sc.get("sites"):
            lines.append("| %s | - | - | - | - | - |" % pol)
            continue
        stt = sc.get("sleep_time") or {}
        lines.append("| %s | %d | %.2f%% | %.2f%% | %.3f s | %.4f%% |"
                     % (pol, sc["sites"], 100.0 * sc["walked"] / sc["sites"],
                        100.0 * sc["no_key"] / sc["sites"], stt.get("checked_s", 0),
                        100.0 * stt.get("reason_differ_share", 0)))
    pgbench.report(lines, a.out, TITLE, a.no_write)
    for pol in runs if a.perf else ():
        print("\nperf record of rspd under policy %s (%s.%s), top functions by thread:" %
              (pol, a.perf, pol))
        rep = subprocess.run(["perf", "report", "-i", "%s.%s" % (a.perf, pol), "--stdio",
                              "--sort", "comm,dso,sym", "--percent-limit", "0.7"],
                             capture_output=True, text=True).stdout
        print("\n".join(x for x in rep.splitlines() if x and not x.startswith("#")))


if __name__ == "__main__":
    main()
