#!/usr/bin/env python3
"""`ollama-audit list`: the golden reference manifests, the manifest-ID
decoder-boundary rule (store spec §4.1), and the demo store in every format."""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()

EXPECTED = json.load(open(os.path.join(t.REFERENCE_DIR, "expected.json")))
REF = EXPECTED["manifests"]
GOLDEN_IDS = ["a80c4f17acd5", "845dbda0ea48", "085a1fdae525", "9077fe9d2ae1", "0a109f422b47", "e46325710c52"]


def table_rows(out):
    """Parse the list table: header + rows split on runs of >= 3 spaces."""
    lines = [l for l in out.splitlines() if l.strip()]
    if not lines:
        return [], []
    head = re.split(r"\s{3,}", lines[0].strip())
    rows = [re.split(r"\s{3,}", l.strip()) for l in lines[1:]]
    return head, rows


# ------------------------------------------------------------ golden reference
with t.guard("golden reference manifests"):
    t.eq(sorted(m["id"] for m in REF), sorted(GOLDEN_IDS), "expected.json holds the six known IDs")
    s = t.new_store("golden")
    for m in REF:
        src = os.path.join(t.REFERENCE_DIR, m["file"])
        dst = os.path.join(s.root, m["store_path"])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
    before = t.snapshot(s.root)

    # No blobs: every config is missing (an error finding): list still
    # listed, so it exits 0 as `ollama list` does; under --fail-on the
    # findings set the exit status (4). The server drops such models from
    # /api/tags, so --format tags lists none; the json report still carries
    # each one with the /api/tags fields.
    r = t.audit(s.root, "list", "--format", "tags")
    t.exit_code(r, 0, "list listed: exit 0 whatever it found")
    t.eq(r.json().get("models"), [], "no reference model is in /api/tags: none has its config")
    r = t.audit(s.root, "list", "--format", "tags", "--fail-on", "error")
    t.exit_code(r, 4, "--fail-on error: missing configs are integrity errors")
    r = t.audit(s.root, "list", "--format", "json", "-v")
    t.exit_code(r, 0, "list listed (json)")
    doc = r.json().get("stores", [{}])[0]
    by_name = {x["name"]: x for x in doc.get("models", [])}
    t.eq(sorted(by_name), sorted(m["name"] for m in REF), "every reference model is in the json report")
    for m in REF:
        x = by_name.get(m["name"])
        if not t.ok(x is not None, "%s listed" % m["name"]):
            continue
        t.eq(x["digest"], m["digest"].split(":", 1)[1], "%s digest (full 64 hex)" % m["name"])
        t.eq(x["digest"][:12], m["id"], "%s ID" % m["name"])
        t.eq(x["size"], m["size"], "%s SIZE" % m["name"])
        t.eq(x.get("hidden_from_list"), True, "%s is hidden from ollama list" % m["name"])
        t.ok(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$", x.get("modified_at", "")),
             "%s modified_at is an RFC 3339 time: %r" % (m["name"], x.get("modified_at")))
        t.eq(sorted(x.get("details", {}).keys()) >= sorted(["format", "family", "families", "parameter_size",
                                                             "quantization_level", "parent_model"]),
             True, "%s details has the /api/tags keys" % m["name"])
    t.eq(by_name.get("llama3.2:latest", {}).get("size"), 2019393189, "llama3.2:latest SIZE 2019393189")
    t.eq(by_name.get("alfred:latest", {}).get("size"), 23808463794, "alfred:latest SIZE counts the config twice")
    t.eq(by_name.get("smollm2:135m", {}).get("details", {}).get("parent_model"),
         "/Users/administrator/.ollama/models/blobs/sha256-f535f83ec568d040f88ddc04a199fa6da90923bbb41d4dcaed02caa924d6ef57",
         "smollm2 parent_model = from of its image.model layer")
    t.eq(by_name.get("llama3.2-vision:latest", {}).get("details", {}).get("parent_model"), "",
         "a projector's from is not parent_model")
    # Problems on stderr with -v: each model is missing its config and hidden from ollama list.
    for m in REF:
        cpath = "blobs/" + m["config_digest"].replace(":", "-")
        t.ok(re.search(r"error missing-config: %s: " % re.escape(cpath), r.err),
             "stderr reports missing-config with the config blob path of %s" % m["name"], r.err)
        t.ok(re.search(r"hidden-from-list: %s: " % re.escape(m["store_path"]), r.err),
             "stderr reports hidden-from-list for %s" % m["name"], r.err)

    # The table: NAME / ID / SIZE as ollama list prints them.
    r = t.audit(s.root, "list")
    t.exit_code(r, 0)
    t.eq(r.err.splitlines()[-1:], ["ollama-audit: 6 models have problems: ollama-audit --store %s check" % s.root],
         "stderr ends with one line that counts the models with problems and names the command that explains")
    t.not_contains(r.err, "missing-config", "without -v no finding is printed one by one")
    head, rows = table_rows(r.out)
    t.eq(head[:4], ["NAME", "ID", "SIZE", "MODIFIED"], "table starts with ollama list's columns")
    t.eq(head[4:], ["FORMAT", "RUNNER", "ARCH", "PARAMS", "QUANT"], "then our columns")
    got = {row[0]: row for row in rows}
    for m in REF:
        row = got.get(m["name"])
        if t.ok(row is not None, "table lists %s" % m["name"], r.out):
            t.eq(row[1], m["id"], "table ID of %s" % m["name"])
            t.eq(row[2], m["size_human"], "table SIZE of %s" % m["name"])
            t.eq(row[2], oa.human_bytes(m["size"]), "SIZE matches format.HumanBytes for %s" % m["name"])
            t.eq(row[4], "gguf", "FORMAT of %s" % m["name"])
            t.eq(row[5], "llamacpp", "RUNNER of %s" % m["name"])
    for want in ("2.0 GB", "23 GB", "270 MB", "274 MB", "4.7 GB", "7.9 GB"):
        t.contains(r.out, want, "table shows %s" % want)

    # json: the problems list carries the same findings with paths.
    r = t.audit(s.root, "list", "--format", "json")
    doc = r.json()
    probs = doc.get("stores", [{}])[0].get("problems", [])
    t.eq(sorted(p["code"] for p in probs), sorted(["missing-config"] * 6 + ["hidden-from-list"] * 6),
         "json problems: one missing-config and one hidden-from-list per model")
    t.ok(all(p.get("path") and p.get("message") for p in probs), "every problem has a path and a message")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "list wrote nothing to the store")

    # Same store, with the config blobs present: IDs/sizes do not change, exit 0.
    for m in REF:
        # a config blob cannot be forged for a real digest; instead copy the
        # llama3.1 reference config under its own digest into a second store.
        pass
    cfg_ref = EXPECTED["configs"][0]
    s2 = t.new_store("golden-cfg")
    data = open(os.path.join(t.REFERENCE_DIR, cfg_ref["file"]), "rb").read()
    t.eq(s2.add_blob(data), cfg_ref["digest"], "reference config blob digest")
    gg = oa.tiny_llama_gguf()
    lay = [s2.layer("model", gg)]
    cfg_layer = {"mediaType": oa.MT_CONFIG, "digest": cfg_ref["digest"], "size": cfg_ref["size"]}
    p, mbytes = s2.add_manifest("llama3.1:8b", cfg_layer, lay, style="registry")
    r = t.audit(s2.root, "list", "--format", "tags")
    t.exit_code(r, 0, "a store with the reference config")
    x = (r.json().get("models") or [{}])[0]
    det = x.get("details", {})
    t.eq((det.get("format"), det.get("family"), det.get("families"), det.get("parameter_size"),
          det.get("quantization_level")),
         ("gguf", "llama", ["llama"], "8.0B", "Q4_0"), "details come from the real llama3.1 config")
    t.eq(x.get("digest"), oa.manifest_id(mbytes, full=True), "digest of a registry-style manifest = sha256(file)")


