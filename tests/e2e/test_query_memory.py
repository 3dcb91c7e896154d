"""--query-memory bounds the heap one query holds, and rspd gives a query's
memory back when it is done. On a full 16 MiB window: a graph under
query-memory 1M fails with the sentence that names the option (and rspd
goes on); after a reload to 64M the same graph is answered; after rounds of
every heavy query, rspd's RSS is at most window + rings + histograms +
query-memory + 32 MiB (the bound README gives; it held 3-10x that before:
glibc kept each query thread's freed heap)."""
import signal
import time
import rsptest as t

t.need_root()
QUERY_MEMORY = 64 << 20
BPF_RING = 1 << 20  # daemon/bpfcap.c: ring_bytes per CPU, its data mapped twice


def rss(pid, key="VmRSS"):
    """VmRSS (now) or VmHWM (the peak) of @pid, in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def sanitized(pid):
    """ASan keeps freed memory in quarantine and maps shadow memory: its RSS
    says nothing of rspd's."""
    with open("/proc/%d/maps" % pid) as f:
        return "libasan" in f.read()


def bound(st):
    cpus = len(st["cpus"])
    rings = cpus * (st["config"]["ring_pages"] + 1) * 4096
    if st["config"]["capture"] == "bpf":
        rings += cpus * 2 * BPF_RING
    hist = st["hist"]["bytes"] if st.get("hist") else 0
    # 32 MiB: rspd's code and libraries (capstone's relocated tables alone
    # are 3.2 MiB of RSS, libmicrohttpd's gnutls 1.1 MiB), the BPF maps it maps
    # (4 MiB more with --families +syscall), libbpf's loads,
    # the process model and the symbol caches
    return st["window"]["budget_bytes"] + rings + hist + QUERY_MEMORY + (32 << 20)


def heavy(d, pid):
    """Every query that reads the window; each is answered or names the option.
    @pid: rspd's own, always in the window (other work on the machine may
    roll the ping-pong out of a 16 MiB window)."""
    queries = [["graph"], ["graph", "--format", "json", "--no-merge"],
               ["top", "--stacks", "10", "--limit", "0"], ["snapshot", str(pid), "--last", "600s"], ["net"],
               ["status", "--events"], ["status", "--pid", str(pid)]]
    answered = 0
    for q in queries:
        rc, _, err = d.ctl(*q, check_rc=False)
        # (on the BPF backend, rspd's own threads can be without a record in
        # a 16 MiB window the load fills: an answer in one sentence, not a
        # memory failure)
        if rc != 0 and "--query-memory 64M" not in err and \
                "did nothing in the time asked for" not in err:
            t.fail("rspctl %s failed otherwise than by the budget: %s" % (" ".join(q), err))
        answered += rc == 0
    return answered


with t.Rspd("--window", "16M", config="[control]\nquery-memory = 1M\n") as d:
    t.fill_window(d)
    rc, _, err = d.ctl("graph", check_rc=False)
    t.check(rc != 0 and "needs more memory than --query-memory 1M" in err and "raise it" in err,
            "graph under query-memory 1M fails and names the option: " + err.strip())
    t.check(d.alive() and d.json("status")["records"] > 0, "rspd goes on")

    d.write_config("[control]\nquery-memory = 64M\n")
    d.signal(signal.SIGHUP)
    d.wait_log("reloaded " + d.config)
    rc, out, err = d.ctl("graph", check_rc=False)
    t.check(rc == 0 and out, "graph under query-memory 64M is answered " + err.strip())

    answered = sum(heavy(d, d.proc.pid) for _ in range(3))
    t.check(answered >= 12, "%d of 21 heavy queries answered within 64M" % answered)
    st = d.json("status")
    if sanitized(d.proc.pid):
        print("ok: RSS not checked under ASan (quarantine, shadow memory)")
    else:
        limit = bound(st)
        # The last query's thread trims its heap just after its answer.
        deadline = time.time() + 5
        while rss(d.proc.pid) > limit and time.time() < deadline:
            time.sleep(0.2)
        t.check(rss(d.proc.pid) <= limit,
                "RSS %.1f MiB <= window + rings + histograms + query-memory + 32 MiB = %.1f MiB"
                % (rss(d.proc.pid) / 2**20, limit / 2**20))
        # One query at a time: the peak too (each held at most query-memory).
        t.check(rss(d.proc.pid, "VmHWM") <= limit,
                "peak RSS %.1f MiB <= the same bound" % (rss(d.proc.pid, "VmHWM") / 2**20))
