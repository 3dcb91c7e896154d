"""A cgroup whose writes to one disk are throttled to a known rate (the
kernel's blk-throttle: cgroup v1 blkio.throttle.write_bps_device, or
cgroup v2 io.max wbps), so that a workload's direct writes wait for "the
disk" a known time by construction: WRITE_BYTES / BPS seconds, however
fast the real device is. Used by test_merge (issue 19)."""
import os

V1 = "/sys/fs/cgroup/blkio"


def whole_disk(path):
    """MAJ:MIN of the disk holding path (the parent disk of a partition)."""
    st = os.stat(path)
    dev = "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    sysdir = "/sys/dev/block/" + dev
    if os.path.exists(os.path.join(sysdir, "partition")):
        with open(os.path.join(os.path.realpath(sysdir), "..", "dev")) as f:
            dev = f.read().strip()
    return dev


def v2_root():
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "cgroup2":
                return fields[1]
    return None


class IoThrottle:
    """create() makes the cgroup or returns one sentence saying why it cannot;
    enter_cmd is a shell command that moves the shell running it into the
    cgroup (its children follow); remove() deletes it."""

    def __init__(self, name, path, bps):
        self.name, self.bps = name, bps
        self.dev = whole_disk(path)
        self.dir = None

    def create(self):
        try:
            if os.path.exists(os.path.join(V1, "blkio.throttle.write_bps_device")):
                self.dir = os.path.join(V1, self.name)
                os.mkdir(self.dir)
                with open(os.path.join(self.dir, "blkio.throttle.write_bps_device"), "w") as f:
                    f.write("%s %d\n" % (self.dev, self.bps))
                return None
            root = v2_root()
            if not root:
                return "no blkio (v1) or cgroup2 hierarchy is mounted to throttle writes"
            with open(os.path.join(root, "cgroup.subtree_control"), "w") as f:
                f.write("+io\n")
            self.dir = os.path.join(root, self.name)
            os.mkdir(self.dir)
            with open(os.path.join(self.dir, "io.max"), "w") as f:
                f.write("%s wbps=%d\n" % (self.dev, self.bps))
            return None
        except OSError as e:
            return "cannot throttle writes to disk %s in a cgroup (%s): %s" % (
                self.dev, self.dir or "io controller", e)

    def enter_cmd(self):
        return "echo $$ > %s/cgroup.procs" % self.dir

    def remove(self):
        if self.dir:
            try:
                os.rmdir(self.dir)
            except OSError:
                pass
