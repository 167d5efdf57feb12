#!/usr/bin/env python3
"""Nothing a tag can reach is ever removed (issue: "Nothing referenced is ever
lost").  A blob is referenced when anything under manifests/ or manifests-v2/
reaches it: a manifest list -> its child manifest blobs -> their configs and
layers (to any depth, cycles cut), a tag that is a symlink, a hard link or a
copy of a manifest blob, and the digests in the bytes of a manifest we cannot
parse (escaped forms too).  While any manifest cannot be read at all, or a
directory symlink leads out of the store, no complete blob can be proven
unreferenced: every one is kept, --force or not.  Each case removes real junk
beside it, so a test that keeps everything by doing nothing fails."""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()


def B(d):
    return "blobs/" + d.replace(":", "-")


def blob_set(s):
    return set(os.listdir(s.blobs))


def gguf_child(s, seed):
    """A GGUF model's config and layers (blobs only, no tag)."""
    gguf = oa.tiny_llama_gguf(name="Tiny child " + seed)
    layers = [s.layer("model", gguf), s.layer("template", t.TEMPLATE + seed)]
    cfg = oa.gguf_config(s, gguf, layers)
    return cfg, layers


def mlx_child(s, seed):
    return oa.tiny_mlx_model(s)


def reachable(cfg, layers):
    return {B(cfg["digest"])} | {B(l["digest"]) for l in layers}


def list_store(tag, where):
    """A 0.40 tag `qwen:4b` whose manifest is a list of a GGUF and an MLX
    child, the list stored under manifests/ (legacy path) or as a blob that a
    manifests-v2 tag links to; plus a real orphan and a partial download, all
    2 h old.  Returns (store, must-keep set, junk set)."""
    s = t.new_store(tag)
    gcfg, glayers = gguf_child(s, "g")
    mcfg, mlayers = mlx_child(s, "m")
    gd, _ = s.add_manifest_blob(gcfg, glayers, runner="llamacpp", fmt="gguf")
    md, _ = s.add_manifest_blob(mcfg, mlayers, runner="mlx", fmt="safetensors")
    ld, lbytes = s.add_list_blob([{"digest": gd, "runner": "llamacpp", "format": "gguf"},
                                  {"digest": md, "runner": "mlx", "format": "safetensors"}])
    keep = reachable(gcfg, glayers) | reachable(mcfg, mlayers) | {B(gd), B(md), B(ld)}
    if where == "legacy":
        # the list's own blob is a copy of this tag: referenced by content
        s.write_raw("manifests/registry.ollama.ai/library/qwen/4b", lbytes)
    else:
        s.add_v2_tag("qwen:4b", ld, how=where)
    junk = {B(s.add_blob(oa.det_bytes(5000, "orphan-" + tag)))}
    pd, paths = s.partial_download(oa.det_bytes(3000, "partial-" + tag))
    junk |= {"blobs/" + os.path.basename(p) for p in paths}
    s.age_all(7200)
    return s, keep, junk


def prune_apply(s, *extra, **kw):
    return t.audit(s.root, "prune", "--apply", "--yes", *extra, **kw)


for where in ("legacy", "symlink", "hardlink", "copy"):
    with t.guard("a manifest list keeps its children's layers (%s tag)" % where):
        s, keep, junk = list_store("list-" + where, where)
        r = prune_apply(s)
        t.exit_code(r, 0, "prune --apply")
        left = {"blobs/" + n for n in blob_set(s)}
        t.eq(sorted(keep - left), [], "every blob the list reaches is still there")
        t.eq(sorted(junk & left), [], "the real junk beside it was removed")
        r = prune_apply(s, "--what", "all")
        left = {"blobs/" + n for n in blob_set(s)}
        t.eq(sorted(keep - left), [], "--what all keeps them too (no manifest-blobs junk)")
        r = t.audit(s.root, "prune", "--what", "all", "--format", "json")
        paths = [e["path"] for e in r.json()["stores"][0]["entries"]]
        t.eq(sorted(set(paths) & keep), [], "the dry run does not offer them either")

