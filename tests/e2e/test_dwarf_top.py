"""DWARF user stacks of cpu-clock samples. cpu_nofp burns CPU in level3,
called from level2, level1 and main, all built with -fomit-frame-pointer.

Known answer: with rspd's default (--dwarf cpu_clock,uprobe: each sample
copies 8 KiB of user stack), `rspctl top --stacks` shows nearly all of the
process's samples in one stack level3 <- level2 <- level1 <- main, unwound by
DWARF and said so. With --dwarf none only frame pointers remain, and they
cannot find level2 (the control: DWARF is what finds it).

The window keeps those samples' stacks compressed (rsp/ustackz.h): a
cpu_nofp sample there takes well under the 8 KiB it copied (status's
window kinds). A dump holds each as the kernel would have written it with
dyn_size bytes asked for (cut: lib/stream/ustack_trim.c's form): perf
script reads them, and `rspctl analyze` of the dump unwinds them as the
live daemon did. guard_nofp burns CPU in the same level3 <- level2 <-
level1 on a thread whose stack has an unreadable page right above it: the
kernel reserves 8 KiB per sample but copies only above_sp (the workload
measures it) plus the level frames. Known answer, from the dump: each of
that thread's cpu-clock samples holds exactly dyn_size rounded up to 8,
and the median one (the burning loop's: the thread's start and exit may
run deeper) takes under above_sp + 1 KiB, where an uncut one takes over 8
KiB (the reserve alone); the stacks unwind by DWARF live and from the dump
(rspctl analyze), and `perf script` reads every one of the cut samples."""
import json
import os
import re
import shutil
import struct
import tempfile

import graphtest as gt
import rsptest as t

t.need_root()

PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, PERF_RECORD_SAMPLE = 1, 0, 9
STACK_RESERVE = 8192  # rspd's default --dwarf-stack


# sample_type bits (include/uapi/linux/perf_event.h), in the order of a sample's fields
HEAD_BITS = [1 << 16, 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 6, 1 << 9, 1 << 7, 1 << 8]
CALLCHAIN, REGS_USER, STACK_USER = 1 << 5, 1 << 12, 1 << 13


def stack_fields(data, at, size, st, nregs):
    """(size, dyn_size) of the user stack copy of the sample at @at: the head
    (IDENTIFIER .. PERIOD, a word each), the callchain, the user registers,
    then the stack (cpu-clock's fields: no READ, RAW or BRANCH_STACK)."""
    i = at + 8 + 8 * sum(1 for b in HEAD_BITS if st & b)
    if st & CALLCHAIN:
        i += 8 + 8 * struct.unpack_from("<Q", data, i)[0]
    if st & REGS_USER:
        i += 8 + (8 * nregs if struct.unpack_from("<Q", data, i)[0] else 0)
    reserve = struct.unpack_from("<Q", data, i)[0]
    if not reserve:
        return 0, 0
    if i + 16 + reserve > at + size:
        t.fail("a sample's stack copy runs past its record (%d bytes)" % reserve)
    return reserve, struct.unpack_from("<Q", data, i + 8 + reserve)[0]


