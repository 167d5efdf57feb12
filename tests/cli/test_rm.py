#!/usr/bin/env python3
"""`ollama-audit rm MODEL...`: dry run with exact bytes, --apply removes the
manifest, its empty directories and only the blobs no other manifest
(parseable or not) can reference; --plan, --quarantine + restore."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()


def alloc(p):
    return os.lstat(p).st_blocks * 512


def store():
    s = t.new_store("rm")
    a = t.add_gguf_model(s, "alpha:latest", seed="a")
    b = t.add_gguf_model(s, "beta:latest", seed="b")     # shares template + params with alpha
    c = t.add_gguf_model(s, "hf.co/someone/gamma:q4", seed="c")
    return s, a, b, c


with t.guard("rm of a model sharing blobs with another"):
    s, a, b, c = store()
    before = t.snapshot(s.root)
    r = t.audit(s.root, "rm", "alpha", "--format", "json")
    t.exit_code(r, 0, "dry run")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "dry run writes nothing")
    doc = r.json()["stores"][0]
    paths = [e["path"] for e in doc["entries"]]
    t.eq(paths[0], "manifests/registry.ollama.ai/library/alpha/latest", "the manifest comes first")
    t.eq(paths[1], "manifests/registry.ollama.ai/library/alpha", "then its empty directory")
    uniq = [a["layers"][0], a["config"]]
    t.eq(sorted(paths[2:]), sorted("blobs/" + x["digest"].replace(":", "-") for x in uniq), "then its own blobs")
    shared = sorted("blobs/" + x["digest"].replace(":", "-") for x in a["layers"][1:])
    t.eq(sorted(e["path"] for e in doc["kept"]), shared, "shared blobs kept")
    t.ok(all("also used by" in e["note"] for e in doc["kept"]), "kept because another model uses them")
    want = sum(alloc(s.blob_path(x["digest"])) for x in uniq) + alloc(a["path"]) + \
        alloc(os.path.dirname(a["path"]))
    t.eq(doc["planned_bytes"], want, "exact bytes the plan frees")
    r = t.audit(s.root, "rm", "alpha:latest", "--apply", "--yes")
    t.exit_code(r, 0, "apply")
    t.ok(not os.path.exists(a["path"]), "manifest removed")
    t.ok(not os.path.exists(os.path.dirname(a["path"])), "empty model dir removed")
    t.ok(os.path.isdir(os.path.join(s.manifests, "registry.ollama.ai", "library")), "library/ kept (beta)")
    for x in uniq:
        t.ok(not os.path.exists(s.blob_path(x["digest"])), "unique blob removed")
    for x in a["layers"][1:]:
        t.ok(os.path.exists(s.blob_path(x["digest"])), "shared blob kept")
    r = t.audit(s.root, "check", "--format", "json")
    t.eq([f for f in t.findings_of(r.json()) if f["severity"] == "error"], [], "check clean after rm")
    r = t.audit(s.root, "rm", "hf.co/someone/gamma:q4", "--apply", "--yes")
    t.exit_code(r, 0, "rm gamma")
    t.ok(not os.path.exists(os.path.join(s.manifests, "hf.co")), "empty dirs up to (not incl.) manifests/ removed")
    t.ok(os.path.isdir(s.manifests), "manifests/ kept")

with t.guard("rm keeps blobs an unparseable manifest may reference; a tag alias keeps all"):
    s, a, b, c = store()
    s.write_raw("manifests/registry.ollama.ai/library/broken/latest",
                '{"layers":[{"digest":"%s"}' % a["layers"][0]["digest"])
    s.add_manifest("alpha:alias", a["config"], a["layers"][:1])
    r = t.audit(s.root, "rm", "alpha:latest", "--format", "json")
    doc = r.json()["stores"][0]
    t.eq([e["path"] for e in doc["entries"] if e["category"] == "model-blob"], [],
         "nothing to remove: config used by the alias, weights mentioned by the broken manifest")
    r = t.audit(s.root, "rm", "alpha:latest", "--apply", "--yes")
    t.exit_code(r, 8, "a corrupt manifest (not the one removed) blocks rm without --force")
    r = t.audit(s.root, "rm", "alpha:latest", "--apply", "--yes", "--force")
    t.exit_code(r, 0, "--force")
    t.ok(os.path.exists(s.blob_path(a["layers"][0]["digest"])), "weights kept for the broken manifest")
    r = t.audit(s.root, "rm", "broken", "--apply", "--yes")
    t.exit_code(r, 0, "rm of the broken manifest itself is not blocked by it")
    t.ok(not os.path.exists(os.path.join(s.manifests, "registry.ollama.ai/library/broken")), "broken removed")

with t.guard("rm errors"):
    s, a, b, c = store()
    r = t.audit(s.root, "rm", "nosuchmodel")
    t.exit_code(r, 16, "unknown model")
    # `rm $(ollama-audit list -q --unused-for 90d)` when nothing is unused:
    # nothing asked, nothing done, no error
    before = t.snapshot(s.root)
    r = t.audit(s.root, "rm")
    t.exit_code(r, 0, "no model: nothing to remove")
    t.contains(r.err, "no MODEL given: nothing to remove", "and says so")
    t.eq(r.out, "", "no plan")
    r = t.audit(s.root, "rm", "--apply", "--yes")
    t.exit_code(r, 0, "no model with --apply: nothing to remove")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing changed")
    r = t.audit(s.root, "rm", "alpha", "--apply")
    t.exit_code(r, 16, "no --yes without a TTY")
    t.ok(os.path.exists(a["path"]), "nothing removed")

with t.guard("rm --plan, --apply --plan, --quarantine and restore"):
    s, a, b, c = store()
    before = t.snapshot(s.root)
    plan = os.path.join(t.tempdir("rmplan"), "p.json")
    r = t.audit(s.root, "rm", "alpha", "beta", "--plan", plan)
    t.exit_code(r, 0, "plan")
    doc = json.load(open(plan))
    t.eq(doc["command"], "rm", "rm plan")
    cats = [e["category"] for e in doc["entries"]]
    t.eq(cats[:2], ["manifest", "manifest"], "manifests first")
    t.ok(cats.index("model-blob") > max(i for i, c_ in enumerate(cats) if c_ != "model-blob"), "blobs last")
    t.eq(len([x for x in cats if x == "model-blob"]), 4, "alpha+beta: 2 unique each (template/params: gamma)")
    r = t.audit(s.root, "prune", "--apply", "--yes", "--plan", plan)
    t.exit_code(r, 16, "prune refuses an rm plan")
    q = os.path.join(t.tempdir("rmq"), "q")
    r = t.audit(s.root, "rm", "--apply", "--yes", "--plan", plan, "--quarantine", q)
    t.exit_code(r, 0, "apply plan into quarantine")
    t.ok(not os.path.exists(a["path"]) and not os.path.exists(b["path"]), "both manifests gone")
    r = t.run("restore", q, "--all")
    t.exit_code(r, 0, "restore")
    strip = lambda snap: {k: (v[0], v[1], v[3], v[4]) if v[0] == 0o040000 else v for k, v in snap.items()}
    t.eq(t.diff_snapshots(strip(before), strip(t.snapshot(s.root))), [], "store identical after restore")
    r = t.audit(s.root, "check", "--format", "json")
    t.eq([f for f in t.findings_of(r.json()) if f["severity"] == "error"], [], "check clean after restore")

with t.guard("rm of one tag of a hard-linked or symlinked manifest keeps the blobs (M6)"):
    for how in ("hardlink", "symlink", "symlink-rev"):
        s, a, b, c = store()
        d = os.path.dirname(a["path"])
        if how == "hardlink":
            os.link(a["path"], os.path.join(d, "v1"))
        elif how == "symlink":
            os.symlink("latest", os.path.join(d, "v1"))
        else:                       # v1 is the file, latest points at it; rm latest
            os.rename(a["path"], os.path.join(d, "v1"))
            os.symlink("v1", a["path"])
        victim = "alpha:latest" if how == "symlink-rev" else "alpha:v1"
        r = t.audit(s.root, "rm", victim, "--format", "json")
        t.exit_code(r, 0, "%s: dry run" % how)
        doc = r.json()["stores"][0]
        t.eq([e["path"] for e in doc["entries"] if e["category"] == "model-blob"], [],
             "%s: no blob of the other tag is planned" % how)
        r = t.audit(s.root, "rm", victim, "--apply", "--yes")
        t.exit_code(r, 0, "%s: apply" % how)
        for x in a["layers"] + [a["config"]]:
            t.ok(os.path.exists(s.blob_path(x["digest"])), "%s: blob %s kept" % (how, x["digest"][:19]))
        r = t.audit(s.root, "check", "--format", "json")
        codes = t.codes(t.findings_of(r.json()))
        t.not_contains(codes, "missing-blob", "%s: no missing blob" % how)
        t.not_contains(codes, "missing-config", "%s: no missing config" % how)

with t.guard("rm --apply --plan validates paths against the command (M1, M2)"):
    s, a, b, c = store()
    plan = os.path.join(t.tempdir("rmplan2"), "p.json")
    t.audit(s.root, "rm", "hf.co/someone/gamma:q4", "--plan", plan)
    doc = json.load(open(plan))
    bad = dict(doc)
    st = os.lstat(s.manifests)
    bad["entries"] = [dict(doc["entries"][0], path="manifests/registry.ollama.ai", type="dir", empty_dir=False,
                           dev=st.st_dev, ino=os.lstat(os.path.join(s.manifests, "registry.ollama.ai")).st_ino)]
    json.dump(bad, open(plan, "w"))
    r = t.audit(s.root, "rm", "--apply", "--yes", "--plan", plan)
    t.ok(os.path.exists(a["path"]) and os.path.exists(b["path"]), "no manifest tree removed", r.describe())
    bad["entries"] = [dict(doc["entries"][0], path="ollama-safetensors1")]
    json.dump(bad, open(plan, "w"))
    r = t.audit(s.root, "rm", "--apply", "--yes", "--plan", plan)
    t.exit_code(r, 16, "an rm plan cannot name a root temp dir")

with t.guard("--apply --plan FILE of another store or command: refused, said, nothing removed"):
    s, a, b, c = store()
    s2, _, _, _ = store()
    d = t.tempdir("otherplan")
    rm_plan, prune_plan = os.path.join(d, "rm.json"), os.path.join(d, "prune.json")
    t.exit_code(t.audit(s.root, "rm", "alpha", "--plan", rm_plan), 0, "rm plan saved")
    t.exit_code(t.audit(s.root, "prune", "--min-age", "0", "--plan", prune_plan), 0, "prune plan saved")
    before, before2 = t.snapshot(s.root), t.snapshot(s2.root)
    cases = [
        (s2.root, "rm", rm_plan, 8, "%s: the plan %s is not an rm plan for this store" % (s2.root, rm_plan)),
        (s.root, "rm", prune_plan, 8, "%s: the plan %s is not an rm plan for this store" % (s.root, prune_plan)),
        (s2.root, "prune", prune_plan, 8,
         "%s: the plan %s was made for another store (%s)" % (s2.root, prune_plan, s.root)),
        (s.root, "prune", rm_plan, 16,
         "%s is a plan for `rm`; apply it with `ollama-audit rm --apply --plan %s`" % (rm_plan, rm_plan)),
    ]
    for root, cmd, plan, code, said in cases:
        r = t.audit(root, cmd, "--apply", "--yes", "--plan", plan)
        t.exit_code(r, code, "%s --apply --plan %s" % (cmd, os.path.basename(plan)))
        t.contains(r.err, "ollama-audit: " + said + "\n", "%s says why" % cmd)
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing removed")
    t.eq(t.diff_snapshots(before2, t.snapshot(s2.root)), [], "nothing removed from the other store")

t.done()
