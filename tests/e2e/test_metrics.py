"""Prometheus metrics (rspd --metrics-listen, --metrics-textfile), end to end.

Known answer (tests/workloads/sleep_two_peaks.c): one thread sleeps 1 ms and
8 ms alternately, N times each, so 99% of its deliberate sleeps
(offcpu:sleep) lie at or below the bucket of the 8 ms sleeps. A real
Prometheus server (Debian's package; started here on loopback with a temp
configuration and storage, scrape interval 2 s: a scrape of a
busy shared machine has 10^4 process series) scrapes rspd, and PromQL's
histogram_quantile(0.99, ...) over the workload's series must land in the
same log2 bucket as `rspctl hist`'s p99 of the same profile; its _count must
be the profile's count. Prometheus runs with native histograms on
(--enable-feature=native-histograms), so it asks for protobuf first and rspd
answers in protobuf with the native histograms in nanoseconds beside the
classic ones: the native series of the workload must hold the profile's
count, sum and every bucket's count (native bucket (2^(b-1), 2^b] = profile
bucket b), and histogram_quantile(0.99, ...) over the native series must
land in the bucket of rspctl hist's p99 too; over its increase() while
Prometheus watched it grow, in the bucket of the p99 of the sleeps that
arrived meanwhile (the scraped counts, last minus first). A malformed Accept header gets the text format; a
scraper that hangs up mid-answer costs nothing. The textfile must pass promtool's check and hold the
same series as a scrape; the cut to --metrics-top-processes must hold; and
a non-loopback address, a port in use and a bad textfile path must each stop
rspd with one sentence.

Skips with one line when Debian's prometheus package is not installed
(scripts/deps.sh installs it).
"""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import rsptest as t

t.need_root()

N = 300  # ~3 s of sleeps: Prometheus (2 s scrapes) sees the series grow
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")


def get(url, accept=None, timeout=60, raw=False):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
            return r.headers.get("Content-Type"), body if raw else body.decode()
    except urllib.error.HTTPError as e:
        print("   %s (Accept: %s): %d %s" % (url, accept, e.code, e.read().decode()[:500]))
        raise