with t.guard("rm of a model sharing layers with a list child keeps those layers"):
    s, keep, junk = list_store("list-rm", "symlink")
    # A legacy model that shares the list's GGUF child's weights and config.
    gguf = oa.tiny_llama_gguf(name="Tiny child g")
    layers = [s.layer("model", gguf), s.layer("template", t.TEMPLATE + "g")]
    cfg = oa.gguf_config(s, gguf, layers)
    s.add_manifest("other:latest", cfg, layers)
    s.age_all(7200)
    t.ok(reachable(cfg, layers) <= keep, "the legacy model really shares the child's blobs")
    r = t.audit(s.root, "rm", "other:latest", "--apply", "--yes")
    t.exit_code(r, 0, "rm --apply")
    t.ok(not os.path.exists(s.manifest_path("other:latest")), "the manifest of other:latest is gone")
    left = {"blobs/" + n for n in blob_set(s)}
    t.eq(sorted(keep - left), [], "every blob the list's children use is still there")

with t.guard("a list whose child is another list (a cycle) is read once and kept"):
    s = t.new_store("cycle")
    cfg, layers = gguf_child(s, "c")
    cd, _ = s.add_manifest_blob(cfg, layers, runner="llamacpp", fmt="gguf")
    # list A names the child and list B; B names A: a cycle through blobs.
    ad, abytes = s.add_list_blob([{"digest": cd, "runner": "llamacpp"}])
    bd, _ = s.add_list_blob([{"digest": ad, "runner": "llamacpp"}])
    # rewrite A to also name B (its name no longer matches its bytes: that is
    # verify's business; reaching it is ours)
    a2 = abytes.replace(b']', (b',{"mediaType":"%s","digest":"%s"}]' % (oa.MT_MANIFEST.encode(), bd.encode())))
    with open(s.blob_path(ad), "wb") as f:
        f.write(a2)
    s.add_v2_tag("loop:latest", bd)
    orphan = B(s.add_blob(oa.det_bytes(4000, "cycle-orphan")))
    s.age_all(7200)
    r = prune_apply(s, "--what", "all")
    t.ok(r.code in (0, 1, 4), "prune ends", r.describe())
    left = {"blobs/" + n for n in blob_set(s)}
    t.eq(sorted((reachable(cfg, layers) | {B(cd), B(ad), B(bd)}) - left), [], "everything on the cycle is kept")
    t.ok(orphan not in left, "the orphan beside it is removed")

with t.guard("a tag that is a symlink to a manifest blob keeps it under --what all"):
    s = t.new_store("v2plain")
    cfg, layers = gguf_child(s, "p")
    md, _ = s.add_manifest_blob(cfg, layers)
    s.add_v2_tag("plain:latest", md)
    # the same blob reached through a relative symlink in manifests/ (a legacy tag as a link)
    lp = s.manifest_path("plain:legacy")
    os.makedirs(os.path.dirname(lp), exist_ok=True)
    os.symlink(os.path.relpath(s.blob_path(md), os.path.dirname(lp)), lp)
    client2 = B(s.add_blob(s.manifest_bytes(cfg, layers, style="local")))  # unreferenced manifest copy
    s.age_all(7200)
    r = prune_apply(s, "--what", "all")
    t.exit_code(r, 0, "prune --what all --apply")
    left = {"blobs/" + n for n in blob_set(s)}
    t.ok(B(md) in left, "the manifest blob a tag points at is kept")
    t.eq(sorted(reachable(cfg, layers) - left), [], "and everything it references")
    t.ok(client2 not in left, "an unreferenced manifest blob is still removed")

# ------------------------------------------------------------------ review findings