# ------------------------------------------------------------ problems: one line, exit 0
with t.guard("list exits 0 when it listed; its problems are one line at the end of stderr"):
    s = t.copy_demo_store("problems")
    info = t.audit(s.root, "show", "demo-llama:1b", "--format", "json").json()
    os.unlink(s.blob_path(info["config_layer"]["digest"]))
    os.makedirs(os.path.join(s.root, "manifests", "registry.ollama.ai", "library", "bad name"))
    with open(os.path.join(s.root, "manifests", "registry.ollama.ai", "library", "bad name", "x"), "w") as f:
        f.write("{}")
    want = "ollama-audit: 1 model and 1 file have problems: ollama-audit --store %s check" % s.root
    for fmt in ("table", "json", "csv", "tags"):
        r = t.audit(s.root, "list", "--format", fmt)
        t.exit_code(r, 0, "list --format %s with a missing config and a bad name: it listed" % fmt)
        t.eq(r.err.splitlines(), [want], "list --format %s: one line on stderr, the count and what to run" % fmt)
    r = t.audit(s.root, "list", "-q")
    t.exit_code(r, 0, "list -q")
    t.contains(r.out, "demo-llama:1b", "list -q still names every model")
    for flag in ("-v", "--verbose"):
        r = t.audit(s.root, "list", flag)
        t.exit_code(r, 0, "list %s" % flag)
        lines = r.err.splitlines()
        t.eq(lines[-1:], [want], "list %s: the count is still the last line" % flag)
        t.ok(any("missing-config" in ln for ln in lines[:-1]) and any("invalid-name" in ln for ln in lines[:-1]),
             "list %s: each problem before it" % flag, r.err)
    r = t.audit(s.root, "list", "--fail-on", "error")
    t.exit_code(r, 4, "--fail-on error: the graded status of check (integrity errors)")
    t.eq(r.err.splitlines(), [want], "--fail-on error: the same one line")
    r = t.audit(s.root, "list", "--fail-on", "warning")
    t.ok(r.code & 4 and r.code & 1, "--fail-on warning: errors and warnings", r.describe())
    r = t.run("--store", s.root, "--store", t.DEMO_STORE, "list")
    t.exit_code(r, 0, "two stores, one with problems")
    t.eq(r.err.splitlines()[-1:], ["ollama-audit: 1 model and 1 file have problems: ollama-audit --store %s "
                                   "--store %s check" % (s.root, t.DEMO_STORE)],
         "the command to run names every --store given")
    spaced = os.path.join(t.tempdir("spaced"), "my models")
    shutil.copytree(s.root, spaced, symlinks=True)
    r = t.audit(spaced, "list")
    t.eq(r.err.splitlines()[-1:], ["ollama-audit: 1 model and 1 file have problems: ollama-audit --store '%s' check"
                                   % spaced], "a store path with a blank is quoted, so the command runs as shown")
    clean = t.audit(t.DEMO_STORE, "list")
    t.exit_code(clean, 0, "the demo store")
    t.not_contains(clean.err, "problems", "no problem: no line")
    # `make run` on a store with a problem: tools/run-demo.sh lists the
    # default store ($OLLAMA_MODELS) and ends cleanly (make says no Error).
    home = t.tempdir("run-home")
    env = dict(os.environ, HOME=home, OLLAMA_MODELS=s.root, OLLAMA_AUDIT_PASSWD=t.fake_passwd(),
               XDG_CACHE_HOME=t.tempdir("run-cache"))
    p = subprocess.run(["sh", os.path.join(t.SOURCE_DIR, "tools", "run-demo.sh"), t.BIN], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    t.eq(p.returncode, 0, "make run's script exits 0 on a store with problems", p.stderr.decode())
    t.eq(p.stderr.decode().splitlines()[-1:], ["ollama-audit: 1 model and 1 file have problems: ollama-audit check"],
         "and ends with the one line (the default store: no --store to repeat)")
    t.contains(p.stdout.decode(), "demo-llama:1b", "it listed the store")


# ------------------------------------------------------------ ID decoder boundary (§4.1)
def manifest_of_length(s, want_len, style="local"):
    """Manifest bytes of exactly want_len bytes, padded through a `from` field."""
    gg = oa.tiny_llama_gguf(name="boundary")
    base_layer = s.layer("model", gg)
    cfg = oa.gguf_config(s, gg, [base_layer], rootfs=False)
    lay = dict(base_layer)
    lay["from"] = ""
    data = s.manifest_bytes(cfg, [lay], style=style)
    pad = want_len - len(data)
    assert pad >= 0, "base manifest already %d bytes" % len(data)
    lay["from"] = "x" * pad
    data = s.manifest_bytes(cfg, [lay], style=style)
    assert len(data) == want_len, (len(data), want_len)
    return cfg, lay, data


with t.guard("manifest ID decoder-boundary rule"):
    import hashlib
    cases = [(513, 512), (514, 514), (1537, 1536), (1538, 1538), (3585, 3584), (600, 600)]
    s = t.new_store("boundary")
    expect = {}
    for n, hashed in cases:
        cfg, lay, data = manifest_of_length(s, n)
        name = "boundary:n%d" % n
        p = s.manifest_path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        t.eq(len(data), n, "manifest is %d bytes" % n)
        t.ok(data.endswith(b"}\n"), "local manifest ends with }\\n")
        want = hashlib.sha256(data[:hashed]).hexdigest()
        t.eq(oa.manifest_id(data, full=True), want, "oastore.manifest_id agrees for %d bytes" % n)
        expect[name] = (want, n, hashed)
    r = t.audit(s.root, "list", "--format", "tags")
    t.exit_code(r, 0, "boundary store is clean")
    got = {x["name"]: x["digest"] for x in r.json().get("models", [])}
    for name, (want, n, hashed) in expect.items():
        t.eq(got.get(name), want, "%d-byte manifest: ID = sha256 of the first %d bytes" % (n, hashed))
    whole = hashlib.sha256
    t.ne(got.get("boundary:n513"), expect["boundary:n514"][0], "513 and 514 byte manifests differ")
    # 513 bytes: the ID must NOT be the sha256 of the whole file.
    d513 = open(s.manifest_path("boundary:n513"), "rb").read()
    t.ne(got.get("boundary:n513"), whole(d513).hexdigest(), "513-byte manifest ID skips the final newline")
    d514 = open(s.manifest_path("boundary:n514"), "rb").read()
    t.eq(got.get("boundary:n514"), whole(d514).hexdigest(), "514-byte manifest ID = sha256(whole file)")
    # show --format json by 12-hex ID prefix of the 513 case
    r = t.audit(s.root, "show", expect["boundary:n513"][0][:12], "--format", "json")
    t.exit_code(r, 0, "show by ID of the 513-byte manifest")
    t.eq(r.json().get("name"), "boundary:n513", "ID prefix resolves to the 513-byte manifest")


# ------------------------------------------------------------ demo store
DEMO = {
    # name: (ID, size bytes, FORMAT, RUNNER, SIZE column)
    "demo-llama:1b": ("3aa17b41d61c", 40339, "gguf", "llamacpp", "40 KB"),
    "demo-vision:latest": ("84465f9549d4", 42245, "gguf", "llamacpp", "42 KB"),
    "alice/tiny-coder:q4": ("156794f95a45", 40487, "gguf", "llamacpp", "40 KB"),
    "hf.co/bartowski/tiny-GGUF:Q4_K_M": ("b2f7b09434eb", 27266, "gguf", "llamacpp", "27 KB"),
    "tiny-mlx:int4": ("8b2ca6c93a19", 23408, "safetensors", "mlx", "23 KB"),
    "gpt-oss:120b-cloud": ("3cc2aaddf760", 342, "remote", "remote", "-"),
    "demo-embed:latest": ("aad5628108df", 19497, "gguf", "llamacpp", "19 KB"),
}

with t.guard("demo store: table"):
    # A copy with our own mtimes: newest first must follow them.
    s = t.copy_demo_store()
    order = ["tiny-mlx:int4", "demo-llama:1b", "hf.co/bartowski/tiny-GGUF:Q4_K_M", "gpt-oss:120b-cloud",
             "demo-embed:latest", "alice/tiny-coder:q4", "demo-vision:latest"]
    base = 1_700_000_000
    for i, name in enumerate(order):
        s.set_mtime(s.manifest_path(name), base - i * 3600)
    before = t.snapshot(s.root)
    r = t.audit(s.root, "list")
    t.exit_code(r, 0, "demo store lists cleanly")
    t.eq(r.err, "", "no problems on stderr for the demo store")
    head, rows = table_rows(r.out)
    t.eq(head, ["NAME", "ID", "SIZE", "MODIFIED", "FORMAT", "RUNNER", "ARCH", "PARAMS", "QUANT"], "table header")
    t.eq([row[0] for row in rows], order, "sorted by manifest mtime, newest first")
    for row in rows:
        want = DEMO.get(row[0])
        if not t.ok(want is not None, "unexpected row %r" % row):
            continue
        t.eq(row[1], want[0], "ID of %s" % row[0])
        t.eq(row[2], want[4], "SIZE of %s" % row[0])
        t.eq(row[4], want[2], "FORMAT of %s" % row[0])
        t.eq(row[5], want[3], "RUNNER of %s" % row[0])
    # ID column = manifest_id of the file bytes
    for name, want in DEMO.items():
        data = open(s.manifest_path(name), "rb").read()
        t.eq(oa.manifest_id(data), want[0], "demo-store.md ID of %s matches oastore.manifest_id" % name)

    # Equal mtimes: the list keeps a stable (walk) order, same as tags.
    r2 = t.audit(s.root, "list", "--format", "tags")
    t.eq([x["name"] for x in r2.json().get("models", [])], order, "tags output is sorted newest first too")

    # prefix filter, case-insensitive; a prefix that matches nothing prints only the header
    r = t.audit(s.root, "list", "DEMO")
    t.exit_code(r, 0)
    head, rows = table_rows(r.out)
    t.eq(sorted(row[0] for row in rows), ["demo-embed:latest", "demo-llama:1b", "demo-vision:latest"],
         "list DEMO: case-insensitive prefix match on NAME")
    r = t.audit(s.root, "list", "alice/")
    t.eq([row[0] for row in table_rows(r.out)[1]], ["alice/tiny-coder:q4"], "list alice/ matches the namespace form")
    r = t.audit(s.root, "list", "HF.CO/")
    t.eq([row[0] for row in table_rows(r.out)[1]], ["hf.co/bartowski/tiny-GGUF:Q4_K_M"], "list HF.CO/")
    r = t.audit(s.root, "list", "nomatch")
    t.exit_code(r, 0)
    t.eq(table_rows(r.out)[1], [], "a prefix that matches nothing lists no rows")
    r = t.audit(s.root, "list", "demo", "--format", "tags")
    t.eq(sorted(x["name"] for x in r.json().get("models", [])),
         ["demo-embed:latest", "demo-llama:1b", "demo-vision:latest"], "prefix filter applies to tags too")

    # --units
    r = t.audit(s.root, "list", "--units", "bytes")
    got = {row[0]: row[2] for row in table_rows(r.out)[1]}
    for name, want in DEMO.items():
        t.eq(got.get(name), "-" if want[2] == "remote" else str(want[1]), "--units bytes SIZE of %s" % name)
    r = t.audit(s.root, "list", "--units", "iec")
    got = {row[0]: row[2] for row in table_rows(r.out)[1]}
    t.eq(got.get("demo-llama:1b"), "%.1f KiB" % (40339 / 1024), "--units iec SIZE of demo-llama:1b")
    t.eq(got.get("gpt-oss:120b-cloud"), "-", "--units iec keeps - for the cloud stub")
    r = t.audit(s.root, "list", "--units", "parsecs")
    t.exit_code(r, 16, "bad --units is a usage error")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "list wrote nothing to the demo store")

