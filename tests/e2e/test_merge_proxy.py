"""rspctl merge across three "hosts" (issue 19): the snapshot's recursion
beyond one hop. Three network namespaces in a row (tests/e2e/vethpair.py
VethChain): a client asks a proxy N times, the proxy passes each request
to a server and its answer back, the server writes 4 MiB with O_DIRECT and
fsyncs before each answer, in a cgroup whose writes to the disk are
throttled to 20 MiB/s (>= 200 ms of disk per answer by construction).
One dump per namespace (rspctl dump --netns), two of them clock-shifted by
known amounts. Known answers: merge recovers both offsets (client-proxy,
proxy-server) within their uncertainties; the client's snapshot is answered
by the proxy on host 1, whose time is its own wait for the server on host
2, whose time is >= 90% its disk (block_io): the chain client -> proxy ->
server -> disk, 2 hosts deep; with --depth 1 the proxy's waits are not
followed (counted); the graph has the edges client@0 -> proxy@1 -> server@2
and the chain on to the server's disk."""
import json
import os

import rsptest as t
from mergetest import Hosts, line_of, merge
from vethpair import VethChain

N = 20
KIB = 4096
BPS = 20 * 1024 * 1024
SHIFT1, SHIFT2 = 2500000000, -1500000000
H = Hosts("mproxy", VethChain("rspq", t.fail), BPS)
CHAIN = H.net
work, tmp, exe = H.work, H.tmp, H.exe
SHIFTS = ["--test-clock-shift", "1=%d" % SHIFT1, "--test-clock-shift", "2=%d" % SHIFT2]


