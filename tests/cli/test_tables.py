#!/usr/bin/env python3
"""Tables that fit: columns padded by display width (a CJK character takes
two columns), the stores table's `total` row in its column, the NAME column
of list and du cut with an ellipsis on a terminal narrower than the table
(never wrapped; full names when piped, whatever COLUMNS says), and
--sort / --no-header on list and du."""

import os
import re
import sys
import time
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
ELLIPSIS = "\u2026"


def dwidth(s):
    w = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def col_of(line, text):
    """The display column where text starts in line."""
    return dwidth(line[:line.index(text)])


def end_col(line, text, start=0):
    return dwidth(line[:line.index(text, start) + len(text)])


with t.guard("stores: columns by display width, the total row in its column"):
    base = t.tempdir("cjk")
    wide_dir = os.path.join(base, "模型库")
    os.makedirs(wide_dir)
    s1, _ = t.clean_store("narrow")
    s2 = t.oa.Store(os.path.join(wide_dir, "models"))
    t.add_gguf_model(s2, "tiny:latest", seed="w")
    for user in ("山田太郎", "bob", "q"):
        env = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("sysroot"), "OLLAMA_AUDIT_PASSWD": t.passwd_with(user)}
        for lc in ("C", "C.UTF-8"):
            env["LC_ALL"] = lc
            r = t.run("--store", s1.root, "--store", s2.root, "stores", env=env)
            t.exit_code(r, 0, "stores (%s, LC_ALL=%s)" % (user, lc))
            lines = r.out.splitlines()
            head = lines[0]
            rows = [ln for ln in lines[1:3]]
            for ln in rows:
                t.eq(col_of(ln, "   %s " % user) + 3, col_of(head, "USER"), "%s, %s: USER column starts where its heading does"
                     % (user, lc), r.out)
                t.eq(end_col(ln, " 1 ") - 1, end_col(head, "MODELS"), "%s, %s: MODELS column aligned" % (user, lc),
                     r.out)
            uh = lines.index(next(ln for ln in lines if ln.startswith("USER ") and "STORES" in ln))
            per_user = lines[uh + 1:uh + 3]
            for ln in per_user:
                t.eq(end_col(ln, " 2 ") - 1, end_col(lines[uh], "STORES"),
                     "%s, %s: STORES figure under its heading in %r" % (user, lc, ln), r.out)
            t.ok(per_user[-1].startswith("total "), "the total row is there", r.out)


def long_store():
    s = t.new_store("long")
    names = ["a-model-with-a-really-long-name-for-the-table-to-cut:latest",
             "short:1b", "another/very-long-namespace-model-name-indeed:q4_K_M"]
    for i, n in enumerate(names):
        t.add_gguf_model(s, n, seed=str(i), mtime=1700000000 + 1000 * i)
    return s, names


with t.guard("a terminal narrower than the table: NAME cut with an ellipsis, never wrapped"):
    s, names = long_store()
    full = t.audit(s.root, "list")
    widest = max(dwidth(ln) for ln in full.out.splitlines())
    # list's other columns take ~90 columns, du's ~40; the footers of du are
    # sentences, not table rows
    # list at 110 and 100: hiding the columns `ollama list` does not show
    # keeps every name whole, so those go first
    for cols in (110, 100):
        r = t.run_tty(("--store", s.root, "list"), None, stdout_tty=True, cols=cols)
        t.ok(all(n in r.out for n in names) and ELLIPSIS not in r.out,
             "list, %d columns: every long name whole" % cols, r.out)
        t.contains(r.err, "hidden to fit", "list, %d columns: says which columns it hid" % cols)
        t.ok(all(dwidth(ln) <= cols for ln in r.out.splitlines()), "list, %d columns: every line fits" % cols,
             r.out)
    for cmd, sizes in ((["list"], (80, 70)), (["du"], (70, 60))):
        for cols in sizes:
            r = t.run_tty(("--store", s.root) + tuple(cmd), None, stdout_tty=True, cols=cols)
            t.exit_code(r, 0, "%s on a %d-column terminal" % (cmd[0], cols))
            lines = [ln for ln in r.out.splitlines() if ln.startswith(("NAME", "a-", "short", "another"))]
            t.eq(len(lines), 4, "%s, %d columns: a heading and 3 rows, none wrapped" % (cmd[0], cols), r.out)
            for ln in lines:
                t.ok(dwidth(ln) <= cols, "%s, %d columns: %r fits" % (cmd[0], cols, ln), r.out)
            rows = [ln for ln in lines if "KB" in ln or "B " in ln]
            t.ok(any(ELLIPSIS in ln for ln in rows), "%s, %d columns: a long name is cut with an ellipsis"
                 % (cmd[0], cols), r.out)
            t.ok(any(ln.startswith("short:1b ") for ln in lines), "%s: a short name stays whole" % cmd[0], r.out)
        # COLUMNS wins over the terminal's own size, on a terminal only
        r = t.run_tty(("--store", s.root) + tuple(cmd), None, stdout_tty=True, cols=300,
                      env={"COLUMNS": str(sizes[1])})
        t.ok(all(dwidth(ln) <= sizes[1] for ln in r.out.splitlines() if ln.startswith(("NAME", "a-", "another"))),
             "%s: COLUMNS=%d on a terminal" % (cmd[0], sizes[1]), r.out)
        t.ok(ELLIPSIS in r.out, "%s: COLUMNS=%d cuts" % (cmd[0], sizes[1]), r.out)
        r = t.audit(s.root, *cmd, env={"COLUMNS": "40"})
        for n in names:
            t.contains(r.out, n, "%s piped: the full name %s, whatever COLUMNS says" % (cmd[0], n))
        t.ok(ELLIPSIS not in r.out, "%s piped: nothing cut" % cmd[0])
    t.ok(widest > 110, "the table is wider than the terminals tried", widest)


