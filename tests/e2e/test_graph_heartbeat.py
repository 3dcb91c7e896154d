"""A heartbeat thread that sleeps 10 ms and takes a lock, beside a worker
that computes. Known answer: the heartbeat and its timer are a knot with no
device whose threads use far less than a CPU: reported as background
(wPerf 3.3). The worker is a sink."""
import graphtest as gt
import rsptest as t

t.need_root()

with t.Rspd() as d:
    w = gt.workload("heartbeat", 2.0)
    print("   workload: %s" % w)
    d.settle()
    g = gt.graph(d, w["pid"], w["elapsed_s"])
    gt.show(g)
    k = gt.knot_of(g, w["tid_heartbeat"])
    t.check(k is not None and k["background"], "the heartbeat is in a background knot")
    kinds = sorted(v["kind"] for v in k["vertices"])
    t.check(kinds == ["thread", "timer"], "the knot is {heartbeat, its timer} (%s)" % kinds)
    # running + runnable over its life: small, unless the machine is loaded
    t.check(k["cpu_util"] < 1.0, "it uses %.1f%% of a CPU" % (100 * k["cpu_util"]))
    t.check(w["tid_worker"] not in [tid for v in k["vertices"] for tid in v["tids"]],
            "the worker is not in it")
    h = gt.vertex_id(k, w["tid_heartbeat"])
    timer = [v["id"] for v in k["vertices"] if v["kind"] == "timer"][0]
    e = gt.find_edge(g, h, timer)
    # Its own waits (direct): the weight adds what others waited on it, which
    # depends on how often the worker met the lock it held (CI saw 3.05 s of
    # weight against 1.9 s of its own sleeps under ASan).
    gt.check_range("heartbeat -> timer, its own waits", e["direct_s"], w["slept_s"],
                   w["offcpu_s"])
    t.check(e["weight_s"] >= e["direct_s"], "the weight includes its own waits")
    t.check(any(w["tid_worker"] in s["tids"] for s in g["sinks"]), "the worker is a sink")
    _, text, _ = d.ctl("graph", "--pid", str(w["pid"]), "--last",
                       "%dms" % int((w["elapsed_s"] + 1) * 1000))
    t.check("background knot" in text, "text says background")
