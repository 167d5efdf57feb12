#!/usr/bin/env python3
"""Stores that share blob files (docs/multi-store.md, "Stores that share
blobs"; issue 19): nothing another store references is pruned.

- a blobs/ moved to a bigger disk behind a symlink: the directory holding it
  has no manifests, so prune there cannot tell what is referenced (refused);
  the store that owns the manifests prunes through its symlinked blobs/;
- store 2's blobs/ is a symlink to store 1's (and a bind mount, as root);
- store 2's manifests-v2 tag is a symlink to store 1's manifest blob;
- a blob hard-linked from elsewhere is kept (cannot tell).

The other stores are found the way `stores` finds them: a fake machine
(OLLAMA_AUDIT_SYSROOT with its own etc/passwd) puts them in users' homes.
"""
import os
import shutil
import subprocess

import clitest as t
import oastore as oa


def machine(tag):
    """A fake sysroot with a passwd naming alice and bob (homes under it)."""
    root = t.tempdir(tag)
    os.makedirs(os.path.join(root, "etc"))
    with open(os.path.join(root, "etc", "passwd"), "w") as f:
        f.write("alice:x:23002:23000::/home/alice:/bin/sh\n")
        f.write("bob:x:23003:23000::/home/bob:/bin/sh\n")
    return root


def home_store(sysroot, user):
    return os.path.join(sysroot, "home", user, ".ollama", "models")


def env_of(sysroot):
    return {"OLLAMA_AUDIT_SYSROOT": sysroot}


def prune_apply(root, env, *extra):
    return t.run("--store", root, "prune", "--apply", "--yes", "--min-age", "0", *extra, env=env)


def blob_files(info, store):
    return [store.blob_path(l["digest"]) for l in info["layers"]] + [store.blob_path(info["config"]["digest"])]


def all_exist(paths):
    return [p for p in paths if not os.path.exists(p)]


def orphan(store, text="an orphan nobody references"):
    return store.blob_path(store.add_blob(text))


# ---------------------------------------------------------------- 1. blobs/ moved behind a symlink
t.section("blobs/ moved to another disk behind a symlink")
if True:
    sysroot = machine("moved")
    real = oa.Store(home_store(sysroot, "alice"))
    info = t.add_gguf_model(real, "tiny:latest")
    data = os.path.join(t.tempdir("bigdisk"), "DATA")
    os.makedirs(data)
    shutil.move(real.blobs, os.path.join(data, "blobs"))
    os.symlink(os.path.join(data, "blobs"), real.blobs)
    junk = orphan(real)
    needed = blob_files(info, real)
    env = env_of(sysroot)

    r = prune_apply(data, env)
    t.ok(r.code != 0, "prune --apply on the directory holding only blobs/ is refused", r.describe())
    t.eq(all_exist(needed), [], "every blob the real store's manifests reference is still there")
    t.contains(r.err, "no manifests/", "the refusal says why: no manifests here")
    t.contains(r.err, real.root, "and names the store whose blobs/ links here")

    r = t.run("--store", data, "prune", "--format", "json", "--min-age", "0", env=env)
    planned = [e["path"] for p in r.json().get("stores", []) for e in p.get("entries", [])]
    t.eq([p for p in planned if p.startswith("blobs/sha256-")], [], "its dry run plans no complete blob",
         planned)

    r = prune_apply(real.root, env)
    t.eq(r.code, 0, "prune --apply on the store that owns the manifests runs", r.describe())
    t.eq(all_exist(needed), [], "it keeps every referenced blob")
    t.ok(not os.path.exists(junk), "and removes the orphan through its symlinked blobs/", r.describe())
    t.not_contains(r.err, "run against the target store", "no longer sends the user to the blobs-only dir")

# ---------------------------------------------------------------- 2. blobs/ shared by a symlink
def two_stores(tag):
    sysroot = machine(tag)
    s1 = oa.Store(home_store(sysroot, "alice"))
    a = t.add_gguf_model(s1, "alpha:latest", seed="a")
    s2root = home_store(sysroot, "bob")
    os.makedirs(s2root)
    os.symlink(s1.blobs, os.path.join(s2root, "blobs"))
    s2 = oa.Store(s2root)
    b = t.add_gguf_model(s2, "beta:latest", seed="b")
    return sysroot, s1, a, s2, b


