#!/usr/bin/python3
"""A real database under capture: PostgreSQL's pgbench (TPC-B-like, 4 clients,
synchronous_commit on, over the UNIX socket) bare, under rspd with either
capture backend (--capture perf, --capture bpf) and stack policy, and under
`perf record -a -g` of the scheduler's events. Runs alternate mode by mode
within each repetition; each figure is the median of the repetitions, and
every ratio is to bare in the same run. For rspd: the window's bytes per
record and the seconds of history 64 MiB would hold at that density, and
under the table, where the window's bytes go by kind of record.

PostgreSQL is installed from Debian here (apt-get install postgresql) if it is
missing: the benchmark's dependency, not the tests'. A throwaway cluster
lives in a temporary directory, owned by the postgres user.

usage: sudo bench/pgbench.py [--reps N] [--seconds S] [--build DIR] [--out FILE]
       sudo bench/pgbench.py --density TPS [--seconds S] [--build DIR] [--out FILE]
       sudo bench/pgbench.py --span [--seconds S] [--build DIR] [--out FILE]
Writes its section of BENCHMARKS.md (replacing an older one of the same title).

--density TPS: issue 12's window target instead of the cost: pgbench held
at TPS transactions a second (pgbench -R: a steady, known load, not the
machine's limit, so a loaded machine changes little), under rspd with its
defaults on either backend (stacks, DWARF cpu-clock samples and all) and
with --stacks sleeps; records a second, window bytes per record and the
seconds of history 64 MiB holds at that load, and the bytes by kind, in a
section of its own.

--span: the history the window really holds under full pgbench load (no -R):
pgbench for S seconds (default 90: long enough to fill 64 MiB) under rspd
--stacks sleeps and rspd's defaults, each with and without
--no-window-compress, one after the other; the window's span at the end
(once it has evicted: what it holds, not an estimate), its bytes per record
in memory, the compression ratio and the compressor's CPU.
"""
import argparse
import glob
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from capture import Bare, kinds_table  # noqa: E402  (the same "no capture" mode, table)
TITLE = "## pgbench under capture: BPF vs perf backend (issue 12)"
TITLE_DENSITY = "## Window density at a set load: pgbench -R (issue 12)"
TITLE_SPAN = "## The window's history under full pgbench load (issue 12)"
WINDOW = 64 << 20


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def need_postgres():
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        print("installing postgresql from Debian (apt-get)")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends",
                        "postgresql"], check=True, env=env, stdout=subprocess.DEVNULL)
    return sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]


class Cluster:
    def __init__(self, bindir, port=54329):
        self.bin = bindir
        self.port = str(port)
        self.dir = tempfile.mkdtemp(prefix="rsp-pgbench.")
        os.chmod(self.dir, 0o755)
        shutil.chown(self.dir, "postgres", "postgres")
        self.data = os.path.join(self.dir, "data")

    def as_pg(self, args, **kw):
        return subprocess.run(["runuser", "-u", "postgres", "--"] + args, capture_output=True,
                              text=True, **kw)

    def start(self):
        p = self.as_pg([os.path.join(self.bin, "initdb"), "-D", self.data, "-A", "trust"])
        if p.returncode:
            sys.exit("initdb: " + p.stderr)
        p = self.as_pg([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-w", "-l",
                        os.path.join(self.dir, "log"), "-o",
                        "-k %s -p %s -c listen_addresses='' -c synchronous_commit=on "
                        "-c shared_buffers=128MB" % (self.dir, self.port), "start"])
        if p.returncode:
            sys.exit("pg_ctl start: " + p.stderr + p.stdout)
        p = self.pgbench(["-i", "-s", "10", "-q"])
        if p.returncode:
            sys.exit("pgbench -i: " + p.stderr)

    def pgbench(self, args):
        return self.as_pg(["pgbench", "-h", self.dir, "-p", self.port] + args + ["postgres"])

    def run(self, seconds, rate=None):
        p = self.pgbench(["-n", "-c", "4", "-j", "2", "-T", str(seconds)] +
                         (["-R", str(rate)] if rate else []))
        m = re.search(r"tps = ([\d.]+) \((?:without|excluding)", p.stdout)
        if not m:
            sys.exit("pgbench: " + p.stdout + p.stderr)
        return float(m.group(1))

    def stop(self):
        self.as_pg([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "fast", "stop"])
        shutil.rmtree(self.dir, ignore_errors=True)


