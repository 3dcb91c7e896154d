"""Helpers for the tests of rsp's pprof profiles (rspctl --pprof, rspd's
/debug/pprof/), read with readers that are not rsp's code: the npm package
pprof-format (scripts/pprof-format.sh) through tests/e2e/pprofread.js, and
the totals and flat shares pprof -top gives computed from it; and Google's
pprof itself where it builds from Debian's Go sources (scripts/go-pprof.sh),
its -top parsed."""
import json
import os
import re
import shutil
import subprocess

import rsptest as t

SOURCE = os.environ.get("RSP_SOURCE", os.path.join(os.path.dirname(__file__), "../.."))
READER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pprofread.js")


def reader():
    """The pprof-format package's directory, or skip (one line)."""
    if not shutil.which("node"):
        print("SKIP: node is not installed (scripts/deps.sh installs it)")
        raise SystemExit(t.SKIP)
    p = subprocess.run([os.path.join(SOURCE, "scripts", "pprof-format.sh")],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        print("SKIP: no pprof reader: %s" % p.stderr.strip())
        raise SystemExit(t.SKIP)
    return p.stdout.strip()


def parse(rdr, data=None, path=None):
    """The profile (a file, or bytes) as pprofread.js prints it; fails the
    test unless the reader accepts it."""
    p = subprocess.run(["node", READER, rdr, path or "-"], input=data,
                       capture_output=True, timeout=120)
    try:
        doc = json.loads(p.stdout.decode() or "{}")
    except ValueError:
        doc = {"error": p.stdout.decode()[:200] + p.stderr.decode()[:200]}
    t.check(p.returncode == 0 and "error" not in doc,
            "pprof: %s reads as a valid profile (pprof-format): %s" %
            (path or "the answer", doc.get("error", "%d samples" % len(doc.get("samples", [])))))
    return doc


def value_index(doc, typ):
    return [x[0] for x in doc["sample_types"]].index(typ)


def total(doc, typ, keep=None):
    i = value_index(doc, typ)
    return sum(s["values"][i] for s in doc["samples"] if keep is None or keep(s))


def flat(doc, typ):
    """pprof -top's flat column: {leaf function: value}, heaviest first."""
    i, out = value_index(doc, typ), {}
    for s in doc["samples"]:
        leaf = s["stack"][0] if s["stack"] else "[unknown]"
        out[leaf] = out.get(leaf, 0) + s["values"][i]
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def go_pprof():
    """Google's pprof built from Debian's Go sources (scripts/go-pprof.sh), or
    None after one line saying why: the checks through it are then left out
    (pprof-format above still reads every profile)."""
    p = subprocess.run([os.path.join(SOURCE, "scripts", "go-pprof.sh")],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print("   (no go pprof: %s; its checks are left out)" % p.stderr.strip())
        return None
    return p.stdout.strip()


def go_top(binary, path, *args):
    """`pprof -top ARGS FILE` as rows {name: (flat, flat%, cum, cum%)}, in its
    order (a name shown for several objects: flat summed, the largest cum),
    and the total ("Total samples = N"); -unit=ns makes times plain
    numbers. Fails the test unless pprof reads the file."""
    p = subprocess.run([binary, "-top", "-nodecount=100000"] + list(args) + [path],
                       capture_output=True, text=True, timeout=300)
    t.check(p.returncode == 0, "go pprof -top %s reads %s%s" %
            (" ".join(args), os.path.basename(path), (": " + p.stderr.strip()[-300:])
             if p.returncode else ""))
    rows, total = {}, None
    for ln in p.stdout.splitlines():
        m = re.match(r".*Total samples = ([0-9.]+)", ln)
        if m:
            total = float(m.group(1))
        m = re.match(r"^\s*([0-9.]+)(?:ns)?\s+([0-9.]+)%\s+[0-9.]+%\s+([0-9.]+)(?:ns)?\s+"
                     r"([0-9.]+)%\s+(.*)$", ln)
        if m:  # a name in several objects: its rows summed (cum: the largest)
            v = [float(m.group(i)) for i in range(1, 5)]
            o = rows.get(m.group(5), (0, 0, 0, 0))
            rows[m.group(5)] = (o[0] + v[0], o[1] + v[1], max(o[2], v[2]), max(o[3], v[3]))
    return rows, total
