#!/usr/bin/env python3
"""Text from a store never drives the terminal: escape sequences (ESC, the
C1 controls U+009B CSI and U+009D OSC), bidi overrides and isolates and
invalid UTF-8 in file names, manifests, configs, GGUF strings, store paths
and user names come out escaped in tables, csv and messages; json stays
valid json. And csv cells a spreadsheet would run as formulas start with '.
"""

import csv
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

# What a terminal acts on: C0 controls but newline, DEL, C1, bidi controls.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffd]")
BAD = "\x1b[31mE\u009b31mC\u009d0;t\x07O\u202eB\u2066I"


def raw_controls(text):
    return sorted(set(RAW.findall(text)))


def hostile_store(tag, parent_name="models"):
    base = t.tempdir(tag)
    root = os.path.join(base, "st" + BAD, parent_name)
    s = t.oa.Store(root)
    gguf = t.oa.tiny_llama_gguf(name="Tiny " + BAD)
    layers = [s.layer("model", gguf), s.layer("application/vnd.ollama.image.x" + BAD, b"hello")]
    cfg = t.oa.gguf_config(s, gguf, layers)
    s.add_manifest("ok:latest", cfg, layers)
    s.add_manifest("tiny\u009b:latest", cfg, layers)
    d = os.path.join(root, "manifests", "registry.ollama.ai", "library", "m\x1b[2J")
    os.makedirs(d)
    with open(os.path.join(d, "t\u202e"), "w") as f:
        f.write("{")
    with open(os.path.join(root.encode(), b"blobs", b"sha256-\x1b]0;pwn\x07\xff"), "w") as f:
        f.write("x")
    return s


with t.guard("controls from a store are escaped in every table, csv and message"):
    s = hostile_store("esc")
    s2, _ = t.clean_store("esc2")
    env = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("sysroot"), "OLLAMA_AUDIT_PASSWD": t.passwd_with("ev\x1bil\u009b")}
    runs = [["check"], ["check", "--format", "csv"], ["show", "ok"], ["show", "ok", "--format", "csv"],
            ["show", "tiny"], ["list"], ["list", "--format", "csv"], ["du"], ["prune"], ["stores"],
            ["stores", "--format", "csv"], ["history"], ["verify"]]
    for args in runs:
        r = t.audit(s.root, *args, env=env)
        t.eq(raw_controls(r.out), [], "%s: stdout has no raw control" % " ".join(args), r.out[-800:])
        t.eq(raw_controls(r.err), [], "%s: stderr has no raw control" % " ".join(args), r.err[-800:])
    r = t.audit(s.root, "check")
    t.contains(r.out, "\\x1b[31mE\\u009b31mC\\u009d0;t\\x07O\\u202eB\\u2066I",
               "the media type is shown, escaped")
    t.contains(r.out, "sha256-\\x1b]0;pwn\\x07\\xff", "the blob file name is shown, escaped")
    # several stores: the store headers and the per-user totals
    for args in (["list"], ["du"], ["verify"], ["prune"], ["history"], ["stores"], ["check"], ["dedupe"],
                 ["du", "--duplicates"]):
        r = t.run("--store", s.root, "--store", s2.root, *args, env=env)
        t.eq(raw_controls(r.out + r.err), [], "%s of two stores: no raw control" % args[0], r.out[-800:])
    r = t.run("--store", s.root, "--store", s2.root, "check", env=env)
    t.contains(r.out, "user ev\\x1bil\\u009b", "the user name is shown, escaped")


with t.guard("json stays valid json with control and invalid bytes"):
    s = hostile_store("escj")
    for args in (["check"], ["list"], ["show", "ok"], ["du"], ["stores"]):
        r = t.audit(s.root, *args, "--format", "json")
        try:
            json.loads(r.out)
            t.ok(True, "%s --format json parses" % args[0])
        except ValueError as e:
            t.fail("%s --format json: %s" % (args[0], e), r.out[-400:])
        t.not_contains(r.out, "\ufffd", "%s --format json is valid UTF-8" % args[0])


def csv_rows(text):
    return list(csv.reader(io.StringIO(text)))


with t.guard("csv: a cell that starts like a formula starts with '"):
    base = t.tempdir("formula")
    root = os.path.join(base, "=cmd|' /C calc'!A0", "models")
    s = t.oa.Store(root)
    t.add_gguf_model(s, "tiny:latest")
    # a relative --store keeps its spelling in the report
    r = t.run("--store", os.path.relpath(s.root, base), "list", "--format", "csv", cwd=base)
    t.exit_code(r, 0, "list")
    rows = csv_rows(r.out)
    t.ok(len(rows) >= 2, "a header and a row", r.out)
    store_cells = [c for row in rows[1:] for c in row if "=cmd" in c]
    t.ok(store_cells and all(c.startswith("'=") for c in store_cells),
         "the store path cell starts with '=", store_cells)
    t.ok(all(not c.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for c in row
             if not re.fullmatch(r"[-+]?[0-9.]+", c)),
         "no text cell starts with = + - @ tab or CR", rows)
    # a failure reason from a server log
    logf = os.path.join(base, "server.log")
    with open(logf, "w") as f:
        f.write('time=2026-01-02T03:04:05.000Z level=INFO source=server.go:100 msg="starting llama server" '
                'cmd="/usr/bin/ollama runner --model %s --port 1"\n' % t.blob_file(s, "sha256:" + "0" * 64))
        f.write('time=2026-01-02T03:04:06.000Z level=ERROR source=sched.go:1 msg="error loading llama server" '
                'error="=HYPERLINK(\\"http://x\\",\\"y\\")"\n')
    r = t.audit(s.root, "history", "--log", logf, "--format", "csv")
    for row in csv_rows(r.out):
        for c in row:
            if "HYPERLINK" in c:
                t.ok(c.startswith("'="), "the failure reason cell starts with '=", c)

t.done()
