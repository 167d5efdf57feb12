#!/usr/bin/env python3
"""Safety review of the deletion paths: nothing referenced is ever lost, and
nothing outside the store is removed, whatever the layout or the flags.

- a store whose blobs/ is a symlink into another store's blobs/, where that
  store is nowhere discovery looks (also through a chain of links): its
  referenced blobs are kept;
- a blobs/ that is a symlink to a directory that is no blob directory (here
  another store's root, holding its key): prune --what all, and a --plan
  naming the file, never remove a name Ollama does not write through it;
- repair --apply never deletes or sets aside a blob whose bytes hash to its
  name, whatever size a manifest declares for it (a tag naming the digest
  with the wrong size, beside the tag whose blob it is);
- repair --apply leaves a file judged corrupt alone when it was rewritten
  in place (same inode and size, new bytes) before the apply reached it;
- import --from a store whose blob is a symlink (into a third store) puts a
  regular file in the target, never a hard link to that symlink;
- export -o and --output never write inside a store that is not the one on
  the command line: the default store, another user's store;
- repair --apply with only a bad copy (the right size, the wrong bytes)
  treats the blob as having no good copy, never as mended or failed half-way;
- repair --from (and import --from) keeps a reflinked copy only when the
  copy itself hashes to its name: a source rewritten after the clone does
  not vouch for bytes the clone does not have;
- import writes a model's tags only while every blob they name is still
  there: an unreferenced blob it counted on (here already, over an hour
  old) that a server's start-up prune removes meanwhile stops its tags;
- a write refused because another run holds the store's lock names every
  writer that could (an import or a repair too).
"""
import copy
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time

import clitest as t
import multistore as ms
import oastore as oa


def prune_apply(root, *extra):
    return t.audit(root, "prune", "--apply", "--yes", "--min-age", "0", *extra)


def blob_files(info, store):
    return [store.blob_path(l["digest"]) for l in info["layers"]] + [store.blob_path(info["config"]["digest"])]


def missing(paths):
    return [p for p in paths if not os.path.exists(p)]


