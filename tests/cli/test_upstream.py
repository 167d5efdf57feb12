#!/usr/bin/env python3
"""Edges where the audit must agree with Ollama itself. Each case names the
upstream Go function whose behaviour it follows (read for facts, in
ollama/ollama); docs/store-format-notes.md records what each one does."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()


def table(out):
    """The list table as (header line, rows split on the column padding)."""
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[0], [re.split(r"\s{3,}", l.strip()) for l in lines[1:]]


def tiny_model(s, name, size=None, cfg_fields=None, mtime=None):
    """A one-layer GGUF model; size overrides the model layer's declared size."""
    layer = s.layer("model", oa.tiny_llama_gguf())
    if size is not None:
        layer["size"] = size
    fields = dict(model_format="gguf", model_family="llama", file_type="Q4_K_M")
    fields.update(cfg_fields or {})
    return s.add_manifest(name, s.config(oa.config_v2(**fields)), [layer], mtime=mtime)


with t.guard("list: negative sizes as HumanBytes prints them, columns padded as ollama list"):
    # follows format/bytes.go: HumanBytes (no unit case below 1000, so a
    # negative sum prints as the plain integer) and cmd/cmd.go: ListHandler
    # (tablewriter with a four-space table padding)
    s = t.new_store("negsize")
    for name, size in (("neg1:latest", None), ("neg1000:latest", None)):
        tiny_model(s, name)
    # Manifest.Size sums config and layer sizes as declared
    for name, want in (("neg1:latest", -1), ("neg1000:latest", -1000)):
        p = s.manifest_path(name)
        doc = oa.json.loads(open(p, "rb").read())
        doc["layers"][0]["size"] = want - doc["config"]["size"]
        open(p, "wb").write(oa.go_json(doc, newline=True))
    r = t.audit(s.root, "list")
    head, rows = table(r.out)
    got = {row[0]: row[2] for row in rows}
    t.eq(got.get("neg1:latest"), "-1 B", "a -1 byte SIZE")
    t.eq(got.get("neg1000:latest"), "-1000 B", "a -1000 byte SIZE stays in bytes")
    r = t.audit(s.root, "list", "--units", "bytes")
    got = {row[0]: row[2] for row in table(r.out)[1]}
    t.eq(got.get("neg1000:latest"), "-1000", "--units bytes keeps the sign")
    # ID is 12 wide: "ID", 10 spaces of width, then the four-space padding
    t.ok(re.match(r"^NAME +ID {14}SIZE", head) is not None, "columns padded with four spaces", head)
    row = [l for l in r.out.splitlines() if l.startswith("neg1:latest")]
    t.ok(row and re.match(r"^neg1:latest +[0-9a-f]{12} {4}-1 ", row[0]) is not None,
         "a row is padded the same way", row)

with t.guard("names: trimmed, source suffixes, an empty host after the scheme"):
    # follows internal/modelref/modelref.go: ParseRef (TrimSpace, then the
    # :local / :cloud source suffix) and NormalizePullName (a cloud reference
    # names the -cloud stub), applied by server/model_resolver.go before
    # types/model/name.go: ParseName (whose Merge fills an empty host)
    s = t.copy_demo_store("names")
    tiny_model(s, "model:tag")
    tiny_model(s, "model:latest")
    tiny_model(s, "foo:latest")
    tiny_model(s, "namespace/model:tag")
    tiny_model(s, "kimi:latest")
    cases = [("  model:tag  ", "model:tag"), ("\tmodel", "model:latest"), ("foo:local", "foo:latest"),
             ("model:tag:local", "model:tag"), ("https:///namespace/model:tag", "namespace/model:tag"),
             ("gpt-oss:120b:cloud", "gpt-oss:120b-cloud")]
    for query, want in cases:
        r = t.audit(s.root, "show", query, "--format", "json")
        t.exit_code(r, 0, "show %r resolves" % query)
        if r.code == 0:
            t.eq(r.json().get("name"), want, "show %r names %s" % (query, want))
    r = t.audit(s.root, "show", "model:local:cloud")
    t.exit_code(r, 16, "both source suffixes are a usage error, as the server's 400")
    before = t.snapshot(s.root)
    r = t.audit(s.root, "rm", "gpt-oss:120b:cloud", "--format", "json")
    t.exit_code(r, 0, "rm gpt-oss:120b:cloud plans the stub's removal")
    t.contains(r.out, "gpt-oss/120b-cloud", "the plan removes the gpt-oss:120b-cloud manifest")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "a dry run changes nothing")

