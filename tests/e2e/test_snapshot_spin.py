"""Busy waiting without annotations (issue 36, step 3): cpu-clock samples
in known spin loops (rsp/spin.h: glibc's pthread_spin_lock, sched_yield)
are "busy waiting (spin)" in the snapshot's table and "spinning" in top.
The workload is spin_fsync_plain (no USDT notes): a holder takes a
pthread_spinlock_t across pwrite + fdatasync, the spinner takes the same
lock in a loop and works 70 us of CPU per acquisition (20 held, 50 not).

Known answer, on either capture backend: the spinner's CPU time is its
work, 70 us per acquisition (wl_spin_ns() counts CPU time), and the rest,
spinning in pthread_spin_lock. So the share of its cpu-clock samples that
top calls spinning, and the share of its running that the snapshot calls
busy waiting, are 1 - acquisitions * 70 us / its CPU time, within 10
points: at 1 kHz the spinner has ~1000 samples over 2 s (binomial sd <= 1.6
points), and its work's own overhead (clock_gettime around each spin, the
loops' last check) is counted as work by the workload but lands partly in
the kernel or the vdso either way (a few points). On a quiet machine with
a disk whose fdatasync takes milliseconds that share is >= 85% and the
issue's answer, >= 80% of its samples spinning in pthread_spin_lock, is
checked as such; on a loaded one (the holder waits for a CPU, the spinner
finds the lock free more often) it is reported and the agreement above is
what is checked. --no-annotations tells nothing apart; --spin-symbol adds a
loop; `rspctl analyze DUMP snapshot` says what rspd said live."""
import json
import os
import shutil
import tempfile

import graphtest as gt
import rsptest as t

t.need_root()
DIR = os.environ.get("RSP_TEST_DIR", "/var/tmp")
TOL = 0.10
work = tempfile.mkdtemp(prefix="rsptest-spin.")


def expected_share(w):
    """The share of the spinner's CPU time spent spinning, by the workload's own count."""
    return max(0.0, 1.0 - w["acquisitions"] * w["work_ns"] / 1e9 / w["cpu_spinner_s"])


def spinner_share(js, tid):
    """Of thread @tid's own sampled running in a snapshot (its RUN nodes and their
    SAMPLE children): (busy waiting, busy waiting + understood), in seconds. Runs
    no sample fell in are left out: top's share is of samples too."""
    spin = sampled = 0.0
    for root in js["chain"]:
        if root.get("tid") != tid:
            continue
        for r in root["children"]:
            if r["kind"] != "run":
                continue
            for n in [r] + r["children"]:
                c = n["categories"]
                spin += c.get("spin", 0.0)
                sampled += c.get("spin", 0.0) + c.get("understood", 0.0)
    return spin, sampled


def analyze(path, *args):
    p = t.run([t.RSPCTL, "analyze", path] + list(args), timeout=300, cwd=work)
    if p.returncode != 0:
        t.fail("rspctl analyze %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


try:
    with t.Rspd("--freq", "1000", "--dump-dir", work) as d:
        d.settle(1)
        w = gt.workload("spin_fsync_plain", 2, DIR)
        print("   %s" % w)
        want = expected_share(w)
        d.settle()
        win = d.json("status")["window"]
        rng = ["--from", repr(win["oldest_s"]), "--to", repr(win["newest_s"])]
        d.settle()
        pid, tid = str(w["pid"]), w["tid_spinner"]

        top = d.json("top", "--pid", pid, "--tid", str(tid), *rng)
        sp = top["spinning"]
        got = sp["samples"] / max(1, top["samples"])
        print("   top: %d of %d samples spinning (%.1f%%; the workload's count: %.1f%%), "
              "loops %s" % (sp["samples"], top["samples"], 100 * got, 100 * want,
                            [(x["name"], x["samples"]) for x in sp["loops"]]))
        t.check(top["samples"] >= 200, "the spinner was sampled (%d samples)" % top["samples"])
        t.check(abs(got - want) <= TOL,
                "top: the spinner's samples spinning, %.1f%%, within %d points of its own "
                "count, %.1f%%" % (100 * got, 100 * TOL, 100 * want))
        t.check(sp["loops"] and sp["loops"][0]["name"] == "pthread_spin_lock"
                and sp["loops"][0]["samples"] >= 0.95 * sp["samples"],
                "top: the spinning is in pthread_spin_lock")
        if want >= 0.85:
            t.check(got >= 0.8, "the issue's answer: >= 80%% of the spinner's samples spin "
                    "in pthread_spin_lock (%.1f%%)" % (100 * got))
        else:
            print("   (the issue's >= 80%% not checked: this run spun %.1f%% of its CPU "
                  "time, a loaded machine or a fast disk)" % (100 * want))
        _, text, _ = d.ctl("top", "--pid", pid, "--tid", str(tid), *rng)
        t.check("spinning (busy waiting): %d samples" % sp["samples"] in text,
                "top's text says how many samples spin")

        # --spin-symbol: the heaviest row that is not spinning becomes a loop too
        rows = [r for r in top["symbols"] if r["name"] and not r.get("spinning_samples")]
        extra = d.json("top", "--pid", pid, "--tid", str(tid), *rng,
                       "--spin-symbol", rows[0]["name"])["spinning"]
        t.check(extra["samples"] >= sp["samples"] + rows[0]["samples"]
                and rows[0]["name"] in [x["name"] for x in extra["loops"]],
                "--spin-symbol %s: its %d samples spin too (%d in all)"
                % (rows[0]["name"], rows[0]["samples"], extra["samples"]))

        live = d.json("snapshot", pid, *rng)
        spin, run = spinner_share(live, tid)
        print("   snapshot: the spinner ran %.3f s sampled, %.3f s of it busy waiting; "
              "table: %s" % (run, spin, {k: round(v, 3) for k, v in live["categories"].items()
                                         if v}))
        t.check(run > 0 and abs(spin / run - want) <= TOL,
                "snapshot: the spinner's sampled running is busy waiting for %.1f%%, within "
                "%d points of %.1f%%" % (100 * spin / max(run, 1e-9), 100 * TOL, 100 * want))
        t.check(live["categories"].get("spin", 0) >= spin,
                "the table's busy waiting (spin), %.3f s, holds the spinner's"
                % live["categories"].get("spin", 0))
        _, text, _ = d.ctl("snapshot", pid, *rng)
        t.check("busy waiting (spin)" in text and "pthread_spin_lock (spin)" in text,
                "the text table and the spinner's hot line say so")
        raw = d.json("snapshot", pid, *rng, "--no-annotations")
        t.check(not raw["categories"].get("spin"),
                "--no-annotations: no busy waiting told apart")
        _, out, _ = d.ctl("dump", "--json")
        path = json.loads(out)["path"]

    off = json.loads(analyze(path, "snapshot", pid, *rng, "--json"))
    a, b = live["categories"].get("spin", 0), off["categories"].get("spin", 0)
    t.check(abs(a - b) <= 0.01 * a + 0.001,
            "rspctl analyze DUMP snapshot: busy waiting %.4f s, live %.4f s" % (b, a))
finally:
    shutil.rmtree(work, ignore_errors=True)
