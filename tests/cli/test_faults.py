#!/usr/bin/env python3
"""Fault injection: every command that reads or writes, run with the N-th call
of open/openat/read/pread/rename/renameat/unlink/unlinkat/fsync/linkat/
ioctl(FICLONE) failing with EIO, ENOSPC, EACCES or ENOENT (the LD_PRELOAD shim
tests/faultinject/faultinject.c). For each run: no crash or sanitizer report,
an exit code made of the documented bits, no referenced blob lost, no
temporary file left in the store or next to --output/--cache, a quarantine
index that accounts for every quarantined file (and a clean restore brings
the store back whole), and an error that names the file when the fault
changed the outcome.

N runs over 1..K and the last call of that function in a fault-free run of
the same command; functions a command never calls are skipped (the shim
counts calls). OA_FAULT_K overrides K; OA_FAULT_ERRNOS (comma-separated) the
errors: the sanitizer tree runs EIO and ENOENT only (the error paths seldom
tell the others apart, and ENOENT is the one they do), to stay well under a
minute on two busy cores. There every run with a fault (and each command's
fault-free run) is checked for leaks; the fixtures' runs and the clean
restores after a fault are sampled (clitest, check_quarantine)."""

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()
SHIM = os.path.abspath(os.environ.get("OA_FAULTINJECT", "") or "/nonexistent")
if not SHIM or not os.path.exists(SHIM):
    t.fail("OA_FAULTINJECT does not name the shim (%r)" % SHIM)
    t.done()

K = int(os.environ.get("OA_FAULT_K", "1"))
FUNCS = ["open", "openat", "read", "pread", "rename", "renameat", "unlink", "unlinkat", "fsync",
         "linkat", "ficlone"]
ERRNOS = os.environ.get("OA_FAULT_ERRNOS", "EIO,ENOSPC,EACCES,ENOENT").split(",")
DOCUMENTED_BITS = 1 | 4 | 8 | 16 | 32
TEMP_RE = re.compile(r"^\.(.*\.tmp(\.\d+)?|oa-dedupe\..*)$|\.tmp\.\d+$|^sha256-\d+$")


# ---------------------------------------------------------------- fixtures
def template():
    """Two models sharing a layer, a second store holding copies of the
    first one's blobs (for dedupe), and aged orphans for prune."""
    s = t.new_store("ftpl")
    t.add_gguf_model(s, "alpha:latest", seed="a")
    t.add_gguf_model(s, "beta:latest", seed="b")
    s.add_blob(b"orphan one " * 50)
    s.add_blob(b"orphan two " * 70)
    s.age_all(7200)
    return s.root


TPL = template()


def files_under(root):
    out = set()
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


TPL_FILES = files_under(TPL)


def gamma_bundle():
    """export's bundle of a model the template has not (import --apply),
    and the store files importing it adds."""
    g = t.new_store("fgamma")
    t.add_gguf_model(g, "gamma:latest", seed="g")
    out = os.path.join(t.tempdir("fbundle"), "gamma.tar")
    r = t.run("--store", g.root, "export", "gamma", "-o", out)
    if r.code != 0:
        t.fail("fixture: export gamma", r.describe())
    adds = files_under(g.root) - TPL_FILES
    return out, adds


GAMMA, GAMMA_ADDS = gamma_bundle()


def damage(root):
    """Truncate alpha's weights (repair --apply mends them from a copy)."""
    m = json.load(open(os.path.join(root, "manifests", "registry.ollama.ai", "library", "alpha", "latest")))
    w = next(x for x in m["layers"] if x["mediaType"].endswith(".model"))
    with open(os.path.join(root, "blobs", w["digest"].replace(":", "-")), "r+b") as f:
        f.truncate(64)


