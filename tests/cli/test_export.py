#!/usr/bin/env python3
"""`export MODEL... -o FILE|-|DIR/`: a bundle that GNU tar and sha256sum,
the independent readers here, take for a working store. Its members are
store paths (the index and SHA256SUMS first, blobs before tags); a blob
that does not hash to its name stops the export and leaves nothing that
looks complete; the verify cache vouches only for the very file it
verified."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
STORE_040 = os.path.join(t.SOURCE_DIR, "fixtures", "store-0.40")
RACY = 2.0  # OA_VERIFY_DEFAULT_RACY_WINDOW: the cache trusts a file changed longer ago than this


def blobs_of(info):
    """The digests (hex) a model add_gguf_model made needs."""
    return [info["config"]["digest"][7:]] + [l["digest"][7:] for l in info["layers"]]


def tar_names(path):
    p = subprocess.run(["tar", "-tf", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode().split("\n")[:-1], p.stderr.decode()


def untar(path, into):
    os.makedirs(into, exist_ok=True)
    p = subprocess.run(["tar", "-xf", path, "-C", into], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stderr.decode()


def sha256sum_c(d):
    p = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=d, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode() + p.stderr.decode()


def ids(root):
    r = t.audit(root, "list", "--format", "json")
    return {m["name"]: m["id"] for s in r.json()["stores"] for m in s["models"]}


def temp_leftovers(d):
    return [n for n in os.listdir(d) if n.startswith(".") and n.endswith(".tmp")]


with t.guard("a tar any tar unpacks into a working store"):
    s = t.new_store("exp")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    b = t.add_gguf_model(s, "team/beta:7b", seed="b")
    t.add_gguf_model(s, "gamma:latest", seed="c")  # not exported
    out = os.path.join(t.tempdir("bundle"), "two.tar")
    r = t.audit(s.root, "export", "alpha", "team/beta:7b", "-o", out)
    t.exit_code(r, 0, "export to a file")
    t.contains(r.out, "exported 2 models", "the summary names the models")
    rc, names, err = tar_names(out)
    t.eq(rc, 0, "GNU tar lists the bundle", err)
    t.eq(names[:2], ["ollama-audit-bundle.json", "SHA256SUMS"], "the index and SHA256SUMS come first")
    want_blobs = sorted(set(blobs_of(a) + blobs_of(b)))
    got_blobs = sorted(n[len("blobs/sha256-"):] for n in names if n.startswith("blobs/"))
    t.eq(got_blobs, want_blobs, "every blob of both models, each once, and no other")
    tags = [n for n in names if n.startswith("manifests")]
    t.eq(sorted(tags), ["manifests/registry.ollama.ai/library/alpha/latest",
                        "manifests/registry.ollama.ai/team/beta/7b"], "their two tags, nothing of gamma")
    last_blob = max(i for i, n in enumerate(names) if n.startswith("blobs/"))
    t.ok(all(names.index(x) > last_blob for x in tags), "every tag after every blob", names)
    with tarfile.open(out) as tf:
        t.ok(all(m.isreg() for m in tf.getmembers()), "regular files only: no link, no device, no directory")
        t.ok(all(not m.name.startswith("/") and ".." not in m.name.split("/") for m in tf.getmembers()),
             "relative store paths")
    x = os.path.join(t.tempdir("unpacked"), "models")
    rc, err = untar(out, x)
    t.eq(rc, 0, "tar -xf unpacks it", err)
    rc, said = sha256sum_c(x)
    t.eq(rc, 0, "sha256sum -c SHA256SUMS passes in the unpacked tree", said)
    t.eq(said.count(": OK"), len(want_blobs), "one line per blob", said)
    r = t.audit(x, "check", "--format", "json")
    t.exit_code(r, 0, "check accepts the unpacked store")
    t.eq(t.findings_of(r.json()), [], "no finding at all: the root files are no junk", r.out)
    t.eq(ids(x), {"alpha:latest": a["id"], "team/beta:7b": b["id"]}, "listed with the same IDs")
    r = t.audit(x, "prune", "--what", "all", "--min-age", "0", "--format", "json")
    t.eq(r.json()["stores"][0]["entries"], [], "prune --what all plans nothing: SHA256SUMS and the index stay")
    idx = json.load(open(os.path.join(x, "ollama-audit-bundle.json")))
    t.eq(idx["schema"], "ollama-audit.bundle/1", "the index's schema")
    t.eq(sorted(m["name"] for m in idx["models"]), ["alpha:latest", "team/beta:7b"], "the index names the models")
    t.eq(sorted(b_["digest"][7:] for b_ in idx["blobs"]), want_blobs, "and every blob with its size")
    t.ok(all(b_["size"] == os.path.getsize(s.blob_path(b_["digest"])) for b_ in idx["blobs"]), "sizes are right")
    t.ok(idx["tool"].startswith("ollama-audit "), "the tool's version")

with t.guard("a 0.40 store: v2 tags, lists, children and anchors travel; IDs and findings stay"):
    src = os.path.join(t.tempdir("v2src"), "models")
    shutil.copytree(STORE_040, src, symlinks=True)
    before = t.audit(src, "check", "--format", "json").json()
    out = os.path.join(t.tempdir("bundle"), "v2.tar")
    names_in = ["qwen3.5:4b", "gemma4:12b", "localhost:5000/team/tiny:v1", "llama3.2:1b"]
    r = t.audit(src, "export", *names_in, "-o", out, "--format", "json")
    t.exit_code(r, 0, "export of v2 tags")
    doc = r.json()
    t.eq(doc["schema"], "ollama-audit.export/1", "export's json schema")
    t.eq(doc["status"], "ok", "and its status")
    rc, names, _ = tar_names(out)
    t.ok("manifests-v2/ollama.com/library/qwen3.5/4b" in names, "the v2 tag", names)
    t.ok("manifests/registry.ollama.ai/library/qwen3.5/4b" in names, "and its legacy anchor", names)
    t.ok("manifests-v2/localhost%3A5000/team/tiny/v1" in names, "a host with a port, as 0.40 spells it", names)
    x = os.path.join(t.tempdir("v2x"), "models")
    rc, err = untar(out, x)
    t.eq(rc, 0, "tar -xf", err)
    t.eq(sha256sum_c(x)[0], 0, "sha256sum -c passes")
    want = {k: v for k, v in ids(src).items() if k in names_in}
    t.eq(ids(x), want, "every exported model lists with its ID")
    after = t.audit(x, "check", "--format", "json").json()
    sel = lambda d: sorted((f["code"], f.get("model")) for f in t.findings_of(d) if f.get("model") in names_in)
    t.eq(sel(after), sel(before), "the same findings for those models as in the source store")
    t.eq(t.audit(x, "verify").code, 0, "and it verifies")

with t.guard("a blob that does not hash to its name stops the export; nothing complete is left"):
    s = t.new_store("corrupt")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    t.flip_last_byte(s.blob_path(t.weight_layer(a)["digest"]))
    d = t.tempdir("bundle")
    out = os.path.join(d, "bad.tar")
    r = t.audit(s.root, "export", "alpha", "-o", out)
    t.exit_code(r, 4, "exit 4: an integrity error")
    t.contains(r.err, "alpha:latest", "names the model")
    t.contains(r.err, t.weight_layer(a)["digest"][7:], "and the blob")
    t.contains(r.err, "ollama-audit repair alpha:latest", "and how to mend it")
    t.eq(os.listdir(d), [], "no bundle, no temporary file")
    with open(out + ".keep", "wb") as f:
        f.write(b"an older bundle")
    os.rename(out + ".keep", out)
    r = t.audit(s.root, "export", "alpha", "-o", out)
    t.eq(open(out, "rb").read(), b"an older bundle", "a file of that name is left as it was")
    t.eq(sorted(os.listdir(d)), ["bad.tar"], "and nothing beside it")
    # a stream: cut off, so that a reader sees a truncated archive
    p = subprocess.run([t.BIN, "--store", s.root, "export", "alpha", "-o", "-"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(os.environ, HOME=t.tempdir("h"), ASAN_OPTIONS="detect_leaks=0"))
    t.eq(p.returncode, 4, "-o -: exit 4")
    cut = os.path.join(d, "cut.tar")
    open(cut, "wb").write(p.stdout)
    t.ne(subprocess.run(["tar", "-tf", cut], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode, 0,
         "GNU tar does not take the cut stream for a whole archive")
    dd = os.path.join(t.tempdir("bundle"), "unpacked")
    r = t.audit(s.root, "export", "alpha", "-o", dd + "/")
    t.exit_code(r, 4, "-o DIR/: exit 4")
    t.eq(os.listdir(os.path.dirname(dd)), [], "no directory, no temporary one")
    r = t.audit(s.root, "export", "alpha", "-o", os.path.join(d, "m.tar"), "--format", "json")
    t.eq(r.json()["status"], "error", "json says error")

with t.guard("a missing or truncated blob is refused before anything is written"):
    s = t.new_store("missing")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    w = s.blob_path(t.weight_layer(a)["digest"])
    with open(w, "r+b") as f:
        f.truncate(100)
    d = t.tempdir("bundle")
    r = t.audit(s.root, "export", "alpha", "-o", os.path.join(d, "x.tar"))
    t.exit_code(r, 4, "exit 4")
    t.contains(r.err, "has 100 bytes where the manifest declares", "says what is wrong")
    os.remove(w)
    r = t.audit(s.root, "export", "alpha", "-o", os.path.join(d, "x.tar"))
    t.contains(r.err, "is missing", "a missing blob")
    t.eq(os.listdir(d), [], "nothing written")

with t.guard("-o -: the tar on standard output; -o DIR/: an unpacked bundle"):
    s, a = t.clean_store("stream")
    p = subprocess.run([t.BIN, "--store", s.root, "export", "tiny", "-o", "-"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(os.environ, HOME=t.tempdir("h"), ASAN_OPTIONS="detect_leaks=0"))
    t.eq(p.returncode, 0, "exit 0")
    t.contains(p.stderr.decode(), "exported 1 model to standard output", "the summary on stderr")
    x = os.path.join(t.tempdir("sx"), "models")
    os.makedirs(x)
    q = subprocess.run(["tar", "-xf", "-", "-C", x], input=p.stdout)
    t.eq(q.returncode, 0, "tar -xf - reads the stream")
    t.eq(ids(x), {"tiny:latest": a["id"]}, "a working store")
    d = os.path.join(t.tempdir("dir"), "bundle")
    r = t.audit(s.root, "export", "tiny", "-o", d + "/")
    t.exit_code(r, 0, "export -o DIR/")
    t.eq(sha256sum_c(d)[0], 0, "sha256sum -c in the directory")
    t.eq(ids(d), {"tiny:latest": a["id"]}, "the directory is a store")
    r = t.audit(s.root, "export", "tiny", "-o", d + "/")
    t.exit_code(r, 8, "a directory that is not empty is not written over")
    t.eq(sha256sum_c(d)[0], 0, "and stays as it was")
    t.eq(temp_leftovers(os.path.dirname(d)), [], "no temporary directory left")
    r = t.audit(s.root, "export", "tiny", "-o", "-", "--format", "json")
    t.exit_code(r, 16, "-o - takes no --format")
    r = t.audit(s.root, "export", "tiny")
    t.exit_code(r, 16, "no -o: a usage error")
    r = t.audit(s.root, "export", "-o", os.path.join(d, "x.tar"))
    t.exit_code(r, 16, "no MODEL: a usage error")
    r = t.audit(s.root, "export", "nosuch", "-o", os.path.join(t.tempdir("n"), "x.tar"))
    t.exit_code(r, 16, "an unknown model: a usage error")
    r = t.audit(s.root, "export", "tiny", "-o", os.path.join(s.root, "blobs", "x.tar"))
    t.exit_code(r, 16, "never inside a store")

with t.guard("the verify cache vouches only for the very file it verified good"):
    s, a = t.clean_store("cache")
    cache = os.path.join(t.tempdir("cache"), "vc.json")
    time.sleep(RACY + 0.2)  # the files' ctime well before the verification
    t.exit_code(t.audit(s.root, "verify", "--cache", cache), 0, "verify fills the cache")
    n = 1 + len(a["layers"])
    out = os.path.join(t.tempdir("b"), "c.tar")
    doc = t.audit(s.root, "export", "tiny", "-o", out, "--cache", cache, "--format", "json").json()
    t.eq((doc["trusted"], doc["hashed"]), (n, 0), "every blob vouched for: none hashed again")
    w = s.blob_path(t.weight_layer(a)["digest"])
    os.chmod(w, 0o600)
    os.chmod(w, 0o644)  # the same bytes, a new ctime: not the file verify saw
    doc = t.audit(s.root, "export", "tiny", "-o", out, "--cache", cache, "--format", "json").json()
    t.eq((doc["trusted"], doc["hashed"]), (n - 1, 1), "a file changed since is hashed again")
    t.flip_last_byte(w)
    r = t.audit(s.root, "export", "tiny", "-o", out, "--cache", cache)
    t.exit_code(r, 4, "and its corruption is caught, cache or not")

with t.guard("a default verify cache inside the store vouches for nothing"):
    s, a = t.clean_store("cache-inside")
    w = s.blob_path(t.weight_layer(a)["digest"])
    t.flip_last_byte(w)  # corrupt: only a hash tells
    lib = os.path.join(s.manifests, "registry.ollama.ai", "library")
    planted = os.path.join(lib, "ollama-audit", "verify-cache.json")
    os.makedirs(os.path.dirname(planted))
    t.forged_cache(planted, w, t.weight_layer(a)["digest"][7:])  # the corrupt file as it is, "verified good"
    trusted = os.path.join(t.tempdir("cache-inside"), "vc.json")
    shutil.copyfile(planted, trusted)
    os.chmod(trusted, 0o600)
    out = os.path.join(t.tempdir("b"), "planted.tar")
    r = t.audit(s.root, "export", "tiny", "-o", out, "--cache", trusted, "--format", "json")
    t.ok(r.code == 0 and r.json().get("trusted", 0) >= 1,
         "the same cache outside the store, named, vouches (so the one inside is a real test)", r.describe())
    r = t.audit(s.root, "export", "tiny", "-o", out + ".2", env={"XDG_CACHE_HOME": lib})
    t.contains(r.err, "lies inside the store", "stderr says the default cache is not used", r.err)
    t.exit_code(r, 4, "the corrupt blob is hashed and caught")
    t.ok(not os.path.exists(out + ".2"), "nothing that looks complete is left")

t.done()
