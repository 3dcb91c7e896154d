"""The documentation matches the programs: every option of `rspd --help` and
every key of the default file is in rspd(8); rspctl's global options and
commands are in rspctl(8) (each command's options are checked against its
option table by tests/unit/test_query_docs.c); the man pages format without
warnings; bash completion offers the commands and their options."""
import os
import re
import shutil
import subprocess
import rsptest as t

SRC = os.environ.get("RSP_SOURCE", os.path.join(os.path.dirname(__file__), "../.."))


def man(name):
    with open(os.path.join(SRC, "man", name)) as f:
        return f.read()


def roff(opt):
    return opt.replace("-", "\\-")


rspd8, rspctl8 = man("rspd.8"), man("rspctl.8")

help_text = t.run([t.RSPD, "--help"]).stdout
opts = set()
for neg, name in re.findall(r"--(\[no-\])?([a-z][a-z0-9-]*)", help_text):
    opts.add("--" + name)
    if neg:
        opts.add("--no-" + name)
missing = sorted(o for o in opts if roff(o) not in rspd8)
t.check(len(opts) >= 25 and not missing,
        "all %d options of rspd --help are in rspd(8) %s" % (len(opts), missing or ""))
keys = re.findall(r"^#([a-z][a-z0-9-]*) = ", t.run([t.RSPD, "--default-config"]).stdout, re.M)
sections = set(re.findall(r"^\[([a-z]+)\]$", t.run([t.RSPD, "--default-config"]).stdout, re.M))
t.check(all(roff("--" + k) in rspd8 for k in keys), "every key of the default file is in rspd(8)")
t.check(all(".SS [%s]" % s in rspd8 for s in sections),
        "every section (%s) has its part in rspd(8)" % ", ".join(sorted(sections)))

ctl_help = t.run([t.RSPCTL, "--help"]).stdout
globals_ = set(re.findall(r"^\s+(?:-\w, )?(--[a-z-]+)", ctl_help.split("Global options:")[1], re.M))
t.check(globals_ >= {"--socket", "--help", "--version"}
        and all(roff(g) in rspctl8 for g in globals_),
        "rspctl's global options %s are in rspctl(8)" % sorted(globals_))
commands = re.findall(r"^  ([a-z][a-z-]*) ", ctl_help.split("Commands:")[1].split("\n\n")[0], re.M)
t.check(commands and all(".SS %s\n" % c in rspctl8 for c in commands),
        "every command %s has a section in rspctl(8)" % commands)

if shutil.which("groff"):
    for page in ("rspd.8", "rspctl.8"):
        p = t.run(["groff", "-man", "-ww", "-z", os.path.join(SRC, "man", page)])
        t.check(p.returncode == 0 and not p.stderr.strip(),
                "%s formats without warnings %s" % (page, p.stderr.strip()))
    p = t.run(["groff", "-man", "-Tascii", "-P-cbou", os.path.join(SRC, "man", "rspd.8")])
    long_lines = [l for l in p.stdout.splitlines() if len(l) > 80]
    t.check(not long_lines, "rspd(8) renders within 80 columns")
else:
    print("   (groff is not installed: formatting not checked)")

# Bash completion, run as bash would: commands, then a command's options.
comp = os.path.join(SRC, "completions", "rspctl")
script = """
source %s
show() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _rspctl; echo "${COMPREPLY[*]}"; }
show rspctl ''
show rspctl --socket /tmp/x status --
show rspctl status --format ''
show rspctl help ''
""" % comp
env = dict(os.environ, PATH=os.path.dirname(t.RSPCTL) + ":" + os.environ["PATH"])
p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
lines = p.stdout.splitlines()
t.check(p.returncode == 0 and len(lines) == 4, "the completion script runs: %s" % p.stderr.strip())
t.check(set(commands) <= set(lines[0].split()), "completes the commands: " + lines[0])
t.check({"--pid", "--events", "--json", "--format"} <= set(lines[1].split()),
        "completes a command's options after global options: " + lines[1])
t.check(lines[2].split() == ["text", "json"], "completes --format's values: " + lines[2])
t.check(set(commands) - {"help"} <= set(lines[3].split()), "completes 'help COMMAND'")
