#!/usr/bin/env python3
"""The library keeps no state of its own outside src/base/: no source or
header of formats, store, space, verify, history, carry, audit or views
declares a static variable that can change, at file scope or in a function
(a function's static is the same state shared by every caller and every
thread), nor a global one (a file-scope variable without static).  A static is fine when the object itself is const
("static const char *const names[]", "static const struct {...} t[]");
"static const char *p" is a pointer that can be pointed elsewhere, and
"static _Thread_local" is still hidden state, so both fail.

Process-wide helpers (the locale, a run's sequence numbers) live in
src/base/, which is not checked; src/cli/ is the program, not the library.
The one exception is the journal's libsystemd handle, dlopen'ed once per
process: ALLOWED names it."""
import os
import re
import sys

LIBRARY = ("formats", "store", "space", "verify", "history", "carry", "audit", "views")
# (file under src/, variable): the dlopen'ed libsystemd and what loading it said.
ALLOWED = {("history/journal.c", "sd"), ("history/journal.c", "sd_ok"),
           ("history/journal.c", "sd_why"), ("history/journal.c", "sd_once")}

CODE_NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
STATIC = re.compile(r"(?<![\w\[])static\b")
FUNCTION_POINTER = re.compile(r"\(\s*\*\s*(?:const\s+)?(\w+)\s*\)")


def strip(text):
    """The text with comments, literals and preprocessor lines blanked (newlines kept)."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    return PREPROCESSOR.sub(blank, CODE_NOISE.sub(blank, text))


def skip_braces(text, i):
    """The index just after the brace block that opens at text[i]."""
    depth = 0
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def declaration_head(text, start):
    """What a declaration starting at `start` says before its initializer,
    array bounds or end, a struct/union/enum body left out; None for a
    function (a prototype or a definition)."""
    head, i = [], start
    while i < len(text):
        c = text[i]
        if c == "{":
            before = "".join(head)
            if re.search(r"\b(struct|union|enum)\b", before) and "(" not in before:
                i = skip_braces(text, i)
                head.append(" ")
                continue
            return None
        if c in ";=[,":
            break
        if c == "(":
            pointer = FUNCTION_POINTER.match(text, i)
            if not pointer:
                return None
            head.append(pointer.group(0))
            break
        head.append(c)
        i += 1
    return "".join(head)


def mutable_name(head):
    """The variable a head declares when that variable can change, else None."""
    pointer = FUNCTION_POINTER.search(head)
    if pointer:
        after_star = head[head.index("*", pointer.start()):]
        return None if re.search(r"\bconst\b", after_star) else pointer.group(1)
    names = re.findall(r"\w+", head)
    if not names:
        return None
    name = names[-1]
    qualifiers = head[head.rindex("*"):] if "*" in head else head
    return None if re.search(r"\bconst\b", qualifiers) else name


def mutable_statics(path):
    """(line, name) of each static or global variable in path that can change."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip(f.read())
    found = [(text.count("\n", 0, at) + 1, name) for at, name in mutable_globals(text)]
    for m in STATIC.finditer(text):
        head = declaration_head(text, m.start())
        if head is None:
            continue
        name = mutable_name(head)
        if name:
            found.append((text.count("\n", 0, m.start()) + 1, name))
    return found


TYPE_ONLY = re.compile(r"\s*(?:struct|union|enum)\b\s*\w*\s*(?:\{\})?\s*")


def collapse_braces(text):
    """text with each outermost brace block replaced by "{}"."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "{":
            end = skip_braces(text, i)
            out.append("{}")
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def file_scope_statements(text):
    """(offset, statement) of each declaration at file scope, brace blocks
    of initializers and types kept as "{}", function bodies left out."""
    i, start, out = 0, 0, []
    while i < len(text):
        c = text[i]
        if c == "{":
            before = text[start:i]
            end = skip_braces(text, i)
            if "=" not in before and "(" in before and not re.search(r"\b(struct|union|enum)\b", before):
                start = end  # a function's body: what came before was its head
            i = end
            continue
        if c == ";":
            out.append((start, collapse_braces(text[start:i])))
            start = i + 1
        i += 1
    return out


def mutable_globals(text):
    """(offset, name) of each file-scope variable without static that can change."""
    found = []
    for at, stmt in file_scope_statements(text):
        words = stmt.split()
        if not words or words[0] in ("static", "typedef", "extern") or TYPE_ONLY.fullmatch(stmt):
            continue
        head = declaration_head(stmt.replace("{}", ""), 0)
        name = mutable_name(head) if head is not None else None
        if name:
            found.append((at + len(stmt) - len(stmt.lstrip()), name))
    return found


def main():
    root = os.environ.get("OA_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
    src = os.path.join(root, "src")
    bad, seen = [], set()
    for folder in LIBRARY:
        path = os.path.join(src, folder)
        for name in sorted(os.listdir(path)) if os.path.isdir(path) else []:
            if not name.endswith((".c", ".h")):
                continue
            rel = f"{folder}/{name}"
            for line, var in mutable_statics(os.path.join(path, name)):
                if (rel, var) in ALLOWED:
                    seen.add((rel, var))
                else:
                    bad.append(f"src/{rel}:{line}: `{var}` can change: library state outside src/base/")
    for rel, var in sorted(ALLOWED - seen):
        bad.append(f"src/{rel}: the allowed static `{var}` is gone: drop it from ALLOWED in {__file__}")
    for b in bad:
        print(b)
    if bad:
        return 1
    print("ok: no library source outside src/base/ declares a variable that can change")
    return 0


if __name__ == "__main__":
    sys.exit(main())
