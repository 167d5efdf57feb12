#!/usr/bin/env python3
"""Fleet output, on the fake machine of tests/cli/multistore.py (several
owners' stores): every --all-users table has a USER column, the first
column a narrow terminal hides (the store headings still say whose rows
they are), and none without --all-users; every csv record of a store has
`user`; a finding list prints on stderr names its store when several
are audited; dedupe says per store pair and outcome what it would do (one
line per blob with -v), and what to do when reflinks cannot be made."""

import csv
import io
import os
import re
import sys
import time
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import multistore as ms  # noqa: E402

t.check_binary()


def dwidth(s):
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
               for c in s)


def heads(line):
    """The column headings of a table's heading line (two or more blanks apart)."""
    return re.split(r"\s{2,}", line.strip())


m = ms.Machine()
real = {k: os.path.realpath(v) for k, v in m.stores.items()}
key_of = {v: k for k, v in real.items()}
service = m.stores["service"]


# The service's server loaded svc-only:latest a day ago: history and LAST USED have something.
svc_info = next(i for i in m.infos["service"] if i["name"] == "svc-only:latest")
ms.write(os.path.join(os.path.dirname(service), "logs", "server.log"),
         "\n".join(t.server_loads_at(time.time() - 86400, service, t.weight_layer(svc_info)["digest"][7:])) + "\n")

with t.guard("dedupe without reflinks: a line per store pair and outcome, each blob with -v"):
    env = dict(m.env(), OA_TEST_REFLINK="no")   # ext4: no reflink, whatever /tmp is
    doc = t.run("dedupe", "--all-users", "--format", "json", env=env).json()
    acts = doc.get("actions", [])
    summ = doc.get("summary", {})
    t.ok(acts, "the machine's stores hold duplicates", doc)
    pairs = {}
    for a in acts:
        k = (a["status"], a["keep"], a["replace"])
        n, b = pairs.get(k, (0, 0))
        pairs[k] = (n + 1, b + a["disk_bytes"])
    t.ok(len(pairs) < len(acts), "fewer store pairs than blobs (%d < %d)" % (len(pairs), len(acts)))
    r = t.run("dedupe", "--all-users", env=env)
    t.exit_code(r, 0)
    rows = [ln for ln in r.out.splitlines() if ln.startswith(("reflink-unsupported ", "junk ", "planned "))]
    t.eq(len(rows), len(pairs), "one line per store pair and outcome", r.out)
    for (status, keep, replace), (n, _) in pairs.items():
        what = "%d blobs" % n if n > 1 else "sha256:"
        t.ok(any(ln.startswith(status + " ") and what in ln and "%s (" % keep in ln and "-> %s (" % replace in ln
                 for ln in rows), "%s, %s -> %s: %s" % (status, key_of.get(keep), key_of.get(replace), what), r.out)
    t.eq(r.out.count("cannot reflink (tested)"), 1, "the filesystem's note once, under its lines", r.out)
    t.contains(r.out, "-v lists each blob", "says how to see every blob")
    t.contains(r.out, "%d cannot be reflinked" % summ.get("by_status", {}).get("reflink-unsupported", -1),
               "how many cannot be reflinked")
    if summ.get("hardlink_planned"):
        t.contains(r.out, "`dedupe --hardlink` would replace %d" % summ["hardlink_planned"], "what --hardlink does")
    hard = t.run("dedupe", "--all-users", "--hardlink", "--format", "json", env=env).json().get("actions", [])
    refused = [a for a in hard if a["status"] == "refused-owner"]
    if refused:
        t.contains(r.out, "%d duplicates (" % len(refused), "counts the copies of another owner", r.out)
        t.contains(r.out, "are another user's than the copy kept", "says why --hardlink cannot share them")
        t.contains(r.out, "a filesystem that reflinks (btrfs", "names what can: a filesystem that reflinks")
        t.contains(r.out, "sharing one store (OLLAMA_MODELS)", "or one store for those users")
    else:
        t.not_contains(r.out, "another user's", "one owner (not root): no advice about owners")
        t.skip("not root: every store has one owner, so no copy is another user's")
    v = t.run("dedupe", "--all-users", "-v", env=env)
    t.exit_code(v, 0)
    each = [ln for ln in v.out.splitlines() if re.match(r"^(reflink-unsupported|junk|planned) ", ln)]
    t.eq(len(each), len(acts), "-v: one line per blob", v.out)
    t.ok(all(re.search(r"  sha256:[0-9a-f]{12}  ", ln) for ln in each), "-v: each line names its blob", v.out)
    t.not_contains(v.out, "-v lists each blob", "-v: no pointer to itself")

