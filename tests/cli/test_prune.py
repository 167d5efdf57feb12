#!/usr/bin/env python3
"""`ollama-audit prune`: every junk category, every safety rule (dry run by
default, --yes without a TTY, --min-age, corrupt manifests, a running server,
re-checks before unlink, symlinks), --plan / --apply --plan, --quarantine +
restore, and --predict-server (docs/disk-space.md)."""

import hashlib
import json
import os
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()


def junk_store(tag="prune"):
    """A model plus one of every kind of junk, all 2 h old."""
    s = t.new_store(tag)
    m = t.add_gguf_model(s, "keep:latest", seed="k")
    j = {"model": m}
    j["orphan"] = s.add_blob(oa.det_bytes(20000, "orphan"))
    # content is a manifest, but not the bytes of any tag (the registry form of
    # keep:latest, as an old client2 pull left it): a tag's own bytes would be
    # referenced by content (test_reach.py)
    mb = s.manifest_bytes(m["config"], m["layers"], style="registry")
    j["manifest_blob"] = s.add_blob(mb)
    j["partial"], j["partial_paths"] = s.partial_download(oa.det_bytes(200000, "p"), n_parts=2, completed=0.5)
    j["tmp"] = s.tmp_download(oa.det_bytes(9000, "tmp"))
    j["create_temp"] = s.create_temp("4242424242", b"c" * 100)
    j["quant"] = s.write_raw("blobs/Q4_K_M777", b"q" * 100)
    os.makedirs(os.path.join(s.blobs, "split-gguf-123"))
    s.write_raw("blobs/split-gguf-123/part", b"s" * 10)
    os.makedirs(os.path.join(s.root, "ollama-safetensors999"))
    s.write_raw("ollama-safetensors999/x", b"y")
    leg = hashlib.sha256(b"legacy").hexdigest()
    j["legacy"] = s.write_raw("blobs/sha256:" + leg, b"legacy")
    j["foreign"] = s.write_raw("blobs/.DS_Store", b"junk")
    s.mkdir("manifests/registry.ollama.ai/library/empty/tag")
    s.age_all(7200)
    for d in ("blobs/split-gguf-123", "ollama-safetensors999"):
        s.age(d, 7200)
    return s, j


def listed(doc, i=0):
    return {e["path"]: e for e in doc["stores"][i]["entries"]}


def kept(doc, i=0):
    return {e["path"]: e for e in doc["stores"][i]["kept"]}


def B(s, d):
    return "blobs/" + d.replace(":", "-")


def check_clean(s, msg):
    r = t.audit(s.root, "check", "--format", "json")
    codes = t.codes(t.findings_of(r.json()))
    t.not_contains(codes, "missing-blob", msg + ": no manifest points at a missing blob")
    t.not_contains(codes, "missing-config", msg + ": no missing config")


# ------------------------------------------------------------------ dry run
with t.guard("dry run lists the default categories and changes nothing"):
    s, j = junk_store()
    before = t.snapshot(s.root)
    r = t.audit(s.root, "prune", "--format", "json")
    t.exit_code(r, 0, "dry run")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "dry run writes nothing")
    doc = r.json()
    e = listed(doc)
    t.ok(B(s, j["orphan"]) in e, "orphan listed")
    t.eq(e.get(B(s, j["orphan"]), {}).get("category"), "orphans", "orphan category")
    for p in j["partial_paths"]:
        t.eq(e.get(t.rel(s, p), {}).get("category"), "partials", "partial file listed: " + t.rel(s, p))
    for p in (j["tmp"], j["create_temp"], j["quant"]):
        t.eq(e.get(t.rel(s, p), {}).get("category"), "temps", "temp listed: " + t.rel(s, p))
    t.eq(e.get("blobs/split-gguf-123", {}).get("type"), "dir", "split-gguf temp dir listed")
    t.eq(e.get("ollama-safetensors999", {}).get("category"), "temps", "ollama-safetensors temp dir listed")
    for p in (B(s, j["manifest_blob"]), t.rel(s, j["legacy"]), t.rel(s, j["foreign"])):
        t.ok(p not in e, "not in the default set: " + p)
    t.ok(not any(k.startswith("manifests/") for k in e), "no empty dirs by default")
    t.eq(doc["stores"][0]["dry_run"], True, "dry_run flag")
    t.eq(doc["stores"][0]["planned_bytes"], sum(x["planned_bytes"] for x in e.values()),
         "planned_bytes = sum of entries")
    r = t.audit(s.root, "prune", "-v")
    t.contains(r.out, "dry run, nothing removed", "table says dry run")
    t.contains(r.out, "download: ", "partial download progress shown")

with t.guard("--what selects categories; manifest blobs are their own category"):
    r = t.audit(s.root, "prune", "--what", "manifest-blobs,legacy,foreign,empty-dirs", "--format", "json")
    e = listed(r.json())
    t.eq(e.get(B(s, j["manifest_blob"]), {}).get("category"), "manifest-blobs", "manifest blob category")
    t.eq(e.get(t.rel(s, j["legacy"]), {}).get("category"), "legacy", "legacy name")
    t.eq(e.get(t.rel(s, j["foreign"]), {}).get("category"), "foreign", "foreign file")
    t.ok("manifests/registry.ollama.ai/library/empty/tag" in e and
         "manifests/registry.ollama.ai/library/empty" in e, "empty dirs, deepest first")
    t.ok(B(s, j["orphan"]) not in e, "orphans not selected")
    r = t.audit(s.root, "prune", "--what", "bogus")
    t.exit_code(r, 16, "unknown category is a usage error")

# ------------------------------------------------------------------ confirmation
with t.guard("--apply without a TTY needs --yes"):
    before = t.snapshot(s.root)
    r = t.audit(s.root, "prune", "--apply", input=b"y\n")
    t.exit_code(r, 16, "no TTY, no --yes")
    t.contains(r.err, "--yes", "message names --yes")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing removed")

with t.guard("declining the [y/N] prompt: nothing done, exit 0 (not an interruption)"):
    for answer in (b"n\n", b"\n", b"nope\n"):
        r = t.run_tty(("--store", s.root, "prune", "--apply", "--min-age", "0"), answer)
        t.exit_code(r, 0, "answer %r" % answer)
        t.contains(r.err, "[y/N]", "the question is asked")
        t.contains(r.err, "declined: nothing done", "answer %r: says so" % answer)
        t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "answer %r: nothing removed" % answer)
    # A script reading json learns it too, not only a person reading stderr.
    r = t.run_tty(("--store", s.root, "prune", "--apply", "--min-age", "0", "--format", "json"), b"n\n")
    t.exit_code(r, 0, "declined, json")
    st = json.loads(r.out)["stores"][0]
    t.eq((st.get("not_applied"), "result" in st), ("declined", False), "json: not_applied says declined", st)
    r = t.audit(s.root, "prune", "--apply", "--format", "json")
    st = json.loads(r.out)["stores"][0]
    t.eq(st.get("not_applied"), "refused", "json: an apply refused (no TTY, no --yes) says so", st)
    t.eq(json.loads(r.out)["status"], "error", "and the document's status is error")

