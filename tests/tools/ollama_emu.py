#!/usr/bin/env python3
"""ollama_emu: `ollama pull NAME` and `ollama rm NAME` as upstream's server
does them to its store, offline, for tests that follow the fixes
ollama-audit prints.  Python 3 standard library only.

    OLLAMA_MODELS=STORE OA_EMU_REGISTRY=PRISTINE ollama_emu.py pull NAME
    OLLAMA_MODELS=STORE ollama_emu.py rm NAME

The registry is another store (PRISTINE): a pull copies NAME's tag from it
(its manifests/ file, or its manifests-v2/ tag as a symlink, hard link or
copy, as the registry store has it) and fetches from it every blob the tag
needs that STORE lacks.  Like upstream (server/download.go: downloadBlob
returns at once when the blob file exists; PullModel verifies only what it
downloaded), a blob file that exists is kept whatever its size or content:
a pull mends a missing blob, never a damaged one.  The manifest is written
after the blobs, over whatever was there (os.WriteFile).  A name the
registry does not have fails as upstream's does ("file does not exist").

rm removes NAME's tag (manifests/ and manifests-v2/), then every blob of it
no other manifest of the store references (server/images.go: deleteUnused
layers), then the empty directories under manifests/ (PruneDirectory).
"""

import hashlib
import json
import os
import re
import shutil
import sys

HEX = re.compile(r"sha256[:-]([0-9a-f]{64})")


def parse_name(name):
    """(host, namespace, model, tag) with upstream's defaults."""
    tag = "latest"
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = name.rsplit(":", 1)
    parts = name.split("/")
    host, ns = "registry.ollama.ai", "library"
    if len(parts) == 3:
        host, ns, model = parts
    elif len(parts) == 2:
        ns, model = parts
    else:
        model = parts[0]
    return host, ns, model, tag


def v2_host(host):
    return ("ollama.com" if host.lower() in ("registry.ollama.ai", "ollama.com") else host).replace(":", "%3A")


def tag_paths(root, name):
    host, ns, model, tag = parse_name(name)
    return (os.path.join(root, "manifests", host, ns, model, tag),
            os.path.join(root, "manifests-v2", v2_host(host), ns, model, tag))


def blob_path(root, hexd):
    return os.path.join(root, "blobs", "sha256-" + hexd)


def manifest_blobs(root, data, seen=None):
    """The digests a manifest (or a list) needs, its children's too, as the
    registry store holds them."""
    seen = set() if seen is None else seen
    try:
        m = json.loads(data)
    except ValueError:
        return seen
    layers = [m.get("config") or {}] + list(m.get("layers") or [])
    for entry in list(m.get("manifests") or []):
        d = HEX.fullmatch(entry.get("digest", ""))
        if d and d.group(1) not in seen and os.path.exists(blob_path(root, d.group(1))):
            seen.add(d.group(1))
            with open(blob_path(root, d.group(1)), "rb") as f:
                manifest_blobs(root, f.read(), seen)
    for layer in layers:
        d = HEX.fullmatch(layer.get("digest", "") or "")
        if d:
            seen.add(d.group(1))
    return seen


def fetch(registry, store, hexd):
    """A blob the store lacks, from the registry; one that exists is kept."""
    dst = blob_path(store, hexd)
    if os.path.exists(dst):  # os.Stat: any file, any size, any content
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    tmp = dst + "-partial"
    shutil.copyfile(blob_path(registry, hexd), tmp)
    os.replace(tmp, dst)


def pull(store, registry, name):
    legacy, v2 = tag_paths(registry, name)
    src = v2 if os.path.lexists(v2) else legacy
    if not os.path.lexists(src):
        sys.exit("Error: pull model manifest: file does not exist")
    with open(src, "rb") as f:
        data = f.read()
    # a manifests-v2 tag is (a link to, a copy of) its manifest blob
    needed = manifest_blobs(registry, data) | ({sha256_hex(data)} if src == v2 else set())
    for hexd in sorted(needed):
        if os.path.exists(blob_path(registry, hexd)):
            fetch(registry, store, hexd)
    dst = tag_paths(store, name)[0 if src == legacy else 1]
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.lexists(dst):
        os.remove(dst)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
    else:
        with open(dst, "wb") as f:
            f.write(data)
    print("success")


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def referenced(store):
    """Every digest any tag of the store names (its lists' children too)."""
    out = set()
    for top in ("manifests", "manifests-v2"):
        for d, _, files in os.walk(os.path.join(store, top)):
            for n in files:
                p = os.path.join(d, n)
                try:
                    with open(p, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                out |= manifest_blobs(store, data) | {sha256_hex(data)}
    return out


def prune_dirs(top):
    for d, dirs, files in os.walk(top, topdown=False):
        if d != top and not os.listdir(d):
            os.rmdir(d)


def rm(store, name):
    gone = [p for p in tag_paths(store, name) if os.path.lexists(p)]
    if not gone:
        sys.exit("Error: model '%s' not found" % name)
    mine = set()
    for p in gone:
        try:
            with open(p, "rb") as f:
                mine |= manifest_blobs(store, f.read())
        except OSError:
            pass
        os.remove(p)
    keep = referenced(store)
    for hexd in sorted(mine - keep):
        if os.path.lexists(blob_path(store, hexd)):
            os.remove(blob_path(store, hexd))
    prune_dirs(os.path.join(store, "manifests"))
    print("deleted '%s'" % name)


def main(argv):
    store = os.environ.get("OLLAMA_MODELS")
    if len(argv) != 3 or argv[1] not in ("pull", "rm") or not store:
        sys.exit("usage: OLLAMA_MODELS=STORE [OA_EMU_REGISTRY=DIR] ollama_emu.py pull|rm NAME")
    if argv[1] == "pull":
        pull(store, os.environ["OA_EMU_REGISTRY"], argv[2])
    else:
        rm(store, argv[2])


if __name__ == "__main__":
    main(sys.argv)