with t.guard("list PREFIX folds case as Go's strings.ToLower"):
    # follows cmd/cmd.go: ListHandler (HasPrefix of ToLower(name) and
    # ToLower(prefix)); Go's simple case mapping lowers U+212A KELVIN SIGN to
    # 'k' and U+0130 to 'i'
    r = t.audit(s.root, "list", "\u212a")
    t.eq([row[0] for row in table(r.out)[1]], ["kimi:latest"], "list with a Kelvin sign matches kimi")
    r = t.audit(s.root, "list", "\u212bimi")
    t.eq(table(r.out)[1], [], "U+212B (lowers to a non-ASCII letter) matches nothing")

with t.guard("remote models need both remote_host and remote_model"):
    # follows server/routes.go: GenerateHandler/ChatHandler (a model is sent
    # to its remote only when the config has both fields) and cmd/cmd.go:
    # ListHandler (SIZE is "-" whenever /api/tags carries a remote_model)
    s = t.new_store("remote")
    tiny_model(s, "hostonly:latest", cfg_fields=dict(remote_host="https://ollama.com:443"))
    tiny_model(s, "modelonly:latest", cfg_fields=dict(remote_model="gpt-oss:120b"))
    tiny_model(s, "both:latest", cfg_fields=dict(remote_host="https://ollama.com:443", remote_model="gpt-oss:120b"))
    r = t.audit(s.root, "list", "--units", "bytes")
    rows = {row[0]: row for row in table(r.out)[1]}
    size = str(oa.manifest_size(open(s.manifest_path("hostonly:latest"), "rb").read()))
    t.eq(rows.get("hostonly:latest", [None] * 6)[2], size, "remote_host alone: SIZE in bytes")
    t.eq(rows.get("hostonly:latest", [None] * 6)[5], "llamacpp", "remote_host alone: a llama.cpp model")
    t.eq(rows.get("modelonly:latest", [None] * 6)[5], "llamacpp", "remote_model alone: a llama.cpp model")
    t.eq(rows.get("modelonly:latest", [None] * 6)[2], "-", "remote_model alone: ollama list still prints -")
    t.eq(rows.get("both:latest", [None] * 6)[5], "remote", "both: a remote model")
    t.eq(rows.get("both:latest", [None] * 6)[2], "-", "both: SIZE -")

with t.guard("/api/tags leaves out what ollama list drops; reads a truncated GGUF's header"):
    # follows server/model_list_cache.go: buildModelListSummary (a config that
    # cannot be opened or decoded, or a model/template layer whose digest
    # manifest.BlobsPath refuses, drops the model) and readModelListGGUF (it
    # reads the key-values from the start and never looks at tensor data)
    s = t.new_store("tags-drop")
    tiny_model(s, "fine:latest")
    g = oa.tiny_llama_gguf()
    base = s.layer("model", g)
    s.add_manifest("noconfig:latest", {"mediaType": oa.MT_CONFIG, "digest": "sha256:" + "0" * 64, "size": 5}, [base])
    bad = dict(base, digest="sha256:abc")
    s.add_manifest("baddigest:latest", s.config(oa.config_v2(model_format="gguf")), [bad])
    g2 = oa.tiny_llama_gguf(context_length=8192, n_embd=512)
    trunc = s.layer("model", g2)
    with open(s.blob_path(trunc["digest"]), "wb") as f:
        f.write(g2[:oa.read_gguf(g2)["header_end"]])  # the tensor data is gone
    s.add_manifest("trunc:latest", s.config(oa.config_v2(model_format="gguf", model_family="llama")), [trunc])
    r = t.audit(s.root, "list", "--format", "tags")
    tags = {m["name"]: m for m in r.json().get("models", [])}
    t.eq(sorted(tags), ["fine:latest", "trunc:latest"], "models ollama list drops are not in /api/tags")
    d = tags.get("trunc:latest", {}).get("details", {})
    t.eq((d.get("context_length"), d.get("embedding_length")), (8192, 512),
         "a GGUF truncated after its header still gives context and embedding length")
    r = t.audit(s.root, "list", "-v")
    t.eq(sorted(row[0] for row in table(r.out)[1]),
         ["baddigest:latest", "fine:latest", "noconfig:latest", "trunc:latest"], "the table still shows every manifest")
    t.contains(r.err, "library/baddigest/latest", "the dropped model is named on stderr (-v)")
    t.contains(t.audit(s.root, "list").err, "2 models have problems", "without -v, counted in one line")

