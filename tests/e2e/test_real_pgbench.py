"""A real database: PostgreSQL from Debian under pgbench (TPC-B-like, 2
clients over a UNIX socket, synchronous_commit on), a private cluster in a
temporary directory.

Known answer for `rspctl snapshot BACKEND` (a backend serving one client):
each transaction is the client's statements, read from the socket, and a
commit that waits until the WAL is on disk (fdatasync, by the backend or
by another backend or the WAL writer flushing for it). So the backend's
chain reaches its client (sleeps in epoll_wait() on the socket ended by
pgbench, which is in the chain) and the disk (blocking I/O: a sleep in fdatasync's writeback
wait, its own or under the thread that flushed for it). Another process
writes to the disk and a busy loop takes a CPU meanwhile."""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import time

import rsptest as t
import snaptest as st

t.need_root()

bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
if not bins or not shutil.which("pgbench"):
    print("SKIP: PostgreSQL is not installed (scripts/deps.sh installs postgresql)")
    raise SystemExit(t.SKIP)
BIN = os.path.dirname(bins[-1])
PORT = "54331"


def as_pg(args, **kw):
    return subprocess.run(["runuser", "-u", "postgres", "--"] + args, capture_output=True,
                          text=True, timeout=kw.pop("timeout", 120), **kw)


def backends():
    """pids of the backends serving pgbench (ps: 'postgres: postgres postgres [local] ...')."""
    out = subprocess.run(["ps", "-u", "postgres", "-o", "pid=,args="], capture_output=True,
                         text=True).stdout
    return [int(m.group(1)) for m in re.finditer(r"^\s*(\d+) postgres: postgres postgres \[local\]",
                                                 out, re.M)]


def stack_has(n, names):
    return any(any(x in (f.get("name") or "") for x in names) for f in n.get("stack", []))


top = tempfile.mkdtemp(prefix="rsp-pg.", dir=os.environ.get("RSP_TEST_DIR", "/var/tmp"))
os.chmod(top, 0o755)
shutil.chown(top, "postgres", "postgres")
data = os.path.join(top, "data")
try:
    p = as_pg([os.path.join(BIN, "initdb"), "-D", data, "-A", "trust"])
    if p.returncode:
        t.fail("initdb: " + p.stderr)
    p = as_pg([os.path.join(BIN, "pg_ctl"), "-D", data, "-w", "-l", os.path.join(top, "log"),
               "-o", "-k %s -p %s -c listen_addresses='' -c synchronous_commit=on" % (top, PORT),
               "start"])
    if p.returncode:
        t.fail("pg_ctl start: " + p.stderr + p.stdout)
    pgbench = ["pgbench", "-h", top, "-p", PORT]
    p = as_pg(pgbench + ["-i", "-s", "1", "-q", "postgres"])
    if p.returncode:
        t.fail("pgbench -i: " + p.stderr)
    with t.Rspd() as d, t.Background(top):
        d.settle(1)
        t0 = time.time()
        run = subprocess.Popen(["runuser", "-u", "postgres", "--"] + pgbench +
                               ["-n", "-c", "2", "-j", "1", "-T", "4", "postgres"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pids = []
        while run.poll() is None and not pids:
            time.sleep(0.2)
            pids = backends()
        out, errs = run.communicate(timeout=60)
        if run.returncode:
            t.fail("pgbench: " + errs)
        tps = re.search(r"tps = ([\d.]+)", out)
        print("   pgbench: %s tps; backends %s" % (tps.group(1) if tps else "?", pids))
        t.check(len(pids) >= 1, "a backend serving pgbench was seen")
        d.settle()
        s = st.snapshot(d, pids[0], time.time() - t0)
        st.skip_if_gaps(s)
        nodes = [n for n, _ in st.nodes(s)]
        client = [n for n in nodes if n["kind"] == "thread" and n.get("comm") == "pgbench"]
        t.check(client, "the backend's chain reaches its client (pgbench is in it)")
        # PostgreSQL waits for its client in epoll_wait (reason poll) on the socket
        waits = [n for n in nodes if n["kind"] == "sleep" and
                 any(c["kind"] == "thread" and c.get("comm") == "pgbench"
                     for c in n["children"])]
        # (on the perf backend a few block I/O sleeps whose waking was not
        # delivered get pgbench as their inferred waker)
        sock = sum(n["total_s"] for n in waits if n["reason"] in ("poll", "network"))
        allw = sum(n["total_s"] for n in waits)
        t.check(waits and sock >= 0.8 * allw,
                "the backend's waits for its client are socket waits: %.3f of %.3f s (%s)" %
                (sock, allw, sorted({n["reason"] for n in waits})))
        disk = [n for n in nodes if n["kind"] == "sleep" and n.get("reason") == "block_io"]
        disk_s = sum(n["total_s"] for n in disk)
        t.check(disk and s["categories"]["blocking_io"] + s["categories"]["io_queue"] > 0,
                "the chain reaches the disk: %d block I/O sleep nodes, %.3f s, blocking I/O "
                "%.3f s" % (len(disk), disk_s, s["categories"]["blocking_io"]))
        t.check(any(stack_has(n, ("file_write_and_wait_range", "fdatasync", "fsync",
                                  "XLogFlush", "issue_xlog_fsync")) for n in disk),
                "a block I/O sleep is the WAL flush (fdatasync's writeback wait on its stack)")
        t.check(s["percent_accounted"] >= 80.0, "%.1f%% accounted" % s["percent_accounted"])
finally:
    as_pg([os.path.join(BIN, "pg_ctl"), "-D", data, "-m", "immediate", "stop"])
    shutil.rmtree(top, ignore_errors=True)
