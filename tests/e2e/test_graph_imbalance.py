"""Load imbalance: two threads in phases separated by a barrier, working 3:1
then 1:3. Known answer (wPerf's load-imbalance cycle): a 2-cycle knot
{A, B}, each edge weighing what that thread waited at the barrier."""
import graphtest as gt
import rsptest as t

t.need_root()

with t.Rspd() as d:
    w = gt.workload("barrier_imbalance", 300, 1000)
    print("   workload: %s" % w)
    d.settle()
    g = gt.graph(d, w["pid"], w["elapsed_s"])
    gt.show(g)
    k = gt.knot_of(g, w["tid_a"])
    t.check(k is not None and not k["background"], "A is in a knot")
    t.check(len(k["vertices"]) == 2 and gt.vertex_id(k, w["tid_b"]) is not None,
            "the knot is {A, B}")
    a, b = gt.vertex_id(k, w["tid_a"]), gt.vertex_id(k, w["tid_b"])
    ab, ba = gt.find_edge(g, a, b), gt.find_edge(g, b, a)
    t.check(ab is not None and ba is not None, "a cycle: A -> B -> A")
    # The construction fixes the waits themselves (direct). The cascaded
    # weight adds what the other side waited for meanwhile, which is nothing
    # by construction but, on a machine where other work preempts A or B,
    # can be a lot: it only bounds the waits from above.
    gt.check_range("A -> B (A waits in phase 2)", ab["direct_s"], w["a_slept_s"], w["a_offcpu_s"])
    gt.check_range("B -> A (B waits in phase 1)", ba["direct_s"], w["b_slept_s"], w["b_offcpu_s"])
    t.check(ab["weight_s"] >= ab["direct_s"] and ba["weight_s"] >= ba["direct_s"],
            "cascading only adds")
