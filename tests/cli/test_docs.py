#!/usr/bin/env python3
"""The documentation names every finding code and every command the code
has: docs/schema.md's table, the man page's FINDINGS section, and --help.
The codes come from the one list, OA_FINDING_CODES in finding.h; each
code's doc anchor must lead to a section that names it."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
SRC = os.environ.get("OA_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

FINDING_ROW = re.compile(r'X\((\w+), "([a-z-]+)", (\w+), "([^"]*)", \\\s*"((?:[^"\\]|\\.)*)", \\\s*'
                         r'([\w |]+), "((?:[^"\\]|\\.)*)"\)')


def finding_codes():
    """(id, code, severity, anchor, summary, flags, fix) of each code in the one list."""
    header = open(os.path.join(SRC, "include", "ollama_audit", "finding.h")).read()
    start = header.index("#define OA_FINDING_CODES(X)")
    body = header[start:header.index("\n\n", start)]
    return FINDING_ROW.findall(body), body.count("\tX(")


def doc_section(text, heading):
    """The lines under the markdown heading whose GitHub slug is heading."""
    out, level = None, 0
    for line in text.split("\n"):
        m = re.match(r"(#+) (.*)", line)
        if m and out is not None and len(m.group(1)) <= level:
            break
        if m and out is None:
            slug = re.sub(r"[^\w\- ]", "", m.group(2).lower()).replace(" ", "-")
            if slug == heading:
                out, level = [], len(m.group(1))
                continue
        if out is not None:
            out.append(line)
    return None if out is None else "\n".join(out)


def man_findings(man):
    """The codes the man page's FINDINGS section names."""
    sec = man[man.index(".SH FINDINGS"):]
    sec = sec[:sec.index("\n.SH ", 1)]
    return re.findall(r"^\.BR ([a-z-]+) [,.]$", sec.replace("\\-", "-"), re.M)


with t.guard("every finding code is documented"):
    rows, n_rows = finding_codes()
    codes = [r[1] for r in rows]
    t.ok(len(codes) >= 25, "finding.h lists the codes", codes)
    t.eq(len(rows), n_rows, "every X(...) row of OA_FINDING_CODES parses")
    t.eq(len(set(codes)), len(codes), "no code is listed twice")
    t.eq(sorted(r[0] for r in rows), sorted(c.upper().replace("-", "_") for c in codes),
         "each enum name is its code in upper case")
    schema = open(os.path.join(SRC, "docs", "schema.md")).read()
    table = dict(re.findall(r"^\| `([a-z-]+)` \| (error|warning|info) \|",
                            doc_section(schema, "finding-codes") or "", re.M))
    t.eq(sorted(table), sorted(codes), "docs/schema.md's table has exactly the codes of finding.h")
    man = open(os.path.join(SRC, "docs", "ollama-audit.1")).read()
    t.eq(sorted(man_findings(man)), sorted(codes), "the man page's FINDINGS has exactly the codes of finding.h")
    for ident, code, sev, anchor, summary, flags, fix in rows:
        t.eq(table.get(code), sev.lower(), "docs/schema.md gives %s its severity" % code)
        page, _, heading = anchor.partition("#")
        path = os.path.join(SRC, "docs", page)
        text = open(path).read() if os.path.exists(path) else ""
        sec = doc_section(text, heading)
        t.ok(sec is not None, "%s's anchor %s is a heading in docs/" % (code, anchor))
        t.contains(sec or "", "`%s`" % code, "docs/%s describes %s" % (anchor, code))

with t.guard("every command has --help and a man page entry"):
    r = t.run("--help")
    cmds = re.findall(r"^  ([a-z]+) ", r.out, re.M)
    t.ok(len(cmds) >= 10, "--help lists the commands", cmds)
    man = open(os.path.join(SRC, "docs", "ollama-audit.1")).read()
    for c in cmds:
        r = t.run(c, "--help")
        t.exit_code(r, 0, "%s --help" % c)
        t.contains(r.out, "usage: ollama-audit %s" % c, "%s --help shows its usage" % c)
        t.ok(re.search(r"^\.(TP|B|BR|BI)\b.*\b%s\b" % c, man, re.M) is not None, "the man page has %s" % c)

