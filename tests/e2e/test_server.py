"""The control socket under load and abuse: 100 concurrent `rspctl status`
clients all get their answer; a client that sends half a header and stalls,
and one that never reads its (large) answer, are dropped at their deadlines
while other clients are served; over max-clients a client gets one
sentence; malformed requests get an error. rspd keeps capturing throughout."""
import os
import socket
import struct
import subprocess
import time
import rsptest as t

t.need_root()
MAGIC_Q, MAGIC_A = 0x51505352, 0x41505352


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def request(*argv):
    body = b"".join(a.encode() + b"\0" for a in argv)
    return struct.pack("<II", MAGIC_Q, len(body)) + body


def read_all(s, timeout=10):
    s.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return data, False
        if not chunk:
            return data, True
        data += chunk


with t.Rspd("--request-timeout", "1s", "--reply-timeout", "2s") as d:
    # 100 clients at once.
    t0 = time.time()
    procs = [subprocess.Popen([t.RSPCTL, "--socket", d.socket, "status", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(100)]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    ok = sum(1 for out, err, rc in results if rc == 0 and '"window"' in out)
    print("   100 clients answered in %.2f s" % (time.time() - t0))
    bad = [err for out, err, rc in results if rc != 0][:3]
    t.check(ok == 100, "100 concurrent rspctl status: %d answered %s" % (ok, bad))

    # Half a header, then nothing: dropped after request-timeout (1 s).
    slow = connect(d.socket)
    slow.sendall(struct.pack("<I", MAGIC_Q)[:3])
    rc, out, _ = d.ctl("status")
    t.check(rc == 0, "another client is served while a client stalls mid-header")
    data, closed = read_all(slow, timeout=5)
    t.check(closed and data == b"", "the stalled client is dropped (connection closed)")
    d.wait_log("did not send a whole request in time")

    # A large answer that the client never reads: dropped after reply-timeout.
    wl = t.workload("many_threads", 4000, 2)
    d.settle()
    st = d.json("status", "--pid", str(wl["pid"]))
    n = len(st["threads"])
    t.check(n >= 4000, "status --pid on many_threads lists %d threads (4001 made)" % n)
    full = len(d.ctl("status", "--pid", str(wl["pid"]), "--json")[1])
    lazy = connect(d.socket)
    lazy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    lazy.sendall(request("status", "--pid", str(wl["pid"]), "--json"))
    time.sleep(0.5)
    for i in range(5):
        rc, _, _ = d.ctl("status")
        if rc != 0:
            break
    t.check(rc == 0, "other clients are served while one does not read its %d-byte answer" % full)
    d.wait_log("did not read its whole answer in time", timeout=15)
    data, closed = read_all(lazy)
    t.check(closed and 12 <= len(data) < full + 12,
            "the lazy client was dropped with %d of %d bytes sent" % (len(data), full + 12))

    # Malformed requests get an error answer; the daemon goes on.
    s = connect(d.socket)
    s.sendall(struct.pack("<II", MAGIC_Q, 5) + b"abcde")
    data, _ = read_all(s)
    t.check(struct.unpack("<I", data[:4])[0] == MAGIC_A and b"malformed" in data,
            "a request that is not NUL-terminated strings: 'malformed'")
    s = connect(d.socket)
    s.sendall(struct.pack("<II", MAGIC_Q, 1 << 20))
    data, _ = read_all(s)
    t.check(b"too long" in data, "an oversized request is refused before it is read")
    s = connect(d.socket)
    s.sendall(request("status", "--frobnicate"))
    data, _ = read_all(s)
    status = struct.unpack("<i", data[4:8])[0]
    t.check(status < 0 and b"unknown option '--frobnicate'" in data,
            "a bad command line sent by a client other than rspctl gets the parser's sentence")
    st = d.json("status")
    t.check(d.alive() and st["records"] > 0, "rspd still captures (%d records)" % st["records"])

# Over max-clients: one sentence, then normal service once the others go.
with t.Rspd("--max-clients", "4", "--request-timeout", "1500ms") as d:
    idle = [connect(d.socket) for _ in range(4)]
    time.sleep(0.2)
    rc, _, err = d.ctl("status", check_rc=False)
    t.check(rc == 1 and "maximum of 4 clients" in err, "over max-clients: " + err.strip())
    time.sleep(2)
    rc, _, _ = d.ctl("status", check_rc=False)
    t.check(rc == 0, "served again once the idle clients were dropped")
    for s in idle:
        s.close()
