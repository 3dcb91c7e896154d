"""Block service profile on the real disk, and the kernel quirk.

O_DIRECT writes + fdatasync on a file on the root disk. This kernel sends
no block_rq_complete when the disk interrupt hits an idle CPU, so rspd
cannot observe every completion; it counts each issued request whose
completion never came as "without an observed completion" once it expires
(--hist-io-timeout). The known answer holds either way:

    observed + without completion == the kernel's request count
                                     (/sys/block/DEV/stat delta)

1. With a spinner: a thread keeps the CPU that takes the disk interrupt
   busy (found through /proc/irq/*/ and effective_affinity_list), and the
   writer runs on that CPU too, so completions arrive on a busy CPU and
   are emitted: the profile must hold most of the writes.
2. Idle: no spinner; completions that hit an idle CPU are missing, and the
   count above must still be exact (the honest count).

The disk is shared with everything else on the machine, so the deltas are
taken between quiet points: moments when the disk has nothing in flight,
completes nothing for longer than the io timeout, and rspd has been fed
past it with nothing left open. Between two quiet points every request
issued also completed, so issues (what rspd counts) equal completions
(what the kernel counts). Cache flushes are not requests rsp sees (see
rsptest.block_stat). Someone else's I/O during a phase can still break the
count, because the kernel does not count every request its tracepoints show
(a data write inside a flush sequence, e.g. a journal commit with a
preflush, is traced but not accounted): a phase during which foreign I/O
shows (reads, write merges or discards; the workload makes none) is run
again, up to five times, and so is a phase whose counts differ (foreign
writes that merge nothing leave no sign in the stat): the last attempt's
counts must be equal. If the disk is never quiet for long enough (a busy
shared machine), the test is skipped, not passed.
"""
import glob
import os
import tempfile
import rsptest as t

t.need_root()
WRITES = 300
TIMEOUT = 1.0     # --hist-io-timeout
QUIET_FOR = 1.4   # longer than the timeout: everything open has expired
BUDGET = 180      # seconds to wait for a quiet disk

tmpdir = tempfile.mkdtemp(prefix="rsp-hist-disk.", dir="/var/tmp")
path = os.path.join(tmpdir, "data")
name, majmin = t.disk_of(tmpdir)


def irq_cpu(disk):
    """The CPU that takes @disk's interrupts (virtio: /proc/irq/N/virtioK-req.*)."""
    dev = os.path.basename(os.path.realpath("/sys/block/%s/device" % disk))
    for d in glob.glob("/proc/irq/*/"):
        handlers = [h for h in os.listdir(d) if h.startswith(dev + "-") and "config" not in h]
        if not handlers:
            continue
        with open(os.path.join(d, "effective_affinity_list")) as f:
            first = f.read().strip().split(",")[0].split("-")[0]
        if first:
            return int(first), handlers[0]
    return None, None


def blk_counts(d):
    h = d.json("hist", "--op", "blk_service:" + majmin)
    for p in h["profiles"]:
        if p["subject"]["kind"] == "system":
            return p["count"], p["incomplete"], p["open"]
    return 0, 0, 0


def quiet_point(d):
    """(kernel's requests, rspd's observed, without completion, raw stat) at a quiet moment."""
    deadline = t.now_s() + BUDGET
    while t.now_s() < deadline:
        a = t.block_stat(name)
        if a[1]:
            t.time.sleep(0.05)
            continue
        t.time.sleep(QUIET_FOR)
        if t.block_stat(name)[2] != a[2]:
            continue
        t.wait_fed(d, t.now_s())
        obs, inc, opn = blk_counts(d)
        if opn == 0 and t.block_stat(name)[2] == a[2]:
            return a[0], obs, inc, a[2]
    print("SKIP: %s was never quiet for %.1f s within %d s (a busy shared machine)"
          % (name, QUIET_FOR, BUDGET))
    raise SystemExit(t.SKIP)


def foreign(v0, v1):
    """Signs of someone else's I/O between two raw stat readings."""
    d = [b - a for a, b in zip(v0, v1)]
    return d[0] or d[5] or (len(d) > 11 and d[11])


def phase(d, label, *args):
    for attempt in range(5):
        k0, o0, i0, v0 = quiet_point(d)
        w = t.workload("direct_write", path, WRITES, "--sync-every", 16, *args)
        k1, o1, i1, v1 = quiet_point(d)
        if foreign(v0, v1):
            print("   %s: someone else's I/O during the phase (%s); again" % (
                label, [b - a for a, b in zip(v0, v1)]))
            continue
        kernel, obs, inc = k1 - k0, o1 - o0, i1 - i0
        if obs + inc == kernel or attempt == 4:
            break
        # Foreign writes that merge nothing leave no sign in the stat; a
        # count that is off once is run again, one that stays off fails.
        print("   %s: kernel %d requests, rspd %d + %d: someone else's I/O the stat "
              "does not show?; again" % (label, kernel, obs, inc))
    else:
        print("SKIP: %s was never free of foreign I/O for a whole phase" % name)
        raise SystemExit(t.SKIP)
    print("   %s: %d flushes besides (not requests rsp sees)" % (label, v1[15] - v0[15]))
    print("   %s: kernel %d requests; rspd %d observed + %d without an observed completion"
          % (label, kernel, obs, inc))
    t.check(kernel >= WRITES, "%s: the kernel counted at least the %d writes" % (label, WRITES))
    t.check(obs + inc == kernel, "%s: observed + without completion (%d) == the kernel's "
            "count (%d)" % (label, obs + inc, kernel))
    return w, kernel, obs, inc


try:
    cpu, handler = irq_cpu(name)
    with t.Rspd("--hist-io-timeout", "%gs" % TIMEOUT) as d:
        if cpu is None:
            print("   no interrupt found for %s: the spinner phase is left out" % name)
        else:
            print("   %s interrupts (%s) go to CPU %d" % (name, handler, cpu))
            w, kernel, obs, inc = phase(d, "spinner", "--cpu", cpu, "--spin", cpu)
            t.check(obs >= WRITES // 2, "spinner: most completions observed (%d of %d)"
                    % (obs, kernel))
            h = d.json("hist", "--op", "blk_service:" + majmin)
            sysp = [p for p in h["profiles"] if p["subject"]["kind"] == "system"][0]
            t.check(sysp["count"] > 0 and sysp["buckets"], "the service profile is not empty")
        w, kernel, obs, inc = phase(d, "idle")
        print("   idle: %.0f%% of the completions were not emitted by the kernel"
              % (100.0 * inc / kernel))
        out = d.ctl("hist", "--op", "blk_service:" + majmin)[1]
        total_inc = blk_counts(d)[1]
        if total_inc:
            t.check("requests without an observed completion" in out,
                    "the text output says how many completions were not observed")
finally:
    if os.path.exists(path):
        os.unlink(path)
    os.rmdir(tmpdir)
