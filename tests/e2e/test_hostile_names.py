"""Names that a hostile user chooses (issue 40): a thread's name is 15 bytes
of anything but NUL, and rspd shows it to root in folded stacks, text
answers, the HTML report and its graph.

A victim process reads a pipe; a child it forked, with the hostile name set
by prctl(PR_SET_NAME), writes a byte to it every 5 ms for a second: the
child is the victim's waker, and runs on after each wakeup (a waker on
"another control path", named in a marker frame). Known answers for each name: every folded-stack
line ends in a weight, `rspctl report` writes its page with nothing on
stderr but its one line, and the name reaches the output escaped."""
import json
import os
import re
import subprocess
import sys
import tempfile

import browser
import rsptest as t

t.need_root()
work = tempfile.mkdtemp(prefix="rsp-names.")

VICTIM = r"""
import ctypes, os, sys, time
name = bytes.fromhex(sys.argv[1])
r, w = os.pipe()
if os.fork() == 0:
    os.close(r)
    ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)  # PR_SET_NAME
    stop = time.time() + 1.0
    while time.time() < stop:
        os.write(w, b"x")
        spin = time.time() + 0.005
        while time.time() < spin:  # runs on after the wakeup: another control path
            pass
    os._exit(0)
os.close(w)
while os.read(r, 1):
    pass
os.wait()
"""


def victim(name):
    """Run the victim with a waker called @name (bytes); returns (pid, the
    range of its run as --from T --to T: queries made later, on a slow
    (sanitized) rspd, still cover it)."""
    t0 = t.now_s()
    p = subprocess.Popen([sys.executable, "-c", VICTIM, name.hex()])
    p.wait(timeout=60)
    t.check(p.returncode == 0, "the victim with waker %r ran" % name)
    return p.pid, ["--from", "%.6f" % (t0 - 0.2), "--to", "%.6f" % (t.now_s() + 0.2)]


def folded_lines(d, pid, rng):
    path = os.path.join(work, "%d.folded" % pid)
    d.ctl("snapshot", str(pid), *rng, "--folded", path)
    with open(path, "rb") as f:
        return f.read().split(b"\n")[:-1]


def check_newline_waker(d):
    """Finding 2: a newline in the waker's name split a folded line in two
    (and `rspctl report` then failed: "line 1 has no weight")."""
    name = b'ev\nil"x\\'
    pid, rng = victim(name)
    t.wait_fed(d, float(rng[3]))  # a slow (sanitized) rspd has all of the run
    lines = folded_lines(d, pid, rng)
    bad = [ln for ln in lines if not re.search(rb" \d+$", ln)]
    t.check(lines and not bad, "every folded line ends in its weight (%d lines, bad %r)"
            % (len(lines), bad[:2]))
    t.check(any(b"ev\\nil" in ln for ln in lines),
            "the waker's name is in the folded stacks, its newline escaped")
    page = os.path.join(work, "newline.html")
    rc, _, err = d.ctl("report", str(pid), *rng, "-o", page, check_rc=False)
    t.check(rc == 0 and err.count("\n") == 1,
            "rspctl report of its victim writes the page: " + err.strip())


def script_data(page):
    """The text of every <script type="application/json"> element."""
    return re.findall(r'<script type="application/json" id="([^"]*)">(.*?)</script>', page, re.S)