with t.guard("an adapter's file_type is not the model's quantization"):
    # follows server/model_list_cache.go: readModelListLayers (only
    # image.model layers are read for the GGUF fallback; image.adapter is not)
    s = t.new_store("adapter")
    ad = s.layer("adapter", oa.gguf_bytes([("general.architecture", "str", "llama"),
                                           ("general.type", "str", "adapter"),
                                           ("general.file_type", "u32", 1)], []))
    model = s.layer("model", oa.tiny_llama_gguf(file_type=2))
    for name, layers in (("withadapter:latest", [model, ad]), ("adapteronly:latest", [ad])):
        s.add_manifest(name, s.config(oa.config_v2(model_format="gguf", model_family="llama")), layers)
    tags = {m["name"]: m for m in t.audit(s.root, "list", "--format", "tags").json().get("models", [])}
    t.eq(tags.get("withadapter:latest", {}).get("details", {}).get("quantization_level"), "Q4_0",
         "the model layer's file type, not the adapter's F16")
    t.eq(tags.get("adapteronly:latest", {}).get("details", {}).get("quantization_level"), "",
         "no model layer: no quantization")
    rows = {row[0]: row for row in table(t.audit(s.root, "list").out)[1]}
    t.eq(rows.get("adapteronly:latest", [None] * 9)[8], "-", "the table's QUANT is not the adapter's either")

def predict(s):
    r = t.audit(s.root, "prune", "--predict-server", "--format", "json")
    return r.json().get("stores", [{}])[0]


with t.guard("predict-server: null and invalid-UTF-8 manifests decode in Go and do not block"):
    # follows manifest/manifest.go: Manifests(false) as server/routes.go's
    # Serve calls it before PruneLayers: encoding/json decodes JSON null into
    # an empty manifest and replaces invalid UTF-8 in strings with U+FFFD
    s = t.new_store("pred-null")
    info = t.add_gguf_model(s, "kept:latest")
    s.write_raw("manifests/registry.ollama.ai/library/nullm/latest", b"null\n")
    doc = oa.json.loads(info["bytes"])
    doc["layers"][0]["from"] = "PLACEHOLDER"
    raw = oa.go_json(doc, newline=True).replace(b"PLACEHOLDER", b"bad\xff\xfeutf8")
    only = s.layer("license", "only the utf-8 manifest names this")
    raw = raw.replace(b'"layers":[', b'"layers":[' + oa.go_json(only) + b",")
    s.write_raw("manifests/registry.ollama.ai/library/badutf8/latest", raw)
    orphan = s.add_blob(b"an orphan" * 50)
    s.age_all(7200)
    st = predict(s)
    t.eq(st.get("nothing"), None, "the server's prune is not blocked")
    dels = [d["path"] for d in st.get("deletes", [])]
    t.ok("blobs/" + orphan.replace(":", "-") in dels, "the orphan is predicted deleted", dels)
    t.ok("blobs/" + only["digest"].replace(":", "-") not in dels,
         "a blob only the invalid-UTF-8 manifest names stays: Go still reads that manifest", dels)

