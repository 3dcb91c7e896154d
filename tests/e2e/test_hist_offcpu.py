"""Off-CPU time by sleep reason (rspctl hist --op offcpu), end to end.

Known answer (tests/workloads/sleep_two_peaks.c): one thread alternates
nanosleep(1 ms) and nanosleep(8 ms), N times each. Its off-CPU profile for
deliberate sleeps (offcpu:sleep) has exactly two peaks, one holding the
bucket of the short sleeps' median and one that of the long sleeps', each
with N sleeps (+-2), and 2N sleeps in all (+-2). rspd classifies the
sleeps from their kernel stacks (do_nanosleep) and, on this kernel, often
sees no wakeup (the timer fires on an idle CPU): the sleep then ends at the
thread's next record, microseconds later.

The machine is shared: when other work delays this thread's timers (the
workload's own measurements show sleeps far outside their buckets) and
rspd's answer is off, the run is repeated; only a run in which the workload
itself saw clean sleeps can fail the test, and when every run is disturbed
the test is skipped, never passed.
"""
import sys
import rsptest as t

t.need_root()

N = 200
ATTEMPTS = 4


def quiet(w):
    """Did the workload's own sleeps stay in their peaks' buckets?

    judge() wants all N short sleeps in one peak: a short sleep the workload
    itself measured at 2-4 ms (its timer delayed by other work) lies between
    the peaks whatever the profiler does, so such a run is noisy, not a
    failure. The workload counts those strays the way rsp buckets times.
    """
    return w["short_strays"] == 0 and w["long_strays"] == 0


def judge(d, w):
    """The problems with rspd's answer for workload run w (empty: right)."""
    h = d.json("hist", "--tid", str(w["tid"]), "--op", "offcpu:sleep")
    prof = [p for p in h["profiles"] if p["subject"]["kind"] == "thread"]
    if len(prof) != 1:
        return ["expected one offcpu:sleep profile for thread %d, got %d" % (w["tid"], len(prof))]
    p = prof[0]
    bad = []
    print("   thread %d: %d sleeps, buckets %s" % (w["tid"], p["count"], [
        (b["low_ns"], b["count"]) for b in p["buckets"]]))
    print("   peaks %s" % [(k["low_ns"], k["high_ns"], k["count"]) for k in p["peaks"]])
    if p["subject"]["comm"] != "sleep_two_peaks" or p["subject"]["pid"] != w["pid"]:
        bad.append("the profile names %s, not the workload" % p["subject_name"])
    if abs(p["count"] - 2 * N) > 2:
        bad.append("%d sleeps, expected %d +-2" % (p["count"], 2 * N))
    if len(p["peaks"]) != 2:
        return bad + ["%d peaks, expected exactly 2" % len(p["peaks"])]
    for k, what in zip(p["peaks"], ("short", "long")):
        med = w[what + "_median_ns"]
        if not k["low_ns"] <= med <= k["high_ns"]:
            bad.append("the %s peak %d..%d ns does not hold the %s sleeps' median %d ns" %
                       (what, k["low_ns"], k["high_ns"], what, med))
        if abs(k["count"] - N) > 2:
            bad.append("the %s peak holds %d sleeps, expected %d +-2" % (what, k["count"], N))
        inside = sum(b["count"] for b in p["buckets"]
                     if k["low_ns"] <= b["low_ns"] and b["high_ns"] <= k["high_ns"])
        if inside != k["count"]:
            bad.append("the %s peak's count %d is not its buckets' %d" % (what, k["count"], inside))
    return bad


with t.Rspd() as d:
    d.settle()
    noisy = 0
    for attempt in range(ATTEMPTS):
        w = t.workload("sleep_two_peaks", N)
        print("   workload: %s" % w)
        t.wait_fed(d, t.now_s())
        bad = judge(d, w)
        if not bad:
            break
        print("   attempt %d: %s" % (attempt + 1, "; ".join(bad)))
        if quiet(w):
            t.fail("on a run the workload measured as clean: " + "; ".join(bad))
        noisy += 1
    if noisy == ATTEMPTS:
        print("SKIP: every run was disturbed by other work on the machine (the workload's "
              "own sleeps left their buckets)")
        sys.exit(t.SKIP)
    t.check(not bad, "offcpu:sleep of thread %d: exactly two peaks, at the buckets of %d ns and "
            "%d ns, %d sleeps each (+-2)" % (w["tid"], w["short_median_ns"],
                                             w["long_median_ns"], N))

    # The process's profile is the thread's (one thread), and the system's holds it.
    hp = d.json("hist", "--pid", str(w["pid"]), "--op", "offcpu:sleep")
    pp = [p for p in hp["profiles"] if p["subject"]["kind"] == "process"]
    t.check(len(pp) == 1 and abs(pp[0]["count"] - 2 * N) <= 2 and len(pp[0]["peaks"]) == 2,
            "--pid %d: the process profile has the same two peaks" % w["pid"])
    hs = d.json("hist", "--op", "offcpu:sleep")
    sp = [p for p in hs["profiles"] if p["subject"]["kind"] == "system"]
    t.check(sp and sp[0]["count"] >= pp[0]["count"], "the system profile holds them too")

    # The text: bcc's table, the peaks, the note on inferred ends when there are any.
    text = d.ctl("hist", "--tid", str(w["tid"]), "--op", "offcpu:sleep")[1]
    print(text)
    t.check("nsecs" in text and "peak 1:" in text and "2:" in text
            and all(len(line) < 80 for line in text.splitlines()),
            "the text shows the table and both peaks, under 80 columns")

    # The other reasons are distinct operations: --op offcpu lists them per reason.
    ho = d.json("hist", "--tid", str(w["tid"]), "--op", "offcpu")
    ops = {p["op"] for p in ho["profiles"]}
    t.check("offcpu:sleep" in ops and all(o.startswith("offcpu:") for o in ops),
            "--op offcpu selects every reason (%s)" % ", ".join(sorted(ops)))
