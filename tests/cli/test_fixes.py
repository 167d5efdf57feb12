#!/usr/bin/env python3
"""Every fix a finding prints works when followed to the letter.

One small store per finding code: a copy of a fixture store (the registry
is a second, pristine copy), damaged so that the audit reports the code.
The fix the finding prints (check's or verify's --format json `fix`) is run
as printed by a shell, at a terminal that answers "y" to ollama-audit's
question, with `ollama` on the PATH as tests/tools/ollama_emu.py: Ollama's
pull and rm as upstream does them (a pull fetches only missing blobs and
keeps any blob file that exists, whatever its content). Then the audit
runs again and the finding is gone.

A code whose fix is deliberately manual (nothing in the store to mend, a
model created here that no registry has, a file prune keeps) prints what
to do by hand and never starts like a command: checked on every finding of
the stores built here, and, for each code, in tests/unit/test_remedy.c."""

import hashlib
import json
import os
import pty
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()

TOOLS = os.path.abspath(os.path.join(t.SOURCE_DIR, "tests", "tools"))
ENV = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("fixes-sysroot")}
COMMANDS = ("ollama-audit ", "ollama ", "mv ", "rm ", "cp ", "chmod ", "sudo ")
MANUAL = ("none", "by hand: ", "wait: ")
MODEL_BLOB = "2d9c9529b4589def2320ae89334886d371a92d50910d558ab524f4dcc8cdf318"  # demo-llama:1b's weights
LICENSE_BLOB = "564cabf8fcbd491f4eedc49e91816c83caa117b4f02ac91ac35567ea0998ea55"
ORPHAN_BLOB = "eea2b987e671cd1fb9432d31224cba24d9fbfb93546c9083b039eedf57b24d3a"
LLAMA = "manifests/registry.ollama.ai/library/demo-llama/1b"


def emulator_bin():
    """A directory with `ollama` (the emulator) and `ollama-audit` (the binary
    under test), for the PATH of the shell that follows a fix."""
    d = t.tempdir("fixes-bin")
    with open(os.path.join(d, "ollama"), "w") as f:
        f.write('#!/bin/sh\nexec %s %s "$@"\n' % (sys.executable, os.path.join(TOOLS, "ollama_emu.py")))
    os.chmod(os.path.join(d, "ollama"), 0o755)
    os.symlink(os.path.abspath(t.BIN), os.path.join(d, "ollama-audit"))
    return d


BIN_DIR = emulator_bin()


def aged(root, seconds):
    when = time.time() - seconds
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            os.utime(os.path.join(d, n), (when, when), follow_symlinks=False)


def fixture(name, tag):
    """A registry (pristine) and a store to damage: two copies of a fixture
    store, two days old (junk past prune's grace period)."""
    out = []
    for what in ("registry", "store"):
        dst = os.path.join(t.tempdir("fixes-%s-%s" % (tag, what)), "models")
        if name.endswith(".py"):
            subprocess.run([sys.executable, os.path.join(TOOLS, name), "--out", dst], check=True,
                           stdout=subprocess.DEVNULL)
        else:
            subprocess.run(["cp", "-a", os.path.join(t.SOURCE_DIR, "fixtures", name), dst], check=True)
            aged(dst, 2 * 86400)
        out.append(dst)
    return out


def blob(root, hexd):
    return os.path.join(root, "blobs", "sha256-" + hexd)


def audit(root, probe, cache):
    args = ["--store", root] + list(probe) + ["--format", "json"]
    if probe[0] == "verify":
        args += ["--cache", cache]
    r = t.run(*args, env=ENV)
    t.ok(r.code in (0, 1, 4, 5, 8, 9, 12, 13), "%s reads the store" % " ".join(probe), r.err)
    try:
        return t.findings_of(r.json())
    except ValueError:
        t.fail("%s printed no JSON" % " ".join(probe), r.out[:300] + r.err[:300])
        return []


def follow(fix, store, registry):
    """Run fix as a person would: a shell, a terminal that answers "y"."""
    env = t._hermetic(dict(os.environ), dict(ENV, OLLAMA_MODELS=store, OA_EMU_REGISTRY=registry,
                                             PATH=BIN_DIR + os.pathsep + os.environ.get("PATH", "")))
    env["ASAN_OPTIONS"] += ":detect_leaks=0"
    master, slave = pty.openpty()
    p = subprocess.Popen(["sh", "-c", fix], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, cwd=t.tempdir("fixes-cwd"))
    os.close(slave)
    os.write(master, b"y\n")
    out, err = p.communicate(timeout=120)
    os.close(master)
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def manual_ok(f):
    """A fix that is no command says what to do, and does not start like one."""
    fix = f.get("fix") or ""
    if fix.startswith(COMMANDS):
        return
    t.ok(fix.startswith(MANUAL) and len(fix) > 12 and "{" not in fix,
         "%s's fix is a command or says what to do by hand" % f["code"], fix)


