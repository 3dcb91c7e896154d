"""Four threads contend on one mutex with a long critical section. Known
answer: the workers merge into one vertex whose self-loop is the knot. Its
weight is what wPerf's cascaded redistribution makes of the lock waits the
workload recorded (each a wait for the previous holder)."""
import graphtest as gt
import rsptest as t

MAX_DEPTH = 8


def cascaded(waits):
    """wPerf Figure 4 over the recorded waits: (tid, start, end, holder)."""
    by = {}
    for tid, s, e, h in waits:
        if h:
            by.setdefault(tid, []).append((s, e, h))
    for v in by.values():
        v.sort()
    total = 0

    def cascade(path, s, e, holder):
        nonlocal total
        total += e - s
        if holder in path or len(path) >= MAX_DEPTH:
            return
        for (s2, e2, h2) in by.get(holder, []):
            a, b = max(s, s2), min(e, e2)
            if b > a:
                cascade(path + [holder], a, b, h2)

    for tid, v in by.items():
        for (s, e, h) in v:
            cascade([tid], s, e, h)
    return total / 1e9


t.need_root()

with t.Rspd() as d:
    w = gt.workload("mutex_workers", 2.0, 2000)
    print("   workload: %d waits over %.3f s" % (len(w["waits"]), w["elapsed_s"]))
    d.settle()
    g = gt.graph(d, w["pid"], w["elapsed_s"])
    gt.show(g)
    k = gt.knot_of(g, w["tids"][0])
    t.check(k is not None and not k["background"], "the workers are in a knot")
    t.check(len(k["vertices"]) == 1 and k["vertices"][0]["kind"] == "threads",
            "one merged vertex: %s" % k["vertices"][0]["name"])
    v = k["vertices"][0]
    t.check(sorted(v["tids"]) == sorted(w["tids"]), "it holds the four workers")
    t.check(v["name"].startswith("lockw*"), "named after their comm stem")
    loop = gt.find_edge(g, v["id"], v["id"])
    t.check(loop is not None and len(k["edges"]) == 1, "a self-loop")
    direct = sum(e - s for tid, s, e, h in w["waits"] if h) / 1e9
    gt.check_near("self-loop, direct waits", loop["direct_s"], direct)
    # The expected cascade is itself approximate: the workload records one
    # interval per lock call, attributed to the holder it found, while a
    # woken waiter whose lock was stolen sleeps again, woken by another
    # holder; on a loaded machine that happens more and the cascade, which
    # multiplies overlaps, moves by up to ~20% (3 of 8 runs beyond 15% with
    # other test suites running). The direct waits above are exact.
    gt.check_near("self-loop, cascaded", loop["weight_s"], cascaded(w["waits"]), tol=0.25)
    _, text, _ = d.ctl("graph", "--pid", str(w["pid"]), "--last",
                       "%dms" % int((w["elapsed_s"] + 1) * 1000), "--no-merge")
    t.check("lockw*" not in text and "lockw-2" in text, "--no-merge: one vertex per thread")