t.section("store 2's blobs/ is a symlink to store 1's")
if True:
    sysroot, s1, a, s2, b = two_stores("symlinked")
    env = env_of(sysroot)
    a_files, b_files = blob_files(a, s1), blob_files(b, s2)
    junk = orphan(s1)

    r = t.run("--store", s1.root, "--store", s2.root, "prune", "--format", "json", "--min-age", "0",
              env={"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")})
    plans = r.json().get("stores", [])
    planned = [e["path"] for p in plans for e in p.get("entries", [])]
    t.eq(len(plans), 2, "a plan for each store", r.out)
    t.eq([f for f in a_files + b_files if "blobs/" + os.path.basename(f) in planned], [],
         "the dry run naming both stores plans no referenced blob", planned)
    t.eq([[w["store"] for w in p.get("shared_with", [])] for p in plans], [[s2.root], [s1.root]],
         "each plan's json names the other store (shared_with)")

    r = t.run("--store", s1.root, "check", "--format", "json", env=env)
    orphans = [f["path"] for st in r.json().get("stores", []) for f in st.get("findings", [])
               if f["code"] == "orphan-blob"]
    t.eq(orphans, ["blobs/" + os.path.basename(junk)], "check calls only the true orphan an orphan-blob "
         "(not store 2's blobs): check and prune agree")

    r = t.run("--all-users", "stores", "--format", "json", env=env)
    rows = {x["root"]: x.get("shares_blobs_with") for x in r.json().get("stores", [])}
    t.eq(rows, {s1.root: [s2.root], s2.root: [s1.root]}, "stores: each names the store it shares blobs/ with")
    t.eq(r.json().get("duplicates", {}).get("already_shared_bytes"), 0,
         "one blobs/ directory holds no duplicates: nothing reported as already shared")

    r = prune_apply(s1.root, env)
    t.eq(r.code, 0, "prune --apply on store 1 runs", r.describe())
    t.eq(all_exist(b_files), [], "store 2's blobs survive the prune of store 1")
    t.eq(all_exist(a_files), [], "store 1's own blobs survive")
    t.ok(not os.path.exists(junk), "the true orphan is removed")
    t.contains(r.err, s2.root, "stderr names the store it protected")

    junk = orphan(s1, "another orphan")
    r = prune_apply(s2.root, env)
    t.eq(r.code, 0, "prune --apply on store 2 (through its symlinked blobs/) runs", r.describe())
    t.eq(all_exist(a_files), [], "store 1's blobs survive the prune of store 2")
    t.eq(all_exist(b_files), [], "store 2's own blobs survive")
    t.contains(r.err, s1.root, "stderr names store 1")


t.section("store 2's blobs/ is a bind mount of store 1's")
if True:
    why = None
    if not t.IS_ROOT:
        why = "not root: cannot bind-mount"
    else:
        sysroot = machine("bind")
        s1 = oa.Store(home_store(sysroot, "alice"))
        a = t.add_gguf_model(s1, "alpha:latest", seed="a")
        s2root = home_store(sysroot, "bob")
        os.makedirs(os.path.join(s2root, "blobs"))
        m = subprocess.run(["mount", "--bind", s1.blobs, os.path.join(s2root, "blobs")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if m.returncode != 0:
            why = "mount --bind failed here: %s" % m.stderr.decode(errors="replace").strip()
    if why:
        t.skip("bind mount: " + why)
    else:
        try:
            s2 = oa.Store(s2root)
            b = t.add_gguf_model(s2, "beta:latest", seed="b")
            r = prune_apply(s1.root, env_of(sysroot))
            t.eq(r.code, 0, "prune --apply on store 1 runs", r.describe())
            t.eq(all_exist(blob_files(b, s2)), [], "store 2's blobs survive (bind mount)")
            t.contains(r.err, s2root, "stderr names store 2")
        finally:
            subprocess.run(["umount", os.path.join(s2root, "blobs")])

t.section("rm in a store whose blobs/ another store shares")
if True:
    sysroot, s1, a, s2, b = two_stores("rm")
    # store 2 has alpha too: the same manifest, its blobs in the shared directory
    dst = s2.manifest_path("alpha:latest")
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy(s1.manifest_path("alpha:latest"), dst)
    r = t.run("--store", s1.root, "rm", "alpha:latest", "--apply", "--yes", env=env_of(sysroot))
    t.eq(r.code, 0, "rm --apply runs", r.describe())
    t.ok(not os.path.exists(s1.manifest_path("alpha:latest")), "store 1's tag is removed")
    t.eq(all_exist(blob_files(a, s1)), [], "the blobs store 2's alpha uses are kept")
    t.contains(r.err, s2.root, "stderr names store 2")

# ---------------------------------------------------------------- 3. a tag linking into another store
t.section("store 2's manifests-v2 tag is a symlink to store 1's manifest blob")
if True:
    sysroot = machine("taglink")
    s1 = oa.Store(home_store(sysroot, "alice"))
    t.add_gguf_model(s1, "alpha:latest", seed="a")
    s2 = oa.Store(home_store(sysroot, "bob"))
    t.add_gguf_model(s2, "beta:latest", seed="b")
    gguf = oa.tiny_llama_gguf(name="Shared gamma")
    layers = [s1.layer("model", gguf)]
    cfg = oa.gguf_config(s1, gguf, layers)
    mdigest, _ = s1.add_manifest_blob(cfg, layers)
    tag = os.path.join(s2.root, "manifests-v2", "registry.ollama.ai", "library", "gamma", "latest")
    os.makedirs(os.path.dirname(tag))
    os.symlink(s1.blob_path(mdigest), tag)
    protected = [s1.blob_path(mdigest), s1.blob_path(layers[0]["digest"]), s1.blob_path(cfg["digest"])]
    r = prune_apply(s1.root, env_of(sysroot), "--what", "all")
    t.eq(r.code, 0, "prune --apply --what all on store 1 runs", r.describe())
    t.eq(all_exist(protected), [], "the manifest blob store 2's tag links to (and what it names) survives")
    t.contains(r.err, s2.root, "stderr names store 2")

# ---------------------------------------------------------------- 4. hard links
t.section("a blob hard-linked from outside the store is kept")
if True:
    s1 = t.new_store("hl1")
    t.add_gguf_model(s1, "alpha:latest")
    junk = orphan(s1, "linked orphan")
    other = os.path.join(t.tempdir("hl2"), "copy")
    os.link(junk, other)
    r = t.run("--store", s1.root, "prune", "--format", "json", "--min-age", "0",
              env={"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")})
    kept = {e["path"]: e.get("note") for p in r.json().get("stores", []) for e in p.get("kept", [])}
    name = "blobs/" + os.path.basename(junk)
    t.ok(name in kept, "the hard-linked orphan is kept", r.out)
    t.contains(kept.get(name) or "", "link", "with why: its other links")

t.done()
