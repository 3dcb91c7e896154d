"""Two network namespaces joined by a veth pair: 10.77.0.1 (client side) and
10.77.0.2 (server side), for the merge test and benchmark (issue 19)."""
import os
import subprocess


class VethPair:
    """Names from @prefix and this process's pid; @fail(msg) on an ip error."""

    def __init__(self, prefix, fail):
        tag = "%d" % (os.getpid() % 100000)
        self.ns_c, self.ns_s = "%s-c%s" % (prefix, tag), "%s-s%s" % (prefix, tag)
        self.veth_c, self.veth_s = "%sc%s" % (prefix, tag), "%ss%s" % (prefix, tag)
        self.fail = fail

    def ip(self, *args, check=True):
        p = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=30)
        if check and p.returncode != 0:
            self.fail("ip %s failed: %s" % (" ".join(args), p.stderr.strip()))

    def up(self):
        self.ip("netns", "add", self.ns_c)
        self.ip("netns", "add", self.ns_s)
        self.ip("link", "add", self.veth_c, "type", "veth", "peer", "name", self.veth_s)
        self.ip("link", "set", self.veth_c, "netns", self.ns_c)
        self.ip("link", "set", self.veth_s, "netns", self.ns_s)
        self.ip("-n", self.ns_c, "addr", "add", "10.77.0.1/24", "dev", self.veth_c)
        self.ip("-n", self.ns_s, "addr", "add", "10.77.0.2/24", "dev", self.veth_s)
        for ns, dev in ((self.ns_c, self.veth_c), (self.ns_s, self.veth_s)):
            self.ip("-n", ns, "link", "set", dev, "up")
            self.ip("-n", ns, "link", "set", "lo", "up")

    def down(self):
        # Deleting a namespace deletes the veth end in it, and so the pair.
        self.ip("netns", "del", self.ns_c, check=False)
        self.ip("netns", "del", self.ns_s, check=False)
