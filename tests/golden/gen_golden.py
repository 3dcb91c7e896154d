#!/usr/bin/python3
"""Generate tests/golden/golden_records.h: real tracepoint records from the
running kernel, and what perf (an independent decoder) says they contain.

For each catalogued tracepoint it embeds
  - the event's format text from tracefs,
  - the raw bytes of a few samples recorded with `perf record`,
  - perf script's text for each sample, and the field values parsed out of
    that text.
test_decode_golden.c decodes the bytes with rsp's decoder and compares the
fields with perf's, and prints them with libtraceevent to compare the text.

Run as root on a machine with perf and tracefs; commit the result. The test
itself needs neither.
"""
import os
import re
import subprocess
import sys
import tempfile

EVENTS = [
    "sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup_new",
    "sched:sched_process_fork", "sched:sched_process_exec", "sched:sched_process_exit",
    "block:block_rq_insert", "block:block_rq_issue", "block:block_rq_complete",
    "irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry", "irq:softirq_exit",
    "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit", "timer:hrtimer_start",
    "sock:sock_send_length", "sock:sock_recv_length", "sock:sk_data_ready",
    "sock:inet_sock_set_state", "tcp:tcp_rcv_space_adjust",
]
PER_EVENT = 3
TRACEFS = "/sys/kernel/tracing"
# perf record's sample_type for these: IDENTIFIER IP TID TIME CPU PERIOD RAW;
# the raw size (u32) follows 6 u64 words after the 8-byte header.
RAW_OFFSET = 8 + 6 * 8

TCP_STATES = {"TCP_ESTABLISHED": 1, "TCP_SYN_SENT": 2, "TCP_SYN_RECV": 3, "TCP_FIN_WAIT1": 4,
              "TCP_FIN_WAIT2": 5, "TCP_TIME_WAIT": 6, "TCP_CLOSE": 7, "TCP_CLOSE_WAIT": 8,
              "TCP_LAST_ACK": 9, "TCP_LISTEN": 10, "TCP_CLOSING": 11, "TCP_NEW_SYN_RECV": 12}
FAMILIES = {"AF_INET": 2, "AF_INET6": 10}
PROTOCOLS = {"IPPROTO_TCP": 6, "IPPROTO_UDP": 17}
# TCP and UDP over loopback: sends, arrivals, receives, state changes.
NET_SCRIPT = """
import socket, threading
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(3):
    c.sendto(b"x", u.getsockname()); d, a = u.recvfrom(10); u.sendto(d, a); c.recv(10)
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen()
def srv():
    a, _ = ls.accept()
    for i in range(3):
        a.send(a.recv(10))
    a.close()
t = threading.Thread(target=srv); t.start()
k = socket.create_connection(ls.getsockname())
for i in range(3):
    k.send(b"y"); k.recv(10)
t.join(); k.close()
"""

STATE = {"R": 0, "S": 1, "D": 2, "T": 4, "t": 8, "X": 16, "Z": 32, "P": 64, "I": 128}
STATE_CHARS = "SDTtXZPI"


def prev_state(text):
    """'S', 'D|W', 'R+' -> the integer prev_state."""
    v = 0
    if text.endswith("+"):
        return 256
    for part in text.split("|"):
        v |= STATE.get(part, 0)
    return v


def workload():
    # Something of everything: forks and execs, pipes, sleeps, direct I/O
    # on a busy CPU (so that block completion and irq records are emitted on
    # this kernel), timers.
    return ("taskset -c 1 sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done' & "
            "dd if=/dev/zero of=/var/tmp/rsp-golden bs=64k count=64 oflag=direct 2>/dev/null; "
            "sync; ls / >/dev/null; sleep 0.05; python3 -c '%s'; wait; rm -f /var/tmp/rsp-golden"
            % NET_SCRIPT.replace("'", "\"'\"'"))


def record(path):
    subprocess.run(["perf", "record", "-q", "-o", path, "-a", "-e", ",".join(EVENTS), "--",
                    "sh", "-c", workload()], check=True)


