#!/usr/bin/env python3
"""`repair [MODEL...]`: a dry run by default; finds the damaged blobs
(missing, empty, truncated, of another size, or not what their name says:
the verify cache, or --verify), mends each from a good copy (another user's
store found by discovery, --from a bundle, a directory or a store), hashed
before use; with no good copy anywhere it moves the damaged file away so
that the printed `ollama pull NAME` really fetches it. Ollama's pull is
emulated as the spec describes it: it fetches only the blobs that are
missing, and keeps any file that is there."""

import json
import os
import shutil
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import multistore as ms  # noqa: E402
import oastore as oa  # noqa: E402

t.check_binary()


def manifest_of(root, name):
    with open(os.path.join(root, "manifests", *oa.parse_name(name)), "rb") as f:
        return json.load(f)


def emulated_pull(root, registry, name):
    """What `ollama pull NAME` does to the blobs: fetch those that are not
    there (a file that is there, at any size, is a cache hit)."""
    m = manifest_of(root, name)
    fetched = []
    for d in [m["config"]] + m["layers"]:
        p = os.path.join(root, "blobs", d["digest"].replace(":", "-"))
        if not os.path.lexists(p):
            shutil.copyfile(os.path.join(registry, "blobs", d["digest"].replace(":", "-")), p)
            fetched.append(d["digest"])
    return fetched


def repair(machine, root, *args):
    return machine.run("--store", root, "repair", *args)


def doc(r):
    return r.json() if r.out.startswith("{") else {}


def blob(root, digest):
    return os.path.join(root, "blobs", digest.replace(":", "-"))


M = ms.Machine()
BOB = M.stores["bob"]
ALICE = M.stores["alice"]
SHARED = M.infos["bob"][0]  # shared:latest: the same bytes in alice's, bob's and the service's stores

