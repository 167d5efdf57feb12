#!/usr/bin/env python3
"""No function of src/ is over 100 lines (from the line naming it to its
closing brace): a longer one is split into named steps. The few that may
stay longer are listed in ALLOWED with the reason; an entry that is no
longer needed (the function is gone or now short) is an error too, so the
list only shrinks.
    test_function_length.py [SOURCE_DIR]   (else $OA_SOURCE_DIR, else ../..)"""
import os
import re
import sys

LIMIT = 100

# "path:function" -> why it may be longer. Keep this short: a function
# that does one thing after another is split into those things instead.
ALLOWED = {
}

TOKENS = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*',
                    re.S | re.M)
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}


def blank(text):
    """Comments, strings, characters and preprocessor lines as spaces,
    keeping every newline, so braces and lines are counted on code only."""
    return TOKENS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def name_before(code, close):
    """The function name before the ')' at close whose '(' it matches, or None."""
    depth = 0
    for i in range(close, -1, -1):
        if code[i] == ")":
            depth += 1
        elif code[i] == "(":
            depth -= 1
            if depth == 0:
                m = re.search(r"(\w+)\s*$", code[:i])
                if m and m.group(1) not in KEYWORDS:
                    return m.group(1), m.start(1)
                return None
    return None


def functions(text):
    """Yield (name, first line, last line) of every function defined at file scope."""
    code = blank(text)
    depth, i = 0, 0
    while i < len(code):
        ch = code[i]
        if ch == "{":
            if depth == 0:
                head = code[:i].rstrip()
                found = name_before(code, len(head) - 1) if head.endswith(")") else None
                if found:
                    name, at = found
                    end, d = i, 0
                    for end in range(i, len(code)):
                        if code[end] == "{":
                            d += 1
                        elif code[end] == "}":
                            d -= 1
                            if d == 0:
                                break
                    yield name, code.count("\n", 0, at) + 1, code.count("\n", 0, end) + 1
                    i = end + 1
                    continue
            depth += 1
        elif ch == "}":
            depth -= 1
        i += 1


def main():
    root = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OA_SOURCE_DIR")
            or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    src = os.path.join(root, "src")
    long_ones, seen, count = [], set(), 0
    for folder, _, names in sorted(os.walk(src)):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for fn, first, last in functions(text):
                count += 1
                lines = last - first + 1
                key = f"{rel}:{fn}"
                if lines <= LIMIT:
                    continue
                if key in ALLOWED:
                    seen.add(key)
                    continue
                long_ones.append((lines, f"{rel}:{first}: {fn} is {lines} lines"))
    bad = [msg for _, msg in sorted(long_ones, reverse=True)]
    bad += [f"{key} is in ALLOWED but is not over {LIMIT} lines (or is gone): remove it"
            for key in sorted(set(ALLOWED) - seen)]
    for line in bad:
        print("function length: " + line)
    if count < 1000:
        bad.append(f"only {count} functions found under {src}: the parser is broken")
        print(f"FAIL: {bad[-1]}")
    if bad:
        print(f"FAIL: {len(bad)} problem(s); split the function into named steps (limit {LIMIT} lines)")
        return 1
    print(f"ok: {count} functions of src/, none over {LIMIT} lines but the {len(ALLOWED)} allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
