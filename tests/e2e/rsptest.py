"""Helpers for rsp's end-to-end tests: start rspd against the real kernel on
a private socket, ask it questions with rspctl, run workloads.

Each test is a script tests/e2e/test_*.py that ctest runs with the build
tree in RSP_BUILD. A test that needs root and does not have it exits 77,
which ctest reports as skipped (never as passed).
"""
import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("RSP_BUILD", os.path.join(os.path.dirname(__file__), "../../build/release"))
RSPD = os.path.join(BUILD, "daemon", "rspd")
RSPCTL = os.path.join(BUILD, "cli", "rspctl")
WORKLOADS = os.path.join(BUILD, "workloads")
SKIP = 77


def free_port():
    """A TCP port on loopback that nobody listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def need_root():
    if os.geteuid() != 0:
        print("SKIP: this test needs root (perf events, tracefs)")
        sys.exit(SKIP)


# rspd's temporary directories (socket, configuration, log), removed when the
# test passes; kept, for a look at rspd's log, when it fails or RSP_TEST_KEEP
# is set
_dirs = []
_failed = []


def _remove_dirs():
    if not _failed and not os.environ.get("RSP_TEST_KEEP"):
        for d in _dirs:
            shutil.rmtree(d, ignore_errors=True)


def _excepthook(kind, value, tb, _hook=sys.excepthook):
    _failed.append(kind)
    _hook(kind, value, tb)


atexit.register(_remove_dirs)
sys.excepthook = _excepthook


def fail(msg):
    _failed.append(msg)
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def backend_args(args, config):
    """The suite runs once per capture backend: RSP_TEST_CAPTURE=perf (ctest's
    e2e.* tests) or bpf (e2e-bpf.*) starts every rspd with that --capture,
    unless the test chose a backend itself (on the command line or in its
    configuration), or asks for --dwarf stacks, which only the perf backend
    takes (rspd's default, auto, then keeps perf and says why)."""
    backend = os.environ.get("RSP_TEST_CAPTURE", "")
    if not backend or any(a.startswith("--capture") for a in args) or \
            re.search(r"^\s*capture\s*=", config, re.M):
        return []
    if "--dwarf" in args and backend == "bpf":  # DWARF stacks need perf's stack copies
        return []
    return ["--capture", backend]


def budget_args(args, config):
    """The overhead budget off, unless the test sets it: a known answer needs
    the capture it asked for, not one a busy moment (a sanitizer build, a
    switch storm of the test's own) degraded. test_budget tests the budget."""
    if any(a.startswith("--overhead-budget") for a in args) or \
            re.search(r"^\s*overhead-budget\s*=", config, re.M):
        return []
    return ["--overhead-budget", "0"]


class Rspd:
    """rspd in the foreground on a temporary socket; use as a context manager.

    config: the text of a configuration file to give it (by default an empty
    one, so that a configuration installed on the machine cannot change a
    test); env: extra environment variables; rspd: another binary than the
    build's (an installed one).
    """

    def __init__(self, *args, config="", env=None, socket_dir=None, wrap=None, rspd=None):
        self.dir = tempfile.mkdtemp(prefix="rsptest.")
        _dirs.append(self.dir)
        self.socket = os.path.join(socket_dir or self.dir, "rspd.sock")
        self.log = os.path.join(self.dir, "rspd.log")
        self.config = os.path.join(self.dir, "rspd.conf")
        self.write_config(config)
        self.args = list(args)
        self.env = env
        self.wrap = list(wrap or [])  # a command that execs rspd (namespaces, ...)
        self.rspd = rspd or RSPD
        self.proc = None

    def write_config(self, text):
        with open(self.config, "w") as f:
            f.write(text)

    def read_config(self):
        with open(self.config) as f:
            return f.read()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop(check_exit=exc[0] is None)

    def start(self, timeout=30):
        logf = open(self.log, "w")
        env = dict(os.environ)
        env.update(self.env or {})
        self.proc = subprocess.Popen(self.wrap + [self.rspd, "--foreground", "--socket",
                                                  self.socket, "--config", self.config] + self.args
                                     + backend_args(self.args, self.read_config())
                                     + budget_args(self.args, self.read_config()),
                                     stdout=logf, stderr=subprocess.STDOUT, env=env)
        logf.close()
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                fail("rspd exited early (%d): %s" % (self.proc.returncode, self.read_log()))
            if os.path.exists(self.socket) and self.ctl("status", check_rc=False)[0] == 0:
                return
            time.sleep(0.05)
        fail("rspd did not answer within %ds: %s" % (timeout, self.read_log()))

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_log(self, text, timeout=10):
        """Wait until the log contains text; returns the log."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            log = self.read_log()
            if text in log:
                return log
            time.sleep(0.05)
        fail("rspd's log has no %r after %ds: %s" % (text, timeout, self.read_log()))

    def read_log(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, check_exit=True):
        if not self.proc:
            return
        if not check_exit and self.proc.poll() is not None:
            # a test failed and rspd was already gone: that is likely why
            print("rspd had exited (%d) before the test failed: %s"
                  % (self.proc.returncode, self.read_log()[-4000:]))
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                if check_exit:
                    fail("rspd did not stop on SIGINT: " + self.read_log())
        if check_exit and self.proc.returncode != 0:
            fail("rspd exited with %d: %s" % (self.proc.returncode, self.read_log()))
        self.proc = None

    def ctl(self, *args, check_rc=True, user=None):
        """Run rspctl against this rspd (as user, a User, if given);
        returns (rc, stdout, stderr)."""
        cmd = [RSPCTL, "--socket", self.socket] + list(args)
        if user:
            cmd = user.wrap(cmd)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if check_rc and p.returncode != 0:
            fail("rspctl %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
        return p.returncode, p.stdout, p.stderr

    def json(self, *args, user=None):
        _, out, _ = self.ctl(*(list(args) + ["--json"]), user=user)
        return json.loads(out)

    def settle(self, seconds=0.5):
        """Give the capture loop time to drain the rings (flush interval 100 ms)."""
        time.sleep(seconds)


def workload(name, *args, timeout=300):
    """Run a workload program; returns its JSON line as a dict."""
    p = subprocess.run([os.path.join(WORKLOADS, name)] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        fail("workload %s failed (%d): %s" % (name, p.returncode, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])


def run(cmd, **kw):
    # Bytes that are not UTF-8 (perf script prints raw data) become U+FFFD, not an exception.
    return subprocess.run(cmd, capture_output=True, text=True, errors=kw.pop("errors", "replace"),
                          timeout=kw.pop("timeout", 60), **kw)


class Background:
    """Other processes using the disk and a CPU while a test's real program
    runs (issue 14: answers must hold on a machine others use): a writer
    that pwrite()s 256 KiB and fsync()s a file of its own in @directory
    every @interval seconds, and a busy loop. A context manager; .writer
    and .burner are the Popen objects."""

    WRITER = r"""
import os, sys, time
path, stop, pause = sys.argv[1], time.time() + float(sys.argv[2]), float(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
block = b"w" * (256 << 10)
try:
    while time.time() < stop:
        os.pwrite(fd, block, 0)
        os.fsync(fd)
        time.sleep(pause)
finally:
    os.close(fd)
    os.unlink(path)
"""
    BURNER = "import time\nstop = time.time() + float(__import__('sys').argv[1])\n" \
             "while time.time() < stop: pass\n"

    def __init__(self, directory, seconds=120, interval=0.01, burn=True):
        self.path = os.path.join(directory, "rsp-bg-writer.%d" % os.getpid())
        self.args = (seconds, interval, burn)
        self.writer = self.burner = None

    def __enter__(self):
        seconds, interval, burn = self.args
        self.writer = subprocess.Popen([sys.executable, "-c", self.WRITER, self.path,
                                        str(seconds), str(interval)])
        if burn:
            self.burner = subprocess.Popen([sys.executable, "-c", self.BURNER, str(seconds)])
        return self

    def pids(self):
        return [p.pid for p in (self.writer, self.burner) if p]

    def __exit__(self, *exc):
        for p in (self.writer, self.burner):
            if p:
                p.kill()
                p.wait()
        try:
            os.unlink(self.path)
        except OSError:
            pass
        return False


def add_group(name):
    """Create a group for a test (remove it with del_group)."""
    p = run(["groupadd", name])
    if p.returncode != 0:
        fail("groupadd %s: %s" % (name, p.stderr))


def del_group(name):
    run(["groupdel", name])


class User:
    """A real unprivileged user, member of existing groups, made for one test
    with useradd; removed by remove() (use try/finally)."""

    def __init__(self, name, groups=()):
        self.name = name
        self.groups = list(groups)
        cmd = ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
               "--user-group"]
        if self.groups:
            cmd += ["--groups", ",".join(self.groups)]
        p = run(cmd + [name])
        if p.returncode != 0:
            fail("useradd %s: %s" % (name, p.stderr))
        import pwd
        pw = pwd.getpwnam(name)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid

    def wrap(self, cmd):
        """cmd run as this user, with its groups (setpriv, util-linux)."""
        return ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid,
                "--init-groups", "--no-new-privs"] + cmd

    def remove(self):
        run(["userdel", self.name])


# ---- block devices (latency profile tests) -------------------------------------

def disk_of(path):
    """The whole disk holding @path's file system: ("vda", "254:0")."""
    st = os.stat(path)
    majmin = "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    sysdir = os.path.realpath("/sys/dev/block/" + majmin)
    if os.path.exists(os.path.join(sysdir, "partition")):
        sysdir = os.path.dirname(sysdir)
    name = os.path.basename(sysdir)
    with open(os.path.join(sysdir, "dev")) as f:
        return name, f.read().strip()


def block_stat(name):
    """(requests completed: reads + writes + discards, in flight, raw fields).

    Fields (Documentation/block/stat.rst): 0 read I/Os, 4 write I/Os, 5 write
    merges, 8 in flight, 11 discard I/Os, 15 flush I/Os. Cache flushes are
    left out: the kernel counts them in their own field, but a flush request
    reaches no block_rq_issue on this kernel (measured: 20 fdatasync flushes,
    20 in field 15, no extra issue record), so it is no request rsp sees.
    """
    with open("/sys/block/%s/stat" % name) as f:
        v = [int(x) for x in f.read().split()]
    done = v[0] + v[4] + (v[11] if len(v) > 11 else 0)
    return done, v[8], v


def quiet_stat(name, timeout=10):
    """The device's request count once nothing is in flight and it stays the
    same for 0.3 s: a new loop device is probed (partition scan, udev's
    blkid) just after losetup, and a probe read that straddles the baseline
    would be counted by the kernel but seen by rspd only half."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        done, inflight, _ = block_stat(name)
        if inflight == 0 and done == last:
            return done
        last = done
        time.sleep(0.3)
    fail("%s did not go quiet within %ds" % (name, timeout))


def blk_counts(d, majmin):
    """(observed, without completion, open, the answer) of the system
    blk_service profile of device @majmin ("7:0")."""
    h = d.json("hist", "--op", "blk_service:" + majmin)
    for p in h["profiles"]:
        if p["subject"]["kind"] == "system":
            return p["count"], p["incomplete"], p["open"], h
    return 0, 0, 0, h


def now_s():
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def wait_fed(d, t, timeout=30):
    """Wait until rspd's histograms have been fed every record up to time @t."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        h = d.json("hist", "--op", "runq")
        if h["progress_s"] >= t:
            return h
        time.sleep(0.05)
    fail("rspd's histograms were not fed up to %.3f within %ds" % (t, timeout))


def fill_window(d, timeout=120):
    """Run pipe_pingpong on each CPU until rspd's window is full (it has
    evicted chunks); returns the pid of one ping-pong parent, killed by then
    (its records stay in the window)."""
    # A session each, to kill the ping-pong's child with it (it would keep the
    # test's output open, and ctest waiting).
    load = [subprocess.Popen([os.path.join(WORKLOADS, "pipe_pingpong"), "100000000", str(c)],
                             stdout=subprocess.DEVNULL, start_new_session=True)
            for c in range(min(os.cpu_count(), 2))]
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            w = d.json("status")["window"]
            if w["evicted_chunks"] > 0 and w["bytes"] > w["budget_bytes"] * 0.8:
                return load[0].pid
            time.sleep(0.5)
        fail("the window did not fill in %d s: %s" % (timeout, w))
    finally:
        for p in load:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
