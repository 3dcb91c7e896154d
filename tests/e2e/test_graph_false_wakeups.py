"""False wakeups without annotations (issue 36; wPerf OSDI '18, 4.1) in the
graph and the snapshot: the
ticket seller. One thread "seller" adds an item every 2 ms and signals;
six waiters share the condition variable, and each that gets an item
broadcasts to the others, who wake, find nothing and sleep again
(thousands of false wakeups a second). The workload is the build without
rsp's USDT notes (ticket_seller_plain): rsp must infer them.

Known answer, on either capture backend: with false wakeups removed (the
default), the waiters wait for the seller (>= 80% of their direct wait
weight on it) and no knot holds waiters without the seller; the raw view
(--no-annotations) keeps the broadcasts' edges among the waiters, which
are then most of their wait weight."""
import graphtest as gt
import rsptest as t

t.need_root()


def waiter_weights(g, w):
    """Direct wait weight of the waiters: to the seller, to other waiters, in all."""
    seller = "seller[%d]" % w["tid_seller"]
    waiters = {"waiter-%d[%d]" % (i + 1, tid) for i, tid in enumerate(w["tids_waiters"])}
    on_seller = among = total = 0.0
    for e in g["edges"] + [e for k in g["knots"] for e in k["edges"]]:
        if e["from"] not in waiters:
            continue
        total += e["direct_s"]
        if e["to"] == seller:
            on_seller += e["direct_s"]
        elif e["to"] in waiters:
            among += e["direct_s"]
    return on_seller, among, total


with t.Rspd() as d:
    d.settle(1)
    w = gt.workload("ticket_seller_plain", 3)
    print("   %s" % w)
    t.check(w["false_wakeups"] >= 1000 * w["elapsed_s"],
            "the workload made thousands of false wakeups a second: %d in %.2f s"
            % (w["false_wakeups"], w["elapsed_s"]))
    d.settle()
    g = gt.graph(d, w["pid"], w["elapsed_s"], "--no-merge")
    gt.show(g)
    fw = g["window"]["false_wakeups"]
    on_seller, among, total = waiter_weights(g, w)
    print("   removed %d false wakeups; waiters: %.3f s on the seller, %.3f s among "
          "themselves, %.3f s in all" % (fw["inferred"], on_seller, among, total))
    t.check(fw["removed"] and fw["inferred"] >= 0.5 * w["false_wakeups"],
            "at least half of the workload's %d false wakeups inferred and removed: %d"
            % (w["false_wakeups"], fw["inferred"]))
    t.check(total > 0 and on_seller >= 0.8 * total,
            "the waiters wait for the seller: %.3f s of %.3f s (>= 80%%)" % (on_seller, total))
    # A knot of the whole program (the seller, its timer, the waiters) is
    # right: the seller waits for a waiter's mutex now and then. A knot of
    # waiters without the seller is what the false wakeups made up.
    for k in g["knots"]:
        tids = [tid for v in k["vertices"] for tid in v.get("tids", [])]
        t.check(w["tid_seller"] in tids or len(set(tids) & set(w["tids_waiters"])) < 2,
                "no knot among the waiters alone: %s" % [v["name"] for v in k["vertices"]])
    re = [e for e in g["edges"] + [e for k in g["knots"] for e in k["edges"]]
          if e["to"] == "seller[%d]" % w["tid_seller"] and e["reattributed_s"] > 0]
    t.check(re, "graph --json marks the edges to the seller that false wakeups were "
            "re-attributed to")

    raw = gt.graph(d, w["pid"], w["elapsed_s"], "--no-merge", "--no-annotations")
    on_seller, among, total = waiter_weights(raw, w)
    print("   raw: waiters %.3f s on the seller, %.3f s among themselves, %.3f s in all"
          % (on_seller, among, total))
    t.check(not raw["window"]["false_wakeups"]["removed"] and among > on_seller,
            "--no-annotations: the raw view, most of the waiters' weight among themselves")

    # The snapshot reads the same store: the same rewrite, said the same way.
    last = "%dms" % int((w["elapsed_s"] + 1.0) * 1000)
    s = d.json("snapshot", str(w["pid"]), "--last", last)["window"]["false_wakeups"]
    r = d.json("snapshot", str(w["pid"]), "--last", last, "--no-annotations")
    t.check(s["removed"] and s["inferred"] >= 0.5 * w["false_wakeups"]
            and not r["window"]["false_wakeups"]["removed"],
            "snapshot: %d false wakeups removed, none with --no-annotations" % s["inferred"])
