"""irq and softirq profiles, fed straight from records from rspd's start.

Loopback TCP traffic runs the NET_RX softirq in the sender's context (a
busy CPU, so this kernel emits it): softirq:NET_RX must grow by at least
one run per few chunks sent, with plausible latencies. Disk writes with the
interrupt CPU kept busy make the disk's irq handler visible under its own
name (irq:NAME, as in /proc/interrupts) and by irq number. rspctl status
reports how far the histograms are fed, with no gaps."""
import glob
import os
import socket
import tempfile
import threading
import rsptest as t

t.need_root()
CHUNKS = 2000
CHUNK = 16384


def profile(d, op, *extra):
    h = d.json("hist", "--op", op, *extra)
    for p in h["profiles"]:
        if p["subject"]["kind"] == "system":
            return p
    return {"count": 0, "sum_ns": 0, "max_ns": 0, "buckets": []}


def loopback_traffic():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    got = []

    def sink():
        c, _ = srv.accept()
        n = 0
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            n += len(b)
        got.append(n)
        c.close()

    th = threading.Thread(target=sink)
    th.start()
    cli = socket.create_connection(srv.getsockname())
    buf = b"x" * CHUNK
    for _ in range(CHUNKS):
        cli.sendall(buf)
    cli.close()
    th.join()
    srv.close()
    return got[0]


with t.Rspd() as d:
    t.wait_fed(d, t.now_s())
    before = profile(d, "softirq:NET_RX")
    n = loopback_traffic()
    t.check(n == CHUNKS * CHUNK, "sent %d bytes over loopback" % n)
    t.wait_fed(d, t.now_s())
    after = profile(d, "softirq:NET_RX")
    runs = after["count"] - before["count"]
    print("   NET_RX: %d runs, mean %.1f us, max %.1f us" % (
        runs, (after["sum_ns"] - before["sum_ns"]) / max(runs, 1) / 1e3, after["max_ns"] / 1e3))
    t.check(runs >= CHUNKS // 20, "softirq:NET_RX grew by %d runs for %d chunks" % (runs, CHUNKS))
    t.check(0 < after["max_ns"] < 1e9, "NET_RX handler times are under a second")
    t.check(sum(b["count"] for b in after["buckets"]) == after["count"],
            "its buckets add up to its count")
    ranged = profile(d, "softirq:NET_RX", "--last", "30s")
    t.check(ranged["count"] >= runs, "the last 30 s of slices hold those runs (%d)"
            % ranged["count"])
    timer = profile(d, "softirq:TIMER")
    t.check(timer["count"] > 0, "softirq:TIMER is not empty (%d)" % timer["count"])

    # The disk's irq handler, with its CPU kept busy so that it is emitted.
    dev = os.path.basename(os.path.realpath("/sys/block/%s/device" % t.disk_of("/var/tmp")[0]))
    irq = None
    for dirname in glob.glob("/proc/irq/*/"):
        names = [h for h in os.listdir(dirname) if h.startswith(dev + "-req")]
        if names:
            irq = (int(os.path.basename(dirname.rstrip("/"))), names[0], dirname)
            break
    if irq is None:
        print("   no virtio request interrupt for the root disk: irq part left out")
    else:
        with open(os.path.join(irq[2], "effective_affinity_list")) as f:
            cpu = int(f.read().strip().split(",")[0].split("-")[0])
        t_irq = t.now_s()
        tmpdir = tempfile.mkdtemp(prefix="rsp-hist-irq.", dir="/var/tmp")
        try:
            t.workload("direct_write", os.path.join(tmpdir, "f"), 200, "--cpu", cpu,
                       "--spin", cpu)
        finally:
            os.unlink(os.path.join(tmpdir, "f"))
            os.rmdir(tmpdir)
        # One closed range for both questions: the disk's irq goes on firing
        # (other I/O) between two cumulative queries.
        t1 = t.now_s()
        d.settle(1.2)  # past the last slice the workload touched
        t.wait_fed(d, t.now_s())
        rng = ("--from", "%.3f" % int(t_irq), "--to", "%.3f" % t1)
        by_name = profile(d, "irq:" + irq[1], *rng)
        by_number = profile(d, "irq:%d" % irq[0], *rng)
        print("   irq %d (%s): %d runs, mean %.1f us" % (
            irq[0], irq[1], by_name["count"], by_name["sum_ns"] / max(by_name["count"], 1) / 1e3))
        t.check(by_name["count"] > 0, "irq:%s is not empty" % irq[1])
        t.check(by_number["count"] == by_name["count"], "irq:%d selects the same profile"
                % irq[0])
    rc, _, err = d.ctl("hist", "--op", "irq:no-such-handler", check_rc=False)
    t.check(rc != 0 and "no irq handler 'no-such-handler'" in err and "seen:" in err,
            "an unknown handler name is one clear error that lists the names seen")
    st = d.json("status")
    t.check(st["hist"]["gaps"] == 0, "no gaps in the histograms")
    t.check(st["hist"]["behind_s"] < 5, "the histograms are fed within seconds (%.3f s behind)"
            % st["hist"]["behind_s"])
    t.check("histograms: r=1" in d.ctl("status")[1], "rspctl status shows the histograms")

with t.Rspd("--no-hist") as d:
    rc, _, err = d.ctl("hist", check_rc=False)
    t.check(rc != 0 and "--no-hist" in err, "with --no-hist, rspctl hist says why it has nothing")
    t.check(d.json("status")["hist"] is None, "and status reports histograms off")
