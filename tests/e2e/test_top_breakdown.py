"""`rspctl top`'s breakdowns (Prospect's profiles): per function, thread,
command and image, --tid, --comm, --kernel, --user, and the statistics of
run.

burn_split split 1.5: its worker thread burns 1.5 s of CPU, 70% in burn_hot
and 30% in burn_cold (the same loop body, 7 iterations for every 3: the
shares are known by construction). burn_split zero 0.8: its worker reads
/dev/zero in 1 MiB chunks, so its CPU time is nearly all in the kernel.
rspd samples at 499 Hz so that ~750 samples make the shares' sampling error
small (sd ~1.7 points) against the 5-point tolerance.

Known answers:
  --tid WORKER --user: burn_hot 70% +-5, burn_cold 30% +-5
  threads, commands, images: each adds up to the profile's samples; an
  image's samples are the sum of its functions' rows; seconds are the
  samples' periods (about samples / 499 s) and the process's seconds are
  about the CPU time it burnt
  --kernel: only kernel frames, of all processes; the zero worker's
  samples are mostly there, the split worker's hardly
  --comm burn_split: the two processes' samples together
"""
import rsptest as t

t.need_root()
HZ = 499
SPLIT_S = 1.5
ZERO_S = 0.8


def by(rows, key, value):
    return [r for r in rows if r.get(key) == value]