def plan_entry(root, rel):
    st = os.lstat(os.path.join(root, rel))
    return {"path": rel, "category": "foreign", "type": "file", "dev": st.st_dev, "ino": st.st_ino,
            "apparent_bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


with t.guard("blobs/ is a symlink into a store that discovery does not find: its blobs are kept"):
    base = t.tempdir("undiscovered")
    other = oa.Store(os.path.join(base, "srv", "models"))
    theirs = t.add_gguf_model(other, "theirs:latest")
    mine = oa.Store(os.path.join(base, "mine"))
    t.add_gguf_model(mine, "mine:latest")
    shutil.rmtree(mine.blobs)
    os.symlink(other.blobs, mine.blobs)
    needed = blob_files(theirs, other)

    r = t.audit(mine.root, "prune", "--format", "json", "--min-age", "0")
    planned = [e["path"] for p in r.json().get("stores", []) for e in p.get("entries", [])]
    t.eq([p for p in planned if p.startswith("blobs/sha256-")], [], "the dry run plans none of its blobs",
         planned)
    r = prune_apply(mine.root, "--what", "all")
    t.eq(missing(needed), [], "every blob the other store's manifest references is still there", r.describe())
    t.contains(r.err, other.root, "the other store is named as sharing the blob files")

with t.guard("blobs/ -> b/blobs/ -> c/blobs: what b and c reference is kept"):
    base = t.tempdir("linkchain")
    c = oa.Store(os.path.join(base, "c"))
    cinfo = t.add_gguf_model(c, "cee:latest")
    b = oa.Store(os.path.join(base, "b"))
    binfo = t.add_gguf_model(b, "bee:latest", seed="b")
    for n in os.listdir(b.blobs):
        os.rename(os.path.join(b.blobs, n), os.path.join(c.blobs, n))
    os.rmdir(b.blobs)
    os.symlink(os.path.join("..", "c", "blobs") + "/", b.blobs)
    a = oa.Store(os.path.join(base, "a"))
    t.add_gguf_model(a, "a:latest", seed="a")
    shutil.rmtree(a.blobs)
    os.symlink(b.blobs, a.blobs)
    needed = blob_files(cinfo, c) + blob_files(binfo, c)
    r = prune_apply(a.root)
    t.eq(missing(needed), [], "every blob b's and c's manifests reference is still there", r.describe())

with t.guard("blobs/ is a symlink to another store's root: no file Ollama does not write is removed there"):
    base = t.tempdir("linkedroot")
    home = oa.Store(os.path.join(base, "ollama"))
    t.add_gguf_model(home, "home:latest")
    key = os.path.join(home.root, "id_ed25519")
    with open(key, "w") as f:
        f.write("a private key\n")
    os.utime(key, (1, 1))
    mine = oa.Store(os.path.join(base, "mine"))
    t.add_gguf_model(mine, "mine:latest")
    shutil.rmtree(mine.blobs)
    os.symlink(home.root, mine.blobs)

    r = t.audit(mine.root, "prune", "--format", "json", "--what", "all", "--min-age", "0")
    planned = [e["path"] for p in r.json().get("stores", []) for e in p.get("entries", [])]
    t.eq(planned, [], "the dry run plans nothing through the link", planned)
    r = prune_apply(mine.root, "--what", "all")
    t.ok(os.path.exists(key), "the other store's key is still there", r.describe())

    plan = os.path.join(t.tempdir("linkedplan"), "plan.json")
    r = t.audit(mine.root, "prune", "--plan", plan, "--what", "all", "--min-age", "0")
    doc = json.load(open(plan))
    doc["entries"] = [plan_entry(mine.root, "blobs/id_ed25519")]
    json.dump(doc, open(plan, "w"))
    r = t.audit(mine.root, "prune", "--apply", "--yes", "--plan", plan)
    t.ok(os.path.exists(key), "a plan naming it does not remove it either", r.describe())
    t.contains(r.out, "blobs/ is a symlink", "the skip says why")

with t.guard("repair: a blob that hashes to its name is kept whatever size a manifest declares"):
    s, good = t.clean_store("sizeclash", name="good:latest")
    w = t.weight_layer(good)["digest"]
    path = s.blob_path(w)
    data = open(path, "rb").read()
    for name, delta in (("short:latest", -10), ("long:latest", 10)):
        layers = copy.deepcopy(good["layers"])
        layers[0]["size"] = len(data) + delta
        s.add_manifest(name, good["config"], layers)
    r = t.audit(s.root, "repair", "--format", "json")
    states = [(b["digest"], b["state"]) for b in r.json().get("blobs", [])]
    t.eq(states, [(w, "kept")], "the dry run keeps it", r.describe())
    for args in ((), ("--quarantine", os.path.join(t.tempdir("sizeclash-q"), "q"))):
        r = t.audit(s.root, "repair", "--apply", "--yes", *args)
        t.ok(os.path.isfile(path) and open(path, "rb").read() == data,
             "--apply%s leaves the good bytes in place" % (" --quarantine" if args else ""), r.describe())
        t.contains(r.out, "hash to its name", "says why it is kept")
        t.exit_code(r, 4, "the manifests' disagreement is left: exit 4")
    r = t.audit(s.root, "check", "good:latest")
    t.exit_code(r, 0, "good:latest still checks clean")


def paused_run(pdir, point, during, *args, var="OA_TEST_REPAIR_PAUSE"):
    """Run the binary with var=pdir (a pause hook); at point, call during()
    and let it go on."""
    box = {}
    th = threading.Thread(target=lambda: box.setdefault("r", t.run(*args, env={var: pdir})))
    th.start()
    done = False
    while th.is_alive():
        names = [n for n in os.listdir(pdir) if n.startswith(point)]
        if names and not done:
            during()
            done = True
        for n in names:
            os.unlink(os.path.join(pdir, n))
        time.sleep(0.01)
    th.join()
    t.ok(done, "the run paused at %s" % point)
    return box.get("r")


with t.guard("repair: a corrupt blob rewritten in place before the apply reaches it is left alone"):
    s, info = t.clean_store("inplace", name="fixed:latest")
    path = t.blob_file(s, t.weight_layer(info)["digest"])
    data = open(path, "rb").read()
    t.flip_last_byte(path)

    def put_back():
        with open(path, "r+b") as f:  # the same inode, the same size: as `cp` over it does
            f.write(data)
    r = paused_run(t.tempdir("inplace-pause"), "repair-apply", put_back,
                   "--store", s.root, "repair", "--verify", "--apply", "--yes")
    t.ok(os.path.isfile(path) and open(path, "rb").read() == data, "the good bytes written meanwhile are there",
         r.describe())
    t.contains(r.out, "changed since", "says it changed")

with t.guard("import --from: a source blob that is a symlink lands as a regular file, not as the symlink"):
    base = t.tempdir("linkedsrc")
    elsewhere = oa.Store(os.path.join(base, "c", "models"))
    src = oa.Store(os.path.join(base, "a", "models"))
    info = t.add_gguf_model(src, "linked:latest")
    w = t.weight_layer(info)["digest"]
    os.makedirs(elsewhere.blobs, exist_ok=True)
    shutil.move(src.blob_path(w), elsewhere.blob_path(w))
    os.symlink(os.path.relpath(elsewhere.blob_path(w), src.blobs), src.blob_path(w))
    dst = os.path.join(base, "b", "deeper", "models")
    os.makedirs(dst)
    r = t.run("--store", dst, "import", "--from", src.root, "linked:latest", "--apply", "--yes")
    t.exit_code(r, 0, "the import runs")
    landed = os.path.join(dst, "blobs", os.path.basename(src.blob_path(w)))
    t.ok(os.path.lexists(landed) and not os.path.islink(landed) and os.path.isfile(landed),
         "the weights are a regular file in the target", r.describe())
    r = t.run("--store", dst, "check", "linked:latest")
    t.exit_code(r, 0, "the imported model checks clean")

with t.guard("export -o and --output never write inside the default store while --store names another"):
    home = t.tempdir("otherhome")
    mine = oa.Store(os.path.join(home, ".ollama", "models"))
    info = t.add_gguf_model(mine, "mine:latest")
    src, _ = t.clean_store("exportsrc", name="theirs:latest")
    target = t.blob_file(mine, t.weight_layer(info)["digest"])
    before = t.snapshot(mine.root)
    for args in (("export", "theirs:latest", "-o", target),
                 ("export", "theirs:latest", "-o", os.path.join(mine.blobs, "bundle") + "/"),
                 ("list", "--output", target)):
        r = t.run("--store", src.root, *args, env={"HOME": home})
        t.exit_code(r, 16, "%s: refused" % args[0])
        t.contains(r.err, "inside the store", "%s: says why" % args[0])
    t.eq(t.diff_snapshots(before, t.snapshot(mine.root)), [], "the default store is as it was")

with t.guard("export -o never writes inside another user's store"):
    M = ms.Machine()
    bob, alice = M.stores["bob"], M.stores["alice"]
    a_info = M.infos["alice"][0]
    target = os.path.join(alice, "blobs", t.weight_layer(a_info)["digest"].replace(":", "-"))
    before = t.snapshot(alice)
    r = M.run("--store", bob, "export", M.infos["bob"][0]["name"], "-o", target)
    t.exit_code(r, 16, "refused")
    t.eq(t.diff_snapshots(before, t.snapshot(alice)), [], "alice's store is as it was")

with t.guard("repair --from a bad copy of the right size: no good copy, the damaged blob goes"):
    s, info = t.clean_store("badcopy", name="badcopy:latest")
    w = t.weight_layer(info)["digest"]
    good = open(s.blob_path(w), "rb").read()
    with open(s.blob_path(w), "r+b") as f:
        f.truncate(100)
    src = oa.Store(os.path.join(t.tempdir("badcopy-src"), "models"))
    with open(src.blob_path(w), "wb") as f:
        f.write(good[:-1] + bytes([good[-1] ^ 1]))
    q = os.path.join(t.tempdir("badcopy-q"), "q")
    r = t.audit(s.root, "repair", "--from", src.root, "--apply", "--yes", "--quarantine", q, "--format", "json")
    t.exit_code(r, 4, "damage left for a pull: exit 4, nothing failed")
    t.eq([(b["digest"], b["state"]) for b in r.json().get("blobs", [])], [(w, "removed")],
         "the damaged blob is moved into the quarantine", r.describe())
    t.ok(not os.path.exists(s.blob_path(w)), "it is no longer in blobs/")
    t.eq([n for n in os.listdir(s.blobs) if n[7:].isdigit()], [], "no temporary left")

def flipped(data):
    return data[:-1] + bytes([data[-1] ^ 1])


def sha256_of_bytes(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_of(path):
    with open(path, "rb") as f:
        return sha256_of_bytes(f.read())


with t.guard("repair --from: a reflinked copy is judged by its own bytes, not by the source's afterwards"):
    where, why = (t.tempdir("reflink"), None)
    mounted = None
    if not t.can_reflink(where):
        mounted, why = t.mount_btrfs()
        where = mounted
    if not where or not t.can_reflink(where):
        t.skip("[reflink] no filesystem that can reflink here (%s)" % (why or "cp --reflink fails"))
    else:
        try:
            store = oa.Store(os.path.join(where, "store"))
            info = t.add_gguf_model(store, "cloned:latest")
            w = t.weight_layer(info)["digest"]
            good = open(store.blob_path(w), "rb").read()
            with open(store.blob_path(w), "r+b") as f:
                f.truncate(len(good) // 2)
            source = oa.Store(os.path.join(where, "source"))
            source.add_blob(flipped(good))  # the right size, the wrong bytes
            os.rename(os.path.join(source.blobs, sha256_of_bytes(flipped(good)).replace(":", "-")),
                      source.blob_path(w))

            def make_source_good():
                with open(source.blob_path(w), "r+b") as f:
                    f.write(good)
            r = paused_run(t.tempdir("reflink-pause"), "reflinked", make_source_good,
                           "--store", store.root, "repair", "--from", source.root, "--apply", "--yes",
                           var="OA_TEST_LAND_PAUSE")
            p = store.blob_path(w)
            t.ok(not os.path.exists(p) or sha256_of(p) == w, "the store's blob is what its name says, or absent",
                 r.describe())
            t.not_contains(r.out, "mended", "nothing claims to be mended with the clone's bad bytes")
        finally:
            if mounted:
                subprocess.run(["umount", mounted])

with t.guard("import: a blob here already that vanishes before the tags are written stops them"):
    src, info = t.clean_store("vanish-src", name="vanish:latest")
    bundle = os.path.join(t.tempdir("vanish-bundle"), "b.tar")
    t.exit_code(t.audit(src.root, "export", "vanish:latest", "-o", bundle), 0, "exported")
    dst = oa.Store(os.path.join(t.tempdir("vanish-dst"), "models"))
    w = t.weight_layer(info)["digest"]
    shutil.copyfile(src.blob_path(w), dst.blob_path(w))  # an orphan here: left by an earlier rm
    os.utime(dst.blob_path(w), (1, 1))

    def server_prunes():  # the start-up prune: unreferenced and over an hour old
        os.unlink(dst.blob_path(w))
    r = paused_run(t.tempdir("vanish-pause"), "tags", server_prunes,
                   "--store", dst.root, "import", bundle, "--apply", "--yes", var="OA_TEST_IMPORT_PAUSE")
    tag = dst.manifest_path("vanish:latest")
    t.ok(not os.path.exists(tag), "no tag names the blob that is gone", r.describe())
    t.ne(r.code, 0, "the import says it did not add the model")
    t.contains(r.out + r.err, "no longer here", "and why")

with t.guard("a lock held by an import: the refusal names import among the writers"):
    src, info = t.clean_store("held-src", name="held:latest")
    bundle = os.path.join(t.tempdir("held-bundle"), "b.tar")
    t.exit_code(t.audit(src.root, "export", "held:latest", "-o", bundle), 0, "exported")
    dst, _ = t.clean_store("held-dst", name="other:latest")
    dst.add_blob(b"an orphan to prune", mtime=1)
    seen = {}

    def prune_meanwhile():
        seen["r"] = t.audit(dst.root, "prune", "--apply", "--yes", env={"OA_TEST_LOCK_WAIT_MS": "100"})
    paused_run(t.tempdir("held-pause"), "tags", prune_meanwhile,
               "--store", dst.root, "import", bundle, "--apply", "--yes", var="OA_TEST_IMPORT_PAUSE")
    r = seen.get("r")
    t.exit_code(r, 8, "the prune is refused while the import holds the lock")
    t.contains(r.err, "import", "the refusal names import among the writers")

t.done()