with t.guard("predict-server: fixBlobs renames at the first colon, in subdirectories too"):
    # follows server/fixblobs.go: fixBlobs (filepath.Walk over blobs/, a name
    # cut at its first ':' whose prefix is sha256 becomes sha256-<rest>) and
    # server/images.go: PruneLayers (a name that is not a digest is removed)
    s = t.new_store("pred-rename")
    s.write_raw("blobs/sha256:abc:def", b"two colons")
    s.write_raw("blobs/sub/sha256:" + "a" * 64, b"in a subdirectory")
    s.age_all(7200)
    st = predict(s)
    ren = {x["from"]: x["to"] for x in st.get("renames", [])}
    t.eq(ren.get("blobs/sha256:abc:def"), "blobs/sha256-abc:def", "only the first colon is replaced")
    t.eq(ren.get("blobs/sub/sha256:" + "a" * 64), "blobs/sub/sha256-" + "a" * 64,
         "a file in a subdirectory of blobs/ is renamed too")
    dels = [d["path"] for d in st.get("deletes", [])]
    t.ok("blobs/sha256-abc:def" in dels, "the renamed file is then deleted under its new name", dels)
    t.ok(not any(d.startswith("blobs/sub/") for d in dels), "the prune itself does not enter subdirectories", dels)

with t.guard("predict-server: a store of empty directories loses manifests/ too"):
    # follows manifest/paths.go: PruneDirectory, called on the manifests
    # directory itself, which it removes once everything below is gone
    s = t.new_store("pred-emptydirs")
    s.mkdir("manifests/registry.ollama.ai/library/gone")
    st = predict(s)
    t.ok("manifests" in st.get("empty_dirs_removed", []), "manifests/ itself is removed",
         st.get("empty_dirs_removed"))
    s2 = t.new_store("pred-notempty")
    t.add_gguf_model(s2, "m:latest")
    s2.mkdir("manifests/registry.ollama.ai/library/gone")
    st = predict(s2)
    t.ok("manifests" not in st.get("empty_dirs_removed", []), "not while a manifest is left",
         st.get("empty_dirs_removed"))

with t.guard("rm: the parents it empties go; the server's other directory removals are reported"):
    # follows manifest/manifest.go: Manifest.Remove (the file, then
    # manifest/paths.go: PruneDirectory over all of manifests/, which also
    # removes unrelated empty directories and manifests/ itself)
    s = t.new_store("rm-dirs")
    t.add_gguf_model(s, "only:latest")
    t.add_gguf_model(s, "alice/other:latest")
    s.mkdir("manifests/registry.ollama.ai/bob/unrelated")
    s.age_all(7200)
    r = t.audit(s.root, "rm", "only", "--format", "json")
    t.exit_code(r, 0, "rm plan")
    paths = [e["path"] for e in r.json()["stores"][0]["entries"]]
    t.ok("manifests/registry.ollama.ai/library/only" in paths and "manifests/registry.ollama.ai/library" in paths,
         "the model and namespace directories it empties are removed", paths)
    t.ok(not any("bob" in p for p in paths), "an unrelated empty directory is not removed", paths)
    t.contains(r.err, "manifests/registry.ollama.ai/bob/unrelated", "but it is reported as one ollama rm removes")
    r = t.audit(s.root, "rm", "only", "alice/other", "--apply", "--yes")
    t.exit_code(r, 0, "rm --apply of every model")
    t.ok(not os.path.exists(os.path.join(s.root, "manifests", "registry.ollama.ai", "library")),
         "emptied parents are gone")
    t.ok(os.path.isdir(os.path.join(s.root, "manifests", "registry.ollama.ai", "bob", "unrelated")),
         "the unrelated empty directory stays")
    t.ok(os.path.isdir(os.path.join(s.root, "manifests")), "manifests/ itself stays (a store keeps its shape)")
    t.contains(r.err, "manifests/registry.ollama.ai/bob/unrelated", "the apply run reports it too")

t.done()
