"""rspctl stopwatch, keyed pair (systemtap's "timing items through queues"):
from block:block_rq_issue to block:block_rq_complete of the same request,
matched by dev and sector, on a private loop device (backed by a file in
/dev/shm, so no one else's I/O is counted; --where dev=N keeps the other
disks' requests out); then the issue's pair, block_rq_insert ->
block_rq_complete, on the same device switched to mq-deadline.

Known answer: O_DIRECT writes + fdatasync, as test_hist_block_loop: every
request the kernel counts for the device (/sys/block/loopN/stat delta) is
timed by the stopwatch once, none unmatched, and the count equals rspd's
own blk_service profile of the device (issue -> complete, from the
window's records) over the same writes. Bad pairs (no such event, no such
field) are refused with one sentence each."""
import os
import shutil
import subprocess
import tempfile
import rsptest as t

t.need_root()
if os.environ.get("RSP_TEST_CAPTURE") == "bpf":
    print("SKIP: stopwatches have their own BPF programs, whatever the capture backend; "
          "tested in e2e.test_stopwatch_pair")
    raise SystemExit(t.SKIP)
if not shutil.which("losetup"):
    print("SKIP: losetup is not installed")
    raise SystemExit(t.SKIP)

WRITES = 200


def blk_count(d, majmin):
    """Requests rspd saw reach the device: observed and without completion."""
    obs, inc, _, _ = t.blk_counts(d, majmin)
    return obs + inc


def one_sentence(err):
    err = err.strip()
    return err.startswith("rspctl:") and "\n" not in err


def blk_queue_count(d, majmin):
    h = d.json("hist", "--op", "blk_queue:" + majmin)
    return sum(p["count"] for p in h["profiles"] if p["subject"]["kind"] == "system")


def insert_to_complete(d, name, majmin, kdev):
    """The issue's pair: block insert -> complete, which is queue + service.
    A loop device has no I/O scheduler ("none": requests go to the driver
    without an insert event); with mq-deadline each request is inserted.
    Known answer: the stopwatch times as many requests as rspd's blk_queue
    profile of the device (insert -> issue, from the window's records) over
    the same writes, at least the writes, none unmatched."""
    sched = "/sys/block/%s/queue/scheduler" % name
    try:
        with open(sched, "w") as f:
            f.write("mq-deadline")
    except OSError as e:
        print("   (insert -> complete not tested: cannot set mq-deadline on %s: %s)" % (name, e))
        return
    pair = ["stopwatch", "add", "--start", "block:block_rq_insert", "--end",
            "block:block_rq_complete", "--key", "dev,sector", "--where", "dev=%d" % kdev,
            "--name", "queued"]
    # io ends at block_rq_complete too: the two pairs share its attachment
    d.ctl(*pair)
    io0 = d.json("stopwatch", "show", "io")["stopwatches"][0]["count"]
    t.quiet_stat(name)
    t.wait_fed(d, t.now_s())
    q0, serv0 = blk_queue_count(d, majmin), blk_count(d, majmin)
    t.workload("direct_write", "/dev/" + name, WRITES, "--sync-every", 16)
    t.wait_fed(d, t.now_s() + 1.5)
    s = d.json("stopwatch", "show", "queued")["stopwatches"][0]
    q = blk_queue_count(d, majmin) - q0
    print("   insert -> complete: stopwatch %d, blk_queue profile %d" % (s["count"], q))
    # The profile may miss a request the stopwatch times: a request can be
    # inserted or dispatched from the previous one's completion interrupt
    # (the flush machinery, mq-deadline running its queue), and this kernel
    # does not deliver perf tracepoint samples fired in an interrupt on an
    # idle CPU (the stopwatch's BPF programs do see them).
    # Seen once in CI under ASan (200 against 199).
    t.check(s["count"] >= WRITES and q <= s["count"] <= q + 2,
            "insert -> complete (mq-deadline): the stopwatch timed as many requests as "
            "rspd's blk_queue profile (up to 2 issued from an interrupt), at least the "
            "writes (%d, %d)" % (s["count"], q))
    t.check(s["unmatched"] == 0 and s["overflow"] == 0 and s["min_ns"] > 0,
            "insert -> complete: none unmatched, every duration > 0")
    io = d.json("stopwatch", "show", "io")["stopwatches"][0]
    serv = blk_count(d, majmin) - serv0
    # every request is issued; the flushes of fdatasync are never inserted
    t.check(io["count"] - io0 == serv and serv >= s["count"] and io["unmatched"] == 0,
            "meanwhile issue -> complete, ending at the same tracepoint, timed as many as "
            "the blk_service profile (%d == %d, of which %d inserted)"
            % (io["count"] - io0, serv, s["count"]))
    d.ctl("stopwatch", "rm", "queued")
    t.workload("direct_write", "/dev/" + name, 16, "--sync-every", 16)
    t.wait_fed(d, t.now_s() + 1.5)
    io2 = d.json("stopwatch", "show", "io")["stopwatches"][0]["count"]
    t.check(io2 - io["count"] >= 16, "after rm of the other pair, io still times (%d)"
            % (io2 - io["count"]))