with t.guard("demo store: json"):
    r = t.audit(t.DEMO_STORE, "list", "--format", "json")
    t.exit_code(r, 0)
    doc = r.json()
    t.ok(isinstance(doc.get("schema"), str) and doc["schema"].startswith("ollama-audit.list/"),
         "json has a schema string: %r" % doc.get("schema"))
    stores = doc.get("stores", [])
    t.eq(len(stores), 1, "one store")
    models = {m["name"]: m for m in stores[0].get("models", [])} if stores else {}
    t.eq(sorted(models), sorted(DEMO), "json lists every demo model")
    for name, want in DEMO.items():
        m = models.get(name, {})
        t.eq(m.get("id"), want[0], "json id of %s" % name)
        t.eq(m.get("size"), want[1], "json size of %s is the raw integer" % name)
        t.ok(isinstance(m.get("size"), int), "json size of %s is an integer" % name)
        t.eq(m.get("format"), want[2], "json format of %s" % name)
        t.eq(m.get("runner"), want[3], "json runner of %s" % name)
        t.eq(m.get("digest", "")[:12], want[0], "json digest of %s" % name)
        t.ok(isinstance(m.get("disk_bytes"), int), "json disk_bytes of %s is an integer" % name)
    t.eq(models.get("gpt-oss:120b-cloud", {}).get("remote"), True, "the cloud stub is remote")
    t.eq(models.get("alice/tiny-coder:q4", {}).get("full_name"), "registry.ollama.ai/alice/tiny-coder:q4",
         "full_name of the user model")
    t.eq(models.get("tiny-mlx:int4", {}).get("layers_by_kind"), {"tensor": 5, "json": 2},
         "layer counts by kind of the MLX model")
    t.eq(stores[0].get("problems") if stores else None, [], "no problems in the demo store")
    # disk bytes of demo-llama: unique existing blobs, from st_blocks
    blobs = [l["digest"] for l in json.load(open(os.path.join(t.DEMO_STORE, "manifests/registry.ollama.ai/library/demo-llama/1b")))["layers"]]
    cfgd = json.load(open(os.path.join(t.DEMO_STORE, "manifests/registry.ollama.ai/library/demo-llama/1b")))["config"]["digest"]
    want_disk = sum(os.stat(os.path.join(t.DEMO_STORE, "blobs", d.replace(":", "-"))).st_blocks * 512
                    for d in set(blobs + [cfgd]))
    t.eq(models.get("demo-llama:1b", {}).get("disk_bytes"), want_disk, "disk_bytes of demo-llama:1b = sum of st_blocks")