class Rspd:
    """rspd on a private socket with a backend, a stack policy and @extra options."""

    def __init__(self, build, backend, policy, extra=()):
        """@policy None: rspd's default stack policy (no --stacks)."""
        self.build, self.backend, self.policy, self.extra = build, backend, policy, list(extra)
        if policy:
            self.name = "rspd --capture %s --stacks %s" % (backend,
                                                           " ".join([policy] + self.extra))
        else:
            self.name = " ".join(["rspd --capture %s (defaults)" % backend] + self.extra)

    def ctl(self, *args):
        return json.loads(sh([os.path.join(self.build, "cli", "rspctl"), "--socket", self.sock]
                             + list(args) + ["--json"], check=True).stdout)

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="rsp-pgbench-rspd.")
        self.sock = os.path.join(self.dir, "s.sock")
        conf = os.path.join(self.dir, "rspd.conf")  # empty: a regular file, as rspd wants
        open(conf, "w").close()
        self.p = subprocess.Popen([os.path.join(self.build, "daemon", "rspd"), "--foreground",
                                   "--config", conf, "--socket", self.sock,
                                   "--capture", self.backend]
                                  + (["--stacks", self.policy] if self.policy else [])
                                  + self.extra,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(300):
            if os.path.exists(self.sock) and sh([os.path.join(self.build, "cli", "rspctl"),
                                                 "--socket", self.sock, "status"]).returncode == 0:
                break
            time.sleep(0.05)
        else:
            self.abort("rspd did not start")
        st = self.ctl("status")
        # "auto": whichever rspd chose (status names the backend it runs)
        if self.backend != "auto" and st["config"].get("capture") != self.backend:
            self.abort("rspd runs %s, not %s" % (st["config"].get("capture"), self.backend))
        self.t0 = time.time()

    def abort(self, why):
        """Exit with why and rspd's stderr, without leaving it running."""
        self.p.kill()
        _, err = self.p.communicate(timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)
        sys.exit("%s: %s" % (why, err.strip()))

    def stop(self):
        st = self.ctl("status")
        w = st["window"]
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)
        recs = w["records"] + w["evicted_records"]
        self.last_window = w
        return {"bytes_per_record": w["bytes"] / w["records"] if w["records"] else 0,
                "records_per_s": recs / max(time.time() - self.t0, 1e-9),
                "stacks": st["config"].get("stacks", "?"),
                "lost": st["capture"]["lost"] if "capture" in st else 0,
                "kinds": w.get("kinds", [])}


