"""Heavy queries do not starve light ones: with 20 graphs of a full window
queued behind the query threads, `rspctl status` (which reads no window)
is answered on its own lane before any of the graphs. Before the lane, it
waited behind every graph queued before it (3.4 s behind 20 of them); on
its lane but under the process model's lock, behind the running one."""
import os
import subprocess
import time
import rsptest as t

t.need_root()
GRAPHS = 20


def sockets(pid):
    """rspd's open sockets: the listening one and one per client it accepted."""
    fd = "/proc/%d/fd" % pid
    n = 0
    for f in os.listdir(fd):
        try:
            n += os.readlink(os.path.join(fd, f)).startswith("socket:")
        except OSError:
            pass
    return n


def wait_accepted(d, n, timeout=30):
    """Until rspd holds @n client sockets (the I/O thread reads a request as
    soon as it accepts: by then every graph is queued or running)."""
    deadline = time.time() + timeout
    while sockets(d.proc.pid) < n and time.time() < deadline:
        time.sleep(0.01)

with t.Rspd("--window", "64M", "--query-threads", "2") as d:
    t.fill_window(d)
    base = sockets(d.proc.pid)
    graphs = [subprocess.Popen([t.RSPCTL, "--socket", d.socket, "graph", "--json"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for _ in range(GRAPHS)]
    wait_accepted(d, base + GRAPHS)
    rc, out, err = d.ctl("status", "--json", check_rc=False)
    running = sum(1 for p in graphs if p.poll() is None)
    t.check(rc == 0 and '"window"' in out, "status answered while graphs run " + err.strip())
    t.check(running == GRAPHS,
            "status came back with %d of %d graphs still unanswered" % (running, GRAPHS))
    results = [p.communicate(timeout=600) + (p.returncode,) for p in graphs]
    bad = [e for _, e, rc in results if rc != 0][:3]
    t.check(not bad, "every graph is answered too %s" % bad)
