"""wPerf's Figure 1 with small writes (issue 42): a "front" thread feeds a
bounded queue of 4 to a "syncer" thread that works 200 us, writes 4 KiB
and fdatasyncs per item, 400 items; once overwriting a preallocated file,
once appending (ext4 then ends the writeback in a kworker, which wakes the
syncer). Asked as a new user would: rspctl graph --pid PID --json.

Known answer, on either capture backend: the knot {syncer, disk for
syncer}, front outside it (front -> syncer). On this kernel the disk's
completions and wakeups in interrupts on an idle CPU are not delivered to
perf: the perf backend infers them, and must find what the BPF backend
sees (it missed the knot in 11 runs of 18: the waits went to the kworker
relaying the completion, and the disk's idle time was lost with it)."""
import os
import sys

import graphtest as gt
import rsptest as t

t.need_root()
DIR = os.environ.get("RSP_TEST_DIR", "/var/tmp")

with t.Rspd() as d:
    d.settle(1)
    for mode in ("overwrite", "append"):
        w = gt.workload("front_syncer", 400, DIR, *(["append"] if mode == "append" else []))
        print("   %s: %s" % (mode, w))
        # The known answer needs the front to keep the queue full. On a machine
        # busy enough to starve it of CPU (CI saw load 12 on 2 vCPUs: the
        # syncer waited 0.11 s of a 1.95 s run for it, 50 times, 0.44 s with
        # cascading), the syncer waits for the front too, and the front is
        # rightly in the knot: no known answer then, on either backend.
        if w["syncer_empty_s"] > 0.04 * w["elapsed_s"]:
            print("SKIP: %s: the front did not keep the queue full (the syncer waited %.3f s "
                  "of %.3f s for it): the machine is too busy" %
                  (mode, w["syncer_empty_s"], w["elapsed_s"]))
            sys.exit(t.SKIP)
        d.settle()
        g = gt.graph(d, w["pid"], w["elapsed_s"])
        gt.show(g)
        k = gt.knot_of(g, w["tid_syncer"])
        if k is None:  # what the graph held instead
            s = gt.vertex_id(g, w["tid_syncer"])
            for e in g["edges"]:
                if s in (e["from_id"], e["to_id"]):
                    print("      edge %s -> %s: %.4f s (direct %.4f, inferred %.4f, %d waits)"
                          % (e["from"], e["to"], e["weight_s"], e["direct_s"], e["inferred_s"],
                             e["count"]))
        t.check(k is not None and not k["background"], "%s: the syncer is in a knot" % mode)
        tids = [tid for v in k["vertices"] for tid in v["tids"]]
        t.check(w["tid_front"] not in tids, "%s: the front is outside the knot" % mode)
        disks = [v for v in k["vertices"] if v["kind"] == "disk"]
        t.check(len(disks) == 1 and str(w["tid_syncer"]) in disks[0]["name"],
                "%s: the knot holds the disk serving the syncer: %s"
                % (mode, [v["name"] for v in disks]))
        others = [v["name"] for v in k["vertices"]
                  if v["kind"] != "disk" and w["tid_syncer"] not in v["tids"]]
        t.check(not others, "%s: the knot is {syncer, disk for syncer} (others: %s)"
                % (mode, others))
        s, disk = gt.vertex_id(k, w["tid_syncer"]), disks[0]["id"]
        e = gt.find_edge(g, s, disk)
        # The syncer's waits for the disk lie between its sleeps in
        # fdatasync (schedstat) and fdatasync's wall time: perf sees a wait
        # end at the syncer's first record after it, the BPF backend at the
        # waking, before the syncer is enqueued (tens of us per wait here).
        t.check(w["sync_slept_s"] * 0.7 <= e["direct_s"] <= w["sync_wall_s"] * 1.25,
                "%s: syncer -> disk, its own waits: %.4f s within [-30%% of %.4f, +25%% of "
                "%.4f] s (inferred %.4f s)" % (mode, e["direct_s"], w["sync_slept_s"],
                                               w["sync_wall_s"], e["inferred_s"]))
        e = gt.find_edge(g, gt.vertex_id(g, w["tid_front"]), s)
        t.check(e is not None and e["direct_s"] >= 0.5 * w["front_slept_s"],
                "%s: front -> syncer holds the front's waits for a slot: %s s (slept %.4f s)"
                % (mode, e and round(e["direct_s"], 4), w["front_slept_s"]))
