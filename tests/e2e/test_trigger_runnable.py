"""A runnable trigger (issue 41) fires when CPU hogs are added, and not before.

The victim, trigger_slow nap (10 ms asleep, then 2 ms of CPU, again),
pinned to CPU 0 at nice 0: alone it waits for a CPU for microseconds to a
few ms (other processes of the machine's at nice 0 share CPU 0 with it).
Then two hogs (trigger_slow hog) are pinned to CPU 0 at nice -20: each
weighs 86 times the victim (CFS weights 88761 vs 1024), so the victim, its
2 ms of CPU worth 170 ms of theirs, waits hundreds of ms for the CPU each
time it wakes. The trigger 'runnable pid VICTIM > 150ms' (action log, no
hold-off) must not fire during the 4 s alone and must fire within 10 s of
the hogs' start (the wait is recorded when it ends, the profiles are read
once a second, and rspd's own threads share the loaded CPUs); its log line
says what it saw."""
import os
import subprocess
import time

import rsptest as t

t.need_root()
W = os.path.join(t.WORKLOADS, "trigger_slow")


def trig(d):
    return d.json("trigger", "list")["triggers"][0]


with t.Rspd() as d:
    victim = subprocess.Popen(["taskset", "-c", "0", W, "nap", "20"], stdout=subprocess.PIPE)
    hogs = []
    try:
        time.sleep(0.5)
        d.ctl("trigger", "add", "rq", "runnable pid %d > 150ms" % victim.pid, "--action", "log",
              "--holdoff", "0")
        time.sleep(4)
        x = trig(d)
        t.check(x["fires"] == 0, "the victim alone: no fire in 4 s (%d)" % x["fires"])
        start = time.time()
        for _ in range(2):
            hogs.append(subprocess.Popen(["taskset", "-c", "0", "nice", "-n", "-20", W, "hog",
                                          "12"], stdout=subprocess.DEVNULL))
        while time.time() - start < 10 and not trig(d)["fires"]:
            time.sleep(0.2)
        x = trig(d)
        t.check(x["fires"] >= 1 and time.time() - start <= 10,
                "with two hogs at nice -20 on its CPU: fired after %.1f s: %s"
                % (time.time() - start, x["last_value"]))
        log = open(d.log).read()
        t.check("trigger rq: runnable pid %d > 150ms (max " % victim.pid in log,
                "the log line names the condition and the longest wait")
    finally:
        for p in hogs + [victim]:
            p.kill()
            p.wait()
