"""The metrics endpoint under a slowloris and a flood (issue 40, finding 4).

Eight connections (as many as --metrics-connections allows) each send one
byte of a request every 0.5 s, so no idle timeout ever fires: every scrape
got no answer at all. Then a flood of 200 connections that send nothing.
Known answers: while each lasts, every scrape is answered (200, text format,
rsp_ series) within 5 s; rspd's capture goes on (records keep increasing);
and a trickling connection is closed within --metrics-timeout (2 s here)
plus 1 s of its first byte, whether or not other connections come."""
import socket
import threading
import time
import urllib.request

import rsptest as t

t.need_root()
CONNS = 8
TIMEOUT_S = 2


class Slowloris:
    """@n connections that trickle a request byte by byte; notes when the
    server closed each."""
    REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 4096

    def __init__(self, port, n):
        self.port, self.n = port, n
        self.stop = threading.Event()
        self.closed_after = []
        self.threads = [threading.Thread(target=self.one, daemon=True) for _ in range(n)]

    def one(self):
        s = socket.create_connection(("127.0.0.1", self.port))
        t0 = time.monotonic()
        try:
            for b in self.REQUEST:
                if self.stop.is_set():
                    return
                s.send(bytes([b]))
                time.sleep(0.5)
        except OSError:
            self.closed_after.append(time.monotonic() - t0)
        finally:
            s.close()

    def __enter__(self):
        for th in self.threads:
            th.start()
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for th in self.threads:
            th.join(timeout=5)


def scrape(port, what):
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            body = r.read().decode()
            ok = r.status == 200 and "rsp_" in body
    except OSError as e:
        ok, body = False, str(e)
    t.check(ok, "%s: a scrape is answered in %.2f s %s" % (what, time.monotonic() - t0,
                                                          "" if ok else body[:200]))


def records(d):
    return d.json("status")["window"]["records"]


port = t.free_port()
with t.Rspd("--metrics-listen", "127.0.0.1:%d" % port, "--metrics-connections", str(CONNS),
            "--metrics-timeout", "%ds" % TIMEOUT_S) as d:
    scrape(port, "before")
    r0 = records(d)
    with Slowloris(port, CONNS) as slow:
        for i in range(3):
            scrape(port, "slowloris, scrape %d" % (i + 1))
            time.sleep(1)
        time.sleep(TIMEOUT_S + 1)
        closed = len(slow.closed_after)
        t.check(closed == CONNS and max(slow.closed_after) <= TIMEOUT_S + 3,
                "every trickling connection was closed (%d of %d, after %s s)" % (
                    closed, CONNS, ", ".join("%.1f" % x for x in sorted(slow.closed_after))))
    # No other connection comes: the janitor closes them all the same.
    with Slowloris(port, 2) as slow:
        time.sleep(TIMEOUT_S + 2.5)
        # the janitor's tick (1 s), then the client's next byte (0.5 s) finds it closed
        t.check(len(slow.closed_after) == 2 and max(slow.closed_after) <= TIMEOUT_S + 2.5,
                "with no scrape meanwhile too, each was closed within --metrics-timeout + 1 s "
                "(after %s s)" % ", ".join("%.1f" % x for x in sorted(slow.closed_after)))
    flood = []
    for _ in range(200):
        try:
            flood.append(socket.create_connection(("127.0.0.1", port), timeout=1))
        except OSError:
            break
    print("   flood: %d connections open" % len(flood))
    for i in range(3):
        scrape(port, "flood, scrape %d" % (i + 1))
    for s in flood:
        s.close()
    d.settle(1)
    t.check(records(d) > r0, "capture went on meanwhile (records %d -> %d)" % (r0, records(d)))
    t.check(d.alive(), "rspd is up")