def table_lines(out, starts):
    return [ln for ln in out.splitlines() if ln.startswith(starts)]


with t.guard("tables that fit 60, 80, 100 and 140 columns: columns hidden by priority before NAME is cut"):
    demo = t.copy_demo_store("fit")
    demo_names = t.audit(demo.root, "list", "-q").out.split()
    long_s, long_names = long_store()
    for store, names in ((demo, demo_names), (long_s, long_names)):
        starts = tuple(["NAME"] + [n[:6] for n in names])
        for cmd in ("list", "du"):
            full = t.audit(store.root, cmd).out  # piped: every column
            all_heads = table_lines(full, ("NAME",))[0]
            for cols in (60, 80, 100, 140):
                r = t.run_tty(("--store", store.root, cmd), None, stdout_tty=True, cols=cols)
                t.exit_code(r, 0, "%s on a %d-column terminal" % (cmd, cols))
                lines = table_lines(r.out, starts)
                t.eq(len(lines), len(names) + 1, "%s, %d columns: a heading and a row per model" % (cmd, cols),
                     r.out)
                t.ok(all(dwidth(ln) <= cols for ln in lines), "%s, %d columns: no line wider than the terminal"
                     % (cmd, cols), r.out)
                for n in names:
                    row = next((ln for ln in lines if ln.startswith(n[:6])), "")
                    shown = row.split("   ")[0].strip()
                    t.ok(shown == n or (len(shown) >= 24 and ELLIPSIS in shown and shown.endswith(n[n.rindex(":"):])),
                         "%s, %d columns: %s shows at least 24 characters of its name, its :TAG whole (%r)"
                         % (cmd, cols, n, shown), r.out)
                heads = lines[0].split()
                if r.err.count("hidden to fit"):
                    t.eq(r.err.count("hidden to fit"), 1, "%s, %d columns: said once" % (cmd, cols), r.err)
                    t.contains(r.err, "--wide", "the note names --wide")
                if len(heads) < len(all_heads.split()):
                    t.contains(r.err, "hidden to fit %d columns" % cols, "%s, %d columns: stderr says which columns "
                               "were hidden" % (cmd, cols), r.err)
                w = t.run_tty(("--store", store.root, cmd, "--wide"), None, stdout_tty=True, cols=cols)
                t.eq(table_lines(w.out, ("NAME",))[0].split(), all_heads.split(),
                     "%s --wide, %d columns: every column" % (cmd, cols), w.out)
                t.not_contains(w.err, "hidden", "%s --wide: nothing hidden" % cmd)
    r = t.run_tty(("--store", demo.root, "list"), None, stdout_tty=True, cols=80)
    t.ok(all(n in r.out for n in demo_names), "list, 80 columns: every demo name whole", r.out)
    # Whatever the fixture's age makes MODIFIED ("About an hour ago" is wider
    # than "2 hours ago"): a store pulled long ago and one pulled now.
    for when, age in (("old", 400 * 86400), ("new", 3600)):
        aged = t.copy_demo_store("aged-" + when)
        for dirpath, _dirs, files in os.walk(os.path.join(aged.root, "manifests")):
            for f in files:
                os.utime(os.path.join(dirpath, f), (time.time() - age, time.time() - age))
        r = t.run_tty(("--store", aged.root, "list"), None, stdout_tty=True, cols=80)
        t.ok(all(n in r.out for n in demo_names), "list, 80 columns, %s pulls: every demo name whole" % when,
             r.out)