class PerfRecord:
    name = "perf record -a -g (sched events)"

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="rsp-pgbench-perf.", dir="/dev/shm")
        self.p = subprocess.Popen(["perf", "record", "-q", "-a", "-g", "-o",
                                   os.path.join(self.dir, "perf.data"), "-e",
                                   "sched:sched_switch,sched:sched_waking,sched:sched_wakeup_new,"
                                   "sched:sched_process_fork,sched:sched_process_exec,"
                                   "sched:sched_process_exit"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=120)
        shutil.rmtree(self.dir, ignore_errors=True)
        return {}


def write_section(out, text, title=TITLE):
    """Replace the section in place (capture.py's moves it to the end, which would
    put it after the hand-written analysis that follows it)."""
    doc = ""
    if os.path.exists(out):
        with open(out) as f:
            doc = f.read()
    if title in doc:
        start = doc.index(title)
        nxt = doc.find("\n## ", start + len(title))
        doc = doc[:start] + text + (doc[nxt + 1:] if nxt >= 0 else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    with open(out, "w") as f:
        f.write(doc)


def report(lines, out, title, no_write=False):
    """Print the section made of @lines; write it into @out in place (its
    hand-written companion after it stays there) unless @no_write."""
    text = "\n".join(lines) + "\n"
    print(text)
    if not no_write:
        write_section(out, text, title)
        print("wrote %s" % out)


def density(a):
    """--density: the window's bytes at a steady load, per mode (one run each)."""
    cluster = Cluster(need_postgres())
    modes = [Rspd(a.build, "bpf", None), Rspd(a.build, "bpf", "sleeps"),
             Rspd(a.build, "perf", None), Rspd(a.build, "perf", "sleeps")]
    res = {}
    try:
        cluster.start()
        cluster.run(3)
        for m in modes:
            m.start()
            t = cluster.run(a.seconds, a.density)
            res[m.name] = (t, m.stop())
            print("%-40s %8.1f tps %6.0f records/s %5.0f bytes/record" % (
                m.name, t, res[m.name][1]["records_per_s"], res[m.name][1]["bytes_per_record"]),
                flush=True)
    finally:
        cluster.stop()
    lines = [TITLE_DENSITY, "",
             "Command: `sudo bench/pgbench.py --density %d --seconds %d` (%s). Machine: %s, "
             "%d CPUs, kernel %s. pgbench -c 4 -j 2 -R %d -T %d (held at %d transactions a "
             "second), scale 10, synchronous_commit on, UNIX socket; one run per mode. "
             "rspd's window bytes per record over what it holds at the end (records, stacks, "
             "DWARF samples and side records all counted), records a second over the run, "
             "and the seconds of history a 64 MiB window holds at that density and rate "
             "(issue 12: >= 60 s at 20k records/s, <= 55 bytes per record)."
             % (a.density, a.seconds, time.strftime("%Y-%m-%d"), platform.node(),
                os.cpu_count(), platform.release(), a.density, a.seconds, a.density), "",
             "| mode | stacks | tps | records/s | window bytes per record | window bytes/s | "
             "seconds in 64 MiB |", "|---|---|---|---|---|---|---|"]
    for m in modes:
        t, x = res[m.name]
        bps = x["bytes_per_record"] * x["records_per_s"]
        lines.append("| %s | %s | %.1f | %.0f | %.1f | %.0f | %.0f |" % (
            m.name, x["stacks"], t, x["records_per_s"], x["bytes_per_record"], bps,
            WINDOW / bps if bps else 0))
    lines.append("")
    lines += kinds_table([(m.name, [res[m.name][1]]) for m in modes])
    write_section(a.out, "\n".join(lines) + "\n", TITLE_DENSITY)
    print("\n".join(lines))


def span(a):
    """--span: the window's span after full pgbench load, compressed or not."""
    cluster = Cluster(need_postgres())
    modes = [Rspd(a.build, "bpf", "sleeps"), Rspd(a.build, "bpf", "sleeps",
                                                  ["--no-window-compress"]),
             Rspd(a.build, "bpf", None), Rspd(a.build, "bpf", None, ["--no-window-compress"])]
    res = {}
    try:
        cluster.start()
        cluster.run(5)
        for m in modes:
            m.start()
            t = cluster.run(a.seconds)
            q = {}
            for name, args in (("graph", ["graph"]), ("graph10", ["graph", "--last", "10s"])):
                t0 = time.time()
                p = sh([os.path.join(m.build, "cli", "rspctl"), "--socket", m.sock] + args)
                q[name] = (time.time() - t0) if p.returncode == 0 else None
            x = m.stop()
            w = m.last_window
            res[m.name] = (t, x, w, q)
            print("%-55s %7.1f tps span %5.1f s evicted %d, %.1f bytes/record stored" % (
                m.name, t, w["span_s"], w["evicted_chunks"],
                w.get("stored_bytes", w["bytes"]) / max(w["records"], 1)), flush=True)
    finally:
        cluster.stop()
    lines = [TITLE_SPAN, "",
             "Command: `sudo bench/pgbench.py --span --seconds %d` (%s). Machine: %s, %d CPUs, "
             "kernel %s. pgbench -c 4 -j 2 -T %d (full load, no -R), scale 10, "
             "synchronous_commit on, UNIX socket; one run per mode, one after the other. "
             "The window (64 MiB) at the end of each run: the time it spans (it had evicted, "
             "so this is what it holds), its records, their bytes raw and in memory (cold "
             "chunks compressed), the compressor's CPU time over the run, and how long "
             "`rspctl graph` of the whole window and of its last 10 s took right after "
             "(issue 12: >= 30 s under this load with --stacks sleeps)."
             % (a.seconds, time.strftime("%Y-%m-%d"), platform.node(), os.cpu_count(),
                platform.release(), a.seconds), "",
             "| mode | tps | records/s | window span s | evicted chunks | records held | "
             "raw bytes per record | bytes per record in memory | compressed | compressor CPU s | "
             "graph s | graph --last 10s s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def secs(v):
        return "%.2f" % v if v is not None else "failed"
    for m in modes:
        t, x, w, q = res[m.name]
        zr = (w["compressed_raw_bytes"] / w["compressed_bytes"]) if w.get("compressed_bytes") \
            else 0
        lines.append("| %s | %.1f | %.0f | %.1f | %d | %d | %.1f | %.1f | %s | %.2f | %s | %s |" % (
            m.name, t, x["records_per_s"], w["span_s"], w["evicted_chunks"], w["records"],
            w["bytes"] / max(w["records"], 1), w["stored_bytes"] / max(w["records"], 1),
            ("%d chunks, %.1fx" % (w["compressed_chunks"], zr)) if zr else "no",
            w.get("compress_seconds", 0), secs(q["graph"]), secs(q["graph10"])))
    write_section(a.out, "\n".join(lines) + "\n", TITLE_SPAN)
    print("\n".join(lines))


def setup_line(script, reps, seconds, opts=""):
    """The command, the date, the machine and pgbench's settings, for a section."""
    return ("Command: `sudo %s%s --reps %d --seconds %d` (%s). Machine: %s, %d CPUs, kernel %s. "
            "pgbench -c 4 -j 2 -T %d, scale 10, synchronous_commit on, UNIX socket, PostgreSQL "
            "from Debian" % (script, opts, reps, seconds, time.strftime("%Y-%m-%d"),
                             platform.node(), os.cpu_count(), platform.release(), seconds))


def alternate(cluster, modes, reps, seconds):
    """Start @cluster, then pgbench for @seconds under each mode in turn, @reps
    times; stop it. Returns ({mode: [tps]}, {mode: [what its stop() said]})."""
    tps = {m.name: [] for m in modes}
    extra = {m.name: [] for m in modes}
    try:
        cluster.start()
        cluster.run(5)  # warm the cache
        for rep in range(reps):
            for m in modes:
                m.start()
                t = cluster.run(seconds)
                extra[m.name].append(m.stop())
                tps[m.name].append(t)
                print("rep %d %-40s %8.1f tps" % (rep + 1, m.name, t), flush=True)
    finally:
        cluster.stop()
    return tps, extra


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--density", type=int, default=0, metavar="TPS")
    ap.add_argument("--span", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench/pgbench.py: run as root (rspd and perf capture system-wide)")
    if a.density:
        return density(a)
    if a.span:
        if a.seconds == 15:  # the default is the cost runs': too short to fill 64 MiB
            a.seconds = 90
        return span(a)
    cluster = Cluster(need_postgres())
    modes = [Bare(), Rspd(a.build, "perf", "none"), Rspd(a.build, "bpf", "none"),
             Rspd(a.build, "perf", "sleeps"), Rspd(a.build, "bpf", "sleeps"), PerfRecord()]
    tps, extra = alternate(cluster, modes, a.reps, a.seconds)
    bare = statistics.median(tps["bare"])
    lines = [TITLE, "",
             setup_line("bench/pgbench.py", a.reps, a.seconds) +
             "; modes alternate within each repetition, figures are medians, ratios to bare "
             "from the same run.", "",
             "| mode | tps | ratio to bare | loss | window bytes per record | records/s | "
             "seconds in 64 MiB |", "|---|---|---|---|---|---|---|"]
    for m in modes:
        t = statistics.median(tps[m.name])
        row = "| %s | %.1f | %.3f | %.1f%% |" % (m.name, t, t / bare, 100 * (1 - t / bare))
        if isinstance(m, Rspd):
            bpr = statistics.median(x["bytes_per_record"] for x in extra[m.name])
            rps = statistics.median(x["records_per_s"] for x in extra[m.name])
            row += " %.0f | %.0f | %.0f |" % (bpr, rps, WINDOW / (bpr * rps) if bpr * rps else 0)
        else:
            row += "  |  |  |"
        lines.append(row)
    lines.append("")
    lines += kinds_table([(m.name, extra[m.name]) for m in modes if isinstance(m, Rspd)])
    write_section(a.out, "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
