#!/usr/bin/env python3
"""Small things a user notices (issue 23, item 8): weeks in durations, kept
prune rows with their kind and size, show's layer sizes in one unit, file
type 0 shown as F32 as Ollama shows it."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

with t.guard("durations take weeks"):
    s, _ = t.clean_store("weeks")
    orphan = s.add_blob(b"orphan" * 10)
    s.age_all(8 * 86400)
    r = t.audit(s.root, "prune", "--min-age", "1w", "--format", "json")
    t.exit_code(r, 0, "prune --min-age 1w")
    st = r.json()["stores"][0]
    t.eq(st.get("min_age_seconds"), 7 * 86400, "1w is 7 days")
    t.ok(any(e["path"].endswith(orphan.split(":")[1]) for e in st["entries"]), "an 8-day-old orphan is planned", st)
    r = t.audit(s.root, "prune", "--min-age", "2w", "--format", "json")
    t.ok(not r.json()["stores"][0]["entries"], "and kept under 2w")
    r = t.audit(s.root, "prune", "--min-age", "1x")
    t.exit_code(r, 16, "an unknown unit is still refused")

with t.guard("kept prune rows have their kind and size"):
    s, _ = t.clean_store("kept")
    s.add_blob(b"young orphan" * 100)
    r = t.audit(s.root, "prune", "-v")
    t.exit_code(r, 0, "prune -v")
    lines = r.out.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("kept ("))
    rows = [ln for ln in lines[i + 1:] if "blobs/" in ln]
    t.ok(rows, "a kept row", r.out)
    for ln in rows:
        t.ok(re.search(r"\borphans\b", ln) is not None, "the kept row says its kind: %r" % ln)
        t.ok(re.search(r"\d(\.\d)? (B|KB|MB)\b", ln) is not None, "the kept row says its size: %r" % ln)

with t.guard("show: a layer's sizes in one unit"):
    demo = t.copy_demo_store("units")
    r = t.audit(demo.root, "show", "demo-llama:1b")
    layer_lines = [ln for ln in r.out.splitlines() if "on disk" in ln and "sha256:" in ln]
    t.ok(layer_lines, "layer lines", r.out)
    for ln in layer_lines:
        t.ok(re.search(r"\b\d+ on disk", ln) is None, "no bare byte count beside a human size: %r" % ln)
        t.ok(re.search(r"(B|KB|MB|GB) on disk", ln) is not None, "on disk in units: %r" % ln)

with t.guard("file type 0 (all F32) is F32, as Ollama prints it"):
    s = t.new_store("f32")
    t.add_gguf_model(s, "f32:latest", file_type=0)
    r = t.audit(s.root, "show", "f32:latest")
    t.exit_code(r, 0, "show")
    t.contains(r.out, "file type F32 (0", "show: F32")
    t.not_contains(r.out, "file type unknown", "not unknown")


with t.guard("a standard Linux install: plain `list` reads the service's store"):
    sysroot = t.tempdir("linux-install")
    os.makedirs(os.path.join(sysroot, "etc"))
    with open(os.path.join(sysroot, "etc", "passwd"), "w") as f:
        f.write("ollama:x:%d:%d::/usr/share/ollama:/bin/false\n" % (os.getuid(), os.getgid()))
    s = t.oa.Store(os.path.join(sysroot, "usr", "share", "ollama", ".ollama", "models"))
    t.add_gguf_model(s, "tiny:latest", seed="svc")
    env = {"OLLAMA_AUDIT_SYSROOT": sysroot}
    r = t.run("list", env=env)                    # HOME is the tests' empty home: no ~/.ollama/models
    t.exit_code(r, 0, "list finds the store")
    t.contains(r.out, "tiny:latest", "and lists its model")
    t.contains(r.err, s.root, "stderr says which store it read")
    j = t.run("list", "--format", "json", env=env).json()
    t.eq(j["stores"][0]["root"], s.root, "the service's store")
    # a second store on the machine: no guess, the stores are named
    s2 = t.oa.Store(os.path.join(sysroot, "var", "lib", "ollama"))
    t.add_gguf_model(s2, "other:latest", seed="svc2")
    r = t.run("list", env=env)
    t.exit_code(r, 8, "two stores: none is guessed")
    t.ok(s.root in r.err and s2.root in r.err, "both are named", r.err)

with t.guard("show tells the truth about a broken model"):
    s = t.new_store("broken")
    info = t.add_gguf_model(s, "tiny:latest", seed="broken")
    hexd = info["layers"][0]["digest"].split(":", 1)[1]
    blob = s.blob_path(info["layers"][0]["digest"])
    r = t.audit(s.root, "show", "tiny:latest")
    t.contains(r.out, "runs here", "intact: runs")
    # the server's log beside the store: the model's last load failed
    logs = os.path.join(os.path.dirname(s.root), "logs")
    os.makedirs(logs, exist_ok=True)
    with open(os.path.join(logs, "server.log"), "w") as f:
        f.write('time=2025-03-05T07:00:00.000Z level=INFO source=server.go:380 msg="starting llama server" '
                'cmd="/usr/bin/ollama runner --model %s/blobs/sha256-%s --port 40000"\n' % (s.root, hexd))
        f.write('time=2025-03-05T07:00:01.000Z level=ERROR source=sched.go:455 msg="error loading llama server" '
                'error="llama runner process has terminated: exit status 2"\n')
    r = t.audit(s.root, "show", "tiny:latest")
    para = " ".join(x.strip() for x in r.out.split("what can run here", 1)[-1].splitlines())
    t.contains(para, "last failed load", "the logs' failed load is named", r.out)
    t.contains(para, "exit status 2", "with its reason", r.out)
    with open(blob, "r+b") as f:
        f.truncate(600)
    r = t.audit(s.root, "show", "tiny:latest")
    t.exit_code(r, 4, "show of a truncated model: an integrity error")
    t.not_contains(r.out, " ok, arch", "a partial header is not 'ok'")
    t.not_contains(r.out, "data at 0", "no data offset of 0")
    t.not_contains(r.out, "; 0 params", "no 0 params")
    t.contains(r.out, "read in part", "the header says it was read in part")
    para = " ".join(x.strip() for x in r.out.split("what can run here", 1)[-1].splitlines())
    t.contains(para, "cannot run", "a truncated model cannot run", r.out)
    t.contains(para, "truncated", "and why", r.out)
    t.not_contains(para, "fits", "no fit claimed")
    os.unlink(blob)
    r = t.audit(s.root, "show", "tiny:latest")
    para = " ".join(x.strip() for x in r.out.split("what can run here", 1)[-1].splitlines())
    t.contains(para, "cannot run", "a model without its weights cannot run", r.out)
    t.contains(para, "missing", "and why", r.out)

with t.guard("check ends with a one-screen answer: models by severity, each with its fix"):
    demo = t.copy_demo_store("answer")
    info = t.add_gguf_model(demo, "broken:latest", seed="answer", style="registry")  # pulled
    os.unlink(demo.blob_path(info["layers"][0]["digest"]))
    demo.age_all(7200)  # the junk past prune's grace period, however fresh the checkout
    r = t.audit(demo.root, "check")
    lines = r.out.splitlines()
    head = next((k for k, ln in enumerate(lines) if re.match(r"^\d+ of \d+ models broken", ln)), None)
    t.ok(head is not None, "a line 'N of M models broken'", r.out)
    if head is not None:
        t.ok(lines[head].startswith("1 of 8 models broken"), "one of the eight is broken", lines[head])
        rows = lines[head + 1:]
        t.ok(rows and rows[0].split()[:1] == ["SEVERITY"], "a table follows", rows)
        err = [ln for ln in rows if ln.startswith("error")]
        t.ok(len(err) == 1 and "broken:latest" in err[0]
             and err[0].rstrip().endswith("ollama-audit repair broken:latest --apply --store %s" % demo.root),
             "the broken model with the command that fixes it", rows)
        sev = [ln.split()[0] for ln in rows[1:]]
        t.eq(sev, sorted(sev, key=lambda x: {"error": 0, "warning": 1}.get(x, 2)), "errors first, then warnings")
        t.ok(any("(store)" in ln and "ollama-audit prune --apply --store %s" % demo.root in ln for ln in rows),
             "store-wide junk: prune --apply fixes it", rows)

with t.guard("check's messages give sizes as people read them"):
    demo = t.copy_demo_store("human-bytes")
    r = t.audit(demo.root, "check")
    orphan = next((ln for ln in r.out.splitlines() if "orphan-blob:" in ln), "")
    t.ok(re.search(r"\(\d+(\.\d)? (B|KB)\)", orphan) is not None and "bytes)" not in orphan,
         "orphan-blob: a human size", orphan)
    partial = next((ln for ln in r.out.splitlines() if "partial-download:" in ln), "")
    t.ok(re.search(r"\d+(\.\d)? KB allocated", partial) is not None and "bytes allocated" not in partial,
         "partial-download: human sizes", partial)

t.done()
