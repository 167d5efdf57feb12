#!/usr/bin/env python3
"""`report`: one self-contained HTML page. Read offline with Python's
html.parser: well-formed nesting, no external address and no script, every
model of the demo store named, the totals du prints, hostile names escaped,
a section per store with the fleet's sum, and a 500-model store's page
under 1 MB. (tests/cli/test_report_browser.py renders it in Chromium.)"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402
import multistore as ms  # noqa: E402
from reportpage import Page, du_numbers  # noqa: E402

t.check_binary()

# The owner's name comes from a passwd file of our own, and the logs from
# an empty fake machine (no journal): never this machine's.
PASSWD = os.path.join(t.tempdir("passwd"), "passwd")
with open(PASSWD, "w") as f:
    f.write("reporter:x:%d:%d::/nonexistent:/bin/sh\n" % (os.getuid(), os.getgid()))
ENV = {"OLLAMA_AUDIT_PASSWD": PASSWD, "OLLAMA_AUDIT_SYSROOT": t.tempdir("report-sysroot")}


def run(*args, **kw):
    return t.run(*args, env=ENV, **kw)


def report(root, *args, **kw):
    return run("--store", root, "report", *args, **kw)


with t.guard("the demo store's page"):
    s = t.copy_demo_store("report-demo")
    r = report(s.root)
    t.exit_code(r, 0, "report of the demo store")
    t.ok(r.out.startswith("<!DOCTYPE html>"), "an HTML5 document", r.out[:200])
    for word in ("http:", "https:", "<script", "src=", "url("):
        t.not_contains(r.out, word, "nothing fetched, nothing run (%s)" % word)
    page = Page(r.out)
    t.eq(page.problems, [], "well-formed nesting, nothing external or active")
    t.eq(page.tags.get("svg"), 1, "one treemap, drawn as inline SVG")
    t.ok(page.tags.get("rect", 0) >= 7, "a tile per model with unique bytes", page.tags)
    t.ok(page.tags.get("title", 0) >= 8, "tiles carry <title> tooltips", page.tags)
    names = [m["name"] for m in run("--store", s.root, "list", "--format", "json").json()["stores"][0]["models"]]
    t.ok(len(names) >= 5, "the demo store has models", names)
    stores = page.stores()
    t.eq(len(stores), 1, "one store section")
    t.eq(sorted(page.model_cells["store-1"]), sorted(names), "the models table lists every model once")
    text = page.visible()
    for n in names:
        t.contains(text, n, "the model is named")
    du = run("--store", s.root, "du", "--format", "json").json()
    want = du_numbers(du)
    got = stores[0]
    for k, v in want.items():
        t.eq(got.get(k), v, "%s as du --format json counts it" % k)
    t.eq(got.get("shared"), want["referenced"] - want["unique"],
         "shared: referenced bytes that are nobody's alone (every manifest parses)")
    t.eq(got.get("models"), len(names), "models: as list shows them")
    t.contains(text, "owner reporter", "the store's owner is named")
    for code in ("partial-download", "temp-file", "orphan-blob"):
        t.contains(text, code, "the findings of check are there")
    t.contains(text, "prune --apply", "each finding says what to do")
    # the exit status is check's, --fail-on included
    for extra in ([], ["--fail-on", "warning"]):
        t.eq(report(s.root, *extra).code, run("--store", s.root, "check", *extra).code,
             "report exits as check does %s" % extra)
    # --units changes the shown sizes; the exact bytes stay
    r2 = report(s.root, "--units", "iec")
    t.contains(r2.out, "KiB", "--units iec")
    t.eq(Page(r2.out).stores()[0], got, "the exact bytes do not depend on --units")

with t.guard("--output, --format and arguments"):
    s = t.copy_demo_store("report-out")
    out = os.path.join(t.tempdir("report-out"), "page.html")
    r = report(s.root, "--output", out)
    t.exit_code(r, 0, "report --output FILE")
    t.eq(r.out, "", "nothing on stdout with --output")
    t.ok(os.path.exists(out) and open(out).read().startswith("<!DOCTYPE html>"), "the page is in FILE")
    inside = os.path.join(s.root, "blobs", "page.html")
    r = report(s.root, "--output", inside)
    t.exit_code(r, 16, "--output inside the store is refused")
    t.ok(not os.path.exists(inside), "nothing written inside the store")
    for fmt in ("json", "table", "csv"):
        r = report(s.root, "--format", fmt)
        t.exit_code(r, 16, "--format %s is a usage error" % fmt)
    r = report(s.root, "--format", "html")
    t.exit_code(r, 0, "--format html is the default, and accepted")
    r = report(s.root, "extra")
    t.exit_code(r, 16, "report takes no arguments")
    r = run("report", "--help")
    t.exit_code(r, 0, "report --help")
    t.contains(r.out, "HTML", "the help says what it writes")
    t.contains(run("--help").out, "report", "the command list names report")

with t.guard("hostile names are escaped"):
    base = t.tempdir("report-hostile")
    evil_dir = os.path.join(base, "st<b>ore&\"'\x1b[31m\u202e")
    s = oa.Store(os.path.join(evil_dir, "models"))
    t.add_gguf_model(s, "tiny:latest")
    # an invalid model name and foreign files carry the raw bytes into findings
    s.write_raw("manifests/registry.ollama.ai/library/<script>alert(1)<\\script>/x\x07y", b"{}")
    s.write_raw("blobs/<img src=x onerror=alert(1)>", b"foreign")
    s.write_raw("blobs/\u202egnp.exe\x1b]0;t\x07", b"foreign")
    r = report(s.root)
    t.ok(r.code in (0, 4), "report of a hostile store runs (exit %s)" % r.code, r.describe())
    page = Page(r.out)
    t.eq(page.problems, [], "the names did not become markup")
    t.eq(page.tags.get("script"), None, "no <script> from a name")
    t.eq(page.tags.get("img"), None, "no <img> from a name")
    t.eq(page.tags.get("b"), None, "no <b> from the store's path")
    for raw in ("\x1b", "\x07", "\u202e"):
        t.not_contains(r.out, raw, "control and bidi characters are not written raw (%r)" % raw)
    text = page.visible()
    t.contains(text, "<img src=x onerror=alert(1)>", "a foreign file is named, as text")
    t.contains(text, "<script>alert(1)", "an invalid name is shown, as text")
    t.contains(text, "\\x1b", "an escape byte is shown as \\x1b")
    t.contains(text, "\\u202e", "a right-to-left override is shown as \\u202e")
    t.contains(r.out, "&lt;img src=x", "written as entities")

with t.guard("several stores: a section each and the fleet's sum"):
    a, _ = t.clean_store("report-a", name="alpha:latest")
    b = t.copy_demo_store("report-b")
    r = run("--store", a.root, "--store", b.root, "report")
    t.exit_code(r, 0, "report of two stores")
    page = Page(r.out)
    t.eq(page.problems, [], "well-formed")
    stores = page.stores()
    t.eq(len(stores), 2, "a section per store")
    fleet = page.sections.get("fleet")
    t.ok(fleet is not None, "a fleet summary", list(page.sections))
    du = run("--store", a.root, "--store", b.root, "du", "--format", "json").json()
    for i in range(2):
        for k, v in du_numbers(du, i).items():
            t.eq(stores[i].get(k), v, "store %d: %s as du counts it" % (i + 1, k))
    for k in ("referenced", "unique", "shared", "junk", "reclaimable", "blobs", "models"):
        t.eq(fleet.get(k), stores[0].get(k, 0) + stores[1].get(k, 0), "the fleet's %s is the sum" % k)
    t.eq(fleet.get("referenced"), du["total"]["referenced_bytes"], "as du's total")
    t.contains(page.visible(), "alpha:latest", "the first store's model")

with t.guard("--all-users: a section per store and owner"):
    m = ms.Machine()
    r = m.run("report", "--all-users")
    t.ok(r.code in (0, 8), "report --all-users runs (8: a store it may not read)", r.describe())
    page = Page(r.out)
    t.eq(page.problems, [], "well-formed")
    du = m.run("du", "--all-users", "--format", "json").json()
    t.eq(len(page.stores()), len(du["stores"]), "the stores du reads, a section each")
    t.eq(page.sections.get("fleet", {}).get("referenced"), du["total"]["referenced_bytes"],
         "the fleet's referenced bytes as du's total")
    text = page.visible()
    for key in ("service", "alice", "bob"):
        t.contains(text, "owner " + m.user_of(key), "the owner of %s's store" % key)
    for name in ("svc-only:latest", "alice-own:7b", "bob-own:latest"):
        t.contains(text, name, "every store's models")

with t.guard("last use as list shows it, from the server's logs"):
    s, used = t.clean_store("report-logs", name="used:1b")
    t.add_gguf_model(s, "idle:1b", seed="idle")
    blob = used["layers"][0]["digest"].split(":")[1]
    logs = os.path.join(os.path.dirname(s.root), "logs")
    os.makedirs(logs)
    with open(os.path.join(logs, "server.log"), "w") as f:
        f.write('time=2025-03-05T06:00:00.000Z level=INFO source=routes.go:1277 '
                'msg="Listening on [::]:11434 (version 0.5.13)"\n'
                'time=2025-03-05T07:00:00.000Z level=INFO source=server.go:380 msg="starting llama server" '
                'cmd="/usr/bin/ollama runner --model /root/.ollama/models/blobs/sha256-%s --port 1"\n' % blob)
    listed = {m["name"]: m["last_used"] for m in
              run("--store", s.root, "list", "--format", "json").json()["stores"][0]["models"]}
    t.eq(listed, {"used:1b": "2025-03-05T07:00:00Z", "idle:1b": None}, "list's last use (the premise)")
    r = report(s.root)
    t.exit_code(r, 0, "report with logs beside the store")
    rows = {x.split("</td>")[0]: x for x in r.out.split('<tr><td class="name">')[1:]}
    t.contains(rows.get("used:1b", ""), '<time datetime="2025-03-05T07:00:00Z"', "the last load's time")
    t.contains(rows.get("used:1b", ""), " ago</time>", "shown as an age, as list shows it")
    t.contains(rows.get("idle:1b", ""), "<td>never</td>", "never loaded: never")

with t.guard("--quarantine DIR: what it still holds, on its store"):
    s = t.copy_demo_store("report-q")
    q = os.path.join(t.tempdir("report-q-dir"), "q")
    r = run("--store", s.root, "prune", "--apply", "--yes", "--min-age", "0", "--quarantine", q)
    t.exit_code(r, 0, "prune --apply --quarantine (the premise)")
    index = json.load(open(os.path.join(q, "index.json")))
    moved = [e for e in index["entries"] if e.get("state") == "moved"]
    t.ok(moved, "prune moved something", index)
    page = Page(report(s.root, "--quarantine", q).out)
    t.eq(page.stores()[0].get("quarantine"), sum(e["disk_bytes"] for e in moved),
         "the quarantine card: the allocated bytes of what it holds")
    t.contains(page.visible(), "%d entr" % len(moved), "and how many entries")
    t.eq(Page(report(s.root).out).stores()[0].get("quarantine"), None, "no card without --quarantine")
    other = t.copy_demo_store("report-q-other")
    r = report(other.root, "--quarantine", q)
    t.exit_code(r, 8, "a quarantine of another store")
    t.contains(r.err, "holds files of a store this report does not show", "says so")
    r = run("--store", s.root, "restore", q, "--all")
    t.eq(Page(report(s.root, "--quarantine", q).out).stores()[0].get("quarantine"), 0,
         "after restore the quarantine holds nothing")

with t.guard("500 models: the page stays under 1 MB"):
    N = 500
    # each model has a blob of its own (a tile each) and a long name
    s = t.many_models_store(
        "report-500", N, name_of=lambda k: "some-namespace-%d/a-rather-long-model-name-%04d:tag-%d"
        % (k % 7, k, k % 3), params_of=lambda k: {"num_ctx": 1000 + k, "pad": "x" * (k % 50)})
    r = report(s.root, timeout=120)
    t.exit_code(r, 0, "report of %d models" % N)
    size = len(r.out.encode())
    print("report of %d models: %d bytes" % (N, size))
    t.ok(size < 1_000_000, "the page is under 1 MB (%d bytes)" % size)
    page = Page(r.out)
    t.eq(page.problems, [], "well-formed")
    t.eq(len(page.model_cells["store-1"]), N, "every model has a row")
    t.ok(page.tags.get("rect", 0) >= N, "every model has a tile", page.tags.get("rect"))

t.done()