with t.guard("demo store: ndjson"):
    r = t.audit(t.DEMO_STORE, "list", "--format", "ndjson")
    t.exit_code(r, 0)
    recs = r.ndjson()
    mods = [x for x in recs if x.get("type") == "model"]
    t.eq(sorted(x.get("name") for x in mods), sorted(DEMO), "ndjson: one model record per model")
    t.ok(all(isinstance(x.get("schema"), str) for x in mods), "every ndjson model record has a schema")
    t.eq([x.get("type") for x in recs if x not in mods], ["total"],
         "no other records for a clean store but the closing total")
    t.eq(recs[-1].get("models"), len(mods), "the total counts the models")

with t.guard("demo store: csv"):
    r = t.audit(t.DEMO_STORE, "list", "--format", "csv")
    t.exit_code(r, 0)
    rows = list(csv.reader(io.StringIO(r.out)))
    t.ok(len(rows) >= 1 and rows[0][:3] == ["store", "name", "id"], "csv header row", rows[:1])
    hdr = rows[0] if rows else []
    body = [dict(zip(hdr, row)) for row in rows[1:]]
    t.eq(len(body), len(DEMO), "csv: one row per model")
    for row in body:
        want = DEMO.get(row.get("name"))
        if not t.ok(want is not None, "csv row for unknown model %r" % row.get("name")):
            continue
        t.eq(row.get("id"), want[0], "csv id of %s" % row["name"])
        t.eq(row.get("size"), str(want[1]), "csv size of %s in raw bytes" % row["name"])
        t.eq(row.get("format"), want[2], "csv format of %s" % row["name"])
        t.eq(row.get("runner"), want[3], "csv runner of %s" % row["name"])
        t.eq(len(row), len(hdr), "csv row width of %s" % row["name"])

