#!/usr/bin/env python3
"""The shared library exports exactly the API its installed headers declare:
every function or object an installed header marks OA_EXPORT is a dynamic
symbol of libollama_audit.so, and no other symbol is (a private helper such
as oa_xmalloc or oa_buf_add stays hidden). A prototype in an installed
header without OA_EXPORT is an error too: it would declare something a
program cannot link against.
    test_symbols.py LIBRARY INCLUDE_DIR"""
import os
import re
import subprocess
import sys

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)


def top_level_statements(text):
    """The declarations of a header at file scope (bodies of structs, enums
    and inline functions skipped), comments and preprocessor lines removed."""
    text = PREPROCESSOR.sub("", COMMENT.sub(" ", text))
    depth, start, out = 0, 0, []
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1  # a definition ends here; its name follows to ';'
        elif ch == ";" and depth == 0:
            out.append(" ".join(text[start:i].split()))
            start = i + 1
    return out


def declared_name(stmt):
    """The name a declaration declares: the identifier before the parameter
    list of a function, the last one before '[' or the end for an object."""
    head = re.split(r"\b__attribute__\b", stmt)[0]
    m = re.search(r"(\w+)\s*\(", head)
    if m:
        return m.group(1)
    return re.findall(r"(\w+)\s*(?:\[|$)", head)[-1]


def main():
    lib, inc = sys.argv[1], sys.argv[2]
    declared, unmarked = set(), []
    for name in sorted(os.listdir(inc)):
        with open(os.path.join(inc, name), encoding="utf-8") as f:
            for stmt in top_level_statements(f.read()):
                if stmt.startswith("typedef") or stmt.startswith(("struct", "enum", "union")) and "(" not in stmt:
                    continue
                if "(" not in stmt and not stmt.startswith(("extern", "OA_EXPORT")):
                    continue
                if stmt.startswith("OA_EXPORT "):
                    declared.add(declared_name(stmt))
                else:
                    unmarked.append("%s: %s" % (name, stmt[:100]))
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True)
    exported = {line.split()[-1] for line in nm.stdout.splitlines()
                if len(line.split()) == 3 and line.split()[1] in "TDBRVW" and not line.split()[-1].startswith("_")}
    failed = 0
    for what, names in (("declared without OA_EXPORT", unmarked),
                        ("exported by %s but declared by no installed header" % os.path.basename(lib),
                         sorted(exported - declared)),
                        ("declared OA_EXPORT but not exported (not defined in the library?)",
                         sorted(declared - exported))):
        if names:
            failed += 1
            print("FAIL: %d %s:\n  %s" % (len(names), what, "\n  ".join(names)))
    print("%d symbols exported, %d declared OA_EXPORT" % (len(exported), len(declared)))
    print("%d passed, %d failed" % (3 - failed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
