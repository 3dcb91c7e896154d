"""Triggers from the fleet (issue 41): a real Prometheus Alertmanager
(Debian's prometheus-alertmanager) with a webhook receiver pointing at
rspd's /v1/trigger (its bearer token from a credentials_file), fed an alert
by amtool, makes rspd dump: the dump's metadata names the trigger and the
alert. Then what must write nothing: a POST without the token (401), with
a wrong token (401), a malformed body (400), an oversized body (400), a
payload of another version (400): each answered with one sentence,
counted as refused, and no file appears."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import rsptest as t

t.need_root()
AM, AMTOOL = shutil.which("prometheus-alertmanager"), shutil.which("amtool")
if not AM or not AMTOOL:
    print("SKIP: prometheus-alertmanager is not installed (scripts/deps.sh installs it)")
    raise SystemExit(t.SKIP)


def post(port, body, token):
    headers = {"Authorization": "Bearer " + token} if token is not None else {}
    req = urllib.request.Request("http://127.0.0.1:%d/v1/trigger" % port, data=body,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def dumps_in(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".perf.data"))


def start_alertmanager(tmp, rspd_port, secret_file):
    port = t.free_port()
    cfg = os.path.join(tmp, "alertmanager.yml")
    with open(cfg, "w") as f:
        f.write("""route:
  receiver: rsp
  group_by: [alertname]
  group_wait: 1s
  group_interval: 5s
  repeat_interval: 1h
receivers:
- name: rsp
  webhook_configs:
  - url: http://127.0.0.1:%d/v1/trigger
    send_resolved: false
    http_config:
      authorization:
        type: Bearer
        credentials_file: %s
""" % (rspd_port, secret_file))
    am = subprocess.Popen([AM, "--config.file", cfg, "--storage.path", os.path.join(tmp, "am"),
                           "--web.listen-address", "127.0.0.1:%d" % port,
                           "--cluster.listen-address", ""],
                          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "am.log"), "w"))
    url = "http://127.0.0.1:%d" % port
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "/-/ready", timeout=2)
            return am, url
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    am.kill()
    t.fail("alertmanager did not become ready: " + open(os.path.join(tmp, "am.log")).read())


tmp = tempfile.mkdtemp(prefix="rsp-trig-am.")
am = None
try:
    dumps = os.path.join(tmp, "dumps")
    secret = os.urandom(16).hex()
    sf = os.path.join(tmp, "secret")
    with open(sf, "w") as f:
        f.write(secret + "\n")
    os.chmod(sf, 0o600)
    port = t.free_port()
    cfg = ("[dump]\ndump-dir = %s\n[metrics]\nmetrics-listen = 127.0.0.1:%d\n[trigger]\n"
           "trigger = fleet alert SlowFsync --post 1s --holdoff 1m\n"
           "trigger-webhook = yes\ntrigger-secret = %s\n" % (dumps, port, sf))
    with t.Rspd(config=cfg) as d:
        am, url = start_alertmanager(tmp, port, sf)
        p = t.run([AMTOOL, "alert", "add", "SlowFsync", "instance=db1:9464", "severity=page",
                   "--alertmanager.url", url])
        t.check(p.returncode == 0, "amtool alert add SlowFsync: " + (p.stderr.strip() or "ok"))
        deadline = time.time() + 30
        while time.time() < deadline and not (os.path.isdir(dumps) and dumps_in(dumps)):
            time.sleep(0.3)
        files = dumps_in(dumps) if os.path.isdir(dumps) else []
        t.check(len(files) == 1, "Alertmanager's webhook made rspd dump: %s" % files)
        tr = json.loads(t.run([t.RSPCTL, "analyze", os.path.join(dumps, files[0]), "status",
                               "--json"], timeout=120).stdout)["dump"]["trigger"]
        t.check(tr["name"] == "fleet" and tr["condition"] == "alert SlowFsync"
                and tr["value"] == "alert SlowFsync on db1:9464",
                "the dump names the trigger and the alert: %s" % tr)

        alert = json.dumps({"version": "4", "status": "firing", "alerts": [
            {"status": "firing", "labels": {"alertname": "SlowFsync"}}]}).encode()
        cases = [("no token", alert, None, 401), ("a wrong token", alert, "x" * 32, 401),
                 ("a malformed body", b"{\"version\": \"4\", \"alerts\": [", secret, 400),
                 ("an oversized body", b"[" + b"1," * (300 << 10) + b"1]", secret, 400),
                 ("version 3", b"{\"version\": \"3\", \"alerts\": []}", secret, 400)]
        before = d.json("trigger", "list")
        for what, body, token, want in cases:
            code, text = post(port, body, token)
            t.check(code == want and text.count("\n") == 1 and len(text) < 200,
                    "%s: %d and one sentence: %s" % (what, code, text.strip()))
        time.sleep(1.5)
        after = d.json("trigger", "list")
        t.check(dumps_in(dumps) == files, "nothing written by the refused posts")
        t.check(after["webhook_refused"] - before["webhook_refused"] == len(cases)
                and after["triggers"][0]["fires"] == before["triggers"][0]["fires"],
                "each refused post counted, none fired (%d refused)" % after["webhook_refused"])
finally:
    if am:
        am.kill()
        am.wait()
    shutil.rmtree(tmp, ignore_errors=True)
