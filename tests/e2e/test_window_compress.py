"""The window's cold chunks are compressed (--window-compress, the default):
a known workload's records, read back after their chunks were compressed,
give the answers they gave raw; a dump of the compressed window gives them
too; a query of the last second (whose thread names and stacks are learnt
from the compressed chunks before it) is answered; the window holds its
records in fewer bytes than raw; with --no-window-compress nothing is
compressed.

pipe_pingpong does N round trips between two processes: about 2N
switch-outs, at least the kernel's own count (test_capture_pingpong)."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import rsptest as t

t.need_root()
N = 20000
# chunks of 512 KiB (16 MiB over 2 CPUs x 2 streams x 8): several fill with
# the workload's records and turn cold 2 s after their newest record
WINDOW = ["--window", "16M"]


def counts(d, w):
    """(switch-outs, switch-ins, wakeups) of the two processes, as status --pid says."""
    out = ins = wakes = 0
    for role in ("parent", "child"):
        th = d.json("status", "--pid", str(w[role]))["threads"]
        t.check(len(th) == 1 and th[0]["tid"] == w[role],
                "%s %d has one thread in the window" % (role, w[role]))
        out += th[0]["switches_out"]
        ins += th[0]["switches_in"]
        wakes += th[0]["wakeups"]
    return out, ins, wakes


def handoffs(cat, n):
    for _ in range(n):
        cat.stdin.write(b"x")
        if cat.stdout.read(1) != b"x":
            t.fail("cat did not echo")


def wait_compressed(d, want, timeout=20):
    """The window's status once it holds @want compressed chunks or more."""
    deadline = time.time() + timeout
    while True:
        w = d.json("status")["window"]
        if w["compressed_chunks"] >= want or time.time() > deadline:
            return w
        time.sleep(0.5)


