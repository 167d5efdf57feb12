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

# ---------------------------------------------------------------- 3b. a blobs/ link however spelled
def linked_pair(tag, link):
    """Store A (found by nobody: no discovery here) and store B whose blobs/
    is a symlink `link(base)` leading to A's blobs/: (base, A, alpha, B,
    beta, env)."""
    base = t.tempdir(tag)
    a = oa.Store(os.path.join(base, "a"))
    alpha = t.add_gguf_model(a, "alpha:latest", seed="a")
    broot = os.path.join(base, "b")
    os.makedirs(broot)
    os.symlink(link(base), os.path.join(broot, "blobs"))
    b = oa.Store(broot)
    beta = t.add_gguf_model(b, "beta:latest", seed="b")
    return base, a, alpha, b, beta, {"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")}


def hops(n):
    """A chain of n relative symlinks, the last leading to ../a/blobs: the
    text of B's blobs/ link to its first."""
    def make(base):
        d = os.path.join(base, "hops")
        os.makedirs(d)
        os.symlink("../a/blobs", os.path.join(d, "l0"))
        for i in range(1, n):
            os.symlink("l%d" % (i - 1), os.path.join(d, "l%d" % i))
        return "../hops/l%d" % (n - 1)
    return make


for spelled, link in (("../a/blobs/.", lambda base: "../a/blobs/."),
                      ("../a/blobs//", lambda base: "../a/blobs//"),
                      ("./../b/../a/blobs", lambda base: "./../b/../a/blobs"),
                      ("nine hops of relative symlinks", hops(9)),
                      ("39 hops (with B's own link, the kernel's limit of 40)", hops(39))):
    t.section("B's blobs/ is a symlink to A's, spelled %s" % spelled)
    base, a, alpha, b, beta, env = linked_pair("spelled", link)
    junk = orphan(a, "an orphan in the shared directory")
    r = prune_apply(b.root, env)
    t.eq(r.code, 0, "prune --apply on B runs", r.describe())
    t.eq(all_exist(blob_files(alpha, a)), [], "every blob only A's models use survives")
    t.eq(all_exist(blob_files(beta, b)), [], "B's own blobs survive")
    t.ok(not os.path.exists(junk), "the true orphan goes")
    t.contains(r.err, "also keeps what 1 other store sharing its blob files references", "stderr says it "
               "looked for the stores sharing the blob files")
    t.contains(r.err, os.path.realpath(a.root), "and names A, the store owning them")

t.section("B's blobs/ is 40 hops away (41 symlinks): the kernel's ELOOP is a refusal")
if True:
    base = t.tempdir("eloop")
    a = oa.Store(os.path.join(base, "a"))
    alpha = t.add_gguf_model(a, "alpha:latest", seed="a")
    b = oa.Store(os.path.join(base, "b"))
    beta = t.add_gguf_model(b, "beta:latest", seed="b")
    shutil.rmtree(b.blobs)
    os.symlink(hops(40)(base), b.blobs)
    env = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")}
    r = t.run("--store", b.root, "rm", "beta", "--apply", "--yes", env=env)
    t.eq(r.code, 8, "rm --apply is refused", r.describe())
    t.contains(r.err, "Too many levels of symbolic links", "says why")
    t.contains(r.err, "--force", "and how to go on")
    t.ok(os.path.exists(b.manifest_path("beta:latest")), "the manifest stays")
    t.eq(all_exist(blob_files(alpha, a)), [], "A's blobs are all there")


