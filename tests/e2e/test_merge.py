"""rspctl merge (issue 19): two "hosts" on one machine, two network
namespaces joined by a veth pair (10.77.0.1 client, 10.77.0.2 server); the
client asks the server 100 times over one TCP connection, the server
fsyncs before each answer (tests/workloads/tcp_fsync). One rspd dumps the
window; merging that dump with a copy of itself whose clock is shifted by
a known 2.5 s (the test-only --test-clock-shift) must match the connection
across the "hosts" (client on one, server on the other, both ways) and
recover the offset within the uncertainty it reports (< 1 ms); the
client's merged snapshot finds its network waits answered by the server on
the other "host", whose time from request to answer is >= 90% of the
client's wait and is its fsyncs (block_io sleeps, with the runs and run
queue waits between them on a loaded machine). Refusals:
the same host twice without the test shift, a dump without the RSP_HOST
section (as an older rspd wrote), a truncated dump: one sentence, rc != 0."""
import json
import os
import shutil
import subprocess
import tempfile

import rsptest as t

t.need_root()
if not shutil.which("ip"):
    print("skipped: the ip command (iproute2, scripts/deps.sh) is not installed")
    raise SystemExit(t.SKIP)

SHIFT_NS = 2500000000
N = 100
tag = "%d" % (os.getpid() % 100000)
NS_C, NS_S = "rspm-c" + tag, "rspm-s" + tag
VETH_C, VETH_S = "rspmc" + tag, "rspms" + tag
work = tempfile.mkdtemp(prefix="rsptest-merge.")


def ip(*args, check=True):
    p = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=30)
    if check and p.returncode != 0:
        t.fail("ip %s failed: %s" % (" ".join(args), p.stderr.strip()))


def netns_up():
    ip("netns", "add", NS_C)
    ip("netns", "add", NS_S)
    ip("link", "add", VETH_C, "type", "veth", "peer", "name", VETH_S)
    ip("link", "set", VETH_C, "netns", NS_C)
    ip("link", "set", VETH_S, "netns", NS_S)
    ip("-n", NS_C, "addr", "add", "10.77.0.1/24", "dev", VETH_C)
    ip("-n", NS_S, "addr", "add", "10.77.0.2/24", "dev", VETH_S)
    for ns, dev in ((NS_C, VETH_C), (NS_S, VETH_S)):
        ip("-n", ns, "link", "set", dev, "up")
        ip("-n", ns, "link", "set", "lo", "up")


def netns_down():
    # Deleting a namespace deletes the veth end in it, and so the pair.
    ip("netns", "del", NS_C, check=False)
    ip("netns", "del", NS_S, check=False)


def merge(*args):
    return t.run([t.RSPCTL, "merge"] + list(args), timeout=300)


def refused(p, words, what):
    lines = p.stderr.strip().splitlines()
    t.check(p.returncode != 0 and len(lines) == 1 and words in lines[0],
            "%s: refused in one sentence naming '%s' (rc %d): %r" %
            (what, words, p.returncode, p.stderr))