with t.guard("--apply --yes removes exactly the default set"):
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 0, "apply")
    after = t.snapshot(s.root)
    gone = sorted(k for k in before if k not in after)
    want = sorted([B(s, j["orphan"])] + [t.rel(s, p) for p in j["partial_paths"]] +
                  [t.rel(s, p) for p in (j["tmp"], j["create_temp"], j["quant"])] +
                  ["blobs/split-gguf-123", "blobs/split-gguf-123/part", "ollama-safetensors999",
                   "ollama-safetensors999/x"])
    t.eq(gone, want, "removed set")
    t.eq([k for k in after if k not in before], [], "nothing new")
    check_clean(s, "after prune")
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 0, "second prune")
    t.contains(r.out, "nothing to remove", "second prune has nothing left")

# ------------------------------------------------------------------ min age
with t.guard("--min-age: young files are kept"):
    s = t.new_store("young")
    t.add_gguf_model(s, "m:latest")
    old = s.add_blob(b"old orphan" * 100)
    young = s.add_blob(b"young orphan" * 100)
    s.age(B(s, old), 7200)
    s.age(B(s, young), 600)
    r = t.audit(s.root, "prune", "--format", "json")
    doc = r.json()
    t.ok(B(s, old) in listed(doc), "2 h old orphan listed")
    t.ok(B(s, young) not in listed(doc), "10 min old orphan not listed (default 1h)")
    t.contains(kept(doc).get(B(s, young), {}).get("note", ""), "younger than --min-age", "kept with reason")
    r = t.audit(s.root, "prune", "--min-age", "5m", "--format", "json")
    t.ok(B(s, young) in listed(r.json()), "--min-age 5m includes it")
    r = t.audit(s.root, "prune", "--min-age", "3h", "--apply", "--yes")
    t.ok(os.path.exists(s.blob_path(old)) and os.path.exists(s.blob_path(young)), "--min-age 3h keeps both")
    r = t.audit(s.root, "prune", "--min-age", "xyz")
    t.exit_code(r, 16, "bad duration")

# ------------------------------------------------------------------ corrupt manifests
with t.guard("a corrupt manifest blocks --apply unless --force, and its blobs stay"):
    s = t.new_store("corrupt")
    t.add_gguf_model(s, "m:latest")
    maybe = s.add_blob(b"referenced only by the corrupt manifest" * 50)
    orphan = s.add_blob(b"a real orphan" * 50)
    s.write_raw("manifests/registry.ollama.ai/library/bad/latest", '{"layers":[{"digest":"%s",' % maybe)
    s.age_all(7200)
    before = t.snapshot(s.root)
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 8, "refused")
    t.contains(r.err, "cannot be parsed", "says why")
    t.contains(r.err, "--force", "names --force")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing removed")
    r = t.audit(s.root, "prune", "--format", "json")
    t.contains(kept(r.json()).get(B(s, maybe), {}).get("note", ""), "mentions this digest",
               "blob named by the corrupt manifest is kept")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--force")
    t.exit_code(r, 0, "--force")
    t.ok(not os.path.exists(s.blob_path(orphan)), "orphan removed with --force")
    t.ok(os.path.exists(s.blob_path(maybe)), "blob the corrupt manifest may reference survives --force")

with t.guard("an invalid name at depth 4 (.DS_Store) blocks it too"):
    s = t.new_store("dsstore")
    t.add_gguf_model(s, "m:latest")
    s.add_blob(b"orphan" * 10)
    s.write_raw("manifests/registry.ollama.ai/library/m/.DS_Store", b"\0\0")
    s.age_all(7200)
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 8, ".DS_Store blocks")

# ------------------------------------------------------------------ running server
def dummy_server(cwd=None, open_file=None, argv0="ollama serve"):
    script = 'exec -a "%s" sleep 30' % argv0
    if open_file:
        script = 'exec 7<"%s"; %s' % (open_file, script)
    return t.start_fake_server(script, argv0, cwd=cwd)


with t.guard("an Ollama server using the store blocks --apply unless --force"):
    s = t.new_store("server")
    t.add_gguf_model(s, "m:latest")
    orphan = s.add_blob(b"orphan" * 10)
    s.age_all(7200)
    for kind, kw in (("cwd", {"cwd": s.blobs}), ("open fd", {"open_file": s.blob_path(orphan)}),
                     ("runner", {"cwd": s.root, "argv0": "/usr/bin/ollama runner"}),
                     ("llama-server", {"cwd": s.root, "argv0": "llama-server"})):
        p = dummy_server(**kw)
        try:
            r = t.audit(s.root, "prune", "--apply", "--yes")
            t.exit_code(r, 8, "refused (%s)" % kind)
            t.contains(r.err, "pid %d" % p.pid, "names the process (%s)" % kind)
            t.ok(os.path.exists(s.blob_path(orphan)), "nothing removed (%s)" % kind)
        finally:
            p.kill()
            p.wait()
    p = dummy_server(cwd="/")                      # a server elsewhere does not count
    try:
        r = t.audit(s.root, "prune", "--apply", "--yes", "--format", "json")
        t.exit_code(r, 0, "a server not using this store does not block")
    finally:
        p.kill()
        p.wait()
    orphan = s.add_blob(b"orphan2" * 10)
    s.age(B(s, orphan), 7200)
    p = dummy_server(cwd=s.root)
    try:
        r = t.audit(s.root, "prune", "--apply", "--yes", "--force")
        t.exit_code(r, 0, "--force goes on")
        t.ok(not os.path.exists(s.blob_path(orphan)), "removed with --force")
    finally:
        p.kill()
        p.wait()