def parse_dump(path):
    """Yield (event, raw bytes, perf text) for every sample in perf script -D."""
    out = subprocess.run(["perf", "script", "-D", "-i", path], capture_output=True,
                         text=True, check=True).stdout
    hexbytes, in_raw, sample = bytearray(), False, None
    for line in out.splitlines():
        if ". ... raw event:" in line:
            hexbytes, in_raw = bytearray(), True
            continue
        m = re.match(r"^\.\s+[0-9a-f]{4}:\s+((?:[0-9a-f]{2} )+)", line)
        if in_raw and m:
            hexbytes += bytes(int(b, 16) for b in m.group(1).split())
            continue
        in_raw = False
        if "PERF_RECORD_SAMPLE" in line:
            sample = bytes(hexbytes)
            continue
        m = re.match(r"^\s*\S.*?\s+(\w+:\w+):\s?(.*)$", line)
        if sample is not None and m and m.group(1) in EVENTS:
            size = int.from_bytes(sample[RAW_OFFSET:RAW_OFFSET + 4], "little")
            raw = sample[RAW_OFFSET + 4:RAW_OFFSET + 4 + size]
            yield m.group(1), raw, m.group(2).strip()
            sample = None


def kv(text):
    return dict(re.findall(r"(\w+)=(\S+)", text))


def num(v):
    v = v.rstrip(",")
    return int(v, 16) if v.startswith("0x") else int(v)


def devnum(text):
    maj, mnr = text.split(",")
    return (int(maj) << 20) | int(mnr)


