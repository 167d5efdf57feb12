#!/usr/bin/env python3
"""Store discovery (`stores`), --all-users on list/check/verify/du, per-user
totals, duplicate accounting, the host in ndjson, and permission problems.

The machine is simulated under OLLAMA_AUDIT_SYSROOT (see multistore.py):
accounts come from the sysroot's etc/passwd, ownership is chown() to uids
no real account has. The non-root checks really run the binary as such a
uid (the kernel enforces the permissions); they need root to switch uid and
are skipped, with a note, otherwise. Without root every store belongs to the
user running the tests, and that is the one owner the tool must report.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import multistore as ms  # noqa: E402

t.check_binary()
m = ms.Machine()
S = m.sysroot
HOST = ms.host()


def by_root(doc):
    return {s["root"]: s for s in doc.get("stores", [])}


def sources(entry):
    return sorted({f["source"] for f in entry.get("found_by", [])})


with t.guard("discovery: every source"):
    r = m.run("stores", "--format", "json")
    t.exit_code(r, 0)
    doc = r.json()
    t.eq(doc.get("schema"), "ollama-audit.stores/2", "schema")
    t.eq(doc.get("host"), HOST, "host name")
    st = by_root(doc)
    real = {k: os.path.realpath(v) for k, v in m.stores.items()}
    for key, root in real.items():
        t.ok(root in st, "store %s (%s) listed" % (key, root), sorted(st))
    oks = [k for k, v in st.items() if v.get("state") == "ok"]
    t.eq(len(oks), len(real), "one entry per store (the symlinked path is not a second store)", sorted(oks))
    e = st.get(real["service"], {})
    t.eq(sources(e), ["default", "home"], "service store: the service default and the ollama user's home")
    t.eq(e.get("user"), m.user_of("service"), "service store owner")
    e = st.get(real["alice"], {})
    t.eq(sources(e), ["home", "systemd"], "alice: her home, and the drop-in that names the symlink")
    t.eq(e.get("user"), m.user_of("alice"), "alice's store owner")
    t.ok(any(p.endswith("/srv/link-to-alice") for p in e.get("paths", [])),
         "the symlinked path is recorded as a second path", e.get("paths"))
    t.ok(any("20-link.conf:2" in f["detail"] for f in e.get("found_by", [])), "drop-in file:line given",
         e.get("found_by"))
    e = st.get(real["dropin"], {})
    t.eq(sources(e), ["systemd"], "store named in a drop-in with several quoted assignments on a line")
    t.ok(any("10-models.conf:3" in f["detail"] for f in e.get("found_by", [])), "10-models.conf:3",
         e.get("found_by"))
    e = st.get(real["envfile"], {})
    t.eq(sources(e), ["environment-file"], "store named in the EnvironmentFile= of the unit")
    t.ok(any(f["detail"] == "/etc/ollama.env:2" for f in e.get("found_by", [])), "env file:line",
         e.get("found_by"))
    e = st.get(real["default"], {})
    t.eq(sources(e), ["environment-file"], "/etc/default/ollama (export, quotes, a space, a comment)")
    t.ok(any(f["detail"] == "/etc/default/ollama:1" for f in e.get("found_by", [])), "default file",
         e.get("found_by"))
    e = st.get(real["env"], {})
    t.eq(sources(e), ["OLLAMA_MODELS"], "$OLLAMA_MODELS of the process (not under the sysroot)")
    t.eq(e.get("user"), m.user_of("env"), "env store owner")
    for key in ("bob", "dave", "frank"):
        t.eq(sources(st.get(real[key], {})), ["home"], "%s: home directory from the passwd file" % key)
        t.eq(st.get(real[key], {}).get("user"), m.user_of(key), "%s owns the store" % key)
    for key, e in ((k, st.get(real[k], {})) for k in real):
        t.eq(e.get("models"), len(m.infos[key]), "model count of %s" % key)
        t.eq(e.get("state"), "ok", "state of %s" % key)
    # configured but missing: each systemd quoting form reached its value
    r = m.run("stores", "--all", "--format", "json")
    t.exit_code(r, 0)
    allst = by_root(r.json())
    for rel, form in (("srv/quoted value", "OLLAMA_MODELS=\"...\""), ("srv/single-quoted", "'...'"),
                      ("srv/continued", "backslash continuation")):
        p = os.path.join(S, rel)
        t.ok(p in allst and allst[p]["state"] == "missing", "systemd form %s -> %s (missing)" % (form, rel),
             sorted(allst))
    for p in (os.path.join(S, "not/in/service/section"), os.path.join(S, "srv/ignored")):
        t.ok(p not in allst, "ignored: %s ([Install] section / not a .conf drop-in)" % p)
    t.ok(os.path.join(S, "home/carol/.ollama/models") in allst, "--all lists carol's home (no store)")
    t.ok(os.path.join(S, "var/lib/ollama") in allst, "--all lists /var/lib/ollama")
    t.ok(os.path.join(S, "root/.ollama/models") in allst, "--all lists /root/.ollama/models")
    t.ok(os.path.join(S, "home/carol/.ollama/models") not in st, "without --all: no row for carol")

with t.guard("stores: per-user totals and duplicates"):
    r = m.run("stores", "--format", "json")
    doc = r.json()
    users = {u["user"]: u for u in doc.get("users", [])}
    real = {k: os.path.realpath(v) for k, v in m.stores.items()}
    owners = {k: m.user_of(k) for k in real}
    t.eq(len(set(owners.values())), 6 if ms.IS_ROOT else 1, "owners: ollama, alice, bob, dave, frank, root "
         "(without root: the user running the tests)", owners)
    for user in sorted(set(owners.values())):
        keys = [k for k, o in owners.items() if o == user]
        inv = ms.blob_inventory([real[k] for k in keys])
        # every inode once, and each store's blobs/ directory itself (as `du -s`)
        want = sum({(c[1], c[2]): c[3] for cs in inv.values() for c in cs}.values()) + \
            sum(os.lstat(os.path.join(real[k], "blobs")).st_blocks * 512 for k in keys)
        u = users.get(user, {})
        t.eq(u.get("stores"), len(keys), "stores of %s" % user)
        t.eq(u.get("models"), sum(len(m.infos[k]) for k in keys), "models of %s" % user)
        t.eq(u.get("disk_bytes"), want, "disk_bytes of %s (each inode once, st_blocks)" % user)
    inv = ms.blob_inventory(list(real.values()))
    want_total = sum({(c[1], c[2]): c[3] for cs in inv.values() for c in cs}.values()) + \
        sum(os.lstat(os.path.join(r_, "blobs")).st_blocks * 512 for r_ in real.values())
    t.eq(doc.get("total", {}).get("disk_bytes"), want_total, "total disk_bytes")
    t.eq(doc.get("total", {}).get("stores"), len(real), "total stores")
    n, saving, shared = ms.expected_dupes(list(real.values()))
    d = doc.get("duplicates", {})
    t.eq(d.get("digests"), n, "duplicate digests")
    t.eq(d.get("saving_bytes"), saving, "bytes sharing would save")
    t.eq(d.get("already_shared_bytes"), shared, "already shared")
    r = m.run("stores")
    t.exit_code(r, 0)
    t.contains(r.out, "USER", "table has the per-user section")
    t.contains(r.out, "duplicates: %d blobs in several stores" % n, "table has the duplicates line")
    r = m.run("stores", "--format", "csv")
    t.exit_code(r, 0)
    lines = r.out.strip().splitlines()
    t.eq(lines[0].split(",")[:3], ["host", "store", "state"], "csv header")
    t.eq(len([x for x in lines[1:] if ",ok," in x]), len(real), "csv: one row per store")
    r = m.run("stores", "--format", "ndjson")
    recs = r.ndjson()
    t.ok(recs and all(x.get("host") == HOST for x in recs), "every stores ndjson record has the host")
    t.eq(sorted({x["type"] for x in recs}), ["duplicates", "store", "total", "user"], "ndjson record types")

with t.guard("duplicates: du --all-users --duplicates"):
    r = m.run("du", "--all-users", "--duplicates", "--format", "json")
    t.exit_code(r, 0)
    doc = r.json()
    real = [os.path.realpath(v) for v in m.stores.values()]
    n, saving, shared = ms.expected_dupes(real)
    t.eq(doc.get("total", {}).get("digests"), n, "digests in several stores")
    t.eq(doc.get("total", {}).get("saving_bytes"), saving, "saving")
    shared_model = [d for d in doc.get("duplicates", []) if len(d["copies"]) == 3]
    t.ok(shared_model, "the blobs of shared:latest are in three stores")
    for d in shared_model:
        t.eq(sorted(c["user"] for c in d["copies"]), sorted(m.user_of(k) for k in ("alice", "bob", "service")),
             "users of %s" % d["digest"][:19])
        t.ok(all("shared:latest" in c["models"] for c in d["copies"]), "models of %s" % d["digest"][:19])
    # the same store by two --store paths is not a duplicate of itself; a hard link is already shared
    a = os.path.realpath(m.stores["alice"])
    r = m.run("--store", a, "--store", m.alice_link, "du", "--duplicates", "--format", "json")
    t.eq(r.json().get("total", {}).get("digests"), 0, "a store and its symlink: no duplicates")
    r = m.run("du", "--all-users", "--duplicates")
    t.exit_code(r, 0)
    t.contains(r.out, "(shared:latest)", "table names the models")

with t.guard("--all-users on list, check, verify, du"):
    nstores = len(m.stores)
    r = m.run("list", "--all-users", "--format", "json")
    t.exit_code(r, 0)
    t.eq(len(r.json().get("stores", [])), nstores, "list --all-users: one section per store")
    r = m.run("list", "--all-users", "--format", "ndjson")
    recs = r.ndjson()
    t.eq(len([x for x in recs if x.get("type") == "model"]), sum(len(v) for v in m.infos.values()),
         "list ndjson: every model of every store")
    t.ok(recs and all(x.get("host") == HOST for x in recs), "list ndjson records carry the host")
    r = m.run("check", "--all-users", "--format", "ndjson")
    t.exit_code(r, 0)
    recs = r.ndjson()
    t.ok(recs and all(x.get("host") == HOST for x in recs), "check ndjson records carry the host")
    t.eq(len([x for x in recs if x.get("type") == "summary"]), nstores, "check: a summary per store")
    tot = [x for x in recs if x.get("type") == "total"]
    t.eq(len(tot), 1, "check ndjson: one combined total")
    if tot:
        t.eq(tot[0].get("stores"), nstores, "total stores")
        t.eq(tot[0].get("models"), sum(len(v) for v in m.infos.values()), "total models")
    ut = {x["user"]: x for x in recs if x.get("type") == "user_total"}

    def owned_by(user):
        return [k for k in m.stores if m.user_of(k) == user]
    alice, ollama, bob = m.user_of("alice"), m.user_of("service"), m.user_of("bob")
    t.eq(ut.get(alice, {}).get("models"), sum(len(m.infos[k]) for k in owned_by(alice)),
         "per-user total of %s (2 models as root)" % alice)
    t.eq(ut.get(ollama, {}).get("stores"), len(owned_by(ollama)),
         "per-user total of %s (three stores as root)" % ollama)
    r = m.run("check", "--all-users")
    t.exit_code(r, 0)
    t.contains(r.out, "all stores: %d stores" % nstores, "check table: combined totals line")
    nb, mb = len(owned_by(bob)), sum(len(m.infos[k]) for k in owned_by(bob))
    t.contains(r.out, "user %s: %d store%s, %d models" % (bob, nb, "" if nb == 1 else "s", mb),
               "check table: per-user line (as root: user bob: 1 store, 2 models)")
    t.contains(r.err, "configured as a store by systemd", "configured-but-missing stores are noted")
    r = m.run("du", "--all-users", "--format", "json")
    t.exit_code(r, 0)
    t.eq(len(r.json().get("stores", [])), nstores, "du --all-users: one section per store")
    # prune --all-users: a dry run per store; rm refuses --all-users
    bobs = m.objs["bob"]
    orphan = bobs.add_blob(b"an orphan of bob " * 300, mtime=1)
    r = m.run("prune", "--all-users", "-v", input=b"")
    t.exit_code(r, 0, "prune --all-users -v (dry run)")
    t.contains(r.out, orphan.replace(":", "-"), "bob's orphan is in the plan")
    t.eq(r.out.count("prune plan"), nstores, "a plan per store")
    t.ok(os.path.exists(bobs.blob_path(orphan)), "dry run: nothing removed")
    os.unlink(bobs.blob_path(orphan))
    r = m.run("rm", "--all-users", "shared")
    t.exit_code(r, 16, "rm --all-users is refused")
    # --all-users plus a --store outside discovery: both
    extra, _ = t.clean_store("extra")
    r = m.run("--store", extra.root, "list", "--all-users", "--format", "json")
    t.eq(len(r.json().get("stores", [])), nstores + 1, "--store adds to --all-users")

with t.guard("exit codes OR together across stores"):
    # corrupt one blob of bob's own model (same size): verify finds it, the rest are verified
    bob = m.objs["bob"]
    info = m.infos["bob"][1]
    dg = info["layers"][0]["digest"]
    p = bob.blob_path(dg)
    data = bytearray(open(p, "rb").read())
    data[-1] ^= 0xFF
    os.chmod(p, 0o644)
    with open(p, "wb") as f:
        f.write(data)
    r = m.run("verify", "--all-users", "--format", "json")
    t.exit_code(r, 4, "verify --all-users with one corrupt blob")
    doc = r.json()
    bad = [s for s in doc.get("stores", []) if any(f["code"] == "digest-mismatch" for f in s.get("findings", []))]
    t.eq([os.path.realpath(s["root"]) for s in bad], [os.path.realpath(m.stores["bob"])], "only bob's store")
    t.eq(len(doc.get("stores", [])), len(m.stores), "every store still verified")
    # an explicit --store that does not exist ORs 8 on top
    r = m.run("--store", os.path.join(m.base, "nope"), "verify", "--all-users")
    t.exit_code(r, 4 | 8, "a missing --store plus a corrupt blob")
    with open(p, "wb") as f:
        f.write(bytes(data[:-1]) + bytes([data[-1] ^ 0xFF]))

with t.guard("permission problems: the binary run as another user"):
    why = t.bin_for_others()[2]
    if why:
        t.skip(why)
    else:
        ms.chown_tree(m.home, ms.UIDS["alice"])
        env = m.env(XDG_CACHE_HOME=os.path.join(m.home, "cache"))
        r = ms.run_as(ms.UIDS["alice"], ["stores", "--format", "json"], env)
        t.exit_code(r, 8, "stores as alice (dave's store is private)")
        st = by_root(r.json())
        dave = os.path.realpath(m.stores["dave"])
        t.eq(st.get(dave, {}).get("state"), "permission-denied", "dave's store: permission denied",
             sorted(st))
        t.eq(st.get(dave, {}).get("user"), "dave", "the owner of an unreadable store is still known")
        frank = m.stores["frank"]
        t.eq(st.get(frank, {}).get("state"), "unknown", "frank's private home: cannot tell", sorted(st))
        t.eq(st.get(frank, {}).get("user"), "frank", "the owner of the private directory")
        t.ok(frank not in [s["root"] for s in r.json().get("stores", []) if s.get("state") == "ok"],
             "frank's store is not read")
        t.eq(st.get(os.path.realpath(m.stores["alice"]), {}).get("state"), "ok", "alice reads her store")
        t.eq(st.get(os.path.realpath(m.stores["service"]), {}).get("state"), "ok",
             "alice reads the service store (mode 755)")
        t.contains(r.err, "skipped", "what was skipped is said on stderr")
        t.contains(r.err, dave, "dave's store named on stderr")
        r = ms.run_as(ms.UIDS["alice"], ["check", "--all-users", "--format", "json"], env)
        t.exit_code(r, 8, "check --all-users as alice: the unreadable store is an operational error")
        roots = [os.path.realpath(s["root"]) for s in r.json().get("stores", [])]
        t.ok(os.path.realpath(m.stores["alice"]) in roots and dave not in roots,
             "alice's store is checked, dave's skipped", roots)
        t.contains(r.err, dave, "dave's store is named on stderr")
        t.contains(r.err, "skipped %s" % frank, "frank's unknown store is named on stderr")
        # a store that is readable but has an unreadable part: a finding, not a stop
        svc = m.objs["service"]
        mdir = os.path.join(svc.manifests, "registry.ollama.ai")
        os.chmod(mdir, 0o700)
        r = ms.run_as(ms.UIDS["alice"], ["check", "--all-users", "--format", "json"], env)
        t.exit_code(r, 8, "an unreadable manifests dir")
        svcdoc = [s for s in r.json().get("stores", []) if os.path.realpath(s["root"]) == os.path.realpath(svc.root)]
        t.ok(svcdoc and any(f["code"] == "unreadable" for f in svcdoc[0].get("findings", [])),
             "the unreadable part is a finding of that store")
        t.eq(len(r.json().get("stores", [])), len(m.stores) - 2, "the other stores are still checked (not dave, frank)")
        os.chmod(mdir, 0o755)


with t.guard("stores SIZE = du -B1 -s blobs: temp dirs, their contents and symlinks count (item 8)"):
    import subprocess
    w = t.new_store("stores-walk")
    t.add_gguf_model(w, "alpha:latest", seed="walk")
    os.makedirs(os.path.join(w.blobs, "split-gguf-123"))
    w.write_raw("blobs/split-gguf-123/x", b"x" * 100000)
    w.write_raw("blobs/foo.gguf", b"foreign")
    os.symlink("/nonexistent-oa/target", os.path.join(w.blobs, "dangling"))
    r = m.run("--store", w.root, "stores", "--format", "json")
    row = by_root(r.json()).get(os.path.realpath(w.root), {})
    du = lambda *o: int(subprocess.run(["du", "-B1", "-s"] + list(o) + [w.blobs], stdout=subprocess.PIPE,
                                       check=True).stdout.split()[0])
    t.eq(row.get("disk_bytes"), du(), "SIZE (disk_bytes) = du -B1 -s blobs")
    t.eq(row.get("apparent_bytes"), du("--apparent-size"), "apparent_bytes = du -B1 -s --apparent-size blobs")


with t.guard("discovery reads no FIFO or device: EnvironmentFile=, /etc/default/ollama"):
    hf = t.tempdir("fifo-sysroot")
    ms.write(os.path.join(hf, "etc/passwd"), "")
    ms.write(os.path.join(hf, "etc/systemd/system/ollama.service"),
             "[Service]\nEnvironmentFile=/etc/ollama.env\nEnvironmentFile=/etc/zero.env\n")
    os.mkfifo(os.path.join(hf, "etc/ollama.env"))
    os.symlink("/dev/zero", os.path.join(hf, "etc/zero.env"))
    os.makedirs(os.path.join(hf, "etc/default"))
    os.symlink("/dev/zero", os.path.join(hf, "etc/default/ollama"))
    os.mkfifo(os.path.join(hf, "etc/sysconfig"))  # not even a directory
    r = t.run("stores", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": hf}, timeout=30)
    t.ne(r.code, -999, "no hang on a FIFO or /dev/zero")
    t.exit_code(r, 0)
    t.contains(r.err, "/etc/ollama.env", "the FIFO is named")
    t.contains(r.err, "not a regular file", "and why it is not read")
    t.contains(r.err, "/etc/zero.env", "the symlink to /dev/zero is named")

with t.guard("discovery stays inside OLLAMA_AUDIT_SYSROOT: \"..\", relative homes; a continued last line"):
    hs = t.tempdir("hostile-sysroot")
    outside = t.tempdir("outside")
    ms.make_store(os.path.join(outside, "models"), ["tiny:latest"])
    rel_out = os.path.relpath(os.path.join(outside, "models"), "/")
    ups = "/" + "/".join([".."] * (hs.count("/") + 2))  # more ".." than the sysroot is deep
    ms.write(os.path.join(hs, "etc/passwd"),
             "rel:x:3001:3001::home/rel:/bin/sh\n"
             "esc:x:3002:3002::%s/%s/..:/bin/sh\n" % (ups, os.path.dirname(rel_out)))
    ms.write(os.path.join(hs, "etc/systemd/system/ollama.service"),
             "[Service]\nEnvironment=OLLAMA_MODELS=%s/%s\n" % (ups, rel_out))
    # a drop-in whose last line is continued: systemd still reads it
    ms.make_store(os.path.join(hs, "srv/eof"), ["tiny:latest"])
    ms.write(os.path.join(hs, "etc/systemd/system/ollama.service.d/eof.conf"),
             "[Service]\nEnvironment=OLLAMA_MODELS=/srv/eof \\")
    # an absolute symlink in the image that points outside it
    os.makedirs(os.path.join(hs, "var/lib"))
    os.symlink(outside, os.path.join(hs, "var/lib/ollama"))
    r = t.run("stores", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": hs}, timeout=30)
    t.exit_code(r, 0)
    roots = {os.path.realpath(s["root"]): s for s in r.json().get("stores", [])}
    t.ok(os.path.realpath(os.path.join(outside, "models")) not in roots,
         "nothing outside the sysroot is listed", sorted(roots))
    t.ok(os.path.realpath(os.path.join(hs, "srv/eof")) in roots, "a continued last line is read", sorted(roots))
    t.contains(r.err, "outside OLLAMA_AUDIT_SYSROOT", "the symlink out of the image is noted")
    t.contains(r.err, "home/rel", "the relative home is noted")
    t.contains(r.err, "..", "the \"..\" paths are noted")

t.done()