with t.guard("a run that removed nothing says so: no bytes freed, the planned bytes named planned"):
    s = t.new_store("nothing-freed")
    t.add_gguf_model(s, "m:latest")
    orphan = s.add_blob(b"orphan" * 10)
    t.add_gguf_model(s, "gone:latest", seed="g")
    s.age_all(7200)
    cases = [("rm without --yes off a terminal", ["rm", "gone:latest", "--apply"], None, 16),
             ("prune without --yes off a terminal", ["prune", "--apply"], None, 16),
             ("prune refused: a server uses the store", ["prune", "--apply", "--yes"], s.blobs, 8)]
    for what, args, server_cwd, code in cases:
        p = dummy_server(cwd=server_cwd) if server_cwd else None
        try:
            r = t.audit(s.root, *args, input=b"")
            t.exit_code(r, code, what)
            t.contains(r.out, "nothing removed", "%s: the table says nothing was removed" % what)
            last = r.out.strip().splitlines()[-1]
            t.ok(last.startswith("nothing removed: refusing"), "%s: and why, last: %r" % (what, last), r.out)
            t.ok(" freed" not in r.out, "%s: no line claims bytes freed" % what, r.out)
            j = t.audit(s.root, *args, "--format", "json", input=b"")
            doc = j.json()
            st = doc["stores"][0]
            t.eq(doc["schema"], "ollama-audit.%s" % {"prune": "prune/4", "rm": "rm/5"}[args[0]],
                 "%s: the schema version says freed_bytes changed (an entry's too in prune/4, rm/5)" % what)
            t.eq(st.get("not_applied"), "refused", "%s: not_applied" % what)
            t.eq(st["freed_bytes"], 0, "%s: freed_bytes 0" % what)
            t.ok(st.get("planned_bytes", 0) > 0, "%s: planned_bytes holds what the plan would free" % what, st)
            err = doc["errors"][0]
            t.eq(err["message"], err["message"].strip(), "%s: the message is trimmed" % what, err)
            t.contains(err["message"], "refusing to", "%s: errors[0] is the reason" % what, err)
            t.eq(err["path"], s.root, "%s: errors[0] names the store" % what, err)
        finally:
            if p:
                p.kill()
                p.wait()
    t.ok(os.path.exists(s.blob_path(orphan)), "nothing was removed")
    r = t.audit(s.root, "prune", "--format", "json")
    st = r.json()["stores"][0]
    t.eq((st["freed_bytes"], st["dry_run"]), (0, True), "a dry run frees nothing")
    t.eq(st["planned_bytes"], sum(x["planned_bytes"] for x in st["entries"]), "planned_bytes = sum of entries")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--format", "json")
    st = r.json()["stores"][0]
    t.eq(st["freed_bytes"], st["result"]["freed_bytes"], "applied: freed_bytes is what went")
    t.ok(st["freed_bytes"] > 0, "applied: something went", st)

with t.guard("a server whose use of the store cannot be seen blocks --apply (another user's)"):
    import multistore as ms
    why = t.bin_for_others()[2]
    if why:
        t.skip("%s (the server and the binary must be two other users)" % why)
    else:
        s = t.new_store("hidden-server")
        t.add_gguf_model(s, "m:latest")
        orphan = s.add_blob(b"hidden-server orphan" * 10)
        s.age_all(7200)
        ms.chown_tree(os.path.dirname(s.root), ms.UIDS["alice"])
        def as_nobody():
            os.setgroups([])
            os.setresgid(t.NOBODY, t.NOBODY, t.NOBODY)
            os.setresuid(t.NOBODY, t.NOBODY, t.NOBODY)
        p = subprocess.Popen(["bash", "-c", 'exec -a "ollama serve" sleep 30'], cwd="/", preexec_fn=as_nobody)
        time.sleep(0.3)
        env = {"HOME": os.path.dirname(s.root), "XDG_CACHE_HOME": os.path.dirname(s.root)}
        try:
            r = ms.run_as(ms.UIDS["alice"], ["--store", s.root, "prune", "--apply", "--yes"],
                          dict(env, OA_TEST_IGNORE_HIDDEN_SERVERS=None))
            t.exit_code(r, 8, "alice cannot see which store nobody's server uses: refused")
            t.contains(r.err, "pid %d" % p.pid, "names the process")
            t.contains(r.err, "cannot see which store it uses", "says why")
            t.ok(os.path.exists(s.blob_path(orphan)), "nothing removed")
            r = ms.run_as(ms.UIDS["alice"], ["--store", s.root, "prune", "--apply", "--yes"],
                          dict(env, OA_TEST_IGNORE_HIDDEN_SERVERS="1"))
            t.exit_code(r, 0, "the testing aid the suite runs under: a hidden server does not count")
            t.ok(not os.path.exists(s.blob_path(orphan)), "the orphan is removed")
        finally:
            p.kill()
            p.wait()

# ------------------------------------------------------------------ symlinks, hard links
with t.guard("a symlinked blob is removed as a link; its target survives"):
    s = t.new_store("symlink")
    t.add_gguf_model(s, "m:latest")
    outside = os.path.join(t.tempdir("outside"), "target.bin")
    data = b"precious bytes outside the store" * 100
    with open(outside, "wb") as f:
        f.write(data)
    hexd = hashlib.sha256(data).hexdigest()
    link = s.symlink("blobs/sha256-" + hexd, outside)
    dl = s.symlink("blobs/sha256-" + "e" * 64, "/nonexistent/dangling")
    s.age_all(7200)
    os.utime(link, (time.time() - 7200,) * 2, follow_symlinks=False)
    os.utime(dl, (time.time() - 7200,) * 2, follow_symlinks=False)
    r = t.audit(s.root, "prune", "--format", "json")
    e = listed(r.json())
    t.eq(e.get("blobs/sha256-" + hexd, {}).get("type"), "symlink", "planned as a symlink")
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 0, "apply")
    t.ok(not os.path.lexists(link), "the link is gone")
    t.ok(not os.path.lexists(dl), "the dangling link is gone")
    t.ok(os.path.exists(outside) and open(outside, "rb").read() == data, "the target outside survives")

with t.guard("a hard link to a referenced blob frees nothing, and the note says so"):
    s = t.new_store("hardlink")
    m = t.add_gguf_model(s, "m:latest")
    os.link(s.blob_path(m["layers"][0]["digest"]), os.path.join(s.blobs, "sha256-" + "a" * 64))
    s.age_all(7200)
    r = t.audit(s.root, "prune", "--format", "json")
    e = listed(r.json()).get("blobs/sha256-" + "a" * 64, {})
    t.eq(e.get("planned_bytes"), 0, "hardlinked orphan frees 0 bytes")
    t.contains(e.get("note") or "", "hardlinked", "note explains")

