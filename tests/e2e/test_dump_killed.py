"""A temp file left by a `dump -o FILE` that rspd did not finish (issue 40,
finding 7): rspd was killed (SIGKILL) while writing, and its temp file next
to FILE (150 MiB in the probe) stayed for ever: only the dump directory was
cleaned at start.

Known answers: the temp file of a -o dump has a name rspd recognises
(".FILE.rsp-tmp.XXXXXX"); the next rspd removes it at start (and logs it);
and the next dump to that directory removes one left there (and says so in
the log), but never a file that is being written (locked), another user's,
or another name."""
import os
import signal
import subprocess
import tempfile
import time

import rsptest as t

t.need_root()
work = tempfile.mkdtemp(prefix="rsp-killed.")
ddir = os.path.join(work, "dumps")
out = os.path.join(work, "out.perf.data")


def temps():
    return sorted(n for n in os.listdir(work) if n.startswith(".out.perf.data."))


def killed_dump(d):
    """Start dump -o, SIGKILL rspd once its temp file is there; returns the temp's name."""
    p = subprocess.Popen([t.RSPCTL, "--socket", d.socket, "dump", "-o", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and not temps() and p.poll() is None:
        time.sleep(0.001)
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    p.wait(timeout=30)
    d.proc = None
    return temps()


d = t.Rspd("--dump-dir", ddir, "--window", "48M")
d.start()
t.fill_window(d)
left = killed_dump(d)
if not left:
    print("SKIP: the dump finished before rspd could be killed during it")
    raise SystemExit(t.SKIP)
t.check(len(left) == 1 and ".rsp-tmp." in left[0],
        "a killed dump -o left its temp file, with a name rspd knows: %s" % left)
with t.Rspd("--dump-dir", ddir) as d2:
    log = d2.wait_log("left by a dump that did not finish")
    t.check(not temps() and "removed %s/%s" % (work, left[0]) in log,
            "the next rspd removed it at start, and logged it: %s" % temps())
    # One left next to a -o target (as if by a killed rspd), one being
    # written (locked), another user's, another name: the next dump to the
    # directory removes only the first.
    names = {".out.perf.data.rsp-tmp.Ab12Cd": "stale", ".b.perf.data.rsp-tmp.Ef34Gh": "locked",
             ".c.perf.data.rsp-tmp.Ij56Kl": "nobody", ".d.perf.data.Mn78Op": "other"}
    held = None
    for n, how in names.items():
        p = os.path.join(work, n)
        with open(p, "w") as f:
            f.write("x" * 100)
        if how == "nobody":
            os.chown(p, 65534, 65534)
        if how == "locked":
            import fcntl
            held = open(p)
            fcntl.flock(held, fcntl.LOCK_EX)
    d2.ctl("dump", "-o", out)
    t.check(os.path.exists(out), "the next dump -o is written")
    kept = {n: os.path.exists(os.path.join(work, n)) for n in names}
    t.check(not kept[".out.perf.data.rsp-tmp.Ab12Cd"] and all(
        v for n, v in kept.items() if names[n] != "stale"),
            "it removed the stale temp file next to it, and only that (%s)" % kept)
    held.close()
