"""A ring too small for the load loses records: rspd counts them, keeps them
in the window as gaps, and keeps running."""
import rsptest as t

t.need_root()

with t.Rspd("--ring-pages", "1", "--wakeup-percent", "90", "--flush-interval", "1s",
            "--stacks", "all") as d:
    t.workload("pipe_pingpong", 30000, 0)
    d.settle(1.5)
    st = d.json("status", "--events")
    print("   lost %d, per cpu %s" % (st["lost"], [c["lost"] for c in st["cpus"]]))
    t.check(st["lost"] > 0, "lost records are counted (%d)" % st["lost"])
    t.check(st["events"]["lost_records"] > 0,
            "the window holds %d gap markers" % st["events"]["lost_records"])
    # The machine goes on losing records in a one-page ring (other work, rspd's
    # own queries): the window is scanned a moment after the counter is read.
    later = d.json("status")["lost"]
    t.check(st["lost"] <= st["events"]["lost"] <= later,
            "gap markers carry the lost counts (%d; counted %d, then %d)" %
            (st["events"]["lost"], st["lost"], later))
    t.check(d.alive(), "rspd still runs")
    rc, out, _ = d.ctl("status")
    t.check(rc == 0 and "lost" in out, "rspd still answers")
