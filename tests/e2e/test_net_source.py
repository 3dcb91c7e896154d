"""The network source is chosen at start and shown in rspctl status.

Known answer, from the kernel itself: where /sys/bus/event_source/devices/
kprobe exists, auto picks kprobes; elsewhere (this machine: CONFIG_KPROBES
off) the sock tracepoints, every kprobe event is listed as not used with
the reason, and --net-source kprobe is refused at start with one sentence
that names the missing PMU and the fix, exit 1. --net-source tracepoint is
honoured either way and says it was asked for."""
import os

import rsptest as t

t.need_root()
HAVE_KPROBES = os.path.exists("/sys/bus/event_source/devices/kprobe")


def net_family(d):
    st = d.json("status")
    return next(f for f in st["families"] if f["name"] == "net")


with t.Rspd() as d:
    net = net_family(d)
    kp = [e for e in net["events"] if e["name"].startswith("kp_")]
    tp = [e for e in net["events"] if e["source"] == "tracepoint"]
    print("   net: source %s, note: %s" % (net["source"], net.get("note")))
    if HAVE_KPROBES:
        t.check(net["source"] == "kprobe" and "kprobe PMU" in net["note"],
                "auto chose kprobes on a kernel with the kprobe PMU")
        t.check(all(e["open"] for e in kp), "every kprobe is open")
    else:
        t.check(net["source"] == "tracepoint" and "no kprobe PMU" in net["note"],
                "auto chose the sock tracepoints and says why")
        t.check(kp and all(not e["open"] and "no kprobe PMU" in e["problem"] for e in kp),
                "each of the %d kprobe events is listed as not used, with the reason" % len(kp))
        t.check(all(e["open"] for e in tp if e["name"] in
                    ("sock_send_length", "sk_data_ready", "inet_sock_set_state")),
                "the send, arrival and state tracepoints are open")
    _, text, _ = d.ctl("status")
    t.check(net["note"] in " ".join(text.split()), "the text status shows how it was chosen")

with t.Rspd("--net-source", "tracepoint") as d:
    net = net_family(d)
    t.check(net["source"] == "tracepoint" and "as asked" in net["note"],
            "--net-source tracepoint: %s" % net["note"])

if HAVE_KPROBES:
    with t.Rspd("--net-source", "kprobe") as d:
        t.check(net_family(d)["source"] == "kprobe", "--net-source kprobe uses kprobes")
else:
    d = t.Rspd("--net-source", "kprobe")
    p = t.run([t.RSPD, "--foreground", "--socket", d.socket, "--config", d.config,
               "--net-source", "kprobe"])
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    print("   " + last)
    t.check(p.returncode == 1 and "no kprobe PMU" in last and "--net-source tracepoint" in last,
            "--net-source kprobe is refused at start, naming the missing PMU and the fix")
    t.check(not os.path.exists(d.socket), "and rspd did not start serving")
