"""A careless or hostile configuration (issue 15): every value that passes
--check-config also starts rspd, and a file that is not a text file of
sensible size is refused with one sentence, never read forever.

  - a directory, a FIFO, /dev/zero, a file of NUL bytes, a NUL inside a
    line, a file over the size limit: --check-config refuses each at once
    (it used to call a directory valid and hang on the FIFO and /dev/zero);
  - the same files put in place of the configuration of a running rspd and
    SIGHUP: the reload is refused, the configuration in force is kept,
    capture goes on and SIGTERM still stops rspd;
  - a configuration on a file system that never answers a read (a FUSE
    server written here): the reload waits on its own thread, capture goes
    on, a second SIGHUP and a read over 10 s are logged, SIGTERM stops rspd;
  - numbers are decimal (--freq 010 is 10 Hz, not octal 8);
  - options that passed --check-config and then failed at start, or did
    nothing: families that record no event (libperf: "Miscounted
    nr_mmaps"), a window larger than the machine's memory or with chunks
    too small for --dwarf-stack, rings larger than the kernel delivers
    into; a uprobe list libc defines none of is
    named in the warning (it was "uprobe: " and nothing)."""
import ctypes
import errno
import os
import signal
import struct
import subprocess
import tempfile
import threading
import time
import rsptest as t

t.need_root()
tmp = tempfile.mkdtemp(prefix="rsptest.hostile.")


def check_config(path, timeout=10):
    try:
        return t.run([t.RSPD, "--check-config", "--config", path], timeout=timeout)
    except subprocess.TimeoutExpired:
        t.fail("rspd --check-config --config %s did not return within %d s" % (path, timeout))