# ------------------------------------------------------------------ plans
with t.guard("--plan FILE, then --apply --plan FILE removes exactly the plan, re-checking each entry"):
    s = t.new_store("plan")
    m = t.add_gguf_model(s, "m:latest")
    o1 = s.add_blob(b"orphan one" * 100)
    o2 = s.add_blob(b"orphan two" * 100)
    o3 = s.add_blob(b"orphan three" * 100)
    o4 = s.add_blob(b"orphan four" * 100)
    s.age_all(7200)
    plan = os.path.join(t.tempdir("planfile"), "plan.json")
    r = t.audit(s.root, "prune", "--plan", plan)
    t.exit_code(r, 0, "write plan")
    doc = json.load(open(plan))
    t.eq(doc["schema"], "ollama-audit.plan/2", "plan schema")
    t.eq(sorted(e["path"] for e in doc["entries"]), sorted(B(s, x) for x in (o1, o2, o3, o4)), "plan entries")
    for k in ("path", "dev", "ino", "apparent_bytes", "mtime_ns", "digest", "category"):
        t.ok(k in doc["entries"][0], "plan entry has %s" % k)
    # after the plan: a new orphan (not in the plan), o2 rewritten, o3 now referenced, o4 untouched
    o5 = s.add_blob(b"orphan five, made after the plan" * 100)
    s.age(B(s, o5), 7200)
    with open(s.blob_path(o2), "ab") as f:
        f.write(b"changed")
    s.age(B(s, o2), 7200)
    s.add_manifest("late:latest", m["config"], m["layers"] + [{"mediaType": oa.MEDIA_PREFIX + "license",
                                                                "digest": o3, "size": 1300}])
    r = t.audit(s.root, "prune", "--apply", "--yes", "--plan", plan)
    t.exit_code(r, 0, "apply plan")
    t.ok(not os.path.exists(s.blob_path(o1)), "planned orphan removed")
    t.ok(not os.path.exists(s.blob_path(o4)), "planned orphan 4 removed")
    t.ok(os.path.exists(s.blob_path(o2)), "changed file skipped")
    t.contains(r.out, "changed since it was planned", "says it changed")
    t.ok(os.path.exists(s.blob_path(o3)), "newly referenced blob skipped")
    t.contains(r.out, "references it now", "says it is referenced")
    t.ok(os.path.exists(s.blob_path(o5)), "file not in the plan untouched")
    check_clean(s, "after plan")
    # a tampered plan cannot escape the store
    bad = dict(doc)
    bad["entries"] = [dict(doc["entries"][0], path="blobs/../../etc/passwd")]
    json.dump(bad, open(plan, "w"))
    r = t.audit(s.root, "prune", "--apply", "--yes", "--plan", plan)
    t.exit_code(r, 16, "a plan path outside the store is rejected")
    other = t.new_store("other")
    json.dump(doc, open(plan, "w"))
    r = t.audit(other.root, "prune", "--apply", "--yes", "--plan", plan)
    t.exit_code(r, 8, "a plan for another store is refused")

# ------------------------------------------------------------------ quarantine
with t.guard("--quarantine moves with an index; restore puts everything back"):
    s, j = junk_store("quar")
    before = t.snapshot(s.root)
    q = os.path.join(t.tempdir("q"), "quarantine")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--what", "all", "--quarantine", q)
    t.exit_code(r, 0, "quarantine apply")
    t.ok(not os.path.exists(s.blob_path(j["orphan"])), "orphan moved away")
    idx = json.load(open(os.path.join(q, "index.json")))
    t.eq(idx["schema"], "ollama-audit.quarantine/4", "index schema")
    moved = [e for e in idx["entries"] if e["state"] == "moved"]
    t.ok(len(moved) >= 10, "entries moved: %d" % len(moved))
    t.ok(all(os.path.lexists(os.path.join(q, e["stored"])) for e in moved), "every moved file is in DIR")
    check_clean(s, "after quarantine")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore")
    after = t.snapshot(s.root)
    # directory mtimes change when entries come and go; compare everything else
    strip = lambda snap: {k: (v[0], v[1], v[3], v[4]) if v[0] == 0o040000 else v for k, v in snap.items()}
    t.eq(t.diff_snapshots(strip(before), strip(after)), [], "store identical after restore")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore twice is harmless")

with t.guard("a quarantine an older version wrote (quarantine/1, 'size') is still restored"):
    s, j = junk_store("quar1")
    before = t.snapshot(s.root)
    q = os.path.join(t.tempdir("q1"), "quarantine")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "quarantine apply")
    path = os.path.join(q, "index.json")
    idx = json.load(open(path))
    idx["schema"] = "ollama-audit.quarantine/1"
    renames = {"apparent_bytes": "size", "disk_bytes": "allocated", "freed_bytes": "freed"}
    idx["entries"] = [{renames.get(k, k): v for k, v in e.items()} for e in idx["entries"]]
    json.dump(idx, open(path, "w"))
    # Adding to it writes this version's entries: the index says so.
    more = s.add_blob(b"another orphan" * 300)
    old_time = time.time() - 7200
    os.utime(s.blob_path(more), (old_time, old_time))
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "a second quarantine run into the old index")
    t.eq(json.load(open(path))["schema"], "ollama-audit.quarantine/4", "the index is /4 once /4 entries are in it")
    t.ok(not os.path.exists(s.blob_path(more)), "the second orphan moved too")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore of a quarantine/1 index")
    t.ok(os.path.exists(s.blob_path(more)), "the second orphan is back")
    t.ok(os.path.exists(s.blob_path(j["orphan"])), "the orphan is back")
    strip = lambda snap: {k: (v[0], v[1], v[3], v[4]) if v[0] == 0o040000 else v for k, v in snap.items()}
    t.eq([d for d in t.diff_snapshots(strip(before), strip(t.snapshot(s.root))) if more[7:] not in d], [],
         "store identical after restore (plus the second orphan)")

with t.guard("restore never overwrites a different file"):
    s = t.new_store("conflict")
    t.add_gguf_model(s, "m:latest")
    o = s.add_blob(b"orphan" * 100)
    s.age_all(7200)
    q = os.path.join(t.tempdir("q2"), "q")
    t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    with open(s.blob_path(o), "wb") as f:
        f.write(b"something else now")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 4, "conflict left")
    t.contains(r.out, "CONFLICT", "reported")
    t.eq(open(s.blob_path(o), "rb").read(), b"something else now", "the new file is untouched")

with t.guard("--quarantine on another filesystem is refused"):
    s = t.new_store("xdev")
    t.add_gguf_model(s, "m:latest")
    o = s.add_blob(b"orphan" * 100)
    s.age_all(7200)
    other = None
    for cand in ("/dev/shm", "/run", "/var/tmp", os.path.expanduser("~")):
        try:
            if os.path.isdir(cand) and os.access(cand, os.W_OK) and os.stat(cand).st_dev != os.stat(s.root).st_dev:
                other = tempfile.mkdtemp(prefix="oa-xdev-", dir=cand)
                break
        except OSError:
            pass
    if other:
        r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", os.path.join(other, "q"))
        t.exit_code(r, 8, "different filesystem")
        t.contains(r.err, "different filesystem", "clear message")
        t.ok(os.path.exists(s.blob_path(o)), "nothing moved")
        subprocess.run(["rm", "-rf", other])
    else:
        t.skip("no second filesystem found: the cross-device quarantine")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", os.path.join(s.blobs, "q"))
    t.exit_code(r, 8, "quarantine inside blobs/ refused")