try:
    H.up()
    with t.Rspd("--window", "256M") as d:
        hs = H.holder(CHAIN.ns[2], '"$1" server 10.78.2.2 7707 "$2" "$3" "$4"', exe, tmp, N,
                      KIB, enter=H.throttle.enter_cmd())
        hp = H.holder(CHAIN.ns[1], '"$1" proxy 10.78.1.2 7708 10.78.2.2 7707 "$2"', exe, N)
        hc = H.holder(CHAIN.ns[0], '"$1" client 10.78.1.2 7708 "$2"', exe, N)
        wc = line_of(hc, "the client")["client"]
        wp = line_of(hp, "the proxy")["proxy"]
        ws = line_of(hs, "the server")["server"]
        d.settle()
        paths = [os.path.join(work, "%s.perf.data" % n) for n in ("c", "p", "s")]
        for path, h in zip(paths, (hc, hp, hs)):
            d.ctl("dump", "-o", path, "--netns", str(h.pid))
        H.recorded()

    p = merge(*(paths + ["net", "--json"] + SHIFTS))
    t.check(p.returncode == 0, "merge answered: %s" % p.stderr)
    js = json.loads(p.stdout)
    offs = {(o["host_a"], o["host_b"]): o for o in js["clock_offsets"]}
    print("   offsets: %s" % {k: (o["offset_ns"], o["uncertainty_ns"], o["pairs"])
                              for k, o in offs.items()})
    for (a, b), want in (((0, 1), SHIFT1), ((1, 2), SHIFT2 - SHIFT1)):
        o = offs.get((a, b))
        t.check(o is not None and abs(o["offset_ns"] - want) <= o["uncertainty_ns"] and
                o["uncertainty_ns"] < 1000000,
                "host %d - host %d: the known %d ns within the offset found: %s" %
                (b, a, want, o))
    t.check((0, 2) not in offs, "no offset between the client and the server, which never "
            "talked: %s" % list(offs))

    p = merge(*(paths + ["snapshot", "%d@0" % wc, "--json"] + SHIFTS))
    t.check(p.returncode == 0, "merge snapshot answered: %s" % p.stderr)
    sj = json.loads(p.stdout)

    def brief(hops):
        return [(h["host"], h["pid"], round(h["service_s"], 4),
                 {k: round(v, 4) for k, v in h["categories"].items() if v},
                 brief(h["answered_by"])) for h in hops]
    print("   client %d: %.4f s of network wait (%d ops, %d matched, %.4f s); answered by %s" %
          (wc, sj["network_wait_s"], sj["operations"], sj["matched_operations"],
           sj["matched_wait_s"], brief(sj["answered_by"])))
    hop1 = sj["answered_by"]
    t.check(len(hop1) == 1 and hop1[0]["host"] == 1 and hop1[0]["pid"] == wp and
            sj["matched_operations"] >= N - 2,
            "the client's waits (%d of %d matched) are answered by the proxy %d on host 1" %
            (sj["matched_operations"], N, wp))
    px = hop1[0]
    t.check(px["categories"]["sleep_network"] >= 0.9 * px["service_s"],
            "the proxy's time (%.4f s) is its wait for the network (%.4f s)" %
            (px["service_s"], px["categories"]["sleep_network"]))
    hop2 = px["answered_by"]
    t.check(len(hop2) == 1 and hop2[0]["host"] == 2 and hop2[0]["pid"] == ws and
            hop2[0]["depth"] == 2 and sj["deepest"] == 2,
            "the proxy's waits are followed into the server %d on host 2, depth 2" % ws)
    sv = hop2[0]
    disk = sv["categories"]["sleep_block_io"]
    t.check(sv["answered_by"] == [] and disk >= 0.9 * sj["matched_wait_s"],
            "the client's matched wait (%.4f s) is >= 90%% the server's disk wait two hosts "
            "away (block_io %.4f s)" % (sj["matched_wait_s"], disk))
    t.check(sj["cycles_not_followed"] == 0 and sj["beyond_depth"] == 0,
            "nothing cut: %d cycles, %d beyond the depth" %
            (sj["cycles_not_followed"], sj["beyond_depth"]))

    p = merge(*(paths + ["snapshot", "%d@0" % wc, "--json", "--depth", "1"] + SHIFTS))
    t.check(p.returncode == 0, "merge snapshot --depth 1 answered: %s" % p.stderr)
    s1 = json.loads(p.stdout)
    t.check(s1["deepest"] == 1 and s1["answered_by"][0]["answered_by"] == [] and
            s1["beyond_depth"] >= N - 2,
            "--depth 1 stops at the proxy and counts its waits not followed (%d)" %
            s1["beyond_depth"])
    p = merge(*(paths + ["snapshot", "%d@0" % wc] + SHIFTS))
    t.check(p.returncode == 0 and "-> pid %d tid %d (tcp_fsync) on host 2" % (ws, ws) in p.stdout,
            "the text shows the server under the proxy: %s" % p.stdout)

    p = merge(*(paths + ["graph", "--json"] + SHIFTS))
    t.check(p.returncode == 0, "merge graph answered: %s" % p.stderr)
    gj = json.loads(p.stdout)
    vs = {v["id"]: v for v in gj["vertices"]}

    def across(fh, ft, th, tt):
        return [e for e in gj["edges"] if e["across_hosts"] and
                (vs[e["from_id"]]["host"], vs[e["from_id"]].get("tid")) == (fh, ft) and
                (vs[e["to_id"]]["host"], vs[e["to_id"]].get("tid")) == (th, tt)]
    cp, ps = across(0, wc, 1, wp), across(1, wp, 2, ws)
    t.check(len(cp) == 1 and len(ps) == 1,
            "edges client@0 -> proxy@1 (%s) and proxy@1 -> server@2 (%s)" % (cp, ps))
    chain = [vs[e["to_id"]] for e in cp[0]["chain"]]
    print("   chain from client@0 -> proxy@1: %s" % [v["name"] for v in chain])
    t.check(len(chain) >= 2 and chain[0]["host"] == 2 and chain[0].get("tid") == ws and
            chain[1]["kind"] == "disk" and chain[1]["host"] == 2,
            "the heaviest way on from the proxy is the server on host 2, then its disk: %s" %
            [v["name"] for v in chain])
    print("ok")
finally:
    H.down()