HF_NAMES = ["hf.co/bartowski/Qwen2.5-Coder-32B-Instruct-GGUF:Q4_K_M",
            "hf.co/bartowski/Qwen2.5-Coder-32B-Instruct-GGUF:Q8_0",
            "hf.co/lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF:Q8_0"]
SHORT_AGE = re.compile(r"^(now|\d+(s|m|h|d|w|mo|y) ago)$")


def hf_store():
    """Long hf.co names, two quants of one repository, pulled an hour to
    three months ago (long MODIFIED texts: "About an hour ago")."""
    s = t.new_store("hf")
    now = time.time()
    for i, (n, age) in enumerate(zip(HF_NAMES + ["llama3.2:1b", "qwen2.5-coder:1.5b"],
                                     (3600, 3 * 86400, 20 * 86400, 100 * 86400, 90))):
        t.add_gguf_model(s, n, seed="hf%d" % i, mtime=now - age)
    return s


def name_cells(out, names):
    """Each name's NAME cell, found by its first 6 characters."""
    got = {}
    for n in names:
        row = next((ln for ln in out.splitlines() if ln.startswith(n[:6]) and ln.split("   ")[0].strip()
                    not in got.values()), "")
        got[n] = row.split("   ")[0].strip()
    return got


with t.guard("narrow tables: a long hf.co name cut in its repository keeps its :TAG; MODIFIED shortens before ID goes"):
    s = hf_store()
    for cmd in ("list", "du"):
        for cols in (60, 80, 100):
            r = t.run_tty(("--store", s.root, cmd), None, stdout_tty=True, cols=cols)
            t.exit_code(r, 0, "%s at %d columns" % (cmd, cols))
            lines = r.out.splitlines()
            table = [ln for ln in lines if ln.startswith(("NAME", "hf.co/", "llama3.2", "qwen2.5"))]
            t.ok(all(dwidth(ln) <= cols for ln in table), "%s, %d columns: every row fits" % (cmd, cols), r.out)
            t.ok(all(dwidth(ln) <= cols for ln in r.err.splitlines()),
                 "%s, %d columns: the note on stderr fits the width it names too" % (cmd, cols), r.err)
            rows = [ln for ln in lines if ln.startswith("hf.co/")]
            t.eq(len(rows), 3, "%s, %d columns: a row per hf.co model" % (cmd, cols), r.out)
            shown = [ln.split("   ")[0].strip() for ln in rows]
            for n in HF_NAMES:
                tag = n[n.rindex(":"):]
                t.ok(n in shown or any(x.startswith("hf.co/") and ELLIPSIS in x and x.endswith(tag) for x in shown),
                     "%s, %d columns: %s whole, or cut before its %s" % (cmd, cols, n, tag), shown)
            t.eq(len(set(shown)), 3, "%s, %d columns: the two quants of one repository still differ" % (cmd, cols),
                 shown)
    # list at 80: ollama list's four columns all there, MODIFIED short
    r = t.run_tty(("--store", s.root, "list"), None, stdout_tty=True, cols=80)
    head = r.out.splitlines()[0].split()
    t.eq(head, ["NAME", "ID", "SIZE", "MODIFIED"], "list, 80 columns: NAME, ID, SIZE, MODIFIED, as ollama list", r.out)
    ages = [re.split(r"\s{3,}", ln)[-1] for ln in r.out.splitlines()[1:]]
    t.ok(ages and all(SHORT_AGE.match(a) for a in ages), "list, 80 columns: MODIFIED in its short form (2w ago)",
         ages)
    t.ok("2w ago" in ages and "1h ago" in ages and "3mo ago" in ages, "short ages read as ollama's: 2w, 1h, 3mo",
         ages)
    cut = name_cells(r.out, HF_NAMES)
    t.eq(cut["hf.co/bartowski/Qwen2.5-Coder-32B-Instruct-GGUF:Q4_K_M"][:16], "hf.co/bartowski/",
         "the host and namespace stay whole while the repository has room", cut)
    # wide enough for every name whole with short ages: nothing is cut
    r = t.run_tty(("--store", s.root, "list"), None, stdout_tty=True, cols=100)
    t.ok(all(n in r.out for n in HF_NAMES) and ELLIPSIS not in r.out, "list, 100 columns: names whole", r.out)
    t.ok("ID" in r.out.splitlines()[0].split(), "list, 100 columns: ID shown", r.out)
    # piped: every column, ages as ollama list prints them
    r = t.audit(s.root, "list")
    t.contains(r.out, "About an hour ago", "piped: MODIFIED as ollama list prints it")


