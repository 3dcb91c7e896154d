"""rspctl hist --save and --diff end to end: rspctl (not rspd) writes the
baseline, 0600, atomically; a later --diff against it ranks the pairs; a
range diff (--base-from/--base-to) works the same way inside rspd; a
damaged baseline is one clear error.

Known answer: the baseline holds the softirq profiles of a quiet stretch;
the current range covers loopback TCP traffic, so softirq:NET_RX must be
among the selected pairs, with more runs now than in the baseline. (Only
softirqs are compared: the disk, shared with other work on the machine,
could carry far more latency and make NET_RX "tiny" in phase 1.) Another
process writes to the disk and a busy loop takes a CPU meanwhile, over
the baseline and the traffic alike (issue 14: answers that hold on a
machine others use)."""
import json
import os
import socket
import stat
import tempfile
import threading
import time
import rsptest as t

t.need_root()


def traffic(chunks=10000):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def sink():
        c, _ = srv.accept()
        while c.recv(1 << 16):
            pass
        c.close()

    th = threading.Thread(target=sink)
    th.start()
    cli = socket.create_connection(srv.getsockname())
    for _ in range(chunks):
        cli.sendall(b"y" * 16384)
    cli.close()
    th.join()
    srv.close()


def net_rx(pairs):
    return [p for p in pairs if p["op"] == "softirq:NET_RX" and p["subject"]["kind"] == "system"]


tmp = tempfile.mkdtemp(prefix="rsp-hist-diff.")
base = os.path.join(tmp, "base.json")
with t.Rspd() as d, t.Background(os.environ.get("RSP_TEST_DIR", "/var/tmp")):
    time.sleep(3.5)
    t.wait_fed(d, t.now_s())
    d.ctl("hist", "--op", "softirq", "--last", "3s", "--save", base)
    t.check(os.path.exists(base), "--save wrote %s" % base)
    t.check(stat.S_IMODE(os.stat(base).st_mode) == 0o600, "the baseline is mode 0600")
    t.check([f for f in os.listdir(tmp)] == ["base.json"], "no temporary file left behind")
    with open(base) as f:
        saved = json.load(f)
    t.check(saved["format"] == "rsp-hist" and saved["version"] == 1,
            "the baseline names its format and version")
    t.check(not saved["range"]["cumulative"], "it holds the range asked for")

    time.sleep(1.2)  # traffic starts after the baseline's last (1 s) slice
    t0 = t.now_s()
    traffic()
    # Ask soon: "--last 3s" must still reach back to t0 for the range diff
    # below too (a stretch of 3 s after the traffic would put its start on
    # the range's edge and let it slide out between the two questions).
    t.wait_fed(d, t.now_s())
    diff = d.json("hist", "--op", "softirq", "--last", "3s", "--diff", base)
    t.check(diff["format"] == "rsp-hist-diff", "--diff FILE --json answers a diff")
    sel = [p for p in diff["pairs"] if p["verdict"] == "selected"]
    nr = net_rx(sel)
    for p in diff["pairs"]:
        print("   %-9s %-16s %6d -> %6d runs, %9d -> %9d ns" % (
            p["verdict"], p["op"], p["count_base"], p["count_cur"], p["total_base_ns"],
            p["total_cur_ns"]))
    t.check(nr and nr[0]["count_cur"] > nr[0]["count_base"],
            "softirq:NET_RX is selected, with more runs now (%s)"
            % (str((nr[0]["count_base"], nr[0]["count_cur"])) if nr else "absent"))
    text = d.ctl("hist", "--last", "3s", "--diff", base, "--top", "1")[1]
    t.check("OSprof phase 1" in text and "EMD" in text, "the text diff explains its ranking")
    t.check(all(len(line) < 80 for line in text.splitlines()), "and fits in 80 columns")

    # The same question inside rspd: this range against the saved one's times.
    t.check(t.now_s() - t0 < 2.5, "the traffic is still within the last 3 s (%.2f s ago)"
            % (t.now_s() - t0))
    rng = d.json("hist", "--op", "softirq", "--last", "3s", "--base-from",
                 "%.3f" % saved["range"]["from_s"], "--base-to",
                 "%.3f" % (saved["range"]["to_s"] - 0.5))
    for p in rng["pairs"]:
        print("   range: %-9s %-16s %6d -> %6d" % (p["verdict"], p["op"], p["count_base"],
                                                  p["count_cur"]))
    t.check(rng["format"] == "rsp-hist-diff" and net_rx(
        [p for p in rng["pairs"] if p["verdict"] == "selected"]),
        "a range diff (--base-from/--base-to, absolute times) selects NET_RX too")
    rc, _, err = d.ctl("hist", "--base-from", "-1000s", "--base-to", "-999s", check_rc=False)
    t.check(rc != 0 and "no time slices" in err, "a baseline range older than the slices "
            "kept is one clear error")

    # A damaged baseline: one sentence, naming the file.
    with open(base, "w") as f:
        f.write(json.dumps(saved)[:200])
    rc, out, err = d.ctl("hist", "--diff", base, check_rc=False)
    t.check(rc != 0 and base in err and "not valid JSON" in err and err.count("\n") == 1,
            "a damaged baseline is one clear error: " + err.strip())
    saved["version"] = 7
    with open(base, "w") as f:
        json.dump(saved, f)
    rc, out, err = d.ctl("hist", "--diff", base, check_rc=False)
    t.check(rc != 0 and "newer rspctl" in err, "a baseline from a newer format says so")
    rc, out, err = d.ctl("hist", "--diff", os.path.join(tmp, "missing.json"), check_rc=False)
    t.check(rc != 0 and "cannot read baseline" in err, "a missing baseline says so")
os.unlink(base)
os.rmdir(tmp)