with t.Rspd("--freq", str(HZ)) as d:
    w = t.workload("burn_split", "split", SPLIT_S)
    z = t.workload("burn_split", "zero", ZERO_S)
    print("   split %s\n   zero %s" % (w, z))
    d.settle(0.8)
    t.wait_fed(d, t.now_s())  # every sample of both runs drained: each query sees them all

    # Shares within the worker thread, user frames only.
    top = d.json("top", "--tid", str(w["tid"]), "--user", "--limit", "0")
    rows = {r["name"]: r for r in top["symbols"]}
    total = top["samples"]
    t.check(total >= SPLIT_S * HZ * 0.6, "%d user samples of the worker for %.1f s of CPU" % (
        total, SPLIT_S))
    t.check(top["samples_kernel"] == 0 and all(r["kind"] != "kernel" for r in top["symbols"]),
            "--user: no kernel sample or row")
    hot = rows.get("burn_hot", {}).get("percent", 0)
    cold = rows.get("burn_cold", {}).get("percent", 0)
    t.check(abs(hot - 70) <= 5, "burn_hot has %.1f%% (70 +- 5)" % hot)
    t.check(abs(cold - 30) <= 5, "burn_cold has %.1f%% (30 +- 5)" % cold)
    t.check(len(top["threads"]) == 1 and top["threads"][0]["tid"] == w["tid"],
            "--tid: one thread, the worker")

    # The whole process: breakdowns consistent with the samples.
    top = d.json("top", "--pid", str(w["pid"]), "--limit", "0")
    total = top["samples"]
    for key in ("threads", "comms", "images"):
        s = sum(r["samples"] for r in top[key])
        t.check(s == total, "%s add up to the %d samples (%d)" % (key, total, s))
    period = top["statistics"]["sample_period_ns"]
    t.check(abs(period - 1e9 / HZ) <= 0.25 * 1e9 / HZ,
            "mean period %.0f ns, about 1/%d s" % (period, HZ))
    for key in ("threads", "comms", "images"):
        for r in top[key]:
            t.check(abs(r["cpu_s"] - r["samples"] * period / 1e9) <= 0.02 + 0.05 * r["cpu_s"],
                    "%s %s: %.3f s = %d samples x the period" % (
                        key, r.get("tid", r.get("comm", r.get("object"))), r["cpu_s"],
                        r["samples"]))
    t.check(abs(top["cpu_s"] - SPLIT_S) <= 0.25 * SPLIT_S,
            "the process's seconds %.2f are about the %.1f s it burnt" % (top["cpu_s"], SPLIT_S))
    # (the process was the test's python3 between its fork and its exec: a
    # sample may land there, under that name)
    t.check(top["comms"][0]["comm"] == "burn_split" and
            all(c["comm"] == "python3" and c["samples"] <= 2 for c in top["comms"][1:]),
            "one command: burn_split (%s)" % [(c["comm"], c["samples"]) for c in top["comms"]])
    worker = by(top["threads"], "tid", w["tid"])
    t.check(worker and worker[0]["samples"] >= 0.95 * total and worker[0]["pid"] == w["pid"]
            and worker[0]["comm"] == "burn_split", "the worker thread holds the samples")
    for im in top["images"]:
        funcs = sum(r["samples"] for r in top["symbols"]
                    if r["object"] == im["object"] and r["kind"] == im["kind"])
        t.check(funcs == im["samples"], "image %s: %d samples = its functions' %d" % (
            im["object"], im["samples"], funcs))
    exe = [im for im in top["images"] if (im["object"] or "").endswith("/burn_split")]
    t.check(exe and exe[0]["kind"] == "user" and exe[0]["samples"] >= 0.9 * total,
            "the executable's image holds the burn (%s)" % exe)
    st = top["statistics"]
    t.check(st["range_samples"] >= total and st["processes_seen"] >= 2
            and st["threads_seen"] >= 2 and st["rspd_cpu_s_in_range"] is not None
            and st["lost_records_in_range"] >= 0 and st["range_samples_idle"] >= 0,
            "statistics of run: %d samples in the range, %d processes, %d threads" % (
                st["range_samples"], st["processes_seen"], st["threads_seen"]))

    # The global kernel profile.
    top = d.json("top", "--kernel", "--limit", "0")
    t.check(top["frames"] == "kernel" and top["samples"] == top["samples_kernel"],
            "--kernel: every sample is a kernel one (%d)" % top["samples"])
    t.check(all(r["kind"] == "kernel" for r in top["symbols"]) and
            all((im["object"] or "[").startswith("[") for im in top["images"]),
            "--kernel: only kernel functions and kernel images")
    zk = by(top["threads"], "tid", z["tid"])
    wk = by(top["threads"], "tid", w["tid"])
    t.check(zk and zk[0]["samples"] >= ZERO_S * HZ * 0.5,
            "the /dev/zero reader's kernel time is there (%s)" % zk)
    t.check(not wk or wk[0]["samples"] <= 0.05 * SPLIT_S * HZ,
            "the user-mode burner hardly appears (%s)" % wk)
    zall = d.json("top", "--pid", str(z["pid"]))
    # Most of it: ~99% in release; under ASan its read() interceptor checks
    # the 1 MiB buffer in user mode (~30% of the reader's time there).
    t.check(zall["samples_kernel"] >= 0.55 * zall["samples"],
            "the reader's profile is kernel-heavy (%d of %d)" % (zall["samples_kernel"],
                                                                zall["samples"]))

    # --comm: both processes of that name, whole (and any other process of
    # that name: under ASan, LeakSanitizer's stop-the-world task is one).
    both = d.json("top", "--comm", "burn_split", "--limit", "0")
    one = d.json("top", "--pid", str(w["pid"]))

    def of_pid(pid):
        return sum(r["samples"] for r in both["threads"] if r["pid"] == pid)

    t.check(all(r["comm"] == "burn_split" for r in both["threads"])
            and sum(r["samples"] for r in both["threads"]) == both["samples"],
            "--comm burn_split: only threads of that name (%d samples)" % both["samples"])
    def named(ans):  # a sample before the exec is the test's python3's, not burn_split's
        return sum(c["samples"] for c in ans["comms"] if c.get("comm") == "burn_split")

    t.check(of_pid(w["pid"]) == named(one) and of_pid(z["pid"]) == named(zall),
            "--comm burn_split: both processes whole (%d = %d, %d = %d)" % (
                of_pid(w["pid"]), named(one), of_pid(z["pid"]), named(zall)))

    # Text: every section, 80 columns; bad combinations are one sentence.
    _, text, _ = d.ctl("top", "--pid", str(w["pid"]))
    print(text)
    for part in ("by thread", "by command", "by image", "statistics of run", "range:",
                 "gaps in the range", "rspd in the range"):
        t.check(part in text, "text shows '%s'" % part)
    t.check(all(len(line) < 80 for line in text.splitlines()), "text lines fit in 80 columns")
    rc, _, err = d.ctl("top", "--kernel", "--user", check_rc=False)
    t.check(rc != 0 and "--kernel and --user" in err and err.count("\n") <= 1,
            "--kernel --user: one sentence (%s)" % err.strip())
    rc, _, err = d.ctl("top", "--comm", "a_name_too_long_for_comm", check_rc=False)
    t.check(rc != 0 and "15 bytes" in err, "a --comm too long: one sentence (%s)" % err.strip())
