#!/usr/bin/env python3
"""`import FILE|DIR|-` and `import --from STORE MODEL...`: a dry run by
default; --apply hashes every blob on its way in, renames it into place only
when it hashes to its name, writes the tags last, never replaces anything,
and refuses a bundle that is hostile, cut or corrupt whole: no tag written,
nothing outside the store, only temporaries that prune removes."""

import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import multistore as ms  # noqa: E402

t.check_binary()
STORE_040 = os.path.join(t.SOURCE_DIR, "fixtures", "store-0.40")


def env():
    e = dict(os.environ, HOME=t.tempdir("h"), ASAN_OPTIONS="detect_leaks=0", NO_COLOR="1")
    e.pop("OLLAMA_MODELS", None)
    return e


def ids(root):
    r = t.audit(root, "list", "--format", "json")
    return {m["name"]: m["id"] for s in r.json()["stores"] for m in s["models"]}


def empty_store(tag):
    d = os.path.join(t.tempdir(tag), "models")
    os.makedirs(d)
    return d


def export(root, *models):
    out = os.path.join(t.tempdir("bundle"), "b.tar")
    r = t.audit(root, "export", *models, "-o", out)
    t.exit_code(r, 0, "export %s" % " ".join(models))
    return out


def blob_names(root):
    d = os.path.join(root, "blobs")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def tag_files(root):
    out = []
    for top in ("manifests", "manifests-v2"):
        for d, _, files in os.walk(os.path.join(root, top)):
            out += [os.path.relpath(os.path.join(d, f), root) for f in files]
    return sorted(out)


def member(tf, name, data=b"", **kw):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    for k, v in kw.items():
        setattr(ti, k, v)
    tf.addfile(ti, io.BytesIO(data) if data else None)


def rebuild(src_tar, out, edit):
    """A copy of a bundle with edit(tf_out, members) deciding what goes in."""
    with tarfile.open(src_tar) as src, tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as dst:
        items = [(m, src.extractfile(m).read() if m.isreg() else b"") for m in src.getmembers()]
        edit(dst, items)
    return out


def copy_all(dst, items, skip=()):
    for m, data in items:
        if m.name not in skip:
            dst.addfile(m, io.BytesIO(data))


with t.guard("export, then import into an empty store: the same IDs, and it verifies"):
    s = t.new_store("src")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    b = t.add_gguf_model(s, "team/beta:7b", seed="b")
    bundle = export(s.root, "alpha", "team/beta:7b")
    d = empty_store("dst")
    before = t.snapshot(d)
    r = t.audit(d, "import", bundle, "--format", "json")
    t.exit_code(r, 0, "a dry run")
    doc = r.json()
    t.eq(doc["schema"], "ollama-audit.import/1", "its schema")
    t.eq(sorted((m["name"], m["state"]) for m in doc["models"]), [("alpha:latest", "new"), ("team/beta:7b", "new")],
         "both would be added")
    total = sum(os.path.getsize(os.path.join(s.blobs, n)) for n in os.listdir(s.blobs))
    t.eq(doc["bytes_new"], total, "the bytes it needs: every blob")
    t.ok(isinstance(doc["free_bytes"], int) and doc["free_bytes"] > 0, "against the free space", doc["free_bytes"])
    t.eq(t.diff_snapshots(before, t.snapshot(d)), [], "a dry run writes nothing")
    r = t.audit(d, "import", bundle, "--apply", "--yes")
    t.exit_code(r, 0, "--apply --yes")
    t.eq(ids(d), {"alpha:latest": a["id"], "team/beta:7b": b["id"]}, "listed with the same IDs")
    t.exit_code(t.audit(d, "verify"), 0, "verify passes")
    t.exit_code(t.audit(d, "check"), 0, "check passes")
    t.ok(all(n.startswith("sha256-") and len(n) == 71 for n in blob_names(d)), "no temporary left", blob_names(d))
    for n in blob_names(d):
        st = os.stat(os.path.join(d, "blobs", n))
        t.eq(stat.S_IMODE(st.st_mode), 0o644, "%s is 0644 like Ollama's blobs" % n)
        t.ok(time.time() - st.st_mtime < 600, "%s has a fresh mtime (the server's grace covers it)" % n)
    snap = t.snapshot(d)
    r = t.audit(d, "import", bundle, "--apply", "--yes", "--format", "json")
    t.exit_code(r, 0, "re-import")
    t.eq(sorted(m["state"] for m in r.json()["models"]), ["present", "present"], "says every model is here")
    t.eq(t.diff_snapshots(snap, t.snapshot(d)), [], "re-import changes nothing")
    # an unpacked bundle (a directory) reads the same
    ub = os.path.join(t.tempdir("ub"), "b")
    t.exit_code(t.audit(s.root, "export", "alpha", "-o", ub + "/"), 0, "export -o DIR/")
    d2 = empty_store("dst2")
    t.exit_code(t.audit(d2, "import", ub, "--apply", "--yes"), 0, "import DIR")
    t.eq(ids(d2), {"alpha:latest": a["id"]}, "from a directory")

