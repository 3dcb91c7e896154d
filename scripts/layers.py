#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The layers of rsp's sources, checked (issue 37). usage: layers.py [BUILD_DIR]

Each layer only looks down:

  lib/util -> stream -> model -> timeline -> analysis -> format -> query,
  then daemon/ and cli/ above lib/ (lib/ never reaches them, nor they each other).

A header in lib/include/ belongs to the layer of the .c files that define
the functions it declares (read from the built objects with `nm`: who
defines a name is the linker's answer, not a guess from file names); a
header that declares none is in HEADER_LAYER below.

Fails (exit 1) with one line per problem:
  - an #include of a higher layer's header (file:line, the header, both layers);
  - a call of a function that one file alone defines, in a higher layer;
  - a circle between files, with the names on it: a file leads to the one
    file defining a function it calls, and through an #include to the
    files defining what that header declares (the files that share a
    header as its definers are one object's parts: only their calls count).
The allocator hook (HOOKS) is left out; KNOWN lists what is left to fix.
Needs BUILD_DIR's objects (default build/release): ctest runs it as
unit.test_layers after the build.
"""
import os
import re
import subprocess
import sys

# The order, written once: a file may use its own layer and those before it.
LAYERS = ["util", "stream", "model", "timeline", "analysis", "format", "query"]
# Above lib/, side by side: neither uses the other.
TOP = ["daemon", "cli"]

# Headers that declare no function defined out of line (macros, structs,
# static inline functions): their layer, said once here.
HEADER_LAYER = {
    "rsp/api.h": "util",
    "rsp/annotate.h": "util",  # for applications (USDT probes): lib/ includes it nowhere
    "internal/hash.h": "util",
    "rsp/stackhash.h": "util",
    "internal/gallop.h": "util",
    "internal/callchain.h": "stream",
    "internal/maps.h": "model",
    "internal/hist_store.h": "analysis",
}

# What issue 37 has still to move: each entry is a problem's text without
# its line number, or "circle:" and files a circle may include. An entry
# tolerates that problem only (a new one fails); delete an entry when its
# problem is gone (a stale entry fails too, so the list only shrinks).
KNOWN = """
circle: cli/report.c cli/report_assets.c cli/report_page.c
circle: lib/model/symbols.c lib/model/unwind.c
circle: lib/timeline/timeline.c lib/timeline/timeline_block.c lib/timeline/timeline_bpf.c lib/timeline/timeline_irq.c lib/timeline/timeline_sched.c
circle: lib/timeline/tlindex.c lib/timeline/tlstore.c
circle: lib/query/cmd_dump.c lib/query/cmd_graph.c lib/query/cmd_hist.c lib/query/cmd_net.c lib/query/cmd_snapshot.c lib/query/cmd_status.c lib/query/cmd_stopwatch.c lib/query/cmd_top.c lib/query/cmd_trigger.c lib/query/query.c lib/query/request.c
circle: daemon/dumpmeta.c daemon/dumpprocs.c
circle: daemon/histthread.c daemon/budget.c daemon/dump.c daemon/server.c daemon/status.c daemon/stopwatch.c daemon/syscalls.c daemon/trigger.c
""".strip().splitlines()

# Not a design dependency: rspd's allocator hook defines malloc() and its
# kin, which every file (lib/ included) calls without knowing of it.
HOOKS = {"daemon/malloc.c"}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
CALLISH = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def rank(layer):
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


def looks_down(user, used):
    """True when a file of layer @user may use one of layer @used."""
    if user in TOP or used in TOP:
        return user == used or (user in TOP and used not in TOP)
    return rank(used) <= rank(user)


def sources():
    out = []
    for top in ("lib", "daemon", "cli"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            out += [os.path.relpath(os.path.join(d, f), ROOT) for f in files
                    if f.endswith((".c", ".h"))]
    return sorted(out)


def file_layer(path):
    parts = path.split("/")
    if parts[0] in TOP:
        return parts[0]
    if parts[1] in LAYERS:
        return parts[1]
    return None  # a header: see header_layers()


def objects(build):
    """Each source file's object under @build: CMake's <dir>/CMakeFiles/<t>.dir/<src>.o."""
    found = {}
    for d, _, files in os.walk(build):
        m = re.search(r"^(.*?)/?CMakeFiles/[^/]+\.dir(/.*)?$", os.path.relpath(d, build))
        if not m:
            continue
        for f in files:
            if not f.endswith(".c.o"):
                continue
            src = os.path.normpath(os.path.join(m.group(1), (m.group(2) or "/")[1:], f[:-2]))
            # Objects of files moved away since (stale), of generated code
            # and of tests compiling daemon files again are not sources here.
            if os.path.isfile(os.path.join(ROOT, src)) and src.split("/")[0] in ("lib",) + tuple(TOP):
                found.setdefault(src, os.path.join(d, f))
    return found


def symbols(objs):
    """{source: (defined names, used names)} from one `nm` over every object."""
    by_obj = {o: s for s, o in objs.items()}
    table = {s: (set(), set()) for s in objs}
    if not objs:
        return table
    out = subprocess.run(["nm", "-A", "-g"] + sorted(by_obj), capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        obj, rest = line.split(":", 1)
        f = rest.split()
        if len(f) == 2 and f[0] == "U":
            table[by_obj[obj]][1].add(f[1])
        elif len(f) == 3 and f[1] in "TDBRCVW":
            table[by_obj[obj]][0].add(f[2])
    return table


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def resolve(src, name):
    """The project file an #include of @name in @src means, or None (system, bpf/, tracepoints/)."""
    for cand in ("lib/include/" + name, os.path.join(os.path.dirname(src), name)):
        cand = os.path.normpath(cand)
        if cand.split("/")[0] in ("lib", "daemon", "cli") and os.path.isfile(
                os.path.join(ROOT, cand)):
            return cand
    return None


def header_layers(files, definer, problems):
    """Each header's owners (the files defining what it declares) and, in
    lib/include/, its layer: the highest of its owners'."""
    layers, owners = {}, {}
    for h in files:
        if not h.endswith(".h"):
            continue
        names = set(CALLISH.findall(COMMENT.sub("", read(h))))
        top = h.split("/")[0]
        defs = {definer[n] for n in names if n in definer and definer[n].startswith(top + "/")}
        owners[h] = defs
        if not h.startswith("lib/include/"):
            continue  # daemon/, cli/: the layer of their directory
        short = h[len("lib/include/"):]
        if defs:
            layers[h] = max((file_layer(d) for d in defs), key=rank)
        elif short in HEADER_LAYER:
            layers[h] = HEADER_LAYER[short]
        else:
            problems.append("%s: declares no function defined in lib/ and has no layer: "
                            "add it to HEADER_LAYER in scripts/layers.py" % h)
            layers[h] = "util"
    return layers, owners


def includes(files):
    """(file, line, included file) of every project #include."""
    for f in files:
        for n, line in enumerate(read(f).splitlines(), 1):
            m = INCLUDE.match(line)
            target = m and resolve(f, m.group(1))
            if target:
                yield f, n, m.group(1), target


def sccs(graph):
    """Tarjan's strongly connected components, iterative."""
    index, low, on, stack, out, count = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = count[0]
        count[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = count[0]
                    count[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def key(problem):
    """A problem's text without its line number: what KNOWN lists."""
    return re.sub(r"^([^: ]+):\d+:", r"\1:", problem)


def tolerate(problems):
    """@problems less those KNOWN tolerates, plus KNOWN's stale entries."""
    circles = [(k, set(k.split()[1:])) for k in KNOWN if k.startswith("circle:")]
    used, left = set(), []
    for p in problems:
        m = re.match(r"circle of \d+ files: ", p)
        files = set(re.findall(r"([\w/.]+) ->", p)) if m else None
        hit = [k for k, c in circles if files and files <= c]
        if hit:
            used.add(hit[0])
        elif key(p) in KNOWN:
            used.add(key(p))
        else:
            left.append(p)
    left += ["scripts/layers.py: KNOWN lists a problem that is gone: delete it: " + k
             for k in KNOWN if k not in used]
    return left


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/release"))
    objs = objects(build)
    if not any(s.startswith("lib/") for s in objs):
        print("layers.py: no objects of lib/ under %s: build first (scripts/build.sh release)"
              % build)
        return 2
    files = sources()
    unbuilt = [f for f in files if f.startswith("lib/") and f.endswith(".c") and f not in objs]
    if unbuilt:
        print("layers.py: %s not built under %s: build first (scripts/build.sh release)" %
              (", ".join(unbuilt), build))
        return 2
    table = symbols(objs)
    defined = {}
    for s, (defs, _) in table.items():
        for n in defs:
            defined.setdefault(n, set()).add(s)
    definer = {n: next(iter(s)) for n, s in defined.items() if len(s) == 1}
    problems = []
    hlayer, owners = header_layers(files, definer, problems)
    layer = {f: file_layer(f) or hlayer.get(f) for f in files}

    # The graph of files: an include reaches the header and, through it, the
    # files defining what it declares; a call reaches the one definer.
    graph = {f: {} for f in files}
    for f, n, name, target in includes(files):
        if not looks_down(layer[f], layer[target]):
            problems.append("%s:%d: includes %s of layer %s from layer %s" %
                            (f, n, name, layer[target], layer[f]))
        # Files sharing one header are one object's parts: their own calls
        # say whether they form a circle.
        for d in owners.get(target, ()):
            if f.endswith(".c") and f not in owners[target]:
                graph[f].setdefault(d, "#include " + name)
    for f, (_, used) in table.items():
        for sym in sorted(used):
            d = definer.get(sym)
            if d is None or d == f or d in HOOKS:
                continue
            if not looks_down(layer[f], layer[d]):
                problems.append("%s: calls %s() of %s (layer %s) from layer %s" %
                                (f, sym, d, layer[d], layer[f]))
            graph[f].setdefault(d, sym + "()")
    for comp in sccs(graph):
        inside = set(comp)
        edges = ["%s -> %s (%s)" % (a, b, why) for a in comp
                 for b, why in sorted(graph[a].items()) if b in inside]
        problems.append("circle of %d files: %s" % (len(comp), "; ".join(edges)))
    problems = tolerate(problems)
    for p in problems:
        print(p)
    if problems:
        print("layers.py: %d problems (order: %s, then %s)" %
              (len(problems), " -> ".join(LAYERS), " and ".join(TOP)))
        return 1
    print("layers.py: %d files, %d objects: every arrow looks down, no circle%s" %
          (len(files), len(objs), " but the %d KNOWN (issue 37)" % len(KNOWN) if KNOWN else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