def odd_child_store(tag, variant):
    """qwen:4b is a v2 list of a GGUF child (the one Linux uses) and an MLX
    child stored oddly (`variant`); a legacy other:latest shares the MLX
    child's config and layers. Returns (store, the MLX blobs)."""
    import json
    s = t.new_store(tag)
    gcfg, glayers = gguf_child(s, "odd-g")
    mcfg, mlayers = mlx_child(s, "odd-m")
    gd, _ = s.add_manifest_blob(gcfg, glayers, runner="llamacpp", fmt="gguf")
    md, mb = s.add_manifest_blob(mcfg, mlayers, runner="mlx", fmt="safetensors")
    key = "manifests"
    if variant == "whitespace":  # Go's decoder skips any amount of it
        os.remove(s.blob_path(md))
        md = s.add_blob(b"\n" * 300 + mb)
    elif variant == "upper":  # BlobsPath keeps the case of the hex
        up = "sha256:" + hexof(md).upper()
        os.rename(s.blob_path(md), os.path.join(s.blobs, "sha256-" + hexof(md).upper()))
        md = up
    elif variant == "outside":  # the child manifest blob symlinked to another disk
        dst = os.path.join(t.tempdir("odd-outside"), "m")
        shutil.move(s.blob_path(md), dst)
        os.symlink(dst, s.blob_path(md))
    elif variant == "long-s":  # Go matches "manifeſts" to the field manifests
        key = "manife\u017fts"
    entries = [{"mediaType": oa.MT_MANIFEST, "digest": gd, "runner": "llamacpp", "format": "gguf"},
               {"mediaType": oa.MT_MANIFEST, "digest": md, "runner": "mlx", "format": "safetensors"}]
    lb = json.dumps({"schemaVersion": 2, "mediaType": oa.MT_MANIFEST_LIST, key: entries},
                    ensure_ascii=False, separators=(",", ":")).encode()
    s.add_v2_tag("qwen:4b", s.add_blob(lb))
    s.add_manifest("other:latest", mcfg, mlayers)
    s.age_all(7200)
    return s, reachable(mcfg, mlayers)


def hexof(d):
    return d.split(":", 1)[1]


for variant in ("whitespace", "upper", "outside", "long-s"):
    with t.guard("rm keeps what a list child stored with %s reaches" % variant):
        s, keep = odd_child_store("odd-rm-" + variant, variant)
        r = t.audit(s.root, "rm", "other:latest", "--apply", "--yes", "--platform", "linux/amd64")
        left = {"blobs/" + n for n in blob_set(s)}
        t.eq(sorted(keep - left), [], "the MLX child's config and layers are still there", r.describe())
    with t.guard("prune keeps what a list child stored with %s reaches" % variant):
        s, keep = odd_child_store("odd-prune-" + variant, variant)
        os.remove(s.manifest_path("other:latest"))
        r = prune_apply(s, "--what", "all")
        left = {"blobs/" + n for n in blob_set(s)}
        t.eq(sorted(keep - left), [], "the MLX child's config and layers are still there", r.describe())

with t.guard("a symlink under manifests/ back to the store root is not a way to read every blob"):
    s, info = t.clean_store("loop")
    os.symlink("../../..", os.path.join(s.manifests, "registry.ollama.ai", "library", "loop"))
    big = oa.det_bytes(3 << 20, "loop-weights")  # too big to be opened as a possible manifest blob
    orphan = B(s.add_blob(big))
    s.age_all(7200)
    if shutil.which("strace") and subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"]).returncode == 0:
        out = os.path.join(t.tempdir("loop-strace"), "trace")
        e = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", XDG_CACHE_HOME=t.tempdir("xdg"))
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=read,openat", "-o", out, t.BIN, "--store", s.root,
                        "prune"], env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        tr = open(out, errors="replace").read()
        t.ok(orphan[len("blobs/"):] not in tr, "the walk through the loop never opens a blob as if it were a tag",
             "\n".join(l for l in tr.splitlines() if orphan[len("blobs/"):] in l)[:1500])
    r = prune_apply(s)
    left = {"blobs/" + n for n in blob_set(s)}
    t.eq(sorted(reachable(info["config"], info["layers"]) - left), [], "the model's blobs are kept")

# ------------------------------------------------------------------ --force


