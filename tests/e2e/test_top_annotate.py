"""`rspctl top --lines` and `--annotate`: source lines (libdw) and the
annotated disassembly (capstone) of the hot function of burn_split.

burn_split split 1.5 (tests/workloads/burn_split.c, built with -O1 -g and
frame pointers): its worker burns 70% of its CPU in burn_hot, 30% in
burn_cold; each is a counted loop whose whole body is on one source line,
which the workload prints (hot_line, cold_line: __LINE__ by construction).

Known answers:
  --lines: burn_hot's hottest line is hot_line, burn_cold's cold_line,
  in burn_split.c
  --annotate burn_hot: the instructions are those objdump (binutils, an
  independent decoder) lists for burn_hot; >= 80% of its samples lie on
  the instructions of its loop, found in objdump's listing by
  construction: from the target of the function's only backward
  conditional branch (the loop's test) to that branch; >= 80% of its samples are on instructions of hot_line
  a kernel function: refused with one sentence (its code is not in a
  file); a name with no sample: an answer that says so
  a copy of burn_split replaced on disk (by another program) after it ran
  and was named: refused in one sentence (the code now is not what ran)
"""
import json
import os
import re
import shutil
import tempfile

import rsptest as t

t.need_root()
HZ = 499
CPU_S = 1.5
OBJDUMP = shutil.which("objdump")
if not OBJDUMP:
    print("SKIP: objdump (binutils) is needed to find the loop independently")
    raise SystemExit(t.SKIP)


def objdump_function(path, name):
    """[(address, text)] of the function, and its loop [start, end] by construction."""
    p = t.run([OBJDUMP, "-d", "--no-show-raw-insn", path])
    m = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)(?:\n\n|\Z)" % re.escape(name), p.stdout,
                  re.S | re.M)
    t.check(m is not None, "objdump lists %s" % name)
    insns = []
    loop = None
    for line in m.group(1).splitlines():
        f = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
        if not f:
            continue
        addr = int(f.group(1), 16)
        insns.append((addr, f.group(2)))
        j = re.match(r"j(?!mp)\w+\s+([0-9a-f]+)\s+<", f.group(2))
        if j and int(j.group(1), 16) < addr:
            t.check(loop is None, "%s has one backward conditional branch (its loop)" % name)
            loop = (int(j.group(1), 16), addr)
    t.check(loop is not None, "%s has a loop" % name)
    return insns, loop


with t.Rspd("--freq", str(HZ)) as d:
    w = t.workload("burn_split", "split", CPU_S)
    z = t.workload("burn_split", "zero", 0.5)
    print("   %s" % w)
    d.settle(0.8)
    pid = str(w["pid"])

    top = d.json("top", "--pid", pid, "--lines", "--limit", "0")
    rows = {r["name"]: r for r in top["symbols"]}
    for name, line in (("burn_hot", w["hot_line"]), ("burn_cold", w["cold_line"])):
        src = rows[name]["source"]
        t.check(src and src["file"].endswith("burn_split.c") and src["line"] == line,
                "--lines: %s is at burn_split.c:%d (%s)" % (name, line, src))
        t.check(src["samples"] >= 0.8 * rows[name]["samples"],
                "--lines: %d of %s's %d samples on that line" % (src["samples"], name,
                                                                 rows[name]["samples"]))

    top = d.json("top", "--pid", pid, "--annotate", "burn_hot")
    a = top["annotate"]
    exe = a["object"]
    t.check(exe.endswith("/burn_split") and a["samples"] == rows["burn_hot"]["samples"],
            "annotate: %d samples of burn_hot in %s" % (a["samples"], exe))
    t.check(a["samples_on_instructions"] == a["samples"] and a["samples_off_instruction"] == 0,
            "every sample is on an instruction's start")
    insns, (lo, hi) = objdump_function(exe, "burn_hot")
    t.check([i["address"] for i in a["instructions"]] == [x[0] for x in insns],
            "capstone's instructions are objdump's (%d)" % len(insns))
    in_loop = sum(i["samples"] for i in a["instructions"] if lo <= i["address"] <= hi)
    t.check(in_loop >= 0.8 * a["samples"],
            "%d of %d samples in the loop 0x%x..0x%x" % (in_loop, a["samples"], lo, hi))
    on_line = sum(i["samples"] for i in a["instructions"]
                  if i["line"] == w["hot_line"] and (i["file"] or "").endswith("burn_split.c"))
    t.check(on_line >= 0.8 * a["samples"],
            "%d of %d samples on instructions of burn_split.c:%d" % (on_line, a["samples"],
                                                                     w["hot_line"]))
    _, text, _ = d.ctl("top", "--pid", pid, "--annotate", "burn_hot")
    print(text)
    t.check("burn_split.c:%d" % w["hot_line"] in text, "text shows the source line")
    t.check(all(len(line) < 80 for line in text.splitlines()), "text lines fit in 80 columns")

    # A kernel function: refused in one sentence. A name with no sample: said so.
    k = d.json("top", "--pid", str(z["pid"]), "--kernel")
    named = [r["name"] for r in k["symbols"] if r["name"] and r["match"] == "exact"]
    t.check(named, "the /dev/zero reader has named kernel functions")
    rc, _, err = d.ctl("top", "--pid", str(z["pid"]), "--annotate", named[0], check_rc=False)
    t.check(rc != 0 and "not the kernel's" in err and err.count("\n") <= 1,
            "a kernel function is refused in one sentence (%s)" % err.strip())
    # A file replaced since it was mapped: named from the cache, not annotated.
    tmp = tempfile.mkdtemp(prefix="rsptest.")
    copy = os.path.join(tmp, "burn_split")
    shutil.copy2(os.path.join(t.WORKLOADS, "burn_split"), copy)
    p = t.run([copy, "split", "0.3"])
    c = json.loads(p.stdout.strip().splitlines()[-1])
    d.settle(0.8)
    named = d.json("top", "--pid", str(c["pid"]), "--limit", "0")
    t.check(any(r["name"] == "burn_hot" for r in named["symbols"]), "the copy is named")
    # Before the replacement: the copy is annotated, from the file it ran from.
    ca = d.json("top", "--pid", str(c["pid"]), "--annotate", "burn_hot")["annotate"]
    t.check(ca["object"] in (copy, exe) and ca["samples_on_instructions"] == ca["samples"] > 0,
            "the copy is annotated (%s, %d samples)" % (ca["object"], ca["samples"]))
    other = os.path.join(tmp, "other")
    shutil.copy2(os.path.join(t.WORKLOADS, "cpu_nofp"), other)
    os.rename(other, copy)
    rc, _, err = d.ctl("top", "--pid", str(c["pid"]), "--annotate", "burn_hot", check_rc=False)
    t.check(rc != 0 and "not the file that was mapped" in err and err.count("\n") <= 1,
            "a replaced file is not annotated (%s)" % err.strip())
    shutil.rmtree(tmp)
    rc, out, _ = d.ctl("top", "--pid", pid, "--annotate", "no_such_function")
    t.check("no samples in a function named no_such_function" in out,
            "a function with no sample: said so")
