"""UDP request/response over loopback (net_rr udp 200 3): as the TCP test,
client -> server with the client's measured wait, answered over loopback.
This kernel has no event that gives a UDP socket's addresses (no kprobes),
and hides socket pointers in /proc/net: addresses are checked only when rsp
has them."""
import nettest as nt
import rsptest as t

t.need_root()

with t.Rspd() as d:
    w = nt.run("udp")
    d.settle()
    nt.check_graph(d, w)
    nt.check_net(d, w, "udp", need_addresses=False)
