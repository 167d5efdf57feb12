#!/usr/bin/env python3
"""One contract for every command and --format (issue 14, items 1 and 2).

Every command x every format x {the demo store, a store that is not there}:
a format the command declares is produced and parses as that format (json:
one document with "status" and "errors"; ndjson: every line a JSON object
with a "type"; csv: a header and rows of as many columns, read by python's
csv module; tags: /api/tags; prometheus: read by python3-prometheus-client),
and any other is refused: exit 16, nothing on stdout, a message naming the
formats it takes. With the missing store the error reaches machine output:
json "status":"error" and an "errors" entry naming the path, an ndjson
{"type":"error"} record, and csv nothing on stdout.

Also: check and verify metrics in one textfile-collector directory do not
define a family twice, and --all-users that finds no store says so (exit 8).
Prints the matrix with counts at the end."""

import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from reportpage import Page  # noqa: E402

t.check_binary()

FORMATS = ("table", "json", "ndjson", "csv", "tags", "prometheus", "html")
DATA = {"table", "json", "ndjson", "csv"}
# The contract: what each command produces (the command table, src/cli/commands.c, says the same).
PRODUCES = {
    "list": DATA | {"tags"},
    "show": DATA,
    "check": DATA | {"prometheus"},
    "verify": DATA | {"prometheus"},
    "du": DATA | {"prometheus"},
    "prune": DATA,
    "rm": DATA,
    "restore": DATA,
    "stores": DATA | {"prometheus"},
    "dedupe": DATA,
    "history": DATA,
    "report": {"html"},
}

SYSPY = "/usr/bin/python3"  # Debian's python, where python3-prometheus-client lives