# Findings for the tables and stderr: bob's store loses a weight blob and
# gets a manifest that cannot be parsed.
bob_info = next(i for i in m.infos["bob"] if i["name"] == "bob-own:latest")
os.unlink(m.objs["bob"].blob_path(t.weight_layer(bob_info)["digest"]))
m.objs["bob"].write_raw("manifests/registry.ollama.ai/library/broken/latest", "{ not json")
m.objs["alice"].add_blob(b"orphan " * 2000, mtime=time.time() - 7200)   # junk prune plans

TABLES = [("list",), ("du",), ("check",), ("verify",), ("history",)]

with t.guard("a USER column in every --all-users table, the owner of each row's store"):
    for cmd in TABLES:
        r = m.run(*cmd, "--all-users")
        lines = r.out.splitlines()
        heading = [ln for ln in lines if re.match(r"^(NAME|SEVERITY|TIME|MODEL) ", ln)]
        t.ok(heading and all("USER" in heads(ln) for ln in heading), "%s --all-users: USER in every heading"
             % cmd[0], r.out)
        users = {m.user_of(k) for k in real}
        rows = [ln for ln in lines if ln and not ln.startswith(("#", "NAME", "SEVERITY", "TIME", "MODEL", " "))]
        for ln in heading:
            col = ln.index(" USER ") + 1
            cells = [row[col:].split(" ", 1)[0] for row in rows if len(row) > col and row[col - 1] == " "
                     and row[col:].split(" ", 1)[0] in users]
            t.ok(cells, "%s: rows carry their store's owner under USER" % cmd[0], r.out)
        one = m.run("--store", m.stores["bob"], *cmd)
        t.ok(all("USER" not in heads(ln) for ln in one.out.splitlines() if re.match(r"^(NAME|SEVERITY|TIME|MODEL) ", ln)),
             "%s --store: no USER column" % cmd[0], one.out)
    # the owner under USER is the one of the store the row belongs to (list: per # heading)
    r = m.run("list", "--all-users")
    store = None
    col = r.out.splitlines()[0].index("USER")
    for ln in r.out.splitlines()[1:]:
        if ln.startswith("# /"):
            store = os.path.realpath(ln[2:])
        elif store in key_of and ln.strip() and not ln.startswith("#"):
            t.eq(ln[col:].split(" ", 1)[0], m.user_of(key_of[store]), "list: %s's row names its owner"
                 % key_of[store], r.out)
    r = m.run("check", "--all-users")
    t.ok(re.search(r"^error\s+bob-own:latest\s+%s\s+missing-blob" % re.escape(m.user_of("bob")), r.out, re.M),
         "check: the broken model's row names bob's store's owner", r.out)
    r = m.run("history", "--all-users")
    t.ok(re.search(r"svc-only:latest\s+%s\s" % re.escape(m.user_of("service")), r.out),
         "history: a load's row names the owner of the store that served it", r.out)

with t.guard("USER is the first column a narrow terminal hides"):
    for cmd in (("list",), ("du",), ("history",)):
        full = m.run(*cmd, "--all-users")
        widest = max(dwidth(ln) for ln in full.out.splitlines() if ln and not ln.startswith(("#", "/", " ")) and
                     not re.match(r"^(referenced|reclaimable|blobs/|junk|all \d|\S+: \d+ load)", ln))
        r = t.run_tty((cmd[0], "--all-users"), None, env=m.env(), stdout_tty=True, cols=widest)
        t.not_contains(r.err, "hidden to fit", "%s at %d columns (its widest row): nothing hidden" % (cmd[0], widest))
        r = t.run_tty((cmd[0], "--all-users"), None, env=m.env(), stdout_tty=True, cols=widest - 1)
        t.contains(r.err, "hidden to fit %d columns: USER (--wide shows them)" % (widest - 1),
                   "%s at %d columns: USER, and only USER, goes" % (cmd[0], widest - 1), r.err)
        hs = [ln for ln in r.out.splitlines() if re.match(r"^(NAME|TIME|MODEL) ", ln)]
        t.ok(any("USER" not in heads(ln) for ln in hs), "%s: the widest table has no USER" % cmd[0], r.out)
        if cmd[0] == "list":
            t.ok(all(dwidth(ln) <= widest - 1 for ln in r.out.splitlines()), "list: every line fits", r.out)
    r = t.run_tty(("list", "--all-users", "--wide"), None, env=m.env(), stdout_tty=True, cols=60)
    t.contains(r.out.splitlines()[0], "USER", "--wide: USER whatever the width")
    r = t.run_tty(("list", "--all-users"), None, env=m.env(), stdout_tty=True, cols=80)
    t.ok(r.err.count("hidden to fit 80 columns: USER,"), "80 columns: USER goes first", r.err)

def store_section(out, root):
    """check's lines for the store at root: from its path to the next store's."""
    lines = out.splitlines()
    if root not in lines:
        return []
    rest = lines[lines.index(root) + 1:]
    end = next((i for i, ln in enumerate(rest) if ln.startswith(("/", "user "))), len(rest))
    return rest[:end]


