"""The documentation matches the programs: every option of `rspd --help` and
every key of the default file is in rspd(8); rspctl's global options and
commands are in rspctl(8) (each command's options are checked against its
option table by tests/unit/test_query_docs.c); the man pages format without
warnings; bash completion offers the commands and their options."""
import fnmatch
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

# README: the quick start is the two commands; every rspctl command has its
# section; every option of rspctl (global and each command's) and of rspd is
# in it (--[no-]X covers --X and --no-X); the Architecture section names every
# source file under lib/, daemon/, cli/, bpf/ (its name, its stem in a list
# such as "procfs, maps", or a pattern such as cmd_*.c).
readme = open(os.path.join(SRC, "README.md")).read()
quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```sh\n(.*?)```", quick, re.S)
quick_cmds = [l.split("#")[0].strip() for b in blocks for l in b.splitlines()
              if l.split("#")[0].strip()]
t.check(quick_cmds == ["./scripts/demo", "./scripts/test"],
        "README's quick start is the two commands: %s" % quick_cmds)
no_section = [c for c in commands if c != "help" and "\n### rspctl %s\n" % c not in readme]
t.check(not no_section, "every rspctl command has its README section %s" % (no_section or ""))


def in_readme(opt):
    return opt in readme or opt.replace("--no-", "--[no-]") in readme or \
        opt.replace("--", "--[no-]", 1) in readme


ctl_opts = set(globals_)
for c in commands:
    if c != "help":
        ctl_opts |= set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)",
                                   t.run([t.RSPCTL, "help", c]).stdout))
missing = sorted(o for o in ctl_opts | opts if not in_readme(o))
t.check(len(ctl_opts) >= 50 and not missing,
        "all %d options of rspctl and %d of rspd are in README %s" % (
            len(ctl_opts), len(opts), missing or ""))

arch = readme.split("## Architecture", 1)[1].split("\n## ", 1)[0]
words = set(re.findall(r"[\w.+-]+", arch))
patterns = [p.rsplit("/", 1)[-1] for p in re.findall(r"[\w/]*\*[\w.]*", arch)]
sources = subprocess.run(["git", "-C", SRC, "ls-files", "lib", "daemon", "cli", "bpf"],
                         capture_output=True, text=True).stdout.split()
sources = [f for f in sources if f.endswith((".c", ".h"))]
unnamed = [f for f in sources if os.path.basename(f) not in arch and
           os.path.basename(f).split(".")[0] not in words and
           not any(fnmatch.fnmatch(os.path.basename(f), p) for p in patterns if p)]
if sources:
    t.check(not unnamed, "README's Architecture names all %d source files %s" % (
        len(sources), unnamed or ""))
else:
    print("   (not a git checkout: README's Architecture not checked against the files)")
