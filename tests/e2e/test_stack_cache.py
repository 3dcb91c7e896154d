"""The BPF stack cache (rspd --stacks cached, the default) and its checks.

Known answer: two_waits 200 2 sleeps 200 times in one read() call site on
one fd, alternately a UNIX stream and a UNIX datagram socket: the same user
context, two kernel stacks. Under --stack-check every sleep is walked and
compared with what the cache had, the previous sleep's: nearly all of the
parent's checked sleep time has a different kernel stack, none a different
sleep reason (both are network waits), nothing is served from the cache,
and status counts the kernel stacks that differed. With a hit checked once
in 4, a good part of the time is served from the cache and the checks
still find it wrong half the time: counted, not hidden. Under the perf
backend, which walks every stack, `cached` is `sleeps` and status says so."""
import os

import rsptest as t
import snaptest as st

t.need_root()
N, MS = 200, 2

if os.environ.get("RSP_TEST_CAPTURE") == "perf":
    with t.Rspd() as d:
        s = d.json("status")
        cfg = s["config"]
        t.check(cfg["capture"] == "perf" and cfg["stacks"] == "sleeps",
                "perf backend: stacks cached become sleeps (%s)" % cfg["stacks"])
        t.check("BPF" in cfg.get("stacks_note", ""),
                "status says why (%s)" % cfg.get("stacks_note"))
        t.check(s["stack_cache"] is None, "no stack cache counters under perf")
    raise SystemExit(0)

with t.Rspd("--capture", "bpf", "--stack-check") as d:
    w = t.workload("two_waits", N, MS)
    print("   workload: %s" % w)
    d.settle()
    s = st.snapshot(d, w["parent"], w["elapsed_s"])
    st.skip_if_gaps(s)
    ss = s["sleep_stacks"]
    print("   sleep stacks: %s" % ss)
    t.check(ss["cached_s"] == 0, "--stack-check: no sleep served from the cache")
    t.check(ss["checked_s"] >= 0.9 * ss["sleep_s"] > 0,
            "--stack-check: %.3f s of %.3f s of sleeps checked" % (ss["checked_s"], ss["sleep_s"]))
    t.check(ss["stack_differ_s"] >= 0.8 * ss["checked_s"],
            "the kernel stack differed for %.3f s of the %.3f s checked" %
            (ss["stack_differ_s"], ss["checked_s"]))
    t.check(ss["reason_differ_s"] <= 0.02 * ss["checked_s"],
            "the sleep reason did not (%.3f s): both are network waits" % ss["reason_differ_s"])
    sc = d.json("status")["stack_cache"]
    print("   status: %s" % sc)
    # The counters are read one at a time while the programs run: a few sites
    # may be counted whose walks are not yet (never the other way round).
    t.check(sc["check"] and sc["cached"] == 0 and
            sc["sites"] - 16 <= sc["walked"] <= sc["sites"],
            "status: every stack walked under --stack-check")
    t.check(sc["kernel_differ"] >= 0.8 * N,
            "status: %d kernel stacks differed (the parent's %d sleeps)" % (sc["kernel_differ"], N))
    _, text, _ = d.ctl("status")
    t.check("checks differed: kernel" in text, "status text: the checks")

with t.Rspd("--capture", "bpf", "--stack-refresh", "4") as d:
    w = t.workload("two_waits", N, MS)
    d.settle()
    s = st.snapshot(d, w["parent"], w["elapsed_s"])
    st.skip_if_gaps(s)
    ss = s["sleep_stacks"]
    print("   sleep stacks: %s" % ss)
    t.check(ss["cached_s"] >= 0.3 * ss["sleep_s"] > 0,
            "a hit checked once in 4: %.3f s of %.3f s served from the cache" %
            (ss["cached_s"], ss["sleep_s"]))
    t.check(0 < ss["stack_differ_s"] <= ss["checked_s"],
            "its checks found the cache wrong for %.3f s of %.3f s checked" %
            (ss["stack_differ_s"], ss["checked_s"]))
    sc = d.json("status")["stack_cache"]
    t.check(sc["kernel_differ"] > 0 and sc["cached"] > 0,
            "status: %d served, %d kernel stacks differed in %d checks" %
            (sc["cached"], sc["kernel_differ"], sc["kernel_checks"]))
    _, text, _ = d.ctl("snapshot", str(w["parent"]), "--last", st.last(w["elapsed_s"]))
    t.check("from the stack cache" in text, "snapshot text: where the sleep stacks came from")