with t.guard("check's answer on a narrow terminal: USER goes before FIX moves under its row"):
    bob = m.stores["bob"]
    full = m.run("check", "--all-users")
    answer = [ln for ln in store_section(full.out, bob) if ln.startswith(("SEVERITY", "error ", "warning "))]
    widest = max(dwidth(ln) for ln in answer)
    fixes = [f for f in (ln.split("  ")[-1].strip() for ln in answer[1:]) if f]
    user_w = max(4, len(m.user_of("bob")))
    r = t.run_tty(("check", "--all-users"), None, env=m.env(), stdout_tty=True, cols=widest - 1)
    heading = [ln for ln in store_section(r.out, bob) if ln.startswith("SEVERITY")]
    t.eq([heads(ln) for ln in heading], [["SEVERITY", "MODEL", "FINDINGS", "FIX"]],
         "one column short: USER hidden, FIX still in its column", r.out)
    r = t.run_tty(("check", "--all-users"), None, env=m.env(), stdout_tty=True, cols=widest - user_w - 3)
    section = store_section(r.out, bob)
    heading = [ln for ln in section if ln.startswith("SEVERITY")]
    t.ok(heading and all("FIX" not in heads(ln) for ln in heading), "narrower: FIX under its row", r.out)
    t.ok(fixes and all(any(ln.strip() == f for ln in section) for f in fixes), "every fix whole, on its line",
         r.out)


def csv_rows(r):
    return list(csv.reader(io.StringIO(r.out)))


with t.guard("every csv record of a store has user, its owner"):
    cases = [("list",), ("du",), ("check",), ("verify",), ("history",), ("prune",),
             ("show", "shared:latest")]
    for cmd in cases:
        r = m.run(*cmd, "--all-users", "--format", "csv")
        rows = csv_rows(r)
        t.ok(len(rows) > 1, "%s: records" % cmd[0], r.describe())
        if len(rows) < 2:
            continue
        head = rows[0]
        # after the fields the record had: last, but for list's optional
        # last_used and the fix that check and verify added after it
        want_last = {"list": ["user", "last_used"], "check": ["user", "fix"],
                     "verify": ["user", "fix"]}.get(cmd[0], ["user"])
        t.eq(head[-len(want_last):], want_last, "%s: user after the other fields" % cmd[0], head)
        t.eq(head.count("user"), 1, "%s: one user field" % cmd[0], head)
        si, ui = head.index("store"), head.index("user") if "user" in head else -1
        for row in rows[1:]:
            t.eq(len(row), len(head), "%s: as many fields as the header" % cmd[0], row)
            key = key_of.get(os.path.realpath(row[si]))
            t.ok(key, "%s: the record's store is one of the machine's" % cmd[0], row)
            if key:
                t.eq(row[ui], m.user_of(key), "%s: user of a record of %s" % (cmd[0], key), row)
    r = m.run("--store", service, "rm", "svc-only:latest", "--format", "csv")
    rows = csv_rows(r)
    t.ok(len(rows) > 1 and rows[0][-1] == "user" and all(x[-1] == m.user_of("service") for x in rows[1:]),
         "rm's plan: every record ends with its store's owner", r.out)
    # the fields before user are what they were: added, never moved
    r = m.run("--store", service, "list", "--format", "csv")
    t.eq(csv_rows(r)[0], ["store", "name", "id", "digest", "size", "modified_at", "format", "runner", "arch",
                          "parameter_size", "quantization_level", "layers", "missing_blobs", "disk_bytes",
                          "apparent_bytes", "hidden_from_list", "user", "last_used"],
         "list: user added after hidden_from_list, last_used still last")

with t.guard("stderr: a finding names its store when several are audited"):
    r = m.run("list", "--all-users", "-v")
    bad = [ln for ln in r.err.splitlines() if "invalid-manifest" in ln]
    t.ok(bad, "list -v reports the broken manifest", r.err)
    t.ok(bad and all(ln.startswith("ollama-audit: %s: error invalid-manifest: " % m.stores["bob"]) for ln in bad),
         "--all-users: after the program's name, bob's store", r.err)
    r = m.run("--store", m.stores["bob"], "--store", m.stores["alice"], "list", "-v")
    t.ok(any(ln.startswith("ollama-audit: %s: error invalid-manifest: " % m.stores["bob"])
             for ln in r.err.splitlines()), "two --store: the store too", r.err)
    r = m.run("--store", m.stores["bob"], "list", "-v")
    t.ok(any(ln.startswith("ollama-audit: error invalid-manifest: ") for ln in r.err.splitlines()),
         "one store: as before, no store on the line", r.err)

t.done()
