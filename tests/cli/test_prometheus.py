#!/usr/bin/env python3
"""--format prometheus and --output FILE (node_exporter textfile collector).

The file is checked by a strict validator of the Prometheus text exposition
format (0.0.4) written here, following the format's rules and promtool's
`check metrics` lint: metric and label name syntax, HELP/TYPE lines (each at
most once, before the samples, known types), label value escaping (\\\\, \\",
\\n only) and valid UTF-8, a float value and NO timestamp, every family's
samples contiguous, no duplicate series, a final newline; plus our own
conventions (spec anchors §5.6): one prefix per job (ollama_store_ for
stores, ollama_check_, ollama_verify_, ollama_du_), gauges only, no
_total on gauges, _bytes/_seconds units, fixed HELP text, no digest as a
label value. When `promtool` is installed it is run too.
"""
import math
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
import multistore as ms  # noqa: E402

NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def parse_labels(s, where):
    """Parse `a="x",b="y"` (the text between braces); returns a list of pairs."""
    out = []
    i = 0
    while i < len(s):
        m = re.match(r"[a-zA-Z_][a-zA-Z0-9_]*", s[i:])
        if not m:
            raise ValueError("%s: bad label name at %r" % (where, s[i:i + 20]))
        name = m.group(0)
        if name.startswith("__"):
            raise ValueError("%s: reserved label name %s" % (where, name))
        i += len(name)
        if s[i:i + 2] != '="':
            raise ValueError("%s: expected =\" after %s" % (where, name))
        i += 2
        val = []
        while True:
            if i >= len(s):
                raise ValueError("%s: unterminated label value" % where)
            c = s[i]
            if c == "\\":
                nxt = s[i + 1:i + 2]
                if nxt not in ("\\", '"', "n"):
                    raise ValueError("%s: bad escape \\%s in a label value" % (where, nxt))
                val.append({"\\": "\\", '"': '"', "n": "\n"}[nxt])
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise ValueError("%s: raw newline in a label value" % where)
            else:
                val.append(c)
                i += 1
        out.append((name, "".join(val)))
        if i < len(s):
            if s[i] != ",":
                raise ValueError("%s: expected , between labels" % where)
            i += 1
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise ValueError("%s: a label given twice" % where)
    return out


