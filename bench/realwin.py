#!/usr/bin/python3
"""The analyses on windows of real programs (issue 14): rspd records each of
  - pgbench: PostgreSQL from Debian, 4 clients, synchronous_commit on;
  - make -j2: Debian's make and gcc on a generated 7-unit C project;
  - rpc_fsync: a client and a server that pwrite()s and fsync()s per request
    (the I/O-heavy process: thousands of block requests);
into a window of its own and dumps it; then, on each dump, times
`rspctl analyze DUMP graph`, `snapshot PID` (the heaviest process, and the
I/O-heavy one where there is one), `hist --top 10`, and `perf script -i DUMP`
(the analyze target: >= 20x faster), best of REPS, in ms and ms per million
records (the target: graph and snapshot <= 250 ms per 1M records).

usage: sudo bench/realwin.py [--reps N] [--out BENCHMARKS.md] [--windows pgbench,make,rpc_fsync]
Run on a quiet machine: it reports wall times.

--callgrind: instead of wall times, each query's instructions (the whole
rspctl process, valgrind --tool=callgrind) and instructions per record, in a
section of its own: numbers a loaded or shared machine does not change
(valgrind must be installed: apt-get install valgrind). About a minute per
query on the pgbench window.
"""
import argparse
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import cproject  # noqa: E402  (tests/e2e: the same project the test builds)
from pgbench import Cluster, need_postgres, report  # noqa: E402

BUILD = os.environ.get("RSP_BUILD", os.path.join(ROOT, "build", "release"))
RSPD = os.path.join(BUILD, "daemon", "rspd")
RSPCTL = os.path.join(BUILD, "cli", "rspctl")
WORKLOADS = os.path.join(BUILD, "workloads")
TITLE = "## Analyses on real programs' windows (issue 14)"
TITLE_CG = "## Analyses on real programs' windows: instructions per record (issue 14)"
BACKENDS = set()  # the capture backends rspd ran (status: config.capture)


