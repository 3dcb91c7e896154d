"""Network events, libc uprobes and DWARF stack copies survive a dump.

rspd runs with every family (the net tracepoints, uprobes on poll, recv and
send with their 8 KiB stack copies, cpu-clock stack copies; not the whole
default set: on a busy machine its read and write probes fill a window at
~100 MB/s, and this test needs its workloads in the window); net_rr sends 100 TCP
requests that take 3 ms each over loopback, and poll_nofp sleeps in poll
under three functions built without frame pointers.

Known answer: the dump's file describes every uprobe as rsp's libc uprobe
(the PMU's type number is the recording machine's: rsp names them), and
`rspctl analyze FILE` gives over the same range the same wait-for graph
(client -> server over loopback, poll_nofp's stitched poll stack), the same
network operations (127.0.0.1:PORT answered by the server) and the same
DWARF stacks in top as rspd gave live; its snapshot of the client has the
sleeps on 127.0.0.1:PORT woken by the server; perf script reads the file."""
import json
import os
import shutil
import tempfile

import graphtest as gt
import nettest as nt
import rsptest as t

t.need_root()


def analyze_json(path, *args):
    p = t.run([t.RSPCTL, "analyze", path] + list(args) + ["--json"], timeout=300)
    if p.returncode != 0:
        t.fail("rspctl analyze %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return json.loads(p.stdout)


def diffs(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        return [x for k in sorted(set(a) | set(b)) for x in diffs(a.get(k), b.get(k),
                                                                   path + "." + k)][:5]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [x for i, (p, q) in enumerate(zip(a, b)) for x in diffs(p, q, "%s[%d]" %
                                                                       (path, i))][:5]
    return [] if a == b else ["%s: %s != %s" % (path, str(a)[:60], str(b)[:60])]


work = tempfile.mkdtemp(prefix="rsptest-dumpnet.")
try:
    with t.Rspd("--families", "all", "--uprobes", "poll,recv,send", "--window", "1G",
                "--ring-pages", "1024") as d:
        net = gt.workload("net_rr", "tcp", 100, 3)
        poll = gt.workload("poll_nofp", 20, 50)
        cpu = gt.workload("cpu_nofp", 1)
        d.settle()
        # A range that ends before the newest record: records of the other CPU
        # with earlier times may still be in its ring (rspd never stops here).
        win = d.json("status")["window"]
        rng = ["--from", "%.6f" % win["oldest_s"], "--to", "%.6f" % (win["newest_s"] - 0.3)]
        live = {
            "graph_net": d.json("graph", "--pid", str(net["client"]), *rng),
            "graph_poll": d.json("graph", "--pid", str(poll["pid"]), *rng),
            "net": d.json("net", "--pid", str(net["client"]), *rng),
            "top": d.json("top", "--pid", str(cpu["pid"]), "--stacks", "3", *rng),
        }
        path = os.path.join(work, "net.perf.data")
        _, out, _ = d.ctl("dump", "--json", "-o", path)
        print("   dump: %s" % out.strip().replace("\n", " ")[:200])

    present = analyze_json(path, "status")["dump"]["events_present"]
    want = ["uprobe", "sock_send_length", "sk_data_ready", "inet_sock_set_state", "cpu_clock"]
    t.check(all(e in present for e in want),
            "offline, the file has the uprobes, the net tracepoints and cpu-clock (%s)" %
            [e for e in want if e not in present])
    off = {
        "graph_net": analyze_json(path, "graph", "--pid", str(net["client"]), *rng),
        "graph_poll": analyze_json(path, "graph", "--pid", str(poll["pid"]), *rng),
        "net": analyze_json(path, "net", "--pid", str(net["client"]), *rng),
        "top": analyze_json(path, "top", "--pid", str(cpu["pid"]), "--stacks", "3", *rng),
    }
    # top's statistics describe the live symbolizer; the graph's counts of
    # repaired stacks cover every thread of the window, and other processes
    # that started before rspd and exited before the dump have no maps in it
    # (a dump synthesizes those of the living): their stacks cannot be
    # checked against the probed function offline. The answers must match.
    off["top"].pop("statistics", None)
    live["top"].pop("statistics", None)
    # For the same reason a graph's edges between other processes may name
    # fewer user frames offline: compare the workloads' own vertices and the
    # edges between them, whole, and the rest of the graph by its shape.
    mine = {"graph_net": {net["client_tid"], net["server_tid"]},
            "graph_poll": {poll["tid"], poll["writer"]}}
    for k, tids in mine.items():
        for g in (live[k], off[k]):
            ids = {v["id"] for v in g["vertices"] if set(v["tids"]) & tids}
            edges = [e for kn in g["knots"] for e in kn["edges"]] + g["edges"]
            g["mine"] = {"vertices": [v for v in g["vertices"] if v["id"] in ids],
                         "edges": [e for e in edges if e["from_id"] in ids and
                                   e["to_id"] in ids]}
            g["shape"] = sorted((e["from_id"], e["to_id"], e["weight_s"], e["count"])
                                for e in edges)
            for x in ("vertices", "edges", "knots", "sinks", "threads"):
                g.pop(x, None)
            for c in ("stacks_probed", "stacks_stitched", "stacks_dwarf", "stacks_not_in_probe"):
                g["window"].pop(c, None)
        t.check(live[k]["mine"]["edges"], "%s: the workload's edges are there" % k)
    # The range was given to the microsecond (--from/--to "%.6f"): where one
    # side starts at its first record (ns) and the other at --from, the
    # window's start and length agree to the microsecond, not to the ns.
    for a in list(live.values()) + list(off.values()):
        w = a.get("window")
        for f in ("start", "end", "seconds"):
            if w and isinstance(w.get(f), float):
                w[f] = round(w[f], 6)
    for k in live:
        t.check(live[k] == off[k], "%s: the same answer live and offline%s" %
                (k, "" if live[k] == off[k] else ": " + "; ".join(diffs(live[k], off[k]))))
    # And the answers are the known ones (the live tests check them in detail).
    g = off["graph_net"]["mine"]
    client = gt.vertex_id(g, net["client_tid"])
    server = gt.vertex_id(g, net["server_tid"])
    e = next((x for x in g["edges"] if x["from_id"] == client and x["to_id"] == server), None)
    t.check(e is not None and e["network_s"] >= 0.9 * e["direct_s"] > 0,
            "offline: client -> server, waits for network data")
    s = [x for x in off["net"]["sockets"] if x["ops"] >= 50]
    t.check(len(s) == 1 and s[0]["remote"] == "127.0.0.1:%d" % net["port"],
            "offline: the client's socket to 127.0.0.1:%d" % net["port"])
    g = off["graph_poll"]["mine"]
    me = gt.vertex_id(g, poll["tid"])
    wr = gt.vertex_id(g, poll["writer"])
    e = next((x for x in g["edges"] if x["from_id"] == me and x["to_id"] == wr), None)
    st = [f for f in (e["wait_stacks"][0]["frames"] if e and e["wait_stacks"] else [])
          if "interceptor_" not in f]  # ASan's, in the ASan build
    user = st[st.index("__poll"):] if "__poll" in st else []
    t.check(user[:4] == ["__poll", "wait_inner", "wait_middle", "wait_outer"],
            "offline: poll_nofp's sleep stack stitched from the poll uprobe (%s)" % user[:5])
    top = off["top"]["stacks"][0]
    t.check(top["unwind"] == "dwarf" and [f["name"] for f in top["frames"]][:3] ==
            ["level3", "level2", "level1"], "offline: cpu_nofp's stacks unwound by DWARF")
    snap = analyze_json(path, "snapshot", str(net["client"]), *rng)
    sleeps = [n for r in snap["chain"] for n, _ in nt.snap_nodes(r) if n["kind"] == "sleep"
              and n.get("network", {}).get("remote") == "127.0.0.1:%d" % net["port"]]
    t.check(sleeps and sleeps[0]["waker"].get("tid") == net["server_tid"] and
            sleeps[0]["network"]["answered_by"] == "thread",
            "offline snapshot of the client: its sleeps on 127.0.0.1:%d woken by the server "
            "over loopback" % net["port"])
    if shutil.which("perf"):
        p = t.run(["perf", "script", "-i", path, "--show-task-events"], timeout=600)
        t.check(p.returncode == 0 and "net_rr" in p.stdout,
                "perf script reads the file (exit %d)%s" %
                (p.returncode, (": " + p.stderr.strip()[:200]) if p.returncode else ""))
finally:
    shutil.rmtree(work, ignore_errors=True)