def cpu_clock_samples(path, tid):
    """[(record size, stack size, dyn_size)] of thread @tid's cpu-clock samples
    in a perf.data file (rsp's layout: the sample id is a sample's first
    word, pid and tid its third)."""
    with open(path, "rb") as f:
        data = f.read()
    t.check(data[:8] == b"PERFILE2", "the dump is a perf.data file")
    attr_size, a_off, a_size, d_off, d_size = struct.unpack_from("<QQQQQ", data, 16)
    clock = {}
    for at in range(a_off, a_off + a_size, attr_size):
        typ, _, config, _, st = struct.unpack_from("<IIQQQ", data, at)
        regs = struct.unpack_from("<Q", data, at + 80)[0]  # attr.sample_regs_user
        ids_off, ids_size = struct.unpack_from("<QQ", data, at + attr_size - 16)
        if (typ, config) == (PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK) and st & STACK_USER:
            for sid in struct.unpack_from("<%dQ" % (ids_size // 8), data, ids_off):
                clock[sid] = (st, bin(regs).count("1"))
    out, at = [], d_off
    while at + 8 <= d_off + d_size:
        typ, _, size = struct.unpack_from("<IHH", data, at)
        if size < 8:
            t.fail("a record of size %d at %d in the dump" % (size, at))
        if typ == PERF_RECORD_SAMPLE and size >= 32:
            sid, _, pid_tid = struct.unpack_from("<QQQ", data, at + 8)
            if sid in clock and pid_tid >> 32 == tid:
                out.append((size,) + stack_fields(data, at, size, *clock[sid]))
        at += size
    return out


def heaviest(d, w):
    top = d.json("top", "--pid", str(w["pid"]), "--stacks", "3",
                 "--last", "%dms" % int((w["seconds"] + 1.0) * 1000))
    print("   %d samples; user stacks %s" % (top["samples"], top.get("user_stacks")))
    t.check(top["samples"] >= 50, "the process was sampled (%d samples)" % top["samples"])
    s = top["stacks"][0]
    names = [f["name"] for f in s["frames"]]
    print("   heaviest stack (%d samples, %s): %s" % (s["samples"], s["unwind"], names))
    return top, s, names


with t.Rspd() as d:
    w = gt.workload("cpu_nofp", 2)
    d.settle()
    top, s, names = heaviest(d, w)
    want = ["level3", "level2", "level1", "main"]
    t.check(names[:4] == want, "the heaviest stack is level3 <- level2 <- level1 <- main")
    t.check(s["unwind"] == "dwarf" and s["dwarf"] == s["samples"], "unwound by DWARF, and said")
    t.check(s["samples"] >= 0.8 * top["samples"],
            "it holds most samples (%d of %d)" % (s["samples"], top["samples"]))
    _, text, _ = d.ctl("top", "--pid", str(w["pid"]), "--stacks", "1", "--last", "3s")
    t.check("(dwarf)" in text and "level1" in text, "the text names the method and the frames")
    t.check(all(len(line) < 80 for line in text.splitlines()), "text lines under 80 columns")

    # the window: cpu-clock samples compressed (8 KiB + ~200 bytes each as copied)
    kinds = {k["kind"]: k for k in d.json("status")["window"]["kinds"]}
    cc = kinds.get("cpu-clock")
    t.check(cc and cc["records"] > 0 and cc["bytes"] / cc["records"] < 4096,
            "the window keeps cpu-clock samples compressed (%s bytes per sample)"
            % ("%.0f" % (cc["bytes"] / cc["records"]) if cc and cc["records"] else "no"))
    # a dump: the samples as the kernel wrote them (their stacks cut to dyn_size)
    tmp = tempfile.mkdtemp(prefix="rsp-dwarf-dump.")
    path = os.path.join(tmp, "d.data")
    d.ctl("dump", "-o", path)
    p = t.run(["perf", "script", "-i", path, "--pid", str(w["pid"])], timeout=300)
    samples = len(re.findall(r" cpu-clock: *\n", p.stdout))
    t.check(p.returncode == 0 and samples >= 0.8 * top["samples"] and
            "level3" in p.stdout and not [l for l in p.stderr.splitlines()
                                          if "sample" in l.lower() or "invalid" in l.lower()],
            "perf script reads the dump's %d cpu-clock samples of the workload (%d live): %s"
            % (samples, top["samples"], p.stderr.strip()[-200:]))
    off = t.run([t.RSPCTL, "analyze", path, "top", "--pid", str(w["pid"]), "--stacks", "1",
                 "--json"], timeout=300)
    s2 = json.loads(off.stdout)["stacks"][0] if off.returncode == 0 else {}
    names2 = [f["name"] for f in s2.get("frames", [])]
    t.check(names2[:4] == want and s2.get("unwind") == "dwarf",
            "rspctl analyze unwinds the dump's samples as live: %s %s"
            % (names2[:4], off.stderr.strip()[-200:]))
    os.unlink(path)
    os.rmdir(tmp)

    # --- the window stores the samples cut to the stack bytes the kernel copied ---
    g = gt.workload("guard_nofp", 2)
    d.settle()
    top, s, names = heaviest(d, g)
    t.check(names[:4] == ["level3", "level2", "level1", "burn_guarded"] and
            s["unwind"] == "dwarf" and s["samples"] >= 0.8 * top["samples"],
            "guard_nofp, live: level3 <- level2 <- level1 <- burn_guarded, by DWARF from "
            "the cut stack copies")
    kinds = {k["kind"]: k for k in d.json("status")["window"]["kinds"]}
    print("   status: cpu-clock %(records)d records, %(bytes)d bytes, %(bytes_per_record).0f "
          "bytes per record (every process's samples)" % kinds["cpu-clock"])
    _, out, _ = d.ctl("dump", "--json", "-o", os.path.join(d.dir, "dwarf.perf.data"))
    dump = json.loads(out)["path"]

bound = g["above_sp"] + 1024
smp = cpu_clock_samples(dump, g["tid"])
sizes = sorted(x[0] for x in smp)
print("   %d cpu-clock samples of thread %d in the dump: %d to %d bytes, median %d; %d above "
      "its stack pointer" % (len(smp), g["tid"], sizes[0] if sizes else 0,
                             sizes[-1] if sizes else 0, sizes[len(sizes) // 2] if sizes else 0,
                             g["above_sp"]))
t.check(bound < STACK_RESERVE, "the construction holds: %d bytes can be copied, under the "
        "%d reserved" % (g["above_sp"], STACK_RESERVE))
uncut = [x for x in smp if x[1] != (x[2] + 7) // 8 * 8]
t.check(len(smp) >= 50 and not uncut,
        "each of its samples holds its stack copy cut to dyn_size rounded up to 8 (%d not: %s)"
        % (len(uncut), uncut[:3]))
# The burning loop's samples (most of them; not the thread's start and exit,
# which may run deeper: ASan's runtime does)
t.check(sizes[len(sizes) // 2] < bound,
        "its median sample takes under %d bytes in the window (%d; an uncut one takes over %d)"
        % (bound, sizes[len(sizes) // 2], STACK_RESERVE))
p = t.run([t.RSPCTL, "analyze", dump, "top", "--pid", str(g["pid"]), "--stacks", "1", "--json"],
          timeout=120)
st = json.loads(p.stdout)["stacks"][0] if p.returncode == 0 else {}
t.check([f["name"] for f in st.get("frames", [])][:4] ==
        ["level3", "level2", "level1", "burn_guarded"] and st.get("unwind") == "dwarf",
        "rspctl analyze unwinds the dump's cut samples by DWARF (%s)" % p.stderr.strip())
if not shutil.which("perf"):
    print("SKIP (part): perf is not installed (apt-get install linux-perf)")
else:
    p = t.run(["perf", "script", "-i", dump, "--tid", str(g["tid"]), "-F", "tid,event,sym"],
              timeout=120)
    seen = sum(1 for line in p.stdout.splitlines() if "cpu-clock" in line)
    t.check(p.returncode == 0 and seen == len(smp) and "dump failure" not in p.stderr,
            "perf script reads each of the %d cut samples (%d; rc %d)" % (
                len(smp), seen, p.returncode))
os.remove(dump)  # rspd's directory stays (rsptest), its few MiB of dump need not

with t.Rspd("--dwarf", "none") as d:
    w = gt.workload("cpu_nofp", 2)
    d.settle()
    top, s, names = heaviest(d, w)
    t.check(s["unwind"] in ("fp", "none") and "level2" not in names,
            "without DWARF, frame pointers do not find level2 (%s)" % names)
