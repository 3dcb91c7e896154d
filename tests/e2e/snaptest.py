"""Helpers for the recursive snapshot's end-to-end tests (rspctl snapshot):
ask for a workload's snapshot, walk its chain, and check the files it
writes (folded stacks, Chrome trace) by parsing them."""
import json
import os
import tempfile
import time

import rsptest as t


def last(elapsed):
    """--last covering the workload's run plus the settle time."""
    return "%dms" % int((elapsed + 1.5) * 1000)


def since(t0):
    """--last covering everything since time.time() was t0 (and 0.5 s before):
    for a query made after other work on a busy machine."""
    return "%dms" % int((time.time() - t0 + 0.5) * 1000)


def snapshot(d, pid, elapsed, *extra, user=None):
    """rspctl snapshot PID --last ... --json; prints the table."""
    s = d.json("snapshot", str(pid), "--last", last(elapsed), *extra, user=user)
    w = s["window"]
    print("   window %.3f s, %d records, %d gaps, %d wakings not seen (%d inferred)" %
          (w["to_s"] - w["from_s"], w["records"], w["gaps"], w["wakings_not_seen"],
           w["wakers_inferred"]))
    print("   wall %.4f s, total %.4f s, accounted %.1f%% (inferred %.4f s)" %
          (s["wall_s"], s["total_s"], s["percent_accounted"], s["inferred_s"]))
    for k, v in sorted(s["categories"].items(), key=lambda kv: -kv[1]):
        if v:
            print("      %-18s %.4f s" % (k, v))
    return s


def skip_if_gaps(s, share=0.01):
    """Lost records make threads unknown across them (the snapshot counts
    that time as unknown, in unknown_detail.gaps_s): no known answer when
    they cover more than @share of the time. Records lost elsewhere in the
    window (another CPU, threads not in the chain) do not change it."""
    gaps = s["window"]["gaps"]
    lost = s["unknown_detail"]["gaps_s"]
    if lost > share * s["total_s"]:
        print("SKIP: records were lost (the machine is too busy): %d gaps, %.4f s of the "
              "chain unknown" % (gaps, lost))
        raise SystemExit(t.SKIP)
    if gaps:
        print("   %d gaps in the window; %.4f s of the chain unknown across them" % (gaps, lost))


def walk(node, path=()):
    """Every node of a chain subtree with the thread nodes above it."""
    here = path + (node,) if node["kind"] == "thread" else path
    yield node, path
    for c in node["children"]:
        yield from walk(c, here)


def nodes(s):
    for r in s["chain"]:
        yield from walk(r)


def threads_in_chain(s):
    return {n["pid"] if n.get("other_user") else n["tid"]
            for n, _ in nodes(s) if n["kind"] == "thread"}


def subtree_categories(s, tid):
    """Categories summed over every subtree rooted at thread @tid."""
    acc = {}

    def add(n):
        for k, v in n["categories"].items():
            acc[k] = acc.get(k, 0) + v
        for c in n["children"]:
            add(c)
    for n, _ in nodes(s):
        if n["kind"] == "thread" and n.get("tid") == tid:
            add(n)
    return acc


def parse_folded(path):
    """FlameGraph's reading of a folded file: [(frames, count)]."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            t.check(line, "folded: no empty line") if not line else None
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit() or int(count) <= 0:
                t.fail("folded: a bad line %r" % line[:200])
            rows.append((stack.split(";"), int(count)))
    return rows


def check_chrome(path, tids):
    """A valid Trace Event file: slices per thread, names, paired flows."""
    with open(path) as f:
        tr = json.load(f)
    ev = tr["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X"]
    names = [e for e in ev if e["ph"] == "M"]
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    for e in xs:
        if not (isinstance(e["ts"], (int, float)) and e["dur"] > 0 and e["name"]
                and "pid" in e and "tid" in e):
            t.fail("chrome trace: a bad slice %s" % e)
    # process_labels: a process's cgroup, container and namespaced pid (issue 18)
    t.check(all((e["name"] in ("process_name", "thread_name") and e["args"]["name"]) or
                (e["name"] == "process_labels" and e["args"]["labels"]) for e in names),
            "chrome trace: %d metadata events name and label processes and threads"
            % len(names))
    t.check(set(starts) == set(ends) and all(ends[i]["bp"] == "e" for i in ends),
            "chrome trace: %d flow arrows, each with its start and end" % len(starts))
    # Perfetto binds a flow's ends to the slice open on the thread's track at
    # that time: each must fall in (or at the start of) a slice of its thread
    by_track = {}
    for e in xs:
        by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    loose = [e for e in list(starts.values()) + list(ends.values())
             if not any(a - 0.002 <= e["ts"] <= b + 0.002
                        for a, b in by_track.get((e["pid"], e["tid"]), []))]
    t.check(not loose, "chrome trace: every flow arrow starts and ends in a slice (%s)" %
            loose[:2])
    have = {e["tid"] for e in xs}
    t.check(set(tids) <= have, "chrome trace: a track with slices for each of %s" % sorted(tids))
    return tr


def chrome_slices(tr, tid):
    """The X slices of thread @tid's track, in time order."""
    return sorted((e for e in tr["traceEvents"] if e["ph"] == "X" and e["tid"] == tid),
                  key=lambda e: e["ts"])


def tmpfile(suffix):
    fd, path = tempfile.mkstemp(prefix="rsptest.snap.", suffix=suffix)
    os.close(fd)
    return path
