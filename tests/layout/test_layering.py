#!/usr/bin/env python3
"""The source tree keeps its shape: a folder of src/ includes only headers of
its own folder or of a lower one.

    base <- formats <- store <- {space, verify, history} <- {carry, audit} <- views <- cli

space, verify and history are peers: none includes another; so are carry
and audit.  A public header
include/ollama_audit/X.h belongs to the folder that holds src/*/X.c.  The
check runs on the files as they are, so a new include that breaks the shape
fails `make test`.

Inside a folder, source files include each other's headers without a cycle:
a header belongs to X.c when it is X.h or declares a function X.c defines,
and a .c file depends on the owners of every header it includes (directly or
through another header). A.c -> B.c -> A.c is a cycle and fails, however
many files it passes through. src/cli/ is checked too: its cli.h holds
only the shared types (the cli state, formats, exit codes), each function
is declared in the header of the file that defines it, and each command's
cmd_X.h is included by commands.c (the table), never by another command."""
import os
import re
import sys
from collections import defaultdict

RANK = {"base": 0, "formats": 1, "store": 2, "space": 3, "verify": 3,
        "history": 3, "carry": 4, "audit": 4, "views": 5, "cli": 6}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of_sources(src):
    """Map a module name (util, store, ...) to its folder."""
    owner = {}
    for folder in os.listdir(src):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        if folder not in RANK:
            sys.exit(f"src/{folder}/ is not in the layering table of {__file__}")
        for name in os.listdir(path):
            if name.endswith((".c", ".h")):
                owner.setdefault(os.path.splitext(name)[0], folder)
    return owner


def files_to_check(root, owner):
    """Yield (path, folder) for every source and header with a known folder."""
    for folder in RANK:
        path = os.path.join(root, "src", folder)
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith((".c", ".h")):
                    yield os.path.join(path, name), folder
    inc = os.path.join(root, "include", "ollama_audit")
    for name in sorted(os.listdir(inc)):
        module = os.path.splitext(name)[0]
        if module not in owner:
            yield os.path.join(inc, name), None
        else:
            yield os.path.join(inc, name), owner[module]


def included_folder(spec, here, owner):
    """The folder an #include "spec" names, or None for one outside src/."""
    base = os.path.basename(spec)
    module = os.path.splitext(base)[0]
    if "/" in spec and spec.split("/")[0] in RANK:
        return spec.split("/")[0]
    if spec.startswith("ollama_audit/"):
        return owner.get(module)
    return here if module in owner else None


COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# A definition: a non-static function whose body starts at column 0 ("{").
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(\w+)\((?:[^;{}])*?\)\s*\n\{", re.M)
# A prototype: name(...) [__attribute__((...))];
PROTOTYPE = re.compile(r"\b(\w+)\s*\((?:[^;{}()]|\([^()]*\))*\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?;", re.S)


def source_graph(root):
    """Map each .c file of src/ to {.c file it depends on: the header that says so}."""
    sources, headers = [], {}
    for folder in RANK:
        path = os.path.join(root, "src", folder)
        for name in sorted(os.listdir(path)) if os.path.isdir(path) else []:
            full = os.path.join(path, name)
            if name.endswith(".c"):
                sources.append(full)
            elif name.endswith(".h"):
                headers[f"{folder}/{name}"] = full
    inc = os.path.join(root, "include", "ollama_audit")
    for name in sorted(os.listdir(inc)):
        headers["ollama_audit/" + name] = os.path.join(inc, name)
    text = {}
    for path in sources + list(headers.values()):
        with open(path, encoding="utf-8") as f:
            text[path] = COMMENT.sub("", f.read())
    defined_in = defaultdict(set)
    for c in sources:
        for m in DEFINITION.finditer(text[c]):
            defined_in[m.group(1)].add(c)
    stem = lambda p: os.path.splitext(os.path.basename(p))[0]
    owners = {}
    for h in headers.values():
        owners[h] = {c for c in sources if stem(c) == stem(h)}
        for m in PROTOTYPE.finditer(text[h]):
            owners[h] |= defined_in.get(m.group(1), set())

    def reached(path, seen):
        for spec in INCLUDE.findall(text[path]):
            h = headers.get(spec) or headers.get(os.path.basename(os.path.dirname(path)) + "/" + spec)
            if h and h not in seen:
                seen.add(h)
                reached(h, seen)
        return seen

    graph = {}
    for c in sources:
        graph[c] = {}
        for h in sorted(reached(c, set())):
            for o in owners[h] - {c}:
                graph[c].setdefault(o, h)
    return graph


def cycles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# Public headers with no code, included by every layer: export.h defines
# OA_EXPORT, the mark of the exported API.
MACROS_ONLY = {"export.h"}


def command_header_includes(root):
    """Each command's cmd_X.h is included by commands.c (the table) and
    cmd_X.c alone: what two commands share lives in a file of its own."""
    cli = os.path.join(root, "src", "cli")
    headers = {n for n in os.listdir(cli) if n.startswith("cmd_") and n.endswith(".h")}
    bad = []
    for name in sorted(os.listdir(cli)):
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(cli, name), encoding="utf-8") as f:
            text = f.read()
        for spec in INCLUDE.findall(text):
            h = os.path.basename(spec)
            if h in headers and name != "commands.c" and os.path.splitext(name)[0] != h[:-2]:
                bad.append(f"src/cli/{name} includes {h}: a command's header is the command table's alone")
    return bad


def main():
    root = os.environ.get("OA_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
    owner = folder_of_sources(os.path.join(root, "src"))
    bad = []
    checked = 0
    for path, folder in files_to_check(root, owner):
        rel = os.path.relpath(path, root)
        if folder is None and os.path.basename(path) in MACROS_ONLY:
            continue
        if folder is None:
            bad.append(f"{rel}: a public header with no src/*/{os.path.basename(path)[:-2]}.c")
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for spec in INCLUDE.findall(text):
            target = included_folder(spec, folder, owner)
            checked += 1
            if target is None or target == folder:
                continue
            if RANK[target] > RANK[folder] or (RANK[target] == RANK[folder]):
                bad.append(f'{rel} ({folder}) includes "{spec}" ({target})')
    graph = source_graph(root)
    for comp in cycles(graph):
        names = ", ".join(os.path.relpath(c, root) for c in comp)
        bad.append(f"include cycle among {names}:")
        for a in comp:
            for b, via in sorted(graph[a].items()):
                if b in comp:
                    bad.append(f"    {os.path.relpath(a, root)} -> {os.path.relpath(b, root)}"
                               f" (includes {os.path.relpath(via, root)})")
    bad += command_header_includes(root)
    for line in bad:
        print("layering: " + line)
    if bad:
        print(f"FAIL: {len(bad)} problem(s) break the layering")
        return 1
    print(f"ok: {checked} includes follow base <- formats <- store <- space|verify|history <- carry|audit <- views <- cli;"
          f" {len(graph)} sources of src/ include each other without a cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
