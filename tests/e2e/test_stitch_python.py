"""A Python program blocked in select (woken by a writer process): its sleep
stack includes libc's select and the interpreter frames libunwind can see.

Known answer: the wait stack of python -> writer holds __select (the frame
pointers stop there: neither libc nor this Python keeps them) and, stitched
from the uprobe on select, at least one named interpreter frame under it.
DWARF unwinding stops at select_select_impl: its frame holds ~48 KiB of fd
arrays whose pages were never touched, and the kernel copies the user stack
only up to the first page that is not present (so 8 KiB, or more, cannot
reach the frames above it)."""
import os
import sys

import graphtest as gt
import rsptest as t

t.need_root()
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
SCRIPT = """
import os, select, time, json
r, w = os.pipe()
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    for i in range(20):
        t = time.monotonic() + 0.05
        while time.monotonic() < t:
            pass
        os.write(w, b"x")
    os._exit(0)
for i in range(20):
    select.select([r], [], [], 5)
    os.read(r, 1)
os.waitpid(pid, 0)
print(json.dumps({"pid": os.getpid(), "writer": pid, "elapsed_s": time.monotonic() - t0}))
"""

with t.Rspd("--families", "all", "--uprobes", "select") as d:
    script = os.path.join(d.dir, "select.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    t.WORKLOADS = os.path.dirname(PYTHON)
    w = gt.workload(os.path.basename(PYTHON), script)
    print("   python: %s %s" % (PYTHON, w))
    d.settle()
    g = gt.graph(d, w["pid"], w["elapsed_s"])
    me = next(v for v in g["vertices"] if w["pid"] in v["tids"])
    writer = next(v for v in g["vertices"] if w["writer"] in v["tids"])
    e = gt.find_edge(g, me["id"], writer["id"])
    t.check(e is not None, "an edge python -> writer")
    st = e["wait_stacks"][0]
    print("   top wait stack (%d waits): %s" % (st["count"], st["frames"]))
    fr = st["frames"]
    sel = next((i for i, f in enumerate(fr) if f in ("__select", "select")), None)
    t.check(sel is not None, "the stack has libc's select")
    below = [f for f in fr[sel + 1:] if not f.startswith("[")]
    t.check(below, "and named interpreter frames under it (%s)" % below)
    t.check(g["window"]["stacks_stitched"] >= 10, "stitched from the select uprobe")
