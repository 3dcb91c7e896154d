"""wPerf's Figure 1 (fsync_pair: thread A hands requests to thread B, which
writes and fdatasyncs a file per request) on a disk that another process
uses at the same time (and a busy loop takes a CPU), asked about as a user
would, with a range much longer than the workload's run.

Known answer: a knot {B, the disk serving B}, A outside it, the other
writer in no knot with B. With the disk as one vertex, every thread that
used it (the writer, kworkers, jbd2) joined B's component and the knot was
never reported; with the weights judged against the whole range, a workload
that ran 3 s of a 10 s range had no edge heavy enough to hold one."""
import os
import re
import time

import graphtest as gt
import rsptest as t

t.need_root()
DIR = os.environ.get("RSP_TEST_DIR", "/var/tmp")

with t.Rspd() as d:
    d.settle(1)
    t0 = time.time()
    with t.Background(DIR, seconds=30, interval=0.005) as bg:
        time.sleep(3)  # the range asked for is much longer than the workload's run
        w = gt.workload("fsync_pair", 800, DIR, 1024)
        print("   workload: %s" % w)
        time.sleep(1)
        last = max(10.0, time.time() - t0 + 1)
        g = d.json("graph", "--pid", str(w["pid"]), "--last", "%dms" % int(last * 1000))
        # with a noise floor, some edges of the pid's threads lead past it
        rng = ["graph", "--pid", str(w["pid"]), "--last", "%dms" % int(last * 1000), "--noise", "3"]
        gn = d.json(*rng)
        _, dot, _ = d.ctl(*(rng + ["--format", "dot"]))
    print("   window %.3f s, percentages of %.3f s (%s)" %
          (g["window"]["seconds"], g["window"]["reference_seconds"],
           g["window"]["reference_of"]))
    gt.show(g)
    t.check(g["window"]["reference_of"] == "process" and
            g["window"]["reference_seconds"] < 0.9 * g["window"]["seconds"],
            "weights are judged against the process's span, not the whole range")
    writer_disk = [e for e in g["edges"] if e["from"].startswith("disk ") and
                   e["to"].startswith("python")]
    k = gt.knot_of(g, w["tid_b"])
    if k is None:  # what the graph held instead
        tag = "[%d]" % w["tid_b"]
        for e in g["edges"]:
            if tag in e["from"] or tag in e["to"]:
                print("      edge %s -> %s: %.4f s (direct %.4f, inferred %.4f, %d waits)" %
                      (e["from"], e["to"], e["weight_s"], e["direct_s"], e["inferred_s"],
                       e["count"]))
        print("      graph: %s" % {x: v for x, v in g.items()
                                   if x not in ("edges", "vertices", "knots")})
    t.check(k is not None and not k["background"], "B (fs-sync) is in a knot")
    tids = [tid for v in k["vertices"] for tid in v["tids"]]
    t.check(w["tid_a"] not in tids, "A (fs-prod) is outside the knot")
    disks = [v for v in k["vertices"] if v["kind"] == "disk"]
    t.check(len(disks) == 1 and disks[0]["dev"] != "0:0", "the knot holds one disk")
    t.check(str(w["tid_b"]) in disks[0]["name"], "it is the disk serving B: %s" %
            disks[0]["name"])
    others = [v["name"] for v in k["vertices"] if v["kind"] != "disk" and
              w["tid_b"] not in v["tids"]]
    t.check(not others, "the knot is {B, disk for B} (others: %s)" % others)
    # DOT draws what text and JSON show: the pid's threads and what they
    # reach, not the vertices past the edges under the noise floor
    names = set(v["name"] for v in gn["vertices"])
    names |= set(v["name"] for k in gn["knots"] for v in k["vertices"])
    drawn = re.findall(r'^  v\d+ \[shape=\w+, label="((?:[^"\\]|\\.)*)"\];$', dot, re.M)
    t.check(drawn and all(n.replace('\\"', '"') in names for n in drawn),
            "the DOT graph draws only the vertices JSON shows (%d drawn; extra: %s)"
            % (len(drawn), [n for n in drawn if n not in names][:5]))
    t.check(not any(pid in tids or any(v.get("tgid") == pid for v in k["vertices"])
                    for pid in bg.pids()),
            "neither the other writer nor the busy loop is in B's knot")