def parse_value(v, where):
    if v in ("NaN", "+Inf", "-Inf", "Inf"):
        return float(v.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.match(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$", v):
        raise ValueError("%s: not a float: %r" % (where, v))
    return float(v)


def validate(text):
    """Returns {name: {"help":..., "type":..., "samples": [(labels dict, value)]}}; raises ValueError."""
    try:
        text.encode("utf-8")
    except UnicodeError:
        raise ValueError("not UTF-8")
    if text and not text.endswith("\n"):
        raise ValueError("no final newline")
    fams = {}
    order = []
    current = None
    closed = set()
    series = set()
    for no, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d" % no
        if line == "":
            raise ValueError("%s: empty line" % where)
        if line.startswith("#"):
            m = re.match(r"^# (HELP|TYPE) (\S+) ?(.*)$", line)
            if not m:
                continue  # a plain comment
            kind, name, rest = m.groups()
            if not NAME.match(name):
                raise ValueError("%s: bad metric name %r" % (where, name))
            f = fams.setdefault(name, {"help": None, "type": None, "samples": []})
            if name in closed or (f["samples"]):
                raise ValueError("%s: %s for %s after its samples" % (where, kind, name))
            if kind == "HELP":
                if f["help"] is not None:
                    raise ValueError("%s: second HELP for %s" % (where, name))
                if re.search(r"\\[^\\n]", rest) or rest.endswith("\\") and not rest.endswith("\\\\"):
                    raise ValueError("%s: bad escape in HELP" % where)
                f["help"] = rest
            else:
                if f["type"] is not None:
                    raise ValueError("%s: second TYPE for %s" % (where, name))
                if rest not in TYPES:
                    raise ValueError("%s: unknown type %r" % (where, rest))
                f["type"] = rest
            if current != name:
                if current:
                    closed.add(current)
                current = name
                order.append(name)
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$", line)
        if not m:
            if re.match(r"^\S+(\{.*\})? \S+ \S+$", line):
                raise ValueError("%s: a sample with a timestamp (node_exporter skips the file): %r" % (where, line))
            raise ValueError("%s: not a sample line: %r" % (where, line))
        name, _, lab, val = m.groups()
        labels = parse_labels(lab or "", where)
        value = parse_value(val, where)
        if name != current:
            if name in closed or (name in fams and fams[name]["samples"]):
                raise ValueError("%s: samples of %s are not contiguous" % (where, name))
            if current:
                closed.add(current)
            current = name
            order.append(name)
        f = fams.setdefault(name, {"help": None, "type": None, "samples": []})
        key = (name, tuple(sorted(labels)))
        if key in series:
            raise ValueError("%s: duplicate series %s%s" % (where, name, dict(labels)))
        series.add(key)
        f["samples"].append((dict(labels), value))
    return fams


def lint(fams):
    """Our conventions plus promtool's lint rules."""
    problems = []
    for name, f in fams.items():
        if not re.match(r"ollama_(store|check|verify|du)_", name):
            problems.append("%s: prefix" % name)
        if f["help"] is None or not f["help"].strip():
            problems.append("%s: no HELP" % name)
        if f["type"] != "gauge":
            problems.append("%s: type %s" % (name, f["type"]))
        if name.endswith("_total"):
            problems.append("%s: _total on a gauge" % name)
        if "_gauge" in name or ":" in name or re.search(r"[A-Z]", name):
            problems.append("%s: name style" % name)
        if re.search(r"_(sec|ms|secs|kb|mb|gb|milliseconds)(_|$)", name):
            problems.append("%s: unit abbreviation" % name)
        if ("bytes" in name and not name.endswith("_bytes")) or ("seconds" in name and not name.endswith("_seconds")):
            problems.append("%s: unit not last" % name)
        if not f["samples"]:
            problems.append("%s: no samples" % name)
        for labels, v in f["samples"]:
            for k, val in labels.items():
                if re.search(r"[0-9a-f]{64}", val):
                    problems.append("%s: a digest as label %s" % (name, k))
            if math.isnan(v):
                problems.append("%s: NaN" % name)
    return problems


def val(fams, name, **labels):
    for lab, v in fams.get(name, {}).get("samples", []):
        if all(lab.get(k) == x for k, x in labels.items()):
            return v
    return None


def client_families(text):
    """The families an independent parser from Debian's packages reads in
    text: python3-prometheus-client's (the reference Python client), run by
    Debian's own python3, as [name, type, HELP, [[labels, value], ...]];
    None (a skip) when it is not installed."""
    syspy = "/usr/bin/python3"
    probe = subprocess.run([syspy, "-c", "import prometheus_client.parser"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) if os.path.exists(syspy) else None
    if probe is None or probe.returncode != 0:
        t.skip("python3-prometheus-client not installed: the second parser")
        return None
    code = ("import sys, json\n"
            "from prometheus_client.parser import text_string_to_metric_families as parse\n"
            "print(json.dumps([[f.name, f.type, f.documentation, [[s.labels, s.value] for s in f.samples]]\n"
            "                  for f in parse(sys.stdin.read())]))\n")
    p = subprocess.run([syspy, "-c", code], input=text.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t.eq(p.returncode, 0, "python3-prometheus-client parses the text", p.stderr.decode()[-400:])
    return json.loads(p.stdout) if p.returncode == 0 else None


t.check_binary()

with t.guard("validator self-check"):
    good = '# HELP a_b x\n# TYPE a_b gauge\na_b{s="q\\"\\\\\\n"} 1\n'
    t.eq(val(validate(good), "a_b", s='q"\\\n'), 1.0, "escaped label value parses back")
    for bad, why in (('a 1 1700000000\n', "timestamp"), ('a{s="x\\t"} 1\n', "bad escape"),
                     ('a 1\nb 1\na 2\n', "not contiguous"), ('a{x="1"} 1\na{x="1"} 2\n', "duplicate"),
                     ('a 1', "final newline"), ('# TYPE a gauge\n# TYPE a gauge\na 1\n', "second TYPE"),
                     ('a{1x="1"} 1\n', "label name"), ('a one\n', "value")):
        try:
            validate(bad)
            t.fail("validator accepted %s: %r" % (why, bad))
        except ValueError:
            t.ok(True, "")

m = ms.Machine()
real = {k: os.path.realpath(v) for k, v in m.stores.items()}
outdir = t.tempdir("textfile")
os.chmod(outdir, 0o777)
prom = os.path.join(outdir, "ollama.prom")
promtool = shutil.which("promtool")
HELP = {}

with t.guard("check --all-users --format prometheus --output"):
    r = m.run("check", "--all-users", "--format", "prometheus", "--output", prom)
    t.exit_code(r, 0)
    t.eq(r.out, "", "stdout is empty with --output")
    text = open(prom).read()
    fams = validate(text)
    t.eq(lint(fams), [], "lint")
    for n, f in fams.items():
        HELP[n.split("_", 2)[2]] = f["help"]  # by the name after the job prefix
    t.eq(sorted(os.listdir(outdir)), ["ollama.prom"], "no temporary file left")
    for key, root in real.items():
        user = m.user_of(key)  # as root: the simulated owner; else the user running the tests
        t.eq(val(fams, "ollama_check_info", store=root), 1, "info of %s" % key)
        t.eq(val(fams, "ollama_check_models", store=root, format="gguf"), len(m.infos[key]), "models of %s" % key)
        t.eq(val(fams, "ollama_check_audit_success", store=root, user=user), 1, "success of %s (user %s)" % (key, user))
        inv = ms.blob_inventory([root])
        # the referenced blobs, each inode once, and blobs/ itself (which the store needs)
        t.eq(val(fams, "ollama_check_blobs_bytes", store=root, state="referenced"),
             sum({(c[1], c[2]): c[3] for cs in inv.values() for c in cs}.values()) +
             os.lstat(os.path.join(root, "blobs")).st_blocks * 512, "referenced bytes of %s" % key)
        t.eq(val(fams, "ollama_check_blobs", store=root, state="orphaned"), 0, "no orphans in %s" % key)
        for info in m.infos[key]:
            t.eq(val(fams, "ollama_check_model_info", store=root, model=info["name"]), 1,
                 "model_info %s in %s" % (info["name"], key))
    ts = val(fams, "ollama_check_last_audit_timestamp_seconds", store=real["alice"])
    t.ok(ts and abs(ts - time.time()) < 300, "last audit timestamp is now", ts)
    t.ok(val(fams, "ollama_check_verified_bytes") is None, "check does not claim verified bytes")
    t.ok(val(fams, "ollama_check_model_unique_bytes", store=real["alice"], model="alice-own:7b") > 0,
         "unique bytes of a model")
    if promtool:
        p = subprocess.run([promtool, "check", "metrics"], input=text.encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        t.eq(p.returncode, 0, "promtool check metrics", p.stdout.decode() + p.stderr.decode())
    else:
        print("note: promtool not installed: the in-test validator stands in for `promtool check metrics`")
    theirs = client_families(text)
    if theirs is not None:
        theirs = {n: (typ, doc, len(samples)) for n, typ, doc, samples in theirs}
        for n, f in fams.items():
            t.eq(theirs.get(n, [None])[0], "gauge", "%s is a gauge to prometheus_client" % n)
            t.eq(theirs.get(n, [None, None])[1], f["help"], "%s HELP as prometheus_client reads it" % n)
        t.eq(sum(v[2] for v in theirs.values()), sum(len(f["samples"]) for f in fams.values()),
             "prometheus_client sees every sample")

with t.guard("verify, stores: the same HELP strings; verified bytes"):
    r = m.run("verify", "--all-users", "--format", "prometheus")
    t.exit_code(r, 0)
    fams = validate(r.out)
    t.eq(lint(fams), [], "lint (verify)")
    for key, root in real.items():
        inv = ms.blob_inventory([root])
        want = sum(os.stat(os.path.join(root, "blobs", "sha256-" + h)).st_size for h in inv)
        t.eq(val(fams, "ollama_verify_verified_bytes", store=root), want, "verified bytes of %s" % key)
    r2 = m.run("stores", "--format", "prometheus")
    t.exit_code(r2, 0)
    f2 = validate(r2.out)
    t.eq(lint(f2), [], "lint (stores)")
    t.ok(val(f2, "ollama_store_duplicate_bytes") is not None, "stores: duplicate bytes of the host")
    for fam in (fams, f2):
        for n, f in fam.items():
            if n.split("_", 2)[2] in HELP:
                t.eq(f["help"], HELP[n.split("_", 2)[2]], "HELP of %s is fixed" % n)

with t.guard("check, verify, du and stores files in one textfile directory"):
    # node_exporter's textfile collector merges every *.prom of the directory
    # and rejects a family that two files define: the jobs' names are disjoint.
    texts = {}
    for cmd in ("check", "verify", "du", "stores"):
        out = os.path.join(outdir, cmd + ".prom")
        r = m.run(cmd, "--all-users", "--format", "prometheus", "--output", out)
        t.exit_code(r, 0, cmd)
        texts[cmd] = open(out).read()
        os.unlink(out)
    merged = validate("".join(texts[c] for c in texts))
    t.eq(lint(merged), [], "lint (all four files)")
    for key, root in real.items():
        for job in ("check", "verify"):
            t.eq(val(merged, "ollama_%s_findings_by_severity" % job, store=root, severity="error"), 0,
                 "%s: error findings of %s present at 0" % (job, key))

with t.guard("junk, findings, odd paths"):
    s, _ = t.clean_store("odd-\"quote\\back")
    old = time.time() - 7200
    s.add_blob(b"orphan " * 2000, mtime=old)
    s.partial_download(b"p" * 70000, mtime=old)
    s.write_raw("blobs/notes.txt", "foreign file\n")
    s2, info2 = t.clean_store("missing")
    os.unlink(s2.blob_path(info2["layers"][0]["digest"]))
    r = t.run("--store", s.root, "--store", s2.root, "check", "--format", "prometheus", "--output", prom)
    t.exit_code(r, 4, "a missing blob: exit 4, the file is still written")
    fams = validate(open(prom).read())
    t.eq(lint(fams), [], "lint")
    root = s.root
    t.eq(val(fams, "ollama_check_info", store=root), 1, "a store path with a quote and a backslash round-trips")
    t.eq(val(fams, "ollama_check_blobs", store=root, state="orphaned"), 1, "one orphan")
    t.eq(val(fams, "ollama_check_blobs", store=root, state="partial"), 3, "partial data + 2 part files")
    t.eq(val(fams, "ollama_check_blobs", store=root, state="foreign"), 1, "one foreign file")
    du = t.run("--store", root, "du", "--format", "json").json()
    t.eq(val(fams, "ollama_check_reclaimable_bytes", store=root),
         du["stores"][0]["totals"]["reclaimable_bytes"], "reclaimable bytes = du's")
    t.eq(val(fams, "ollama_check_findings", store=s2.root, code="missing-blob", severity="error"), 1,
         "findings by code and severity")

with t.guard("store paths that are not valid UTF-8: overlong, surrogate, F5 lead"):
    # Each must be escaped (\\xNN) or the whole textfile is invalid UTF-8
    # and node_exporter drops it: E0 80 80 is an overlong NUL, ED A0 80 a
    # UTF-16 surrogate, F5 a lead byte beyond U+10FFFF.
    ubase = os.fsencode(t.tempdir("utf8"))
    roots = []
    for tag, seq in (("overlong", b"\xe0\x80\x80"), ("surrogate", b"\xed\xa0\x80"),
                     ("f5", b"\xf5\x80\x80\x80")):
        s3, _ = t.clean_store("utf8-" + tag)
        d = os.path.join(ubase, tag.encode() + b"-" + seq)
        os.makedirs(d)
        shutil.move(os.fsencode(s3.root), os.path.join(d, b"models"))
        roots.append((tag, seq, os.fsdecode(os.path.join(d, b"models"))))
    uprom = os.path.join(t.tempdir("utf8-out"), "utf8.prom")
    args = []
    for _, _, root in roots:
        args += ["--store", root]
    r = t.run(*args, "check", "--format", "prometheus", "--output", uprom)
    t.exit_code(r, 0, "three clean stores")
    raw = open(uprom, "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        text = None
        t.fail("the textfile is not valid UTF-8: %s" % e)
    if text is not None:
        fams = validate(text)
        t.eq(lint(fams), [], "lint")
        stores = [l["store"] for l, _ in fams.get("ollama_check_info", {}).get("samples", [])]
        for tag, seq, root in roots:
            want = "".join("\\x%02x" % b for b in seq)
            t.ok(any(tag + "-" + want in st for st in stores), "%s: the bytes are escaped as %s" % (tag, want),
                 stores)

with t.guard("--output is atomic and keeps the old file on a usage error"):
    before = open(prom).read()
    ino = os.stat(prom).st_ino
    r = m.run("list", "--all-users", "--format", "prometheus", "--output", prom)
    t.exit_code(r, 16, "prometheus is not a format of list")
    t.eq(open(prom).read(), before, "the previous file is kept")
    t.eq(sorted(os.listdir(outdir)), ["ollama.prom"], "no temporary file left")
    r = m.run("check", "--all-users", "--format", "prometheus", "--output", prom)
    t.exit_code(r, 0)
    t.ne(os.stat(prom).st_ino, ino, "replaced by rename (a new inode)")
    r = m.run("check", "--all-users", "--format", "ndjson", "--output", os.path.join(outdir, "x.ndjson"))
    recs = [l for l in open(os.path.join(outdir, "x.ndjson")).read().splitlines() if l]
    t.ok(recs and all('"host":"%s"' % ms.host() in l for l in recs), "--output works for ndjson too")
    os.unlink(os.path.join(outdir, "x.ndjson"))
    r = m.run("check", "--output", os.path.join(outdir, "no-such-dir", "f.prom"), "--format", "prometheus")
    t.exit_code(r, 8, "an --output that cannot be created")

with t.guard("an unreadable store: audit_success 0"):
    why = t.bin_for_others()[2]
    if why:
        t.skip(why)
    else:
        ms.chown_tree(m.home, ms.UIDS["alice"])
        out = os.path.join(outdir, "alice.prom")
        r = ms.run_as(ms.UIDS["alice"], ["check", "--all-users", "--format", "prometheus", "--output", out],
                      m.env(XDG_CACHE_HOME=os.path.join(m.home, "cache")))
        t.exit_code(r, 8, "dave's store cannot be read")
        fams = validate(open(out).read())
        t.eq(lint(fams), [], "lint")
        t.eq(val(fams, "ollama_check_audit_success", store=real["dave"], user="dave"), 0, "dave's store: success 0")
        t.eq(val(fams, "ollama_check_audit_success", store=real["alice"]), 1, "alice's store: success 1")


with t.guard("blobs bytes by state sum to du -B1 -s blobs; temps count their contents (item 8)"):
    w, _ = t.clean_store("prom-walk")
    os.makedirs(os.path.join(w.blobs, "split-gguf-123"))
    w.write_raw("blobs/split-gguf-123/x", b"x" * 100000)
    w.write_raw("blobs/foo.gguf", b"foreign")
    outside = os.path.join(t.tempdir("prom-walk-out"), "big.bin")
    with open(outside, "wb") as f:
        f.write(b"o" * 300000)
    os.symlink(outside, os.path.join(w.blobs, "link-out"))   # counts as the link, not the target
    r = t.run("--store", w.root, "check", "--format", "prometheus")
    fams = validate(r.out)
    states = ("referenced", "orphaned", "partial", "temp", "foreign")
    du = lambda *o: int(subprocess.run(["du", "-B1", "-s"] + list(o) + [w.blobs], stdout=subprocess.PIPE,
                                       check=True).stdout.split()[0])
    total = sum(val(fams, "ollama_check_blobs_bytes", store=w.root, state=x) or 0 for x in states)
    t.eq(total, du(), "sum over states of blobs_bytes = du -B1 -s blobs")
    app = sum(val(fams, "ollama_check_blobs_apparent_bytes", store=w.root, state=x) or 0 for x in states)
    t.eq(app, du("--apparent-size"), "sum over states of blobs_apparent_bytes = du -B1 -s --apparent-size blobs")
    d = t.run("--store", w.root, "du", "--format", "json").json()["stores"][0]["totals"]
    t.eq(val(fams, "ollama_check_blobs_bytes", store=w.root, state="temp"), d["junk"]["temps"]["disk_bytes"],
         "temp bytes = du's junk temps (the directory and what is in it)")
    t.eq(total, d["blobs_bytes"], "the same figure as du's blobs/ total")


LAST_USED = "ollama_du_model_last_used_timestamp_seconds"
# The service's server loaded svc-only:latest three days ago (its log beside the store).
LOADED_AT = int(time.time()) - 3 * 86400
svc = next(i for i in m.infos["service"] if i["name"] == "svc-only:latest")
ms.write(os.path.join(os.path.dirname(m.stores["service"]), "logs", "server.log"),
         "\n".join(t.server_loads_at(LOADED_AT, m.stores["service"], t.weight_layer(svc)["digest"][7:])) + "\n")

with t.guard("du: each model's last use from the logs (%s)" % LAST_USED):
    r = m.run("du", "--all-users", "--format", "prometheus")
    t.exit_code(r, 0)
    fams = validate(r.out)
    t.eq(lint(fams), [], "lint (du)")
    fam = fams.get(LAST_USED, {})
    t.eq(fam.get("type"), "gauge", "a gauge")
    t.eq(fam.get("help"), "Unix time of the model's newest load in the server's logs; absent for a model they show "
         "no load of.", "its fixed HELP (OA_PROM_METRICS)")
    user = m.user_of("service")
    t.eq(val(fams, LAST_USED, store=real["service"], user=user, model="svc-only:latest"), LOADED_AT,
         "svc-only:latest: the load's time, to the second")
    t.eq([sorted(lab) for lab, _ in fam.get("samples", [])], [["model", "store", "user"]],
         "one sample, labelled as the other per-model metrics", fam.get("samples"))
    size_labels = [sorted(lab) for lab, _ in fams.get("ollama_du_model_size_bytes", {}).get("samples", [])]
    t.ok(size_labels and all(x == ["model", "store", "user"] for x in size_labels), "the same labels as model_size")
    t.eq(val(fams, LAST_USED, store=real["service"], model="shared:latest"), None,
         "a model the logs never saw loaded has no sample")
    t.eq(val(fams, LAST_USED, store=real["alice"]), None, "a store without logs has none")
    theirs = client_families(r.out)
    if theirs is not None:
        t.eq([f for f in theirs if f[0] == LAST_USED],
             [[LAST_USED, "gauge", fam.get("help"), [[{"store": real["service"], "user": user,
                                                      "model": "svc-only:latest"}, LOADED_AT]]]],
             "prometheus_client reads the same family and sample")


def _label_of(body, name, root):
    """The user label node_exporter serves for a store's sample of name."""
    for line in body.splitlines():
        if line.startswith(name + "{"):
            labels = dict(parse_labels(line[len(name) + 1:line.rindex("}")], name))
            if labels.get("store") == root:
                return labels.get("user")
    return None


def node_exporter_scrape(textdir):
    """Run the real prometheus-node-exporter on 127.0.0.1 with only its
    textfile collector on textdir; scrape /metrics once. Returns (families
    parsed from the scrape, what it logged), or None when it is not
    installed."""
    import socket
    import urllib.request
    exe = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if not exe:
        return None
    for _attempt in range(3):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        log = open(os.path.join(t.tempdir("node-exporter-log"), "stderr"), "w+")
        proc = subprocess.Popen([exe, "--web.listen-address=127.0.0.1:%d" % port,
                                 "--collector.disable-defaults", "--collector.textfile",
                                 "--collector.textfile.directory=" + textdir],
                                stdout=subprocess.DEVNULL, stderr=log)
        try:
            body = None
            deadline = time.monotonic() + 60
            while body is None and proc.poll() is None and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
                        body = r.read().decode("utf-8")
                except OSError:
                    time.sleep(0.2)
            if body is None:
                continue  # the port was taken, or it did not start: another port
        finally:
            proc.terminate()
            proc.wait()
        log.seek(0)
        return body, log.read()
    raise RuntimeError("prometheus-node-exporter did not answer on 127.0.0.1")


def sample_value(body, name, **labels):
    """The value of one sample in a scrape (None when absent)."""
    for line in body.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) == name and dict(parse_labels(m.group(2) or "", name)) == labels:
            return float(m.group(3))
    return None


with t.guard("a real prometheus-node-exporter reads the four jobs' files from one directory"):
    textdir = t.tempdir("node-textfile")
    for cmd in ("check", "verify", "du", "stores"):
        r = m.run(cmd, "--all-users", "--format", "prometheus", "--output", os.path.join(textdir, cmd + ".prom"))
        t.exit_code(r, 0, cmd)
    got = node_exporter_scrape(textdir)
    if got is None:
        t.skip("prometheus-node-exporter is not installed (Debian: prometheus-node-exporter)")
    else:
        body, log = got
        t.eq(sample_value(body, "node_textfile_scrape_error"), 0.0, "node_exporter read every file", log[-2000:])
        t.ok("collected before" not in log and "error gathering metrics" not in log,
             "no family or series is defined twice across the files", log[-2000:])
        for key, root in real.items():
            for job in ("check", "verify"):
                user = _label_of(body, "ollama_%s_audit_success" % job, root)
                t.eq(sample_value(body, "ollama_%s_findings_by_severity" % job, severity="error", store=root,
                                  user=user), 0.0, "%s: error findings of %s served at 0" % (job, key))
            t.eq(sample_value(body, "ollama_du_audit_success", store=root,
                              user=_label_of(body, "ollama_du_audit_success", root)), 1.0,
                 "du's families of %s are served" % key)
        t.ok(re.search(r"^ollama_store_\w+\{", body, re.M), "stores' families are served")
        t.eq(sample_value(body, LAST_USED, model="svc-only:latest", store=real["service"],
                          user=m.user_of("service")), float(LOADED_AT), "the last use of a model is served")
        # The harness can fail: the same job's file twice is refused by node_exporter.
        shutil.copy(os.path.join(textdir, "check.prom"), os.path.join(textdir, "check-copy.prom"))
        body, log = node_exporter_scrape(textdir)
        t.ok("collected before" in log or "error gathering metrics" in log,
             "self-check: node_exporter reports a family defined twice", log[-500:])

t.done()
