"""Symbols in the snapshot's stacks (the process model and symbol cache of
`rspctl top`, issue 5 phase 1): sym_burn spends its CPU time in burn_exe,
fix_a and the static fix_hidden, and exits before the query. Known answer:
the samples' stacks in the chain (JSON) and in the folded file name
fix_hidden exactly when nothing is stripped, and "fix_a->fix_b" (the
bracket between exported functions) for the stripped library."""
import os

import rsptest as t
import snaptest as st

t.need_root()
FIX = os.path.join(t.BUILD, "fixtures")
RUNS = [("sym_burn", "libsymfix.so", ["burn_exe", "fix_a", "fix_hidden"]),
        ("sym_burn.stripped", "libsymfix.stripped.so", ["fix_a", "fix_a->fix_b"])]
FOLDED = st.tmpfile(".folded")

try:
    with t.Rspd() as d:
        done = [(exe, want, t.workload(exe, os.path.join(FIX, lib), 1.0))
                for exe, lib, want in RUNS]
        d.settle(0.8)
        for exe, want, w in done:
            t.check(not os.path.exists("/proc/%d" % w["pid"]), "%s has exited" % exe)
            s = d.json("snapshot", str(w["pid"]), "--last", "30s", "--folded", FOLDED)
            frames = {f["name"] for n, _ in st.nodes(s) if n["kind"] == "sample"
                      for f in n["stack"]}
            for name in want:
                t.check(name in frames, "%s: a sampled stack in the chain names %s" %
                        (exe, name))
            rows = st.parse_folded(FOLDED)
            flat = {f for fr, _ in rows for f in fr}
            for name in want:
                t.check(name in flat, "%s: the folded stacks name %s" % (exe, name))
            t.check(any(f[0].startswith(exe[:15]) for f, _ in rows),
                    "%s: the exited process keeps its name in the folded stacks" % exe)
finally:
    if os.path.exists(FOLDED):
        os.unlink(FOLDED)