with t.guard("the docs say what runs, cite only what the repository has, and render"):
    man = open(os.path.join(SRC, "docs", "ollama-audit.1")).read()
    t.ok("\\(u2026" not in man, "the man page has no \\(u2026 (troff renders it '(026)'; \\[u2026] is the ellipsis)")
    disk = open(os.path.join(SRC, "docs", "disk-space.md")).read()
    t.ok(re.search(r"Declining\s+exits\s+32", disk) is None, "disk-space.md: declining does not exit 32 (it exits 0)")
    for name in sorted(os.listdir(os.path.join(SRC, "docs"))):
        if name.endswith(".md"):
            text = open(os.path.join(SRC, "docs", name)).read()
            t.ok("/work/" not in text and "anchors-and-user-asks" not in text,
                 "docs/%s cites no file outside the repository" % name)
    multi = open(os.path.join(SRC, "docs", "multi-store.md")).read()
    cron = [ln for ln in multi.splitlines() if re.match(r"^\s+[\d*]+ [\d*]+ .*\broot\b", ln)]
    t.ok(cron, "the cron recipe is there")
    for ln in cron:
        t.ok(re.search(r"\broot\s+/", ln) is not None, "a cron line names the program by its full path: %r" % ln)
    files = {}
    for cmd, prom in re.findall(r"ollama-audit (check|verify|du)\b[^\n]*?(?:\\\n\s+)?[^\n]*?--output (\S+\.prom)",
                                multi):
        files.setdefault(cmd, set()).add(os.path.basename(prom))
    t.ok(files and all(len(v) == 1 for v in files.values()),
         "each job writes one file whichever recipe runs it (no metric family in two files)", files)

with t.guard("the packaged units and the docs write the same metrics files, du's too"):
    multi = open(os.path.join(SRC, "docs", "multi-store.md")).read()
    doc_lines = {ln.strip() for ln in multi.splitlines() if ln.startswith("    ")}
    units = {}
    for name, bindir in (("ollama-audit.service.in", "/usr/bin"), ("ollama-audit-user.service.in", "<prefix>/bin"),
                         ("ollama-audit.timer", None)):
        text = open(os.path.join(SRC, "dist", name)).read().replace("@OA_FULL_BINDIR@", bindir or "")
        body = text[text.index("["):]  # the unit, after its file header comment
        units[name] = body
        lines = [ln for ln in body.splitlines() if ln.strip()]
        if name != "ollama-audit-user.service.in":
            t.eq([ln for ln in lines if ln not in doc_lines], [],
                 "docs/multi-store.md shows dist/%s line for line" % name)
        else:
            execs = [ln for ln in lines if ln.startswith("ExecStart=")]
            t.eq([ln for ln in execs if ln not in doc_lines], [], "docs/multi-store.md shows the user unit's jobs")
    service = units["ollama-audit.service.in"]
    prom = dict(re.findall(r"^ExecStart=\S+ (\w+) .*--output \S*/(ollama-\w+\.prom)$", service, re.M))
    t.eq(prom, {"check": "ollama-check.prom", "du": "ollama-du.prom"},
         "the packaged unit writes check's and du's metrics, one file each", service)
    user = dict(re.findall(r"^ExecStart=\S+ (\w+) .*--output \S*/(ollama-\w+\.prom)$",
                           units["ollama-audit-user.service.in"], re.M))
    t.eq(user, prom, "the user unit writes the same file names")
    cron = dict(re.findall(r"ollama-audit (check|verify|du) --all-users .*--output \S*/(ollama-\w+\.prom)", multi))
    t.eq({k: v for k, v in cron.items() if k in prom}, prom, "the cron recipe writes the same files")
    t.ok(re.search(r"^ReadWritePaths=-/var/lib/prometheus/node-exporter$", service, re.M) is not None,
         "ReadWritePaths= may be missing (-)", service)
    t.ok(re.search(r"^ConditionPathIsDirectory=/var/lib/prometheus/node-exporter$", service, re.M) is not None,
         "the service runs only where node_exporter's textfile directory is", service)
    man = open(os.path.join(SRC, "docs", "ollama-audit.1")).read().replace("\\-", "-").replace("\\:", "")
    readme = open(os.path.join(SRC, "README.md")).read()
    for doc, text in (("the man page", man), ("README.md", readme), ("docs/multi-store.md", multi)):
        t.not_contains(text, "ollama-store.prom", "%s names no other metrics file" % doc)
    for f in ("ollama-check.prom", "ollama-du.prom", "share/systemd/user"):
        t.contains(man, f, "the man page's FILES names %s" % f)

with t.guard("version, -V and --version say the same"):
    outs = [t.run(*a) for a in (["version"], ["-V"], ["--version"])]
    for r in outs:
        t.exit_code(r, 0, "version")
        t.ok(re.match(r"^ollama-audit \d+\.\d+", r.out) is not None, "prints the version", r.out)
    t.eq(len(set(r.out for r in outs)), 1, "one line for all three")

with t.guard("one style of usage hint: the error, then Try '...'"):
    for args in (["list", "--min-age", "1h"], ["check", "--format", "tags"], ["list", "--bogus"]):
        r = t.run(*args)
        t.exit_code(r, 16, " ".join(args))
        t.not_contains(r.err, "; see ollama-audit", "%s: no inline 'see ... --help'" % " ".join(args))
        t.contains(r.err, "Try 'ollama-audit %s --help'." % args[0], "%s: the Try line" % " ".join(args))

t.done()
