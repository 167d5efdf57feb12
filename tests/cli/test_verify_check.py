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


def weights_of(info):
    return next(l for l in info["layers"] if l["mediaType"].endswith(".model"))


def weight_state(root, cache):
    r = t.audit(root, "show", "tiny", "--format", "json", "--cache", cache)
    layers = [l for l in r.json().get("layer_list", []) if l.get("kind") == "model"]
    return (layers[0].get("verify") or {}).get("state") if layers else None


def check_findings(root, cache=None):
    """check --format json (with the default cache, or cache) and its findings."""
    env = {"XDG_CACHE_HOME": os.path.dirname(cache)} if cache else None
    r = t.audit(root, "check", "--format", "json", env=env)
    return r, t.findings_of(r.json())


with t.guard("verify over two stores: each copy of a blob keeps its own result"):
    good, info = t.clean_store("vc-good")
    bad, _ = t.clean_store("vc-bad")
    digest = weights_of(info)["digest"]
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

t.done()
