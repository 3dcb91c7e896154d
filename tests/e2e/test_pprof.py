"""pprof profiles: rspctl top --pprof, rspctl snapshot --pprof, the same on
a dump (rspctl analyze DUMP ...), and rspd's GET /debug/pprof/profile and
/debug/pprof/offcpu beside --metrics-listen; every profile read with a pprof
reader that is not rsp's code (the npm package pprof-format, through
tests/e2e/pprofread.js, which also checks what go tool pprof's CheckValid
checks).

Known answers:
- A process that fsync()s in a loop (python3 writing 4 MiB and fsync()ing
  it, 40 times): in snapshot --pprof, the samples labelled reason=block_io
  whose stacks hold fsync carry >= 80% of the wait (pprof -tagfocus=
  reason=block_io, cumulative share of fsync). On a busy machine the
  wakeup after each disk wait queues for a CPU (labelled reason=runnable:
  scheduler overhead, not the disk): when the process's own run_delay
  (/proc/PID/schedstat) exceeds 5% of its loop, the share is taken of the
  wait outside the CPU queue, and the test says so.
- burn7030 (top --pid): top --pprof's flat profile (pprof -top) is rspctl
  top's, from the same answer: the same 5 heaviest functions, shares
  within 1 point; the sample values add up to rspctl top's samples. (The
  system-wide profile is read over HTTP below.) Time the snapshot could
  not explain for lost records (reason=unknown) is left out of the share.
- The dump: analyze DUMP top|snapshot --pprof over the same range give
  valid profiles with the same totals as live.
- HTTP: /debug/pprof/profile?seconds=N after burn7030 is a valid on-CPU
  profile in which hot7 and cold3 share 70/30 (+-5); /debug/pprof/offcpu
  of the fsync process is valid with its block_io wait; negative seconds,
  a million seconds, garbage, an unknown parameter, no pid and a pid that
  did nothing each get 400 and one sentence; four concurrent pulls are
  each answered (200); with query-memory 1M a pull gets 503 naming
  --query-memory.
- Where Google's pprof builds from Debian's Go sources (scripts/go-pprof.sh),
  it reads the files too: `pprof -top -tagfocus=reason=block_io` gives
  fsync the block_io wait pprof-format gave it (within 1%), `-traces`
  shows the labels, and `pprof -top` on the on-CPU file gives rspctl top's
  5 heaviest functions their shares within 1 point.
"""
import json
import os
import re
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pprof as pp
import rsptest as t

t.need_root()
RDR = pp.reader()
GO = pp.go_pprof()
DIR = os.environ.get("RSP_TEST_DIR", "/var/tmp")
work = tempfile.mkdtemp(prefix="rsptest-pprof.")
FSYNC_LOOP = r"""
import json, os, sys, time
def delay():
    with open("/proc/self/schedstat") as f:
        return int(f.read().split()[1])
path, n, kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
blk = b"x" * (kib << 10)
d0, t0 = delay(), time.monotonic()
for i in range(n):
    os.pwrite(fd, blk, (i % 4) * len(blk))
    os.fsync(fd)
t1, d1 = time.monotonic(), delay()
os.close(fd)
os.unlink(path)
print(json.dumps({"pid": os.getpid(), "start": t0, "end": t1, "run_delay_s": (d1 - d0) / 1e9}))
"""
FSYNC = ("fsync", "fdatasync")