def same(a, b):
    return a["code"] == b["code"] and a.get("path") == b.get("path") and a.get("model") == b.get("model")


def case(title, code, base, damage, probe=("check",), pick=lambda f: True, before=None):
    """Damage a copy of base; the audit reports `code` (the finding pick
    chooses); follow its fix; the audit no longer reports it."""
    with t.guard("%s: %s" % (code, title)):
        registry, store = fixture(base, code)
        cache = os.path.join(t.tempdir("fixes-cache"), "verify-cache.json")
        if before:
            before(store, cache)
        damage(store)
        found = audit(store, probe, cache)
        for f in found:
            manual_ok(f)
        mine = [f for f in found if f["code"] == code and pick(f)]
        t.ok(mine, "the damage makes a %s finding" % code, [(f["code"], f.get("model"), f.get("path")) for f in found])
        if not mine:
            return
        fix = mine[0]["fix"]
        t.ok(fix.startswith(COMMANDS), "%s prints a command" % code, fix)
        rc, out, err = follow(fix, store, registry)
        t.eq(rc, 0, "the fix runs: %s" % fix, out + err)
        after = audit(store, probe, cache)
        t.eq([f for f in after if same(f, mine[0])], [], "%s is gone after: %s" % (code, fix))
        return store, after


def rewrite(path, fn):
    with open(path, "rb") as f:
        data = f.read()
    st = os.stat(path)
    with open(path, "wb") as f:
        f.write(fn(data))
    os.utime(path, (st.st_atime, st.st_mtime))


def demo_llama(f):
    return f.get("model") == "demo-llama:1b"


def llama_config(root):
    with open(os.path.join(root, LLAMA)) as f:
        return json.load(f)["config"]["digest"][7:]


# ---- blobs: missing, damaged (a pull keeps a damaged file: the fix moves it aside first)
case("a layer blob is gone", "missing-blob", "demo-store", lambda s: os.remove(blob(s, LICENSE_BLOB)),
     pick=demo_llama)
