"""Whose file a stopwatch's BINARY names (issue 40, finding 6).

`rspctl stopwatch add ./prog:work` was resolved in rspd's working directory,
not the caller's: another file (or none) was attached. And
/proc/self/exe, which means the caller's program to the caller, was rspd's
own. Known answers, with rspctl run in a directory of its own:
./prog:work (a copy of stopwatch_work) is that copy, by its absolute path,
and times its 400 calls of work(); ./missing:work is refused naming the
caller's missing file; /proc/self/exe:main and a link to it are refused as
rspd's own executable, in one sentence each."""
import os
import shutil
import subprocess
import tempfile

import rsptest as t

t.need_root()
if os.environ.get("RSP_TEST_CAPTURE") == "bpf":
    print("SKIP: stopwatches have their own BPF programs, whatever the capture backend; "
          "tested in e2e.test_stopwatch_paths")
    raise SystemExit(t.SKIP)

work = tempfile.mkdtemp(prefix="rsp-swpaths.")
prog = os.path.join(work, "prog")
shutil.copy(os.path.join(t.WORKLOADS, "stopwatch_work"), prog)
os.symlink("/proc/self/exe", os.path.join(work, "self"))


def ctl(d, *args):
    """rspctl in @work, the caller's working directory."""
    p = subprocess.run([t.RSPCTL, "--socket", d.socket] + list(args), capture_output=True,
                       text=True, timeout=60, cwd=work)
    return p.returncode, p.stdout, p.stderr.strip()


def one_sentence(err):
    return err.startswith("rspctl:") and "\n" not in err


try:
    with t.Rspd() as d:
        rc, _, err = ctl(d, "stopwatch", "add", "./prog:work", "--name", "rel")
        t.check(rc == 0, "./prog:work is the caller's ./prog: " + err)
        sw = {s["name"]: s for s in d.json("stopwatch", "list")["stopwatches"]}
        where = sw.get("rel", {}).get("spec", "")
        t.check(prog in where, "... named by its absolute path (%s)" % where)
        p = t.run([prog, "work", "2", "200"], timeout=120)
        t.check(p.returncode == 0, "the copy ran")
        d.settle()
        calls = {s["name"]: s for s in d.json("stopwatch", "show")["stopwatches"]}
        n = calls.get("rel", {}).get("count")
        t.check(n == 400, "... and its 400 calls of work() are timed (%s)" % n)
        rc, _, err = ctl(d, "stopwatch", "add", "./missing:work")
        t.check(rc != 0 and one_sentence(err) and os.path.join(work, "missing") in err,
                "./missing:work names the caller's missing file: " + err)
        for spec in ("/proc/self/exe:main", "./self:main"):
            rc, _, err = ctl(d, "stopwatch", "add", spec)
            t.check(rc != 0 and one_sentence(err) and "rspd's own executable" in err,
                    "%s is refused: %s" % (spec, err))
finally:
    shutil.rmtree(work, ignore_errors=True)
