#!/usr/bin/env python3
"""`show` after `verify`: weights verify found corrupt cannot run, as long as
the file is the one verify read; a later good verify replaces the failure;
the verify cache keeps failures (/2 and later) and still reads /1 and /2."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()


def show_json(root, cache):
    r = t.audit(root, "show", "tiny", "--format", "json", "--cache", cache)
    d = r.json()
    weights = [l for l in d.get("layer_list", []) if l.get("kind") == "model"]
    return r, d, (weights[0].get("verify") if weights else None)


with t.guard("show says corrupt weights cannot run until they change or verify good"):
    s, info = t.clean_store("show-verify")
    cache = os.path.join(t.tempdir("svc"), "c.json")
    layer = t.weight_layer(info)
    blob = s.blob_path(layer["digest"])
    r, d, v = show_json(s.root, cache)
    t.eq((v or {}).get("state"), "unverified", "before any verify the weights are unverified")
    t.audit(s.root, "verify", "--cache", cache)
    r, d, v = show_json(s.root, cache)
    t.eq((v or {}).get("state"), "verified", "after a good verify: verified")
    t.ok(bool((v or {}).get("verified_at")), "verified_at is given")
    t.flip_last_byte(blob)
    r = t.audit(s.root, "verify", "--cache", cache)
    t.exit_code(r, 4, "verify finds the flipped byte")
    cached = json.load(open(cache))
    t.eq(cached.get("schema"), "ollama-audit.verify-cache/3", "the cache is saved as /3")
    ents = cached.get("entries", {}).get(layer["digest"].split(":")[1], [])
    t.eq(len(ents), 1, "one entry: the one file claiming the digest")
    ent = ents[0] if ents else {}
    t.eq(ent.get("failed"), "digest-mismatch", "the cache remembers the failure")
    r, d, v = show_json(s.root, cache)
    t.eq((v or {}).get("state"), "failed", "show json: the weight blob failed verify")
    t.eq((v or {}).get("failed"), "digest-mismatch", "show json: why")
    rh = d.get("runs_here") or {}
    t.eq(rh.get("can_run"), False, "runs_here.can_run is false")
    t.eq(rh.get("failed_verify"), [layer["digest"]], "runs_here names the blob")
    r = t.audit(s.root, "show", "tiny", "--cache", cache)
    t.contains(" ".join(r.out.split()), "cannot run here: its weights blob %s failed verify at" % layer["digest"],
               "the table says it cannot run and names the blob")
    # --changed never skips a failure: it is found again
    r = t.audit(s.root, "verify", "--cache", cache, "--changed", "--format", "json")
    t.exit_code(r, 4, "verify --changed reports the corrupt blob again")
    # the file changes (repaired): the old failure no longer judges it
    t.flip_last_byte(blob)
    r, d, v = show_json(s.root, cache)
    t.eq((v or {}).get("state"), "unverified", "a changed file is not judged by an old failure")
    t.eq((d.get("runs_here") or {}).get("can_run"), True, "and it can run again")
    r = t.audit(s.root, "verify", "--cache", cache)
    t.exit_code(r, 0, "the repaired blob verifies")
    r, d, v = show_json(s.root, cache)
    t.eq((v or {}).get("state"), "verified", "a good verify replaces the failure")
    t.eq(json.load(open(cache))["entries"][layer["digest"].split(":")[1]][0].get("failed"), None,
         "no failed field once good")

with t.guard("a /1 or /2 cache still reads; an unknown schema is ignored"):
    s, info = t.clean_store("show-verify-v1")
    cache = os.path.join(t.tempdir("svc1"), "c.json")
    t.audit(s.root, "verify", "--cache", cache)
    doc = json.load(open(cache))
    # /1 and /2 held one entry a digest, an object where /3 has a list
    doc["entries"] = {k: v[0] for k, v in doc["entries"].items()}
    for old in ("1", "2"):
        doc["schema"] = "ollama-audit.verify-cache/" + old
        json.dump(doc, open(cache, "w"))
        r, d, v = show_json(s.root, cache)
        t.eq((v or {}).get("state"), "verified", "a /%s entry reads as a good one" % old)
        t.eq(r.err, "", "no warning for a /%s cache" % old)
    doc["schema"] = "ollama-audit.verify-cache/99"
    json.dump(doc, open(cache, "w"))
    r, d, v = show_json(s.root, cache)
    t.eq((v or {}).get("state"), "unverified", "an unknown schema is ignored")
    t.contains(r.err, "unknown schema", "with a warning")

t.done()
