"""The overhead budget counts the run time of every BPF program rspd loads:
the capture programs, the syscall family's (bpf/syscalls.bpf.c) and the
stopwatches' (bpf/stopwatch.bpf.c), all timed by the kernel once rspd holds
BPF_STATS_RUN_TIME.

Known answer: a stopwatch on nanosleep and tests/workloads/syscall_mix (M
nanosleeps, N fsyncs) make the stopwatch programs run at least 2*M times
and, on the BPF backend, the syscall family's at least 2*(M+N): their run
time since start, in status, is above 0 and their shares are parts of the
BPF share. On the perf backend the syscall family is off (its run time 0)
and the stopwatches still count.
"""
import os
import tempfile
import time
import rsptest as t

t.need_root()
N, M = 5, 1500  # M nanosleeps of 1 ms: longer than a second, so a run-time sample (100 ms of each second) sees them
bpf = os.environ.get("RSP_TEST_CAPTURE") == "bpf"

with t.Rspd("--overhead-budget", "90", "--families", "+syscall") as d:
    rc, _, err = d.ctl("stopwatch", "add", "syscall:nanosleep", "--comm", "syscall_mix",
                       "--name", "ns", check_rc=False)
    if rc != 0:
        print("SKIP: no stopwatch here: %s" % err.strip())
        raise SystemExit(t.SKIP)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        w = t.workload("syscall_mix", N, M, tmp)
    deadline = time.time() + 20
    while time.time() < deadline:
        o = d.json("status")["overhead"]
        if o["stopwatch_bpf_ns"] > 0 and (o["syscall_bpf_ns"] > 0 or not bpf):
            break
        time.sleep(0.5)
    print("   overhead: %s" % {k: v for k, v in o.items() if k != "changes"})
    sw = d.json("stopwatch", "show", "ns")
    print("   stopwatch: %s" % str(sw)[:300])
    t.check(o["stopwatch_bpf_ns"] > 0, "the stopwatch programs' run time counts: %d ns"
            % o["stopwatch_bpf_ns"])
    if bpf:
        t.check(o["syscall_bpf_ns"] > 0, "the syscall family's run time counts: %d ns"
                % o["syscall_bpf_ns"])
    else:
        t.check(o["syscall_bpf_ns"] == 0, "perf backend: no syscall family, no run time")
    t.check(0 <= o["syscall_bpf_pct"] + o["stopwatch_bpf_pct"] <= o["bpf_pct"] + 1e-9,
            "their shares (%.3f%% + %.3f%%) are parts of the BPF share %.3f%%"
            % (o["syscall_bpf_pct"], o["stopwatch_bpf_pct"], o["bpf_pct"]))
    text = d.ctl("status")[1]
    t.check("of BPF: syscall profiles" in text, "status text shows their share")
