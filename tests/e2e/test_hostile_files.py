"""A careless or hostile user's paths (issue 15): rspd and rspctl destroy no
file that is not theirs to replace, leave no temp file behind a killed dump,
never hang on a FIFO or on a server that does not answer, and say in one
sentence what is wrong, with a non-zero exit, where a pid does not exist."""
import fcntl
import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
import rsptest as t

t.need_root()
work = tempfile.mkdtemp(prefix="rsp-hostile.")
QUICK = 20  # seconds: what used to hang now fails well within this


def kind(path):
    try:
        m = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    for name, test in (("reg", stat.S_ISREG), ("dir", stat.S_ISDIR), ("fifo", stat.S_ISFIFO),
                       ("chr", stat.S_ISCHR), ("lnk", stat.S_ISLNK), ("sock", stat.S_ISSOCK)):
        if test(m):
            return name
    return "other"


fifo, dev, link, victim, reg = (os.path.join(work, n) for n in
                                ("fifo", "null", "link", "victim", "reg.perf.data"))
os.mkfifo(fifo)
os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # another /dev/null
open(victim, "w").write("victim\n")
os.symlink(victim, link)
open(reg, "w").write("old\n")


def files(d):
    """Files rspd and rspctl write: a new file or a regular one, nothing else;
    files they read: regular files, never waited on."""
    for path, k, what in ((dev, "chr", "a character device"), (fifo, "fifo", "a FIFO"),
                          (link, "lnk", "a symbolic link")):
        rc, _, err = d.ctl("dump", "-o", path, check_rc=False)
        t.check(rc == 1 and ("%s is %s, not a regular file" % (path, what)) in err,
                "dump -o on %s is refused: %s" % (what, err.strip()))
        t.check(kind(path) == k, "... and %s is left as it was" % what)
    t.check(open(victim).read() == "victim\n", "the link's target is untouched")
    rc, out, err = d.ctl("dump", "-o", reg, check_rc=False)
    with open(reg, "rb") as f:
        t.check(rc == 0 and f.read(8) == b"PERFILE2",
                "dump -o on an existing regular file replaces it: " + err.strip())
    dots = [n for n in os.listdir(work) if n.startswith(".")]
    t.check(not dots, "no temp file is left next to -o targets %s" % dots)

    # rspctl's own files: hist --save, snapshot --folded.
    rc, _, err = d.ctl("hist", "--save", fifo, check_rc=False)
    t.check(rc == 1 and "is a FIFO, not a regular file" in err and kind(fifo) == "fifo",
            "hist --save on a FIFO is refused, the FIFO left: " + err.strip())
    rc, _, err = d.ctl("snapshot", str(os.getpid()), "--folded", dev, check_rc=False)
    t.check(rc == 2 and "is a character device, not a regular file" in err and kind(dev) == "chr",
            "snapshot --folded on a device is refused before asking: " + err.strip())
    save = os.path.join(work, "save.json")
    d.ctl("hist", "--save", save)
    t.check(stat.S_IMODE(os.stat(save).st_mode) == 0o600, "hist --save writes 0600")

    # Reading a FIFO fails at once (it used to block in open()).
    p = t.run([t.RSPCTL, "--socket", d.socket, "hist", "--diff", fifo], timeout=QUICK)
    t.check(p.returncode == 1 and "is a FIFO, not a regular file" in p.stderr,
            "hist --diff FIFO fails at once: " + p.stderr.strip())
    p = t.run([t.RSPCTL, "analyze", fifo, "status"], timeout=QUICK)
    t.check(p.returncode == 1 and "is a FIFO, not a regular file" in p.stderr,
            "analyze FIFO fails at once: " + p.stderr.strip())
    return save


with t.Rspd() as d:
    save = files(d)
shutil.rmtree(work)
