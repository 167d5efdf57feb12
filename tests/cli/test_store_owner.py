#!/usr/bin/env python3
"""The store's owner (`user`) and how it was found (`found_by`) have one
shape in every document: the per-store objects of list, show, check, verify,
du and history carry them as `stores` does, and every ndjson record of a
store carries `user` after `store` (docs/schema.md)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

with t.guard("user and found_by in every per-store object and record"):
    s, info = t.clean_store("owner")
    r = t.audit(s.root, "stores", "--format", "json")
    st = [x for x in r.json().get("stores", []) if x.get("root") == s.root]
    t.eq(len(st), 1, "stores lists the store")
    user = st[0].get("user") if st else None
    t.ok(bool(user), "stores names its owner")
    found_keys = sorted(st[0]["found_by"][0]) if st and st[0].get("found_by") else None
    t.eq(found_keys, ["detail", "path", "source"], "stores' found_by entries")
    for cmd in ("list", "check", "verify", "du", "history"):
        r = t.audit(s.root, cmd, "--format", "json")
        so = (r.json().get("stores") or [{}])[0]
        t.eq(so.get("user"), user, "%s json: the store's user is stores'" % cmd)
        fb = so.get("found_by")
        t.ok(isinstance(fb, list) and fb and sorted(fb[0]) == found_keys,
             "%s json: found_by has stores' shape (got %r)" % (cmd, fb))
        t.eq((fb or [{}])[0].get("source") if isinstance(fb, list) else None, "--store",
             "%s json: found by --store" % cmd)
    for cmd in ("list", "check", "verify", "du"):
        r = t.audit(s.root, cmd, "--format", "ndjson")
        recs = [x for x in r.ndjson() if x.get("store") == s.root]
        t.ok(recs, "%s ndjson has records of the store" % cmd)
        t.ok(all(x.get("user") == user for x in recs), "%s ndjson: every record of the store has its user" % cmd)
    r = t.audit(s.root, "show", "tiny", "--format", "json")
    t.eq((r.json().get("store") or {}).get("user"), user, "show json: the store's user")

with t.guard("--all-users: found_by keeps every way discovery reached the store"):
    sysroot = t.tempdir("owner-sys")
    os.makedirs(os.path.join(sysroot, "etc"))
    with open(os.path.join(sysroot, "etc", "passwd"), "w") as f:
        f.write("alice:x:23002:23000::/home/alice:/bin/sh\n")
    s = t.oa.Store(os.path.join(sysroot, "home", "alice", ".ollama", "models"))
    t.add_gguf_model(s, "tiny:latest")
    env = {"OLLAMA_AUDIT_SYSROOT": sysroot}
    r = t.run("--all-users", "stores", "--format", "json", env=env)
    want = [x.get("found_by") for x in r.json().get("stores", []) if x.get("root") == s.root]
    r = t.run("--all-users", "list", "--format", "json", env=env)
    got = [x.get("found_by") for x in r.json().get("stores", []) if x.get("root") == s.root]
    t.eq(got, want, "list's found_by is stores' for a discovered store")
    t.eq([(fb or [{}])[0].get("source") for fb in got], ["home"], "found in a home directory")

t.done()
