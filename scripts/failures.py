#!/usr/bin/python3
"""Print one line per test of a ctest run that failed, and why.

usage: scripts/failures.py LABEL BUILD_DIR

ctest keeps the last run's output in BUILD_DIR/Testing/Temporary/LastTest.log
and overwrites it on the next run, so scripts/test calls this after each
ctest run and prints the lines again at its end: CI logs are read from the
end, and a failure's reason (an e2e test's "FAIL:" line, a sanitizer's
"ERROR:" line, else the output's last line) must not be lost in the middle
of a long run's output.

scripts/test runs ctest with --repeat until-pass:2, so a test may appear
twice: one that failed and then passed is listed as "failed once, passed
when run again" with its first failure's reason -- still shown, never
hidden -- and one that failed both times as "FAILED".
"""
import os
import sys


def reason(out, last):
    why = [l for l in out if l.startswith("FAIL:")] or \
        [l for l in out if "ERROR:" in l] or [l for l in out if l.strip()][-1:] or [last]
    return why[0].strip()[:400]


def main():
    label, build = sys.argv[1], sys.argv[2]
    log = os.path.join(build, "Testing", "Temporary", "LastTest.log")
    try:
        with open(log, errors="replace") as f:
            text = f.read()
    except OSError:
        return
    runs = {}       # test -> [(passed, took, reason)] in the order run
    order = []
    name, out, inside, took = None, [], False, "?"
    for line in text.splitlines():
        head = line.split(" Test: ", 1)
        if len(head) == 2 and head[0].replace("/", "").isdigit():
            name, out, inside, took = head[1].strip(), [], False, "?"
        elif line.startswith("Output:"):
            inside = True
        elif line.startswith("<end of output>"):
            inside = False
        elif inside and not line.startswith("-----"):
            out.append(line)
        elif line.startswith("Test time =") and name:
            took = line.split("=", 1)[1].strip()
        elif line.startswith("Test Passed") or line.startswith("Test Failed"):
            if name:
                if name not in runs:
                    order.append(name)
                runs.setdefault(name, []).append(
                    (line.startswith("Test Passed"), took, reason(out, line.strip())))
            name = None
    for n in order:
        failed = [r for r in runs[n] if not r[0]]
        if not failed:
            continue
        first = failed[0]
        if runs[n][-1][0]:
            print("%s %s: failed once, passed when run again (after %s): %s" % (
                label, n, first[1], first[2]))
        else:
            print("%s %s: FAILED %d of %d runs (first after %s): %s" % (
                label, n, len(failed), len(runs[n]), first[1], first[2]))


main()
