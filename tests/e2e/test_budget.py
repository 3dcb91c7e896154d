"""The overhead budget (rspd --overhead-budget PCT).

Known answer: rspd idle costs well under 1% of a CPU; pipe_pingpong
pinned to one CPU is a switch storm (hundreds of thousands of switches and
wakings a second, each with stacks), which costs rspd and its BPF programs
far more than a 4% budget. Under the storm rspd degrades the BPF programs
(status shows the level and when it changed, the log says why, a snapshot
of the storm says its range was degraded), and once the storm is over it
recovers to full capture. Under the perf backend the budget is measured,
not enforced, and status says so."""
import os
import signal
import subprocess
import time

import rsptest as t

t.need_root()

if os.environ.get("RSP_TEST_CAPTURE") == "perf":
    with t.Rspd("--overhead-budget", "2") as d:
        o = d.json("status")["overhead"]
        t.check(not o["enforced"] and "perf backend" in o.get("note", ""),
                "perf backend: measured, not enforced (%s)" % o.get("note"))
    raise SystemExit(0)


def overhead(d):
    return d.json("status")["overhead"]


# Without the syscall programs (the family, and the system's profiles that
# rspd keeps without it): the budget counts their programs too
# (test_budget_programs), but degrading capture cannot shed them, and on a
# shared machine other users' syscalls alone can cost more than 2%.
NO_SYSCALLS = ("--families", "sched,block,irq,timer,sample,net,sideband", "--no-syscall-system")
# 4%: rspd recovers after 5 s under half the budget, and idle it measured
# 0.5-1.0% of a CPU on a quiet machine (3% while other builds ran): under
# a 2% budget the recovery's margin was nothing. The storm costs ~30%.
# Under the sanitizers rspd idle costs 1.6-2.2% (measured), at half of 4%:
# it then hardly ever spends the 5 s in a row under half that a recovery
# needs. There the budget is 8%; the storm still costs 100% and more.
with open(t.RSPD, "rb") as f:
    SANITIZED = b"libasan.so" in f.read()
BUDGET = 8 if SANITIZED else 4
with t.Rspd("--capture", "bpf", "--overhead-budget", str(BUDGET), *NO_SYSCALLS) as d:
    time.sleep(3)
    o = overhead(d)
    t.check(o["enforced"] and o["level"] == 0 and o["budget_pct"] == BUDGET,
            "idle: enforced, full capture (cost %.2f%% of a CPU)" % o["cost_pct"])
    t0 = t.now_s()
    # its own process group: the child goes with the parent
    storm = subprocess.Popen([os.path.join(t.WORKLOADS, "pipe_pingpong"), "2000000", "0"],
                             stdout=subprocess.DEVNULL, start_new_session=True)
    deadline, top = time.time() + 20, 0
    while time.time() < deadline and top < 2:
        time.sleep(0.5)
        o = overhead(d)
        top = max(top, o["level"])
    os.killpg(storm.pid, signal.SIGKILL)
    storm.wait()
    t1 = t.now_s()
    print("   under the storm: %s" % {k: o[k] for k in ("cost_pct", "level", "level_name")})
    t.check(top >= 2, "the storm drove it down to level %d (%s)" % (top, o["level_name"]))
    t.check(o["changes"] and all(c["cost_pct"] > BUDGET for c in o["changes"]),
            "each degradation was over budget: %s" % [(c["to"], round(c["cost_pct"], 1))
                                                      for c in o["changes"]])
    log = d.read_log()
    t.check("overhead budget: capture cost" in log and "level 0 -> 1" in log,
            "the log says when and why")
    s = d.json("snapshot", str(storm.pid), "--last", "%dms" % int((t.now_s() - t0 + 1) * 1000))
    t.check(s["degraded"] and s["degraded"][0]["level"] >= 1,
            "a snapshot of the storm says its range was degraded: %s" %
            [(x["level"], round(x["to_s"] - x["from_s"], 2)) for x in s["degraded"]])
    _, text, _ = d.ctl("status")
    t.check("overhead:" in text and "budget %.1f%%" % BUDGET in text,
            "status text: the overhead line")
    # Under the sanitizers the histograms' thread takes 5-10 s to
    # read the storm's records after it (capture's cost, which the budget
    # counts: it went on degrading for 4 s after the storm), then each
    # level back takes 5 s under half the budget.
    deadline = time.time() + (120 if SANITIZED else 60)
    while time.time() < deadline and overhead(d)["level"] > 0:
        time.sleep(1)
    o = overhead(d)
    t.check(o["level"] == 0 and o["changes"][-1]["to"] == 0,
            "after the storm it recovered to full capture (%d changes, %.1f s after it): %s" %
            (o["changes_total"], o["changes"][-1]["time_s"] - t1,
             [(c["from"], c["to"], round(c["cost_pct"], 1), round(c["time_s"] - t1, 1))
              for c in o["changes"]]))
    # Questions are not capture's cost: graphs of the storm's window, one
    # after the other for 4 s (a query thread busy most of the time, far
    # over the budget), leave the level where it is, and status shows them.
    changes = o["changes_total"]
    t2, top_q = time.time(), 0.0
    while time.time() < t2 + 4:
        d.ctl("graph", "--last", "60s", check_rc=False)
        top_q = max(top_q, overhead(d)["query_pct"])
    time.sleep(1.5)  # the tick after the last query
    o = overhead(d)
    new = o["changes"][len(o["changes"]) - (o["changes_total"] - changes):] \
        if o["changes_total"] > changes else []
    t.check(top_q > BUDGET and o["changes_total"] == changes and o["level"] == 0,
            "queries costing up to %.1f%% of a CPU (budget %d%%) left capture alone: "
            "%d changes since, level %d%s" % (
                top_q, BUDGET, o["changes_total"] - changes, o["level"],
                "".join("; %d -> %d at %.1f s: cost %.1f%% (rspd %.1f%%, BPF %.1f%%, "
                        "queries %.1f%% and %.1f%% of BPF left out)" %
                        (c["from"], c["to"], c["time_s"] - t1, c["cost_pct"], c["rspd_pct"],
                         c["bpf_pct"], c["query_pct"], c["unshed_bpf_pct"]) for c in new)))
