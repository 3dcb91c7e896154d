"""The uprobe list is configurable (key uprobes of [capture], or --uprobes),
and only functions the system libc or libpthread defines get a probe.

Known answer: with `uprobes = poll,rsp_no_such_fn,select` in the
configuration file, rspctl status shows 2 probes (poll, select) and names
rsp_no_such_fn as not defined; the default list places a probe for each of
its functions that `readelf --dyn-syms` finds defined in that libc; and
`uprobes = none` leaves the libc family with nothing to do."""
import subprocess

import rsptest as t

t.need_root()


def libc_family(d):
    st = d.json("status")
    return next(f for f in st["families"] if f["name"] == "libc")


def placed(f):
    return f["note"].split(":", 1)[1].split(";")[0].split()


with t.Rspd(config="[capture]\nfamilies = all\nuprobes = poll,rsp_no_such_fn,select\n") as d:
    f = libc_family(d)
    print("   " + f["note"])
    t.check(placed(f) == ["poll", "select"], "the configured list gave probes on poll and select")
    t.check(f["note"].startswith("2 probes") and
            "not defined there: rsp_no_such_fn" in f["note"],
            "and names the function libc does not define")

with t.Rspd("--families", "all") as d:
    f = libc_family(d)
    libc = f["note"].split(" in ", 1)[1].split(":", 1)[0]
    out = subprocess.run(["readelf", "-W", "--dyn-syms", libc], capture_output=True, text=True,
                         check=True).stdout
    defined = set()
    for line in out.splitlines():
        c = line.split()
        if len(c) >= 8 and c[3] in ("FUNC", "IFUNC") and c[6] != "UND":
            defined.add(c[7].split("@")[0])
    names = placed(f)
    t.check(names and all(n in defined for n in names),
            "every default probe is on a function %s defines (%d)" % (libc, len(names)))
    missing = f["note"].split("not defined there:", 1)[1].split() if ";" in f["note"] else []
    t.check(not any(m in defined for m in missing),
            "every default function left out is really missing there (%s)" % missing)

with t.Rspd(config="[capture]\nfamilies = all\nuprobes = none\n") as d:
    f = libc_family(d)
    t.check(f["events_open"] == 0 and f["events_wanted"] == 0,
            "uprobes = none: no probe (%d/%d)" % (f["events_open"], f["events_wanted"]))
