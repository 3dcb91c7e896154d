"""rspd --capture bpf: the scheduler's events from rsp's BPF programs
(bpf/rsp.bpf.c) instead of perf tracepoints, on the real kernel.

Known answer: pipe_pingpong N passes a byte back and forth N times between a
parent and a child pinned to one CPU, run under `perf record -e
sched:sched_switch` beside rspd: the child's snapshot follows as many sleeps
as perf saw it switch out into a sleep (within 2), in pipe_read (its kernel
stacks come from STACK records, its name from a COMM record); the dump of
the window, read back by `rspctl analyze`, answers the same; status names
the backend, and its window's bytes by kind add up to the window's, a BPF
switch taking its own 40 bytes (no time prefix), 48 more with the waking it
carries. `--capture auto` where BPF is refused (the verifier rejects a
program, on demand: RSP_TEST_BPF_REFUSE in a test build) falls back to perf and status says
why; `--capture bpf` refused does not start, with one sentence."""
import json
import os
import tempfile

import rsptest as t

t.need_root()
N = 3000
# RSP_TEST_BPF_REFUSE is obeyed only by a test build (cmake -DRSP_TEST_HOOKS=ON,
# as scripts/build.sh builds): an installed rspd never reads it.
if os.environ.get("RSP_TEST_HOOKS") != "ON":
    print("SKIP: this rspd was built without RSP_TEST_HOOKS (scripts/build.sh sets it)")
    raise SystemExit(t.SKIP)

with tempfile.NamedTemporaryFile(prefix="rsptest-empty.", suffix=".conf") as conf:
    p = t.run([t.RSPD, "--foreground", "--socket", "/tmp/rsptest-bpf-refused.sock", "--config",
               conf.name, "--capture", "bpf"], env=dict(os.environ, RSP_TEST_BPF_REFUSE="1"))
if "built without the BPF backend" in p.stderr + p.stdout:
    print("SKIP: this rspd was built without the BPF backend")
    raise SystemExit(t.SKIP)
t.check(p.returncode != 0 and "--capture bpf: the kernel's verifier refused rsp's BPF program"
        in p.stderr + p.stdout, "--capture bpf refused: rspd does not start, and says why")



def check_kinds(st, backend):
    """status's window by kind: the kinds add up to the window's records and
    bytes (one count, taken once), and every sample is named by its event."""
    win = st["window"]
    kinds = {k["kind"]: k for k in win["kinds"]}
    t.check(sum(k["records"] for k in win["kinds"]) == win["records"] and
            sum(k["bytes"] for k in win["kinds"]) == win["bytes"] and win["records"] > 0,
            "%s: the window's kinds add up to its %d records and %d bytes" % (
                backend, win["records"], win["bytes"]))
    t.check(not [k for k in kinds if k == "perf:SAMPLE" or k.startswith("sample of")],
            "%s: every sample kind is named by its event (%s)" % (backend, sorted(kinds)))
    return kinds


with t.Rspd("--capture", "auto", env={"RSP_TEST_BPF_REFUSE": "1"}) as d:
    st = d.json("status")
    cfg = st["config"]
    t.check(cfg["capture"] == "perf" and "verifier refused" in cfg.get("capture_note", ""),
            "--capture auto, BPF refused: perf, and why (%s)" % cfg.get("capture_note"))
    check_kinds(st, "perf backend")
    t.check(st.get("skipped_nested") == 0, "perf backend: no BPF program, none skipped")

