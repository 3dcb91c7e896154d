#!/usr/bin/python3
"""Time and peak memory of rspctl merge over HOSTS dumps of RECORDS records
each (issue 19).

One real dump stands for every host: two network namespaces joined by a
veth pair (10.77.0.1 client, 10.77.0.2 server), tests/workloads/tcp_fsync
asking REQUESTS times over one TCP connection, and pipe_pingpong filling
rspd's window up to RECORDS records. `rspctl merge` then gets HOSTS copies
of that dump, copy i with its clock shifted by i seconds (the test-only
--test-clock-shift, which lets one host's dump stand for another): every
copy is loaded, its timeline built, every TCP socket end indexed (each
4-tuple is in every copy: 2 x HOSTS ends per chain of the index) and every
matched connection's request/response pairs bound the offsets. Synthetic
in that the hosts are copies; the records are real.

Measured: the wall time of the merge (median of REPS, each a fresh
process) and its peak resident memory (wait4's ru_maxrss).

usage: sudo bench/merge.py [--hosts N] [--records N] [--requests N] [--reps N]
                           [--build DIR] [--out FILE]
Writes its section of BENCHMARKS.md (replacing an older one of the same title).

--synthetic (the issue's benchmark; no root, no rspd): HOSTS synthetic
hosts' dumps of RECORDS records each from build/bench/rsp-merge-gen (a
ring of TCP connections, CONNS client threads per host, each host's clock
1 s ahead of the one before; see bench/merge_gen.c), then `rspctl merge`
over all of them: net, snapshot (host 0's first client) and graph, each
timed (median of REPS fresh processes) with its peak resident memory.
Writes its own section ("... synthetic hosts"). --chain: host 0's clients
ask host 1, whose servers ask host 2 first, ... (the snapshot recursing
HOSTS-1 hosts deep), its own section.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from vethpair import VethPair  # noqa: E402  (the test's namespaces)
from pgbench import Rspd as PgRspd, write_section  # noqa: E402  (one runner for the benches)
TITLE = "## rspctl merge: N hosts' dumps (issue 19)"
PAIR = VethPair("rspb", lambda msg: sys.exit("bench/merge.py: " + msg))
NS_C, NS_S = PAIR.ns_c, PAIR.ns_s


class Rspd(PgRspd):
    """pgbench.py's rspd (private socket, rspd's default backend and stacks),
    as a context, with a window of 1 GiB."""

    def __init__(self, build):
        super().__init__(build, "auto", "cached", ["--window", "1G", "--log-level", "warning"])

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


def make_dump(a, work):
    wl = os.path.join(a.build, "workloads")
    with Rspd(a.build) as d:
        server = subprocess.Popen(["ip", "netns", "exec", NS_S, os.path.join(wl, "tcp_fsync"),
                                   "server", "10.77.0.2", "7708", work, str(a.requests)],
                                  stdout=subprocess.DEVNULL)
        c = subprocess.run(["ip", "netns", "exec", NS_C, os.path.join(wl, "tcp_fsync"),
                            "client", "10.77.0.2", "7708", str(a.requests)],
                           capture_output=True, text=True)
        if server.wait() or c.returncode:
            sys.exit("bench/merge.py: tcp_fsync failed: %s" % c.stderr.strip())
        deadline = time.time() + 600
        while d.ctl("status")["window"]["records"] < a.records:
            if time.time() > deadline:
                sys.exit("bench/merge.py: the window did not reach %d records" % a.records)
            subprocess.run([os.path.join(wl, "pipe_pingpong"), "20000"],
                           stdout=subprocess.DEVNULL)
        path = os.path.join(work, "host.perf.data")
        d.ctl("dump", "-o", path)
    return path


def measured(cmd):
    """One run in a fresh process: wall seconds, peak RSS in KiB, stdout."""
    out = tempfile.TemporaryFile()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status):
        sys.exit("bench/merge.py: %s failed: %s" % (" ".join(cmd[:3]),
                                                    p.stderr.read().decode().strip()))
    out.seek(0)
    return secs, ru.ru_maxrss, out.read()


def merge_measured(a, path):
    """One merge in a fresh process: wall seconds, peak RSS in KiB, the answer."""
    args = [os.path.join(a.build, "cli", "rspctl"), "merge"] + [path] * a.hosts + ["net",
                                                                                   "--json"]
    for i in range(1, a.hosts):
        args += ["--test-clock-shift", "%d=%d" % (i, i * 1000000000)]
    secs, rss, out = measured(args)
    return secs, rss, json.loads(out)


SYNTH_TITLE = "## rspctl merge: synthetic hosts' dumps (issue 19)"
CHAIN_TITLE = "## rspctl merge: synthetic hosts' dumps in a chain (issue 19)"


def synthetic(a):
    work = tempfile.mkdtemp(prefix="rspbench-mergesyn.")
    rspctl = os.path.join(a.build, "cli", "rspctl")
    try:
        t0 = time.monotonic()
        gen = subprocess.run([os.path.join(a.build, "bench", "rsp-merge-gen"), work,
                              str(a.hosts), str(a.records), str(a.conns),
                              "chain" if a.chain else "ring"],
                             capture_output=True, text=True)
        if gen.returncode:
            sys.exit("bench/merge.py: rsp-merge-gen failed: %s" % gen.stderr.strip())
        gen_s = time.monotonic() - t0
        info = json.loads(gen.stdout)
        dumps = [os.path.join(work, "host-%d.perf.data" % k) for k in range(a.hosts)]
        rows, answers = [], {}
        for name, args in (("net", ["net", "--json"]),
                           ("snapshot", ["snapshot", "1000@0", "--json"]),
                           ("graph", ["graph", "--json"])):
            runs = [measured([rspctl, "merge"] + dumps + args) for _ in range(a.reps)]
            answers[name] = json.loads(runs[0][2])
            rows.append("| %s | %.2f | %.2f | %.0f |" % (
                name, statistics.median(r[0] for r in runs), min(r[0] for r in runs),
                max(r[1] for r in runs) / 1024))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    net = answers["net"]
    offs = net["clock_offsets"]
    worst = max(abs(o["offset_ns"] - 1000000000 * (o["host_b"] - o["host_a"]))
                - o["uncertainty_ns"] for o in offs)
    title = CHAIN_TITLE if a.chain else SYNTH_TITLE
    lines = [title, "",
             "`bench/merge.py --synthetic%s --hosts %d --records %d --conns %d --reps %d` on "
             "%s, %s, kernel %s: %d synthetic dumps from bench/merge_gen.c (%d records in "
             "host 0's, %d bytes in all, written in %.1f s), %s of %d TCP connections of %d "
             "exchanges each; each command a fresh `rspctl merge` over all the dumps." % (
                 " --chain" if a.chain else "", a.hosts, a.records, a.conns, a.reps,
                 time.strftime("%Y-%m-%d"), platform.node(), platform.release(), a.hosts,
                 info["records_per_host"], info["bytes"], gen_s,
                 "a chain (proxies: the snapshot recursing %d hosts deep)" % (a.hosts - 1)
                 if a.chain else "a ring", info["connections"],
                 info["exchanges_per_connection"]), "",
             "| command | wall s (median) | min | peak RSS MiB (max) |",
             "|---|---|---|---|"] + rows + [
             "",
             "Connections matched: %d; offsets found: %d (every known offset inside its "
             "bound: %s); snapshot of host 0's client: %d of %d operations answered across "
             "hosts; graph: %d vertices, %d edges." % (
                 len(net["connections"]), len(offs), "yes" if worst <= 0 else "NO",
                 answers["snapshot"]["matched_operations"], answers["snapshot"]["operations"],
                 len(answers["graph"]["vertices"]), len(answers["graph"]["edges"]))]
    text = "\n".join(lines) + "\n"
    print(text)
    write_section(a.out, text, title)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=10)
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--chain", action="store_true")
    a = ap.parse_args()
    if a.synthetic:
        return synthetic(a)
    if os.geteuid():
        sys.exit("bench/merge.py: run as root (rspd, network namespaces)")
    if not shutil.which("ip"):
        sys.exit("bench/merge.py: needs the ip command (iproute2: scripts/deps.sh)")
    work = tempfile.mkdtemp(prefix="rspbench-merge.")
    try:
        PAIR.up()
        path = make_dump(a, work)
        info = json.loads(subprocess.run([os.path.join(a.build, "cli", "rspctl"), "analyze",
                                          path, "status", "--json"], capture_output=True,
                                         text=True).stdout)["dump"]
        runs = [merge_measured(a, path) for _ in range(a.reps)]
    finally:
        PAIR.down()
        shutil.rmtree(work, ignore_errors=True)
    ans = runs[0][2]
    pairs = sum(o["pairs"] for o in ans["clock_offsets"])
    lines = [TITLE, "",
             "`sudo bench/merge.py --hosts %d --records %d --requests %d --reps %d` on %s, "
             "%s, kernel %s: %d copies of one real dump (%d records, %d bytes; the copies' "
             "clocks shifted 1 s apart), each a fresh `rspctl merge ... net --json`." % (
                 a.hosts, a.records, a.requests, a.reps, time.strftime("%Y-%m-%d"),
                 platform.node(), platform.release(), a.hosts, info["records"],
                 info["file_bytes"], ), "",
             "| hosts | records per dump | merge wall s (median) | min | peak RSS MiB (max) "
             "| connections matched | request/response pairs |",
             "|---|---|---|---|---|---|---|",
             "| %d | %d | %.2f | %.2f | %.0f | %d | %d |" % (
                 a.hosts, info["records"], statistics.median(r[0] for r in runs),
                 min(r[0] for r in runs), max(r[1] for r in runs) / 1024,
                 len(ans["connections"]), pairs)]
    text = "\n".join(lines) + "\n"
    print(text)
    write_section(a.out, text, TITLE)


if __name__ == "__main__":
    main()
