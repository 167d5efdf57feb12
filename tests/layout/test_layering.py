#!/usr/bin/env python3
"""The source tree keeps its shape: a folder of src/ includes only headers of
its own folder or of a lower one.

    base <- formats <- store <- {space, verify, history} <- views <- cli

space, verify and history are peers: none includes another.  A public header
include/ollama_audit/X.h belongs to the folder that holds src/*/X.c.  The
check runs on the files as they are, so a new include that breaks the shape
fails `make test`."""
import os
import re
import sys

RANK = {"base": 0, "formats": 1, "store": 2, "space": 3, "verify": 3,
        "history": 3, "views": 4, "cli": 5}
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


def main():
    root = os.environ.get("OA_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
    owner = folder_of_sources(os.path.join(root, "src"))
    bad = []
    checked = 0
    for path, folder in files_to_check(root, owner):
        rel = os.path.relpath(path, root)
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
    for line in bad:
        print("layering: " + line)
    if bad:
        print(f"FAIL: {len(bad)} include(s) break the layering")
        return 1
    print(f"ok: {checked} includes follow base <- formats <- store <- space|verify|history <- views <- cli")
    return 0


if __name__ == "__main__":
    sys.exit(main())
