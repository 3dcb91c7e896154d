"""The configuration file: every option, defaults in a commented default file,
errors with FILE:LINE and the allowed values, the command line over the
file, SIGHUP reloads (a bad file keeps the configuration in force), logs
with journald priorities under systemd."""
import os
import re
import signal
import tempfile
import rsptest as t

t.need_root()
tmp = tempfile.mkdtemp(prefix="rsptest.config.")


def rspd(*args):
    return t.run([t.RSPD] + list(args))


def conf(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# The default file: every option of the file, commented, with its default.
p = rspd("--default-config")
t.check(p.returncode == 0, "rspd --default-config prints the default file")
default = p.stdout
keys = re.findall(r"^#([a-z][a-z0-9-]*) = (.*)$", default, re.M)
help_text = rspd("--help").stdout
for key, value in keys:
    if "--%s" % key not in help_text and "--[no-]%s" % key not in help_text:
        t.fail("key %s of the default file is not in rspd --help" % key)
t.check(len(keys) >= 18, "%d keys in the default file, each also an option in --help" % len(keys))
for key, value in (("window", "64M"), ("stacks", "cached"), ("log-level", "info"),
                   ("socket-group", "rsp"), ("flush-interval", "100ms")):
    t.check((key, value) in keys, "the default file shows %s = %s" % (key, value))
path = conf("default.conf", default)
p = rspd("--check-config", "--config", path)
t.check(p.returncode == 0, "the default file as printed is valid")
uncommented = re.sub(r"^#([a-z][a-z0-9-]* = )", r"\1", default, flags=re.M)
path = conf("all.conf", uncommented)
p = rspd("--check-config", "--config", path)
t.check(p.returncode == 0, "every key set to its default is valid: " + p.stdout.strip())

# Bad files: refused with FILE:LINE, what is wrong and what is allowed.
cases = [
    ("[window]\nwindow = 64M\n[capture]\nstacks = some\n", ":4: stacks: invalid value 'some'",
     "all, sleeps, sampled:N"),
    ("[capture]\nring-pages = 3\n", ":2: ring-pages", "power of two"),
    ("[windw]\nwindow = 1G\n", ":2: unknown section [windw]", "[daemon], [control]"),
    ("[window]\n\nwindo = 1G\n", ":3: unknown key 'windo' in [window]", "window, chunk-size"),
    ("[capture]\nwindow = 1G\n", ":2: 'window' belongs in [window]", "not in [capture]"),
    ("window = 1G\n", ":1: 'window' is outside any section", "[window]"),
    ("[daemon]\nforeground = yes\n", ":2: 'foreground' can only be given on the command line", ""),
    ("[capture]\nfreq\n", ":2: not a '[section]' or 'key = value' line", ""),
    ("[capture]\nsample-stacks = maybe\n", ":2: sample-stacks: invalid value 'maybe'", "yes or no"),
    ("[control]\nrequest-timeout = 5 parsecs\n", ":2: request-timeout", "a duration from 10ms"),
    ("[capture]\nfamilies = sched,nope\n", ":2: families", "unknown family 'nope'"),
    ("[capture]\nfamilies =\n", ":2: families: invalid value ''", "the list names no family"),
    ("[capture]\nfamilies = ,\n", ":2: families: invalid value ','", "the list names no family"),
    ("[capture]\nfamilies = sched,+net\n", ":2: families", "mixes family names with +/-"),
    ("[capture]\nfamilies = -sched,-block,-irq,-timer,-sample,-net,-sideband\n", ":2: families",
     "the list leaves no family on"),
    ("[capture]\ndwarf =\n", ":2: dwarf: invalid value ''", "none, or some of cpu_clock"),
    ("[daemon]\nlog-level = loud\n", ":2: log-level", "error, warning, info or debug"),
    ("[capture]\nstacks = all" + " " * 300 + "x\n", ":2: the line is longer than", ""),
]
for i, (text, what, allowed) in enumerate(cases):
    path = conf("bad%d.conf" % i, text)
    p = rspd("--foreground", "--config", path, "--socket", os.path.join(tmp, "never.sock"))
    err = p.stderr.strip()
    t.check(p.returncode == 1 and (path + what) in err and allowed in err,
            "refused: " + err.replace(tmp + "/", ""))
p = rspd("--check-config", "--config", os.path.join(tmp, "absent.conf"))
t.check(p.returncode == 1 and "cannot read the configuration file" in p.stderr,
        "an absent --config file is an error: " + p.stderr.strip())

# The command line overrides the file.
with t.Rspd("--freq", "20", config="[capture]\nfreq = 50\nstacks = all\n") as d:
    st = d.json("status")
    t.check(st["config"]["sample_freq_hz"] == 20, "--freq 20 overrides freq = 50 in the file")
    t.check(st["config"]["stacks"] == "all", "stacks = all from the file applies")

# --families +NAME/-NAME change the families so far (defaults, then the file):
# the syscall family (per thread) is off by default and one word turns it on.
with t.Rspd("--families", "+syscall", config="[capture]\nfamilies = -net\n") as d:
    st = d.json("status")
    on = {f["name"] for f in st["families"] if f["enabled"]}
    sc = [f for f in st["families"] if f["name"] == "syscall"][0]
    # asked for: on where BPF runs, else off with the backend named as why
    asked = "syscall" in on if st["config"]["capture"] == "bpf" else "BPF backend" in sc["note"]
    t.check(asked and "net" not in on and {"sched", "block", "sample"} <= on,
            "families = -net in the file, then --families +syscall: %s (syscall: %s)"
            % (",".join(sorted(on)), sc.get("note", "")[:60]))
with t.Rspd() as d:
    st = d.json("status")
    fam = [f for f in st["families"] if f["name"] == "syscall"][0]
    note = fam.get("note", "")
    # off by default; status says how to turn it on (per thread or the
    # system's alone)
    ok = not fam["enabled"] and "+syscall" in note and "--syscall-system" in note
    t.check(ok, "the syscall family by default: %s" % note)

# SIGHUP: a bad file is refused and changes nothing; a good one applies.
with t.Rspd(config="[daemon]\nlog-level = info\n") as d:
    d.write_config("[daemon]\nlog-level = debug\n[capture]\nmax-stack = 0\n")
    d.signal(signal.SIGHUP)
    log = d.wait_log("keeping the configuration in force")
    line = [l for l in log.splitlines() if "keeping" in l][0]
    t.check((d.config + ":4: max-stack: invalid value '0'") in line
            and "an integer from 1 to 1024" in line, "bad reload refused: " + line.split("error: ")[-1])
    d.ctl("status")
    t.check("client pid" not in d.read_log(), "the log level stayed info (no debug lines)")
    t.check(d.alive() and d.ctl("status")[0] == 0, "rspd still answers after a bad reload")
    d.write_config("[daemon]\nlog-level = debug\n[window]\nwindow = 128M\n")
    d.signal(signal.SIGHUP)
    log = d.wait_log("reloaded " + d.config)
    t.check("window changed from 64M to 128M in the file; it takes effect when rspd restarts" in log,
            "an option that needs a restart is named in a warning")
    d.ctl("status")
    t.check("client pid" in d.wait_log("client pid", timeout=5), "log-level = debug applies at once (debug lines appear)")
    t.check(d.json("status")["window"]["budget_bytes"] == 64 << 20, "the window keeps its size")

# Under systemd (JOURNAL_STREAM names stderr), lines carry <N> priorities.
d = t.Rspd(config="[daemon]\nlog-level = debug\n")
open(d.log, "w").close()
st = os.stat(d.log)
d.env = {"JOURNAL_STREAM": "%d:%d" % (st.st_dev, st.st_ino)}
with d:
    d.ctl("status")
    d.wait_log("<7>client pid")
    log = d.read_log().splitlines()
    t.check(all(re.match(r"<[3-7]>", l) for l in log if l),
            "every line starts with a syslog priority: %s" % log[:2])
    t.check(any(l.startswith("<6>capturing") for l in log), "info lines are <6>")
# An inherited JOURNAL_STREAM that is not stderr does not count.
with t.Rspd(env={"JOURNAL_STREAM": "1:1"}) as d:
    t.check(d.read_log().startswith("rspd["), "a JOURNAL_STREAM that is not stderr is ignored")
