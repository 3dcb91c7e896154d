"""TCP request/response over loopback (net_rr tcp 200 3). Known answer: the
client waits ~200 x 3 ms for the server thread, each wait ended by the
server's send over loopback: the wait-for graph has client -> server (not
client -> NIC) with the client's measured wait, and rspctl net shows the
client's socket 127.0.0.1:x -> 127.0.0.1:PORT answered by the server.
Another process writes to the disk and a busy loop takes a CPU meanwhile
(issue 14: answers that hold on a machine others use)."""
import os

import nettest as nt
import rsptest as t

t.need_root()

with t.Rspd() as d, t.Background(os.environ.get("RSP_TEST_DIR", "/var/tmp")):
    w = nt.run("tcp")
    d.settle()
    nt.check_graph(d, w)
    nt.check_net(d, w, "tcp", need_addresses=True)
    _, text, _ = d.ctl("net", "--pid", str(w["client"]), *nt.rng(w))
    print(text)
    t.check(all(len(line) < 80 for line in text.splitlines()), "text lines under 80 columns")
    t.check("127.0.0.1:%d" % w["port"] in text and "over loopback" in text,
            "the text names the server's address and the loopback peer")
    st = d.json("status")
    net = next(f for f in st["families"] if f["name"] == "net")
    t.check(net["source"] in ("tracepoint", "kprobe") and net["events_open"] >= 3,
            "status: the net family's source is %s (%s)" % (net["source"], net.get("note")))
