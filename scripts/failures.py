#!/usr/bin/python3
"""Print one line per failed test of a ctest run: its name and why.

usage: scripts/failures.py LABEL BUILD_DIR

ctest keeps the last run's output in BUILD_DIR/Testing/Temporary/LastTest.log
and overwrites it on the next run, so scripts/test calls this after each
ctest run and prints the lines again at its end: CI logs are read from the
end, and a failure's reason (an e2e test's "FAIL:" line, a sanitizer's
"ERROR:" line, else the output's last line) must not be lost in the middle
of a long run's output.
"""
import os
import sys


def main():
    label, build = sys.argv[1], sys.argv[2]
    log = os.path.join(build, "Testing", "Temporary", "LastTest.log")
    try:
        with open(log, errors="replace") as f:
            text = f.read()
    except OSError:
        return
    name, out, inside, took = None, [], False, "?"
    for line in text.splitlines():
        if " Test: " in line and line.split(" Test: ", 1)[0].replace("/", "").isdigit():
            name, out, inside = line.split(" Test: ", 1)[1].strip(), [], False
        elif line.startswith("Output:"):
            inside = True
        elif line.startswith("<end of output>"):
            inside = False
        elif inside and not line.startswith("-----"):
            out.append(line)
        elif line.startswith("Test time ="):
            took = line.split("=", 1)[1].strip()
        elif line.startswith("Test Failed") and name:
            why = [l for l in out if l.startswith("FAIL:")] or \
                [l for l in out if "ERROR:" in l] or [l for l in out if l.strip()][-1:] or \
                [line.strip()]
            print("%s %s (after %s): %s" % (label, name, took, why[0].strip()[:400]))
            name = None


main()