with t.guard("demo store: tags"):
    r = t.audit(t.DEMO_STORE, "list", "--format", "tags")
    t.exit_code(r, 0)
    doc = r.json()
    t.eq(list(doc.keys()), ["models"], "tags: one top-level key, models")
    ms = {m["name"]: m for m in doc.get("models", [])}
    t.eq(sorted(ms), sorted(DEMO), "tags lists every model")
    for name, want in DEMO.items():
        m = ms.get(name, {})
        t.eq(list(m.keys())[:2], ["name", "model"], "tags key order of %s starts name, model" % name)
        t.eq(m.get("size"), want[1], "tags size of %s" % name)
    t.eq(ms.get("gpt-oss:120b-cloud", {}).get("remote_host"), "https://ollama.com:443", "cloud stub remote_host")
    t.eq(ms.get("demo-embed:latest", {}).get("capabilities"), ["embedding"], "embedding capability from pooling_type")
    t.ok("vision" in (ms.get("demo-vision:latest", {}).get("capabilities") or []), "projector -> vision capability")
    t.eq(ms.get("tiny-mlx:int4", {}).get("details", {}).get("format"), "safetensors", "tags details.format of MLX model")
    t.eq(ms.get("tiny-mlx:int4", {}).get("details", {}).get("families"), None, "MLX families is null")
    t.eq(ms.get("alice/tiny-coder:q4", {}).get("details", {}).get("parent_model"), "demo-llama:1b",
         "parent_model = from of the last model layer")

