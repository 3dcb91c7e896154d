"""Capture: N pipe round trips between two processes on one CPU must show at
least 2N switch-outs of those processes in the window, with nothing lost."""
import time

import rsptest as t

t.need_root()
N = 20000

with t.Rspd() as d:
    w = t.workload("pipe_pingpong", N, 0)
    d.settle()
    # Under ASan on a loaded machine the capture thread can be a few drain
    # periods behind: ask until the counts stop growing (10 s at most).
    last, deadline = None, time.time() + 10
    while time.time() < deadline:
        now = [d.json("status", "--pid", str(w[r]))["threads"] for r in ("parent", "child")]
        if now == last:
            break
        last = now
        time.sleep(0.5)
    per = {}
    for role in ("parent", "child"):
        st = d.json("status", "--pid", str(w[role]))
        threads = st["threads"]
        t.check(len(threads) == 1 and threads[0]["tid"] == w[role],
                "%s %d has exactly one thread in the window" % (role, w[role]))
        per[role] = threads[0]
        print("   %s: %s" % (role, threads[0]))
    outs = per["parent"]["switches_out"] + per["child"]["switches_out"]
    ins = per["parent"]["switches_in"] + per["child"]["switches_in"]
    wakes = per["parent"]["wakeups"] + per["child"]["wakeups"]
    ev = d.json("status", "--events")
    # the kernel's own counts (getrusage: the child's whole life, the
    # parent's up to its last read) tell a missed record from a workload
    # that switched less than its construction says
    t.check(outs >= 2 * N, "switch-outs %d >= 2N = %d (lost %d, window gaps %d, skipped "
            "nested %d; the kernel counted %d parent + %d child switches; rsp %d + %d)"
            % (outs, 2 * N, ev["lost"], ev["events"]["lost_records"], ev["skipped_nested"],
               w["parent_switches"],
               w["child_switches"], per["parent"]["switches_out"],
               per["child"]["switches_out"]))
    t.check(ins >= 2 * N, "switch-ins %d >= 2N = %d (the kernel counted %d + %d switches; "
            "rsp %d + %d in)" % (ins, 2 * N, w["parent_switches"], w["child_switches"],
                                 per["parent"]["switches_in"], per["child"]["switches_in"]))
    # Each round trip wakes at least one side (the writer is often preempted
    # by the reader it woke before it blocks, so it need not sleep itself).
    t.check(wakes >= N - 2, "wakeups %d >= N - 2" % wakes)
    t.check(per["parent"]["comm"] == "pipe_pingpong", "comm is decoded")
    st = d.json("status", "--events")
    t.check(st["lost"] == 0, "no records lost (%d)" % st["lost"])
    t.check(all(c["lost"] == 0 for c in st["cpus"]), "no CPU lost records")
    t.check(st["window"]["dropped"] == 0, "the window dropped nothing")
    t.check(st["events"]["lost_records"] == 0, "no gap markers in the window")
    t.check(st["events"]["sched_switch"] >= 2 * N, "sched_switch records in the window")
    sched = [f for f in st["families"] if f["name"] == "sched"][0]
    want = "bpf" if st["config"]["capture"] == "bpf" else "tracepoint"
    t.check(sched["source"] == want and sched["events_open"] == 6,
            "all six sched events open, from %s (%s)" % (want, sched["source"]))
    # The live timeline (the histograms' feed) was fed every switch, and says
    # how many it infers were not delivered (system-wide: other CPUs go idle)
    deadline = time.time() + 20
    while time.time() < deadline:
        dl = d.json("status")["delivery"]
        if dl and dl["switches"] >= 2 * N:
            break
        time.sleep(0.5)
    t.check(dl is not None and dl["switches"] >= 2 * N,
            "the live timeline was fed the switches (%s)" % dl)
    t.check(all(0 <= dl[k] <= dl["switches"] for k in
                ("switch_outs_not_seen", "switch_ins_not_seen", "wakings_not_seen")),
            "what it infers was not delivered is counted (%s)" % dl)
