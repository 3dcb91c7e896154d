"""wPerf's Figure 1: thread A hands requests to thread B, which writes and
fdatasyncs a file per request. Known answer: a knot {B, disk}, A outside it
(A -> B). Edge weights against what the workload measured of its own waits.

On this kernel the disk's completions and wakeups are mostly not delivered
to perf (they happen in interrupts on an idle CPU): with the perf backend
B's waits for the disk are inferred from the requests it issued and its
D-state sleeps, and end at B's first record after them (the switch-in from
idle is not delivered). The BPF backend's programs see them."""
import os
import sys

import graphtest as gt
import rsptest as t

KERNEL_HELPERS = ("kworker", "ksoftirqd", "jbd2")


def disk_shared(g, disk_ids, b):
    """Seconds the disk waited for others than B: other processes' I/O."""
    return sum(e["direct_s"] for e in g["edges"] + [x for k in g["knots"] for x in k["edges"]]
               if e["from_id"] in disk_ids and e["to_id"] != b)

t.need_root()
DIR = os.environ.get("RSP_TEST_DIR", "/var/tmp")

with t.Rspd() as d:
    w = gt.workload("fsync_pair", 800, DIR, 1024)
    print("   workload: %s" % w)
    d.settle()
    # The disk is shared with the whole machine: a higher noise floor keeps
    # other processes' occasional requests from holding the knot open.
    g = gt.graph(d, w["pid"], w["elapsed_s"], "--noise", "3")
    gt.show(g)
    k = gt.knot_of(g, w["tid_b"])
    if k is None:
        disks = [v["id"] for v in g["vertices"] if v["kind"] == "disk"]
        b = gt.vertex_id(g, w["tid_b"])
        other = disk_shared(g, disks, b)
        to_b = sum(e["direct_s"] for e in g["edges"] if e["from_id"] in disks and e["to_id"] == b)
        if other > 0.25 * to_b:
            print("SKIP: the disk waited %.3f s for other processes' I/O (%.3f s for B): "
                  "it is shared too much to close a knot around B" % (other, to_b))
            sys.exit(t.SKIP)
    t.check(k is not None and not k["background"], "B (fs-sync) is in a knot")
    tids = [tid for v in k["vertices"] for tid in v["tids"]]
    t.check(w["tid_a"] not in tids, "A (fs-prod) is outside the knot")
    disks = [v for v in k["vertices"] if v["kind"] == "disk"]
    t.check(len(disks) == 1 and disks[0]["dev"] != "0:0", "the knot holds one disk")
    others = [v["name"] for v in k["vertices"] if v["kind"] != "disk" and w["tid_b"] not in v["tids"]]
    t.check(not others, "the knot is {B, disk} (others: %s)" % others)
    b, disk = gt.vertex_id(k, w["tid_b"]), disks[0]["id"]
    e = gt.find_edge(g, b, disk)
    # B's waits for the disk: on the disk, and (under load) on the kernel
    # threads that complete or dispatch its requests for it.
    helpers = sum(x["direct_s"] for x in g["edges"] if x["from_id"] == b and
                  x["to"].startswith(KERNEL_HELPERS))
    # Lower bound: B's sleeps in fdatasync. Upper bound: its wall time there,
    # not its off-CPU time: the disk's wakeups of B land on an idle CPU, whose
    # switch-in this kernel does not deliver, so each wait ends at B's first
    # record after it (rsp takes the end it has evidence for), a few us of
    # B's CPU time in fdatasync later. Never past fdatasync's return.
    # With the BPF backend each wait ends at the completion's sched_waking;
    # the workload's sleep (schedstat) ends when B is enqueued on its CPU,
    # after the wakeup's IPI reaches it: tens of us per wait on this VM, more
    # under the sanitizers (7-9% of the sleep in release, 21% once under ASan).
    # With the perf backend, waits whose completion wakings were not
    # delivered at all are inferred, not direct: when they are many (a CI run
    # under ASan: 1184 wakings not seen, direct 0.45 s and inferred 0.41 s
    # for [0.55, 0.71] s measured), the direct part's lower bound is 30% off.
    bpf = d.json("status")["config"]["capture"] == "bpf"
    lo_tol = 0.25 if bpf else 0.30 if e["inferred_s"] >= 0.5 * e["direct_s"] else 0.15
    t.check(w["b_sync_slept_s"] * (1 - lo_tol) <= e["direct_s"] + helpers <=
            w["b_sync_wall_s"] * (1.25 if bpf else 1.15),
            "B -> disk (and kernel I/O helpers), its own waits: %.4f s within [-%d%% of "
            "%.4f, +%d%% of %.4f] s (inferred besides: %.4f s)" %
            (e["direct_s"] + helpers, int(lo_tol * 100), w["b_sync_slept_s"],
             25 if bpf else 15, w["b_sync_wall_s"], e["inferred_s"]))
    t.check(e["weight_s"] >= e["direct_s"] + 0.5 * w["b_sync_offcpu_in_a_wait_s"],
            "B -> disk gains (cascading) from A's waits for B: %.4f >= %.4f + half of %.4f" %
            (e["weight_s"], e["direct_s"], w["b_sync_offcpu_in_a_wait_s"]))
    if d.json("status")["config"]["capture"] == "perf":
        # How much is inferred depends on the kernel's delivery, not on rsp:
        # with a busy CPU beside the workload (bench/reliability.py) no CPU
        # is idle and every completion's waking arrives (a run: 33 wakings
        # not seen, none of them B's, inferred 0). The bounds above hold
        # either way.
        print("   perf backend: %.4f s of B's disk waits inferred (wakeups not delivered)"
              % e["inferred_s"])
    else:  # the BPF programs see the completions' wakeups in interrupts
        t.check(e["inferred_s"] < 0.1 * e["direct_s"],
                "B's disk waits were seen, hardly inferred: %.4f of %.4f s"
                % (e["inferred_s"], e["direct_s"]))
    e = gt.find_edge(g, disk, b)
    # The disk waits for B whenever B is not asleep on it: outside fdatasync,
    # and inside it too while B runs between the requests one call makes
    # (the data, then the journal's commit and flush: ~2.5 requests per
    # call here). So the upper bound is all of B's time but its sleeps in
    # fdatasync; B's CPU time there is part of it (a BPF run measured 1.1742
    # s, outside sync 0.9901, sync wall 0.5578 of which 0.4001 asleep: past
    # an upper bound that held only B's runnable time, 1.0200 s + 15%).
    gt.check_range("disk -> B (idle, waiting for B's next request)", e["direct_s"],
                   w["b_outside_sync_s"] - (w["b_sync_offcpu_s"] - w["b_sync_slept_s"]),
                   w["b_outside_sync_s"] + (w["b_sync_wall_s"] - w["b_sync_slept_s"]))
    a = gt.vertex_id(g, w["tid_a"])
    e = gt.find_edge(g, a, b)
    t.check(e is not None, "A -> B exists")
    gt.check_range("A -> B, A's own waits", e["direct_s"], w["a_slept_s"], w["a_wait_s"])
    # the same noise floor as the JSON query: without it, other processes'
    # occasional I/O on the shared disk can keep the knot from closing
    _, dot, _ = d.ctl("graph", "--pid", str(w["pid"]), "--last", "%dms" % int((w["elapsed_s"] + 1) * 1000),
                      "--noise", "3", "--format", "dot")
    t.check(dot.startswith("digraph") and "style=solid" in dot and "cylinder" in dot,
            "DOT output: a digraph, knot edges solid, the disk a cylinder")
    r = t.run(["dot", "-Tsvg"], input=dot)
    t.check(r.returncode == 0 and "<svg" in r.stdout, "dot -Tsvg renders it: %s" % r.stderr[:200])