def expect(event, text):
    """Field values perf printed, as {name: int or str}."""
    name = event.split(":")[1]
    if name == "sched_switch":
        m = re.match(r"prev_comm=(.*) prev_pid=(\d+) prev_prio=(\d+) prev_state=(\S+) ==> "
                     r"next_comm=(.*) next_pid=(\d+) next_prio=(\d+)", text)
        return {"prev_comm": m.group(1), "prev_pid": int(m.group(2)),
                "prev_prio": int(m.group(3)), "prev_state": prev_state(m.group(4)),
                "next_comm": m.group(5), "next_pid": int(m.group(6)),
                "next_prio": int(m.group(7))}
    if name in ("sched_waking", "sched_wakeup_new"):
        m = re.match(r"comm=(.*) pid=(\d+) prio=(\d+) target_cpu=(\d+)", text)
        return {"comm": m.group(1), "pid": int(m.group(2)), "prio": int(m.group(3)),
                "target_cpu": int(m.group(4))}
    if name == "sched_process_fork":
        m = re.match(r"comm=(.*) pid=(\d+) child_comm=(.*) child_pid=(\d+)", text)
        return {"parent_comm": m.group(1), "parent_pid": int(m.group(2)),
                "child_comm": m.group(3), "child_pid": int(m.group(4))}
    if name == "sched_process_exec":
        m = re.match(r"filename=(.*) pid=(\d+) old_pid=(\d+)", text)
        return {"filename": m.group(1), "pid": int(m.group(2)), "old_pid": int(m.group(3))}
    if name == "sched_process_exit":
        m = re.match(r"comm=(.*) pid=(\d+) prio=(\d+)", text)
        return {"comm": m.group(1), "pid": int(m.group(2)), "prio": int(m.group(3))}
    if name in ("block_rq_insert", "block_rq_issue"):
        # "254,0 WS 65536 () 1234 + 128 [dd]", newer kernels add the ioprio
        m = re.match(r"(\d+,\d+) (\S+) (\d+) \(.*?\) (\d+) \+ (\d+)(?: \S+)? \[(.*)\]", text)
        return {"dev": devnum(m.group(1)), "rwbs": m.group(2), "bytes": int(m.group(3)),
                "sector": int(m.group(4)), "nr_sector": int(m.group(5)), "comm": m.group(6)}
    if name == "block_rq_complete":
        m = re.match(r"(\d+,\d+) (\S+) \(.*?\) (\d+) \+ (\d+)(?: \S+)? \[(-?\d+)\]", text)
        return {"dev": devnum(m.group(1)), "rwbs": m.group(2), "sector": int(m.group(3)),
                "nr_sector": int(m.group(4)), "error": int(m.group(5))}
    if name == "irq_handler_entry":
        m = re.match(r"irq=(\d+) name=(.*)", text)
        return {"irq": int(m.group(1)), "name": m.group(2)}
    if name == "irq_handler_exit":
        m = re.match(r"irq=(\d+) ret=(\w+)", text)
        return {"irq": int(m.group(1)), "ret": 1 if m.group(2) == "handled" else 0}
    if name in ("softirq_entry", "softirq_exit"):
        m = re.match(r"vec=(\d+)", text)
        return {"vec": int(m.group(1))}
    if name == "hrtimer_expire_entry":
        m = re.match(r"hrtimer=(0x[0-9a-f]+) function=\S+ now=(\d+)", text)
        return {"hrtimer": int(m.group(1), 16), "now": int(m.group(2))}
    if name == "hrtimer_expire_exit":
        m = re.match(r"hrtimer=(0x[0-9a-f]+)", text)
        return {"hrtimer": int(m.group(1), 16)}
    if name == "hrtimer_start":
        m = re.match(r"hrtimer=(0x[0-9a-f]+) function=\S+ expires=(\d+) softexpires=(\d+)", text)
        return {"hrtimer": int(m.group(1), 16), "expires": int(m.group(2))}
    if name in ("sock_send_length", "sock_recv_length"):
        m = re.match(r"sk address = (0x[0-9a-f]+|[0-9a-f]+), family = (\w+) protocol = (\w+), "
                     r"length = (\d+), error = (-?\d+), flags = (0x[0-9a-f]+)", text)
        proto = m.group(3)
        return {"sk": int(m.group(1), 16), "family": FAMILIES[m.group(2)],
                "protocol": PROTOCOLS.get(proto) or int(proto, 16),
                "ret": int(m.group(4)) if int(m.group(4)) else int(m.group(5))}
    if name == "sk_data_ready":
        m = re.match(r"family=(\d+) protocol=(\d+) func=", text)
        return {"family": int(m.group(1)), "protocol": int(m.group(2))}
    if name == "inet_sock_set_state":
        k = kv(text)
        return {"family": FAMILIES[k["family"]], "protocol": PROTOCOLS[k["protocol"]],
                "sport": int(k["sport"]), "dport": int(k["dport"]),
                "oldstate": TCP_STATES[k["oldstate"]], "newstate": TCP_STATES[k["newstate"]]}
    if name == "tcp_rcv_space_adjust":
        k = kv(text)
        return {"family": FAMILIES[k["family"]], "sport": int(k["sport"]),
                "dport": int(k["dport"])}
    raise ValueError(name)


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n\"\n\t\"") + '"'


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "golden_records.h")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "g.data")
        record(data)
        samples = {}
        for event, raw, text in parse_dump(data):
            samples.setdefault(event, [])
            if len(samples[event]) < PER_EVENT and raw not in [r for r, _, _ in samples[event]]:
                try:
                    samples[event].append((raw, text, expect(event, text)))
                except (AttributeError, ValueError):
                    pass
    missing = [e for e in EVENTS if e not in samples]
    if missing:
        print("warning: no samples of " + ", ".join(missing), file=sys.stderr)
    lines = ["/* Generated by tests/golden/gen_golden.py on Linux " + os.uname().release +
             ": do not edit. */", "#include \"golden.h\"", ""]
    lines.append("const struct golden_format golden_formats[] = {")
    for e in EVENTS:
        sysname, name = e.split(":")
        with open(os.path.join(TRACEFS, "events", sysname, name, "format")) as f:
            fmt = f.read()
        lines.append("\t{%s, %s,\n\t %s}," % (c_string(sysname), c_string(name), c_string(fmt)))
    lines.append("\t{NULL, NULL, NULL},")
    lines.append("};")
    lines.append("")
    lines.append("const struct golden_record golden_records[] = {")
    for e in EVENTS:
        for raw, text, exp in samples.get(e, []):
            fields = ", ".join(
                "{%s, %s, %s}" % (c_string(k), c_string(v) if isinstance(v, str) else "NULL",
                                  "0" if isinstance(v, str) else
                                  ("%dull" % v if v >= 0 else "(unsigned long long)%dll" % v))
                for k, v in exp.items())
            lines.append("\t{%s, %d, (const unsigned char[]){%s},\n\t %s,\n\t {%s, {NULL, NULL, 0}}},"
                         % (c_string(e.split(":")[1]), len(raw),
                            ", ".join("0x%02x" % b for b in raw), c_string(text), fields))
    lines.append("\t{NULL, 0, NULL, NULL, {{NULL, NULL, 0}}},")
    lines.append("};")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s: %d records of %d events" % (
        out_path, sum(len(v) for v in samples.values()), len(samples)))


if __name__ == "__main__":
    main()