try:
    netns_up()
    exe = os.path.join(t.WORKLOADS, "tcp_fsync")
    with t.Rspd("--window", "256M") as d:
        server = subprocess.Popen(["ip", "netns", "exec", NS_S, exe, "server", "10.77.0.2",
                                   "7707", os.environ.get("RSP_TEST_DIR", "/var/tmp"), str(N)],
                                  stdout=subprocess.PIPE, text=True)
        client = subprocess.run(["ip", "netns", "exec", NS_C, exe, "client", "10.77.0.2",
                                 "7707", str(N)], capture_output=True, text=True, timeout=120)
        sout, _ = server.communicate(timeout=60)
        t.check(client.returncode == 0 and server.returncode == 0,
                "tcp_fsync ran: %r %r" % (client.stderr, sout))
        wc, ws = json.loads(client.stdout), json.loads(sout)
        # A loopback connection inside one "host": never matched across hosts, counted.
        lserver = subprocess.Popen(["ip", "netns", "exec", NS_C, exe, "server", "127.0.0.1",
                                    "7708", os.environ.get("RSP_TEST_DIR", "/var/tmp"), "5"],
                                   stdout=subprocess.DEVNULL)
        lclient = subprocess.run(["ip", "netns", "exec", NS_C, exe, "client", "127.0.0.1",
                                  "7708", "5"], capture_output=True, text=True, timeout=60)
        t.check(lserver.wait(timeout=60) == 0 and lclient.returncode == 0,
                "the loopback exchange ran: %r" % lclient.stderr)
        d.settle()
        _, out, _ = d.ctl("dump", "-o", os.path.join(work, "a.perf.data"), "--json")
    path = os.path.join(work, "a.perf.data")

    p = merge(path, path, "net", "--json", "--test-clock-shift", "1=%d" % SHIFT_NS)
    t.check(p.returncode == 0, "merge answered: %s" % p.stderr)
    js = json.loads(p.stdout)
    offs = [o for o in js["clock_offsets"] if (o["host_a"], o["host_b"]) == (0, 1)]
    t.check(len(offs) == 1, "one offset between host 0 and host 1: %s" % js["clock_offsets"])
    o = offs[0]
    print("   offset %.6f s +- %.6f s from %d pairs; client %s, server %s" %
          (o["offset_s"], o["uncertainty_s"], o["pairs"], wc, ws))
    t.check(abs(o["offset_ns"] - SHIFT_NS) <= o["uncertainty_ns"],
            "the known shift %d ns is within %d +- %d ns" %
            (SHIFT_NS, o["offset_ns"], o["uncertainty_ns"]))
    t.check(o["uncertainty_ns"] < 1000000, "uncertainty %d ns < 1 ms" % o["uncertainty_ns"])
    t.check(o["pairs"] >= N // 2, "%d request/response pairs (%d requests)" % (o["pairs"], N))
    # The same dump on both sides: the client on host 0 meets the server on host 1 and back.
    ends = {(c["a"]["host"], c["a"]["pid"], c["b"]["host"], c["b"]["pid"])
            for c in js["connections"]}
    for want in ((0, wc["client"], 1, ws["server"]), (0, ws["server"], 1, wc["client"])):
        t.check(want in ends, "connection host %d pid %d <-> host %d pid %d in %s" %
                (want + (js["connections"],)))
    un = js["unmatched"]
    t.check(un["loopback"] >= 4 and all(e["why"] == "loopback" and e["local"].startswith("127.")
                                        for e in un["ends"] if e["local"].startswith("127.")),
            "the loopback connection's ends (2 per copy) are counted and named: %s" % un)
    for c in js["connections"]:
        for e in (c["a"], c["b"]):
            t.check(e["local"].startswith("10.77.0."), "an end's address is the veth's: %s" % e)
            if e["pid"] == wc["client"]:
                t.check(e["operations"] >= N - 2 and e["wait_s"] <= wc["elapsed_s"],
                        "the client's end: %d operations, %.3f s waited of %.3f s" %
                        (e["operations"], e["wait_s"], wc["elapsed_s"]))

    # The client's snapshot across the hop: its waits are the server's time on host 1.
    p = merge(path, path, "snapshot", "%d@0" % wc["client"], "--json", "--test-clock-shift",
              "1=%d" % SHIFT_NS)
    t.check(p.returncode == 0, "merge snapshot answered: %s" % p.stderr)
    sj = json.loads(p.stdout)
    hops = sj["answered_by"]
    print("   client: %.4f s of network wait, %d ops (%d matched, %.4f s); answered by %s" %
          (sj["network_wait_s"], sj["operations"], sj["matched_operations"],
           sj["matched_wait_s"], [(h["host"], h["pid"], h["service_s"],
                                   {k: v for k, v in h["categories"].items() if v})
                                  for h in hops]))
    t.check(sj["operations"] >= N - 2 and sj["matched_operations"] >= 0.9 * N,
            "the client's operations (%d of %d) are matched across hosts (%d)" %
            (sj["operations"], N, sj["matched_operations"]))
    t.check(len(hops) == 1 and hops[0]["host"] == 1 and hops[0]["pid"] == ws["server"],
            "answered by the server on host 1")
    h = hops[0]
    t.check(h["service_s"] >= 0.9 * sj["matched_wait_s"],
            "the server's time from request to answer (%.4f s) is >= 90%% of the client's "
            "matched network wait (%.4f s)" % (h["service_s"], sj["matched_wait_s"]))
    cats = sum(h["categories"].values())
    t.check(abs(cats - h["service_s"]) <= 0.01 * h["service_s"] + 1e-6,
            "the server's categories (%.6f s) add up to its time (%.6f s)" %
            (cats, h["service_s"]))
    # Its disk: fsync's block_io sleeps and the runs and run-queue waits between them
    # (the machine is shared: the server may wait for a CPU after the disk answers).
    disk = h["categories"]["sleep_block_io"]
    t.check(disk > 0 and disk + h["categories"]["runnable"] + h["categories"]["run"]
            >= 0.9 * h["service_s"],
            "the server's time is its fsyncs: block_io %.4f s, runnable %.4f s, run %.4f s "
            "of %.4f s" % (disk, h["categories"]["runnable"], h["categories"]["run"],
                           h["service_s"]))
    refused(merge(path, path, "snapshot", "%d@7" % wc["client"], "--test-clock-shift", "1=1"),
            "host 7", "a host that is no dump")

    p = merge(path, path, "net")
    refused(p, "both from host", "the same dump twice without the test shift")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[72 + 240 // 8] &= ~(1 << (240 % 8)) & 0xff  # the RSP_HOST feature bit
    # and RSP_CGROUPS (242), newer still: the table's later entries then stay unread
    data[72 + 242 // 8] &= ~(1 << (242 % 8)) & 0xff
    old = os.path.join(work, "old.perf.data")
    with open(old, "wb") as f:
        f.write(data)
    refused(merge(old, path, "net"), "take a new dump", "a dump without RSP_HOST")
    cut = os.path.join(work, "cut.perf.data")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    refused(merge(path, cut, "net", "--test-clock-shift", "1=1"), "cut.perf.data",
            "a truncated dump")
    print("ok")
finally:
    netns_down()
    if not os.environ.get("RSP_TEST_KEEP"):
        shutil.rmtree(work, ignore_errors=True)
