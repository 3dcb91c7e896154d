"""DWARF user stacks of cpu-clock samples. cpu_nofp burns CPU in level3,
called from level2, level1 and main, all built with -fomit-frame-pointer.

Known answer: with rspd's default (--dwarf cpu_clock,uprobe: each sample
copies 8 KiB of user stack), `rspctl top --stacks` shows nearly all of the
process's samples in one stack level3 <- level2 <- level1 <- main, unwound by
DWARF and said so. The window keeps those stacks compressed (rsp/ustackz.h):
a cpu-clock sample there takes well under the 8 KiB it copied; a dump holds
them as the kernel wrote them, cut to what it copied: perf script reads
them, and `rspctl analyze` of the dump unwinds them as the live daemon
did. With --dwarf none only frame pointers
remain, and they cannot find level2 (the control: DWARF is what finds it)."""
import json
import os
import re
import tempfile

import graphtest as gt
import rsptest as t

t.need_root()


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

with t.Rspd("--dwarf", "none") as d:
    w = gt.workload("cpu_nofp", 2)
    d.settle()
    top, s, names = heaviest(d, w)
    t.check(s["unwind"] in ("fp", "none") and "level2" not in names,
            "without DWARF, frame pointers do not find level2 (%s)" % names)
