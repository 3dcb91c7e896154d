"""The curl pattern the Recursive Systemic Profiler found: the main thread
starts a resolver thread (2 ms of work) that never signals it, and polls
with a 5 ms timeout. Known answer for `rspctl snapshot PID`: "waits that
timed out" is the largest category, about the time the main thread spent
in poll(); the resolvers are in the chain.

On this kernel the timer's wakeup on an idle CPU is not delivered; the
timeout is inferred from the timer the thread armed before it slept
(timer:hrtimer_start), and flagged as inferred."""
import rsptest as t
import snaptest as st

t.need_root()

with t.Rspd() as d:
    w = t.workload("curl_poll", 100)
    print("   workload: pid %d, %d requests, %.3f s, %.3f s in poll, resolvers %.3f s CPU" %
          (w["pid"], w["requests"], w["elapsed_s"], w["poll_s"], w["resolver_cpu_s"]))
    d.settle()
    s = st.snapshot(d, w["pid"], w["elapsed_s"])
    st.skip_if_gaps(s)
    cats = s["categories"]
    top = max(cats, key=cats.get)
    t.check(top == "timed_out", "the largest category is waits that timed out (%s)" % top)
    t.check(abs(cats["timed_out"] - w["poll_s"]) <= 0.15 * w["poll_s"],
            "timed out %.3f s, within 15%% of the main thread's time in poll() %.3f s" %
            (cats["timed_out"], w["poll_s"]))
    polls = [n for n, _ in st.nodes(s) if n["kind"] == "sleep" and n["reason"] == "poll"]
    t.check(polls and polls[0]["waker"]["kind"] == "timer" and
            polls[0].get("function", "").endswith("poll"),
            "the main thread sleeps in poll() and a timer ends it (%s)" %
            (polls and polls[0].get("function")))
    roots = {r.get("tid") for r in s["chain"]}
    got = [tid for tid in w["resolvers"] if tid in roots]
    t.check(len(got) >= 0.9 * len(w["resolvers"]),
            "the resolver threads are in the chain: %d of %d" % (len(got), len(w["resolvers"])))
    res = [r for r in s["chain"] if r.get("tid") in w["resolvers"]]
    run = sum(sum(v for k, v in c["categories"].items() if k in ("understood", "spin", "not_sampled"))
              + sum(g["total_s"] for g in c["children"])
              for r in res for c in r["children"] if c["kind"] == "run")
    t.check(abs(run - w["resolver_cpu_s"]) <= 0.2 * w["resolver_cpu_s"],
            "their running %.3f s is the resolvers' CPU time %.3f s (20%%)" %
            (run, w["resolver_cpu_s"]))
    _, text, _ = d.ctl("snapshot", str(w["pid"]), "--last", st.last(w["elapsed_s"]))
    print("\n".join(text.splitlines()[:40]))
    t.check("resolver" in text, "text: the resolvers are named")