# ------------------------------------------------------------------ predict-server
with t.guard("--predict-server follows the server's start-up prune (spec 5.1)"):
    s = t.new_store("predict")
    m = t.add_gguf_model(s, "m:latest")
    orphan = s.add_blob(b"orphan" * 100)
    up = hashlib.sha256(b"upper").hexdigest().upper()
    s.write_raw("blobs/sha256-" + up, b"upper")
    mb = s.add_blob(s.manifest_bytes(m["config"], m["layers"]))
    _, parts = s.partial_download(oa.det_bytes(5000, "pp"), n_parts=1)
    leg = hashlib.sha256(b"legacy2").hexdigest()
    s.write_raw("blobs/sha256:" + leg, b"legacy2")
    s.mkdir("blobs/somedir")
    s.age_all(7200)
    young = s.add_blob(b"young" * 100)
    r = t.audit(s.root, "prune", "--predict-server", "--format", "json")
    t.exit_code(r, 0, "predict")
    st = r.json()["stores"][0]
    dels = {d["path"]: d["reason"] for d in st["deletes"]}
    t.ok(B(s, orphan) in dels, "orphan deleted")
    t.ok("blobs/sha256-" + up in dels, "upper-case hex blob deleted")
    t.ok(B(s, mb) in dels, "manifest blob deleted (current main does not know them)")
    t.ok(all(t.rel(s, p) in dels for p in parts), "partials deleted")
    t.ok("blobs/sha256-" + leg in dels, "legacy file renamed, then deleted as unreferenced")
    t.eq([x["to"] for x in st["renames"]], ["blobs/sha256-" + leg], "legacy rename")
    t.ok("blobs/somedir" not in dels, "directories untouched")
    t.eq([d["path"] for d in st["deleted_later"]], [B(s, young)], "young orphan deleted later")
    for ref in [m["config"]] + m["layers"]:
        t.ok(B(s, ref["digest"]) not in dels, "referenced blob kept")
    for val, blocked in (("1", True), ("true", True), ("yes", True), ("garbage", True), ("0", False),
                         ("false", False), ("", False), (" 'FALSE' ", False)):
        r = t.audit(s.root, "prune", "--predict-server", "--format", "json", env={"OLLAMA_NOPRUNE": val})
        st = r.json()["stores"][0]
        t.eq(st["nothing"] is not None, blocked, "OLLAMA_NOPRUNE=%r blocks: %s" % (val, blocked))
    s.write_raw("manifests/registry.ollama.ai/library/bad/latest", "{not json")
    r = t.audit(s.root, "prune", "--predict-server")
    t.contains(r.out, "nothing: a corrupt manifest blocks it", "corrupt manifest blocks the server's prune")

# ------------------------------------------------------------------ hostile plans (review M1, M2)
def entry_for(s, rel, **kw):
    """A plan entry that matches the file at `rel` now (so the re-stat passes)."""
    st = os.lstat(os.path.join(s.root, rel))
    import stat as stat_
    typ = "dir" if stat_.S_ISDIR(st.st_mode) else "symlink" if stat_.S_ISLNK(st.st_mode) else "file"
    e = {"path": rel, "category": "orphans", "digest": None, "type": typ, "empty_dir": False,
         "check_refs": True, "dev": st.st_dev, "ino": st.st_ino, "nlink": st.st_nlink,
         "apparent_bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "disk_bytes": st.st_blocks * 512,
         "freed_bytes": st.st_blocks * 512, "model": None, "note": None}
    e.update(kw)
    return e


def apply_entries(s, entries, command="prune", extra=()):
    plan = os.path.join(t.tempdir("hostile"), "plan.json")
    r = t.audit(s.root, "prune", "--plan", plan)
    doc = json.load(open(plan))
    doc["command"] = command
    doc["entries"] = entries
    json.dump(doc, open(plan, "w"))
    return t.audit(s.root, command, "--apply", "--yes", "--plan", plan, *extra)


with t.guard("a plan cannot switch the reference re-check off (M1)"):
    variants = (
        ("(a) digest of an unreferenced blob", lambda m, orphan: dict(digest=orphan)),
        ("(b) partials, check_refs false", lambda m, orphan: dict(category="partials", check_refs=False)),
        ("(c) digest null, check_refs false", lambda m, orphan: dict(digest=None, check_refs=False)),
        ("(d) temps, check_refs false, its own digest",
         lambda m, orphan: dict(category="temps", check_refs=False, digest=m["layers"][0]["digest"])),
    )
    for name, kw in variants:
        s = t.new_store("hostile-refs")
        m = t.add_gguf_model(s, "m:latest")
        orphan = s.add_blob(b"a real orphan" * 100)
        s.age_all(7200)
        ref = B(s, m["layers"][0]["digest"])
        cfg = B(s, m["config"]["digest"])
        for target in (ref, cfg):
            r = apply_entries(s, [entry_for(s, target, **kw(m, orphan))], extra=("--min-age", "0"))
            t.ok(os.path.exists(os.path.join(s.root, target)), "%s: referenced blob %s survives" % (name, target),
                 r.describe())
    # rm plans too
    r = apply_entries(s, [entry_for(s, ref, category="model-blob", check_refs=False, digest=None)], "rm")
    t.ok(os.path.exists(os.path.join(s.root, ref)), "rm plan: referenced blob survives", r.describe())
    # the legitimate orphan of such a plan still goes
    r = apply_entries(s, [entry_for(s, B(s, orphan), check_refs=False, digest=None, category="partials")])
    t.exit_code(r, 0, "plan with only an orphan")
    t.ok(not os.path.exists(s.blob_path(orphan)), "an unreferenced orphan is removed")
    check_clean(s, "after hostile plans")

with t.guard("a plan cannot remove a directory tree under manifests/ or a manifest (M2)"):
    s = t.new_store("hostile-tree")
    m = t.add_gguf_model(s, "m:latest")
    s.age_all(7200)
    for rel in ("manifests/registry.ollama.ai", "manifests/registry.ollama.ai/library",
                "manifests/registry.ollama.ai/library/m"):
        for kw in (dict(type="dir", empty_dir=False, category="temps", check_refs=False),
                   dict(type="dir", empty_dir=True, check_refs=False)):
            r = apply_entries(s, [entry_for(s, rel, **kw)], extra=("--min-age", "0"))
            t.ok(os.path.isdir(os.path.join(s.root, rel)), "%s (%r) survives" % (rel, kw), r.describe())
            t.ok(os.path.exists(m["path"]), "the manifest survives", r.describe())
    man = "manifests/registry.ollama.ai/library/m/latest"
    r = apply_entries(s, [entry_for(s, man, category="empty-dirs")])
    t.exit_code(r, 16, "a prune plan naming a manifest file is rejected")
    t.ok(os.path.exists(m["path"]), "manifest survives a prune plan")
    os.makedirs(os.path.join(s.blobs, "somedir"))
    s.write_raw("blobs/somedir/x", b"x")
    r = apply_entries(s, [entry_for(s, "blobs/somedir", category="temps", check_refs=False)],
                      extra=("--min-age", "0"))
    t.ok(os.path.exists(os.path.join(s.blobs, "somedir", "x")), "a foreign directory in blobs/ is never removed",
         r.describe())
    r = apply_entries(s, [entry_for(s, "blobs", category="temps")])
    t.exit_code(r, 16, "blobs itself is not a plan path")
    check_clean(s, "after hostile dir plans")