with t.guard("show: the paragraphs wrap at the width"):
    demo = t.copy_demo_store("wrap")
    for cols in (None, 60, 100):
        r = (t.audit(demo.root, "show", "demo-llama:1b") if cols is None else
             t.run_tty(("--store", demo.root, "show", "demo-llama:1b"), None, stdout_tty=True, cols=cols))
        t.exit_code(r, 0, "show")
        lines = r.out.splitlines()
        i = lines.index("what can run here")
        para = []
        for ln in lines[i + 1:]:
            if not ln.startswith("  "):
                break
            para.append(ln)
        t.ok(len(para) >= 1 and all(dwidth(ln) <= (cols or 80) for ln in para),
             "what can run here wraps at %s columns" % (cols or "80 (piped)"), para)
        t.contains(" ".join(x.strip() for x in para), "weights 39 KB", "the words survive the wrap", para)


def write_log(s, loads):
    """A server.log beside the store: one 2025-style load per (time, blob hex)."""
    logs = os.path.join(os.path.dirname(s.root), "logs")
    os.makedirs(logs, exist_ok=True)
    with open(os.path.join(logs, "server.log"), "w") as f:
        for when, hexd in loads:
            f.write('time=%s level=INFO source=server.go:380 msg="starting llama server" '
                    'cmd="/usr/bin/ollama runner --model /root/.ollama/models/blobs/sha256-%s --port 1"\n'
                    % (when, hexd))


with t.guard("--sort and --no-header on list and du"):
    s = t.new_store("sort")
    info = {}
    # name, mtime, gguf size knob (layers): b is biggest, c newest
    for name, mtime, layers in (("bravo:1", 1700000000, 8), ("alpha:1", 1700001000, 2),
                                ("charlie:1", 1700002000, 4), ("delta:1", 1699990000, 1)):
        info[name] = t.add_gguf_model(s, name, seed=name, mtime=mtime, n_layers=layers)
    hexof = {n: i["layers"][0]["digest"].split(":", 1)[1] for n, i in info.items()}
    write_log(s, [("2025-01-01T00:00:00Z", hexof["charlie:1"]), ("2025-06-01T00:00:00Z", hexof["alpha:1"]),
                  ("2025-03-01T00:00:00Z", hexof["bravo:1"])])
    size = {n: len(i["gguf"]) for n, i in info.items()}
    by_size = sorted(size, key=lambda n: -size[n])
    want = {"name": ["alpha:1", "bravo:1", "charlie:1", "delta:1"],
            "modified": ["charlie:1", "alpha:1", "bravo:1", "delta:1"],
            "last-used": ["alpha:1", "bravo:1", "charlie:1", "delta:1"],
            "size": by_size, "unique": by_size}
    for cmd in ("list", "du"):
        for key, order in want.items():
            r = t.audit(s.root, cmd, "--sort", key, "-q")
            t.exit_code(r, 0, "%s --sort %s" % (cmd, key))
            t.eq(r.out.splitlines(), order, "%s --sort %s" % (cmd, key))
            j = t.audit(s.root, cmd, "--sort", key, "--format", "json").json()
            got = [m.get("name") or m.get("names", [None])[0] for m in j["stores"][0]["models"]]
            t.eq(got, order, "%s --sort %s --format json: same order" % (cmd, key))
        r = t.audit(s.root, cmd, "--sort", "biggest")
        t.exit_code(r, 16, "%s --sort biggest is refused" % cmd)
        t.contains(r.err, "name, size, unique, modified, last-used", "the keys are named")
        r = t.audit(s.root, cmd, "--sort", "name", "--no-header")
        t.exit_code(r, 0, "%s --no-header" % cmd)
        lines = r.out.splitlines()
        t.ok(lines and lines[0].startswith("alpha:1 "), "%s --no-header: the first line is a row" % cmd, r.out)
        t.ok("NAME" not in r.out, "%s --no-header: no heading" % cmd, r.out)
    r = t.audit(s.root, "list")
    t.eq([ln.split()[0] for ln in r.out.splitlines()[1:]], want["modified"], "list: newest first by default")

