"""The snapshot on a dump: `rspctl analyze FILE snapshot PID` gives the answer
rspd gave live over the same range of the window (issue 7: the same analysis
code on a dump as live). Known answer: pass (two processes, sampled stacks,
exited before the dump) and rpc_fsync (client -> server -> disk) asked live
with --from/--to, then dumped, then analyzed: the JSON is the same to the
last number, the text too, and the folded stacks and Chrome trace that
rspctl writes are the same files."""
import filecmp
import json
import os
import shutil
import tempfile

import rsptest as t
import snaptest as st

t.need_root()
work = tempfile.mkdtemp(prefix="rsptest-snapdump.")


def analyze(path, *args):
    p = t.run([t.RSPCTL, "analyze", path] + list(args), timeout=300, cwd=work)
    if p.returncode != 0:
        t.fail("rspctl analyze %s %s failed (%d): %s" % (path, " ".join(args), p.returncode,
                                                         p.stderr))
    return p.stdout


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


def files(tag):
    return [os.path.join(work, tag + ".folded"), os.path.join(work, tag + ".json")]


try:
    with t.Rspd("--freq", "1000", "--window", "256M", "--dump-dir", work) as d:
        wp = t.workload("pass", 100, 3000)
        wr = t.workload("rpc_fsync", 100, os.environ.get("RSP_TEST_DIR", "/var/tmp"), 256)
        d.settle()
        win = d.json("status")["window"]
        rng = ["--from", repr(win["oldest_s"]), "--to", repr(win["newest_s"])]
        # The newest record is one CPU's; another CPU's ring may still hold
        # earlier ones (rings are drained every 100 ms): let them in before
        # the live queries, so that live and dump hold the same range.
        d.settle()
        asks = [("pass", str(wp["parent"])), ("rpc", str(wr["client"]))]
        live = {}
        for tag, pid in asks:
            fold, trace = files("live." + tag)
            live[tag] = (d.json("snapshot", pid, *rng, "--folded", fold, "--chrome-trace", trace),
                         d.ctl("snapshot", pid, *rng)[1])
        _, out, _ = d.ctl("dump", "--json")
        path = json.loads(out)["path"]
    t.check(not os.path.exists("/proc/%d" % wp["parent"]), "pass has exited before the dump")
    for tag, pid in asks:
        js, text = live[tag]
        print("   %s: wall %.4f s, total %.4f s; %s; unknown %s" %
              (tag, js["wall_s"], js["total_s"],
               ", ".join("%s %.4f" % kv for kv in js["categories"].items() if kv[1]),
               js["unknown_detail"]))
        # lost records (a busy machine) are unknown time, the same live and offline
        gaps = 100 * js["unknown_detail"]["gaps_s"] / js["total_s"]
        t.check(js["percent_accounted"] + gaps >= 90 and len(st.threads_in_chain(js)) >= 2,
                "%s live: %.1f%% accounted (%.1f%% unknown across %d gaps), %d threads in the "
                "chain" % (tag, js["percent_accounted"], gaps, js["window"]["gaps"],
                           len(st.threads_in_chain(js))))
        fold, trace = files("off." + tag)
        off = json.loads(analyze(path, "snapshot", pid, *rng, "--json", "--folded", fold,
                                 "--chrome-trace", trace))
        # where the sleep stacks came from (the BPF stack cache) is not in a dump,
        # nor the overhead budget's history
        t.check(off.pop("degraded") is None, "offline: degraded is not known")
        js.pop("degraded")
        for k in ("cached_s", "checked_s", "stack_differ_s", "reason_differ_s"):
            t.check(off["sleep_stacks"].pop(k) is None, "offline: %s is not known" % k)
            js["sleep_stacks"].pop(k)
        lines = text.splitlines(True)
        cut = [i for i, ln in enumerate(lines) if ln.startswith("  sleep stacks:")]
        text = "".join(ln for i, ln in enumerate(lines) if not cut or i not in (cut[0], cut[0] + 1))
        t.check(off == js, "%s: snapshot %s over [%s, %s]: the same JSON live and offline%s" %
                (tag, pid, rng[1], rng[3], "; ".join(first_diffs(js, off))))
        t.check(analyze(path, "snapshot", pid, *rng) == text,
                "%s: the same text live and offline (%d lines)" % (tag, len(text.splitlines())))
        for a, b in zip(files("live." + tag), files("off." + tag)):
            t.check(filecmp.cmp(a, b, shallow=False),
                    "%s: rspctl analyze writes the same %s as live (%d bytes)" %
                    (tag, os.path.basename(b), os.path.getsize(b)))
    frames = {f["name"] for n, _ in st.nodes(live["pass"][0]) if n["kind"] == "sample"
              for f in n["stack"]}
    t.check("play" in frames,
            "pass's sampled stacks name its functions, offline as live (%s)" %
            ", ".join(sorted(f for f in frames if not f.startswith("0x"))[:8]))
finally:
    shutil.rmtree(work, ignore_errors=True)
