"""Repaired sleep stacks in the recursive snapshot: poll_nofp's sleeps in
poll under three functions built without frame pointers, and a Python
program's sleeps in select (see test_stitch_poll.py, test_stitch_python.py
for the same answers through the wait-for graph).

Known answer: the snapshot's sleep nodes of poll_nofp have __poll,
wait_inner, wait_middle, wait_outer in their stack; Python's have select
and a named interpreter frame under it. Skipped while rspctl has no
snapshot command (issue 5 lands it; its snapshot must build its timeline
store with rsp_tlstore__repair_stacks())."""
import os
import sys

import graphtest as gt
import nettest as nt
import rsptest as t

t.need_root()


def sleep_stacks(s):
    out = []
    for r in s["chain"]:
        for n, _ in nt.snap_nodes(r):
            if n["kind"] == "sleep" and n.get("stack"):
                # Under ASan the program calls poll through ASan's interceptor.
                out.append(([f["name"] for f in n["stack"] if "interceptor_" not in f["name"]],
                            n.get("count", 1)))
    return out


with t.Rspd("--families", "all", "--uprobes", "poll,select") as d:
    w = gt.workload("poll_nofp", 20, 50)
    d.settle()
    s = d.json("snapshot", str(w["pid"]), "--last", "%dms" % int((w["slept_s"] + 1.5) * 1000))
    stacks = sleep_stacks(s)
    good = sum(c for names, c in stacks if "__poll" in names and
               names[names.index("__poll"):][:4] == ["__poll", "wait_inner", "wait_middle",
                                                    "wait_outer"])
    t.check(good >= 15, "the snapshot's poll sleeps have wait_inner, wait_middle, wait_outer "
            "(%d of 20)" % good)

    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    p = t.run([python, "-c", "import select, os, json\n"
               "for i in range(20): select.select([], [], [], 0.05)\n"
               "print(json.dumps({'pid': os.getpid()}))"])
    pid = __import__("json").loads(p.stdout)["pid"]
    d.settle()
    s = d.json("snapshot", str(pid), "--last", "3s")
    named = [names for names, _ in sleep_stacks(s) if any(f in ("__select", "select")
                                                        for f in names)]
    t.check(named, "the Python sleeps are in select")
    n = named[0]
    i = next(k for k, f in enumerate(n) if f in ("__select", "select"))
    t.check([f for f in n[i + 1:] if not f.startswith("[")],
            "with named interpreter frames under select (%s)" % n[i:])