with t.guard("list --format csv: a last_used column when the store has logs"):
    import csv
    import io
    r = t.audit(s.root, "list", "--format", "csv", "--sort", "name")
    t.exit_code(r, 0, "list csv")
    rows = list(csv.reader(io.StringIO(r.out)))
    t.eq(rows[0][-1], "last_used", "the last column is last_used, named as in the JSON")
    t.ok(all(len(x) == len(rows[0]) for x in rows), "every row has every column")
    t.eq([(x[1], x[-1]) for x in rows[1:]],
         [("alpha:1", "2025-06-01T00:00:00Z"), ("bravo:1", "2025-03-01T00:00:00Z"),
          ("charlie:1", "2025-01-01T00:00:00Z"), ("delta:1", "")], "the newest load, empty when never")
    j = t.audit(s.root, "list", "--format", "json", "--sort", "name").json()
    t.eq([m["last_used"] for m in j["stores"][0]["models"]], [x[-1] or None for x in rows[1:]],
         "the same times as list --format json")
    plain, _ = t.clean_store("nologs")
    r = t.audit(plain.root, "list", "--format", "csv")
    t.ok("last_used" not in r.out.splitlines()[0], "no logs: no last_used column", r.out)
    for cmd in ("check", "show", "stores"):
        args = [cmd, "demo"] if cmd == "show" else [cmd]
        r = t.audit(s.root, *args, "--sort", "name")
        t.exit_code(r, 16, "%s refuses --sort" % cmd)


def fix_below(lines, code):
    """The fix under the answer's error row of code (the model's name may be
    cut to the width): its lines, the ' \\' continuations joined as a shell
    joins them."""
    at = next((k for k, ln in enumerate(lines) if ln.startswith("error") and code in ln), None)
    if at is None:
        return None
    part = []
    for ln in lines[at + 1:]:
        part.append(ln.strip())
        if not ln.endswith(" \\"):
            break
    return " ".join(p[:-2] if p.endswith(" \\") else p for p in part)


with t.guard("check's answer at 80 columns: every fix command whole, on lines of its own"):
    s = t.copy_demo_store("tables-fix")
    info = t.add_gguf_model(s, "hf.co/someone/a-rather-long-model-name-GGUF:Q4_K_M", seed="fix80", style="registry")
    os.unlink(s.blob_path(info["layers"][0]["digest"]))
    want = "ollama-audit repair hf.co/someone/a-rather-long-model-name-GGUF:Q4_K_M --apply --store %s" % s.root
    for cols in (80, 100):
        r = t.run_tty(("--store", s.root, "check"), None, stdout_tty=True, cols=cols)
        lines = r.out.replace("\r\n", "\n").splitlines()
        head = next((k for k, ln in enumerate(lines) if " models broken" in ln), len(lines))
        lines = lines[head:]  # the answer; the findings above are messages, not a table
        t.ok(len(lines) > 3 and all(len(ln) <= cols for ln in lines), "%d columns: no line wider" % cols,
             [ln for ln in lines if len(ln) > cols] or r.out)
        t.eq(fix_below(lines, "missing-blob"), want,
             "%d columns: the fix command whole, on lines of its own" % cols)
    r = t.audit(s.root, "check")
    t.ok(any(ln.startswith("error") and ln.rstrip().endswith(want) for ln in r.out.splitlines()),
         "piped: one row per model, FIX last", r.out)


with t.guard("check's answer at 80 columns: a fix longer than a line pastes as one command"):
    s = t.copy_demo_store("tables-long-fix")
    name = "notes-" + "n" * 70 + ".txt"  # a file Ollama did not write: its fix moves it aside, by two long paths
    with open(os.path.join(s.root, "blobs", name), "w") as f:
        f.write("mine")
    fixes = {f["path"]: f["fix"] for f in t.findings_of(t.audit(s.root, "check", "--format", "json").json())
             if f["code"] == "foreign-file"}
    want = fixes.get("blobs/" + name, "")
    t.ok(want.startswith("mv -- ") and len(want) > 160, "the foreign file's fix is a long command", want)
    r = t.run_tty(("--store", s.root, "check"), None, stdout_tty=True, cols=80)
    lines = r.out.replace("\r\n", "\n").splitlines()
    part = None
    for k, ln in enumerate(lines):
        if not (ln.startswith("warning") and "(store)" in ln and "foreign-file" in ln):
            continue
        got = []
        for below in lines[k + 1:]:
            got.append(below.strip())
            if not below.endswith(" \\"):
                break
        if " ".join(p[:-2] if p.endswith(" \\") else p for p in got) == want:
            part = got
    t.ok(part is not None, "a (store) row for the foreign file, its fix below it: the lines, their ' \\' "
         "continuations joined as a shell does, are the command", r.out)
    if part is not None:
        t.ok(len(part) > 2, "on several lines", part)
        for ln in part:
            t.ok(len(ln) <= 80 - 12 or " " not in ln.rstrip(" \\"), "a line is longer only for one word", ln)

t.done()
