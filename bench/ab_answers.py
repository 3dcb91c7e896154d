#!/usr/bin/python3
"""Two rspd builds side by side on one run of a workload: the same answers?

usage: sudo bench/ab_answers.py --old BUILD --new BUILD [--runs N] [--out FILE | --no-write]

Both rspd (--capture bpf, defaults) record the same run at the same time
(two sets of BPF programs on the same tracepoints: each sees every event),
and both are asked the same questions over the same range: a change in how
records are captured or stored (issue 35's folded records) must leave the
answers as they were. Workloads:

  rpc_fsync  a client asking a server that fsync()s (tests/workloads): the
             client's snapshot (its chain: client -> server -> disk), the
             wait-for graph of the client's process
  pgbench    PostgreSQL at 500 transactions a second (bench/pgbench.py's
             cluster): the busiest backend's snapshot and graph, and the
             off-CPU latency profiles of the backends' processes

Compared: the knots (their vertices' names), the snapshot's categories (each
within 2% of the snapshot's total time), percent accounted (within 2
points), the graph's five heaviest edges (weights within 2% of the
heaviest), the profiles' counts and sums (within 2%). Each rspd's own
threads are other processes to the other: they are left out by asking
about the workload's processes only.

Writes the section "## The same answers from two builds" of BENCHMARKS.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import pgbench  # noqa: E402

TITLE = "## The same answers from two builds (issue 35)"
TOL = 0.02


class Daemon:
    def __init__(self, build, extra=()):
        self.build = build
        self.dir = tempfile.mkdtemp(prefix="rsp-ab.")
        self.sock = os.path.join(self.dir, "s.sock")
        conf = os.path.join(self.dir, "c.conf")
        open(conf, "w").close()
        self.p = subprocess.Popen([os.path.join(build, "daemon", "rspd"), "--foreground",
                                   "--config", conf, "--socket", self.sock, "--capture", "bpf"]
                                  + list(extra),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.exists(self.sock) and self.ctl("status") is not None:
                return
            time.sleep(0.05)
        sys.exit("rspd of %s did not start" % build)

    def ctl(self, *args):
        p = subprocess.run([os.path.join(self.build, "cli", "rspctl"), "--socket", self.sock]
                           + list(args) + ["--json"], capture_output=True, text=True)
        return json.loads(p.stdout) if p.returncode == 0 else None

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=60)


def knots(g):
    return sorted(sorted(v["name"] for v in k["vertices"]) for k in g["knots"]) if g else None


def heavy(g, n=5):
    edges = [e for k in g["knots"] for e in k["edges"]] + g["edges"]
    edges.sort(key=lambda e: -e["weight_s"])
    return {(e["from_id"], e["to_id"]): e["weight_s"] for e in edges[:n]}


def compare(name, a, b, out):
    """Append (what, old, new, ok) rows comparing the answers @a and @b."""
    ga, gb = a.get("graph"), b.get("graph")
    if ga and gb:
        out.append((name + ": knots", knots(ga), knots(gb), knots(ga) == knots(gb)))
        ha, hb = heavy(ga), heavy(gb)
        top = max(list(ha.values()) + list(hb.values()) + [1e-9])
        bad = [k for k in set(ha) & set(hb) if abs(ha[k] - hb[k]) > TOL * top]
        out.append((name + ": heaviest edges", "%.3f s" % max(ha.values(), default=0),
                    "%.3f s" % max(hb.values(), default=0), not bad))
    sa, sb = a.get("snapshot"), b.get("snapshot")
    if sa and sb:
        tot = max(sa["total_s"], sb["total_s"], 1e-9)
        cats = set(sa["categories"]) | set(sb["categories"])
        worst = max((abs(sa["categories"].get(c, 0) - sb["categories"].get(c, 0)) / tot, c)
                    for c in cats)
        out.append((name + ": snapshot categories (largest difference)",
                    "", "%.2f%% (%s)" % (100 * worst[0], worst[1]), worst[0] <= TOL))
        out.append((name + ": percent accounted", "%.1f%%" % sa["percent_accounted"],
                    "%.1f%%" % sb["percent_accounted"],
                    abs(sa["percent_accounted"] - sb["percent_accounted"]) <= 2))
    pa, pb = a.get("hist"), b.get("hist")
    if pa and pb:
        ca = sum(p["count"] for p in pa["profiles"])
        cb = sum(p["count"] for p in pb["profiles"])
        out.append((name + ": off-CPU latencies counted", ca, cb,
                    abs(ca - cb) <= TOL * max(ca, cb, 1)))


def ask(d, pid, tid, rng):
    return {"graph": d.ctl("graph", "--pid", str(pid), *rng),
            "snapshot": d.ctl("snapshot", str(tid), *rng),
            "hist": d.ctl("hist", "--op", "offcpu", "--pid", str(pid), *rng)}


def rpc(old, new):
    import rsptest as t  # noqa: E402  (its workload runner)
    w = t.workload("rpc_fsync", 300, "/var/tmp", 1024)
    time.sleep(1.5)  # both drained, both past the read-ahead
    st = new.ctl("status")["window"]
    rng = ["--from", "%.9f" % (st["newest_s"] - w["elapsed_s"] - 1.0),
           "--to", "%.9f" % (st["newest_s"] - 1.0)]
    return ask(old, w["client"], w["client"], rng), ask(new, w["client"], w["client"], rng)


def busiest_backend(cluster):
    out = subprocess.run(["pgrep", "-f", "postgres: postgres postgres"], capture_output=True,
                         text=True).stdout.split()
    best, most = None, -1
    for pid in out:
        try:
            with open("/proc/%s/stat" % pid) as f:
                v = f.read().rsplit(")", 1)[1].split()
            if int(v[11]) + int(v[12]) > most:
                best, most = int(pid), int(v[11]) + int(v[12])
        except OSError:
            pass
    return best


def pg(old, new, cluster):
    res = {}
    th = threading.Thread(target=lambda: res.setdefault("tps", cluster.run(10, 500)))
    th.start()
    time.sleep(6)
    pid = busiest_backend(cluster)
    th.join()
    time.sleep(1.5)
    st = new.ctl("status")["window"]
    rng = ["--from", "%.9f" % (st["newest_s"] - 6.0), "--to", "%.9f" % (st["newest_s"] - 1.5)]
    return ask(old, pid, pid, rng), ask(new, pid, pid, rng)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    rows = []
    cluster = pgbench.Cluster(pgbench.need_postgres(), port=54361)
    cluster.start()
    try:
        for run in range(a.runs):
            old, new = Daemon(a.old), Daemon(a.new)
            time.sleep(2)
            try:
                ra, rb = rpc(old, new)
                compare("rpc_fsync run %d" % (run + 1), ra, rb, rows)
                pa, pb = pg(old, new, cluster)
                compare("pgbench run %d" % (run + 1), pa, pb, rows)
            finally:
                old.stop()
                new.stop()
    finally:
        cluster.stop()
    lines = [TITLE, "",
             "Command: `sudo bench/ab_answers.py --old %s --new %s --runs %d` (%s). Machine: "
             "%s, %d CPUs. Both rspd record the same run at once; the same questions over "
             "the same range; tolerances 2%%." % (a.old, a.new, a.runs, time.strftime("%Y-%m-%d"),
                                                  os.uname().nodename, os.cpu_count()), "",
             "| what | old | new | same |", "|---|---|---|---|"]
    for what, x, y, ok in rows:
        lines.append("| %s | %s | %s | %s |" % (what, x, y, "yes" if ok else "**no**"))
    pgbench.report(lines, a.out, TITLE, a.no_write)
    sys.exit(0 if all(ok for *_, ok in rows) else 1)


if __name__ == "__main__":
    main()
