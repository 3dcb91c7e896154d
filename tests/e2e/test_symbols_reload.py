"""A file rewritten in place while its copy is served from the same cached
symbol table (issue 40, finding 1). `prog` and `prog_copy` are one build
(same build-id and size); after `touch prog`, one query symbolizes
prog_copy's samples from prog's object, then finds prog changed and reads it
again: the old table must outlive the query, whose rows still point into it
(under the ASan build rspd aborted with a heap-use-after-free in top's sort).
Known answer: both programs' rows are named (burn_exe, fix_a, fix_hidden)
and rspd is still up."""
import math
import os
import shutil
import tempfile
import time

import rsptest as t

t.need_root()
FIX = os.path.join(t.BUILD, "fixtures")
LIB = os.path.join(FIX, "libsymfix.so")
CPU_S = 1.0
work = tempfile.mkdtemp(prefix="rsp-reload.")
prog, copy = os.path.join(work, "prog"), os.path.join(work, "prog_copy")
shutil.copy(os.path.join(t.WORKLOADS, "sym_burn"), prog)
shutil.copy(prog, copy)


def burn(path):
    w = t.run([path, LIB, str(CPU_S)])
    t.check(w.returncode == 0, "%s ran: %s" % (os.path.basename(path), w.stderr.strip()))


try:
    with t.Rspd() as d:
        burn(prog)
        d.settle(0.8)
        d.ctl("top", "--last", "6s")
        os.utime(prog)  # touch: same inode, another mtime
        time.sleep(3)  # the first run leaves the next query's span: prog_copy comes first
        start = time.monotonic()
        burn(copy)
        burn(prog)
        d.settle(0.8)
        last = "%ds" % math.ceil(time.monotonic() - start + 0.5)
        top = d.json("top", "--last", last, "--limit", "0")
        names = {r["name"] for r in top["symbols"]}
        t.check({"burn_exe", "fix_a", "fix_hidden"} <= names,
                "the rows are named after the reload (%s)" % sorted(n for n in names if n)[:8])
        st = top["statistics"]
        t.check(d.alive(), "rspd is still up after the query")
        _, text, _ = d.ctl("top", "--last", last)
        t.check("burn_exe" in text, "the text answer names burn_exe")
        print("   symbol objects %d" % st["symbol_objects"])
finally:
    shutil.rmtree(work, ignore_errors=True)
