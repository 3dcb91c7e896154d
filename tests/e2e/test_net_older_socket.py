"""A TCP connection older than rspd. Its socket's address is in no state
record of the window, and this kernel hides socket pointers in /proc/net
(kptr_restrict), so its 4-tuple comes from its receives
(tcp:tcp_rcv_space_adjust), and holds from the start of the window.

Known answer: a Python client connected to a forked server over loopback
before rspd started; once rspd runs, it sends 100 requests, the server
computes 3 ms of CPU time per request and answers. rspctl net shows one TCP
socket of the client, 127.0.0.1:x -> 127.0.0.1:PORT, carrying all 100
operations (the first one too), answered by the server over loopback, and
the graph has client -> server."""
import json
import os
import subprocess
import sys

import graphtest as gt
import rsptest as t

t.need_root()
N = 100

SCRIPT = r"""
import json, os, socket, sys, time
N = int(sys.argv[1])
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
port = ls.getsockname()[1]
c = socket.create_connection(("127.0.0.1", port))
s, _ = ls.accept()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, b"%d\n" % os.getpid())
    for i in range(N):
        s.recv(64)
        end = time.thread_time() + 0.003
        while time.thread_time() < end:
            pass
        s.sendall(b"a" * 64)
    os._exit(0)
server = int(os.read(r, 64))
print(json.dumps({"pid": os.getpid(), "server": server, "port": port}), flush=True)
sys.stdin.readline()
t0 = time.monotonic()
for i in range(N):
    c.sendall(b"q" * 64)
    c.recv(64)
elapsed = time.monotonic() - t0
os.waitpid(pid, 0)
print(json.dumps({"elapsed_s": elapsed}), flush=True)
"""

def any_vertex(g, tid):
    """The id of @tid's vertex, in a knot or not."""
    for v in [v for k in g["knots"] for v in k["vertices"]] + g["vertices"]:
        if tid in v["tids"]:
            return v["id"]
    return None


python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
p = subprocess.Popen([python, "-c", SCRIPT, str(N)], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
try:
    w = json.loads(p.stdout.readline())
    print("   connected before rspd: %s" % w)
    with t.Rspd() as d:
        p.stdin.write("go\n")
        p.stdin.flush()
        w.update(json.loads(p.stdout.readline()))
        p.wait(timeout=60)
        d.settle()
        last = "%dms" % int((w["elapsed_s"] + 1.5) * 1000)
        n = d.json("net", "--pid", str(w["pid"]), "--last", last)
        for s in n["sockets"]:
            print("      %s %s -> %s: %d ops, %.4f s, peers %s" %
                  (s["proto"], s.get("local"), s.get("remote"), s["ops"], s["total_s"],
                   [(x.get("tid"), x["ops"]) for x in s["peers"]]))
        rows = [s for s in n["sockets"] if s["proto"] == "tcp"]
        t.check(len(rows) == 1, "one TCP socket of the client (%d)" % len(rows))
        s = rows[0]
        t.check(s["addresses"] != "unknown" and s["remote_addr"] == "127.0.0.1" and
                s["remote_port"] == w["port"],
                "its remote end is 127.0.0.1:%d (%s)" % (w["port"], s.get("remote")))
        t.check(abs(s["ops"] - N) <= 1, "it carries the %d operations (%d)" % (N, s["ops"]))
        peer = max(s["peers"], key=lambda x: x["ops"])
        t.check(peer.get("tid") == w["server"] and peer.get("loopback"),
                "answered by the server over loopback")
        g = gt.graph(d, w["pid"], w["elapsed_s"] + 0.5)
        # This test waits on the client's output, so it may form a knot with
        # the client and the server (set aside as background): look there too.
        client = any_vertex(g, w["pid"])
        server = any_vertex(g, w["server"])
        e = gt.find_edge(g, client, server)
        t.check(e is not None and e["direct_s"] >= 0.8 * N * 0.003,
                "the graph has client -> server with the server's compute time (%.4f s)" %
                (e["direct_s"] if e else 0))
finally:
    if p.poll() is None:
        p.kill()
