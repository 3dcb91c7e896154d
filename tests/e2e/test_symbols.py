"""Symbols end to end. sym_burn spends a third of its CPU time in each of
burn_exe (its executable), fix_a (exported by libsymfix) and fix_hidden
(static in libsymfix, reached through fix_b). It runs to completion before
the query, so every answer comes from a process that has already exited:
the process model must remember what it had mapped.

Known answers, from `rspctl top --pid`:
  PIE and non-PIE, unstripped: burn_exe, fix_a, fix_hidden (exact names)
  stripped executable and library: [unknown] in sym_burn.stripped, fix_a
  (still exported), and "fix_a->fix_b" (Prospect's bracket) for fix_hidden.
"""
import os

import rsptest as t

t.need_root()
FIX = os.path.join(t.BUILD, "fixtures")
CPU_S = 1.5
HZ = 99

RUNS = [
    ("sym_burn", "libsymfix.so",
     {"burn_exe": "exact", "fix_a": "exact", "fix_hidden": "exact"}),
    ("sym_burn_nopie", "libsymfix.so",
     {"burn_exe": "exact", "fix_a": "exact", "fix_hidden": "exact"}),
    ("sym_burn.stripped", "libsymfix.stripped.so",
     {None: "none", "fix_a": "exact", "fix_a->fix_b": "bracket"}),
]


def rows_by_name(top):
    return {r["name"]: r for r in top["symbols"] if r["kind"] != "kernel"}


with t.Rspd() as d:
    done = []
    for exe, lib, want in RUNS:
        w = t.workload(exe, os.path.join(FIX, lib), CPU_S)
        print("   %s: %s" % (exe, w))
        done.append((exe, lib, want, w))
    d.settle(0.8)
    for exe, lib, want, w in done:
        top = d.json("top", "--pid", str(w["pid"]), "--limit", "0")
        total = top["samples"]
        rows = rows_by_name(top)
        print("   %s pid %d: %d samples: %s" % (
            exe, w["pid"], total,
            ", ".join("%s=%d" % (r["name"], r["samples"]) for r in top["symbols"][:6])))
        # cpu-clock at 99 Hz samples CPU time: expect about CPU_S * 99 samples.
        t.check(total >= CPU_S * HZ * 0.6,
                "%s: %d samples for %.1f s of CPU (>= %d)" % (exe, total, CPU_S,
                                                             CPU_S * HZ * 0.6))
        named = 0
        for name, match in want.items():
            r = rows.get(name)
            label = name if name else "[unknown]"
            t.check(r is not None, "%s: a row for %s" % (exe, label))
            t.check(r["match"] == match, "%s: %s is %s (%s)" % (exe, label, match, r["match"]))
            t.check(r["samples"] >= 0.15 * total,
                    "%s: %s has %d of %d samples (a third expected)" % (
                        exe, label, r["samples"], total))
            named += r["samples"]
            if name is None:
                t.check(r["object"].endswith("/" + exe) and "stripped" in r.get("why", ""),
                        "%s: the unknown third is in the stripped executable (%s, %s)" % (
                            exe, r["object"], r.get("why")))
            elif name.startswith("fix"):
                t.check(r["object"].endswith("/" + lib), "%s: %s is in %s" % (exe, label, lib))
            else:
                t.check(r["object"].endswith("/" + exe), "%s: %s is in %s" % (exe, label, exe))
        t.check(named >= 0.8 * total,
                "%s: the three known places hold %d of %d samples" % (exe, named, total))
        procs = top["processes"]
        t.check(len(procs) == 1 and procs[0]["comm"] == exe[:15],
                "%s: the exited process keeps its name (%s)" % (exe, procs and procs[0]["comm"]))
    # The whole machine: kernel functions are named from kallsyms.
    top = d.json("top", "--limit", "0")
    kernel = [r for r in top["symbols"] if r["kind"] == "kernel" and r["name"]]
    t.check(kernel and all(r["object"].startswith("[") for r in kernel),
            "kernel samples are named (%s)" % ", ".join(r["name"] for r in kernel[:3]))
    st = top["statistics"]
    t.check(st["symbol_objects"] >= 4 and st["model_processes"] > 10,
            "the model and the cache are in use (%d objects, %d processes)" % (
                st["symbol_objects"], st["model_processes"]))
    # Text output: the bracket shows, lines fit in 80 columns.
    _, text, _ = d.ctl("top", "--pid", str(done[2][3]["pid"]))
    print(text)
    t.check("fix_a->fix_b" in text, "text output shows the bracket")
    t.check(all(len(line) < 80 for line in text.splitlines()), "text lines fit in 80 columns")