def prometheus_parser():
    if not os.path.exists(SYSPY):
        return False
    p = subprocess.run([SYSPY, "-c", "import prometheus_client.parser"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return p.returncode == 0


def prom_families(text):
    """The families python3-prometheus-client reads in text: {name: type},
    or raises with its complaint."""
    code = ("import sys, json\n"
            "from prometheus_client.parser import text_string_to_metric_families as parse\n"
            "print(json.dumps({f.name: f.type for f in parse(sys.stdin.read())}))\n")
    p = subprocess.run([SYSPY, "-c", code], input=text.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise ValueError(p.stderr.decode()[-400:])
    return json.loads(p.stdout)


HAVE_PROM = prometheus_parser()
env = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("formats-sysroot")}


# docs/schema.md "Field vocabulary": one name per thing in every document.
OLD_NAMES = {"bytes", "bytes_freed", "bytes_allocated", "bytes_apparent", "bytes_moved", "allocated",
             "freed", "disk_size"}
FREE_FORM = {"by_status", "config_fields", "details", "config", "header"}  # keys are data, or Ollama's


def vocabulary(doc, where, path="$"):
    """Every key snake_case and none of the retired names; `id` is the
    12-hex short ID wherever it is a manifest ID."""
    bad = []

    def walk(o, p):
        if isinstance(o, dict):
            for k, v in o.items():
                if k in OLD_NAMES or "-" in k or k != k.lower():
                    bad.append("%s.%s" % (p, k))
                if k == "id" and isinstance(v, str) and len(v) == 64:
                    bad.append("%s.id is a full digest" % p)
                if k not in FREE_FORM:
                    walk(v, "%s.%s" % (p, k))
        elif isinstance(o, list):
            for i, v in enumerate(o[:50]):
                walk(v, "%s[%d]" % (p, i))
    walk(doc, path)
    t.eq(bad, [], "%s: the field vocabulary (docs/schema.md)" % where)


def parses(fmt, r, missing, where):
    """Assert that r's stdout is a well-formed document of fmt."""
    out = r.out
    if fmt == "html":
        if missing:
            t.eq(out, "", "%s: no page when no store could be read" % where, r.describe())
        else:
            page = Page(out)
            t.eq(page.problems, [], "%s: a well-formed page" % where)
            t.eq(len(page.stores()), 1, "%s: a section for the store" % where)
    elif fmt == "table":
        if not missing:
            t.ok(out.strip() != "", "%s: a table" % where, r.describe())
    elif fmt == "tags" and missing:
        # /api/tags has no place for an error: like csv, nothing at all.
        t.eq(out, "", "%s: nothing on stdout" % where, r.describe())
        t.ok(r.err.strip() != "", "%s: the error on stderr" % where, r.describe())
    elif fmt in ("json", "tags"):
        try:
            doc = json.loads(out)
        except ValueError as e:
            t.fail("%s: not one JSON document: %s" % (where, e), r.describe())
            return
        t.ok(isinstance(doc, dict), "%s: a JSON object" % where, r.describe())
        if fmt == "tags":
            t.ok(isinstance(doc.get("models"), list), "%s: /api/tags has models" % where, r.describe())
            return
        t.ok(isinstance(doc.get("errors"), list), "%s: an errors array" % where, r.describe())
        t.eq(doc.get("status"), "error" if missing else "ok", "%s: status" % where, r.describe())
        if missing:
            errs = doc.get("errors") or []
            t.ok(errs and all({"code", "message", "path"} <= set(e) for e in errs),
                 "%s: the error has code, message and path" % where, r.describe())
            t.ok(any(e.get("path") == missing for e in errs), "%s: the error names %s" % (where, missing),
                 r.describe())
        else:
            t.eq(doc.get("errors"), [], "%s: no errors" % where, r.describe())
            vocabulary(doc, where)
    elif fmt == "ndjson":
        recs = []
        for i, line in enumerate(out.splitlines()):
            try:
                rec = json.loads(line)
            except ValueError as e:
                t.fail("%s: line %d is not JSON: %s" % (where, i + 1, e), r.describe())
                return
            if not t.ok(isinstance(rec, dict) and isinstance(rec.get("type"), str),
                        "%s: line %d is a record with a type" % (where, i + 1), line[:300]):
                return
            t.ok(isinstance(rec.get("host"), str), "%s: line %d carries the host" % (where, i + 1), line[:300])
            recs.append(rec)
        if missing:
            errs = [x for x in recs if x["type"] == "error"]
            t.ok(any(x.get("path") == missing and x.get("code") and x.get("message") for x in errs),
                 "%s: an error record naming %s" % (where, missing), r.describe())
        else:
            t.ok(recs, "%s: records" % where, r.describe())
            t.ok(all(x["type"] != "error" for x in recs), "%s: no error record" % where, r.describe())
            vocabulary(recs, where)
    elif fmt == "csv":
        if missing:
            t.eq(out, "", "%s: nothing on stdout" % where, r.describe())
            t.ok(r.err.strip() != "", "%s: the error on stderr" % where, r.describe())
            return
        rows = list(csv.reader(io.StringIO(out, newline="")))
        if not t.ok(rows and rows[0] and all(c and c == c.strip() for c in rows[0]),
                    "%s: a header" % where, r.describe()):
            return
        t.ok(all(len(row) == len(rows[0]) for row in rows), "%s: every row has %d columns" % (where, len(rows[0])),
             r.describe())
        vocabulary({c: None for c in rows[0]}, where + " (csv header)")
        if not where.startswith(("verify", "history")):  # no findings, no server logs in the demo
            t.ok(len(rows) > 1, "%s: rows" % where, r.describe())
    elif fmt == "prometheus":
        if not HAVE_PROM:
            return
        try:
            fams = prom_families(out)
        except ValueError as e:
            t.fail("%s: python3-prometheus-client rejects it: %s" % (where, e), r.describe())
            return
        t.ok(fams, "%s: metric families" % where, r.describe())


def quarantined(tag):
    """A demo store with demo-llama:1b moved into a quarantine, for restore."""
    s = t.copy_demo_store(tag)
    q = os.path.join(t.tempdir(tag + "-q"), "q")
    r = t.run("--store", s.root, "rm", "demo-llama:1b", "--apply", "--yes", "--quarantine", q, env=env)
    t.exit_code(r, 0, "rm --quarantine for restore")
    return s, q


# test_golden renders every command but report in each of these formats on
# the demo store, byte for byte and under the sanitizers too: in the sanitizer
# tree this matrix leaves those renderings to it and runs the rest (the
# missing store, the refusals, report's page). In build/ it runs whole.
GOLDEN_FORMATS = {"table", "json", "ndjson", "csv", "tags", "prometheus"}


def rendered_by_golden(cmd, fmt, store):
    return t.SANITIZED and store == "good" and cmd != "report" and fmt in GOLDEN_FORMATS


matrix = {}  # (command, format) -> [produced, refused]

with t.guard("every command x every format x {demo store, missing store}"):
    if not HAVE_PROM:
        t.skip("python3-prometheus-client not installed (Debian: python3-prometheus-client): "
               "prometheus text is not parsed")
    good = t.copy_demo_store("formats-good")
    other = t.copy_demo_store("formats-other")
    missing = os.path.join(t.tempdir("formats-missing"), "nope")
    cache = os.path.join(t.tempdir("formats-cache"), "c.json")
    quarantines = {}
    for cmd in PRODUCES:
        for fmt in FORMATS:
            for store in ("good", "missing"):
                root = good.root if store == "good" else missing
                if fmt not in PRODUCES[cmd] and not t.first_under_sanitizer(cmd, store):
                    continue
                if fmt in PRODUCES[cmd] and rendered_by_golden(cmd, fmt, store):
                    matrix.setdefault((cmd, fmt), [0, 0])[0] += 1
                    continue
                if cmd == "restore":
                    # the listing of a quarantine (one for every format: the
                    # listing reads it only), or of one that is missing
                    if "restore" not in quarantines:
                        quarantines["restore"] = quarantined("formats-restore")[1]
                    args = ["restore", quarantines["restore"] if store == "good" else missing]
                elif cmd == "dedupe":
                    args = ["--store", root, "--store", other.root if store == "good" else missing + "2", "dedupe"]
                else:
                    args = {"show": ["show", "demo-llama:1b"], "rm": ["rm", "demo-llama:1b"],
                            "verify": ["verify", "--cache", cache]}.get(cmd, [cmd])
                    args = ["--store", root] + args
                r = t.run(*(args + ["--format", fmt]), env=env)
                where = "%s --format %s, %s store" % (cmd, fmt, store)
                cell = matrix.setdefault((cmd, fmt), [0, 0])
                if fmt not in PRODUCES[cmd]:
                    cell[1] += 1
                    t.exit_code(r, 16, where)
                    t.eq(r.out, "", "%s: nothing on stdout" % where)
                    t.contains(r.err, "ollama-audit: %s: --format %s is not a format of %s (it takes: %s)"
                               % (cmd, fmt, cmd, ", ".join(f for f in FORMATS if f in PRODUCES[cmd])),
                               "%s: says which formats it takes" % where)
                    continue
                cell[0] += 1
                t.ne(r.code, 16, "%s: not a usage error" % where, r.describe())
                if store == "missing":
                    t.ok(r.code & 8, "%s: exit bit 8" % where, r.describe())
                parses(fmt, r, missing if store == "missing" else None, where)

with t.guard("check and verify metrics in one textfile-collector directory"):
    s = t.copy_demo_store("formats-prom")
    texts = {}
    for cmd in ("check", "verify", "du", "stores"):
        extra = ["--cache", os.path.join(t.tempdir("formats-prom-cache"), "c.json")] if cmd == "verify" else []
        r = t.run("--store", s.root, cmd, "--format", "prometheus", *extra, env=env)
        t.exit_code(r, 0, "%s --format prometheus" % cmd)
        texts[cmd] = r.out
    names = {}
    for cmd, text in texts.items():
        names[cmd] = {l.split()[2] for l in text.splitlines() if l.startswith("# TYPE ")}
    cmds = list(names)
    for i, a in enumerate(cmds):
        for b in cmds[i + 1:]:
            t.eq(sorted(names[a] & names[b]), [], "%s and %s define no family in common" % (a, b))
    for cmd in ("check", "verify"):
        fam = "ollama_%s_findings_by_severity" % cmd
        for sev in ("error", "warning", "info"):
            t.ok('%s{store="%s",user=' % (fam, os.path.realpath(s.root)) in texts[cmd] or
                 '%s{store="%s",user=' % (fam, s.root) in texts[cmd],
                 "%s: %s present for severity %s" % (cmd, fam, sev))
    zero = [l for l in texts["verify"].splitlines() if l.startswith("ollama_verify_findings_by_severity{") and
            'severity="error"' in l]
    t.ok(zero and zero[0].endswith(" 0"), "verify: no errors is a sample at 0", zero)

    def model_labels(text, prefix):
        out = set()
        for l in text.splitlines():
            if l.startswith(prefix + "model_info{"):
                labels = l[l.index("{") + 1:l.rindex("}")]
                out.add(tuple(sorted(x.split("=", 1)[0] + "=" + x.split("=", 1)[1]
                                     for x in labels.split('",') if x.split("=", 1)[0] in ("store", "user", "model"))))
        return out
    t.ok(model_labels(texts["check"], "ollama_check_") and
         model_labels(texts["check"], "ollama_check_") == model_labels(texts["du"], "ollama_du_") ==
         model_labels(texts["stores"], "ollama_store_"),
         "the same store, user and model labels for each model in check, du and stores")
    if HAVE_PROM:
        both = texts["check"] + texts["verify"]
        try:
            fams = prom_families(both)
            t.ok(any(n.startswith("ollama_check_") for n in fams) and
                 any(n.startswith("ollama_verify_") for n in fams),
                 "check + verify concatenated parse as one file")
        except ValueError as e:
            t.fail("check + verify concatenated do not parse: %s" % e)

with t.guard("a run that fails says so in machine output, whatever failed"):
    good = t.copy_demo_store("formats-fail")
    cases = [["show"], ["show", "a", "b"], ["list", "a", "b"], ["du", "extra"], ["rm", "nosuchmodel"],
             ["history", "--since", "garbage"], ["list", "--unused-for", "90d"]]
    for args in cases:
        for fmt in ("json", "ndjson"):
            r = t.run("--store", good.root, *(args + ["--format", fmt]), env=env)
            where = "%s --format %s" % (" ".join(args), fmt)
            t.ok(r.code & (8 | 16), "%s: fails" % where, r.describe())
            if fmt == "json":
                doc = json.loads(r.out) if r.out.strip() else {}
                t.eq(doc.get("status"), "error", "%s: status error" % where, r.out[:300])
                t.ok(doc.get("errors"), "%s: the error is in errors" % where, r.out[:300])
            else:
                recs = [json.loads(l) for l in r.out.splitlines() if l.strip()]
                t.ok(any(x.get("type") == "error" and x.get("message") for x in recs),
                     "%s: an error record" % where, r.out[:300])


with t.guard("--all-users that finds no store says so: exit 8"):
    for cmd in ("list", "check", "du", "verify", "dedupe", "history"):
        r = t.run("--all-users", cmd, env=env)
        t.exit_code(r, 8, "--all-users %s on a machine without a store" % cmd)
        t.contains(r.err, "no Ollama store found", "--all-users %s says why" % cmd)
        r = t.run("--all-users", cmd, "--format", "json", env=env)
        t.exit_code(r, 8, "--all-users %s --format json" % cmd)
        doc = json.loads(r.out)
        t.eq(doc.get("status"), "error", "--all-users %s: status" % cmd)
        t.eq([e.get("code") for e in doc.get("errors", [])], ["no-store"], "--all-users %s: the error" % cmd)

with t.guard("each command's --help names the formats it produces"):
    for cmd, fmts in PRODUCES.items():
        h = t.run(cmd, "--help").out
        if fmts == {"table"}:
            t.contains(h, "a table only", "%s --help" % cmd)
        else:
            t.contains(h, "--format " + "|".join(f for f in FORMATS if f in fmts), "%s --help" % cmd)

with t.guard("the matrix"):
    produced = sum(c[0] for c in matrix.values())
    refused = sum(c[1] for c in matrix.values())
    print("%-8s %s" % ("", " ".join("%-10s" % f for f in FORMATS)))
    for cmd in PRODUCES:
        print("%-8s %s" % (cmd, " ".join("%-10s" % ("produced" if matrix.get((cmd, f), [0])[0] else "refused")
                                        for f in FORMATS)))
    print("%d cases: %d produced, %d refused (each on the demo store and a missing store)"
          % (produced + refused, produced, refused))

t.done()
