"""Flight recorder: a dump of a known workload is a perf.data file that perf's
tools read without complaint, whose per-thread run times match perf sched
timehist within 1%, and on which `rspctl analyze` gives the answers rspd gave
live; dumps are 0600, named by host and time, retained by count; SIGUSR1
dumps; a full disk is an error, not a crash."""
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import rsptest as t

t.need_root()
if not shutil.which("perf"):
    print("SKIP: perf is not installed (apt-get install linux-perf)")
    raise SystemExit(t.SKIP)

N = 20000
# perf sched timehist prints this informational line (pr_info) for any file
# where some event has no callchain, perf record's own included.
PERF_INFO = {"Samples do not have callchains."}


def analyze(path, *args, check_rc=True):
    p = t.run([t.RSPCTL, "analyze", path] + list(args), timeout=300)
    if check_rc and p.returncode != 0:
        t.fail("rspctl analyze %s %s failed (%d): %s" % (path, " ".join(args), p.returncode,
                                                         p.stderr))
    return p


def analyze_json(path, *args):
    return json.loads(analyze(path, *(list(args) + ["--json"])).stdout)


def perf_clean(cmd, what):
    """Run a perf command; it must succeed and print nothing but known info on stderr."""
    p = t.run(cmd, timeout=600)
    noise = [l for l in p.stderr.splitlines() if l.strip() and l.strip() not in PERF_INFO]
    t.check(p.returncode == 0 and not noise,
            "%s: exit %d, no warnings on stderr%s" % (what, p.returncode,
                                                    (": " + " | ".join(noise[:5])) if noise else ""))
    return p.stdout


def timehist_runtimes(path):
    """tid -> (run time in s, sched-in count) from perf sched timehist -s."""
    out = perf_clean(["perf", "sched", "timehist", "-i", path, "-s"], "perf sched timehist -s")
    rows = {}
    for line in out.splitlines():
        # comm[tid]  parent  sched-in  run-time  min-run  avg-run  max-run  stddev  migrations
        m = re.match(r"\s*(\S.*)\[(\d+)\]\s+(-?\d+)\s+(\d+)\s+([\d.]+)\s", line)
        if m:
            rows[int(m.group(2))] = (float(m.group(5)) / 1e3, int(m.group(4)))
    return rows


def check_runtimes(path, tids, offline):
    rows = timehist_runtimes(path)
    for tid in tids:
        th = [x for x in offline["threads"] if x["tid"] == tid][0]
        perf_run, perf_n = rows[tid]
        rel = abs(th["run_time_s"] - perf_run) / perf_run
        t.check(rel <= 0.01, "tid %d run time: rsp %.6f s, perf sched timehist %.6f s (%.3f%%)"
                % (tid, th["run_time_s"], perf_run, 100 * rel))
        t.check(abs(perf_n - th["switches_out"]) <= 1,
                "tid %d: perf counts %d runs, rsp %d switch-outs (no double counting)"
                % (tid, perf_n, th["switches_out"]))


