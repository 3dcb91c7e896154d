"""systemd's notify protocol without systemd: rspd under a NOTIFY_SOCKET
this test owns sends READY=1 once the rings are open, STATUS= with the
record rate and the window's span, WATCHDOG=1 at half WATCHDOG_USEC, and
RELOADING=1 / READY=1 around a SIGHUP, STOPPING=1 at the end."""
import os
import signal
import socket
import time
import rsptest as t

t.need_root()

d = t.Rspd(env={})
addr = os.path.join(d.dir, "notify.sock")
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(addr)
sock.settimeout(0.2)
d.env = {"NOTIFY_SOCKET": addr, "WATCHDOG_USEC": "400000"}


def collect(seconds):
    msgs = []
    end = time.time() + seconds
    while time.time() < end:
        try:
            msgs.append(sock.recv(4096).decode())
        except socket.timeout:
            pass
    return msgs


with d:
    t.workload("pipe_pingpong", 2000, 0)
    msgs = collect(2.5)
    print("   first messages: %s" % msgs[:4])
    t.check(msgs and msgs[0] == "READY=1", "the first message is READY=1")
    status = [m for m in msgs if m.startswith("STATUS=")]
    t.check(len(status) >= 2, "STATUS= is sent once a second (%d in 2.5 s)" % len(status))
    last = status[-1]
    t.check("records/s" in last and "window" in last and " s (" in last,
            "STATUS= has the record rate and the window's span: " + last)
    pings = [m for m in msgs if m == "WATCHDOG=1"]
    # 200 ms apart for 2.5 s: 12; the machine is shared, so ask for half.
    t.check(len(pings) >= 6, "WATCHDOG=1 at half of WATCHDOG_USEC=400ms (%d in 2.5 s)" % len(pings))
    d.signal(signal.SIGHUP)
    msgs = collect(1.0)
    t.check("RELOADING=1" in msgs and "READY=1" in msgs
            and msgs.index("RELOADING=1") < msgs.index("READY=1"),
            "SIGHUP: RELOADING=1 then READY=1")
    d.stop()
    msgs = collect(0.5)
    t.check("STOPPING=1" in msgs, "STOPPING=1 on the way out")

# Without WATCHDOG_USEC there are no pings; without NOTIFY_SOCKET nothing is sent.
d = t.Rspd(env={"NOTIFY_SOCKET": addr})
with d:
    msgs = collect(1.5)
    t.check("READY=1" in msgs and "WATCHDOG=1" not in msgs,
            "no WATCHDOG=1 when the unit has no WatchdogSec")
    d.stop()
collect(0.5)  # what the last rspd sent on its way out
with t.Rspd() as d:
    msgs = collect(1.0)
    t.check(msgs == [], "nothing is sent without NOTIFY_SOCKET")
sock.close()