# ------------------------------------------------------------------ symlink loops (M4), deep empty dirs (M7)
with t.guard("a symlink loop under manifests/ does not make prune or rm exponential (M4)"):
    s = t.new_store("loop")
    m = t.add_gguf_model(s, "m:latest")
    t.add_gguf_model(s, "other:latest", seed="o")
    orphan = s.add_blob(b"orphan in a looping store" * 10)
    s.age_all(7200)
    os.makedirs(os.path.join(s.manifests, "x"))
    for i in range(1, 9):
        os.symlink(".", os.path.join(s.manifests, "x", "l%d" % i))
    os.symlink("..", os.path.join(s.manifests, "x", "up"))
    t0 = time.time()
    r = t.audit(s.root, "prune", "--format", "json", timeout=60)
    t.ok(B(s, orphan) in listed(r.json()), "orphan listed (the loop does not make the refset incomplete)",
         r.describe())
    r = t.audit(s.root, "prune", "--apply", "--yes", "--force", timeout=60)
    t.ok(not os.path.exists(s.blob_path(orphan)), "orphan removed", r.describe())
    r = t.audit(s.root, "rm", "other", "--apply", "--yes", "--force", timeout=60)
    t.ok(r.code in (0, 1), "rm in a looping store", r.describe())
    # No wall-clock bound (a busy machine is slow, not wrong): the per-command
    # timeouts above catch an exponential walk, which never finishes.
    print("loop store: prune, prune --apply, rm took %.1f s" % (time.time() - t0))
    check_clean(s, "after loop")

with t.guard("empty directories deeper than 4 levels can be removed (M7)"):
    s = t.new_store("deep")
    t.add_gguf_model(s, "m:latest")
    os.makedirs(os.path.join(s.manifests, "a/b/c/d/e/f"))
    r = t.audit(s.root, "prune", "--what", "empty-dirs", "--min-age", "0", "--apply", "--yes")
    t.exit_code(r, 0, "deep empty dirs")
    t.ok(not os.path.exists(os.path.join(s.manifests, "a")), "manifests/a removed", r.describe())
    t.ok(os.path.isdir(s.manifests), "manifests/ kept")

# ------------------------------------------------------------------ quarantine and symlinked dirs (S2, S4, S5)
with t.guard("a refused quarantine writes nothing into the store (S2)"):
    s = t.new_store("qinside")
    t.add_gguf_model(s, "m:latest")
    o = s.add_blob(b"orphan" * 100)
    s.age_all(7200)
    before = t.snapshot(s.root)
    for q in (os.path.join(s.blobs, "q"), os.path.join(s.manifests, "q"), os.path.join(s.root, "q"),
              os.path.join(s.root, "sub", "q"), s.root):
        r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
        t.exit_code(r, 8, "quarantine %s refused" % q)
        t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing written for %s" % q)
    # a symlink from outside into the store counts as inside
    link = os.path.join(t.tempdir("qlink"), "into-store")
    os.symlink(s.root, link)
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", os.path.join(link, "q"))
    t.exit_code(r, 8, "quarantine through a symlink into the store refused")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing written through the symlink")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", "/nonexistent-oa/deeper/q")
    t.exit_code(r, 8, "unresolvable quarantine parent refused")
    t.ok(os.path.exists(s.blob_path(o)), "orphan untouched")

with t.guard("a quarantine inside the target of a symlinked manifests/ is refused (S2)"):
    s = t.new_store("qman")
    t.add_gguf_model(s, "m:latest")
    o = s.add_blob(b"orphan" * 100)
    s.age_all(7200)
    real = os.path.join(t.tempdir("realman"), "manifests")
    os.rename(s.manifests, real)
    os.symlink(real, s.manifests)
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", os.path.join(real, "q"))
    t.exit_code(r, 8, "refused")
    t.ok(not os.path.exists(os.path.join(real, "q")), "nothing created in manifests/'s target")

with t.guard("a symlinked blobs/ is pruned through the link; its blobs-only target is refused (S4, issue 19)"):
    s = t.new_store("blobslink")
    info = t.add_gguf_model(s, "m:latest")
    o = s.add_blob(b"orphan" * 100)
    s.age_all(7200)
    real = os.path.join(t.tempdir("realblobs"), "blobs")
    os.rename(s.blobs, real)
    os.symlink(real, s.blobs)
    r = t.audit(os.path.dirname(real), "prune", "--apply", "--yes")
    t.exit_code(r, 8, "the directory holding only blobs/ is refused")
    t.contains(r.err, "no manifests/ or manifests-v2/ here", "says why")
    t.ok(os.path.exists(os.path.join(real, "sha256-" + o.split(":")[1])), "orphan untouched there")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", os.path.join(t.tempdir("qbl"), "q"))
    t.exit_code(r, 8, "--quarantine through the symlinked blobs/ is refused (restore could not put it back)")
    t.contains(r.err, "--quarantine does not work through it", "says why")
    t.ok(os.path.exists(os.path.join(real, "sha256-" + o.split(":")[1])), "orphan untouched by the refusal")
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 0, "the store that owns the manifests prunes through its symlinked blobs/")
    t.not_contains(r.out + r.err, "Not a directory", "no per-entry failures")
    t.ok(not os.path.exists(os.path.join(real, "sha256-" + o.split(":")[1])), "orphan removed")
    t.eq([l["digest"] for l in info["layers"] if not os.path.exists(s.blob_path(l["digest"]))], [],
         "the model's blobs are kept")

with t.guard("a quarantine run reports bytes moved, not freed (S5)"):
    s = t.new_store("qmoved")
    t.add_gguf_model(s, "m:latest")
    o = s.add_blob(b"orphan" * 1000)
    s.age_all(7200)
    q = os.path.join(t.tempdir("qm"), "q")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "quarantine")
    t.contains(r.out, "moved", "says moved")
    # issue 23: the last line says outright that a move freed nothing on disk
    last = r.out.splitlines()[-1]
    t.contains(last, "0 B freed on disk", "the summary says nothing was freed on disk")
    t.not_contains(last.replace("0 B freed on disk", ""), "freed", "the summary claims no bytes freed")
    t.run("restore", q, "--all")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q, "--format", "json")
    res = r.json()["stores"][0]["result"]
    t.eq(res.get("freed_bytes"), 0, "nothing freed")
    t.ok(res.get("moved_bytes", 0) > 0, "bytes moved reported: %r" % res)