class Rspd:
    def __init__(self, window="256M"):
        self.dir = tempfile.mkdtemp(prefix="rsp-realwin.")
        self.sock = os.path.join(self.dir, "s.sock")
        conf = os.path.join(self.dir, "rspd.conf")
        open(conf, "w").close()
        self.p = subprocess.Popen([RSPD, "--foreground", "--config", conf, "--socket", self.sock,
                                   "--window", window, "--overhead-budget", "0"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            p = self.ctl("status", "--json") if os.path.exists(self.sock) else None
            if p and p.returncode == 0:
                BACKENDS.add(json.loads(p.stdout)["config"].get("capture", "?"))
                return
            time.sleep(0.1)
        sys.exit("rspd did not start")

    def ctl(self, *args):
        return subprocess.run([RSPCTL, "--socket", self.sock] + list(args), capture_output=True,
                              text=True)

    def dump(self, path):
        p = self.ctl("dump", "-o", path)
        if p.returncode:
            sys.exit("dump: " + p.stderr)

    def stop(self):
        self.p.terminate()
        self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def record_make(out):
    src = tempfile.mkdtemp(prefix="rsp-realwin-make.")
    cproject.write(src)
    d = Rspd()
    try:
        time.sleep(1)
        p = subprocess.Popen(["make", "-s", "-j2", "-C", src], stdout=subprocess.DEVNULL)
        p.wait()
        time.sleep(0.5)
        d.dump(out)
    finally:
        d.stop()
        shutil.rmtree(src, ignore_errors=True)
    return {"make": p.pid}


def record_rpc(out):
    d = Rspd()
    try:
        time.sleep(1)
        r = subprocess.run([os.path.join(WORKLOADS, "rpc_fsync"), "5000", "/var/tmp", "4"],
                           capture_output=True, text=True, check=True)
        w = json.loads(r.stdout.strip().splitlines()[-1])
        time.sleep(0.5)
        d.dump(out)
    finally:
        d.stop()
    return {"rpc_fsync server (I/O-heavy)": w["server"], "rpc_fsync client": w["client"]}


def record_pgbench(out):
    c = Cluster(need_postgres(), port=54332)
    c.start()
    d = Rspd()
    pids = {}
    try:
        time.sleep(1)
        run = subprocess.Popen(["runuser", "-u", "postgres", "--", "pgbench", "-h", c.dir, "-p",
                                c.port, "-n", "-c", "4", "-j", "2", "-T", "10", "postgres"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while run.poll() is None and not pids:
            time.sleep(0.3)
            ps = subprocess.run(["ps", "-u", "postgres", "-o", "pid=,args="],
                                capture_output=True, text=True).stdout
            for line in ps.splitlines():
                if "postgres: postgres postgres [local]" in line:
                    pids["a pgbench backend"] = int(line.split()[0])
                    break
        run.wait()
        time.sleep(0.5)
        d.dump(out)
    finally:
        d.stop()
        c.stop()
    return pids


def best_ms(cmd, reps):
    best = None
    for _ in range(reps):
        t = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        dt = (time.monotonic() - t) * 1000
        if p.returncode:
            return None, p.stderr.strip()
        best = dt if best is None or dt < best else best
    return best, ""


def callgrind_ir(cmd):
    """Instructions of one run of @cmd under callgrind: (count, "") or (None, error)."""
    fd, out = tempfile.mkstemp(prefix="rsp-realwin.", suffix=".callgrind", dir="/var/tmp")
    os.close(fd)
    try:
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"
        with open(out) as f:
            for line in f:
                if line.startswith("summary:"):
                    return int(line.split()[1]), ""
        return None, "callgrind wrote no summary"
    finally:
        os.unlink(out)


def callgrind_section(a, rows):
    lines = [TITLE_CG, "",
             "`sudo bench/realwin.py --callgrind` on %s, kernel %s, %s: each query's "
             "instructions (valgrind --tool=callgrind, the whole `rspctl analyze DUMP ...` "
             "process: loading the dump, symbols, the analysis, the text output), and per "
             "record of the window. \"load only (status)\" is the fixed cost every query "
             "pays (opening the dump and building its window by reference): a query's own "
             "work is its count minus that one." % (platform.node(), platform.release(),
                                                    time.strftime("%Y-%m-%d")), "",
             "| window | records | query | instructions | per record |",
             "|---|---:|---|---:|---:|"]
    for name, n, _size, what, ir, err, _perf in rows:
        if ir is None:
            lines.append("| %s | %d | %s | failed: %s | |" % (name, n, what, err[:80]))
        else:
            lines.append("| %s | %d | %s | %d | %.0f |" % (name, n, what, ir,
                                                          ir / n if n else 0))
    report(lines, a.out, TITLE_CG)


def records_of(dump):
    p = subprocess.run([RSPCTL, "analyze", dump, "status", "--json"], capture_output=True,
                       text=True)
    try:
        return json.loads(p.stdout)["window"]["records"]
    except (ValueError, KeyError):
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--callgrind", action="store_true",
                    help="instructions per record (callgrind) instead of wall times")
    ap.add_argument("--windows", default="pgbench,make,rpc_fsync",
                    help="which windows to record, comma-separated")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/realwin.py: run as root (rspd records system-wide)")
    if a.callgrind and not shutil.which("valgrind"):
        sys.exit("bench/realwin.py --callgrind: valgrind is not installed "
                 "(apt-get install valgrind)")
    recorders = (("pgbench", record_pgbench), ("make -j2", record_make),
                 ("rpc_fsync", record_rpc))
    wanted = a.windows.split(",")
    unknown = [w for w in wanted if w not in [r[0].split()[0] for r in recorders]]
    if unknown:
        sys.exit("bench/realwin.py: no window named %s (pgbench, make, rpc_fsync)" %
                 ", ".join(unknown))
    tmp = tempfile.mkdtemp(prefix="rsp-realwin-dumps.", dir="/var/tmp")
    rows = []
    try:
        for name, rec in recorders:
            if name.split()[0] not in wanted:
                continue
            dump = os.path.join(tmp, name.split()[0] + ".perf.data")
            pids = rec(dump)
            n = records_of(dump)
            size = os.path.getsize(dump)
            perf = None if a.callgrind else best_ms(["perf", "script", "-i", dump], a.reps)[0]
            # the fixed cost every query pays: starting rspctl, opening the dump
            # and building its window by reference (status does only that)
            cmds = [("load only (status)", ["status"]), ("graph", ["graph"]),
                    ("hist --top 10", ["hist", "--top", "10"])]
            cmds += [("snapshot %s" % who, ["snapshot", str(pid)]) for who, pid in pids.items()]
            for what, args in cmds:
                if a.callgrind:
                    ir, err = callgrind_ir([RSPCTL, "analyze", dump] + args)
                    rows.append((name, n, size, what, ir, err, None))
                    print("%-9s %8d records: %-40s %s" % (
                        name, n, what, "%d instructions, %.0f per record" %
                        (ir, ir / n if n else 0) if ir else err))
                    continue
                ms, err = best_ms([RSPCTL, "analyze", dump] + args, a.reps)
                rows.append((name, n, size, what, ms, err, perf))
                print("%-9s %8d records: %-40s %s" % (name, n, what,
                                                      "%.0f ms" % ms if ms else err))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.callgrind:
        callgrind_section(a, rows)
        return
    lines = [TITLE, "",
             "`sudo bench/realwin.py --reps %d` on %s, %d CPUs, kernel %s, %s; load before: %s." %
             (a.reps, platform.node(), os.cpu_count(), platform.release(),
              time.strftime("%Y-%m-%d"), open("/proc/loadavg").read().split()[0]),
             "Each program recorded alone by rspd (its defaults: --capture auto, which ran "
             "the %s backend; 256 MiB window), dumped, and analysed with `rspctl analyze "
             "DUMP ...`; best of %d, wall ms. \"load only (status)\" is what every query "
             "pays before its own work (starting rspctl, opening the dump, building its "
             "window by reference). Targets: graph and snapshot <= 250 ms per million "
             "records; analyze >= 20x faster than `perf script -i DUMP`." %
             (" and ".join(sorted(BACKENDS)) or "?", a.reps), "",
             "| window | records | dump MiB | query | ms | ms per 1M records | above the load, "
             "per 1M | perf script ms | perf script / query |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    # On a small window (make's ~13k records) the load is most of any
    # query: "above the load" is the query's own work per record, what
    # grows with the window (the per-record target's meaning there).
    load = {name: ms for name, n, size, what, ms, err, perf in rows
            if what.startswith("load only") and ms}
    for name, n, size, what, ms, err, perf in rows:
        if ms is None:
            lines.append("| %s | %d | %.0f | %s | failed: %s | | | | |" %
                         (name, n, size / 2**20, what, err[:80]))
            continue
        above = "-" if what.startswith("load only") or name not in load or not n else \
            "%.0f" % (max(ms - load[name], 0.0) * 1e6 / n)
        lines.append("| %s | %d | %.0f | %s | %.0f | %.0f | %s | %s | %s |" %
                     (name, n, size / 2**20, what, ms, ms * 1e6 / n if n else 0, above,
                      "%.0f" % perf if perf else "-", "%.1fx" % (perf / ms) if perf else "-"))
    report(lines, a.out, TITLE)


if __name__ == "__main__":
    main()
