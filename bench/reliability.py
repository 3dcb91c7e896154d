#!/usr/bin/python3
"""Run end-to-end tests many times each and count how often they pass.

usage: sudo bench/reliability.py [--tests NAME[,NAME...] | --set issue14|knots]
                                 [--runs N] [--backend perf|bpf|both] [--beside]
                                 [--build DIR] [--out FILE | --no-write]

Issue 14's "done when" is that every answer is right on its real program in
10 runs of 10 on a machine other processes use (each test of the default set
runs a disk writer and a busy loop beside its workload: rsptest.Background).
This runs each chosen test --runs times on each chosen capture backend, with
the environment ctest gives e2e.NAME (perf) and e2e-bpf.NAME (bpf), each run
under the e2e lock (/tmp/rsp-e2e.lock, flock) so that no other rspd run
disturbs it. Runs are interleaved (run 1 of every test, then run 2, ...) so
that a noisy stretch of the machine is spread over the tests rather than
landing on one. A run passes (exit 0), is skipped (exit 77: a package that
cannot be installed, a window with gaps), or fails (anything else, or over
--timeout); the log of every run that did not pass is kept in a directory
under /tmp, named in the output.

--set knots runs the tests whose known answer is a knot of the wait-for
graph instead (issue 42: how often each backend finds it; the perf backend
infers the wakeups this kernel does not deliver to it). --beside runs a
disk writer and a busy loop (rsptest.Background) beside every run, whatever
the test does itself; its rows are named "NAME beside load". A test's own
quiet run and its run beside load differ where it matters: the kernel drops
wakeups only on an idle CPU, and a busy loop leaves fewer of them.

It writes its own section of BENCHMARKS.md, "## Reliability
(bench/reliability.py)": a table test x backend -> passes/runs (skips
apart), and the one-line reason of each failure (the test's FAIL: line). A
test or backend not run this time keeps its cells from the previous run.

EXAMPLES
  sudo bench/reliability.py --runs 10 --backend bpf
  sudo bench/reliability.py --set knots --runs 10 --backend both
  sudo bench/reliability.py --set knots --runs 10 --backend both --beside
  sudo bench/reliability.py --runs 3 --backend perf --tests test_real_redis
"""
import argparse
import fcntl
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E2E = os.path.join(ROOT, "tests", "e2e")
sys.path.insert(0, E2E)
import rsptest  # noqa: E402 (the e2e tests' Background: the load they run beside)
LOCK = "/tmp/rsp-e2e.lock"
SECTION = "## Reliability (bench/reliability.py)"
STATE = "<!-- reliability-state "

# Issue 14's answers and the tests that check them (README, "Benchmarks").
ISSUE14 = [
    "test_graph_fsync",         # wPerf's producer/consumer: knot {consumer, disk}
    "test_graph_fsync_shared",  # the same on a shared disk, --pid over a longer range
    "test_real_redis",          # fsync-every-write server: knot {server, disk}; net; chain
    "test_real_pgbench",        # PostgreSQL backend's chain: client and WAL fdatasync
    "test_snapshot_make",       # total time with parallelism (make-like -j2)
    "test_real_make",           # the same on Debian's make -j2 and gcc
    "test_net_tcp",             # a client/server pair on loopback: graph and net
    "test_snapshot_net",        # the same pair: the client's chain reaches the server
    "test_hist_save_diff",      # hist --diff pairing and ranking
    "test_hist_mutex",          # hist --processes --diff: a new process's lock waits selected
]