case("the weights are truncated", "size-mismatch", "demo-store",
     lambda s: rewrite(blob(s, MODEL_BLOB), lambda d: d[:len(d) // 2]), pick=demo_llama)
case("the weights grew", "size-mismatch", "demo-store",
     lambda s: rewrite(blob(s, MODEL_BLOB), lambda d: d + b"\0" * 100), pick=demo_llama)
case("the weights are an empty file", "empty-blob", "demo-store",
     lambda s: rewrite(blob(s, MODEL_BLOB), lambda d: b""), pick=demo_llama)
case("the weights' header is broken", "invalid-gguf", "demo-store",
     lambda s: rewrite(blob(s, MODEL_BLOB), lambda d: b"XXXX" + d[4:]), pick=demo_llama)
case("the weights are zeroed (verify)", "digest-mismatch", "demo-store",
     lambda s: rewrite(blob(s, MODEL_BLOB), lambda d: b"\0" * len(d)), probe=("verify",), pick=demo_llama)


def verified(store, cache):
    r = t.run("--store", store, "verify", "--cache", cache, env=ENV)
    t.exit_code(r, 0, "the store verifies clean first")


def flip(d):
    return d[:-1] + bytes([d[-1] ^ 1])


case("a byte changed since verify (verify --quick)", "fingerprint-mismatch", "demo-store",
     lambda s: rewrite(blob(s, MODEL_BLOB), flip), probe=("verify", "--quick"), pick=demo_llama, before=verified)


with t.guard("digest-mismatch: verify's cached failure, as check reports it"):
    registry, store = fixture("demo-store", "cached")
    xdg = t.tempdir("fixes-xdg")
    cache = os.path.join(xdg, "ollama-audit", "verify-cache.json")  # check reads the default cache
    os.makedirs(os.path.dirname(cache))
    rewrite(blob(store, MODEL_BLOB), flip)
    t.run("--store", store, "verify", "--cache", cache, env=ENV)
    r = t.run("--store", store, "check", "--format", "json", env=dict(ENV, XDG_CACHE_HOME=xdg))
    found = [f for f in t.findings_of(r.json()) if f["code"] == "digest-mismatch" and demo_llama(f)]
    t.ok(found, "check reports what verify found", r.out)
    for f in found[:1]:
        t.ok(f["fix"].startswith("mv -- "), "the damaged blob is moved aside", f["fix"])
        rc, out, err = follow(f["fix"], store, registry)
        t.eq(rc, 0, "the fix runs", out + err)
        r = t.run("--store", store, "verify", "--cache", cache, "--format", "json", env=ENV)
        t.eq([g["code"] for g in t.findings_of(r.json()) if g["code"] == "digest-mismatch"], [],
             "verify finds the blob good again")

# ---- a config blob: broken (a damaged blob), gone (pulled again)
case("the config is not JSON", "invalid-config", "demo-store",
     lambda s: rewrite(blob(s, llama_config(s)), lambda d: b"{" + b"x" * (len(d) - 1)), pick=demo_llama)
case("the config is gone", "missing-config", "demo-store", lambda s: os.remove(blob(s, llama_config(s))),
     pick=demo_llama)
case("the config is gone: ollama list does not show it", "hidden-from-list", "demo-store",
     lambda s: os.remove(blob(s, llama_config(s))), pick=demo_llama)

# ---- manifests
case("the manifest is garbage", "invalid-manifest", "demo-store",
     lambda s: rewrite(os.path.join(s, LLAMA), lambda d: b"garbage"), pick=demo_llama)
case("a garbage manifest blocks the server's prune", "prune-blocker", "demo-store",
     lambda s: rewrite(os.path.join(s, LLAMA), lambda d: b"garbage"), pick=demo_llama)
case("a digest in upper case", "invalid-digest", "demo-store",
     lambda s: rewrite(os.path.join(s, LLAMA), lambda d: d.replace(LICENSE_BLOB.encode(), LICENSE_BLOB.upper().encode())),
     pick=demo_llama)
BAD = "manifests/registry.ollama.ai/library/Bad!Name/latest"


def bad_name(s):
    os.makedirs(os.path.dirname(os.path.join(s, BAD)))
    shutil.copyfile(os.path.join(s, LLAMA), os.path.join(s, BAD))


case("a file whose path is no model name", "invalid-name", "demo-store", bad_name)
case("a file whose path is no model name blocks the server's prune", "prune-blocker", "demo-store", bad_name,
     pick=lambda f: f.get("path") == BAD)


def stray(s):
    with open(os.path.join(s, "manifests", "registry.ollama.ai", "library", "stray.json"), "w") as f:
        f.write("{}")


case("a file at depth 3 under manifests/", "ignored-file", "demo-store", stray)
case("an empty directory under manifests/", "empty-manifest-dir", "demo-store",
     lambda s: os.makedirs(os.path.join(s, "manifests", "registry.ollama.ai", "library", "gone")))

# ---- blobs/ entries that are no blob Ollama wrote
case("an old blob name with ':'", "legacy-blob-name", "demo-store",
     lambda s: os.rename(blob(s, ORPHAN_BLOB), os.path.join(s, "blobs", "sha256:" + ORPHAN_BLOB)))


def outside_link(s):
    target = os.path.join(t.tempdir("fixes-outside"), "weights")
    shutil.move(blob(s, ORPHAN_BLOB), target)
    os.symlink(target, blob(s, ORPHAN_BLOB))


case("a blob that is a symlink out of the store", "symlinked-blob", "demo-store", outside_link)
case("a blob that is a dangling symlink", "symlinked-blob", "demo-store",
     lambda s: os.symlink("/nonexistent/weights", blob(s, "f" * 64)))


def foreign(s):
    with open(os.path.join(s, "blobs", "notes.txt"), "w") as f:
        f.write("mine")


case("a file Ollama did not write", "foreign-file", "demo-store", foreign)

# ---- junk: prune --apply removes it
for code in ("orphan-blob", "partial-download", "temp-file"):
    case("the demo store's own", code, "demo-store", lambda s: None)
case("a metadata cache whose blob is gone", "stale-metadata", "make_migrated_store.py", lambda s: None)

with t.guard("junk while a broken manifest blocks prune: its fix comes first"):
    registry, store = fixture("demo-store", "blocked")
    rewrite(os.path.join(store, LLAMA), lambda d: b"garbage")
    found = audit(store, ("check",), None)
    temp = [f for f in found if f["code"] == "temp-file"]
    t.ok(temp and temp[0]["fix"].startswith("by hand: first fix what its prune-blocker finding names"),
         "prune --apply would refuse: the fix says what comes first", temp)
    for f in found:
        manual_ok(f)
    bad = [f for f in found if f["code"] == "invalid-manifest"]
    t.ok(bad, "the broken manifest's finding", found)
    if bad and temp:
        rc, out, err = follow(bad[0]["fix"], store, registry)
        t.eq(rc, 0, "its fix runs: %s" % bad[0]["fix"], out + err)
        temp = [f for f in audit(store, ("check",), None) if f["code"] == "temp-file"]
        t.ok(temp and temp[0]["fix"] == "ollama-audit prune --apply --store %s" % store,
             "then the temp file's fix is prune --apply", temp)
        if temp:
            rc, out, err = follow(temp[0]["fix"], store, registry)
            t.eq(rc, 0, "which runs", out + err)
            t.eq([f for f in audit(store, ("check",), None) if f["code"] == "temp-file"], [], "and removes it")

# ---- permissions (root reads everything)
if os.getuid() == 0:
    with t.guard("unreadable: a blob nobody may read"):
        t.skip("running as root: every file is readable (unit test_remedy checks the chmod fix)")
else:
    case("a blob nobody may read", "unreadable", "demo-store",
         lambda s: os.chmod(blob(s, LICENSE_BLOB), 0), pick=lambda f: f.get("path", "").startswith("blobs/"))

# ---- Ollama 0.40 stores
GEMMA = "manifests-v2/ollama.com/library/gemma4/12b"


def no_child_here(s):
    with open(os.path.join(s, GEMMA), "rb") as f:
        lst = json.load(f)
    for e in lst["manifests"]:
        if os.path.exists(blob(s, e["digest"][7:])):
            os.remove(blob(s, e["digest"][7:]))


case("a list none of whose children is here", "missing-child", "store-0.40", no_child_here)


def dangling_tag(s):
    p = os.path.join(s, "manifests-v2", "ollama.com", "library", "gone", "latest")
    os.makedirs(os.path.dirname(p))
    os.symlink("../../../../blobs/sha256-" + "d" * 64, p)


case("a manifests-v2 tag that links to nothing", "dangling-tag", "store-0.40", dangling_tag)


def nested(s):
    q = os.path.join(s, "manifests-v2", "ollama.com", "library", "qwen3.5", "4b")
    with open(q, "rb") as f:
        inner = f.read()
    outer = oa.go_json({"schemaVersion": 2, "mediaType": oa.MT_MANIFEST_LIST, "manifests": [
        {"mediaType": oa.MT_MANIFEST, "digest": "sha256:" + hashlib.sha256(inner).hexdigest(), "runner": "llamacpp"}]})
    hexd = hashlib.sha256(outer).hexdigest()
    with open(blob(s, hexd), "wb") as f:
        f.write(outer)
    p = os.path.join(s, "manifests-v2", "ollama.com", "library", "nest", "latest")
    os.makedirs(os.path.dirname(p))
    os.symlink("../../../../blobs/sha256-" + hexd, p)


case("a list whose child is a list", "nested-list", "store-0.40", nested)
case("a compatibility shadow whose model is gone", "orphaned-shadow", "make_migrated_store.py", lambda s: None)

# ---- a model created here: no registry has it, so its fix is by hand
with t.guard("a damaged blob of a model created here: no pull, what to do by hand"):
    registry, store = fixture("demo-store", "local")
    rewrite(blob(store, MODEL_BLOB), lambda d: d[:len(d) // 2])
    found = audit(store, ("check",), None)
    mine = [f for f in found if f["code"] == "size-mismatch" and f.get("model") == "alice/tiny-coder:q4"]
    t.ok(mine, "the local model's size-mismatch", found)
    for f in mine:
        t.ok(f["fix"].startswith("by hand: "), "a fix by hand", f["fix"])
        t.not_contains(f["fix"], "ollama pull", "no pull of a model no registry has")
        t.contains(f["fix"], "create it again", "says to create it again")
        t.contains(f["fix"], "mv -- %s %s.damaged" % (blob(store, MODEL_BLOB), blob(store, MODEL_BLOB)),
                   "after moving the damaged file aside, by its path")

# ---- every finding of the fixture stores: a command, or what to do by hand
with t.guard("the fixture stores' findings"):
    for base in ("demo-store", "store-0.40", "make_migrated_store.py", "make_040_store.py"):
        _, store = fixture(base, "all")
        for f in audit(store, ("check",), None):
            manual_ok(f)
            t.ok(f.get("fix"), "every finding has a fix (%s)" % f["code"], f)

t.done()
