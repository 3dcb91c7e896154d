"""A real key-value server that fsyncs every write, and its client over TCP
on loopback: Redis from Debian with appendonly yes and appendfsync always,
under redis-benchmark (one client, SET), while other processes use the
disk (a writer that fsyncs a file of its own) and a CPU (a busy loop).

Known answers:
- `rspctl graph --pid REDIS`: redis-server's main thread writes each SET to
  its append-only file and fdatasync()s it before answering, so it waits
  for the disk serving it, and the disk for its requests: a knot {the main
  thread, the disk for redis-server} (wPerf's bottleneck); neither the
  background writer nor the busy loop is in it, and the main thread's edge
  to the disk carries the fsync's writeback wait on its stack.
- `rspctl net --pid BENCH`: one TCP socket carries the requests, to
  127.0.0.1:PORT, answered by the main thread over loopback.
- `rspctl snapshot BENCH`: the client waits for the server (in its chain,
  over the socket), and under the server in that chain, what it waited for
  other than a CPU is its fsync's disk waits."""
import os
import shutil
import subprocess
import tempfile
import time

import graphtest as gt
import rsptest as t
import snaptest as st

t.need_root()
if not shutil.which("redis-server") or not shutil.which("redis-benchmark"):
    print("SKIP: Redis is not installed (scripts/deps.sh installs redis-server and redis-tools)")
    raise SystemExit(t.SKIP)

DIR = os.environ.get("RSP_TEST_DIR", "/var/tmp")
PORT = 46379
REQUESTS = 4000

def stack_has(frames, names):
    return any(any(x in f for x in names) for f in frames)