t.section("a -> b/blobs -> c/blobs: b and c both share the blob files, wherever they are")
if True:
    base = t.tempdir("chain")
    c = oa.Store(os.path.join(base, "c"))
    gamma = t.add_gguf_model(c, "gamma:latest", seed="c")
    for name, target in (("b", "../c/blobs/."), ("a", "../b/blobs")):
        os.makedirs(os.path.join(base, name))
        os.symlink(target, os.path.join(base, name, "blobs"))
    b = oa.Store(os.path.join(base, "b"))
    beta = t.add_gguf_model(b, "beta:latest", seed="b")
    a = oa.Store(os.path.join(base, "a"))
    alpha = t.add_gguf_model(a, "alpha:latest", seed="a")
    junk = orphan(c, "an orphan of the chain")
    r = prune_apply(a.root, {"OLLAMA_AUDIT_SYSROOT": t.tempdir("nosys")})
    t.eq(r.code, 0, "prune --apply on a runs", r.describe())
    t.eq(all_exist(blob_files(beta, b) + blob_files(gamma, c) + blob_files(alpha, a)), [],
         "every blob b's and c's models use survives")
    t.ok(not os.path.exists(junk), "the true orphan goes")
    t.contains(r.err, "also keeps what 2 other stores sharing its blob files reference", "names two stores")
    t.contains(r.err, os.path.realpath(b.root), "b, whose blobs/ link it leads through")
    t.contains(r.err, os.path.realpath(c.root), "and c, which holds the directory")
    os.chmod(b.root, 0o111 if t.IS_ROOT else 0o100)
    try:
        if t.IS_ROOT and not t.nobody_skip():
            import multistore as ms
            ms.chown_tree(a.root, t.NOBODY, t.NOBODY)
            ms.chown_tree(c.blobs, t.NOBODY, t.NOBODY)
        if t.IS_ROOT and t.nobody_skip():
            t.skip(t.nobody_skip())
        else:
            r = t.run("--store", a.root, "rm", "alpha", "--apply", "--yes", env={"OLLAMA_AUDIT_SYSROOT": t.tempdir(
                "nosys")}, as_nobody=t.IS_ROOT)
            t.eq(r.code, 8, "with b unreadable, rm --apply on a is refused", r.describe())
            t.contains(r.err, "cannot open a store whose blobs/ symlink it leads through", "says why")
            t.ok(os.path.exists(a.manifest_path("alpha:latest")), "the manifest stays")
    finally:
        os.chmod(b.root, 0o755)


def unopenable(root):
    """root can be searched but not listed: the store there cannot be opened.
    As root, by nobody (who runs the binary); else by this user."""
    os.chmod(root, 0o111 if t.IS_ROOT else 0o100)


t.section("the store owning the directory B's blobs/ leads to cannot be opened")
if t.nobody_skip():
    t.skip(t.nobody_skip())
else:
    base, a, alpha, b, beta, env = linked_pair("unopenable", lambda base: "../a/blobs")
    junk = orphan(a, "an orphan nobody can prove unreferenced")
    if t.IS_ROOT:
        import multistore as ms
        ms.chown_tree(b.root, t.NOBODY, t.NOBODY)
        ms.chown_tree(a.blobs, t.NOBODY, t.NOBODY)
    unopenable(a.root)
    try:
        r = t.run("--store", b.root, "prune", "--apply", "--yes", "--min-age", "0", env=env,
                  as_nobody=t.IS_ROOT)
        t.eq(r.code, 8, "prune --apply on B is refused", r.describe())
        t.contains(r.err, "refusing to prune: cannot open the store holding the directory its blobs/ leads to", "says why")
        t.contains(r.err, os.path.realpath(a.root), "names where it looked")
        t.contains(r.err, "--force", "says how to go on")
        t.eq(all_exist(blob_files(alpha, a) + [junk]), [], "nothing is removed")
        r = t.run("--store", b.root, "rm", "beta", "--apply", "--yes", env=env, as_nobody=t.IS_ROOT)
        t.eq(r.code, 8, "rm --apply on B is refused", r.describe())
        t.ok(os.path.exists(b.manifest_path("beta:latest")), "the manifest stays")
        r = t.run("--store", b.root, "prune", "--apply", "--yes", "--min-age", "0", "--force", env=env,
                  as_nobody=t.IS_ROOT)
        t.eq(r.code, 0, "prune --apply --force runs", r.describe())
        t.contains(r.err, "going on because of --force: no complete blob is removed", "saying what --force does")
        t.eq(all_exist(blob_files(alpha, a) + blob_files(beta, b) + [junk]), [],
             "and removes no complete blob, not even the orphan no store can be proven not to use")
    finally:
        os.chmod(a.root, 0o755)

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