def referenced(root):
    """Digests any manifest in the store names (config + layers)."""
    refs = set()
    for top in ("manifests", "manifests-v2"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for n in files:
                try:
                    doc = json.load(open(os.path.join(d, n)))
                except (OSError, ValueError):
                    continue
                for x in [doc.get("config") or {}] + list(doc.get("layers") or []):
                    if isinstance(x, dict) and isinstance(x.get("digest"), str):
                        refs.add(x["digest"].replace(":", "-"))
    return refs


class Case:
    """A fresh copy of the fixture for one run: store(s), quarantine, output dir."""

    def __init__(self, cmd, tag):
        self.dir = t.tempdir("f" + tag)
        self.store = os.path.join(self.dir, "s")
        if cmd.get("readonly"):
            self.store = TPL  # never written: one copy serves every run
        else:
            shutil.copytree(TPL, self.store, symlinks=True)
        self.store2 = os.path.join(self.dir, "s2")
        self.q = os.path.join(self.dir, "q")
        self.out = os.path.join(self.dir, "out")
        os.makedirs(self.out)
        if cmd.get("store2"):
            shutil.copytree(TPL, self.store2, symlinks=True)
        if cmd.get("damage"):
            damage(self.store)
        if cmd.get("prequarantine"):
            r = t.run("--store", self.store, "prune", "--apply", "--yes", "--quarantine", self.q)
            if r.code != 0:
                t.fail("fixture: prune --quarantine", r.describe())
        self.before = files_under(self.store)

    def argv(self, cmd):
        return [a.format(S=self.store, S2=self.store2, Q=self.q, OUT=self.out) for a in cmd["argv"]]


COMMANDS = [
    {"name": "list", "readonly": True, "argv": ["--store", "{S}", "list"]},
    {"name": "show", "readonly": True, "argv": ["--store", "{S}", "show", "alpha"]},
    {"name": "check", "readonly": True, "argv": ["--store", "{S}", "check"]},
    {"name": "check --output", "readonly": True, "argv": ["--store", "{S}", "check", "--format", "json", "--output",
                                        "{OUT}/report.json"], "output": "report.json"},
    {"name": "verify --cache", "readonly": True, "argv": ["--store", "{S}", "verify", "--cache", "{OUT}/vc.json"],
     "output": "vc.json"},
    {"name": "du", "readonly": True, "argv": ["--store", "{S}", "du"]},
    {"name": "prune --apply", "argv": ["--store", "{S}", "prune", "--apply", "--yes"]},
    {"name": "prune --apply --quarantine", "argv": ["--store", "{S}", "prune", "--apply", "--yes",
                                                    "--quarantine", "{Q}"], "quarantine": True},
    {"name": "rm --apply", "argv": ["--store", "{S}", "rm", "beta", "--apply", "--yes"]},
    {"name": "restore", "argv": ["restore", "{Q}", "--all"], "prequarantine": True, "quarantine": True},
    # On a filesystem without reflinks (ext4, tmpfs) this run refuses, exit
    # 8, after the probe: that is its fault-free outcome there.
    {"name": "dedupe --apply", "argv": ["--store", "{S}", "--store", "{S2}", "dedupe", "--apply",
                                        "--yes"], "store2": True, "may_refuse": True},
    {"name": "dedupe --hardlink --apply", "argv": ["--store", "{S}", "--store", "{S2}", "dedupe",
                                                   "--hardlink", "--apply", "--yes"], "store2": True},
    {"name": "import --apply", "argv": ["--store", "{S}", "import", GAMMA, "--apply", "--yes"], "adds": GAMMA_ADDS},
    {"name": "repair --apply", "argv": ["--store", "{S}", "repair", "--from", "{S2}", "--apply", "--yes"],
     "store2": True, "damage": True},
]


def run_case(cmd, tag, fault):
    c = Case(cmd, tag)
    log = os.path.join(c.dir, "fault.log")
    # OLLAMA_AUDIT_PASSWD unset: the matrix faults the store's files, not the
    # tests' fake passwd file (an unreadable one only changes owner names).
    env = {"LD_PRELOAD": SHIM, "OA_FAULT_LOG": log, "OA_FAULT": fault or None,
           "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:verify_asan_link_order=0",
           "OLLAMA_AUDIT_PASSWD": None}
    r = t.run(*c.argv(cmd), env=env, timeout=60)
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    calls = {}
    fired = None
    for ln in lines:
        p = ln.split(" ", 4)
        if p[0] == "calls":
            calls[p[1]] = int(p[2])
        elif p[0] == "fault":
            fired = p[4] if len(p) > 4 else ""
    return c, r, calls, fired


def outcome(c, r):
    """Exit code and stdout with the case's own temp paths masked, so runs
    in different temp dirs compare equal when nothing else differs."""
    return r.code, r.out.replace(c.store2, "{S2}").replace(c.store, "{S}")


def check_case(cmd, c, r, fault, fired, base):
    """Problems with one run, as strings (empty: all good)."""
    bad = []
    if r.code < 0:
        bad.append("killed by signal %d" % -r.code)
    elif r.code & ~DOCUMENTED_BITS:
        bad.append("exit %d is not made of the documented bits" % r.code)
    for marker in ("Sanitizer", "runtime error:"):
        if marker in r.err:
            bad.append("sanitizer report")
    # nothing referenced lost: every blob a remaining manifest names exists
    for store in [c.store] + ([c.store2] if cmd.get("store2") else []):
        blobs = set(os.listdir(os.path.join(store, "blobs")))
        missing = sorted(referenced(store) - blobs)
        if missing:
            bad.append("%s: referenced blobs missing: %s" % (os.path.basename(store), missing))
        # A temporary file whose removal was the failed call stays; the
        # tool must say where (an injected ENOENT did not remove it either).
        temps = [n for n in files_under(store) if TEMP_RE.search(os.path.basename(n))]
        unsaid = sorted(n for n in temps if not (fired and fired.endswith(n) and (
            fault.startswith("unlink") and (fault.endswith("ENOENT") or os.path.basename(n) in r.err + r.out))))
        if unsaid:
            bad.append("temporary files left in the store: %s" % unsaid)
        new = sorted(files_under(store) - set(temps) - (TPL_FILES if cmd["name"] == "restore" else c.before) -
                     set(cmd.get("adds", ())))
        if new:
            bad.append("new files in the store: %s" % new)
    extra = sorted(set(os.listdir(c.out)) - {cmd.get("output")})
    if extra:
        bad.append("left next to the output: %s" % extra)
    if cmd.get("quarantine"):
        bad += check_quarantine(c)
    said = r.err + r.out
    if cmd.get("output") and os.path.exists(os.path.join(c.out, cmd["output"])):
        said += open(os.path.join(c.out, cmd["output"]), errors="replace").read()
    if fired is not None and outcome(c, r) != outcome(*base) and r.code & 8:
        # The fault changed the outcome: the user must be told which file.
        if not names_file(said, fired):
            bad.append("no message names %s" % fired)
    return bad


def names_file(text, path):
    """Does text name the file at path, as the tool names files: its name,
    the short digest of a blob, or, for one of the tool's temporary files,
    the file it stands in for or its directory?"""
    base = os.path.basename(path.rstrip("/"))
    cands = {base}
    m = re.search(r"sha256[-:]([0-9a-f]{12})", base)
    if m:
        cands.add(m.group(1))
    tm = re.match(r"^\.(.+?)\.tmp$", base) or re.match(r"^(.+?)\.\d+\.tmp$", base) or \
        re.match(r"^(.+)\.tmp\.\d+$", base)
    if tm:
        cands.add(tm.group(1))
    pm = re.match(r"^/proc/(\d+)/", path)
    if pm:
        cands.add(pm.group(1))  # a process the server check could not read: named by its pid
    if base.startswith(".oa-dedupe."):
        cands.add(base.split(".")[3][:12])  # .oa-dedupe.<pid>.<hex16>: the blob it replaces
    return any(x and x in text for x in cands)


def replay_journal(q, doc):
    """An apply that did not finish left its entries in the journal
    index.json names (quarantine/3): one JSON line each, a new entry or a
    later {"id", "state"}; a last line without a newline is ignored."""
    name = doc.get("journal")
    if not name or not os.path.exists(os.path.join(q, name)):
        return []
    with open(os.path.join(q, name), "rb") as f:
        lines = f.read().split(b"\n")[:-1]
    by_id = {e.get("id"): e for e in doc.setdefault("entries", [])}
    for n, line in enumerate(lines):
        try:
            x = json.loads(line)
        except ValueError:
            return ["journal line %d is not JSON" % (n + 1)]
        if "path" in x and x["id"] not in by_id:
            doc["entries"].append(x)
            by_id[x["id"]] = x
        elif x.get("id") in by_id:
            by_id[x["id"]]["state"] = x.get("state")
    return []


_restore_kinds = set()


def check_quarantine(c):
    bad = []
    idx = os.path.join(c.q, "index.json")
    if not os.path.exists(idx):
        if os.path.isdir(os.path.join(c.q, "files")) and os.listdir(os.path.join(c.q, "files")):
            bad.append("quarantined files without an index")
        return bad
    try:
        doc = json.load(open(idx))
    except ValueError as e:
        return ["index.json is not JSON: %s" % e]
    bad += replay_journal(c.q, doc)
    stored = {e.get("stored") for e in doc.get("entries", [])}
    files = {"files/" + n for n in os.listdir(os.path.join(c.q, "files"))} \
        if os.path.isdir(os.path.join(c.q, "files")) else set()
    if files - stored:
        bad.append("quarantined files the index does not name: %s" % sorted(files - stored))
    for e in doc.get("entries", []):
        # A restore that put the file back but could not save the index
        # leaves "moved": the next restore sees the file in place.
        if e.get("state") == "moved" and e.get("stored") not in files and \
                not os.path.lexists(os.path.join(c.store, e.get("path", ""))):
            bad.append("index says moved, file neither quarantined nor back: %s" % e.get("path"))
    leftovers = [n for n in os.listdir(c.q) if TEMP_RE.search(n)]
    if leftovers:
        bad.append("temporary files left in the quarantine: %s" % leftovers)
    # A clean restore brings back every file the store had. Its leak check:
    # on the first restore of each kind of quarantine a fault left (a journal
    # or not, the entries' states); the fault runs themselves check every time.
    kind = (bool(doc.get("journal")), tuple(sorted({str(e.get("state")) for e in doc.get("entries", [])})))
    leaks = "1" if kind not in _restore_kinds else "0"
    _restore_kinds.add(kind)
    r = t.run("restore", c.q, "--all", env={"ASAN_OPTIONS": "detect_leaks=%s:abort_on_error=0" % leaks})
    lost = sorted(TPL_FILES - files_under(c.store))
    if r.code not in (0,) or lost:
        bad.append("clean restore afterwards: exit %d, still missing %s\n%s" % (r.code, lost, r.err[-400:]))
    return bad


# ---------------------------------------------------------------- the matrix
jobs = []
base = {}
matrix = {}
for i, cmd in enumerate(COMMANDS):
    c, r, calls, _ = run_case(cmd, "b%d" % i, None)
    base[cmd["name"]] = (c, r)
    t.ok(r.code >= 0 and (not r.code & 8 or (cmd.get("may_refuse") and "cannot be reflinked" in r.out)),
         "%s without faults: exit %d" % (cmd["name"], r.code), r.describe())
    for f in FUNCS:
        n = calls.get(f, 0)
        if not n:
            continue
        for k in sorted(set(range(1, min(K, n) + 1)) | {n}):
            for e in ERRNOS:
                jobs.append((cmd, f, k, e))
        matrix.setdefault(cmd["name"], set()).add(f)

counts = {"runs": 0, "fired": 0, "changed": 0}
per_cmd = {}
workers = max(2, min(4, (os.cpu_count() or 2) * 2))
with concurrent.futures.ThreadPoolExecutor(workers) as ex:
    futs = {ex.submit(run_case, cmd, "%d" % j, "%s:%d:%s" % (f, k, e)): (cmd, f, k, e)
            for j, (cmd, f, k, e) in enumerate(jobs)}
    for fut in concurrent.futures.as_completed(futs):
        cmd, f, k, e = futs[fut]
        c, r, calls, fired = fut.result()
        counts["runs"] += 1
        counts["fired"] += fired is not None
        counts["changed"] += outcome(c, r) != outcome(*base[cmd["name"]])
        per_cmd[cmd["name"]] = per_cmd.get(cmd["name"], 0) + 1
        bad = check_case(cmd, c, r, "%s:%d:%s" % (f, k, e), fired, base[cmd["name"]])
        t.ok(not bad, "%s with %s:%d:%s (fault at %s)" % (cmd["name"], f, k, e, fired),
             "\n".join(bad) + "\n" + r.describe())
        shutil.rmtree(c.dir, ignore_errors=True)

t.ok(counts["fired"] > len(jobs) // 2, "most runs hit their fault (%d of %d)" % (counts["fired"], len(jobs)))
print("fault matrix: %d commands, %d functions, %d errnos, N = 1..%d and the last call: %d runs "
      "(%d faults fired, %d changed the outcome)" % (len(COMMANDS), len(FUNCS), len(ERRNOS), K,
                                                   counts["runs"], counts["fired"], counts["changed"]))
for name in sorted(matrix):
    print("  %-28s %3d runs: %s" % (name, per_cmd.get(name, 0), " ".join(sorted(matrix[name]))))

t.done()
