"""Helpers for the network end-to-end tests: run net_rr (request/response
over loopback between two processes), then check what rsp says about it.

Known answer (tests/workloads/net_rr.c): the client waits about N x
COMPUTE_MS for the server; each wait is ended by the server's send over
loopback. So rsp must show client -> server (not client -> NIC) weighing
what the client waited, and network operations on the client's socket
answered by the server thread over loopback.

What the client waited lies between the server's CPU time for the requests
(the client sleeps at least that long) and the client's wall-clock wait
(which also holds its own runnable time after each wakeup: on a busy
machine up to a fifth more), so answers are checked against that range.
"""

import graphtest as gt
import rsptest as t

REQUESTS = 200
COMPUTE_MS = 3


def run(proto):
    from_s = t.now_s() - 0.2
    w = gt.workload("net_rr", proto, REQUESTS, COMPUTE_MS)
    w["from_s"] = from_s
    print("   workload: %s" % w)
    return w


def rng(w):
    """One fixed range for every question about the run, from just before it
    to the first question (asked after the data is fed): a --last taken at
    each question slides off the run's start while the earlier questions
    take their time (under ASan, beside a busy loop: a graph query of
    seconds, then `net` saw 150 of the 200 operations)."""
    if "to_s" not in w:
        w["to_s"] = t.now_s()
    return ["--from", "%.6f" % w["from_s"], "--to", "%.6f" % w["to_s"]]


def check_wait(what, actual, w):
    """@actual is what the client waited for the server (see above)."""
    gt.check_range(what, actual, w["server_cpu_s"], w["client_wait_s"], 0.1)


def check_graph(d, w):
    """client -> server carries the client's waits; none of them go to the NIC."""
    g = d.json("graph", "--pid", str(w["client"]), *rng(w))
    gw = g["window"]
    print("   window %.3f s, %d records, %d gaps, %d wakings not seen (%d inferred)" %
          (gw["seconds"], gw["records"], gw["gaps"], gw["wakings_not_seen"],
           gw["wakers_inferred"]))
    # In a knot (client and server wait for each other) or not.
    every = [v for k in g["knots"] for v in k["vertices"]] + g["vertices"]
    ids = {v["id"]: v for v in every}
    client = next((v for v in every if w["client_tid"] in v["tids"]), None)
    server = next((v for v in every if w["server_tid"] in v["tids"]), None)
    t.check(client is not None and server is not None, "client and server are vertices")
    e = gt.find_edge(g, client["id"], server["id"])
    t.check(e is not None, "an edge client -> server")
    print("      client -> server: weight %.4f s, direct %.4f s, network %.4f s, %d waits" %
          (e["weight_s"], e["direct_s"], e["network_s"], e["count"]))
    check_wait("client -> server (direct)", e["direct_s"], w)
    t.check(e["network_s"] >= 0.9 * e["direct_s"],
            "the waits were for network data (%.4f of %.4f s)" % (e["network_s"], e["direct_s"]))
    nic = [x for x in g["edges"] if x["from_id"] == client["id"] and
           ids.get(x["to_id"], {}).get("kind") == "network"]
    nic_s = sum(x["direct_s"] for x in nic)
    t.check(nic_s <= 0.05 * e["direct_s"],
            "client -> NIC carries almost nothing (%.4f s): loopback waits go to the sender"
            % nic_s)
    stacks = [f for s in e["waker_stacks"] for f in s["frames"]]
    t.check(any("sendmsg" in f or "sendto" in f or "xmit" in f for f in stacks),
            "the waker stack shows the server's send under the softirq")
    return g, e


def net_rows(d, w):
    n = d.json("net", "--pid", str(w["client"]), *rng(w))
    print("   net: %d ops on %d sockets" % (n["window"]["ops"], n["window"]["sockets"]))
    for s in n["sockets"]:
        print("      %s %s -> %s: %d ops, %.4f s, peers %s" %
              (s["proto"], s.get("local"), s.get("remote"), s["ops"], s["total_s"],
               [(p.get("tid"), p["ops"]) for p in s["peers"]]))
    return n["sockets"]


def check_net(d, w, proto, need_addresses):
    rows = [s for s in net_rows(d, w) if s["proto"] == proto and s["ops"] >= REQUESTS // 2]
    t.check(len(rows) == 1, "one %s socket of the client carries the requests" % proto)
    s = rows[0]
    t.check(abs(s["ops"] - REQUESTS) <= 2, "%d operations (sent %d requests)" %
            (s["ops"], REQUESTS))
    check_wait("the operations' total", s["total_s"], w)
    peer = max(s["peers"], key=lambda p: p["ops"])
    t.check(peer.get("tid") == w["server_tid"] and peer.get("loopback"),
            "answered by the server thread over loopback (%d of %d ops)" %
            (peer["ops"], s["ops"]))
    if s["addresses"] == "unknown":
        t.check(not need_addresses, "addresses not required for %s" % proto)
        print("   (addresses unknown: this kernel has no event that names a UDP socket's "
              "addresses, and hides socket pointers in /proc/net)")
        return s
    t.check(s["remote_addr"] == "127.0.0.1" and s["remote_port"] == w["port"],
            "the remote end is 127.0.0.1:%d (%s)" % (w["port"], s["remote"]))
    return s


def snap_nodes(node, up=()):
    """Every node of a snapshot chain with the nodes above it."""
    yield node, up
    for c in node.get("children", []):
        yield from snap_nodes(c, up + (node,))


def mentions(value, needle):
    if isinstance(value, dict):
        return any(mentions(v, needle) for v in value.values())
    if isinstance(value, list):
        return any(mentions(v, needle) for v in value)
    return needle(value)


def check_snapshot(d, w, need_addresses):
    """The client's snapshot: the server thread in its chain with the client's
    waits attributed, the network operation with 127.0.0.1 and the port."""
    s = d.json("snapshot", str(w["client"]), *rng(w))
    nodes = [n for r in s["chain"] for n in snap_nodes(r)]
    server = [n for n, _ in nodes if n["kind"] == "thread" and n.get("tid") == w["server_tid"]]
    t.check(server, "the server thread is in the client's chain")
    waits = [n for n, _ in nodes if n["kind"] == "sleep" and
             n.get("waker", {}).get("tid") == w["server_tid"]]
    check_wait("the client's sleeps woken by the server", sum(n["total_s"] for n in waits), w)
    net = [n for n in waits if n.get("network")]
    t.check(net and all(n["network"]["answered_by"] == "thread" for n in net),
            "they carry their network operation, answered by a thread over loopback")
    busiest = max(net, key=lambda n: n["total_s"])
    print("   %d sleeps on %s %s -> %s, %.3f s" %
          (busiest["count"], busiest["network"]["proto"], busiest["network"].get("local"),
           busiest["network"].get("remote"), busiest["total_s"]))
    t.check(busiest["network"]["proto"] == w["proto"], "over %s" % w["proto"])
    if need_addresses:
        t.check(busiest["network"].get("remote") == "127.0.0.1:%d" % w["port"],
                "to 127.0.0.1:%d, the server's port" % w["port"])
    _, text, _ = d.ctl("snapshot", str(w["client"]), *rng(w))
    want = "127.0.0.1:%d" % w["port"] if need_addresses else "answered over loopback"
    t.check(want in text, "the text shows it (%s)" % want)
    return s