# Issue 42's: the tests whose known answer is a knot (each checks the knot first).
KNOTS = [
    "test_graph_fsync",         # wPerf's Figure 1: knot {consumer, disk}
    "test_graph_fsync_shared",  # the same on a shared disk
    "test_graph_front_syncer",  # the same with small writes, overwritten and appended
    "test_graph_imbalance",     # barrier load imbalance: knot {A, B}
    "test_graph_pipe_token",    # a token over pipes: knot {parent, child}
    "test_graph_mutex",         # one lock: the merged workers' self-loop
    "test_graph_heartbeat",     # a background knot {heartbeat, its timer}
    "test_real_redis",          # fsync-every-write server: knot {server, disk}
]
SETS = {"issue14": ISSUE14, "knots": KNOTS}
LOAD = " beside load"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tests", help="comma-separated tests/e2e/test_*.py names")
    ap.add_argument("--set", choices=sorted(SETS), default="issue14",
                    help="a set of tests, when --tests is not given (default: issue14)")
    ap.add_argument("--beside", action="store_true",
                    help="a disk writer and a busy loop beside every run")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--backend", choices=("perf", "bpf", "both"), default="bpf")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run (ctest's)")
    ap.add_argument("--out", default=os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args()
    a.tests = ([x.strip().removesuffix(".py") for x in a.tests.split(",") if x.strip()]
               if a.tests else list(SETS[a.set]))
    a.backends = ["bpf", "perf"] if a.backend == "both" else [a.backend]
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    for name in a.tests:
        if not os.path.exists(os.path.join(E2E, name + ".py")):
            ap.error("no test %s in tests/e2e" % name)
    return a


def reason_of(text, rc, timed_out):
    """The one line that says why a run failed: its FAIL: line, or the
    exception's last line, or the exit status."""
    if timed_out:
        return "did not finish in time (killed)"
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    for x in reversed(lines):
        if x.startswith("FAIL:"):
            return x[5:].strip()[:300]
    for x in reversed(lines):
        if x.startswith(("Traceback", "  File")):
            break
        if "Error" in x or "Exception" in x:
            return x[:300]
    return "exit %d: %s" % (rc, lines[-1][:240] if lines else "no output")


def run_test(a, name, env):
    """The test's run: (output, exit status, timed out)."""
    try:
        p = subprocess.run([sys.executable, "-B", os.path.join(E2E, name + ".py")],
                           cwd=E2E, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace",
                           timeout=a.timeout)
        return p.stdout, p.returncode, False
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        return out.decode(errors="replace") if isinstance(out, bytes) else out, -1, True


def run_one(a, name, backend, logdir, k):
    """One run under the e2e lock: ('pass'|'skip'|'fail', reason, log path or None)."""
    env = dict(os.environ, RSP_BUILD=a.build, RSP_SOURCE=ROOT, RSP_TEST_CAPTURE=backend)
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # flock(1) on the same file takes the same lock
        if a.beside:
            with rsptest.Background(os.environ.get("RSP_TEST_DIR", "/var/tmp"),
                                    seconds=a.timeout):
                text, rc, timed_out = run_test(a, name, env)
        else:
            text, rc, timed_out = run_test(a, name, env)
    verdict = "pass" if rc == 0 else "skip" if rc == 77 else "fail"
    if verdict == "pass":
        return verdict, "", None
    log = os.path.join(logdir, "%s%s.%s.run%d.log" % (name, "-load" if a.beside else "",
                                                       backend, k))
    with open(log, "w") as f:
        f.write(text)
    lines = [x for x in text.splitlines() if x.strip()]
    why = (lines[-1].strip()[:300] if lines else "") if verdict == "skip" else \
        reason_of(text, rc, timed_out)
    return verdict, why, log


def load_state(path):
    try:
        text = open(path).read()
    except OSError:
        return {}
    i = text.find(STATE)
    if i < 0:
        return {}
    j = text.find(" -->", i)
    try:
        state = json.loads(text[i + len(STATE):j])
    except ValueError:
        return {}
    for b in state.values():  # a first version kept the command per backend
        for r in b.get("tests", {}).values():
            for k in ("when", "command", "machine"):
                r.setdefault(k, b.get(k, "?"))
    return state


def machine():
    return "%s, %d CPUs, kernel %s" % (platform.node(), os.cpu_count(), platform.release())


def render(state):
    """The section's text from {backend: {"when", "command", "tests": {name: {...}}}}."""
    backends = [b for b in ("bpf", "perf") if b in state]
    names = []
    for b in backends:
        for n in state[b]["tests"]:
            if n not in names:
                names.append(n)
    # issue 14's order (the state is stored with sorted keys), then the knots', then the
    # others; a test's row beside load after its own
    order = ISSUE14 + [n for n in KNOTS if n not in ISSUE14]
    names.sort(key=lambda n: (order.index(n.removesuffix(LOAD))
                              if n.removesuffix(LOAD) in order else len(order), n))
    out = [SECTION, "",
           "Each test of issue 14's set run again and again, every run under the e2e lock, "
           "with a disk writer and a busy loop beside the workload (rsptest.Background; "
           "test_graph_fsync alone runs on a quiet disk: it checks B's exact disk weights, "
           "test_graph_fsync_shared the knot on a shared one). Issue 42's set (`--set "
           "knots`): the tests whose known answer is a knot, as they run (quiet unless "
           "they load the machine themselves), and rows \"beside load\" with a disk "
           "writer and a busy loop beside every run (`--beside`). passes/runs; skipped "
           "runs (exit 77) are counted apart and not as passes. Written by "
           "`sudo bench/reliability.py`.", ""]
    runs = []
    for b in backends:
        for r in state[b]["tests"].values():
            line = "- `sudo %s` — %s, %s" % (r["command"], r["when"], r["machine"])
            if line not in runs:
                runs.append(line)
    out += runs
    out += ["", "| test | " + " | ".join(backends) + " |",
            "|---|" + "---|" * len(backends)]
    for n in names:
        cells = []
        for b in backends:
            r = state[b]["tests"].get(n)
            if not r:
                cells.append("—")
                continue
            c = "%d/%d" % (r["pass"], r["runs"])
            if r["skip"]:
                c += " (%d skipped)" % r["skip"]
            cells.append(c)
        out.append("| %s | %s |" % (n, " | ".join(cells)))
    fails = [(b, n, f) for b in backends for n, r in state[b]["tests"].items()
             for f in r["failures"]]
    out += ["", "Failures (run: the test's own reason)%s" % ("" if fails else ": none"), ""]
    for b, n, f in fails:
        out.append("- %s on %s, run %d: %s" % (n, b, f["run"], f["reason"]))
    skips = [(b, n, f) for b in backends for n, r in state[b]["tests"].items()
             for f in r.get("skips", [])]
    if skips:
        out += ["", "Skips:", ""]
        for b, n, f in skips:
            out.append("- %s on %s, run %d: %s" % (n, b, f["run"], f["reason"]))
    out += ["", STATE + json.dumps(state, sort_keys=True) + " -->", ""]
    return "\n".join(out)


def write_section(path, state):
    old = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    new = render(state)
    i = old.find(SECTION)
    if i < 0:
        # Before the verbatim "## Latest bench/run" part, which bench/run keeps last.
        j = old.find("\n## Latest bench/run")
        if j < 0:
            text = old.rstrip("\n") + "\n\n" + new
        else:
            text = old[:j].rstrip("\n") + "\n\n" + new + "\n" + old[j + 1:]
    else:
        j = old.find("\n## ", i + 1)
        text = old[:i] + new + ("\n" + old[j + 1:] if j >= 0 else "")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".bench.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def main():
    a = parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/reliability.py: the e2e tests start rspd on the real kernel: run as root")
    if not os.access(os.path.join(a.build, "daemon", "rspd"), os.X_OK):
        sys.exit("bench/reliability.py: no rspd in %s: run scripts/build.sh release first" %
                 a.build)
    logdir = tempfile.mkdtemp(prefix="rsp-reliability.", dir="/tmp")
    print("bench/reliability.py: %d runs of %s on %s; logs of runs that did not pass in %s" %
          (a.runs, ", ".join(a.tests), "+".join(a.backends), logdir), flush=True)
    row = {n: n + (LOAD if a.beside else "") for n in a.tests}
    res = {b: {row[n]: {"pass": 0, "skip": 0, "runs": 0, "failures": [], "skips": []}
               for n in a.tests} for b in a.backends}
    for k in range(1, a.runs + 1):
        for n in a.tests:
            for b in a.backends:
                t0 = time.time()
                verdict, why, log = run_one(a, n, b, logdir, k)
                r = res[b][row[n]]
                if verdict == "skip":
                    r["skip"] += 1
                    r["skips"].append({"run": k, "reason": why})
                else:
                    r["runs"] += 1
                    r["pass"] += verdict == "pass"
                    if verdict == "fail":
                        r["failures"].append({"run": k, "reason": why})
                print("run %d/%d %-24s %-4s %s (%.0f s)%s" %
                      (k, a.runs, row[n], b, verdict.upper(), time.time() - t0,
                       ": %s [%s]" % (why, log) if log else ""), flush=True)
    print("\n%-24s %s" % ("test", "  ".join("%-10s" % b for b in a.backends)))
    for n in a.tests:
        cells = [res[b][row[n]] for b in a.backends]
        print("%-24s %s" % (row[n], "  ".join("%-10s" % ("%d/%d%s" % (
            c["pass"], c["runs"], "+%ds" % c["skip"] if c["skip"] else "")) for c in cells)))
    print("logs of the runs that did not pass: %s" % logdir)
    if not a.no_write:
        state = load_state(a.out)
        cmd = " ".join(["bench/reliability.py"] + sys.argv[1:])
        for b in a.backends:  # the tests run now replace theirs; others stay
            prev = state.get(b, {}).get("tests", {})
            for r in res[b].values():
                r.update(when=time.strftime("%Y-%m-%d %H:%M"), command=cmd, machine=machine())
            state[b] = {"tests": dict(prev, **res[b])}
        write_section(a.out, state)
        print("%s: section \"%s\" written" % (a.out, SECTION))
    bad = sum(r["runs"] - r["pass"] for b in res.values() for r in b.values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
