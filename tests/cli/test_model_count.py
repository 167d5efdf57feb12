#!/usr/bin/env python3
"""check, verify and list count the same models on one store: every tag and
list row `list` shows, a broken manifest too, never a legacy anchor
(docs/schema.md). verify used to leave out a model whose manifest it could
not parse: 32 models checked, 31 verified."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()


def counts(root):
    out = {}
    for cmd in ("check", "verify"):
        r = t.audit(root, cmd, "--format", "json")
        out[cmd] = [st.get("summary", {}).get("models") for st in r.json().get("stores", [])]
        r = t.audit(root, cmd)
        said = re.search(r"(\d+) models?, ", r.out + r.err)
        out[cmd + " table"] = said.group(1) if said else None
    r = t.audit(root, "list", "--format", "json")
    out["list"] = (r.json().get("total") or {}).get("models")
    return out


with t.guard("a broken manifest and a legacy anchor count the same in check, verify and list"):
    s, info = t.clean_store("count")
    t.add_gguf_model(s, "other:latest", seed="x")
    s.write_raw(s.manifest_path("broken:latest"), b"{not json")
    # other:latest again as a manifests-v2 tag: the legacy one is its anchor
    gguf = t.oa.tiny_llama_gguf(name="Tiny v2 other")
    layers = [s.layer("model", gguf), s.layer("template", t.TEMPLATE)]
    d, _ = s.add_manifest_blob(t.oa.gguf_config(s, gguf, layers), layers, runner="llamacpp", fmt="gguf")
    s.add_v2_tag("other:latest", d)
    c = counts(s.root)
    t.eq(c["list"], 3, "list: tiny, other (v2), broken")
    t.eq(c["check"], [3], "check counts what list shows")
    t.eq(c["verify"], [3], "verify counts the same models as check")
    t.eq(c["check table"], "3", "check's table says 3 models")
    t.eq(c["verify table"], "3", "verify's table says 3 models")

t.done()
