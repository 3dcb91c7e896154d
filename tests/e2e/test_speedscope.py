"""rspctl's exports for other tools: --speedscope files (speedscope's
format, validated against its published schema) and the Chrome trace's
pseudostack tracks (the chronological flame view in Perfetto).

Known answers:
- pipe_pingpong (two processes pass a byte over pipes, N round trips, on
  one CPU): the parent's chronological view alternates running and waiting
  for the child, once per round trip (N +- 2): asleep in read(), or
  preempted by the child it woke (on one CPU either may happen); the
  child's turn nests in that wait. The Chrome trace's pseudostack track
  holds the same slices, nested the same way.
- burn7030 (one thread: 70% of its CPU in hot7, 30% in cold3): in
  `top --speedscope` (sampled, per thread) and in `snapshot --speedscope`'s
  consolidated profile, both functions with those shares within 5 points.
"""
import os
import time

import rsptest as t
import snaptest as st
import sscope as ss

t.need_root()
V = ss.schema_validator()
SNAP, TOP, TRACE, SNAP2 = (st.tmpfile(".speedscope.json"), st.tmpfile(".speedscope.json"),
                           st.tmpfile(".json"), st.tmpfile(".speedscope.json"))
TURNS = 300

try:
    with t.Rspd("--freq", "1000") as d:
        # ---- pipe_pingpong: the chronological view
        w = t.workload("pipe_pingpong", TURNS)
        print("   workload: %s" % w)
        d.settle()
        s = st.snapshot(d, w["parent"], w["elapsed_s"], "--speedscope", SNAP,
                        "--chrome-trace", TRACE)
        st.skip_if_gaps(s)
        doc = ss.load(SNAP, V)
        ev = [p for p in doc["profiles"] if p["type"] == "evented"]
        sm = [p for p in doc["profiles"] if p["type"] == "sampled"]
        t.check(len(sm) == 1 and sm[0]["name"].startswith("consolidated"),
                "speedscope: one sampled profile, the consolidated view")
        par = [p for p in ev if p["name"] == "pipe_pingpong (pid %d)" % w["parent"]]
        t.check(len(par) == 1, "speedscope: an evented profile of the parent's thread (%s)" %
                [p["name"] for p in ev])
        opens = ss.evented_opens(doc, par[0])
        # the parent's stretches, each with whether the child's work nests in it
        top, mine = [], "(pid %d)" % w["child"]
        for dep, name, _ in opens:
            if dep == 0:
                top.append([name, False])
            elif dep == 1 and mine in name and top:
                top[-1][1] = True
        waits = [n for n, child in top if child and n.startswith(("sleep", "preempted"))]
        print("   parent: %d stretches; %d waits with the child's turn in them: %d sleeps "
              "in read, %d preempted by the child" %
              (len(top), len(waits), sum(n.startswith("sleep pipe") for n in waits),
               sum(n == "preempted" for n in waits)))
        t.check(abs(len(waits) - TURNS) <= 2,
                "one wait for the child per round trip: %d waits, %d round trips (+-2)" %
                (len(waits), TURNS))
        # between two waits for the child the parent ran
        ran = [n for n, _ in top]
        idx = [i for i, (n, child) in enumerate(top) if child and
               n.startswith(("sleep", "preempted"))]
        # (a busy machine may split one round trip's wait in two, as it may
        # the count: the same tolerance)
        back = [ran[i:j + 1] for i, j in zip(idx, idx[1:])
                if not any(x.startswith("running") for x in ran[i + 1:j])]
        t.check(len(back) <= 2,
                "the parent's stretches alternate: it runs between two waits (%d exceptions%s)"
                % (len(back), ": %s" % back[:2] if back else ""))
        total_us = sum(sm[0]["weights"])
        t.check(abs(total_us - s["total_s"] * 1e6) <= 0.01 * s["total_s"] * 1e6 + len(
                sm[0]["weights"]), "speedscope: the consolidated weights add up to the total "
                "%.0f us (%d us)" % (s["total_s"] * 1e6, total_us))
        # ---- the Chrome trace: today's tracks, and the nest on its own track
        tr = st.check_chrome(TRACE, [w["parent"], w["child"]])
        nest = ss.check_chrome_nest(tr, w["parent"])
        cwaits = {e["ts"] for dep, e in nest if dep == 1 and e["args"]["tid"] == w["child"]}
        t.check(len(nest) == len(opens) and len(cwaits) >= len(waits),
                "chrome trace: the parent's pseudostack track has the same %d slices, the "
                "child's work nested in its waits" % len(nest))

        # ---- burn7030: the same shares in both sampled profiles
        t0 = time.time()
        b = t.workload("burn7030", 2)
        print("   workload: %s" % b)
        d.settle()
        d.ctl("top", "--pid", str(b["pid"]), "--last", st.since(t0), "--speedscope", TOP)
        doc = ss.load(TOP, V)
        th = [p for p in doc["profiles"] if p["name"] == "burn7030 (pid %d)" % b["pid"]]
        t.check(len(th) == 1 and th[0]["type"] == "sampled",
                "top speedscope: a sampled profile of the thread (%s)" %
                [p["name"] for p in doc["profiles"]])
        n = sum(th[0]["weights"])
        sh = ss.sampled_shares(doc, th[0], ["hot7", "cold3"])
        expect = 100.0 * b["hot_s"] / (b["hot_s"] + b["cold_s"])
        print("   top: %d samples, hot7 %.1f%%, cold3 %.1f%% (CPU time: %.1f%% hot)" %
              (n, sh["hot7"], sh["cold3"], expect))
        t.check(n >= 500, "top: %d samples of the thread (>= 500)" % n)
        t.check(abs(sh["hot7"] - 70) <= 5 and abs(sh["cold3"] - 30) <= 5,
                "top speedscope: hot7 %.1f%% and cold3 %.1f%% of the samples (70/30 +- 5)" %
                (sh["hot7"], sh["cold3"]))
        s = st.snapshot(d, b["pid"], time.time() - t0, "--speedscope", SNAP2)
        doc = ss.load(SNAP2, V)
        cons = [p for p in doc["profiles"] if p["type"] == "sampled"][0]
        sh2 = ss.sampled_shares(doc, cons, ["hot7", "cold3"])
        run = sh2["hot7"] + sh2["cold3"]
        print("   snapshot: hot7 %.1f%%, cold3 %.1f%% of the time" % (sh2["hot7"], sh2["cold3"]))
        t.check(run > 0 and abs(100 * sh2["hot7"] / run - 70) <= 5,
                "snapshot speedscope: of the time in the two, hot7 %.1f%% (70 +- 5)" %
                (100 * sh2["hot7"] / run if run else 0))
finally:
    for f in (SNAP, TOP, TRACE, SNAP2):
        if os.path.exists(f):
            os.unlink(f)