def conf(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


fifo = os.path.join(tmp, "fifo")
os.mkfifo(fifo)
refused = [  # what it is, the file, what the one sentence says after the path
    ("a directory", tmp, " is a directory"),
    ("a FIFO", fifo, " is a FIFO"),
    ("/dev/zero", "/dev/zero", " is a character device"),
    ("NUL bytes", conf("zeros.conf", b"\0" * 4096), ":1: a NUL byte at column 1;"),
    ("a NUL in a line", conf("nul.conf", b"[capture]\n# a comment\nfreq = 1\0 0\n"),
     ":3: a NUL byte at column 9;"),
    ("1.1 MB", conf("big.conf", b"# padding\n" * 110000),
     " has 1100000 bytes, more than the 1048576 a configuration may have"),
]
for label, path, what in refused:
    p = check_config(path)
    err = p.stderr.strip()
    t.check(p.returncode == 1 and (path + what) in err and err.count("\n") == 0,
            "--check-config refuses %s: %s" % (label, err.replace(tmp + "/", "")))
p = check_config(conf("ok.conf", b"[capture]\nfreq = 50\n"))
t.check(p.returncode == 0, "a text file still passes: " + p.stdout.strip())
# A relative --config is made absolute: rspd detaches into /, where a
# SIGHUP would otherwise read another file.
p = t.run([t.RSPD, "--check-config", "--config", "ok.conf"], cwd=tmp)
t.check(p.returncode == 0 and "valid (%s/ok.conf)" % tmp in p.stdout,
        "a relative --config is kept as an absolute path: " + p.stdout.strip())


# Values that --check-config took and a start then refused, or worse.
with open("/proc/meminfo") as f:
    mem_g = int(f.readline().split()[1]) >> 20  # MemTotal, kB -> GiB
for args, what in (
        (["--families", "libc", "--uprobes", "none"],
         "families libc record no event (sample needs --freq above 0, libc needs --uprobes)"),
        (["--families", "sample", "--freq", "0"], "families sample record no event"),
        (["--window", "%dG" % (2 * mem_g + 2)], "need more than this machine's memory"),
        (["--ring-pages", "1048576"], "want a power of two from 1 to 262144"),
        (["--families", ","], "the list names no family"),
        (["--window", "1M", "--dwarf-stack", "65528", "--families", "all"],
         "cannot hold a sample with a 65528-byte user stack")):
    p = t.run([t.RSPD, "--check-config", "--config", conf("empty.conf", b"")] + args)
    err = p.stderr.strip().splitlines()[0] if p.stderr.strip() else ""
    t.check(p.returncode in (1, 2) and what in err,
            "--check-config %s is refused: %s" % (" ".join(args), err))

# An event set left empty at start (no function of the list in libc): one
# sentence that says why, not libperf's "Miscounted nr_mmaps 0 vs 1".
p = t.run([t.RSPD, "--foreground", "--config", conf("empty.conf", b""), "--socket",
           os.path.join(tmp, "never.sock"), "--families", "libc", "--uprobes", "rsp_no_such_fn"]
          + t.backend_args([], ""), timeout=60)
t.check(p.returncode == 1 and "none of the events of --families could be opened (uprobe: no "
        "function of --uprobes is in " in p.stderr and "rsp_no_such_fn" in p.stderr
        and "Miscounted" not in p.stderr, "an empty event set at start: " +
        ([l for l in p.stderr.splitlines() if "error:" in l] or [p.stderr])[-1].split("error: ")[-1])
with t.Rspd("--families", "sched,libc", "--uprobes", "rsp_no_such_fn") as d:
    line = [l for l in d.read_log().splitlines() if "warning: uprobe:" in l]
    t.check(line and "no function of --uprobes is in" in line[0] and "rsp_no_such_fn" in line[0],
            "the uprobe warning says why: %s" % (line[0] if line else d.read_log()))


def wait_more(d, text, n, timeout=5):
    """Wait until the log has more than n lines with text; returns the last one."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        lines = [l for l in d.read_log().splitlines() if text in l]
        if len(lines) > n:
            return lines[-1]
        time.sleep(0.05)
    t.fail("no new %r in rspd's log after %d s: %s" % (text, timeout, d.read_log()[-2000:]))


def count(d, text):
    return d.read_log().count(text)


def records(d):
    return d.json("status")["records"]


def capturing(d, what):
    """Capture goes on: the record count grows."""
    before = records(d)
    deadline = time.time() + 10
    while time.time() < deadline and records(d) <= before:
        time.sleep(0.2)
    t.check(records(d) > before, "capture goes on after the reload of %s" % what)


# A running rspd whose file becomes each of these, then SIGHUP.
with t.Rspd("--freq", "010", "--stacks", "sampled:010", config="[daemon]\nlog-level = debug\n") as d:
    cfg = d.json("status")["config"]
    t.check(cfg["sample_freq_hz"] == 10, "--freq 010 is 10 Hz (decimal, not octal)")
    t.check(cfg["stacks"] == "sampled:10", "--stacks sampled:010 is one in 10: " + cfg["stacks"])
    for label, src, what in refused:
        os.unlink(d.config)
        if os.path.isdir(src):
            os.mkdir(d.config)
        elif src == fifo:
            os.mkfifo(d.config)
        else:
            os.symlink(src, d.config)
        n = count(d, "keeping the configuration in force")
        d.signal(signal.SIGHUP)
        line = wait_more(d, "keeping the configuration in force", n)
        t.check((d.config + what) in line, "reload refused: " + line.split("error: ")[-1].replace(tmp + "/", ""))
        capturing(d, label)
        n = count(d, "client pid")
        d.ctl("status")
        t.check("client pid" in wait_more(d, "client pid", n),
                "log-level = debug is still in force (not reset to the default)")
        if os.path.isdir(d.config):
            os.rmdir(d.config)
        else:
            os.unlink(d.config)
        d.write_config("[daemon]\nlog-level = debug\n")
    # A start that records is not reported as one that records nothing (the
    # check runs once, 5 s after start: a ring that never delivers says so).
    while d.json("status")["uptime_s"] < 6.5:
        time.sleep(0.2)
    st = d.json("status")
    t.check(st["capture_problem"] is None and "no record reached the rings" not in d.read_log(),
            "after %.1f s of %d records, no capture problem is reported" % (st["uptime_s"], st["records"]))
    # SIGTERM still stops it, with the FIFO in place.
    os.unlink(d.config)
    os.mkfifo(d.config)
    n = count(d, "keeping the configuration in force")
    d.signal(signal.SIGHUP)
    wait_more(d, "keeping the configuration in force", n)
    d.signal(signal.SIGTERM)
    try:
        d.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        t.fail("rspd ignored SIGTERM after a reload of a FIFO: " + d.read_log())
    t.check(d.proc.returncode == 0, "SIGTERM stops rspd after a reload of a FIFO")
    d.proc = None

# A configuration on a file system that does not answer (a FUSE server that
# never replies to READ): the reload thread waits, capture and SIGTERM do not.
FUSE_LOOKUP, FUSE_GETATTR, FUSE_OPEN, FUSE_READ = 1, 3, 14, 15
FUSE_INIT, FUSE_INTERRUPT = 26, 36
NO_REPLY = (2, 36, 38, 42)  # FORGET, INTERRUPT, DESTROY, BATCH_FORGET


class HungFs:
    """/dev/fuse served by hand: one file, rspd.conf, whose reads never end
    (unless interrupted, as FUSE servers must allow)."""

    def __init__(self):
        self.mnt = tempfile.mkdtemp(prefix="rsptest.fuse.")
        self.path = os.path.join(self.mnt, "rspd.conf")
        self.fd = os.open("/dev/fuse", os.O_RDWR)
        libc = ctypes.CDLL(None, use_errno=True)
        opts = "fd=%d,rootmode=40000,user_id=0,group_id=0" % self.fd
        if libc.mount(b"rsptest", self.mnt.encode(), b"fuse", 6, opts.encode()):  # nosuid,nodev
            raise OSError(ctypes.get_errno(), "mount fuse")
        self.reads = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def reply(self, unique, err=0, body=b""):
        os.write(self.fd, struct.pack("<IiQ", 16 + len(body), err, unique) + body)

    @staticmethod
    def attr(ino):
        mode = 0o40755 if ino == 1 else 0o100644
        return struct.pack("<QQQQQQIIIIIIIIII", ino, 64, 1, 0, 0, 0, 0, 0, 0, mode, 1, 0, 0, 0,
                           4096, 0)

    def serve(self):
        while True:
            try:
                msg = os.read(self.fd, 1 << 17)
            except OSError:
                return  # unmounted
            _, op, unique, node = struct.unpack_from("<IIQQ", msg)
            body = msg[40:]
            if op == FUSE_INIT:
                self.reply(unique, body=struct.pack("<IIIIHHIIHHII", 7, 31, 0, 0, 0, 0, 4096, 1,
                                                    0, 0, 0, 0) + b"\0" * 24)
            elif op == FUSE_LOOKUP and body.rstrip(b"\0") == b"rspd.conf":
                self.reply(unique, body=struct.pack("<QQQQII", 2, 0, 0, 0, 0, 0) + self.attr(2))
            elif op == FUSE_GETATTR:
                self.reply(unique, body=struct.pack("<QII", 0, 0, 0) + self.attr(node))
            elif op == FUSE_OPEN:
                self.reply(unique, body=struct.pack("<QII", 1, 1, 0))  # FOPEN_DIRECT_IO
            elif op == FUSE_READ:
                self.reads += 1  # never answered
            elif op == FUSE_INTERRUPT:
                self.reply(struct.unpack_from("<Q", body)[0], -errno.EINTR)
            elif op not in NO_REPLY:
                self.reply(unique, -errno.ENOSYS)

    def close(self):
        subprocess.run(["umount", "-l", self.mnt], capture_output=True)
        os.close(self.fd)  # aborts the connection: a read still waiting fails


fs = HungFs()
try:
    with t.Rspd(config="[daemon]\nlog-level = debug\n") as d:
        os.unlink(d.config)
        os.symlink(fs.path, d.config)
        d.signal(signal.SIGHUP)
        deadline = time.time() + 5
        while fs.reads == 0 and time.time() < deadline:
            time.sleep(0.05)
        t.check(fs.reads > 0, "the reload reads a file that never answers")
        capturing(d, "a file that never answers")
        n = count(d, "the previous reload has been reading the file")
        d.signal(signal.SIGHUP)
        t.check("is read again once it ends" in wait_more(d, "the previous reload has been", n),
                "a second SIGHUP says the first is still reading")
        line = wait_more(d, "(a file system that does not answer?)", 0, timeout=15)
        t.check("has taken more than 10 s" in line, "a reload reading for over 10 s is logged")
        d.signal(signal.SIGTERM)
        try:
            d.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            t.fail("rspd ignored SIGTERM while a reload waits for its file: " + d.read_log())
        t.check(d.proc.returncode == 0,
                "SIGTERM stops rspd while a reload waits for its file (exit %d)" % d.proc.returncode)
        d.proc = None
finally:
    fs.close()