def force_case(tag, mutate, as_nobody=False):
    """A model whose manifest `mutate` breaks, a second healthy model and an
    orphan; prune --apply --force.  Returns (store, must-keep, orphan, result)."""
    s = t.new_store(tag)
    bad = t.add_gguf_model(s, "bad:latest", seed="bad")
    good = t.add_gguf_model(s, "good:latest", seed="good")
    keep = reachable(bad["config"], bad["layers"]) | reachable(good["config"], good["layers"])
    orphan = B(s.add_blob(oa.det_bytes(6000, "force-orphan-" + tag)))
    pd, paths = s.partial_download(oa.det_bytes(3000, "force-partial-" + tag))
    mutate(s, bad)
    s.age_all(7200)
    if as_nobody:
        for d, dirs, files in os.walk(s.root):
            for n in dirs + files:
                p = os.path.join(d, n)
                if os.path.realpath(p) != os.path.realpath(bad["path"]):
                    os.lchown(p, t.NOBODY, t.NOBODY)
        os.chown(s.root, t.NOBODY, t.NOBODY)
    r = prune_apply(s, "--force", as_nobody=as_nobody)
    return s, keep, orphan, paths, r


def escaped_digest(d):
    """sha256:<hex> with every character as a \\u escape (Go decodes it)."""
    return "".join("\\u%04x" % ord(c) for c in d)


def mutate_escaped(s, info):
    data = info["bytes"].decode()
    for l in [info["config"]] + info["layers"]:
        data = data.replace('"%s"' % l["digest"], '"%s"' % escaped_digest(l["digest"]))
    # and an unknown field holding invalid UTF-8, which Go also accepts
    raw = data.encode()[:-2] + b',"note":"\xff\xfe"}\n'
    open(info["path"], "wb").write(raw)


def mutate_huge(s, info):
    data = info["bytes"]
    pad = b' ' * (65 << 20)  # whitespace between tokens: still one valid JSON value
    raw = data[:1] + pad + data[1:]
    open(info["path"], "wb").write(raw)


for name, mut in (("escaped digests and invalid UTF-8", mutate_escaped),
                  ("a valid manifest larger than 64 MiB", mutate_huge)):
    with t.guard("--force keeps the blobs of %s" % name):
        s, keep, orphan, partials, r = force_case("force-" + name.split()[1], mut)
        left = {"blobs/" + n for n in blob_set(s)}
        t.eq(sorted(keep - left), [], "every blob the broken manifest names is kept")
        t.ok(orphan not in left, "the orphan no manifest names is removed", r.describe())

with t.guard("--force keeps every complete blob while a manifest cannot be read"):
    if t.nobody_skip():
        t.skip(t.nobody_skip())
    else:
        if t.IS_ROOT:
            def unreadable(s, info):
                os.chmod(info["path"], 0o600)  # root-owned: nobody cannot read it
            s, keep, orphan, partials, r = force_case("force-unreadable", unreadable, as_nobody=True)
        else:
            def unreadable(s, info):
                os.chmod(info["path"], 0)
            s, keep, orphan, partials, r = force_case("force-unreadable", unreadable)
        left = {"blobs/" + n for n in blob_set(s)}
        t.eq(sorted(keep - left), [], "every referenced blob is kept")
        t.ok(orphan in left, "even a blob that no readable manifest names is kept", r.describe())
        t.eq([p for p in partials if os.path.exists(p)], [], "partial downloads (no manifest names them) are removed")
        t.contains(r.err + r.out, "cannot", "the output says a manifest cannot be read")

