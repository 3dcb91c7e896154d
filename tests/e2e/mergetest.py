"""What the merge tests (test_merge, test_merge_proxy, test_merge_worker)
share: their setting (root, the ip command, the "hosts" as network
namespaces, a cgroup throttling the disk, a work directory), rspctl merge,
the namespaces' holder shells, their JSON lines."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import rsptest as t
from iothrottle import IoThrottle


def merge(*args):
    return t.run([t.RSPCTL, "merge"] + list(args), timeout=300)


def holder(ns, script, *args, enter=None):
    """A shell in namespace ns that runs script and then stays (exec sleep) until
    killed: a live process of the namespace for dump --netns, and the parent
    (fork) of the workloads, which are gone by the time of the dump. enter: a
    command run first, outside the namespace (ip netns exec mounts its own /sys,
    where the cgroup hierarchy is not), e.g. joining a cgroup."""
    cmd = ["ip", "netns", "exec", ns, "sh", "-c", script + "; exec sleep 300",
           "sh"] + [str(a) for a in args]
    if enter:
        cmd = ["sh", "-c", enter + ' && exec "$@"', "sh"] + cmd
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)


def line_of(proc, what):
    out = proc.stdout.readline()
    t.check(out.strip().startswith("{"), "%s ran: %r" % (what, out))
    return json.loads(out)


class Hosts:
    """The setting of a merge test: root and the ip command (else a skip in
    one line), the network @net (a tests/e2e/vethpair.py VethPair or
    VethChain, not up yet), a cgroup throttling writes to the disk of $RSP_TEST_DIR to
    @bps (tests/e2e/iothrottle.py), a work directory, the holder shells.
    @name tags the directory and the cgroup; @disk_user names who writes in
    the cgroup, for the failure. up() before the test, down() in its finally:
    kills the holders, removes the namespaces, the cgroup and (unless
    RSP_TEST_KEEP) the work directory."""

    def __init__(self, name, net, bps, disk_user="server"):
        t.need_root()
        if not shutil.which("ip"):
            print("skipped: the ip command (iproute2, scripts/deps.sh) is not installed")
            raise SystemExit(t.SKIP)
        self.net = net
        self.disk_user = disk_user
        self.work = tempfile.mkdtemp(prefix="rsptest-%s." % name)
        self.tmp = os.environ.get("RSP_TEST_DIR", "/var/tmp")
        self.throttle = IoThrottle("rsptest-%s-%d" % (name, os.getpid()), self.tmp, bps)
        self.exe = os.path.join(t.WORKLOADS, "tcp_fsync")
        self.holders = []
        self.burners = []

    def up(self):
        """The network, the throttle, and a busy loop at nice 19 on each CPU
        until recorded(): this kernel does not deliver tracepoint samples
        fired in interrupts on an idle CPU (README, "Limits and honesty"), and on an idle
        machine the throttle's wakeup of the server (a timer) and its switch
        in were lost for most of its 200 ms disk waits in one run of four:
        sleeps with no waker, no edge to the disk, and the graph's check of
        the server's heaviest edge failed on what the perf backend cannot see.
        At nice 19 the loops take a CPU only when nothing else wants it."""
        self.net.up()
        why = self.throttle.create()
        if why:
            t.fail("the %s's disk cannot be slowed by construction: %s" % (self.disk_user, why))
        for _ in range(os.cpu_count() or 1):
            self.burners.append(subprocess.Popen(
                ["nice", "-n", "19", sys.executable, "-c", "while True: pass"]))

    def recorded(self):
        """The dumps are written: stop the busy loops (the analyses follow)."""
        for b in self.burners:
            b.kill()
            b.wait()
        self.burners = []

    def holder(self, ns, script, *args, enter=None):
        """holder() below, killed by down()."""
        h = holder(ns, script, *args, enter=enter)
        self.holders.append(h)
        return h

    def down(self):
        self.recorded()
        for h in self.holders:
            h.kill()
            h.wait()
        self.net.down()
        self.throttle.remove()
        if not os.environ.get("RSP_TEST_KEEP"):
            shutil.rmtree(self.work, ignore_errors=True)