def check_html_comment_name(d):
    """Finding 3: a thread named `<!--<script>` put the script data element
    into the tokenizer's "script data escaped" state: in Chromium the flame
    JSON swallowed the rest of the page. Embedded JSON now carries no '<',
    '>' or '&' at all (\u003c etc.), so no tokenizer state can be entered."""
    name = b"<!--<script>"
    pid, rng = victim(name)
    t.wait_fed(d, float(rng[3]))  # a slow (sanitized) rspd has all of the run
    path = os.path.join(work, "comment.html")
    rc, _, err = d.ctl("report", str(pid), *rng, "-o", path, check_rc=False)
    t.check(rc == 0, "rspctl report of its victim writes the page: " + err.strip())
    with open(path) as f:
        page = f.read()
    data = script_data(page)
    t.check({"rsp-flame", "rsp-chrono"} <= {k for k, _ in data},
            "the page has its flame and chronological data elements")
    raw = [k for k, v in data if re.search("[<>&\u2028\u2029]", v)]
    t.check(not raw, "no embedded JSON holds a raw '<', '>', '&', U+2028 or U+2029 %s" % raw)
    flame = json.loads(dict(data)["rsp-flame"])
    t.check("<!--<script>" in json.dumps(flame, ensure_ascii=False),
            "the flame data still names the waker <!--<script>")
    if not browser.available():
        print("   (no Chromium: the page is not loaded)")
        return
    dom, lines, err = browser.load(path)
    t.check(dom and not lines, "Chromium loads the page without a console message %s"
            % (lines if dom else err[-300:]))
    t.check(re.search(r'<g [^>]*class="frame', dom) and '<svg' in dom.split('id="graph"')[-1],
            "... and draws the flame graph and the wait-for graph")


def check_terminal_escapes(d):
    """Finding 5: a process named with a terminal escape (OSC 0 retitles the
    terminal, BEL ends it, CSI starts another) reached root's terminal raw
    through top and snapshot. Every text answer escapes it as ps does."""
    name = b"esc\x1b]0;PWNED\x07\x1b["
    pid, rng = victim(name)
    t.wait_fed(d, float(rng[3]))  # a slow (sanitized) rspd has all of the run
    shown = []
    for args in (("top", *rng), ("snapshot", str(pid), *rng),
                 ("graph", *rng), ("hist", *rng, "--pid", str(pid)),
                 ("status", "--pid", str(pid)), ("net", *rng)):
        _, out, _ = d.ctl(*args)
        raw = sorted({"%02x" % ord(ch) for ch in out if ord(ch) < 0x20 and ch != "\n"
                      or 0x7f <= ord(ch) < 0xa0})
        t.check(not raw, "rspctl %s prints no control byte (%s)" % (args[0], " ".join(raw)))
        if "esc\\x1b]0;PWN" in out:  # top's columns cut names at 16 columns
            shown.append(args[0])
    t.check({"top", "snapshot", "graph"} <= set(shown),
            "top, snapshot and graph show the name escaped, as ps does (%s)" % shown)


def check_not_utf8(d):
    """Finding 8: a name that is not UTF-8 made Graphviz warn on stderr
    during `rspctl report` (the DOT it lays out must be UTF-8); and JSON
    answers must still parse."""
    name = b"bad\xff\xfe"
    pid, rng = victim(name)
    t.wait_fed(d, float(rng[3]))  # a slow (sanitized) rspd has all of the run
    path = os.path.join(work, "notutf8.html")
    rc, _, err = d.ctl("report", str(pid), *rng, "-o", path, check_rc=False)
    t.check(rc == 0 and err.count("\n") == 1 and err.startswith("rspctl: wrote"),
            "rspctl report writes the page and prints nothing else: " + err.strip())
    _, dot, _ = d.ctl("graph", *rng, "--format", "dot")
    t.check(r'label="bad\\xff\\xfe[' in dot, "the DOT names it escaped (as DOT quotes a '\\')")
    for args in (("snapshot", str(pid)), ("graph",), ("top",)):
        p = t.run([t.RSPCTL, "--socket", d.socket] + list(args) + rng + ["--json"])
        try:
            json.loads(p.stdout)
            ok = p.returncode == 0
        except ValueError as e:
            ok = False
            p.stderr += str(e)
        t.check(ok, "rspctl %s --json answers JSON: %s" % (args[0], p.stderr.strip()[:200]))
        if args[0] != "snapshot":  # jansson refuses what is not UTF-8: the key was left out
            t.check('"comm": "bad\\\\xff\\\\xfe"' in p.stdout,
                    "... and names it, escaped (not a comm left out)")


with t.Rspd() as d:
    check_newline_waker(d)
    check_html_comment_name(d)
    check_terminal_escapes(d)
    check_not_utf8(d)