work = tempfile.mkdtemp(prefix="rsptest-wzip.")
cat = None
try:
    with t.Rspd(*WINDOW) as d:
        # cat on CPU 1 passes bytes back and forth with this test: its name
        # and stack travel in records that, on the BPF backend, the ping-pong
        # on CPU 1 below buries in chunks compressed before cat is asked
        # about (the perf backend's records, 4-5x larger, would fill the
        # window: this test wants nothing evicted)
        cat = subprocess.Popen(["taskset", "-c", "1", "cat"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, bufsize=0)
        handoffs(cat, 200)
        if d.json("status")["config"]["capture"] == "bpf":
            t.workload("pipe_pingpong", N // 4, 1)
        w = t.workload("pipe_pingpong", N, 0)
        d.settle()
        # the counts while the workload's chunks are still raw (they turn
        # cold 2 s after their last record; ask at once, again every 0.2 s
        # until they stop growing: a busy capture thread can be a drain
        # period behind)
        raw, last = counts(d, w), None
        for _ in range(5):
            if raw == last:
                break
            time.sleep(0.2)
            raw, last = counts(d, w), raw
        print("   raw: switch-outs %d, switch-ins %d, wakeups %d" % raw)
        # At least the kernel's own counts (getrusage; about 2N, a few more
        # when the writer is preempted, one fewer when the child starts late).
        # The perf backend misses a switch or two in 40000 now and then with
        # nothing counted lost (seen in 7 of 12 runs; the BPF backend's
        # counts were exact in 12 of 12): this kernel does not send every
        # tracepoint sample around an idle CPU (README, "The idle-CPU caveat").
        kernel = w["parent_switches"] + w["child_switches"]
        ev = d.json("status", "--events")
        slack = 0 if ev["config"]["capture"] == "bpf" else 4
        t.check(raw[0] >= kernel - slack and raw[0] >= 2 * N - 2 - slack,
                "switch-outs %d >= the kernel's %d + %d, about 2N = %d (lost %d, skipped "
                "nested %d, window dropped %d, gaps %d, evicted chunks %d)"
                % (raw[0], w["parent_switches"], w["child_switches"], 2 * N, ev["lost"],
                   ev["skipped_nested"], ev["window"]["dropped"], ev["events"]["lost_records"],
                   ev["window"]["evicted_chunks"]))
        before = d.json("status")["window"]
        win = wait_compressed(d, 2)
        print("   window: %d records, %d bytes raw, %d in memory, %d chunks compressed "
              "(%d raw bytes in %d), %.3f s of CPU"
              % (win["records"], win["bytes"], win["stored_bytes"], win["compressed_chunks"],
                 win["compressed_raw_bytes"], win["compressed_bytes"], win["compress_seconds"]))
        t.check(win["compressed_chunks"] >= 2, "cold chunks were compressed (%d)"
                % win["compressed_chunks"])
        t.check(win["evicted_chunks"] == before["evicted_chunks"] == 0,
                "nothing was evicted: the workload's records are all there")
        t.check(win["stored_bytes"] < win["bytes"],
                "the window holds its records in fewer bytes (%d) than raw (%d)"
                % (win["stored_bytes"], win["bytes"]))
        t.check(win["compressed_bytes"] * 2 < win["compressed_raw_bytes"],
                "compressed chunks are at most half their raw size")
        st = d.json("status", "--events")
        t.check(st["window"]["compressed_chunks"] >= 2 and st["lost"] == 0,
                "still compressed, nothing lost")
        again = counts(d, w)
        t.check(again == raw, "read back from compressed chunks: %s = raw %s" % (again, raw))
        txt = d.ctl("status")[1]
        t.check("compressed: " in txt, "status says what is compressed")

        # a query whose range starts after the compressed chunks: names and
        # stacks are learnt first from the chunks that hold them, one at a
        # time
        rc, out, err = d.ctl("graph", "--last", "1s", check_rc=False)
        t.check(rc == 0 or "did nothing in the time asked for" in err,
                "graph --last 1s answered over a compressed window: " + err.strip())
        handoffs(cat, 200)
        d.settle()
        # --noise 0 --threshold 0: cat's waits are a few ms of the second, and
        # a knot's trimming of light edges would take them out of the answer
        g = d.json("graph", "--pid", str(cat.pid), "--last", "1s", "--noise", "0",
                   "--threshold", "0")
        mine = [e for e in g["edges"] + [e for k in g["knots"] for e in k["edges"]]
                if e["from"].startswith("cat")]
        frames = [f for e in mine for s in e["wait_stacks"] for f in s["frames"]]
        # (the BPF programs send a stack once, and again every quarter of the
        # window's span: the range may carry it too; unit test_bpfrec's
        # test_learn_before_pass is the one that must learn it)
        bpf = st["config"]["capture"] == "bpf"
        if not mine:
            verts = [v for k in g["knots"] for v in k["vertices"]] + g["vertices"]
            print("   cat %d: vertices with it %s; edges from %s; range %s" % (
                cat.pid, [v for v in verts if cat.pid in v.get("tids", [])],
                sorted({e["from"] for e in g["edges"] + [e for k in g["knots"]
                                                        for e in k["edges"]]}),
                g["window"]))
        t.check(mine and (not bpf or "anon_pipe_read" in frames),
                "graph --last 1s over a compressed window: cat's waits%s: %s"
                % (" carry their stack (anon_pipe_read)" if bpf else "", frames[:8]))
        cat.stdin.close()
        cat.wait()
        cat = None

        # a dump of the compressed window answers as live
        path = os.path.join(work, "w.perf.data")
        d.ctl("dump", "-o", path)
        dumped = []
        for role in ("parent", "child"):
            p = t.run([t.RSPCTL, "analyze", path, "status", "--pid", str(w[role]), "--json"],
                      timeout=300)
            t.check(p.returncode == 0, "analyze of the dump: " + p.stderr.strip())
            dumped.append(json.loads(p.stdout)["threads"][0])
        dc = (sum(x["switches_out"] for x in dumped), sum(x["switches_in"] for x in dumped),
              sum(x["wakeups"] for x in dumped))
        t.check(dc == raw, "the dump of the compressed window: %s = live %s" % (dc, raw))

    with t.Rspd(*(WINDOW + ["--no-window-compress"])) as d:
        w = t.workload("pipe_pingpong", N, 0)
        d.settle()
        time.sleep(3.5)
        win = d.json("status")["window"]
        t.check(win["compressed_chunks"] == 0 and win["stored_bytes"] == win["bytes"],
                "--no-window-compress: nothing compressed (%d chunks)"
                % win["compressed_chunks"])
finally:
    if cat:
        cat.kill()
    shutil.rmtree(work, ignore_errors=True)
