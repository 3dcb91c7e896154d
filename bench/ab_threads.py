#!/usr/bin/python3
"""rspd's threads, old build against new, on the same load: two rspd
(--capture bpf, defaults; one per build) record one pgbench run at a fixed
rate together (bench/pgbench.py's cluster), in R rounds that alternate which
starts first. Each thread's CPU over the run comes from
/proc/PID/task/TID/schedstat (nanoseconds, not clock ticks), per
transaction; the ratio new/old is given per round, so a change of a few
percent shows as the rounds' agreement, not as one noisy figure. Each rspd
also sees the other's activity: compare the two, not to a lone rspd.

usage: sudo bench/ab_threads.py OLD_BUILD NEW_BUILD [--rounds R] [--seconds S] [--rate TPS]
"""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import pgbench as pg  # noqa: E402  (its Cluster and Rspd)


def threads(pid):
    """{thread name: ns on CPU} of @pid's threads."""
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                name = f.read().strip()
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                ns = int(f.read().split()[0])
        except OSError:
            continue
        out[name] = out.get(name, 0) + ns
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rate", type=int, default=800)
    a = ap.parse_args()
    c = pg.Cluster(pg.need_postgres())
    c.start()
    res = {"old": [], "new": []}
    try:
        for r in range(a.rounds):
            ds = {"old": pg.Rspd(a.old, "bpf", None), "new": pg.Rspd(a.new, "bpf", None)}
            order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
            for k in order:
                ds[k].start()
            time.sleep(2)
            before = {k: threads(ds[k].p.pid) for k in ds}
            tps = c.run(a.seconds, a.rate)
            after = {k: threads(ds[k].p.pid) for k in ds}
            for k in order:
                ds[k].stop()
            tx = tps * a.seconds
            for k in ds:
                d = {n: (after[k][n] - before[k].get(n, 0)) / 1e9 for n in after[k]}
                res[k].append((d, tx))
                print("round %d %s: %.0f tps; us per transaction: %s" % (
                    r, k, tps, ", ".join("%s %.1f" % (n, 1e6 * v / tx)
                                         for n, v in sorted(d.items()) if v > 0)), flush=True)
    finally:
        c.stop()
    print("\n| thread | old, us/tx | new, us/tx | new/old | per round |\n|---|---:|---:|---:|---|")
    for n in sorted({n for d, _ in res["old"] + res["new"] for n in d}):
        o = [d.get(n, 0) / tx for d, tx in res["old"]]
        w = [d.get(n, 0) / tx for d, tx in res["new"]]
        if sum(o) <= 0:
            continue
        rr = sorted(y / x for x, y in zip(o, w) if x > 0)
        print("| %s | %.2f | %.2f | %.3f | %s |" % (n, 1e6 * sum(o) / len(o), 1e6 * sum(w) / len(w),
                                                 sum(w) / sum(o),
                                                 " ".join("%.3f" % x for x in rr)))


if __name__ == "__main__":
    main()