with t.guard("--force keeps every complete blob while manifests-v2 cannot be read"):
    if t.nobody_skip():
        t.skip(t.nobody_skip())
    else:
        s = t.new_store("force-v2")
        cfg, layers = gguf_child(s, "v")
        md, _ = s.add_manifest_blob(cfg, layers)
        tag = s.add_v2_tag("v:latest", md, how="copy")
        orphan = B(s.add_blob(oa.det_bytes(3000, "v2-orphan")))
        s.age_all(7200)
        if t.IS_ROOT:
            for d, dirs, files in os.walk(s.root):
                for n in dirs + files:
                    os.lchown(os.path.join(d, n), t.NOBODY, t.NOBODY)
            os.chown(s.root, t.NOBODY, t.NOBODY)
            v2 = os.path.join(s.root, "manifests-v2")
            os.chown(v2, 0, 0)
            os.chmod(v2, 0o700)
            r = prune_apply(s, "--force", as_nobody=True)
        else:
            v2 = os.path.join(s.root, "manifests-v2")
            os.chmod(v2, 0)
            r = prune_apply(s, "--force")
            os.chmod(v2, 0o755)
        left = {"blobs/" + n for n in blob_set(s)}
        t.eq(sorted((reachable(cfg, layers) | {B(md), orphan}) - left), [], "nothing complete is removed")

# ------------------------------------------------------------------ symlinked directories


def strace_opens(args):
    out = os.path.join(t.tempdir("strace"), "trace")
    e = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", XDG_CACHE_HOME=t.tempdir("xdg"), NO_COLOR="1")
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=%file", "-o", out, t.BIN] + args, env=e,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                   timeout=120)
    return open(out, errors="replace").read()


with t.guard("a directory symlink out of the store is never walked"):
    s, info = t.clean_store("dirlink")
    outside = t.tempdir("outside-tree")
    for i in range(50):
        d = os.path.join(outside, "d%d" % i, "e", "f")
        os.makedirs(d)
        open(os.path.join(d, "canary-file"), "w").write("sha256:" + "ab" * 32)
    os.symlink(outside, os.path.join(s.manifests, "registry.ollama.ai", "evil"))
    orphan = B(s.add_blob(oa.det_bytes(3000, "dirlink-orphan")))
    pd, partials = s.partial_download(oa.det_bytes(3000, "dirlink-partial"))
    s.age_all(7200)
    r = t.audit(s.root, "check", "--format", "json")
    got = t.codes(t.findings_of(r.json()))
    t.ok("symlink-out-of-store" in got, "check reports the directory symlink", got)
    strace_ok = shutil.which("strace") and subprocess.run(
        ["strace", "-qq", "-o", "/dev/null", "true"]).returncode == 0
    if strace_ok:
        for cmd in (["du"], ["prune"], ["rm", "tiny"], ["check", "--format", "prometheus"], ["list"],
                    ["check"]):
            tr = strace_opens(["--store", s.root] + cmd)
            t.ok("canary-file" not in tr and os.path.join(outside, "d0") not in tr,
                 "%s never walks the tree the symlink points at" % " ".join(cmd),
                 "\n".join(l for l in tr.splitlines() if "canary-file" in l)[:2000])
            t.ok("blobs" in tr, "strace saw %s read the store" % cmd[0])
    else:
        t.skip("strace cannot trace here: the no-walk checks by strace")
    r = prune_apply(s)
    left = {"blobs/" + n for n in blob_set(s)}
    t.ok(orphan in left, "what the symlink hides might reference the orphan: it is kept", r.describe())
    t.eq([p for p in partials if os.path.exists(p)], [], "partial downloads are still removed")
    t.contains(r.err + r.out, "symlink", "prune says why it keeps every blob")
    t.eq(sorted(reachable(info["config"], info["layers"]) - left), [], "the model's blobs are kept")

with t.guard("a directory symlink inside the store is followed"):
    s, info = t.clean_store("dirlink-in")
    src = os.path.dirname(os.path.dirname(info["path"]))  # manifests/registry.ollama.ai/library
    alias = os.path.join(s.manifests, "registry.ollama.ai", "alias")
    os.symlink(src, alias)
    orphan = B(s.add_blob(oa.det_bytes(3000, "dirlink-in-orphan")))
    s.age_all(7200)
    r = prune_apply(s)
    left = {"blobs/" + n for n in blob_set(s)}
    t.ok(orphan not in left, "an orphan is removed: the store is completely readable", r.describe())
    t.eq(sorted(reachable(info["config"], info["layers"]) - left), [], "the model's blobs are kept")

t.done()
