#!/usr/bin/env python3
"""docs/architecture.md stays a map a reader takes in at once, and a true one.

- No paragraph (a run of text lines; each list item its own; code blocks,
  tables and headings aside) is over 150 words.
- Every `oa_*` (or `OA_*`) identifier it names occurs in src/ or include/;
  `oa_x_*` names a family, of which one must occur.
- Every file it names in backquotes (x.c, x.h, x.py, x.md, a shell glob of
  them) and every folder (src/..., include/..., tests/..., docs/...) exists.
- Every link into it from another doc (architecture.md#anchor) leads to one
  of its headings."""
import fnmatch
import os
import re
import sys

SRC = os.environ.get("OA_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(SRC, "docs", "architecture.md")
MAX_WORDS = 150
IDENT = re.compile(r"\b(?:oa|OA)_\w+")
TREES = ("src", "include", "tests", "docs")

failures = []


def paragraphs(text):
    """(first line number, text) of each prose paragraph and list item."""
    out, cur, start, fenced = [], [], 0, False

    def flush():
        if cur:
            out.append((start, " ".join(cur)))
            cur.clear()

    for n, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if s.startswith("```"):
            flush()
            fenced = not fenced
            continue
        if fenced or not s or s.startswith("|") or s.startswith("#"):
            flush()
            continue
        if re.match(r"([-*+]|\d+\.) ", s):
            flush()
        if not cur:
            start = n
        cur.append(s)
    flush()
    return out


def words(paragraph):
    return len(paragraph.split())


def all_files():
    """Every file under the trees the doc may name, by path from SRC."""
    found = []
    for tree in TREES:
        for dirpath, _, names in os.walk(os.path.join(SRC, tree)):
            for name in names:
                found.append(os.path.relpath(os.path.join(dirpath, name), SRC))
    return found


def identifiers_in_code():
    """Every oa_* and OA_* word in src/ and include/."""
    seen = set()
    for tree in ("src", "include"):
        for dirpath, _, names in os.walk(os.path.join(SRC, tree)):
            for name in names:
                if name.endswith((".c", ".h")):
                    with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                        seen.update(re.findall(IDENT, f.read()))
    return seen


def slug(heading):
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def file_exists(name, files):
    """Whether the name (a path from SRC, or a file's base name; maybe a
    glob) is a file or folder of the tree."""
    name = name.rstrip("/")
    if name in TREES:
        return True
    if "/" in name:  # from SRC, or from a tree's folder (base/platform.c)
        return any(fnmatch.fnmatch(f, pat) or f.startswith(name + "/") or ("/" + name + "/") in f
                   for f in files for pat in (name, "*/" + name))
    return any(fnmatch.fnmatch(os.path.basename(f), name) for f in files)


def main():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    prose = re.sub(r"```.*?```", "", text, flags=re.S)

    for line, p in paragraphs(text):
        if words(p) > MAX_WORDS:
            failures.append(f"docs/architecture.md:{line}: a paragraph of {words(p)} words (at most {MAX_WORDS})")

    known = identifiers_in_code()
    for ident in sorted(set(re.findall(IDENT, prose))):
        name = ident.rstrip("_")
        if ident.endswith("_"):  # a family, e.g. `oa_refcache_*`
            if not any(k.startswith(ident) for k in known):
                failures.append(f"docs/architecture.md names {ident}*, and no identifier in src/ or include/ starts so")
        elif name not in known:
            failures.append(f"docs/architecture.md names {name}, which occurs nowhere in src/ or include/")

    files = all_files()
    quoted = re.findall(r"`([^`\s]+)`", prose) + re.findall(r"\(([\w./-]+\.md)(?:#[\w-]+)?\)", prose)
    for q in sorted(set(quoted)):
        path_like = q.split("/")[0] in TREES
        file_like = re.fullmatch(r"[\w*./-]+\.(c|h|py|md)", q)
        if (path_like or file_like) and not file_exists(q, files):
            failures.append(f"docs/architecture.md names `{q}`, which is not a file or folder of the tree")

    anchors = {slug(m) for m in re.findall(r"^#+ (.*)$", prose, re.M)}
    for path in files + ["README.md"]:
        if not path.endswith((".md", ".1", ".py")) or path.endswith(os.path.basename(__file__)):
            continue
        with open(os.path.join(SRC, path), encoding="utf-8", errors="replace") as f:
            for anchor in re.findall(r"architecture\.md#([\w-]+)", f.read()):
                if anchor not in anchors:
                    failures.append(f"{path} links to architecture.md#{anchor}, a heading it does not have")

    for f in failures:
        print("FAIL:", f)
    longest = max(words(p) for _, p in paragraphs(text))
    print(f"architecture.md: {words(prose)} words of prose, longest paragraph {longest}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
