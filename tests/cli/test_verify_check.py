#!/usr/bin/env python3
"""What verify found, remembered per file: in a run over several stores
holding copies of one blob, a corrupt copy in one store does not erase the
other store's good result (nor the reverse); `check` reports a weight blob
verify found corrupt while it is still that very file, without hashing."""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()


def weight_state(root, cache):
    r = t.audit(root, "show", "tiny", "--format", "json", "--cache", cache)
    layers = [l for l in r.json().get("layer_list", []) if l.get("kind") == "model"]
    return (layers[0].get("verify") or {}).get("state") if layers else None


def corrupt_weights(r):
    """check's or verify's findings about the weights of tiny (code, model)."""
    return sorted((f["code"], f.get("model")) for f in t.findings_of(r.json())
                  if f["code"] in ("digest-mismatch", "fingerprint-mismatch"))


with t.guard("verify over two stores: each copy of a blob keeps its own result"):
    good, info = t.clean_store("vc-good")
    bad, _ = t.clean_store("vc-bad")
    digest = t.weight_layer(info)["digest"]
    t.flip_last_byte(bad.blob_path(digest))
    # both orders: the store verified last must not decide for the other
    for order in ((good, bad), (bad, good)):
        cache = os.path.join(t.tempdir("vcs"), "c.json")
        r = t.run("--store", order[0].root, "--store", order[1].root, "verify", "--cache", cache)
        t.exit_code(r, 4, "verify finds the corrupt copy")
        t.eq(weight_state(good.root, cache), "verified", "the good copy stays verified")
        t.eq(weight_state(bad.root, cache), "failed", "the corrupt copy stays failed")
        ents = json.load(open(cache))["entries"][digest.split(":")[1]]
        t.eq(sorted(bool(e.get("failed")) for e in ents), [False, True], "one entry per file")

with t.guard("check reports weights verify found corrupt, until the file is replaced"):
    s, info = t.clean_store("vc-check")
    blob = s.blob_path(t.weight_layer(info)["digest"])
    env = {"XDG_CACHE_HOME": t.tempdir("vcc")}  # verify's default cache, which check reads
    cache = os.path.join(env["XDG_CACHE_HOME"], "ollama-audit", "verify-cache.json")
    r = t.audit(s.root, "check", "--format", "json", env=env)
    t.exit_code(r, 0, "a clean store before any verify")
    t.flip_last_byte(blob)
    r = t.audit(s.root, "check", "--format", "json", env=env)
    t.eq(corrupt_weights(r), [], "check hashes nothing: no verify, no digest-mismatch")
    r = t.audit(s.root, "verify", "--format", "json", env=env)
    t.eq(corrupt_weights(r), [("digest-mismatch", "tiny:latest")], "verify finds the flipped byte")
    saved = open(cache, "rb").read()
    r = t.audit(s.root, "check", "--format", "json", env=env)
    t.exit_code(r, 4, "check: an error")
    t.eq(corrupt_weights(r), [("digest-mismatch", "tiny:latest")], "check reports what verify found")
    f = next(f for f in t.findings_of(r.json()) if f["code"] == "digest-mismatch")
    t.eq(f.get("digest"), t.weight_layer(info)["digest"], "the weights' digest")
    t.contains(f.get("message", ""), "verification cache", "the message says where it comes from")
    r = t.audit(s.root, "check", env=env)
    t.contains(r.out, "digest-mismatch", "the table too")
    t.eq(open(cache, "rb").read(), saved, "check does not write the cache")
    # the same bytes put back in place by another file (another inode): a
    # failure about the old file says nothing about it
    shutil.copyfile(blob, blob + ".tmp")
    t.flip_last_byte(blob + ".tmp")
    os.rename(blob + ".tmp", blob)
    r = t.audit(s.root, "check", "--format", "json", env=env)
    t.exit_code(r, 0, "the replaced blob: check is clean again")
    t.eq(corrupt_weights(r), [], "no digest-mismatch for another file")

t.done()