top = tempfile.mkdtemp(prefix="rsp-redis.", dir=DIR)
server = None
try:
    server = subprocess.Popen(["redis-server", "--port", str(PORT), "--bind", "127.0.0.1",
                               "--dir", top, "--appendonly", "yes", "--appendfsync", "always",
                               "--save", "", "--daemonize", "no", "--io-threads", "1",
                               "--logfile", os.path.join(top, "log")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if subprocess.run(["redis-cli", "-p", str(PORT), "ping"], capture_output=True,
                          text=True).stdout.strip() == "PONG":
            break
        time.sleep(0.1)
    else:
        t.fail("redis-server did not answer on 127.0.0.1:%d: %s" %
               (PORT, open(os.path.join(top, "log")).read()[-2000:]))
    # A window of 256 MiB, not the default 64: with the perf backend on the
    # loaded machine a slow benchmark (231 requests/s, 17 s) outlasted 64 MiB
    # (the busy machine alone writes ~2.3 MB/s of records) and `net` found
    # 2736 of the 4000 requests. The window's start is checked below.
    with t.Rspd("--window", "256M") as d, t.Background(top) as bg:
        d.settle(1)
        # Two attempts at most: in one fresh-clone CI run of ~20 release runs
        # the knot was missed once (not reproduced since); a miss prints the
        # heaviest edges, and the second run must find it.
        for attempt in (1, 2):
            t0 = time.time()
            from_s = t.now_s() - 0.2
            bench = subprocess.Popen(["redis-benchmark", "-p", str(PORT), "-t", "set", "-n",
                                      str(REQUESTS), "-c", "1", "-q"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out, errs = bench.communicate(timeout=240)
            elapsed = time.time() - t0
            if bench.returncode:
                t.fail("redis-benchmark: " + errs)
            print("   redis-benchmark: %s (%.1f s); server %d, client %d" %
                  (out.strip().splitlines()[-1] if out.strip() else "?", elapsed, server.pid,
                   bench.pid))
            d.settle()
            # One fixed range for every question: under the sanitizers each
            # query takes seconds, and a --last taken before them slides off
            # the client's run by the time the last is asked.
            rng = ["--from", "%.6f" % from_s, "--to", "%.6f" % (t.now_s())]
            win = d.json("status")["window"]
            t.check(win["oldest_s"] <= from_s and not win["evicted_records"],
                    "the window holds the whole benchmark (oldest record %.3f, benchmark "
                    "from %.3f, %d records evicted)" % (win["oldest_s"], from_s,
                                                        win["evicted_records"]))

            # The wait-for graph of the server: the knot {main thread, its disk}
            g = d.json("graph", "--pid", str(server.pid), *rng)
            gt.show(g)
            k = gt.knot_of(g, server.pid)
            if k is not None:
                break
            print("   attempt %d: no knot holds redis-server; its heaviest edges:" % attempt)
            for e in sorted(g["edges"], key=lambda e: -e["weight_s"])[:12]:
                print("      %s -> %s: %.4f s (direct %.4f, %d waits)" %
                      (e["from"], e["to"], e["weight_s"], e["direct_s"], e["count"]))
        t.check(k is not None and not k["background"],
                "redis-server's main thread is in a knot")
        disks = [v for v in k["vertices"] if v["kind"] == "disk"]
        t.check(len(disks) == 1 and str(server.pid) in disks[0]["name"],
                "the knot holds the disk serving redis-server (%s)" %
                [v["name"] for v in k["vertices"]])
        tids = [tid for v in k["vertices"] for tid in v["tids"]]
        t.check(not any(pid in tids or any(v.get("tgid") == pid for v in k["vertices"])
                        for pid in bg.pids()),
                "neither the other disk writer nor the busy loop is in the knot")
        main = gt.vertex_id(k, server.pid)
        edge = gt.find_edge(g, main, disks[0]["id"])
        t.check(edge is not None, "the main thread waits for its disk")
        frames = [f for s in edge["wait_stacks"] for f in s["frames"]]
        t.check(stack_has(frames, ("file_write_and_wait_range", "fdatasync", "fsync")),
                "the wait is the fsync's (its stack: %s)" % frames[:6])

        # The client's socket: to 127.0.0.1:PORT, answered by the main thread
        n = d.json("net", "--pid", str(bench.pid), *rng)
        rows = [s for s in n["sockets"] if s["proto"] == "tcp" and s["ops"] >= REQUESTS // 2]
        for s in rows:
            print("   net: %s -> %s: %d ops, %.3f s, peers %s" %
                  (s.get("local"), s.get("remote"), s["ops"], s["total_s"],
                   [(p.get("tid"), p["ops"]) for p in s["peers"]]))
        t.check(len(rows) == 1, "one TCP socket of the client carries the requests")
        s = rows[0]
        t.check(abs(s["ops"] - REQUESTS) <= REQUESTS // 50,
                "%d operations for %d requests" % (s["ops"], REQUESTS))
        t.check(s.get("remote_addr") == "127.0.0.1" and s.get("remote_port") == PORT,
                "to 127.0.0.1:%d (%s)" % (PORT, s.get("remote")))
        peer = max(s["peers"], key=lambda p: p["ops"])
        t.check(peer.get("tid") == server.pid and peer.get("loopback") and
                peer["ops"] >= 0.9 * s["ops"],
                "answered by redis-server's main thread over loopback (%d of %d ops)" %
                (peer["ops"], s["ops"]))

        # The client's chain: the server, and under it the server's disk
        snap = d.json("snapshot", str(bench.pid), *rng)
        st.skip_if_gaps(snap)
        nodes = [x for x, _ in st.nodes(snap)]
        t.check(any(x["kind"] == "thread" and x.get("tid") == server.pid for x in nodes),
                "redis-server's main thread is in the client's chain")
        waits = [x for x in nodes if x["kind"] == "sleep" and
                 x.get("waker", {}).get("tid") == server.pid]
        wait_s = sum(x["total_s"] for x in waits)
        net = [x for x in waits if x.get("network")]
        on_port = sum(x["total_s"] for x in net
                      if x["network"].get("remote") == "127.0.0.1:%d" % PORT)
        print("   the client's sleeps woken by the server: %s" %
              sorted(((x.get("reason"), (x.get("network") or {}).get("remote"),
                       round(x["total_s"], 3)) for x in waits), key=lambda r: -r[2])[:6])
        t.check(on_port >= 0.8 * wait_s,
                "the client's waits for the server are on its socket to 127.0.0.1:%d "
                "(%.3f of %.3f s)" % (PORT, on_port, wait_s))
        under = st.subtree_categories(snap, server.pid)
        disk_s = under.get("blocking_io", 0.0) + under.get("io_queue", 0.0)
        print("   client waited %.3f s for the server; under the server: %s" %
              (wait_s, {k2: round(v, 3) for k2, v in under.items() if v}))
        # Under the server, its time is the fsync's waits, its own CPU, and
        # (with the busy loop beside it) waiting for a CPU: of its waits for
        # something else than a CPU, the disk's are nearly all.
        cpu = ("understood", "spin", "not_sampled", "scheduler", "involuntary")
        offcpu = sum(v for k2, v in under.items() if k2 not in cpu)
        t.check(wait_s > 0 and disk_s >= 0.8 * offcpu and disk_s >= 0.1 * wait_s,
                "the server's disk waits are what it waited for in the client's waits "
                "(%.3f of %.3f s off CPU, %.3f s in all)" % (disk_s, offcpu, wait_s))
finally:
    if server:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    shutil.rmtree(top, ignore_errors=True)
