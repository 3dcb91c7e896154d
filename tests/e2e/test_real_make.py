"""A real `make -j2` (Debian's make and gcc) of a small C project: seven
translation units of generated code, each a fraction of a second of cc1.

Known answer for `rspctl snapshot MAKE`: make does nothing itself but wait
for its children (sh -c gcc -> cc1, as; the link); two run at a time, and
make is woken by the one that ends first. RSP counts all work done on the
pid's behalf, so the total time (with parallelism) covers the CPU time of
everything make ran (the kernel's rusage of make's children, which includes
every descendant they waited for), within 10%; and the compilers (cc1) are
in the snapshot, with their time. Another process writes to the disk and
a busy loop takes a CPU meanwhile."""
import os
import resource
import subprocess
import tempfile
import time

import cproject
import rsptest as t
import snaptest as st

t.need_root()

def comm_of(n):
    return n.get("comm", "")


with tempfile.TemporaryDirectory(prefix="rsp-make-") as src, t.Rspd() as d, \
        t.Background(os.environ.get("RSP_TEST_DIR", "/var/tmp")):
    cproject.write(src)
    d.settle(1)
    t0 = time.time()
    p = subprocess.Popen(["make", "-s", "-j2", "-C", src], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    elapsed = time.time() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        t.fail("make failed (%d)" % p.returncode)
    cpu = ru.ru_utime + ru.ru_stime
    print("   make pid %d: %.3f s, make and its children used %.3f s of CPU" %
          (p.pid, elapsed, cpu))
    d.settle()
    s = st.snapshot(d, p.pid, elapsed)
    st.skip_if_gaps(s)
    t.check(s["total_s"] >= 0.9 * cpu,
            "total time with parallelism %.3f s >= 90%% of the CPU make and its children "
            "used (%.3f s)" % (s["total_s"], cpu))
    cc1 = [n for n, _ in st.nodes(s) if n["kind"] == "thread" and comm_of(n) == "cc1"]
    t.check(len({n["tid"] for n in cc1}) == cproject.UNITS + 1,
            "every compiler is in the snapshot: %d cc1 of %d" %
            (len({n["tid"] for n in cc1}), cproject.UNITS + 1))
    t.check(s["percent_accounted"] >= 90.0, "%.1f%% accounted" % s["percent_accounted"])