with t.guard("a truncated blob is mended from another user's store"):
    w = t.weight_layer(SHARED)["digest"]
    p = blob(BOB, w)
    good = open(p, "rb").read()
    st0 = os.stat(p)
    with open(p, "r+b") as f:
        f.truncate(len(good) // 3)
    before = t.snapshot(BOB)
    r = repair(M, BOB, "--format", "json")
    t.exit_code(r, 4, "a dry run finds damage: exit 4")
    d = doc(r)
    t.eq(d.get("schema"), "ollama-audit.repair/1", "its schema")
    items = d.get("blobs", [])
    t.eq([(x["digest"], x["damage"], x["state"]) for x in items], [(w, "truncated", "can-mend")],
         "the truncated weights, with a good copy")
    t.ok(items and items[0]["source"].startswith(M.sysroot) and items[0]["source_kind"] == "store",
         "found in another store on the machine", items)
    t.eq(t.diff_snapshots(before, t.snapshot(BOB)), [], "a dry run changes nothing")
    r = repair(M, BOB, "--apply", "--yes")
    t.exit_code(r, 0, "--apply mends it: exit 0")
    t.contains(r.out, "mended", "says so")
    t.eq(open(p, "rb").read(), good, "the weights are whole again")
    st = os.stat(p)
    t.eq((st.st_uid, stat.S_IMODE(st.st_mode)), (st0.st_uid, 0o644), "owned as the store's files, 0644")
    t.ne(st.st_ino, os.stat(blob(ALICE, w)).st_ino, "a copy of its own, not a link to alice's file")
    t.exit_code(M.run("--store", BOB, "verify"), 0, "bob's store verifies")
    t.eq([n for n in os.listdir(os.path.join(BOB, "blobs")) if len(n) != 71], [], "no temporary left")

with t.guard("without a good copy anywhere: moved away, and the printed pull then works"):
    s = t.new_store("alone")
    reg = t.add_gguf_model(s, "solo:latest", seed="solo", style="registry")
    mine = t.add_gguf_model(s, "handmade:latest", seed="hand")  # ollama create's form
    registry = os.path.join(t.tempdir("registry"), "models")
    shutil.copytree(s.root, registry)
    w = t.weight_layer(reg)["digest"]
    t.flip_last_byte(blob(s.root, w))  # the same size: only hashing tells
    # Ollama's pull alone does not mend it: the file is there
    t.eq(emulated_pull(s.root, registry, "solo:latest"), [], "a pull fetches nothing (the file is there)")
    empty = os.path.join(t.tempdir("vc"), "none.json")  # a cache that knows nothing
    t.exit_code(t.audit(s.root, "verify", "--cache", empty + ".other"), 4, "and the store stays broken")
    r = t.audit(s.root, "repair", "--cache", empty, "--format", "json")
    t.eq(doc(r).get("blobs"), [], "by size alone nothing is wrong")
    r = t.audit(s.root, "repair", "--cache", empty, "--verify", "--format", "json")
    d = doc(r)
    t.eq([(x["damage"], x["known_by"], x["state"]) for x in d.get("blobs", [])],
         [("digest-mismatch", "hashed", "can-remove")], "--verify finds it; no good copy")
    t.eq([a["command"] for a in d.get("advice", [])], ["ollama pull solo:latest"], "the exact pull to run")
    bad = open(blob(s.root, w), "rb").read()
    # without --quarantine, on a copy of the store: the damaged bytes go
    # (re-checked just before), and the pull then fetches the blob
    bare = os.path.join(t.tempdir("noq"), "models")
    shutil.copytree(s.root, bare)
    r = t.audit(bare, "repair", "--cache", empty, "--verify", "--apply", "--yes", "--format", "json")
    t.exit_code(r, 4, "without --quarantine: exit 4, a pull is still to do")
    t.eq([x["state"] for x in doc(r).get("blobs", [])], ["deleted"], "the damaged file is deleted")
    t.ok(not os.path.lexists(blob(bare, w)), "it is out of the way")
    t.eq([a["command"] for a in doc(r).get("advice", [])], ["ollama pull solo:latest"], "the pull to run")
    t.eq(emulated_pull(bare, registry, "solo:latest"), [w], "the printed pull fetches it")
    t.exit_code(t.audit(bare, "verify", "--cache", empty + ".bare"), 0, "and that store verifies")
    t.eq(open(blob(s.root, w), "rb").read(), bad, "the original store is as it was")
    q = os.path.join(t.tempdir("q"), "q")
    r = t.audit(s.root, "repair", "--cache", empty, "--verify", "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 4, "exit 4: a pull is still to do")
    t.contains(r.out, "ollama pull solo:latest", "prints the pull")
    t.ok(not os.path.lexists(blob(s.root, w)), "the damaged file is out of the way")
    held = os.listdir(os.path.join(q, "files"))
    t.eq([open(os.path.join(q, "files", h), "rb").read() == bad for h in held], [True], "kept in the quarantine")
    t.eq(emulated_pull(s.root, registry, "solo:latest"), [w], "now the pull fetches it")
    t.exit_code(t.audit(s.root, "verify"), 0, "and the store verifies")
    # a model made here: no registry has it
    hw = blob(s.root, t.weight_layer(mine)["digest"])
    with open(hw, "r+b") as f:
        f.truncate(10)
    r = t.audit(s.root, "repair", "handmade", "--format", "json")
    adv = doc(r).get("advice", [])
    t.eq([(a["model"], a["registry"], a["command"]) for a in adv], [("handmade:latest", False, None)],
         "a model made here gets no pull")
    t.contains(adv[0]["text"] if adv else "", "ollama create handmade:latest", "but how to recreate it")

with t.guard("the verify cache's finding counts; a blob several tags share is repaired once"):
    s = t.new_store("cache")
    a = t.add_gguf_model(s, "alpha:latest", seed="a", style="registry")
    # a second tag with the same manifest (ollama cp): it names the same blobs
    src = s.manifest_path("alpha:latest")
    dst = s.manifest_path("alpha:copy")
    shutil.copyfile(src, dst)
    w = t.weight_layer(a)["digest"]
    good_dir = os.path.join(t.tempdir("good"), "models")
    shutil.copytree(s.root, good_dir)
    t.flip_last_byte(blob(s.root, w))
    cache = os.path.join(t.tempdir("vc"), "cache.json")
    t.exit_code(t.audit(s.root, "verify", "--cache", cache), 4, "verify finds the corruption")
    r = t.audit(s.root, "repair", "--cache", cache, "--from", good_dir, "--format", "json")
    items = doc(r).get("blobs", [])
    t.eq(len(items), 1, "one blob, once")
    t.eq(items[0]["known_by"] if items else None, "verify-cache", "known from the verify cache, nothing hashed")
    t.eq(sorted(items[0]["models"]) if items else None, ["alpha:copy", "alpha:latest"], "every tag naming it")
    t.eq(items[0]["source_kind"] if items else None, "store", "--from a store")
    q = os.path.join(t.tempdir("q"), "quarantine")
    r = t.audit(s.root, "repair", "--cache", cache, "--from", good_dir, "--apply", "--yes", "--quarantine", q)
    t.exit_code(r, 0, "mended")
    t.exit_code(t.audit(s.root, "verify"), 0, "verifies")
    r = t.run("restore", q, "--format", "json")
    ops = r.json().get("operations", [])
    t.eq([(o["command"], o["held_entries"]) for o in ops], [("repair", 1)], "the damaged file is held, as a repair")
    held = os.listdir(os.path.join(q, "files"))
    t.eq(len(held), 1, "one file in the quarantine")
    t.ne(ms.sha256_file(os.path.join(q, "files", held[0])) if held else w[7:], w[7:], "and it is the damaged one")

with t.guard("--from a bundle and an unpacked one; a bad copy is never used"):
    s = t.new_store("frombundle")
    a = t.add_gguf_model(s, "beta:latest", seed="b", style="registry")
    out = os.path.join(t.tempdir("b"), "b.tar")
    t.exit_code(t.audit(s.root, "export", "beta", "-o", out), 0, "export")
    udir = os.path.join(t.tempdir("u"), "bundle")
    t.exit_code(t.audit(s.root, "export", "beta", "-o", udir + "/"), 0, "export -o DIR/")
    w = t.weight_layer(a)["digest"]
    good = open(blob(s.root, w), "rb").read()
    os.remove(blob(s.root, w))
    r = t.audit(s.root, "repair", "--from", out, "--format", "json")
    items = doc(r).get("blobs", [])
    t.eq([(x["damage"], x["source_kind"]) for x in items], [("missing", "bundle")], "missing; in the bundle")
    t.exit_code(t.audit(s.root, "repair", "--from", out, "--apply", "--yes"), 0, "mended from the tar")
    t.eq(open(blob(s.root, w), "rb").read(), good, "whole")
    with open(blob(s.root, w), "r+b") as f:
        f.truncate(5)
    t.exit_code(t.audit(s.root, "repair", "--from", udir, "--apply", "--yes"), 0, "mended from the directory")
    t.eq(open(blob(s.root, w), "rb").read(), good, "whole again")
    # a source whose copy is corrupt too: not used
    with open(blob(s.root, w), "r+b") as f:
        f.truncate(5)
    t.flip_last_byte(os.path.join(udir, "blobs", w.replace(":", "-")))
    r = t.audit(s.root, "repair", "--from", udir, "--format", "json")
    t.eq([x["state"] for x in doc(r).get("blobs", [])], ["can-remove"], "a copy that does not hash is no good copy")
    r = t.audit(s.root, "repair", "--from", os.path.join(t.tempdir("none"), "nothing"), "--format", "json")
    t.ok(doc(r).get("source_error"), "a --from that is not there is said", doc(r))

with t.guard("check, verify, show and report name repair for a damaged blob, not a pull"):
    s = t.new_store("remedy")
    a = t.add_gguf_model(s, "alpha:latest", seed="a", style="registry")
    b = t.add_gguf_model(s, "beta:latest", seed="b", style="registry")
    with open(blob(s.root, t.weight_layer(a)["digest"]), "r+b") as f:
        f.truncate(100)
    t.flip_last_byte(blob(s.root, t.weight_layer(b)["digest"]))
    fix_a = "ollama-audit repair alpha:latest --apply --store %s" % s.root
    fix_b = "ollama-audit repair beta:latest --apply --store %s" % s.root
    r = t.audit(s.root, "check")
    t.ok(any(ln.startswith("error") and ln.rstrip().endswith(fix_a)
             for ln in r.out.splitlines()), "check: a truncated blob's fix is repair", r.out)
    t.not_contains(r.out, "ollama pull", "never a pull, which keeps the damaged file")
    r = t.audit(s.root, "verify")
    t.ok(any(ln.startswith("error") and ln.rstrip().endswith(fix_b)
             for ln in r.out.splitlines()), "verify: a corrupt blob's fix is repair", r.out)
    t.not_contains(r.out, "ollama pull", "never a pull, which keeps the damaged file")
    r = t.audit(s.root, "show", "alpha")
    t.contains(" ".join(r.out.split()), "`ollama-audit repair alpha:latest --apply` mends them", "show says repair")
    r = t.audit(s.root, "show", "beta")
    t.contains(" ".join(r.out.split()), "`ollama-audit repair beta:latest --apply` mends it",
               "show, for what verify found corrupt")
    page = os.path.join(t.tempdir("page"), "r.html")
    t.audit(s.root, "report", "--output", page)
    html = open(page).read() if os.path.exists(page) else ""
    t.contains(html, fix_a, "report's remedy is check's fix: repair, the model and the store")
    t.not_contains(html, "ollama pull", "no pull for a damaged blob")

with t.guard("a default verify cache inside the store is never read: its planted failure removes nothing"):
    s, info = t.clean_store("planted")
    weights = info["layers"][0]["digest"]
    lib = os.path.join(s.manifests, "registry.ollama.ai", "library")
    planted = os.path.join(lib, "ollama-audit", "verify-cache.json")
    os.makedirs(os.path.dirname(planted))
    # the sound file as it is, "found corrupt": ours, mode 0600
    t.forged_cache(planted, blob(s.root, weights), weights.split(":")[1], failed="digest-mismatch")
    trusted = os.path.join(t.tempdir("planted-cache"), "vc.json")
    shutil.copyfile(planted, trusted)
    os.chmod(trusted, 0o600)
    r = t.audit(s.root, "repair", "--cache", trusted, "--format", "json")
    t.eq([b["digest"] for b in doc(r).get("blobs", [])], [weights],
         "the same cache outside the store, named, is read (so the one inside is a real test)", r.out)
    r = t.audit(s.root, "repair", "--apply", "--yes", env={"XDG_CACHE_HOME": lib})
    t.contains(r.err, "lies inside the store", "stderr says the default cache is not used", r.err)
    t.contains(r.out, "no damaged blob", "nothing to repair", r.out)
    t.ok(os.path.exists(blob(s.root, weights)), "the sound blob is still there")
    t.exit_code(t.audit(s.root, "verify", "--cache", trusted + ".new"), 0, "and the store verifies")

with t.guard("usage"):
    s, _ = t.clean_store("usage")
    t.exit_code(t.audit(s.root, "repair"), 0, "nothing damaged: exit 0")
    t.exit_code(t.audit(s.root, "repair", "--apply"), 16, "--apply without a terminal or --yes")
    t.exit_code(t.audit(s.root, "repair", "--quarantine", t.tempdir("q")), 16, "--quarantine without --apply")
    t.exit_code(t.audit(s.root, "repair", "nosuch"), 16, "an unknown model")
    t.exit_code(t.run("repair", "--all-users"), 16, "one store only")

t.done()
