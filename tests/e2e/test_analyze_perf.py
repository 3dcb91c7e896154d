"""rspctl analyze reads what perf record writes: with the documented command
line, status --pid on the file finds the workload's threads and its run times
match perf sched timehist within 1%; the events the file lacks are named;
foreign and missing files get one sentence."""
import json
import os
import re
import shutil
import tempfile
import rsptest as t

t.need_root()
if not shutil.which("perf"):
    print("SKIP: perf is not installed (apt-get install linux-perf)")
    raise SystemExit(t.SKIP)

N = 5000
work = tempfile.mkdtemp(prefix="rsptest-perf.")
try:
    path = os.path.join(work, "perf.data")
    # The command line README.md documents (shortened to what this test needs).
    p = t.run(["perf", "record", "-q", "-a", "-k", "mono", "-o", path,
               "-e", "sched:sched_switch", "-e", "sched:sched_waking",
               "-e", "sched:sched_wakeup_new", "-e", "sched:sched_process_fork",
               "-e", "sched:sched_process_exec", "-e", "sched:sched_process_exit",
               "--", os.path.join(t.WORKLOADS, "pipe_pingpong"), str(N), "0"], timeout=300)
    t.check(p.returncode == 0, "perf record ran the workload")
    w = json.loads(p.stdout.strip().splitlines()[-1])

    rows = {}
    th = t.run(["perf", "sched", "timehist", "-i", path, "-s"], timeout=300)
    for line in th.stdout.splitlines():
        m = re.match(r"\s*(\S.*)\[(\d+)\]\s+(-?\d+)\s+(\d+)\s+([\d.]+)\s", line)
        if m:
            rows[int(m.group(2))] = float(m.group(5)) / 1e3
    for pid in (w["parent"], w["child"]):
        p = t.run([t.RSPCTL, "analyze", path, "status", "--pid", str(pid), "--json"])
        t.check(p.returncode == 0, "analyze status --pid %d on perf record's file" % pid)
        st = json.loads(p.stdout)
        thr = st["threads"]
        t.check(len(thr) == 1 and thr[0]["switches_out"] >= N and thr[0]["comm"] == "pipe_pingpong",
                "pid %d: one thread, >= %d switch-outs (%d)" % (pid, N, thr[0]["switches_out"]))
        rel = abs(thr[0]["run_time_s"] - rows[pid]) / rows[pid]
        t.check(rel <= 0.01, "pid %d run time: rsp %.6f s, perf sched timehist %.6f s"
                % (pid, thr[0]["run_time_s"], rows[pid]))
        t.check(st["dump"]["written_by_rsp"] is False and "perf record" in st["dump"]["cmdline"],
                "the file is recognised as perf record's")
        t.check("block_rq_issue" in st["dump"]["events_missing"] and
                "sched_waking" in st["dump"]["events_present"], "present and missing events named")

    # Not a perf.data file at all.
    junk = os.path.join(work, "junk")
    with open(junk, "w") as f:
        f.write("hello, this is not perf.data\n" * 10)
    p = t.run([t.RSPCTL, "analyze", junk, "status"])
    t.check(p.returncode == 1 and "offset 0x0: not a perf.data file" in p.stderr,
            "a foreign file: " + p.stderr.strip())
    p = t.run([t.RSPCTL, "analyze", os.path.join(work, "missing"), "status"])
    t.check(p.returncode == 1 and "No such file" in p.stderr, "a missing file: " + p.stderr.strip())
    p = t.run([t.RSPCTL, "analyze", path, "frobnicate"])
    t.check(p.returncode == 2 and "unknown command 'frobnicate'" in p.stderr,
            "an unknown command on a file")
finally:
    shutil.rmtree(work, ignore_errors=True)
