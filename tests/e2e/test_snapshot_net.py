"""The recursive snapshot of a network client (net_rr over loopback, TCP and
UDP): the server thread is in the client's chain with ~200 x 3 ms attributed
(the client's sleeps are woken by the server's sends over loopback), and
those sleeps carry their network operation, answered by a thread: over TCP
from 127.0.0.1:x to 127.0.0.1 and the server's port (UDP sockets have no
address event on a kernel without kprobes). Skipped, saying so, on a build
without the snapshot command. Another process writes to the disk and a
busy loop takes a CPU meanwhile (issue 14: answers that hold on a machine
others use)."""
import os

import nettest as nt
import rsptest as t

t.need_root()

with t.Rspd() as d, t.Background(os.environ.get("RSP_TEST_DIR", "/var/tmp")):
    for proto in ("tcp", "udp"):
        w = nt.run(proto)
        d.settle()
        nt.check_snapshot(d, w, need_addresses=proto == "tcp")