with t.guard("store discovery"):
    # the parent .ollama dir, $OLLAMA_MODELS with blanks and quotes, ~/.ollama/models
    d = t.tempdir("disc")
    shutil.copytree(t.DEMO_STORE, os.path.join(d, ".ollama", "models"))
    r = t.run("--store", os.path.join(d, ".ollama"), "list", "--format", "json")
    t.exit_code(r, 0, "--store the parent .ollama")
    t.eq(len(r.json().get("stores", [{}])[0].get("models", [])), 7, "7 models via the parent dir")
    r = t.run("list", "--format", "json", env={"OLLAMA_MODELS": '  "%s"  ' % os.path.join(d, ".ollama", "models")})
    t.exit_code(r, 0, "OLLAMA_MODELS trimmed of blanks and quotes")
    t.eq(len(r.json().get("stores", [{}])[0].get("models", [])), 7, "7 models via OLLAMA_MODELS")
    r = t.run("list", "--format", "json", env={"HOME": d})
    t.exit_code(r, 0, "default ~/.ollama/models")
    t.eq(len(r.json().get("stores", [{}])[0].get("models", [])), 7, "7 models via HOME")
    r = t.run("--store", os.path.join(d, "nope"), "list")
    t.exit_code(r, 8, "a store that does not exist")
    t.contains(r.err, os.path.join(d, "nope"), "the error names the path")
    r = t.run("--store", d, "list")  # has .ollama but not models/ directly
    t.exit_code(r, 8, "a directory that is not a store")
    # two stores: codes OR together (one missing -> 8, the other listed)
    r = t.run("--store", t.DEMO_STORE, "--store", os.path.join(d, "nope"), "list", "--format", "json")
    t.exit_code(r, 8, "one good and one missing store")
    t.eq(len(r.json().get("stores", [])), 1, "the good store is still listed")