with t.Rspd("--capture", "bpf") as d:
    st = d.json("status")
    fams = {f["name"]: f for f in st["families"]}
    t.check(st["config"]["capture"] == "bpf" and fams["sched"]["source"] == "bpf",
            "status: capture bpf, the sched family from bpf")
    # The kernel's own count, in the same run: perf records the same switches.
    pf = os.path.join(d.dir, "perf.data")
    p = t.run(["perf", "record", "-q", "-a", "-e", "sched:sched_switch", "-o", pf, "--",
               os.path.join(t.WORKLOADS, "pipe_pingpong"), str(N), "0"], timeout=120)
    t.check(p.returncode == 0, "perf record runs the workload beside rspd")
    w = json.loads(p.stdout.strip().splitlines()[-1])
    d.settle()
    ps = t.run(["perf", "script", "-i", pf, "-F", "trace"], timeout=120).stdout
    truth = sum(1 for line in ps.splitlines()
                if " prev_pid=%d " % w["child"] in line and "prev_state=R" not in line)
    last = "10s"  # the workload, and perf's exit after it
    s = d.json("snapshot", str(w["child"]), "--last", last, "--min", "0")
    followed = s["sleeps_followed"]
    print("   child %d: %d sleeps followed; perf saw %d switches of it into a sleep"
          % (w["child"], followed, truth))
    t.check(truth > N / 10 and abs(followed - truth) <= 2,
            "the child's sleeps are followed as the kernel reports them (%d, perf %d)"
            % (followed, truth))
    text = d.ctl("snapshot", str(w["child"]), "--last", last)[1]
    t.check("pipe_read" in text and "pipe_pingpong" in text,
            "its sleeps name pipe_read (kernel stacks from STACK records) and the program "
            "its name (a COMM record)")
    t.check(d.ctl("graph", "--last", last)[0] == 0, "graph answers from BPF records")
    # The window stores a compact record as it is (its time is in its header):
    # a switch takes its 40 bytes (struct rsp_brec_switch), not 48 with a prefix,
    # and 48 more where it carries the waking that made its next task runnable
    # (struct rsp_brec_wake_part): no waking record of its own.
    kinds = check_kinds(d.json("status"), "bpf backend")
    sw = kinds.get("bpf:switch") or kinds.get("bpf:switch_stack")
    t.check(sw is not None, "the window holds BPF switch records (%s)" % sorted(kinds))
    want = 40 if "bpf:switch" in kinds else 56
    extra = sw["bytes"] - want * sw["records"]
    t.check(extra >= 0 and extra % 48 == 0 and 0 < extra // 48 <= sw["records"],
            "a BPF switch record takes %d bytes in the window, no time prefix, or %d with "
            "a waking (%d records, %d bytes, %d wakings)"
            % (want, want + 48, sw["records"], sw["bytes"], extra // 48))
    wk = kinds.get("bpf:waking_stack", {"records": 0})["records"] + \
        kinds.get("bpf:waking", {"records": 0})["records"]
    t.check(wk < extra // 48,
            "most wakings ride on switch records (%d folded, %d alone)" % (extra // 48, wk))
    t.check("bytes by kind (bytes per record):" in d.ctl("status")[1], "text status shows the bytes by kind")
    # Events the kernel ran no program for (one running already on the CPU):
    # counted from the programs' recursion_misses, never a silent loss
    sk = d.json("status").get("skipped_nested")
    print("   events the kernel skipped (a program nested in itself): %s" % sk)
    t.check(isinstance(sk, int) and sk >= 0, "status counts the events the kernel skipped (%s)" % sk)
    # A sleep with a timeout (nanosleep arms an hrtimer_wakeup timer): the
    # one timer start the BPF programs send; the tick's and perf's are not.
    t.run(["sleep", "0.05"])
    d.settle()
    path = os.path.join(d.dir, "bpf.perf.data")
    d.ctl("dump", "-o", path)
    starts = [l for l in t.run(["perf", "script", "-i", path, "-F", "event,trace"],
                                timeout=120).stdout.splitlines() if "hrtimer_start" in l]
    t.check(starts and all("function=hrtimer_wakeup " in l for l in starts),
            "the BPF programs send only the timer starts of sleep timeouts (%d; others: %s)"
            % (len(starts), [l for l in starts if "function=hrtimer_wakeup " not in l][:2]))
    p = t.run([t.RSPCTL, "analyze", path, "snapshot", str(w["child"]), "--last", last, "--min",
               "0", "--json"], timeout=120)
    t.check(p.returncode == 0, "rspctl analyze reads the dump of BPF records: %s" % p.stderr)
    ff = json.loads(p.stdout)["sleeps_followed"]
    t.check(ff == followed, "analyze on the dump follows the same sleeps (%d, live %d)"
            % (ff, followed))
