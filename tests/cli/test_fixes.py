#!/usr/bin/env python3
"""Every fix a finding prints works when followed to the letter.

One small store per finding code: a copy of a fixture store (the registry
is a second, pristine copy), damaged so that the audit reports the code.
The fix the finding prints (check's or verify's --format json `fix`) is run
as printed by a shell, at a terminal that answers "y" to ollama-audit's
question, with `ollama` on the PATH as tests/tools/ollama_emu.py: Ollama's
pull and rm as upstream does them (a pull fetches only missing blobs and
keeps any blob file that exists, whatever its content). A missing or
damaged blob's fix is `ollama-audit repair NAME --apply`: with no good copy
on the machine it removes the damaged file and prints the `ollama pull
NAME` that then fetches it, which is run as printed too. Then the audit
runs again and the finding is gone. The stores: the fixtures, and the
newest layout's (tests/tools/make_newest_store.py: anchors, a split GGUF
and its split directories, a zero-length tag)

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
import make_newest_store as mk  # noqa: E402  (tests/tools is on the path)

t.check_binary()

TOOLS = os.path.abspath(os.path.join(t.SOURCE_DIR, "tests", "tools"))
ENV = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("fixes-sysroot")}
COMMANDS = ("ollama-audit ", "ollama ", "mv ", "rm ", "rmdir ", "cp ", "chmod ", "sudo ")
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


def follow(fix, store, registry, env=None):
    """Run fix as a person would: a shell, a terminal that answers "y"; in
    the environment the audit that printed it ran in (env)."""
    env = t._hermetic(dict(os.environ), dict(ENV, **(env or {}), OLLAMA_MODELS=store, OA_EMU_REGISTRY=registry,
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


def pulls_printed(out):
    """The `ollama pull NAME` lines repair printed for what no good copy mends."""
    return [ln.strip() for ln in out.splitlines() if ln.startswith("  ollama pull ")]


def follow_through(fix, store, registry, env=None):
    """Follow fix; a repair that found no good copy on the machine removed
    the damaged file and exits 4 with the pulls to run: run them as printed.
    Returns the exit code (0: every step did its part) and the output."""
    rc, out, err = follow(fix, store, registry, env)
    if fix.startswith("ollama-audit repair ") and rc == 4 and pulls_printed(out):
        for pull in pulls_printed(out):
            rc, o, e = follow(pull, store, registry, env)
            out, err = out + o, err + e
            if rc:
                break
    return rc, out, err


def manual_ok(f):
    """A fix that is no command says what to do, and does not start like one."""
    fix = f.get("fix") or ""
    if fix.startswith(COMMANDS):
        return
    t.ok(fix.startswith(MANUAL) and len(fix) > 12 and "{" not in fix,
         "%s's fix is a command or says what to do by hand" % f["code"], fix)


def same(a, b):
    return a["code"] == b["code"] and a.get("path") == b.get("path") and a.get("model") == b.get("model")


def case(title, code, base, damage, probe=("check",), pick=lambda f: True, before=None, stores=None):
    """Damage a copy of base (or of the pair stores() makes); the audit
    reports `code` (the finding pick chooses); follow its fix; the audit no
    longer reports it."""
    with t.guard("%s: %s" % (code, title)):
        registry, store = stores() if stores else fixture(base, code)
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
        rc, out, err = follow_through(fix, store, registry)
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


# ---- blobs: missing, damaged (a pull keeps a damaged file: repair removes it first, then the pull it prints)
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
        t.eq(f["fix"], "ollama-audit repair demo-llama:1b --apply --store %s" % store,
             "repair, which reads the same (default) cache", f["fix"])
        rc, out, err = follow(f["fix"], store, registry, env={"XDG_CACHE_HOME": xdg})
        t.eq((rc, pulls_printed(out)), (4, ["ollama pull demo-llama:1b"]),
             "repair removes the damaged file and says the pull to run", out + err)
        rc, out, err = follow("ollama pull demo-llama:1b", store, registry)
        t.eq(rc, 0, "the pull runs", out + err)
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
    case("the weights nobody may read", "unreadable", "demo-store",
         lambda s: os.chmod(blob(s, MODEL_BLOB), 0), pick=lambda f: f.get("path", "").startswith("blobs/"))
    # a text layer the server reads at every load, which check does not parse
    case("a license nobody may read", "unreadable", "demo-store",
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

# ---- the newest layout: anchors that link manifest blobs, a split GGUF, split directories
SHARDED = "llama3.3:70b"
TINY_TAG = os.path.join("manifests-v2", "ollama.com", "library", "tinyllama", "latest")
NEWEST = {}


def newest(tag, blocked=False):
    """A registry and a store of the newest layout. Unless blocked, without
    its zero-length tag (which makes the server's cleanup, and prune
    --apply, fail closed): each fix can then be followed alone."""
    out = []
    for what in ("registry", "store"):
        dst = os.path.join(t.tempdir("fixes-%s-%s" % (tag, what)), "models")
        NEWEST.update(mk.build(dst))
        if not blocked:
            shutil.rmtree(os.path.dirname(os.path.join(dst, TINY_TAG)))
        out.append(dst)
    return out


def v2_manifest(root, name):
    host, ns, model, tg = ("ollama.com", "library") + tuple(name.split(":"))
    with open(os.path.join(root, "manifests-v2", host, ns, model, tg), "rb") as f:
        return json.loads(f.read())


def swap_shards(root):
    """The sharded model's tag now names a child (and list) whose second and
    third shards are in each other's place: what an edited or corrupted
    manifest says, which a pull writes again."""
    s = oa.Store(root)
    lst = v2_manifest(root, SHARDED)
    with open(blob(root, lst["manifests"][0]["digest"][7:]), "rb") as f:
        child = json.loads(f.read())
    child["layers"][1], child["layers"][2] = child["layers"][2], child["layers"][1]
    data = oa.go_json(child)
    lst["manifests"][0]["digest"] = s.add_blob(data)
    lst["manifests"][0]["size"] = len(data)
    new_list = s.add_blob(oa.go_json(lst))
    s.add_v2_tag(SHARDED, new_list)


def shard(n):
    return NEWEST["shard%d" % n][7:]


case("a stale split directory", "split-dir", None, lambda s: None, stores=lambda: newest("split-dir"),
     pick=lambda f: f.get("path") == NEWEST["split_stale"])
case("the shards are out of order", "split-mismatch", None, swap_shards, stores=lambda: newest("split-mismatch"),
     pick=lambda f: f.get("model") == SHARDED)
case("a shard is truncated", "size-mismatch", None, lambda s: rewrite(blob(s, shard(2)), lambda d: d[:len(d) // 2]),
     stores=lambda: newest("shard-cut"), pick=lambda f: f.get("model") == SHARDED)
case("the first shard is gone", "missing-blob", None, lambda s: os.remove(blob(s, shard(1))),
     stores=lambda: newest("shard-gone"), pick=lambda f: f.get("model") == SHARDED)
case("an empty manifests-v2 directory", "empty-manifest-dir", None,
     lambda s: os.makedirs(os.path.join(s, "manifests-v2", "ollama.com", "library", "gone")),
     stores=lambda: newest("empty-v2"), pick=lambda f: f.get("path", "").startswith("manifests-v2/"))


def good_tiny_tag():
    """The newest store with its zero-length tag, and a registry where that
    tag is whole (gemma3:1b's manifest blob under the name tinyllama)."""
    registry, store = newest("tiny", blocked=True)
    tag = os.path.join(registry, TINY_TAG)
    os.remove(tag)
    oa.Store(registry).add_v2_tag("tinyllama:latest", NEWEST["gemma1b"])
    return registry, store


case("a zero-length manifests-v2 tag (a copy cut short)", "invalid-manifest", None, lambda s: None,
     stores=good_tiny_tag, pick=lambda f: f.get("model") == "tinyllama:latest")
case("a zero-length tag: the newest server's cleanup fails closed", "prune-blocker", None, lambda s: None,
     stores=good_tiny_tag, pick=lambda f: f.get("path") == TINY_TAG)


def manifest_oa_leftover(s):
    p = os.path.join(s, os.path.dirname(LLAMA), ".manifest-oa4242")
    shutil.copyfile(os.path.join(s, LLAMA), p)
    os.utime(p, (time.time() - 2 * 86400,) * 2)


case("what an rm --child killed mid-rewrite leaves", "temp-file", "demo-store", manifest_oa_leftover,
     pick=lambda f: (f.get("path") or "").endswith(".manifest-oa4242"))

# ---- a model created here: no registry has it, so nothing sends it to a pull
SYSTEM_BLOB = "b7d24f390eb9"  # alice/tiny-coder:q4's own system layer (its prefix)


def alice_own(root):
    """The blob only alice/tiny-coder:q4 (created here) names: its system layer."""
    return next(n[7:] for n in os.listdir(os.path.join(root, "blobs")) if n.startswith("sha256-" + SYSTEM_BLOB))


with t.guard("a damaged blob only a model created here names: repair says how to create it again, no pull"):
    registry, store = fixture("demo-store", "local")
    own = alice_own(store)
    rewrite(blob(store, own), lambda d: d[:len(d) // 2])
    found = audit(store, ("check",), None)
    mine = [f for f in found if f["code"] == "size-mismatch" and f.get("model") == "alice/tiny-coder:q4"]
    t.ok(mine, "the local model's size-mismatch", found)
    for f in mine:
        t.eq(f["fix"], "ollama-audit repair alice/tiny-coder:q4 --apply --store %s" % store, "repair", f["fix"])
        rc, out, err = follow(f["fix"], store, registry)
        t.eq(rc, 4, "damage is left for its maker to mend: exit 4", out + err)
        t.eq(pulls_printed(out), [], "no pull of a model no registry has", out)
        t.contains(" ".join(out.split()), "ollama create alice/tiny-coder:q4", "says how to create it again", out)
        t.ok(not os.path.exists(blob(store, own)), "the damaged file is gone (create keeps a blob file that is there)")

with t.guard("a damaged blob a model created here shares with a pulled one: the pulled one's pull mends both"):
    registry, store = fixture("demo-store", "shared")
    rewrite(blob(store, MODEL_BLOB), lambda d: d[:len(d) // 2])
    found = audit(store, ("check",), None)
    mine = [f for f in found if f["code"] == "size-mismatch" and f.get("model") == "alice/tiny-coder:q4"]
    t.ok(mine, "the local model's size-mismatch", found)
    for f in mine:
        rc, out, err = follow(f["fix"], store, registry)
        t.eq((rc, pulls_printed(out)), (4, ["ollama pull demo-llama:1b"]),
             "the pull of the pulled model that names the blob, none of the local one", out + err)
        t.contains(" ".join(out.split()), "ollama create alice/tiny-coder:q4", "and how to create the local one", out)
        rc, out, err = follow("ollama pull demo-llama:1b", store, registry)
        t.eq(rc, 0, "the pull runs", out + err)
        t.eq([g for g in audit(store, ("check",), None) if g["code"] == "size-mismatch"], [],
             "both models are whole again")

# ---- a printed mv never lands on a file that is there: nothing is lost by following it
def slurp(path):
    """A file's sha256 (what following a fix must keep)."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def store_files(root):
    """Every regular file under root, by content."""
    out = []
    for d, _, files in os.walk(root):
        for n in files:
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(slurp(p))
    return sorted(out)


with t.guard("legacy-blob-name when blobs/sha256-<hex> is there too: the fix keeps both files"):
    registry, store = fixture("demo-store", "legacy-both")
    with open(os.path.join(store, "blobs", "sha256:" + MODEL_BLOB), "wb") as f:
        f.write(b"an older copy, cut short")
    # and two legacy names whose hex differs in case alone (the server keeps the case)
    os.rename(blob(store, ORPHAN_BLOB), os.path.join(store, "blobs", "sha256:" + ORPHAN_BLOB))
    with open(os.path.join(store, "blobs", "sha256:" + ORPHAN_BLOB.upper()), "wb") as f:
        f.write(b"upper case")
    good = slurp(blob(store, MODEL_BLOB))
    had = store_files(store)
    mine = [f for f in audit(store, ("check",), None) if f["code"] == "legacy-blob-name"]
    t.eq(len(mine), 3, "the legacy names' findings", mine)
    for f in mine:
        if f["path"] == "blobs/sha256:" + MODEL_BLOB:
            t.contains(f["message"], "over the file of that name that is there", "the server's start replaces the blob")
        if f["path"] == "blobs/sha256:" + ORPHAN_BLOB.upper():
            t.contains(f["message"], "renames it to sha256-" + ORPHAN_BLOB.upper(), "the server keeps the hex's case")
    for f in mine:
        rc, out, err = follow(f["fix"], store, registry)
        t.eq(rc, 0, "the fix runs: %s" % f["fix"], out + err)
    t.eq(slurp(blob(store, MODEL_BLOB)), good, "the referenced blob is untouched", [f["fix"] for f in mine])
    t.eq(store_files(store), had, "no file is lost", [f["fix"] for f in mine])
    t.eq([g for g in audit(store, ("check",), None) if g["code"] in ("legacy-blob-name", "size-mismatch")], [],
         "the legacy names are gone, the model whole")

TWINS = ("manifests/registry.ollama.ai/library/Bad!/x-y", "manifests/registry.ollama.ai/library/Bad!-x/y")


def twins(s):
    """Two invalid names whose slashes-as-dashes are one name, and what an
    earlier set-aside left under that name."""
    for i, rel in enumerate(TWINS):
        os.makedirs(os.path.dirname(os.path.join(s, rel)), exist_ok=True)
        with open(os.path.join(s, rel), "wb") as f:
            f.write(b'{"twin": %d}' % i)
    with open(os.path.join(s, "set-aside-" + TWINS[0].replace("/", "-")), "wb") as f:
        f.write(b"set aside before")


LONG = "manifests/registry.ollama.ai/library/%s!/%s" % ("m" * 200, "t" * 120)  # each part fits, not the two flat

case("an invalid name whose set-aside name would be too long for one file name", "invalid-name", "demo-store",
     lambda s: (os.makedirs(os.path.dirname(os.path.join(s, LONG))), shutil.copyfile(os.path.join(s, LLAMA), os.path.join(s, LONG))),
     pick=lambda f: f.get("path") == LONG)

with t.guard("mv -- PATH STORE/set-aside-...: two paths that flatten alike, a name taken: every file kept"):
    registry, store = fixture("demo-store", "aside")
    twins(store)
    had = store_files(store)
    mine = sorted((f["path"], f["fix"]) for f in audit(store, ("check",), None)
                  if f["code"] == "invalid-name" and f.get("path") in TWINS)
    t.eq([p for p, _ in mine], sorted(TWINS), "both invalid names are found", mine)
    t.eq(len(set(fix.split()[-1] for _, fix in mine)), len(mine), "each is set aside under its own name", mine)
    for path, fix in mine:
        rc, out, err = follow(fix, store, registry)
        t.eq(rc, 0, "the fix runs: %s" % fix, out + err)
    t.eq(store_files(store), had, "no file is lost by following both fixes", [fix for _, fix in mine])
    t.eq([f for f in audit(store, ("check",), None) if f.get("path") in TWINS], [], "both are gone from manifests/")

with t.guard("unreadable through a blob that is a symlink: the fix never chmods what the link leads to"):
    if t.nobody_skip():
        t.skip(t.nobody_skip())
    else:
        registry, store = fixture("demo-store", "perm-link")
        outside = os.path.join(t.tempdir("fixes-outside"), "weights")  # someone else's file, out of the store
        shutil.move(blob(store, MODEL_BLOB), outside)
        os.symlink(outside, blob(store, MODEL_BLOB))
        os.chmod(outside, 0o600 if t.IS_ROOT else 0)
        r = t.run("--store", store, "check", "--format", "json", env=ENV, as_nobody=t.IS_ROOT)
        found = [f for f in t.findings_of(r.json()) if f["code"] == "unreadable" and f.get("path") == "blobs/sha256-" + MODEL_BLOB]
        t.ok(found, "the link's target cannot be read", r.out[:2000])
        for f in found:
            t.ok("chmod" not in f["fix"], "no chmod of the link: chmod follows it to the file out of the store", f["fix"])
            manual_ok(f)

HOSTILE = (b"a\nb", b"esc\x1b[31mred", b"x\xffy", b"$(touch pwned)", b"-rf", b"it's", b"tab\there", b"back\\slash")

with t.guard("hostile file names: the fix runs as printed, the same in text and JSON"):
    registry, store = fixture("demo-store", "hostile")
    for n in HOSTILE:
        with open(os.path.join(store.encode(), b"blobs", n), "wb") as f:
            f.write(b"mine: " + n)
    had = store_files(store)
    text = t.run("--store", store, "check", env=ENV).out
    mine = [f for f in audit(store, ("check",), None) if f["code"] == "foreign-file"]
    t.eq(len(mine), len(HOSTILE), "each is a foreign file", [f.get("path") for f in mine])
    for f in mine:
        t.contains(text, f["fix"], "the text output prints the JSON's fix")
        rc, out, err = follow(f["fix"], store, registry)
        t.eq(rc, 0, "the fix runs: %r" % f["fix"], out + err)
    t.eq(sorted(n for n in os.listdir(os.path.join(store.encode(), b"blobs")) if n in HOSTILE), [],
         "every hostile name left blobs/")
    t.eq(store_files(store), had, "and no file is lost")
    t.ok(not os.path.exists(os.path.join(t.tempdir("fixes-cwd"), "pwned")), "no command ran from a name")

with t.guard("symlinked-blob: the copy the fix makes replaces no file that is there"):
    registry, store = fixture("demo-store", "relink-taken")
    outside_link(store)
    with open(blob(store, ORPHAN_BLOB) + ".copy", "wb") as f:
        f.write(b"someone's file")
    had = store_files(store) + [slurp(os.path.realpath(blob(store, ORPHAN_BLOB)))]  # the link's target too
    mine = [f for f in audit(store, ("check",), None) if f["code"] == "symlinked-blob"]
    t.ok(mine, "the symlinked blob's finding", mine)
    for f in mine[:1]:
        rc, out, err = follow(f["fix"], store, registry)
        t.eq(rc, 0, "the fix runs: %s" % f["fix"], out + err)
        t.ok(not os.path.islink(blob(store, ORPHAN_BLOB)), "the link is a file now")
        t.eq(store_files(store), sorted(had), "no file is lost: %s" % f["fix"])

with t.guard("invalid-name of a model's only manifest: no printed fix leaves its blobs to prune"):
    registry, store = fixture("demo-store", "renamed")
    embed = "manifests/registry.ollama.ai/library/demo-embed/latest"
    bad = "manifests/registry.ollama.ai/library/Embed!/latest"  # a model renamed by hand, badly
    os.makedirs(os.path.dirname(os.path.join(store, bad)))
    os.rename(os.path.join(store, embed), os.path.join(store, bad))
    os.rmdir(os.path.dirname(os.path.join(store, embed)))
    with open(os.path.join(store, bad)) as f:
        named = {l["digest"][7:] for l in json.load(f)["layers"]}
    mine = [f for f in audit(store, ("check",), None) if f.get("path") == bad]
    t.ok(mine, "the bad name's findings", mine)
    for f in mine:
        manual_ok(f)
        if f["fix"].startswith(COMMANDS):
            follow(f["fix"], store, registry)
    for f in audit(store, ("check",), None):
        if f["code"] in ("orphan-blob", "temp-file", "partial-download") and f["fix"].startswith(COMMANDS):
            follow(f["fix"], store, registry)
    t.eq(sorted(h for h in named if not os.path.exists(blob(store, h))), [],
         "every blob the misnamed manifest names is still there")

# ---- every finding of the fixture stores: a command, or what to do by hand
with t.guard("the fixture stores' findings"):
    for base in ("demo-store", "store-0.40", "make_migrated_store.py", "make_040_store.py", "make_newest_store.py"):
        _, store = fixture(base, "all")
        for f in audit(store, ("check",), None):
            manual_ok(f)
            t.ok(f.get("fix"), "every finding has a fix (%s)" % f["code"], f)

t.done()