fd, backing = tempfile.mkstemp(prefix="rsp-sw-loop.", dir="/dev/shm")
os.ftruncate(fd, 64 << 20)
os.close(fd)
loop = None
try:
    p = subprocess.run(["losetup", "--find", "--show", backing], capture_output=True, text=True)
    if p.returncode != 0:
        print("SKIP: cannot set up a loop device: " + p.stderr.strip())
        raise SystemExit(t.SKIP)
    loop = p.stdout.strip()
    name = os.path.basename(loop)
    with open("/sys/block/%s/dev" % name) as f:
        majmin = f.read().strip()
    major, minor = (int(x) for x in majmin.split(":"))
    kdev = (major << 20) | minor  # the kernel's dev_t, as block tracepoints carry it
    if shutil.which("udevadm"):
        subprocess.run(["udevadm", "settle", "--timeout=10"], capture_output=True)
    with t.Rspd("--hist-io-timeout", "1s") as d:
        d.ctl("stopwatch", "add", "--start", "block:block_rq_issue", "--end",
              "block:block_rq_complete", "--key", "dev,sector", "--where", "dev=%d" % kdev,
              "--name", "io")
        done0 = t.quiet_stat(name)
        t.wait_fed(d, t.now_s())
        prof0 = blk_count(d, majmin)
        sw0 = d.json("stopwatch", "show", "io")["stopwatches"][0]["count"]
        t.workload("direct_write", loop, WRITES, "--sync-every", 16)
        done1, inflight, _ = t.block_stat(name)
        t.check(inflight == 0, "nothing in flight on %s after the workload" % name)
        t.wait_fed(d, t.now_s() + 1.5)
        prof1 = blk_count(d, majmin)
        s = d.json("stopwatch", "show", "io")["stopwatches"][0]
        kernel, sw, prof = done1 - done0, s["count"] - sw0, prof1 - prof0
        print("   kernel: %d requests; stopwatch: %d; blk_service profile: %d"
              % (kernel, sw, prof))
        t.check(kernel >= WRITES, "the kernel counted at least the %d writes (%d)"
                % (WRITES, kernel))
        t.check(sw == kernel, "the stopwatch timed every request once (%d == %d)"
                % (sw, kernel))
        t.check(sw == prof, "and as many as rspd's blk_service profile of %s (%d)"
                % (majmin, prof))
        t.check(s["unmatched"] == 0 and s["overflow"] == 0 and s["min_ns"] > 0,
                "none unmatched or overflowed, every duration > 0")
        _, out, _ = d.ctl("stopwatch", "show", "io")
        print(out)
        for args, what in ((["--start", "block:no_such_event"], "no tracepoint"),
                           # a name, not a path into tracefs
                           (["--start", "../block:block_rq_issue"], "no tracepoint"),
                           (["--key", "no_such_field"], "has no field"),
                           (["--key", "rwbs"], "not a number")):
            base = {"--start": "block:block_rq_issue", "--end": "block:block_rq_complete",
                    "--key": "dev,sector"}
            base[args[0]] = args[1]
            rc, _, err = d.ctl("stopwatch", "add", *sum(base.items(), ()), check_rc=False)
            t.check(rc != 0 and one_sentence(err) and what in err,
                    "bad pair %s: one sentence: %s" % (" ".join(args), err.strip()))
        insert_to_complete(d, name, majmin, kdev)
finally:
    if loop:
        subprocess.run(["losetup", "--detach", loop])
    os.unlink(backing)
print("PASS")
