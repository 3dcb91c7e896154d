"""rspctl graph: bad command lines are refused locally, with one sentence
naming the problem; --pid of a process with no thread in the window is an
error from rspd, not an empty answer."""
import rsptest as t

t.need_root()


def refused(args, words):
    p = t.run([t.RSPCTL, "--socket", "/nonexistent/rspd.sock", "graph"] + args)
    t.check(p.returncode == 2 and all(w in p.stderr for w in words),
            "graph %s is refused: %s" % (" ".join(args), p.stderr.strip()))


refused(["--pid", "1", "--all"], ["--pid", "--all"])
refused(["--threshold", "200"], ["--threshold", "200"])
refused(["--noise", "x"], ["--noise"])
refused(["--format", "svg"], ["text, json or dot"])
refused(["--last", "soon"], ["--last"])
refused(["extra"], ["extra"])

with t.Rspd() as d:
    d.settle(0.3)
    rc, out, err = d.ctl("graph", "--pid", "4194000", check_rc=False)
    t.check(rc == 1 and "4194000" in err and "window" in err,
            "an absent pid is an error: %s" % err.strip())
    rc, out, err = d.ctl("graph", "--last", "1s")
    t.check(out.startswith("wait-for graph of"), "the whole system over 1 s answers")
    g = d.json("graph", "--last", "1s")
    t.check(set(["knots", "sinks", "edges", "threads", "window"]) <= set(g),
            "JSON has knots, sinks, edges, threads, window")
    rc, out, err = d.ctl("help", "graph")
    t.check("EXAMPLES" in out and all(len(l) < 80 for l in out.splitlines()),
            "help graph: usage under 80 columns with examples")