def first_diffs(a, b, path="", out=None):
    """Where two JSON values differ: up to 5 'path: a != b' strings."""
    out = [] if out is None else out
    if len(out) >= 5:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            first_diffs(a.get(k), b.get(k), path + "." + k, out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            first_diffs(x, y, "%s[%d]" % (path, i), out)
    elif a != b:
        out.append("%s: %s != %s" % (path, str(a)[:80], str(b)[:80]))
    return out


def wait_for(pred, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    return None


def dumps_in(d):
    return sorted(f for f in os.listdir(d) if f.startswith("rsp-") and f.endswith(".perf.data"))


work = tempfile.mkdtemp(prefix="rsptest-dump.")
ddir = os.path.join(work, "dumps")
small = os.path.join(work, "small")
os.mkdir(small)
mounted = False
try:
    with t.Rspd("--window", "512M", "--dump-dir", ddir, "--dump-keep", "3") as d:
        w = t.workload("pipe_pingpong", N, 0)
        d.settle()
        pids = [w["parent"], w["child"]]
        before = {p: d.json("status", "--pid", str(p)) for p in pids}
        # The same range of the window live and offline: from its oldest
        # record to 0.2 s before its newest at this moment, as status shows
        # them. The newest record is one CPU's; another CPU's ring may still
        # hold older records, so the range ends earlier and the test waits a
        # second (ten drain periods) before asking, so that every record of
        # the range is in the window when the live query runs.
        win = d.json("status")["window"]
        rng = ["--from", repr(win["oldest_s"]), "--to", "%.9f" % (win["newest_s"] - 0.2)]
        d.settle(1.0)
        graph_live = d.json("graph", "--pid", str(pids[0]), *rng)
        top_live = d.json("top", "--pid", str(pids[0]), "--limit", "0", *rng)
        ev_before = d.json("status", "--events")
        _, out, _ = d.ctl("dump", "--json")
        ans = json.loads(out)
        ev_after = d.json("status", "--events")
        path = ans["path"]

        # --- the file -----------------------------------------------------------
        host = os.uname().nodename
        t.check(os.path.dirname(path) == ddir and
                re.fullmatch(r"rsp-%s-\d{8}T\d{6}\.\d{3}Z\.perf\.data" % re.escape(host),
                             os.path.basename(path)) is not None,
                "dump named by host and UTC time: " + os.path.basename(path))
        st = os.stat(path)
        t.check(stat.S_IMODE(st.st_mode) == 0o600, "dump is mode 0600")
        t.check(st.st_size == ans["bytes"] and ans["records"] > 2 * N,
                "dump answer: %d bytes, %d records, %d processes"
                % (ans["bytes"], ans["records"], ans["processes"]))
        t.check(not [f for f in os.listdir(ddir) if f.startswith(".")], "no temp file left")
        # The kernel symbols the file carries are those its records need,
        # kernel addresses in fields too: the timeline tells a sleeper's
        # timeout by hrtimer_start's callback (this test's own time.sleep()
        # armed one in the window), and without hrtimer_wakeup in the file
        # an offline timeline inferred fewer timer wakers than live.
        with open(path, "rb") as f:
            data = f.read()
        t.check(re.search(rb"\n[0-9a-f]{16} [Tt] hrtimer_wakeup\n", data) is not None,
                "the dump's kallsyms holds hrtimer_wakeup (hrtimer_start's callback field)")
        del data

        # --- same answers live and offline ---------------------------------------
        for p in pids:
            off = analyze_json(path, "status", "--pid", str(p))
            t.check(off["threads"] == before[p]["threads"],
                    "pid %d: the same threads, counts and run time live and offline: %s"
                    % (p, off["threads"]))
        # Same range, same records: the same graph to the last number.
        graph_off = analyze_json(path, "graph", "--pid", str(pids[0]), *rng)
        # Stacks name user frames through the process model: a process that
        # started before rspd and exited before the dump has no maps in the
        # file (README, limits), so the stacks of edges between other
        # processes may name fewer frames offline. The workload's stacks are
        # compared whole; other processes' stacks (waiting: the edge's from,
        # waking: its to) are left out, every weight and count is compared.
        for g in (graph_live, graph_off):
            mine = {v["id"] for k in g["knots"] for v in k["vertices"]
                    if set(v["tids"]) & set(pids)}
            mine |= {v["id"] for v in g["vertices"] if set(v["tids"]) & set(pids)}
            for e in [e for k in g["knots"] for e in k["edges"]] + g["edges"]:
                if e["from_id"] not in mine:
                    e.pop("wait_stacks", None)
                if e["to_id"] not in mine:
                    e.pop("waker_stacks", None)
        t.check((graph_live["edges"] or graph_live["knots"]) and graph_off == graph_live,
                "graph --pid over [%s, %s]: the same graph live and offline (%d edges, "
                "%d knots)%s" % (rng[1], rng[3], len(graph_live["edges"]),
                                 len(graph_live["knots"]),
                                 "; ".join(first_diffs(graph_live, graph_off))))
        # top's statistics describe the live symbolizer and rspd; the profile
        # itself must be the same, names included (kernel names from the dump's
        # kallsyms, user names from the maps it synthesized).
        top_off = analyze_json(path, "top", "--pid", str(pids[0]), "--limit", "0", *rng)
        t.check(top_live["symbols"] and
                {k: v for k, v in top_off.items() if k != "statistics"} ==
                {k: v for k, v in top_live.items() if k != "statistics"},
                "top --pid: the same profile live and offline (%d rows)" % len(top_live["symbols"]))
        off = analyze_json(path, "status", "--events")
        t.check(off["offline"] is True and "uptime_s" not in off and "cpus" not in off,
                "offline status has no capture-only fields (rates, uptime, rspd's cost)")
        t.check(off["window"]["records"] == ans["records"] and
                abs(off["window"]["oldest_s"] - ans["first_s"]) < 1e-6 and
                abs(off["window"]["newest_s"] - ans["last_s"]) < 1e-6,
                "offline window = what the dump wrote (%d records; offline %s; answer first %s last %s)"
                % (ans["records"], off["window"], ans["first_s"], ans["last_s"]))
        # A dump writes each event a BPF record carries folded (a waking on its
        # switch-in, tracepoints/bpf_records.h) as a record of its own.
        t.check(ev_before["window"]["records"] <= off["window"]["records"] <=
                ev_after["window"]["records"] + ev_after.get("folded", 0),
                "offline window between the live queries around it (%d <= %d <= %d + %d folded)"
                % (ev_before["window"]["records"], off["window"]["records"],
                   ev_after["window"]["records"], ev_after.get("folded", 0)))
        bad = [k for k in off["events"]
               if not ev_before["events"][k] <= off["events"][k] <= ev_after["events"][k]]
        t.check(not bad, "every event count between the live counts before and after the dump%s"
                % "".join("; %s: %s <= %s <= %s" % (k, ev_before["events"][k], off["events"][k],
                                                    ev_after["events"][k]) for k in bad))
        t.check(off["dump"]["hostname"] == host and off["dump"]["written_by_rsp"] and
                off["dump"]["nr_cpus_online"] == os.cpu_count() and
                "rspd" in off["dump"]["cmdline"], "dump records host, CPUs and rspd's command line")

        # --- perf's tools ---------------------------------------------------------
        script = perf_clean(["perf", "script", "-i", path], "perf script")
        switches = len(re.findall(r" sched:sched_switch:", script))
        t.check(switches == off["events"]["sched_switch"],
                "perf script shows each switch once (%d)" % switches)
        t.check("pipe_pingpong" in script, "perf script names the workload's threads")
        threads = []
        for p in pids:
            threads += analyze_json(path, "status", "--pid", str(p))["threads"]
        check_runtimes(path, pids, {"threads": threads})

        # --- SIGUSR1 and retention -----------------------------------------------------
        n0 = len(dumps_in(ddir))
        d.proc.send_signal(signal.SIGUSR1)
        t.check(wait_for(lambda: len(dumps_in(ddir)) == n0 + 1) is not None and
                wait_for(lambda: d.read_log().count("dump: wrote") >= 2) is not None,
                "SIGUSR1 writes a dump and logs it")
        for _ in range(3):
            d.ctl("dump")
        names = dumps_in(ddir)
        t.check(len(names) == 3, "retention keeps the newest 3 dumps (%d)" % len(names))
        t.check("removed" in d.read_log(), "retention logs what it removed")

        # --- errors: full disk, unwritable directory -----------------------------------
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small], check=True)
        mounted = True
        rc, _, err = d.ctl("dump", "-o", os.path.join(small, "x.perf.data"), check_rc=False)
        t.check(rc == 1 and "No space left on device" in err and "rspd keeps capturing" in err,
                "a full disk is one sentence: " + err.strip())
        t.check(os.listdir(small) == [], "the partial file is removed")
        rc, _, err = d.ctl("dump", "-o", "/proc/no/such/dir/x.perf.data", check_rc=False)
        t.check(rc == 1 and "cannot create a file in /proc/no/such/dir" in err,
                "an unwritable directory is one sentence: " + err.strip())
        t.check(d.alive() and d.ctl("status")[0] == 0, "rspd keeps running after failed dumps")
        t.check("dump failed" in d.read_log(), "failed dumps are logged")

        # --- a damaged file ---------------------------------------------------------------
        cut = os.path.join(work, "cut.perf.data")
        with open(os.path.join(ddir, dumps_in(ddir)[-1]), "rb") as f, open(cut, "wb") as g:
            g.write(f.read()[: st.st_size // 2])
        p = analyze(cut, "status", check_rc=False)
        t.check(p.returncode == 1 and "offset 0x" in p.stderr and
                len(p.stderr.strip().splitlines()) == 1,
                "a truncated file gets one error naming the offset: " + p.stderr.strip())
        rel = os.path.relpath(os.path.join(work, "rel.perf.data"))
        d.ctl("dump", "-o", rel, "--last", "1s")
        t.check(os.path.exists(os.path.join(work, "rel.perf.data")),
                "dump -o with a relative name writes where rspctl runs")

    # --- sampled:N: the stack copies are not switches to perf --------------------------------
    with t.Rspd("--window", "512M", "--stacks", "sampled:10", "--dump-dir", ddir,
                "--dump-on-exit") as d:
        w = t.workload("pipe_pingpong", N, 0)
        d.settle()
        _, out, _ = d.ctl("dump", "--json", "-o", os.path.join(work, "sampled.perf.data"))
        path = json.loads(out)["path"]
        threads = []
        for p in (w["parent"], w["child"]):
            threads += analyze_json(path, "status", "--pid", str(p))["threads"]
        check_runtimes(path, [w["parent"], w["child"]], {"threads": threads})
        script = perf_clean(["perf", "script", "-i", path], "perf script (sampled:10)")
        if d.json("status")["config"]["capture"] == "perf":
            copies = len(re.findall(r" rsp_stack_copy:sched:sched_switch:", script))
            t.check(copies > 0, "stack copies appear under their own name (%d)" % copies)
        else:  # the BPF programs put the stack in every tenth switch itself
            stacked = len(re.findall(r" sched:sched_switch:[^\n]*\n\s+[0-9a-f]+ ", script))
            switches = len(re.findall(r" sched:sched_switch:", script))
            t.check(0 < stacked < switches,
                    "some switches carry their callchain (%d of %d)" % (stacked, switches))
        n0 = len(dumps_in(ddir))
    t.check(len(dumps_in(ddir)) == n0 + 1 and "dump: wrote" in d.read_log(),
            "--dump-on-exit dumps when rspd stops")

    # --- retention by total size -------------------------------------------------------------
    bdir = os.path.join(work, "bytes")
    with t.Rspd("--window", "64M", "--dump-dir", bdir, "--dump-max-bytes", "1M") as d:
        t.workload("pipe_pingpong", N, 0)
        d.settle()
        sizes = []
        for _ in range(3):
            sizes.append(json.loads(d.ctl("dump", "--json")[1])["bytes"])
        names = dumps_in(bdir)
        t.check(min(sizes) > 1 << 20 and len(names) == 1,
                "dumps of %s bytes over --dump-max-bytes 1M: only the newest is kept (%d)"
                % (sizes, len(names)))
finally:
    if mounted:
        subprocess.run(["umount", small])
    shutil.rmtree(work, ignore_errors=True)
