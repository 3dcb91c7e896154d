"""What the merge tests (test_merge, test_merge_proxy, test_merge_worker)
share: their setting (root, the ip command, the "hosts" as network
namespaces, a cgroup throttling the disk, a work directory), rspctl merge,
the namespaces' holder shells, their JSON lines."""
import json
import os
import shutil
import subprocess
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

    def up(self):
        self.net.up()
        why = self.throttle.create()
        if why:
            t.fail("the %s's disk cannot be slowed by construction: %s" % (self.disk_user, why))

    def holder(self, ns, script, *args, enter=None):
        """holder() below, killed by down()."""
        h = holder(ns, script, *args, enter=enter)
        self.holders.append(h)
        return h

    def down(self):
        for h in self.holders:
            h.kill()
            h.wait()
        self.net.down()
        self.throttle.remove()
        if not os.environ.get("RSP_TEST_KEEP"):
            shutil.rmtree(self.work, ignore_errors=True)
