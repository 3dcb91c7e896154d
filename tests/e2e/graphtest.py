"""Helpers for the wait-for graph's end-to-end tests (rspctl graph).

Workloads run with the test waiting for them by polling, not by blocking on
their output: a parent blocked on a workload for its whole run would wait
for it in the graph, and cascading would add the workload's own waits once
more to its edges.
"""
import json
import os
import subprocess
import tempfile
import time

import rsptest as t


def workload(name, *args, timeout=300):
    """Run a workload without waiting on it in the kernel's sense; its JSON line."""
    out = tempfile.TemporaryFile(mode="w+")
    err = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen([os.path.join(t.WORKLOADS, name)] + [str(a) for a in args],
                         stdout=out, stderr=err)
    deadline = time.time() + timeout
    while p.poll() is None:
        if time.time() > deadline:
            p.kill()
            t.fail("workload %s did not finish in %ds" % (name, timeout))
        time.sleep(0.05)
    out.seek(0)
    err.seek(0)
    if p.returncode != 0:
        t.fail("workload %s failed (%d): %s" % (name, p.returncode, err.read()))
    return json.loads(out.read().strip().splitlines()[-1])


def graph(d, pid, elapsed, *extra):
    """rspctl graph --pid PID over the workload's run (plus the settle time), as JSON."""
    last = "%dms" % int((elapsed + 1.0) * 1000)
    g = d.json("graph", "--pid", str(pid), "--last", last, *extra)
    w = g["window"]
    print("   window %.3f s, %d records, %d gaps, %d wakings not seen (%d inferred)" %
          (w["seconds"], w["records"], w["gaps"], w["wakings_not_seen"], w["wakers_inferred"]))
    return g


def show(g):
    for k in g["knots"]:
        print("   knot%s: %s" % (" (background)" if k["background"] else "",
                                 ", ".join(v["name"] for v in k["vertices"])))
        for e in k["edges"]:
            print("      %s -> %s: %.4f s (direct %.4f, inferred %.4f, %d waits)" %
                  (e["from"], e["to"], e["weight_s"], e["direct_s"], e["inferred_s"], e["count"]))


def knot_of(g, tid):
    """The knot holding thread @tid, or None."""
    for k in g["knots"]:
        for v in k["vertices"]:
            if tid in v["tids"]:
                return k
    return None


def vertex_id(k_or_g, tid):
    for v in k_or_g["vertices"]:
        if tid in v["tids"]:
            return v["id"]
    return None


def find_edge(g, from_id, to_id):
    """An edge anywhere in the answer (knots or the list outside them)."""
    for k in g["knots"]:
        for e in k["edges"]:
            if e["from_id"] == from_id and e["to_id"] == to_id:
                return e
    for e in g["edges"]:
        if e["from_id"] == from_id and e["to_id"] == to_id:
            return e
    return None


def near(actual, expected, tol=0.15):
    return expected > 0 and abs(actual - expected) <= tol * expected


def check_near(what, actual, expected, tol=0.15):
    t.check(near(actual, expected, tol),
            "%s: %.4f s within %d%% of %.4f s" % (what, actual, int(tol * 100), expected))


def check_range(what, actual, lo, hi, tol=0.15):
    """@actual within @tol of the range [lo, hi] the workload measured: the
    kernel hides some runnable time from rsp (switches from idle are not
    delivered), so what rsp counts as waiting lies between the workload's
    pure sleep time (lo) and its whole off-CPU time (hi)."""
    ok = lo * (1 - tol) <= actual <= hi * (1 + tol)
    t.check(ok, "%s: %.4f s within %d%% of [%.4f, %.4f] s" %
            (what, actual, int(tol * 100), lo, hi))
