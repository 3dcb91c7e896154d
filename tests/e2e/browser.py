"""Headless Chromium from Debian (package chromium) for the tests of
rspctl report: load a page from a file with no network, keep its DOM after
its scripts ran, the console messages it logged, and a screenshot.

Console messages come from Chromium's own log (--enable-logging=stderr):
each console call and each uncaught exception is a line
'...:INFO:CONSOLE:LINE] "TEXT", source: URL (LINE)'. check_detects() proves on a
page that logs an error and throws that this capture works, so that a
clean page is clean and not unobserved."""
import os
import re
import shutil
import subprocess
import tempfile

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def available():
    return CHROMIUM is not None


def _run(args, url, timeout):
    profile = tempfile.mkdtemp(prefix="rsp-chromium.")
    try:
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", "--disable-extensions", "--user-data-dir=" + profile,
                            # no network: every name resolves to nothing, no proxy
                            "--host-resolver-rules=MAP * ~NOTFOUND", "--no-proxy-server",
                            "--enable-logging=stderr", "--v=0",
                            "--virtual-time-budget=5000"] + args + [url],
                           capture_output=True, text=True, errors="replace", timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return p


def console(stderr):
    """The console messages of a run, each as its text. Chromium logs them
    all at INFO (console.error too): a report page logs none, so any is one
    too many."""
    return re.findall(r":CONSOLE(?:[:(]\d+\)?)?\] (.*)", stderr)


def load(path, timeout=90):
    """Load @path: returns (dom, console lines, stderr)."""
    p = _run(["--dump-dom"], "file://" + os.path.abspath(path), timeout)
    return p.stdout, console(p.stderr), p.stderr


def screenshot(path, png, timeout=90, size="1400,2400"):
    p = _run(["--screenshot=" + os.path.abspath(png), "--window-size=" + size],
             "file://" + os.path.abspath(path), timeout)
    return os.path.exists(png) and os.path.getsize(png) > 0, p.stderr


def check_detects(t):
    """A page that logs an error and throws: both must be seen."""
    d = tempfile.mkdtemp(prefix="rsp-console.")
    page = os.path.join(d, "bad.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><html><body><p id=x>x</p><script>"
                "console.error('rsp-probe-error'); null.f();</script></body></html>")
    dom, lines, err = load(page)
    shutil.rmtree(d, ignore_errors=True)
    seen = lines
    t.check(any("rsp-probe-error" in s for s in seen) and any("Uncaught" in s for s in seen),
            "the console capture sees a logged error and an uncaught exception (%s)" %
            (seen or err[-500:]))