def get(url, timeout=300):
    """(status, body bytes)"""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def fsync_loop():
    script = os.path.join(work, "fsync_loop.py")
    with open(script, "w") as f:
        f.write(FSYNC_LOOP)
    p = t.run(["python3", script, os.path.join(DIR, "rsptest-pprof.%d" % os.getpid()), "40",
               "4096"], timeout=300)
    t.check(p.returncode == 0, "the fsync loop ran: %s" % p.stderr.strip()[-200:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def check_offcpu(doc, w, what, gaps_s=0.0):
    """The fsync loop's wait: reason=block_io with fsync in the stack. Time
    the snapshot could not explain for lost records (@gaps_s, its
    unknown_detail; an ASan rspd on a loaded machine loses some) is left
    out of the share: it is labelled reason=unknown, not invented."""
    t.check(doc["sample_types"] == [["wait", "nanoseconds"], ["cpu", "nanoseconds"]] and
            doc["default_type"] == "wait",
            "%s: sample types wait and cpu nanoseconds, wait shown first" % what)
    wait = pp.total(doc, "wait")
    queue = pp.total(doc, "wait", lambda s: s["labels"].get("reason") in ("runnable",
                                                                         "preempted"))
    io = pp.total(doc, "wait", lambda s: s["labels"].get("reason") == "block_io" and
                  any(f in FSYNC for f in s["stack"]))
    by = {}
    for s in doc["samples"]:
        k = "%s/%s" % (s["labels"].get("reason"), s["labels"].get("category"))
        by[k] = by.get(k, 0) + s["values"][0]
    print("   %s: the wait by reason/category: %s" % (what, ", ".join(
        "%s %.3f s" % (k, v / 1e9) for k, v in sorted(by.items(), key=lambda kv: -kv[1]) if v)))
    loop = w["end"] - w["start"]
    busy = w["run_delay_s"] > 0.05 * loop
    unknown = pp.total(doc, "wait", lambda s: s["labels"].get("reason") == "unknown") \
        if gaps_s > 0 else 0
    base = (wait - queue if busy else wait) - unknown
    share = 100.0 * io / base if base else 0
    print("   %s: wait %.3f s (%.3f s queued for a CPU; the kernel's run_delay %.3f s of a "
          "%.3f s loop), block_io in fsync %.3f s" % (what, wait / 1e9, queue / 1e9,
                                                      w["run_delay_s"], loop, io / 1e9))
    t.check(share >= 80, "%s: reason=block_io with fsync in the stack carries %.1f%% of the "
            "wait%s%s (>= 80%%)" % (what, share, " outside the CPU queue (a busy machine)"
                                    if busy else "",
                                    ", less %.3f s unknown across lost records" % (unknown / 1e9)
                                    if unknown else ""))
    lab = [s for s in doc["samples"] if s["labels"].get("reason") == "block_io"]
    t.check(lab and all("depth" in s["num"] and s["labels"].get("thread") and
                        s["labels"].get("process") and s["labels"].get("waker")
                        for s in lab),
            "%s: block_io samples carry waker, thread, process and depth (%s)" %
            (what, lab[0]["labels"] if lab else "none"))
    return wait, io


def go_offcpu(path, io):
    """go tool pprof on the off-CPU file: -tagfocus on the label, fsync's
    cumulative wait as pprof-format read it; -traces shows the labels."""
    rows, _ = pp.go_top(GO, path, "-cum", "-unit=ns", "-sample_index=wait",
                        "-tagfocus=reason=block_io")
    cum = max(rows.get(f, (0, 0, 0, 0))[2] for f in FSYNC)
    t.check(abs(cum - io) <= 0.01 * io,
            "go pprof -top -tagfocus=reason=block_io: fsync's cumulative wait %.0f ns is "
            "pprof-format's %.0f ns" % (cum, io))
    p = t.run([GO, "-traces", path], timeout=300)
    t.check(p.returncode == 0 and re.search(r"reason:\s+block_io", p.stdout) and
            re.search(r"depth:\s+0", p.stdout),
            "go pprof -traces shows the samples with their labels (reason, depth)")


def go_oncpu(path, js):
    """go tool pprof -top on the on-CPU file against rspctl top's rows, by
    name (both list a name once per object: an ASan build's every program
    has its own _start->main)."""
    rows, _ = pp.go_top(GO, path, "-sample_index=samples")
    total = js["samples"]
    share = {}
    for r in js["symbols"]:
        if r["name"]:
            share[r["name"]] = share.get(r["name"], 0) + 100.0 * r["samples"] / total
    mine = [r["name"] for r in js["symbols"][:5] if r["name"]]
    worst = max(abs(rows.get(n, (0, 0))[1] - share[n]) for n in mine)
    print("   go pprof -top: %s" % ", ".join("%s %.1f%%" % (n, v[1])
                                           for n, v in list(rows.items())[:5]))
    t.check(worst <= 1.0, "go pprof -top: rspctl top's 5 heaviest functions with their shares "
            "within 1 point (worst %.2f)" % worst)


def check_top(doc, js, what):
    """pprof -top of the file against rspctl top's rows of the same answer."""
    total = js["samples"]
    t.check(pp.total(doc, "samples") == total,
            "%s: the samples add up to rspctl top's %d (%d)" %
            (what, total, pp.total(doc, "samples")))
    i = pp.value_index(doc, "samples")
    flat = {}
    for s in doc["samples"]:
        k = (s["stack"][0], s["objects"][0])
        flat[k] = flat.get(k, 0) + s["values"][i]
    ppf = sorted(flat.items(), key=lambda kv: (-kv[1], kv[0][0]))
    rows = [((r["name"] or "[unknown]"), r["object"], r["samples"]) for r in js["symbols"]]
    print("   rspctl top: %s" % ", ".join("%s %.1f%%" % (n, 100.0 * v / total)
                                        for n, _, v in rows[:5]))
    print("   pprof -top: %s" % ", ".join("%s %.1f%%" % (k[0], 100.0 * v / total)
                                        for k, v in ppf[:5]))
    cut = rows[4][2] if len(rows) >= 5 else 0
    names_top = {(n, o) for n, o, v in rows if v > cut} | {(n, o) for n, o, v in rows[:5]}
    t.check(all(k in names_top or v <= cut for k, v in ppf[:5]),
            "%s: pprof's 5 heaviest functions are rspctl top's (ties at the fifth aside)" % what)
    worst = max(abs(100.0 * flat.get((n, o), 0) / total - 100.0 * v / total)
                for n, o, v in rows[:5])
    t.check(worst <= 1.0, "%s: their shares agree within 1 point (worst %.2f)" % (what, worst))


try:
    hport = t.free_port()
    # a window of 512M: on a machine others load (cpu-clock samples copy 8 KiB
    # of user stack each), 256M held a minute; and the queries that read the
    # workloads' time come first, the slow system-wide ones last
    with t.Rspd("--freq", "1000", "--window", "512M", "--dump-dir", work,
                "--metrics-listen", "127.0.0.1:%d" % hport) as d:
        base = "http://127.0.0.1:%d/debug/pprof/" % hport
        w = fsync_loop()
        t0 = time.time()
        b = t.workload("burn7030", 2)
        print("   workloads: %s; %s" % (w, b))
        d.settle()
        rng = ["--from", "%.6f" % (w["start"] - 0.001), "--to", "%.6f" % (w["end"] + 0.001)]
        # ---- snapshot --pprof of the fsync loop
        snap = os.path.join(work, "off.pb.gz")
        js = json.loads(d.ctl("snapshot", str(w["pid"]), *rng, "--json", "--pprof", snap)[1])
        live_wait, live_io = check_offcpu(pp.parse(RDR, path=snap), w, "snapshot --pprof",
                                          js["unknown_detail"]["gaps_s"])
        if GO:
            go_offcpu(snap, live_io)
        # ---- first what reads the window's oldest part, before it can be evicted
        # (an ASan rspd on a loaded machine is slow): the dump, read below
        dump = json.loads(d.ctl("dump", "--json")[1])["path"]
        # ---- HTTP: the loop's off-CPU profile
        q = "offcpu?seconds=%d&pid=%d" % (int(time.time() - t0) + 30, w["pid"])
        st, body = get(base + q)
        t.check(st == 200, "GET offcpu: 200 (%d%s)" % (st, "" if st == 200 else
                                                   " %s: %s" % (q, body[:200])))
        doc = pp.parse(RDR, data=body)
        io = pp.total(doc, "wait", lambda s: s["labels"].get("reason") == "block_io" and
                      any(f in FSYNC for f in s["stack"]))
        t.check(abs(io - live_io) <= 0.1 * live_io,
                "GET offcpu: the fsync loop's block_io wait in fsync, %.3f s, is the "
                "snapshot's %.3f s (+-10%%)" % (io / 1e9, live_io / 1e9))
        if GO:  # pprof fetches it itself, as from a Go service
            url = base + "offcpu?seconds=%d&pid=%d" % (int(time.time() - t0) + 30, w["pid"])
            p = t.run([GO, "-top", "-unit=ns", url], timeout=300,
                      env=dict(os.environ, PPROF_TMPDIR=work))
            t.check(p.returncode == 0 and "Type: wait" in p.stdout and
                    "rsp snapshot of pid %d" % w["pid"] in p.stdout,
                    "go pprof -top %s: the off-CPU profile%s" %
                    (url, "" if p.returncode == 0 else ": " + p.stderr.strip()[-300:]))
        # ---- top --pprof against rspctl top, the same answer
        top = os.path.join(work, "cpu.pb.gz")
        # burn7030's process: a system-wide top under ASan on a loaded machine
        # takes minutes (every process symbolized)
        trng = ["--pid", str(b["pid"]), "--last", "%dms" % int((time.time() - t0 + 0.5) * 1000)]
        js = json.loads(d.ctl("top", *trng, "--json", "--limit", "0", "--pprof", top)[1])
        doc = pp.parse(RDR, path=top)
        t.check(doc["sample_types"] == [["samples", "count"], ["cpu", "nanoseconds"]] and
                doc["period_type"] == ["cpu", "nanoseconds"] and doc["period"] > 0,
                "top --pprof: sample types samples/count and cpu/nanoseconds, period %d ns" %
                doc["period"])
        check_top(doc, js, "top --pprof")
        if GO:
            go_oncpu(top, js)
        bids = [m for m in doc["mappings"] if m["file"].endswith("/burn7030")]
        t.check(bids and len(bids[0]["build_id"]) == 40,
                "top --pprof: burn7030's mapping has its build-id (%s)" %
                (bids[0]["build_id"] if bids else "no mapping"))
        # ---- HTTP: the system-wide on-CPU profile (slow under ASan: last)
        st, body = get(base + "profile?seconds=%d" % (int(time.time() - t0) + 2))
        t.check(st == 200, "GET profile: 200 (%d%s)" % (st, "" if st == 200 else body[:200]))
        doc = pp.parse(RDR, data=body)
        i = pp.value_index(doc, "samples")
        mine = [s for s in doc["samples"] if s["labels"].get("process") ==
                "burn7030 (pid %d)" % b["pid"]]
        hot = sum(s["values"][i] for s in mine if s["stack"][0] == "hot7")
        cold = sum(s["values"][i] for s in mine if s["stack"][0] == "cold3")
        share = 100.0 * hot / (hot + cold) if hot + cold else 0
        t.check(hot + cold >= 500 and abs(share - 70) <= 5,
                "GET profile: burn7030's hot7 %.1f%% of hot7 + cold3 (70 +- 5; %d samples)" %
                (share, hot + cold))
        bad = ["profile?seconds=-1", "profile?seconds=1000000", "profile?seconds=abc",
               "profile?seconds", "profile?when=now", "offcpu?seconds=5",
               "offcpu?seconds=5&pid=0", "offcpu?seconds=5&pid=4194304",
               "offcpu?seconds=5&pid=%d&x=1" % w["pid"]]
        for q in bad:
            st, body = get(base + q)
            text = body.decode(errors="replace").strip()
            t.check(st == 400 and text and "\n" not in text and len(text) < 300,
                    "GET %s: 400 and one sentence (%d: %s)" % (q, st, text))
        res = []

        def pull():
            res.append(get(base + "profile?seconds=1")[0])

        th = [threading.Thread(target=pull) for _ in range(4)]
        for x in th:
            x.start()
        for x in th:
            x.join()
        t.check(res == [200] * 4, "four concurrent pulls are each answered (%s)" % res)
    off = os.path.join(work, "off2.pb.gz")
    p = t.run([t.RSPCTL, "analyze", dump, "snapshot", str(w["pid"]), *rng, "--pprof", off],
              timeout=300, cwd=work)
    t.check(p.returncode == 0, "analyze DUMP snapshot --pprof: %s" % p.stderr.strip()[-300:])
    odoc = pp.parse(RDR, path=off)
    t.check(pp.total(odoc, "wait") == live_wait,
            "analyze DUMP snapshot --pprof: the same wait as live (%d ns)" % live_wait)
    top2 = os.path.join(work, "cpu2.pb.gz")
    p = t.run([t.RSPCTL, "analyze", dump, "top", *trng, "--json", "--limit", "0", "--pprof",
               top2], timeout=300, cwd=work)
    t.check(p.returncode == 0, "analyze DUMP top --pprof: %s" % p.stderr.strip()[-300:])
    check_top(pp.parse(RDR, path=top2), json.loads(p.stdout), "analyze DUMP top --pprof")
    # ---- the query budget
    hport = t.free_port()
    with t.Rspd("--metrics-listen", "127.0.0.1:%d" % hport,
                config="[control]\nquery-memory = 1M\n") as d:
        t.workload("burn7030", 1)
        d.settle()
        st, body = get("http://127.0.0.1:%d/debug/pprof/profile?seconds=5" % hport)
        text = body.decode(errors="replace").strip()
        t.check(st == 503 and "--query-memory 1M" in text,
                "under query-memory 1M a pull answers 503 naming the option (%d: %s)" %
                (st, text[:200]))
finally:
    shutil.rmtree(work, ignore_errors=True)
