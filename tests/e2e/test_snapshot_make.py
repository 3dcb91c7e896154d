"""A parent forks children one after the other, like make, and waits for
each. Known answer for `rspctl snapshot PARENT`: the parent's time is
mostly its waits in wait4(), and each child's running is under those
waits: the children are in the chain. Then two at a time, like make -j2:
the child running beside the one the parent waits for is work the parent
started, so the total time (with parallelism) covers the CPU time of all
the children (RSP counts all work done on the pid's behalf). Another
process writes to the disk and a busy loop takes a CPU meanwhile (issue 14:
answers that hold on a machine others use)."""
import os

import rsptest as t
import snaptest as st

t.need_root()
DIR = os.environ.get("RSP_TEST_DIR", "/var/tmp")

with t.Rspd() as d, t.Background(DIR):
    w = t.workload("make_like", 12, 40, 1)
    print("   workload: %s" % w)
    d.settle()
    s = st.snapshot(d, w["pid"], w["elapsed_s"])
    st.skip_if_gaps(s)
    root = s["chain"][0]
    t.check(root["pid"] == w["pid"], "the first root is the parent")
    under = {n["tid"]: n for n, path in st.walk(root) if n["kind"] == "thread" and path}
    kids = [c for c in w["children"] if c in under]
    t.check(len(kids) == len(w["children"]),
            "every child is under the parent's waits: %d of %d" % (len(kids),
                                                                   len(w["children"])))
    ran = sum(under[c]["total_s"] for c in kids)
    t.check(ran >= 0.8 * w["children_cpu_s"],
            "the children's time in the chain %.3f s covers their CPU time %.3f s" %
            (ran, w["children_cpu_s"]))
    t.check(s["percent_accounted"] >= 95.0, "%.1f%% accounted" % s["percent_accounted"])


def outer_children_s(s, kids):
    """Time of the children's nodes, not counting one under another."""
    return sum(n["total_s"] for n, path in st.nodes(s)
               if n["kind"] == "thread" and n["tid"] in kids and
               not any(p["tid"] in kids for p in path))


with t.Rspd() as d, t.Background(DIR):
    w = t.workload("make_like", 12, 40, 2)
    print("   workload -j2: %s" % w)
    d.settle()
    s = st.snapshot(d, w["pid"], w["elapsed_s"])
    st.skip_if_gaps(s)
    kids = set(w["children"])
    ran = outer_children_s(s, kids)
    t.check(ran >= 0.9 * w["children_cpu_s"],
            "-j2: the children's time in the snapshot %.3f s covers 90%% of their CPU time "
            "%.3f s" % (ran, w["children_cpu_s"]))
    t.check(s["total_s"] >= 0.9 * w["children_cpu_s"],
            "-j2: total time with parallelism %.3f s >= 90%% of the children's CPU %.3f s" %
            (s["total_s"], w["children_cpu_s"]))
    t.check(s["percent_accounted"] >= 95.0, "%.1f%% accounted" % s["percent_accounted"])
