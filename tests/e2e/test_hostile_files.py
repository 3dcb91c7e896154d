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
    # A damaged baseline: one sentence naming the file and what is wrong.
    # (Profiles with buckets first: a fresh rspd may have none yet.)
    deadline = time.time() + 30
    while time.time() < deadline:
        d.ctl("hist", "--save", save)
        base = json.load(open(save))
        if any(p["buckets"] for p in base["profiles"]):
            break
        time.sleep(0.5)
    t.check(any(p["buckets"] for p in base["profiles"]), "rspd has profiles to save")
    for prof in base["profiles"]:
        prof["buckets"] = [b["count"] for b in prof["buckets"]]
    bad = os.path.join(work, "bad.json")
    json.dump(base, open(bad, "w"))
    rc, _, err = d.ctl("hist", "--diff", bad, check_rc=False)
    t.check(rc == 1 and bad in err and "bucket entry 1 is not an object" in err,
            "hist --diff on buckets that are not objects names the file: " + err.strip())
    # A pid that does not exist: every command fails the same way.
    gone = 4194000
    while os.path.exists("/proc/%d" % gone):
        gone -= 1
    for cmd in (["status", "--pid"], ["top", "--pid"], ["net", "--pid"], ["graph", "--pid"],
                ["snapshot"], ["hist", "--pid"]):
        rc, out, err = d.ctl(*(cmd + [str(gone)]), check_rc=False)
        t.check(rc == 1 and str(gone) in err and ("no thread in the window" in err or
                                                   "no profile of process" in err
                                                   or "did nothing" in err),
                "%s of a pid that does not exist: exit %d, %s" % (cmd[0], rc, err.strip()))

# --- rspd --socket: only a socket nobody answers on is ever removed ----------------
empty_conf = os.path.join(work, "empty.conf")
open(empty_conf, "w").close()
for name, make, what in (("reg", lambda p: open(p, "w").write("precious\n"), "a regular file"),
                         ("dir", lambda p: os.mkdir(p), "a directory")):
    path = os.path.join(work, "sock-" + name)
    make(path)
    p = t.run([t.RSPD, "--foreground", "--socket", path, "--config", empty_conf], timeout=QUICK)
    t.check(p.returncode == 1 and ("%s is %s, not a socket" % (path, what)) in p.stderr,
            "rspd --socket on %s refuses it: %s" % (what, p.stderr.strip().splitlines()[-1]
                                                    if p.stderr.strip() else ""))
    t.check(kind(path) == name and (name != "reg" or open(path).read() == "precious\n"),
            "the %s at the socket path is left as it was" % what)

# A stale socket (bound, nobody listening) is still taken over.
stale = t.Rspd()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(stale.socket)
s.close()
with stale as d:
    t.check(d.ctl("status")[0] == 0, "a stale socket nobody answers on is replaced")
    sock_path = d.socket
    # Replaced by a file while rspd runs: rspd does not remove that file at exit.
    os.rename(sock_path, sock_path + ".moved")
    open(sock_path, "w").write("precious\n")
t.check(kind(sock_path) == "reg", "at exit rspd removes only its own socket, not a file "
        "put at its path")

# --- what a killed dump left: removed by the next rspd; retention counts dumps being written --
ddir = os.path.join(work, "dumps")
os.mkdir(ddir, 0o700)
host = os.uname().nodename
stale_tmp = ".rsp-%s-20250101T000000.000Z.perf.data.Ab12Cd" % host
others = {
    stale_tmp: "stale",                                                # a killed dump's: removed
    ".rsp-%s-20250101T000001.000Z.perf.data.Ef34Gh" % host: "dir",     # not a file: kept
    ".rsp-%s-20250101T000002.000Z.perf.data.Ij56Kl" % host: "nobody",  # not rspd's: kept
    ".rsp-%s-20250101T000003.000Z.perf.data.Mn78Op" % host: "locked",  # being written: kept
    ".notes.Qr90St": "other",                                          # not the pattern: kept
}
held = None
for n, how in others.items():
    p = os.path.join(ddir, n)
    if how == "dir":
        os.mkdir(p)
        continue
    with open(p, "w") as f:
        f.write("x" * 100)
    if how == "nobody":
        os.chown(p, 65534, 65534)
    if how == "locked":
        # A dump another writer holds, of 1 GiB (apparent size).
        os.truncate(p, 1 << 30)
        held = open(p, "r")
        fcntl.flock(held, fcntl.LOCK_EX)

with t.Rspd("--dump-dir", ddir, "--dump-keep", "10", "--dump-max-bytes", "1G") as d:
    log = d.wait_log("left by a dump that did not finish")
    t.check(not os.path.exists(os.path.join(ddir, stale_tmp)) and
            "removed %s/%s" % (ddir, stale_tmp) in log,
            "rspd removes a stale temp file a killed dump left, and logs it")
    t.check(all(os.path.lexists(os.path.join(ddir, n)) for n, how in others.items()
                if how != "stale"),
            "it keeps what is not its own stale temp file (a directory, another user's file, "
            "a file being written, another name)")
    # The 1 GiB being written counts against --dump-max-bytes 1G.
    first = json.loads(d.ctl("dump", "--json")[1])["path"]
    second = json.loads(d.ctl("dump", "--json")[1])["path"]
    t.check(os.path.exists(second) and not os.path.exists(first),
            "retention counts a dump still being written: the older dump went")
held.close()

# --- rspctl and a server that accepts and never answers ---------------------------------------
mute = os.path.join(work, "mute.sock")
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(mute)
srv.listen(8)
conns = []
threading.Thread(target=lambda: [conns.append(srv.accept()) for _ in range(4)],
                 daemon=True).start()
t0 = time.time()
p = t.run([t.RSPCTL, "--socket", mute, "--timeout", "1s", "status"], timeout=QUICK)
t.check(p.returncode == 1 and "within 1s" in p.stderr and "--timeout" in p.stderr
        and time.time() - t0 < 10, "rspctl gives up on a mute server after --timeout: "
        + p.stderr.strip())
p = t.run([t.RSPCTL, "--socket", mute, "--timeout", "soon", "status"], timeout=QUICK)
t.check(p.returncode == 2 and "--timeout wants a duration" in p.stderr, "a bad --timeout is named")
srv.close()
shutil.rmtree(work)