with t.guard("export -o - | import - --apply --yes through a pipe, a 0.40 store"):
    src = os.path.join(t.tempdir("v2src"), "models")
    shutil.copytree(STORE_040, src, symlinks=True)
    d = empty_store("pipe")
    names = ["qwen3.5:4b", "gemma4:12b", "localhost:5000/team/tiny:v1"]
    cmd = "'%s' --store '%s' export %s -o - | '%s' --store '%s' import - --apply --yes" % (
        t.BIN, src, " ".join("'%s'" % n for n in names), t.BIN, d)
    p = subprocess.run(["sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    t.eq(p.returncode, 0, "the pipe succeeds", p.stderr.decode())
    want = {k: v for k, v in ids(src).items() if k in names}
    t.eq(ids(d), want, "every model arrived with its ID")
    t.ok(os.path.isfile(os.path.join(d, "manifests", "registry.ollama.ai", "library", "qwen3.5", "4b")),
         "the downgrade anchor too")
    t.exit_code(t.audit(d, "verify"), 0, "and verifies")
    r = t.audit(d, "import", "-", "--apply")
    t.exit_code(r, 16, "import - --apply without --yes: a usage error (stdin is the bundle)")

# ---- hostile, cut and corrupt bundles -----------------------------------------------

s, info = t.clean_store("hsrc")
GOOD = export(s.root, "tiny")
W = t.weight_layer(info)["digest"][7:]
OUTSIDE = t.tempdir("outside")


def refused(label, path, want=4):
    d = empty_store("hostile")
    os.makedirs(os.path.join(d, "blobs"))
    os.makedirs(os.path.join(d, "manifests"))
    for args in ([], ["--apply", "--yes"]):
        r = t.audit(d, "import", path, *args)
        t.exit_code(r, want, "%s: refused (%s)" % (label, " ".join(args) or "dry run"))
        t.contains(r.err + r.out, "refused", "%s: says so" % label)
    t.eq(tag_files(d), [], "%s: no tag written" % label)
    t.eq(blob_names(d), [], "%s: no blob, no temporary left" % label)
    t.eq(os.listdir(OUTSIDE), [], "%s: nothing outside the store" % label)
    return r


with t.guard("members outside the grammar refuse the whole bundle"):
    d = t.tempdir("h")
    abs_target = os.path.join(OUTSIDE, "abs")
    cases = [
        ("an absolute path", lambda tf: member(tf, abs_target, b"x")),
        ("a .. component", lambda tf: member(tf, "blobs/../../" + os.path.basename(OUTSIDE) + "/dotdot", b"x")),
        ("a symlink", lambda tf: member(tf, "blobs/sha256-" + "a" * 64, type=tarfile.SYMTYPE, linkname=OUTSIDE)),
        ("a hard link", lambda tf: member(tf, "blobs/sha256-" + "b" * 64, type=tarfile.LNKTYPE,
                                          linkname="blobs/sha256-" + W)),
        ("a character device", lambda tf: member(tf, "blobs/sha256-" + "c" * 64, type=tarfile.CHRTYPE,
                                                 devmajor=1, devminor=3)),
        ("a FIFO", lambda tf: member(tf, "blobs/sha256-" + "d" * 64, type=tarfile.FIFOTYPE)),
        ("a name that is no digest", lambda tf: member(tf, "blobs/evil", b"x")),
        ("upper-case hex", lambda tf: member(tf, "blobs/sha256-" + "E" * 64, b"x")),
        ("a file too deep", lambda tf: member(tf, "manifests/h/n/m/t/extra", b"{}")),
        ("a tag with a bad name", lambda tf: member(tf, "manifests/registry.ollama.ai/library/m/.hidden", b"{}")),
        ("a file at the root", lambda tf: member(tf, ".bashrc", b"echo")),
        ("a metadata cache", lambda tf: member(tf, "metadata/sha256-" + "f" * 64 + ".json", b"{}")),
    ]
    for label, add in cases:
        out = os.path.join(d, label.replace(" ", "_") + ".tar")
        rebuild(GOOD, out, lambda dst, items, add=add: (add(dst), copy_all(dst, items)))
        r = refused(label, out)
        t.contains(r.err + r.out, "member", "%s: names the member" % label)

with t.guard("a blob that does not hash to its name, a tag reaching a missing blob"):
    d = t.tempdir("h")

    def flip(dst, items):
        for m, data in items:
            if m.name == "blobs/sha256-" + W:
                data = data[:-1] + bytes([data[-1] ^ 1])
            dst.addfile(m, io.BytesIO(data))
    r = refused("a corrupt blob", rebuild(GOOD, os.path.join(d, "flip.tar"), flip))
    t.contains(r.err + r.out, "does not hash to its name", "says which")
    # no index (a bundle made by hand): the tag's blob is simply missing
    r = refused("a tag reaching a missing blob",
                rebuild(GOOD, os.path.join(d, "miss.tar"),
                        lambda dst, items: copy_all(dst, items, ("blobs/sha256-" + W, "ollama-audit-bundle.json",
                                                                 "SHA256SUMS"))))
    t.contains(r.out, "neither in the bundle nor in the store", "says why")
    # with its index: incomplete
    r = refused("a blob the index promises",
                rebuild(GOOD, os.path.join(d, "promise.tar"),
                        lambda dst, items: copy_all(dst, items, ("blobs/sha256-" + W,))))
    t.contains(r.err + r.out, "incomplete", "an incomplete bundle")

with t.guard("a cut tar and a corrupt header"):
    data = open(GOOD, "rb").read()
    with tarfile.open(GOOD) as tf:
        wm = tf.getmember("blobs/sha256-" + W)
        cut_at = wm.offset_data + wm.size // 2
        tag_at = [m for m in tf.getmembers() if m.name.startswith("manifests/")][0].offset
    d = t.tempdir("h")
    for label, blob in (("cut inside a blob", data[:cut_at]), ("cut before the tags", data[:tag_at]),
                        ("a header's checksum broken", data[:tag_at] + bytes([data[tag_at] ^ 0x55]) +
                         data[tag_at + 1:])):
        p = os.path.join(d, label.replace(" ", "_") + ".tar")
        open(p, "wb").write(blob)
        refused(label, p)

with t.guard("what is no tar, a bundle that is not there, a terminal for standard input"):
    d = empty_store("notar")
    r = t.run("--store", d, "import", "-", input=b"this is not a tar at all\n" * 100)
    t.exit_code(r, 4, "not a tar: refused, an integrity error")
    t.eq(tag_files(d) + blob_names(d), [], "nothing written")
    r = t.audit(d, "import", os.path.join(t.tempdir("x"), "missing.tar"))
    t.exit_code(r, 8, "a bundle that is not there: exit 8")
    r = t.run_tty(["--store", d, "import", "-"], None)
    t.exit_code(r, 16, "standard input a terminal: a usage error")

with t.guard("an import killed mid-blob leaves only temporaries that prune removes"):
    big = t.new_store("big")
    wl = big.layer("model", t.oa.det_bytes(8 << 20, "big"))  # large enough to be caught mid-copy
    big.add_manifest("big:latest", big.config({"model_format": "gguf"}), [wl])
    bundle = export(big.root, "big")
    data = open(bundle, "rb").read()
    d = empty_store("killed")
    os.makedirs(os.path.join(d, "blobs"))
    os.makedirs(os.path.join(d, "manifests"))
    p = subprocess.Popen([t.BIN, "--store", d, "import", "-", "--apply", "--yes"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env())
    with tarfile.open(bundle) as tf:
        half = tf.getmember("blobs/sha256-" + wl["digest"][7:]).offset_data + 10
    p.stdin.write(data[:half])
    p.stdin.flush()
    deadline = time.time() + 60
    while time.time() < deadline and not [n for n in blob_names(d) if len(n) < 71]:
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    left = blob_names(d)
    t.eq(tag_files(d), [], "no tag")
    t.ok(left and all(n.startswith("sha256-") and n[7:].isdigit() for n in left),
         "only sha256-<digits> temporaries (the temp class)", left)
    r = t.audit(d, "prune", "--min-age", "0", "--apply", "--yes")
    t.exit_code(r, 0, "prune")
    t.eq(blob_names(d), [], "prune removed them")

with t.guard("never replaces: a tag here with other content refuses its model, the rest goes in"):
    s = t.new_store("src")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    b = t.add_gguf_model(s, "beta:latest", seed="b")
    bundle = export(s.root, "alpha", "beta")
    d = t.new_store("dst")
    mine = t.add_gguf_model(d, "alpha:latest", seed="mine")
    before = set(blob_names(d.root))
    r = t.audit(d.root, "import", bundle, "--apply", "--yes", "--format", "json")
    t.exit_code(r, 4, "exit 4: a model refused")
    states = {m["name"]: (m["state"], m["why"]) for m in r.json()["models"]}
    t.eq(states["alpha:latest"][0], "refused", "alpha is refused")
    t.contains(states["alpha:latest"][1], "here with other content", "and says why")
    t.eq(states["beta:latest"][0], "added", "beta goes in")
    t.eq(ids(d.root), {"alpha:latest": mine["id"], "beta:latest": b["id"]}, "alpha stays the store's own")
    added = set(blob_names(d.root)) - before
    only_alpha = {"sha256-" + x[7:] for x in [a["config"]["digest"]] + [l["digest"] for l in a["layers"]]} - \
        {"sha256-" + x[7:] for x in [b["config"]["digest"]] + [l["digest"] for l in b["layers"]]}
    t.eq(added & only_alpha, set(), "nothing of alpha is written")
    # a blob here with another size: refused, pointing at repair
    d2 = t.new_store("dst2")
    wl = t.weight_layer(a)
    os.makedirs(d2.blobs, exist_ok=True)
    open(d2.blob_path(wl["digest"]), "wb").write(b"short")
    r = t.audit(d2.root, "import", bundle, "--apply", "--yes", "--format", "json")
    st = {m["name"]: m for m in r.json()["models"]}
    t.eq(st["alpha:latest"]["state"], "refused", "a damaged blob here refuses the model")
    t.contains(st["alpha:latest"]["why"], "ollama-audit repair", "and says how to mend it")
    t.eq(open(d2.blob_path(wl["digest"]), "rb").read(), b"short", "the file is not replaced")

with t.guard("--apply on a terminal asks; declining writes nothing"):
    s, info = t.clean_store("tty")
    bundle = export(s.root, "tiny")
    d = empty_store("tty-dst")
    r = t.run_tty(["--store", d, "import", bundle, "--apply"], b"n\n")
    t.exit_code(r, 0, "declining exits 0")
    t.eq(tag_files(d), [], "nothing written")
    r = t.run_tty(["--store", d, "import", bundle, "--apply"], b"y\n")
    t.exit_code(r, 0, "yes")
    t.eq(ids(d), {"tiny:latest": info["id"]}, "imported")
    r = t.audit(d, "import", bundle, "--apply")
    t.exit_code(r, 16, "no terminal, no --yes: a usage error")

with t.guard("import --from STORE MODEL...: between stores, owned and moded as the target's"):
    src = t.new_store("from")
    a = t.add_gguf_model(src, "alpha:latest", seed="a")
    t.add_gguf_model(src, "other:latest", seed="o")
    d = empty_store("to")
    r = t.audit(d, "import", "--from", src.root, "alpha", "--format", "json")
    t.exit_code(r, 0, "a dry run")
    t.eq(tag_files(d), [], "writes nothing")
    r = t.audit(d, "import", "--from", src.root, "alpha", "--apply", "--yes", "--format", "json")
    t.exit_code(r, 0, "--apply")
    t.eq(ids(d), {"alpha:latest": a["id"]}, "alpha only, with its ID")
    hows = {b_["how"] for b_ in r.json()["blobs"]}
    t.ok(hows <= {"reflink", "hardlink", "copy"} and hows, "each blob says how it came", hows)
    t.exit_code(t.audit(d, "verify"), 0, "verifies")
    t.exit_code(t.audit(d, "import", "--from", src.root, "nosuch", "--apply", "--yes"), 16, "an unknown model")
    # a corrupt source blob is never linked nor copied
    src2 = t.new_store("from2")
    c = t.add_gguf_model(src2, "gamma:latest", seed="g")
    t.flip_last_byte(src2.blob_path(t.weight_layer(c)["digest"]))
    d2 = empty_store("to2")
    r = t.audit(d2, "import", "--from", src2.root, "gamma", "--apply", "--yes", "--format", "json")
    t.exit_code(r, 4, "a corrupt source: exit 4")
    t.eq(tag_files(d2), [], "no tag")
    t.ok(not any(n.startswith("sha256-") and len(n) == 71 and n[7:] == t.weight_layer(c)["digest"][7:]
                 for n in blob_names(d2)), "the corrupt blob is not there")
    if not t.IS_ROOT:
        t.skip("[import --from] owners: chown needs root")
    else:
        src3 = t.new_store("from3")
        e = t.add_gguf_model(src3, "eps:latest", seed="e")
        for n in os.listdir(src3.blobs):
            os.chmod(os.path.join(src3.blobs, n), 0o600)
        d3 = empty_store("to3")
        ms.chown_tree(os.path.dirname(d3), ms.UIDS["alice"])
        r = t.audit(d3, "import", "--from", src3.root, "eps", "--apply", "--yes")
        t.exit_code(r, 0, "into alice's store")
        for dd, _, files in os.walk(d3):
            for n in files:
                st = os.stat(os.path.join(dd, n))
                t.eq((st.st_uid, stat.S_IMODE(st.st_mode)), (ms.UIDS["alice"], 0o644),
                     "%s: alice's, 0644" % os.path.relpath(os.path.join(dd, n), d3))

t.done()
