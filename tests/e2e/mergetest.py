"""What the merge tests (test_merge, test_merge_proxy, test_merge_worker)
share: rspctl merge, the namespaces' holder shells, their JSON lines."""
import json
import subprocess

import rsptest as t


def merge(*args):
    return t.run([t.RSPCTL, "merge"] + list(args), timeout=300)


def holder(ns, script, *args, enter=None):
    """A shell in namespace ns that runs script and then stays (exec sleep) until
    killed: a live process of the namespace for dump --netns, and the parent
    (fork) of the workloads, which are gone by the time of the dump. enter: a
    command run first, outside the namespace (ip netns exec mounts its own /sys,
    where the cgroup hierarchy is not), e.g. joining a cgroup."""
    cmd = ["ip", "netns", "exec", ns, "sh", "-c", script + "; exec sleep 300",
           "sh"] + [str(a) for a in args]
    if enter:
        cmd = ["sh", "-c", enter + ' && exec "$@"', "sh"] + cmd
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)


def line_of(proc, what):
    out = proc.stdout.readline()
    t.check(out.strip().startswith("{"), "%s ran: %r" % (what, out))
    return json.loads(out)
