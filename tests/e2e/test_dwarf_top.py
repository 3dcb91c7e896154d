"""DWARF user stacks of cpu-clock samples. cpu_nofp burns CPU in level3,
called from level2, level1 and main, all built with -fomit-frame-pointer.

Known answer: with rspd's default (--dwarf cpu_clock,uprobe: each sample
copies 8 KiB of user stack), `rspctl top --stacks` shows nearly all of the
process's samples in one stack level3 <- level2 <- level1 <- main, unwound by
DWARF and said so. With --dwarf none only frame pointers remain, and they
cannot find level2 (the control: DWARF is what finds it)."""
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

with t.Rspd("--dwarf", "none") as d:
    w = gt.workload("cpu_nofp", 2)
    d.settle()
    top, s, names = heaviest(d, w)
    t.check(s["unwind"] in ("fp", "none") and "level2" not in names,
            "without DWARF, frame pointers do not find level2 (%s)" % names)
