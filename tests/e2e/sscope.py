"""Helpers for the tests of rspctl's --speedscope files and the Chrome
trace's pseudostack tracks: speedscope's own schema (the npm package
`speedscope`, scripts/speedscope-schema.sh), validated with Debian's
python3-jsonschema, and the nesting speedscope and Perfetto need."""
import json
import os
import subprocess

import rsptest as t

SOURCE = os.environ.get("RSP_SOURCE", os.path.join(os.path.dirname(__file__), "../.."))
CHRONO_TRACK = 0x40000000  # RSP_CHRONO_TRACK: a thread's pseudostack track is this + its tid


def schema_validator():
    """A validator of speedscope's file-format schema, or skip (one line)."""
    try:
        import jsonschema
    except ImportError:
        print("SKIP: python3-jsonschema is not installed (scripts/deps.sh installs it)")
        raise SystemExit(t.SKIP)
    p = subprocess.run([os.path.join(SOURCE, "scripts", "speedscope-schema.sh")],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        print("SKIP: no speedscope schema: %s" % p.stderr.strip())
        raise SystemExit(t.SKIP)
    with open(p.stdout.strip()) as f:
        schema = json.load(f)
    return jsonschema.Draft7Validator(schema)


def load(path, validator):
    """Read a --speedscope file and check it against speedscope's schema."""
    with open(path) as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    t.check(not errors, "speedscope: %s is valid against speedscope's schema (%s)" %
            (os.path.basename(path), errors[0].message[:200] if errors else "no errors"))
    return doc


def evented_opens(doc, prof):
    """An evented profile's frames as they open: [(depth, name, at)]. Fails
    unless the events close last-opened first, never go back in time, and
    all close (what speedscope requires of an evented profile)."""
    frames = doc["shared"]["frames"]
    stack, out, last = [], [], prof["startValue"]
    for e in prof["events"]:
        if e["at"] < last:
            t.fail("speedscope: events go back in time at %s" % e)
        last = e["at"]
        if e["type"] == "O":
            out.append((len(stack), frames[e["frame"]]["name"], e["at"]))
            stack.append(e["frame"])
        elif not stack or stack.pop() != e["frame"]:
            t.fail("speedscope: a close event that is not the last open frame: %s" % e)
    if stack:
        t.fail("speedscope: %d frames never closed" % len(stack))
    return out


def sampled_shares(doc, prof, names):
    """Of a sampled profile's weight, the share (percent) of the stacks that
    hold each frame of @names (a frame whose name starts with it)."""
    frames = doc["shared"]["frames"]
    total = sum(prof["weights"]) or 1
    shares = {}
    for n in names:
        w = sum(wt for s, wt in zip(prof["samples"], prof["weights"])
                if any(frames[i]["name"].startswith(n) for i in s))
        shares[n] = 100.0 * w / total
    return shares


def check_chrome_nest(tr, tid):
    """The Chrome trace's pseudostack track of thread @tid: "X" slices that
    nest by time (each inside the one enclosing it when it starts), as
    Perfetto draws them. Returns [(depth, slice)]."""
    xs = sorted((e for e in tr["traceEvents"] if e["ph"] == "X" and
                 e.get("cat") == "chrono" and e["tid"] == CHRONO_TRACK + tid),
                key=lambda e: (e["ts"], -e["dur"]))
    stack, out = [], []
    for e in xs:
        a, b = e["ts"], e["ts"] + e["dur"]
        while stack and stack[-1] <= a + 0.0005:
            stack.pop()
        if stack and b > stack[-1] + 0.0005:
            t.fail("chrome trace: pseudostack slice %s overlaps its parent's end %.3f" %
                   (e, stack[-1]))
        if e["args"]["depth"] != len(stack):
            t.fail("chrome trace: slice %s nests %d deep, says depth %d" %
                   (e, len(stack), e["args"]["depth"]))
        out.append((len(stack), e))
        stack.append(b)
    return out
