"""Uprobes never outlive rspd. rspd makes its libc uprobes through the
uprobe PMU: they belong to its perf file descriptors, and the kernel removes
them when those close, also when rspd is killed with SIGKILL (there is no
tracefs uprobe_events entry to leave behind).

A probe that does survive its creator is a tracefs dynamic event: rspd
removes those of the group "rsp" at start.

Known answer: while rspd runs with the libc family, the first byte of every
probed function, read from another process's memory, is int3 (0xcc); after
SIGKILL every one of them holds its original byte again, and
uprobe_events holds nothing of rspd's. A stale tracefs probe of the group
rsp, planted before the next rspd starts, is gone once it runs (and its log
says so); a probe of another group is left alone. The new rspd stops
cleanly, and leaves nothing either."""
import os
import re
import signal
import subprocess
import time

import rsptest as t

t.need_root()
UPROBE_EVENTS = "/sys/kernel/tracing/uprobe_events"
# The kernel drops the probes as it closes the dead process's files (measured:
# at once); allow for a loaded machine.
GRACE = 30


def libc_of(pid):
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if len(f) >= 6 and re.search(r"/libc\.so\.6$", f[5]):
            return os.path.realpath(f[5])
    t.fail("process %d maps no libc" % pid)


def dynsyms(path, names):
    """name -> file offset of its entry (.dynsym value through PT_LOAD)."""
    out = subprocess.run(["readelf", "-W", "--dyn-syms", "-l", path], capture_output=True,
                         text=True, check=True).stdout
    loads = [(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)) for m in
             re.finditer(r"LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)",
                         out)]
    offs = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND":
            name = f[7].split("@")[0]
            if name in names and name not in offs:
                v = int(f[1], 16)
                for off, vaddr, filesz in loads:
                    if vaddr <= v < vaddr + filesz:
                        offs[name] = v - vaddr + off
    return offs


def first_bytes(pid, path, offs):
    """name -> the byte at its entry in @pid's memory."""
    maps = []
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        if len(f) >= 6 and os.path.realpath(f[5]) == path:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            maps.append((lo, hi, int(f[2], 16)))
    got = {}
    with open("/proc/%d/mem" % pid, "rb") as mem:
        for name, off in offs.items():
            for lo, hi, pgoff in maps:
                if pgoff <= off < pgoff + (hi - lo):
                    mem.seek(lo + off - pgoff)
                    got[name] = mem.read(1)[0]
    return got


def probes_placed(d):
    st = d.json("status")
    libc = next(f for f in st["families"] if f["name"] == "libc")
    t.check(libc["source"] == "uprobe" and libc["events_open"] == 1,
            "status: the libc family runs on uprobes (%s)" % libc.get("note"))
    return libc["note"].split(":", 1)[1].split(";")[0].split()


def uprobe_event(line):
    """Append @line to uprobe_events (Python's "a" mode seeks, which tracefs refuses)."""
    fd = os.open(UPROBE_EVENTS, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def uprobe_events():
    try:
        with open(UPROBE_EVENTS) as f:
            return f.read()
    except OSError:
        return ""


before = uprobe_events()
victim = subprocess.Popen(["python3", "-c", "import time; time.sleep(300)"])
d = None
try:
    time.sleep(0.5)
    libc = libc_of(victim.pid)
    d = t.Rspd("--families", "all")
    d.start()
    names = probes_placed(d)
    offs = dynsyms(libc, set(names))
    t.check(len(offs) == len(names), "found the %d probed functions in %s" % (len(names), libc))
    got = first_bytes(victim.pid, libc, offs)
    t.check(all(b == 0xcc for b in got.values()),
            "while rspd runs, each probed entry is int3 in another process (%d of %d)" %
            (sum(b == 0xcc for b in got.values()), len(got)))
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    t0 = time.time()
    deadline = t0 + GRACE
    while time.time() < deadline:
        got = first_bytes(victim.pid, libc, offs)
        if not any(b == 0xcc for b in got.values()):
            break
        time.sleep(0.2)
    print("   probes gone %.1f s after SIGKILL" % (time.time() - t0))
    left = [n for n, b in got.items() if b == 0xcc]
    t.check(not left, "after SIGKILL every probe is gone (left: %s)" % left)
    t.check(uprobe_events() == before, "uprobe_events holds nothing of rspd's")
    d.proc = None
    # Plant stale tracefs probes: one in rsp's group, one in another.
    stale, other = "rsp/stale_%d" % os.getpid(), "rsptest/other_%d" % os.getpid()
    for ev in (stale, other):
        uprobe_event("p:%s %s:0x%x" % (ev, libc, offs[names[0]]))
    t.check(stale in uprobe_events() and other in uprobe_events(),
            "planted stale tracefs probes %s and %s" % (stale, other))
    d2 = t.Rspd("--families", "all")
    with d2:
        probes_placed(d2)
        t.check(stale not in uprobe_events(), "the new rspd removed the stale %s" % stale)
        t.check("removed 1 stale probe of group rsp" in d2.read_log(), "and says so in its log")
        t.check(other in uprobe_events(), "a probe of another group is left alone")
    uprobe_event("-:%s" % other)
    deadline = time.time() + GRACE
    while time.time() < deadline and any(b == 0xcc for b in first_bytes(victim.pid, libc,
                                                                            offs).values()):
        time.sleep(0.2)
    t.check(not any(b == 0xcc for b in first_bytes(victim.pid, libc, offs).values()),
            "a new rspd starts after the killed one and, stopped, leaves no probe either")
finally:
    for ev in ("rsp/stale_%d" % os.getpid(), "rsptest/other_%d" % os.getpid()):
        if ev in uprobe_events():
            uprobe_event("-:%s" % ev)
    victim.kill()
    if d is not None and d.proc is not None and d.proc.poll() is None:
        d.proc.kill()
