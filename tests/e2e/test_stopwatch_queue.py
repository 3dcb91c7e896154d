"""rspctl stopwatch: a keyed pair of user functions (systemtap's "timing
items through queues"), with known answers.

The workload tests/workloads/stopwatch_work.c, mode "queue 60 5": a
producer thread calls enqueue(item) for 60 items, one a millisecond; a
consumer thread takes each and calls dequeue(item) 5 ms after its enqueue.
A stopwatch --start BIN:enqueue --end BIN:dequeue --key arg1 times each
item from one thread's enqueue to the other thread's dequeue: exactly 60,
none unmatched, min >= 5 ms, mean within 10% of the program's own clock
around the pair. Also: --pid of another process times none; bad specs
(no such function, a system call, arg7, --where) are one sentence each.

Stopwatches do not depend on the capture backend (their own BPF programs):
tested once, on the perf backend run."""
import os

import rsptest as t

t.need_root()
if os.environ.get("RSP_TEST_CAPTURE") == "bpf":
    print("SKIP: stopwatches have their own BPF programs, whatever the capture backend; "
          "tested in e2e.test_stopwatch_queue")
    raise SystemExit(t.SKIP)

W = os.path.join(t.WORKLOADS, "stopwatch_work")
N, WAIT_MS = 60, 5


def one_sentence(err):
    err = err.strip()
    return err.startswith("rspctl:") and "\n" not in err


def shown(d, name):
    return d.json("stopwatch", "show", name)["stopwatches"][0]


with t.Rspd() as d:
    _, out, _ = d.ctl("stopwatch", "add", "--start", W + ":enqueue", "--end", W + ":dequeue",
                      "--key", "arg1", "--name", "queue")
    t.check("enqueue" in out and "dequeue" in out and "arg1" in out,
            "add: what was probed: " + out.strip())
    wl = t.workload("stopwatch_work", "queue", N, WAIT_MS)
    s = shown(d, "queue")
    t.check(s["count"] == N, "queue: exactly %d items timed (%d)" % (N, s["count"]))
    t.check(s["unmatched"] == 0 and s["overflow"] == 0, "none unmatched or overflowed")
    t.check(s["min_ns"] >= WAIT_MS * 1000000,
            "min >= %d ms (%d ns): each item waited that long" % (WAIT_MS, s["min_ns"]))
    t.check(abs(s["mean_ns"] - wl["mean_ns"]) <= 0.1 * wl["mean_ns"],
            "mean %.0f ns within 10%% of the program's own %.0f ns"
            % (s["mean_ns"], wl["mean_ns"]))
    t.check(s["offcpu_share"] is None, "an item's time has no off-CPU share")
    _, out, _ = d.ctl("stopwatch", "show", "queue")
    print(out)

    # The same items with --pid of another process: no item is timed.
    d.ctl("stopwatch", "add", "--start", W + ":enqueue", "--end", W + ":dequeue",
          "--key", "arg1", "--pid", "1", "--name", "pid1")
    t.workload("stopwatch_work", "queue", 5, 1)
    t.check(shown(d, "pid1")["count"] == 0, "--pid 1: another process's items are not timed")

    for args, what in (
            (["--start", W + ":enqueue", "--end", W + ":nosuch", "--key", "arg1"],
             "defines no function"),
            (["--start", "syscall:read", "--end", W + ":dequeue", "--key", "arg1"],
             "wants BINARY:SYMBOL"),
            (["--start", W + ":enqueue", "--end", W + ":dequeue", "--key", "arg7"],
             "arg1 to arg6"),
            (["--start", W + ":enqueue", "--end", W + ":dequeue", "--key", "arg1",
              "--where", "x=1"], "has none")):
        rc, _, err = d.ctl("stopwatch", "add", *args, check_rc=False)
        t.check(rc != 0 and one_sentence(err) and what in err,
                "bad user pair: one sentence: " + err.strip())
print("PASS")
