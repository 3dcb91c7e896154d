"""The Recursive Systemic Profiler's "pass": two processes pass work back
and forth over pipes. Known answer for `rspctl snapshot PARENT`: one chain,
the child's runs under the parent's sleeps in read(); at least 97% of the
time accounted; the time in understood functions (runs with cpu-clock
samples) within 10% of the CPU time both processes used (getrusage).

rspd samples at 1 kHz here: each turn is 3 ms of CPU, and a run is
"understood" only if a sample falls in it; a run also holds what the
machine spent in interrupts or lost to the hypervisor during it, which the
CPU time does not: the upper bound allows for that (/proc/stat). The files --folded and
--chrome-trace are checked by parsing them."""
import os
import time

import rsptest as t
import snaptest as st



def stolen_s():
    """Seconds all CPUs spent in interrupts and softirqs, or stolen by the
    hypervisor (/proc/stat): inside a thread's runs as rsp times them by its
    switches, but not in its CPU time (getrusage)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


t.need_root()
FOLDED, TRACE = st.tmpfile(".folded"), st.tmpfile(".json")

try:
    with t.Rspd("--freq", "1000") as d:
        t0 = time.time()
        stolen0 = stolen_s()
        w = t.workload("pass", 300, 3000)
        stolen = stolen_s() - stolen0
        print("   workload: %s" % w)
        d.settle()
        s = st.snapshot(d, w["parent"], w["elapsed_s"], "--folded", FOLDED,
                        "--chrome-trace", TRACE)
        st.skip_if_gaps(s)
        t.check(s["percent_accounted"] >= 97.0,
                "%.1f%% of the time accounted (>= 97%%)" % s["percent_accounted"])
        t.check(abs(s["wall_s"] - w["elapsed_s"]) <= 0.05 * w["elapsed_s"],
                "wall time %.3f s is the run's %.3f s" % (s["wall_s"], w["elapsed_s"]))
        inchain = st.threads_in_chain(s)
        t.check({w["parent"], w["child"]} <= inchain,
                "both processes are in the chain (%s)" % sorted(inchain))
        root = s["chain"][0]
        t.check(root["pid"] == w["parent"], "the first root is the parent")
        under = [n for n, path in st.walk(root)
                 if n["kind"] == "thread" and n.get("tid") == w["child"] and path]
        t.check(under and sum(n["total_s"] for n in under) >= 0.3 * w["elapsed_s"],
                "the child's time is under the parent's sleeps (%.3f s)" %
                sum(n["total_s"] for n in under))
        pipe = [n for n, _ in st.walk(root) if n["kind"] == "sleep" and n["reason"] == "pipe"]
        t.check(pipe and pipe[0].get("function", "").endswith("read"),
                "the parent sleeps in read() (%s)" % (pipe and pipe[0].get("function")))
        und = s["categories"]["understood"]
        t.check(-0.10 * w["cpu_s"] <= und - w["cpu_s"] <= 0.10 * w["cpu_s"] + stolen,
                "in understood functions %.3f s, within 10%% of the CPU time %.3f s (and "
                "above it by at most the %.3f s the machine spent in interrupts or gave "
                "to the hypervisor meanwhile)" % (und, w["cpu_s"], stolen))
        # the folded file: FlameGraph's reading of it adds up to the total time
        rows = st.parse_folded(FOLDED)
        us = sum(c for _, c in rows)
        t.check(abs(us - s["total_s"] * 1e6) <= 0.01 * s["total_s"] * 1e6 + len(rows),
                "folded: %d stacks add up to %d us (total %.0f us)" %
                (len(rows), us, s["total_s"] * 1e6))
        t.check(all(f[0].startswith(("pass ", "path ")) for f, _ in rows),
                "folded: every stack starts with a process (or another control path)")
        across = [f for f, _ in rows if "[sleep:pipe]" in f and
                  any(x.startswith("pass (pid %d)" % w["child"]) for x in f)]
        t.check(across, "folded: stacks go from the parent's read() into the child")
        tr = st.check_chrome(TRACE, [w["parent"], w["child"]])
        print("   chrome trace: %d events" % len(tr["traceEvents"]))
        _, text, _ = d.ctl("snapshot", str(w["parent"]), "--last", st.since(t0))
        print(text)
        t.check("total accounted" in text and "in understood functions" in text,
                "text: the table of categories")
        t.check(all(len(line) < 80 for line in text.splitlines()), "text lines fit in 80 columns")
finally:
    for f in (FOLDED, TRACE):
        if os.path.exists(f):
            os.unlink(f)
