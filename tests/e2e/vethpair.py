"""Two network namespaces joined by a veth pair: 10.77.0.1 (client side) and
10.77.0.2 (server side), for the merge test and benchmark (issue 19)."""
import os
import subprocess


class _Netns:
    """ip(ARGS): run the ip command; on an error, self.fail(msg) (set by the subclass)."""

    def ip(self, *args, check=True):
        p = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=30)
        if check and p.returncode != 0:
            self.fail("ip %s failed: %s" % (" ".join(args), p.stderr.strip()))


class VethPair(_Netns):
    """Names from @prefix and this process's pid; @fail(msg) on an ip error."""

    def __init__(self, prefix, fail):
        tag = "%d" % (os.getpid() % 100000)
        self.ns_c, self.ns_s = "%s-c%s" % (prefix, tag), "%s-s%s" % (prefix, tag)
        self.veth_c, self.veth_s = "%sc%s" % (prefix, tag), "%ss%s" % (prefix, tag)
        self.fail = fail

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


class VethChain(_Netns):
    """Three network namespaces in a row, a veth pair between neighbours:
    ns[0] 10.78.1.1 -- 10.78.1.2 ns[1] 10.78.2.1 -- 10.78.2.2 ns[2]
    (a client, a proxy, a server). Names from @prefix and this process's pid;
    @fail(msg) on an ip error."""

    ADDRS = (("10.78.1.1", "10.78.1.2"), ("10.78.2.1", "10.78.2.2"))

    def __init__(self, prefix, fail):
        tag = "%d" % (os.getpid() % 100000)
        self.ns = ["%s-%d-%s" % (prefix, i, tag) for i in range(3)]
        self.fail = fail

    def up(self):
        for ns in self.ns:
            self.ip("netns", "add", ns)
            self.ip("-n", ns, "link", "set", "lo", "up")
        tag = self.ns[0].rsplit("-", 1)[1]
        for i, (a, b) in enumerate(self.ADDRS):
            va, vb = "rspx%da%s" % (i, tag), "rspx%db%s" % (i, tag)
            self.ip("link", "add", va, "type", "veth", "peer", "name", vb)
            for ns, dev, addr in ((self.ns[i], va, a), (self.ns[i + 1], vb, b)):
                self.ip("link", "set", dev, "netns", ns)
                self.ip("-n", ns, "addr", "add", addr + "/24", "dev", dev)
                self.ip("-n", ns, "link", "set", dev, "up")

    def down(self):
        for ns in self.ns:
            self.ip("netns", "del", ns, check=False)
