"""`cmake --install` lays out rspd as a service: binaries, the unit with the
prefix's paths, the commented default configuration, the man pages and bash
completion; `systemd-analyze verify` accepts the installed unit (systemd
need not be PID 1 for that), an edited configuration survives a
reinstall, and the installed rspd obeys no test hook: RSP_TEST_BPF_REFUSE,
which makes the test build's rspd refuse --capture bpf, leaves it capturing
from BPF (as root, where this kernel lets rspd load BPF)."""
import os
import re
import shutil
import subprocess
import tempfile
import rsptest as t

if not shutil.which("cmake"):
    print("SKIP: cmake is not installed")
    raise SystemExit(t.SKIP)


def check_no_test_hook(installed):
    """The hook the tests use on the root daemon (a refusal by the verifier,
    on demand) is obeyed by the build's rspd and ignored by the installed one."""
    if os.geteuid() != 0:
        print("   (not root: the installed rspd's capture is not started, its hooks not checked)")
        return
    hook = {"RSP_TEST_BPF_REFUSE": "1"}
    with t.Rspd("--capture", "auto", env=hook, rspd=installed) as d:
        cfg = d.json("status")["config"]
    note = cfg.get("capture_note", "")
    if cfg["capture"] != "bpf" and "verifier refused" not in note:
        print("   (no BPF capture here, the hook is not checked: %s)" % note)
        return
    t.check(cfg["capture"] == "bpf", "the installed rspd ignores RSP_TEST_BPF_REFUSE: "
            "it captures from BPF (%s)" % cfg["capture"])
    if os.environ.get("RSP_TEST_HOOKS") != "ON":
        return  # the build's rspd obeys no hook either (and would not exit below)
    with tempfile.NamedTemporaryFile(prefix="rsptest-empty.", suffix=".conf") as conf:
        p = t.run([t.RSPD, "--foreground", "--socket", "/tmp/rsptest-install-hook.sock",
                   "--config", conf.name, "--capture", "bpf"], env=dict(os.environ, **hook))
    t.check(p.returncode != 0 and "verifier refused" in p.stderr + p.stdout,
            "... while the build's rspd obeys it: --capture bpf refused")


prefix = tempfile.mkdtemp(prefix="rsptest.install.")
try:
    p = t.run(["cmake", "--install", t.BUILD, "--prefix", prefix], timeout=120)
    t.check(p.returncode == 0, "cmake --install into %s %s" % (prefix, p.stderr.strip()))
    files = ["sbin/rspd", "bin/rspctl", "lib/systemd/system/rspd.service", "etc/rspd.conf",
             "share/man/man8/rspd.8", "share/man/man8/rspctl.8",
             "share/bash-completion/completions/rspctl"]
    missing = [f for f in files if not os.path.exists(os.path.join(prefix, f))]
    t.check(not missing, "installed: %s %s" % (", ".join(files), missing or ""))

    unit_path = os.path.join(prefix, "lib/systemd/system/rspd.service")
    unit = open(unit_path).read()
    kv = {}
    for line in unit.splitlines():
        m = re.match(r"^([A-Za-z]+)=(.*)$", line)
        if m:
            kv.setdefault(m.group(1), []).append(m.group(2))
    t.check(kv["ExecStart"] == ["%s/sbin/rspd --config %s/etc/rspd.conf" % (prefix, prefix)],
            "ExecStart has the prefix's paths: " + kv["ExecStart"][0])
    want = {"Type": "notify", "ExecReload": "/bin/kill -HUP $MAINPID", "ProtectSystem": "strict",
            "PrivateTmp": "yes", "NoNewPrivileges": "yes", "RuntimeDirectory": "rspd",
            "StateDirectory": "rspd", "WatchdogSec": "30s"}
    for k, v in want.items():
        t.check(kv.get(k) == [v], "%s=%s" % (k, v))
    caps = set(kv["CapabilityBoundingSet"][0].split())
    t.check(caps >= {"CAP_PERFMON", "CAP_SYS_ADMIN", "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH",
                     "CAP_SYS_RESOURCE"}, "the capabilities perf and tracefs need: %s" % sorted(caps))
    t.check("/var/lib/rspd" in kv["ReadWritePaths"][0].split(),
            "ReadWritePaths has /var/lib/rspd (the dumps)")

    if shutil.which("systemd-analyze"):
        env = dict(os.environ, MANPATH=os.path.join(prefix, "share/man"))
        p = subprocess.run(["systemd-analyze", "verify", unit_path], capture_output=True,
                           text=True, env=env, timeout=60)
        t.check(p.returncode == 0 and not p.stderr.strip() and not p.stdout.strip(),
                "systemd-analyze verify: no error, no warning (man pages found) %s"
                % (p.stderr.strip() + p.stdout.strip()))
    else:
        print("   (systemd-analyze is not installed: the unit is not verified)")

    conf = os.path.join(prefix, "etc/rspd.conf")
    text = open(conf).read()
    p = t.run([t.RSPD, "--default-config"])
    t.check(text == p.stdout, "the installed rspd.conf is `rspd --default-config`")
    p = t.run([os.path.join(prefix, "sbin/rspd"), "--check-config", "--config", conf])
    t.check(p.returncode == 0, "the installed rspd runs and accepts the installed file")
    p = t.run([os.path.join(prefix, "bin/rspctl"), "--version"])
    t.check(p.returncode == 0, "the installed rspctl finds librsp: " + p.stdout.strip())
    check_no_test_hook(os.path.join(prefix, "sbin/rspd"))

    with open(conf, "a") as f:
        f.write("\n[window]\nwindow = 128M\n")
    p = t.run(["cmake", "--install", t.BUILD, "--prefix", prefix], timeout=120)
    t.check(p.returncode == 0 and "window = 128M" in open(conf).read()
            and os.path.exists(conf + ".default"),
            "a reinstall keeps an edited rspd.conf and puts the new one in rspd.conf.default")

    # Prefix /usr: the configuration goes to /etc (here under DESTDIR).
    dest = os.path.join(prefix, "destdir")
    env = dict(os.environ, DESTDIR=dest)
    p = subprocess.run(["cmake", "--install", t.BUILD, "--prefix", "/usr"], env=env,
                       capture_output=True, text=True, timeout=120)
    unit = open(os.path.join(dest, "usr/lib/systemd/system/rspd.service")).read()
    t.check(p.returncode == 0 and os.path.exists(os.path.join(dest, "etc/rspd.conf"))
            and "ExecStart=/usr/sbin/rspd --config /etc/rspd.conf\n" in unit,
            "prefix /usr: /usr/sbin/rspd --config /etc/rspd.conf, the file in /etc")
finally:
    shutil.rmtree(prefix, ignore_errors=True)