# What Prometheus 2.42 sends with --enable-feature=native-histograms.
PROTOBUF_ACCEPT = ("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
                   "encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,"
                   "application/openmetrics-text;version=0.0.1;q=0.75,"
                   "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def varint(b, i):
    v = shift = 0
    while True:
        v |= (b[i] & 0x7f) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return v, i


def family_names(body):
    """The names of a delimited MetricFamily stream; its framing must add up."""
    names, i = [], 0
    while i < len(body):
        n, i = varint(body, i)
        msg = body[i:i + n]
        t.check(len(msg) == n and msg[0] == 0x0a, "a whole MetricFamily with its name first")
        ln, j = varint(msg, 1)
        names.append(msg[j:j + ln].decode())
        i += n
    return names


def native_bucket(ns):
    """The schema-0 index i of (2^(i-1), 2^i] that holds @ns (a PromQL float)."""
    i = 0
    while (1 << i) < ns * (1 - 1e-12):
        i += 1
    return i


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')


def parse(text):
    """{(name, labels): value} of an exposition; every line must parse."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            t.fail("a line that is not a sample: %r" % line)
        out[(m.group(1), m.group(3) or "")] = float(m.group(4))
    return out


def refused(args, want, what):
    """rspd with @args must not start, and say @want in one line."""
    tmp = tempfile.mkdtemp(prefix="rsptest.")
    conf = os.path.join(tmp, "rspd.conf")
    open(conf, "w").close()
    p = subprocess.run([t.RSPD, "--foreground", "--socket", os.path.join(tmp, "s.sock"),
                        "--config", conf, "--overhead-budget", "0"] + args,
                       capture_output=True, text=True, timeout=120)
    err = [line for line in (p.stdout + p.stderr).splitlines() if "error" in line or
           line.startswith("rspd:")]
    shutil.rmtree(tmp, ignore_errors=True)
    print("   %s -> %d: %s" % (" ".join(args), p.returncode, err))
    t.check(p.returncode != 0 and len(err) == 1 and want in err[0],
            "%s: rspd does not start, and says so in one line" % what)


def bucket_of_le(seconds):
    """The r=1 bucket whose upper bound le = 2^b - 1 ns holds @seconds."""
    ns = seconds * 1e9
    b = 0
    while (1 << b) - 1 < ns * (1 - 1e-12):
        b += 1
    return b


# ---- bad configurations: one sentence each --------------------------------
refused(["--metrics-listen", "192.0.2.1:%d" % t.free_port()], "not a loopback address",
        "a non-loopback --metrics-listen without metrics-remote")
busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen(1)
refused(["--metrics-listen", "127.0.0.1:%d" % busy.getsockname()[1]],
        "Address already in use", "a port in use")
busy.close()
refused(["--metrics-textfile", "/nonexistent-rsp-dir/rsp.prom"], "/nonexistent-rsp-dir",
        "a textfile in a directory that does not exist")
refused(["--metrics-textfile", "/tmp/rsp-metrics.txt"], "*.prom",
        "a textfile node_exporter would not read")
with tempfile.NamedTemporaryFile(suffix=".conf") as empty:
    p = subprocess.run([t.RSPD, "--check-config", "--config", empty.name, "--metrics-listen",
                        "localhost:99999"], capture_output=True, text=True, timeout=30)
t.check(p.returncode != 0 and "--metrics-listen: invalid value 'localhost:99999'; want IPV4:PORT"
        in p.stderr.splitlines()[0], "--metrics-listen localhost:99999 is refused by the option "
        "parser in one sentence: %s" % p.stderr.strip())

if not PROMETHEUS or not PROMTOOL:
    print("SKIP: Debian's prometheus package is not installed (scripts/deps.sh installs it)")
    sys.exit(t.SKIP)

# ---- a real Prometheus scrapes rspd ------------------------------------------
tmp = tempfile.mkdtemp(prefix="rsptest-prom.")
port, pport = t.free_port(), t.free_port()
textfile = os.path.join(tmp, "rsp.prom")
with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
    f.write("global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\n"
            "scrape_configs:\n  - job_name: rsp\n    static_configs:\n"
            "      - targets: ['127.0.0.1:%d']\n" % port)
prom = None
try:
    with t.Rspd("--metrics-listen", "127.0.0.1:%d" % port, "--metrics-textfile", textfile,
                "--metrics-interval", "1s", "--metrics-top-processes", "1000",
                # room for every profile: builds on this shared machine start
                # processes by the thousand, and the least recently updated
                # profile, the exited workload's, would be merged into "other"
                "--hist-profiles", "65536",
                # no syscall family: its ops per process made 3/4 of a scrape
                # (60 MB of text with builds running beside), past the 2 s
                # scrape timeout and --query-memory
                "--families", "sched,block,irq,timer,sample,net,sideband") as d:
        prom = subprocess.Popen([PROMETHEUS, "--config.file", os.path.join(tmp, "prometheus.yml"),
                                 "--storage.tsdb.path", os.path.join(tmp, "data"),
                                 "--web.listen-address", "127.0.0.1:%d" % pport,
                                 # it then asks for protobuf first: rspd answers
                                 # in a text format it also accepts (README: why
                                 # no native histograms)
                                 "--enable-feature=native-histograms"],
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w"))
        api = "http://127.0.0.1:%d/api/v1/" % pport

        def promql(q):
            _, body = get(api + "query?" + urllib.parse.urlencode({"query": q}))
            r = json.loads(body)
            if r["status"] != "success":
                t.fail("PromQL %s: %s" % (q, r))
            return r["data"]["result"]

        # Prometheus scrapes before the workload starts, so that it sees the
        # workload's series grow (the increase() check below).
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                up = promql('up{job="rsp"}')
            except OSError:
                up = []
            if up and up[0]["value"][1] == "1":
                break
            time.sleep(0.3)
        w = t.workload("sleep_two_peaks", N)
        print("   workload: %s" % w)
        t.wait_fed(d, t.now_s())
        hp = d.json("hist", "--pid", str(w["pid"]), "--op", "offcpu:sleep")
        prof = [p for p in hp["profiles"] if p["subject"]["kind"] == "process"]
        t.check(len(prof) == 1, "rspctl hist has the workload's offcpu:sleep profile")
        prof = prof[0]
        sel = 'op="offcpu:sleep",pid="%d"' % w["pid"]

        # Prometheus holds the exited workload's final counts once it scraped them.
        deadline, got = time.time() + 60, None
        while time.time() < deadline:
            try:
                r = promql("rsp_process_latency_seconds_count{%s}" % sel)
            except OSError:
                r = []  # not up yet
            got = int(float(r[0]["value"][1])) if r else None
            if got == prof["count"]:
                break
            time.sleep(0.5)
        if got != prof["count"]:
            try:
                print("   targets: %s" % get(api + "targets")[1][:1500])
            except OSError as e:
                print("   Prometheus does not answer: %s" % e)
            with open(os.path.join(tmp, "log")) as f:
                print("   Prometheus log: %s" % f.read()[-3000:])
        t.check(got == prof["count"], "Prometheus scraped the workload's %s sleeps (got %s)"
                % (prof["count"], got))
        q = promql("histogram_quantile(0.99, rsp_process_latency_seconds_bucket{%s})" % sel)
        q99 = float(q[0]["value"][1])
        want = prof["p99_ns"].bit_length()
        print("   PromQL p99 %.6f s (bucket %d), rspctl hist p99 %d ns (bucket %d)"
              % (q99, bucket_of_le(q99), prof["p99_ns"], want))
        t.check(bucket_of_le(q99) == want, "histogram_quantile(0.99) lands in the bucket of "
                "rspctl hist's p99 (%d ns)" % prof["p99_ns"])
        s = promql("rsp_process_latency_seconds_sum{%s}" % sel)
        t.check(abs(float(s[0]["value"][1]) * 1e9 - prof["sum_ns"]) < 1e-6 * prof["sum_ns"],
                "_sum is the profile's total latency")
        up = promql('up{job="rsp"}')
        t.check(up and up[0]["value"][1] == "1", "the target is up")

        # Native histograms (protobuf scrape): the same counts, in nanoseconds.
        nat = promql("rsp_process_latency_nanoseconds{%s}" % sel)
        t.check(len(nat) == 1 and "histogram" in nat[0], "the workload has a native histogram "
                "series (Prometheus scraped protobuf): %s" % json.dumps(nat)[:300])
        h = nat[0]["histogram"][1]
        t.check(int(h["count"]) == prof["count"] and
                abs(float(h["sum"]) - prof["sum_ns"]) <= 1e-9 * prof["sum_ns"],
                "the native series' count and sum are the profile's (%s, %s ns)"
                % (h["count"], h["sum"]))
        got_b = {native_bucket(float(u)): int(float(c)) for _, lo, u, c in h["buckets"]}
        want_b = {b["bucket"]: b["count"] for b in prof["buckets"]}
        print("   native buckets %s, profile buckets %s" % (sorted(got_b.items()),
                                                           sorted(want_b.items())))
        t.check(got_b == want_b, "every native bucket (2^(b-1), 2^b] ns holds the profile's "
                "bucket b count")
        q = promql("histogram_quantile(0.99, rsp_process_latency_nanoseconds{%s})" % sel)
        nq = float(q[0]["value"][1])
        print("   PromQL native p99 %.0f ns (bucket %d)" % (nq, native_bucket(nq)))
        t.check(native_bucket(nq) == want, "histogram_quantile(0.99) of the native series lands "
                "in the bucket of rspctl hist's p99")
        grew = promql("changes(rsp_process_latency_seconds_count{%s}[10m])" % sel)
        t.check(grew and float(grew[0]["value"][1]) >= 1, "Prometheus saw the workload's series "
                "grow while it ran (%s)" % grew)
        # The increase covers the sleeps that arrived after Prometheus first
        # saw the series (the profile exists from its first sleep on): its
        # known p99 bucket is that of the scraped counts, last minus first,
        # counted as histogram_quantile does (first bucket whose cumulative
        # count reaches 0.99 x count; increase() scales all alike).
        samples = promql("rsp_process_latency_nanoseconds{%s}[10m]" % sel)[0]["histograms"]

        def counts(hist):
            return {native_bucket(float(u)): float(c) for _, lo, u, c in hist.get("buckets", [])}
        first, last = counts(samples[0][1]), counts(samples[-1][1])
        delta = {b: last[b] - first.get(b, 0) for b in last}
        rank, cum, ok_b = 0.99 * sum(delta.values()), 0, set()
        for b in sorted(delta):
            cum += delta[b]
            if cum >= rank * (1 - 1e-9):
                ok_b.add(b)  # within rounding of the boundary: this one or the next
                if cum >= rank * (1 + 1e-9):
                    break
        q = promql("histogram_quantile(0.99, increase(rsp_process_latency_nanoseconds{%s}[10m]))"
                   % sel)
        iq = float(q[0]["value"][1])
        print("   PromQL p99 of the increase %.0f ns (bucket %d); the %d sleeps Prometheus saw "
              "arrive: %s" % (iq, native_bucket(iq), sum(delta.values()), sorted(delta.items())))
        t.check(sum(delta.values()) > 0 and native_bucket(iq) in ok_b,
                "histogram_quantile(0.99, increase(...)) of the native series lands in the bucket "
                "of the p99 of the profile's sleeps Prometheus saw arrive (%s)" % sorted(ok_b))
        ctype, body = get("http://127.0.0.1:%d/metrics" % port, accept=PROTOBUF_ACCEPT, raw=True)
        names = family_names(body)
        t.check(ctype.startswith("application/vnd.google.protobuf; proto=io.prometheus.client."
                                 "MetricFamily; encoding=delimited"),
                "protobuf when Prometheus' header asks for it first")
        t.check({"rsp_latency_nanoseconds", "rsp_process_latency_nanoseconds",
                 "rsp_latency_seconds", "rsp_process_latency_seconds", "rsp_info",
                 "rsp_capture_records_total"} <= set(names) and len(names) == len(set(names)),
                "the protobuf scrape has the native and the classic families and the health, "
                "each once (%d families)" % len(names))
        ctype, _ = get("http://127.0.0.1:%d/metrics" % port, accept=",,;q=x;;==/\"\\,*/*")
        t.check(ctype.startswith("text/plain; version=0.0.4"),
                "a malformed Accept header gets the text format")
        for _ in range(20):  # scrapers that hang up before the answer
            c = socket.create_connection(("127.0.0.1", port))
            c.sendall(("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: %s\r\n\r\n"
                       % PROTOBUF_ACCEPT).encode())
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
            c.close()
        ctype, body = get("http://127.0.0.1:%d/metrics" % port, accept=PROTOBUF_ACCEPT, raw=True)
        t.check(ctype.startswith("application/vnd.google.protobuf") and
                "rsp_info" in family_names(body) and d.json("status"),
                "rspd answers after 20 scrapers hung up mid-answer")

        # What Prometheus asked for (OpenMetrics first), and the text format otherwise.
        ctype, om = get("http://127.0.0.1:%d/metrics" % port,
                        accept="application/openmetrics-text;version=1.0.0,text/plain;q=0.5")
        t.check(ctype.startswith("application/openmetrics-text") and om.endswith("# EOF\n"),
                "OpenMetrics when asked for, ending in # EOF")
        ctype, scrape = get("http://127.0.0.1:%d/metrics" % port)
        t.check(ctype.startswith("text/plain; version=0.0.4"), "the text format otherwise")

        # The textfile: promtool's check, and the same series as a scrape, once
        # a write that began after the workload's profile was final is there
        # (a write's fsync may take seconds on this shared machine).
        b = parse(scrape)
        # The classic series Prometheus took from protobuf: the text's counts
        # (le spelled as Prometheus writes a float: "1.023e-06", "0.0").
        cl = {r["metric"]["le"]: float(r["value"][1])
              for r in promql("rsp_process_latency_seconds_bucket{%s}" % sel)}
        tx = {k[1].split('le="')[1].rstrip('"'): v for k, v in b.items()
              if k[0] == "rsp_process_latency_seconds_bucket" and 'pid="%d"' % w["pid"] in k[1]
              and 'op="offcpu:sleep"' in k[1]}
        common = {le: v for le, v in tx.items() if le == "+Inf" or
                  any(float(le) == float(l2) for l2 in cl)}
        print("   classic le from protobuf: %s" % sorted(cl, key=float)[:4])
        t.check(len(common) > 10 and all(
            v == next(cv for l2, cv in cl.items() if float(l2) == float(le))
            for le, v in common.items()),
            "the classic buckets Prometheus scraped in protobuf hold the text's counts (%d)"
            % len(common))
        want_tf = {k: v for k, v in b.items() if 'pid="%d"' % w["pid"] in k[1]}
        count_key = ("rsp_process_latency_seconds_count", 'op="offcpu:sleep",comm="%s",pid="%d"'
                     % (prof["subject"]["comm"], w["pid"]))
        deadline, mine = time.time() + 30, {}
        while time.time() < deadline:
            with open(textfile) as f:
                tf = f.read()
            a = parse(tf)
            mine = {k: v for k, v in a.items() if 'pid="%d"' % w["pid"] in k[1]}
            if mine.get(count_key) == prof["count"]:
                break
            time.sleep(0.2)
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=tf, capture_output=True,
                           text=True, timeout=30)
        t.check(p.returncode == 0, "promtool check metrics accepts the textfile: %s"
                % (p.stdout + p.stderr).strip())
        # An op's buckets reach its highest non-empty one over all processes,
        # which may have grown between the two: compare the series both have.
        common = set(mine) & set(want_tf)
        t.check(count_key in common and len(common) > 10
                and all(mine[k] == want_tf[k] for k in common),
                "the textfile's %d series of the workload equal the scrape's" % len(common))
        t.check({k[0] for k in a} == {k[0] for k in b}, "the textfile has every metric a scrape has")
        t.check(os.stat(textfile).st_mode & 0o777 == 0o644, "the textfile is readable by "
                "node_exporter's user (0644)")

        # Health: what rspctl status shows.
        st = d.json("status")
        backend = st["config"]["capture"]
        t.check(b[("rsp_info", 'version="%s",backend="%s"' % (st["version"], backend))] == 1,
                "rsp_info names the version and the capture backend (%s)" % backend)
        cpus = {k[1] for k in b if k[0] == "rsp_capture_records_total"}
        t.check(len(cpus) == len(st["cpus"]) and all(
            ('cpu="%d"' % c["cpu"]) in cpus for c in st["cpus"]),
            "rsp_capture_records_total for each CPU status lists")
        t.check(b[("rsp_queries_total", "")] >= 3, "rsp_queries_total counts the rspctl queries")
        t.check(b[("rsp_window_budget_bytes", "")] == st["window"]["budget_bytes"],
                "rsp_window_budget_bytes is status's budget")
        for k in ("rsp_window_span_seconds", "rsp_window_bytes", "rsp_resident_memory_bytes",
                  "rsp_overhead_cost_ratio", "rsp_overhead_degrade_level",
                  "rsp_latency_updates_total", "rsp_query_seconds_total"):
            t.check((k, "") in b, "%s is there" % k)
        t.check(not any(k[0].endswith("_bucket") and "tid=" in k[1] for k in b),
                "no per-thread series")
        code = None
        try:
            get("http://127.0.0.1:%d/nothing" % port)
        except urllib.error.HTTPError as e:
            code = e.code
        t.check(code == 404, "another path is 404")
finally:
    if prom:
        prom.terminate()
        try:
            prom.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prom.kill()
            prom.wait()
    shutil.rmtree(tmp, ignore_errors=True)

# ---- the cut: --metrics-top-processes 2 -----------------------------------------
port = t.free_port()
with t.Rspd("--metrics-listen", "127.0.0.1:%d" % port, "--metrics-top-processes", "2") as d:
    w = t.workload("sleep_two_peaks", 20)
    t.wait_fed(d, t.now_s())
    _, text = get("http://127.0.0.1:%d/metrics" % port)
    m = parse(text)
    pids = {re.search(r'pid="(\d*)"', k[1]).group(1) for k in m
            if k[0] == "rsp_process_latency_seconds_count"}
    print("   process series pids: %s" % sorted(pids))
    t.check(len(pids - {""}) <= 2 and "" in pids,
            "at most 2 processes have series of their own, the rest is comm=\"other\"")
    for (name, labels), v in m.items():
        if name != "rsp_latency_seconds_count":
            continue
        procs = sum(pv for (pn, pl), pv in m.items()
                    if pn == "rsp_process_latency_seconds_count" and pl.startswith(labels + ","))
        if procs > v:
            t.fail("%s: processes %d > system %d" % (labels, procs, v))
    t.check(True, "per op, the process series add up to at most the system series")
