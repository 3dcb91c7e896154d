"""Block service profile, exact count: O_DIRECT writes + fdatasync on a
private loop device (backed by a file in /dev/shm, so no one else's I/O is
counted). Every request the kernel reports for the device
(/sys/block/loopN/stat delta) must be in rspd's blk_service profile for
that device: observed (issue -> complete), or counted "without an observed
completion" when its completion record never came. Loop completes its
requests from a worker thread, so they are observed here; the real disk,
whose completions come from interrupts, is test_hist_block_disk.py."""
import os
import shutil
import subprocess
import tempfile
import rsptest as t

t.need_root()
if not shutil.which("losetup"):
    print("SKIP: losetup is not installed")
    raise SystemExit(t.SKIP)

WRITES = 400


fd, backing = tempfile.mkstemp(prefix="rsp-hist-loop.", dir="/dev/shm")
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
    if shutil.which("udevadm"):
        subprocess.run(["udevadm", "settle", "--timeout=10"], capture_output=True)
    with t.Rspd("--hist-io-timeout", "1s") as d:
        done0 = t.quiet_stat(name)
        t.wait_fed(d, t.now_s())
        obs0, inc0, open0, _ = t.blk_counts(d, majmin)
        w = t.workload("direct_write", loop, WRITES, "--sync-every", 16)
        done1, inflight, _ = t.block_stat(name)
        t.check(inflight == 0, "nothing in flight on %s after the workload" % name)
        # Past the io timeout: anything issued and not seen completing has expired.
        t.wait_fed(d, t.now_s() + 1.5)
        obs1, inc1, open1, h = t.blk_counts(d, majmin)
        kernel = done1 - done0
        mine = (obs1 - obs0) + (inc1 - inc0)
        print("   kernel: %d requests; rspd: %d observed, %d without completion, %d open"
              % (kernel, obs1 - obs0, inc1 - inc0, open1))
        t.check(kernel >= WRITES, "the kernel counted at least the %d writes (%d)"
                % (WRITES, kernel))
        t.check(open1 == 0, "no request still open after the timeout")
        t.check(mine == kernel, "observed + without completion (%d) == the kernel's "
                "request count (%d)" % (mine, kernel))
        t.check(obs1 - obs0 > 0, "the blk_service profile of %s is not empty" % majmin)
        prof = [p for p in h["profiles"] if p["subject"]["kind"] == "system"][0]
        t.check(sum(b["count"] for b in prof["buckets"]) == prof["count"],
                "bucket counts add up to the profile's count")
        t.check(prof["op_label"] == "blk_service:" + name, "the op is labelled with the "
                "device's name (%s)" % prof["op_label"])
        # The writes were issued in the workload's context: its own profile.
        mine = d.json("hist", "--pid", str(w["pid"]), "--op", "blk_service:" + name)
        t.check(len(mine["profiles"]) == 1 and mine["profiles"][0]["count"] > 0,
                "process %d has its own blk_service profile" % w["pid"])
        t.check(mine["profiles"][0]["count"] <= w["writes"] + w["syncs"],
                "and it holds no more than the requests it made (%d)"
                % mine["profiles"][0]["count"])
finally:
    if loop:
        subprocess.run(["losetup", "--detach", loop])
    os.unlink(backing)