# ------------------------------------------------------------------ hostile part files (M5), JSON documents
with t.guard("huge or negative Size/Completed in -partial-N files do not overflow (M5)"):
    s = t.new_store("partov")
    t.add_gguf_model(s, "m:latest")
    for k, (sz, done) in enumerate(((9223372036854775807, 9223372036854775807),
                                    (9223372036854775807, 9223372036854775807), (-5, -9))):
        hexd = hashlib.sha256(b"hostile partial %d" % (k // 2)).hexdigest()
        s.write_raw("blobs/sha256-%s-partial" % hexd, b"p" * 10)
        s.write_raw("blobs/sha256-%s-partial-%d" % (hexd, k),
                    json.dumps({"N": k, "Offset": 0, "Size": sz, "Completed": done}))
    s.age_all(7200)
    for args in (("du",), ("du", "--format", "json"), ("prune",), ("prune", "--format", "json")):
        r = t.audit(s.root, *args)
        t.exit_code(r, 0, " ".join(args))
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 0, "prune --apply")

with t.guard("multi-store JSON is one complete document when the last store fails"):
    s = t.new_store("json1")
    t.add_gguf_model(s, "alpha:latest")
    s2 = t.new_store("json2")
    t.add_gguf_model(s2, "beta:latest")
    for args in (("prune", "--format", "json"), ("rm", "alpha", "--format", "json"),
                 ("du", "--format", "json")):
        r = t.run("--store", s.root, "--store", s2.root, *args)
        try:
            json.loads(r.out)
            t.ok(True, "valid JSON")
        except ValueError:
            t.fail("%s: stdout is not one JSON document: %r" % (args, r.out[-200:]))
        r = t.run("--store", s.root, "--store", "/nonexistent-oa-store", *args)
        try:
            json.loads(r.out)
            t.ok(True, "valid JSON")
        except ValueError:
            t.fail("%s (missing last store): stdout is not one JSON document: %r" % (args, r.out[-200:]))


# ------------------------------------------------------------------ symlinked blobs in use (item 2)
def plan_entry(s, rel, category):
    st = os.lstat(os.path.join(s.root, rel))
    typ = "dir" if stat.S_ISDIR(st.st_mode) else "symlink" if stat.S_ISLNK(st.st_mode) else "file"
    return {"path": rel, "category": category, "digest": None, "type": typ, "dev": st.st_dev,
            "ino": st.st_ino, "nlink": st.st_nlink, "apparent_bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def symlinked_weights(tag, into=None):
    """A model whose weights blob is a symlink to blobs/model.gguf (or into
    blobs/<into>/x), the target 2 days old."""
    s = t.new_store(tag)
    m = t.add_gguf_model(s, "m:latest", seed=tag)
    F = B(s, m["layers"][0]["digest"])
    if into:
        os.makedirs(os.path.join(s.blobs, into))
        target_rel = "blobs/%s/x" % into
        link = "%s/x" % into
    else:
        target_rel, link = "blobs/model.gguf", "model.gguf"
    os.rename(os.path.join(s.root, F), os.path.join(s.root, target_rel))
    os.symlink(link, os.path.join(s.root, F))
    old = time.time() - 2 * 86400
    for p in (target_rel, F) + (("blobs/" + into,) if into else ()):
        os.utime(os.path.join(s.root, p), (old, old), follow_symlinks=False)
    s.age_all(2 * 86400)
    return s, m, F, target_rel


with t.guard("the target of a symlinked blob in use is never pruned (foreign file, crafted plans)"):
    s, m, F, target = symlinked_weights("symtarget")
    check_clean(s, "premise")
    r = t.audit(s.root, "prune", "--what", "foreign", "--format", "json")
    doc = r.json()
    t.ok(target not in listed(doc), "the symlink's target is not planned", r.out[-1500:])
    t.contains(kept(doc).get(target, {}).get("note") or "", "symlinked blob",
               "kept, with the reason")
    r = t.audit(s.root, "prune", "--what", "foreign", "--apply", "--yes")
    t.exit_code(r, 0, "prune --what foreign --apply")
    t.not_contains(r.out, "removed " + target, "not removed")
    t.ok(os.path.exists(os.path.join(s.root, target)), "the target is still there")
    check_clean(s, "after prune --what foreign")
    # a crafted prune plan naming the target
    plan = os.path.join(t.tempdir("symplan"), "plan.json")
    t.audit(s.root, "prune", "--plan", plan)
    doc = json.load(open(plan))
    doc["entries"] = [plan_entry(s, target, "foreign")]
    json.dump(doc, open(plan, "w"))
    r = t.audit(s.root, "prune", "--apply", "--yes", "--plan", plan)
    t.ok(os.path.exists(os.path.join(s.root, target)), "a crafted prune plan does not remove it", r.describe())
    t.contains(r.out, "resolves to it", "skipped, with the reason")
    # a crafted rm plan (rm plans may name any blobs/<name>)
    t.add_gguf_model(s, "other:latest", seed="other")
    t.audit(s.root, "rm", "other:latest", "--plan", plan)
    doc = json.load(open(plan))
    doc["entries"].append(plan_entry(s, target, "model-blob"))
    json.dump(doc, open(plan, "w"))
    r = t.audit(s.root, "rm", "--apply", "--yes", "--plan", plan)
    t.ok(os.path.exists(os.path.join(s.root, target)), "a crafted rm plan does not remove it", r.describe())
    check_clean(s, "after crafted plans")

with t.guard("a split-gguf temp dir holding the target of a symlinked blob in use is kept"):
    s, m, F, target = symlinked_weights("symtree", into="split-gguf-123")
    check_clean(s, "premise")
    r = t.audit(s.root, "prune", "--format", "json")
    doc = r.json()
    t.ok("blobs/split-gguf-123" not in listed(doc), "the temp dir is not planned", r.out[-1500:])
    t.contains(kept(doc).get("blobs/split-gguf-123", {}).get("note") or "", "symlinked blob", "kept, with the reason")
    r = t.audit(s.root, "prune", "--apply", "--yes")
    t.exit_code(r, 0, "prune --apply")
    t.ok(os.path.exists(os.path.join(s.root, target)), "the tree survives")
    plan = os.path.join(t.tempdir("symplan2"), "plan.json")
    t.audit(s.root, "prune", "--plan", plan)
    doc = json.load(open(plan))
    doc["entries"] = [plan_entry(s, "blobs/split-gguf-123", "temps")]
    json.dump(doc, open(plan, "w"))
    r = t.audit(s.root, "prune", "--apply", "--yes", "--plan", plan)
    t.ok(os.path.exists(os.path.join(s.root, target)), "a crafted plan does not remove the tree", r.describe())
    t.contains(r.out, "symlinked blob", "skipped, with the reason")
    check_clean(s, "after prune of the temp dir")

with t.guard("rm keeps a blob that another model's symlinked blob resolves to"):
    s = t.new_store("rmsym")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    b = t.add_gguf_model(s, "beta:latest", seed="b")
    lic = s.layer("license", "beta's license, stored as a link to alpha's weights")
    os.unlink(s.blob_path(lic["digest"]))
    os.symlink(B(s, a["layers"][0]["digest"])[len("blobs/"):], s.blob_path(lic["digest"]))
    s.add_manifest("beta:latest", b["config"], b["layers"] + [lic])
    check_clean(s, "premise")
    r = t.audit(s.root, "rm", "alpha:latest", "--format", "json")
    doc = r.json()["stores"][0]
    wa = B(s, a["layers"][0]["digest"])
    t.ok(wa not in [e["path"] for e in doc["entries"]], "alpha's weights are not planned", r.out[-1500:])
    t.contains(kept({"stores": [doc]}).get(wa, {}).get("note") or "", "symlinked blob", "kept, with the reason")
    r = t.audit(s.root, "rm", "alpha:latest", "--apply", "--yes")
    t.exit_code(r, 0, "rm alpha")
    t.ok(os.path.exists(s.blob_path(a["layers"][0]["digest"])), "alpha's weights survive")
    check_clean(s, "after rm alpha")

# ------------------------------------------------------------------ quarantine ownership (item 6)
with t.guard("a quarantine directory that another user owns or can write is refused"):
    s, j = junk_store("qown")
    base = t.tempdir("qown")
    q = os.path.join(base, "q")
    os.mkdir(q)
    os.chmod(q, 0o777)
    before = t.snapshot(s.root)
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 8, "a world-writable quarantine is refused")
    t.contains(r.err, "writable by its group or others", "says why")
    os.chmod(q, 0o720)
    r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 8, "a group-writable quarantine is refused")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing moved")
    t.eq(os.listdir(q), [], "nothing written into it")
    if t.IS_ROOT:
        os.chmod(q, 0o700)
        os.chown(q, 23005, 23005)
        r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
        t.exit_code(r, 8, "a quarantine owned by another uid is refused")
        t.contains(r.err, "owned by uid 23005", "says why")
        t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing moved")
        # restore: a good quarantine, then each part made another user's
        q2 = os.path.join(base, "q2")
        r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q2)
        t.exit_code(r, 0, "quarantine into a directory of our own")
        moved = t.snapshot(s.root)
        for part, how in (("", "chmod"), ("", "chown"), ("files", "chmod"), ("files", "chown"),
                          ("index.json", "chmod"), ("index.json", "chown")):
            p = os.path.join(q2, part) if part else q2
            mode, st = os.stat(p).st_mode & 0o7777, os.stat(p)
            if how == "chmod":
                os.chmod(p, mode | 0o022)
            else:
                os.chown(p, 23005, 23005)
            r = t.run("restore", q2, "--all")
            t.exit_code(r, 8, "restore refuses when %s is %s" % (part or "DIR", how + "ed"))
            t.eq(t.diff_snapshots(moved, t.snapshot(s.root)), [], "nothing restored (%s %s)" % (part or "DIR", how))
            os.chmod(p, mode)
            os.chown(p, st.st_uid, st.st_gid)
        r = t.run("restore", q2, "--all")
        t.exit_code(r, 0, "restore of the untouched quarantine")
        strip = lambda snap: {k: (v[0], v[1], v[3], v[4]) if v[0] == 0o040000 else v for k, v in snap.items()}
        t.eq(t.diff_snapshots(strip(before), strip(t.snapshot(s.root))), [], "everything back")
    else:
        t.skip("not root: the another-owner cases need chown")