with t.guard("/api/tags takes quantization and capabilities from the GGUF as the list cache does"):
    s = t.new_store("tags-gguf")

    def model(name, kv, tensors=(("token_embd.weight", [32, 4], 0),)):
        g = oa.gguf_bytes(kv, list(tensors))
        layer = s.layer("model", g)
        # a config with no file_type: the list cache falls back to the GGUF
        s.add_manifest(name, s.config(oa.config_v2(model_format="gguf", model_family="llama")), [layer])

    model("u64ft:latest", {"general.architecture": "llama", "general.file_type": oa.typed("u64", 15)})
    model("f32:latest", {"general.architecture": "llama", "general.file_type": oa.typed("u32", 0)})
    model("vision:latest", {"general.architecture": "llama", "llama.vision.block_count": oa.typed("u32", 2)})
    g = bytearray(oa.gguf_bytes({"general.architecture": "llama", "llama.context_length": oa.typed("u32", 99)}, []))
    g[len(g) - 8:] = b"\xff" * 8  # corrupt the last value: the list cache's reader fails
    s.add_manifest("broken:latest", s.config(oa.config_v2(model_format="gguf")), [s.layer("model", bytes(g))])
    r = t.audit(s.root, "list", "--format", "tags")
    tags = {m["name"]: m for m in r.json()["models"]}
    t.eq(tags["u64ft:latest"]["details"]["quantization_level"], "Q4_K_M", "a u64 file_type is read (any integer type)")
    t.eq(tags["f32:latest"]["details"]["quantization_level"], "F32", "file_type 0 is F32 in the list cache")
    t.eq(tags["vision:latest"].get("capabilities"), ["vision", "completion"], "GGUF capabilities in the list cache's order")
    t.eq(tags["broken:latest"].get("capabilities"), None, "a header the list cache cannot read adds no capabilities")
    t.eq(tags["broken:latest"]["details"].get("context_length"), None, "nor a context length")

t.done()
