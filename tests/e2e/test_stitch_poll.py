"""Sleep stacks repaired by uprobe stitching (the RSP paper's method).
poll_nofp sleeps 20 times in poll under wait_inner, wait_middle and
wait_outer, all built with -fomit-frame-pointer (libc keeps none either), and
is woken each time by a writer process.

Known answer: with the libc family on (here only poll is probed), the wait
stack of poll_nofp -> writer in the wait-for graph holds __poll, then
wait_inner, wait_middle, wait_outer and main, in that order: the uprobe at
poll's entry (unwound by DWARF from its stack copy) stitched under the
sleep's frame-pointer stack, which stops in poll. Without uprobes but with
--dwarf sched_switch, the same stack comes from unwinding the switch's own
copy of the user stack."""
import graphtest as gt
import rsptest as t

t.need_root()

with t.Rspd("--families", "all", "--uprobes", "poll") as d:
    w = gt.workload("poll_nofp", 20, 50)
    d.settle()
    g = gt.graph(d, w["pid"], w["slept_s"])
    rep = g["window"]
    print("   stacks: %d probed, %d stitched, %d by DWARF, %d not in the probed function" %
          (rep["stacks_probed"], rep["stacks_stitched"], rep["stacks_dwarf"],
           rep["stacks_not_in_probe"]))
    me = next(v for v in g["vertices"] if w["tid"] in v["tids"])
    writer = next(v for v in g["vertices"] if w["writer"] in v["tids"])
    e = gt.find_edge(g, me["id"], writer["id"])
    t.check(e is not None, "an edge poll_nofp -> writer")
    st = e["wait_stacks"][0]
    print("   top wait stack (%d waits): %s" % (st["count"], st["frames"]))
    # Under ASan the program calls poll through ASan's interceptor.
    frames = [f for f in st["frames"] if "interceptor_" not in f]
    user = frames[frames.index("__poll"):] if "__poll" in frames else []
    t.check(user[:5] == ["__poll", "wait_inner", "wait_middle", "wait_outer", "main"],
            "the sleep stack is poll <- wait_inner <- wait_middle <- wait_outer <- main")
    t.check(st["count"] >= 15, "it holds most of the 20 sleeps (%d)" % st["count"])
    t.check(rep["stacks_stitched"] >= 15 and rep["stacks_dwarf"] >= 15,
            "stitched from the poll uprobe, unwound by DWARF")

# The other repair: no uprobes, but every switch into a sleep copies the user
# stack (--dwarf sched_switch): DWARF unwinds the sleep's own user stack.
with t.Rspd("--dwarf", "sched_switch") as d:
    w = gt.workload("poll_nofp", 20, 50)
    d.settle()
    g = gt.graph(d, w["pid"], w["slept_s"])
    rep = g["window"]
    print("   stacks: %d probed, %d stitched, %d by DWARF" %
          (rep["stacks_probed"], rep["stacks_stitched"], rep["stacks_dwarf"]))
    every = [v for k in g["knots"] for v in k["vertices"]] + g["vertices"]
    me = next(v for v in every if w["tid"] in v["tids"])
    writer = next(v for v in every if w["writer"] in v["tids"])
    e = gt.find_edge(g, me["id"], writer["id"])
    t.check(e is not None, "an edge poll_nofp -> writer")
    st = e["wait_stacks"][0]
    frames = [f for f in st["frames"] if "interceptor_" not in f]
    user = frames[frames.index("__poll"):] if "__poll" in frames else []
    t.check(user[:5] == ["__poll", "wait_inner", "wait_middle", "wait_outer", "main"],
            "--dwarf sched_switch: the sleep stack is whole, by DWARF (%s)" % user[:5])
    t.check(rep["stacks_stitched"] == 0 and rep["stacks_dwarf"] >= 15,
            "unwound by DWARF from the switch's own stack copy, nothing stitched")