# ------------------------------------------------------------------ --plan with several stores (item 7)
with t.guard("--plan with --all-users is refused, nothing is written"):
    import multistore as ms
    m7 = ms.Machine()
    plan = os.path.join(t.tempdir("allplan"), "plan.json")
    r = m7.run("prune", "--all-users", "--plan", plan)
    t.exit_code(r, 16, "prune --all-users --plan")
    t.contains(r.err, "one store at a time", "says why")
    t.ok(not os.path.exists(plan), "no plan written")
    r = m7.run("prune", "--all-users", "--apply", "--yes", "--plan", plan)
    t.exit_code(r, 16, "prune --all-users --apply --plan")

# ------------------------------------------------------------------ a pull lands between two batches
with t.guard("a manifest written between two batches of removals keeps its blobs"):
    import threading
    s = t.new_store("midpull")
    t.add_gguf_model(s, "keep:latest", seed="k")
    orphans = [s.add_blob(oa.det_bytes(100 + i, "mid%d" % i)) for i in range(150)]
    s.age_all(7200)
    pdir = t.tempdir("pause")
    box, seen, at_pull = {}, [], {}

    def pull_lands():
        """What a pull writes last: a manifest naming blobs already there."""
        left = [d for d in orphans if os.path.exists(s.blob_path(d))]
        at_pull["left"] = left
        layers = [{"mediaType": "application/vnd.ollama.image.layer", "digest": d,
                   "size": os.path.getsize(s.blob_path(d))} for d in left]
        s.add_manifest("pulled:latest", layers[0], layers[1:])

    args = ("--store", s.root, "prune", "--apply", "--yes")
    th = threading.Thread(target=lambda: box.setdefault(
        "r", t.run(*args, env={"OA_TEST_APPLY_PAUSE": pdir})))
    th.start()
    while th.is_alive() or [n for n in os.listdir(pdir) if not n.startswith(".")]:
        for n in sorted(n for n in os.listdir(pdir) if not n.startswith(".")):
            if n == "refresh-1":
                pull_lands()
            seen.append(n)
            os.unlink(os.path.join(pdir, n))
        time.sleep(0.005)
    th.join()
    r = box["r"]
    t.exit_code(r, 0, "prune --apply with a pull landing mid-apply")
    t.contains(seen, "refresh-1", "the apply re-read the manifests between two batches")
    left = at_pull.get("left", [])
    t.ok(0 < len(left) < len(orphans), "the pull landed after some orphans went and before the rest",
         len(left))
    gone = [d for d in left if not os.path.exists(s.blob_path(d))]
    t.eq(len(gone), 0, "no blob the new manifest names was removed", gone[:3])
    t.eq(r.out.count("a manifest references it now"), len(left), "each is skipped, saying why")
    check_clean(s, "after a pull mid-apply")

t.done()
