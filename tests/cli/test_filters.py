#!/usr/bin/env python3
"""Filters as `hf cache ls` takes them, on list, du and rm: --filter
'size>1GB', 'modified>30d', 'used>90d', 'format=safetensors', 'runner=mlx'
(repeatable, all must hold; > < >= <= = !=), --sort KEY[:asc|:desc],
--limit N. rm --filter plans exactly the models list --filter names (one
selection); a bad filter is a usage error naming the bad part."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

DAY = 86400
LIB = os.path.join("manifests", "registry.ollama.ai", "library")


def iso(secs_ago):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - secs_ago))


def build(tag, logs=True):
    """The demo store (GGUF, safetensors/MLX and a cloud stub): demo-llama
    pulled 100 days ago, tiny-mlx 40, the rest a day ago; the logs (unless
    not logs) load demo-embed 5 days ago and demo-llama 95 days ago."""
    s = t.copy_demo_store(tag)
    ages = {}
    for d, _, files in os.walk(s.manifests):
        for f in files:
            ages[os.path.join(d, f)] = DAY
    ages[os.path.join(s.root, LIB, "demo-llama", "1b")] = 100 * DAY
    ages[os.path.join(s.root, LIB, "tiny-mlx", "int4")] = 40 * DAY
    for p, secs in ages.items():
        when = time.time() - secs
        os.utime(p, (when, when), follow_symlinks=False)
    if logs:
        lines = ['time=%s level=INFO source=routes.go:1277 msg="Listening on [::]:11434 (version 0.5.13)"'
                 % iso(200 * DAY)]
        for name, days in (("demo-llama:1b", 95), ("demo-embed:latest", 5)):
            show = t.audit(s.root, "show", name, "--format", "json").json()
            blob = show["layer_list"][0]["digest"].replace(":", "-")
            lines.append('time=%s level=INFO source=server.go:380 msg="starting llama server" '
                         'cmd="/usr/bin/ollama runner --model %s/blobs/%s --port 1"' % (iso(days * DAY), s.root, blob))
        logdir = os.path.join(os.path.dirname(s.root), "logs")
        os.makedirs(logdir, exist_ok=True)
        with open(os.path.join(logdir, "server.log"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return s


def names(s, *args):
    r = t.audit(s.root, "list", "-q", *args)
    t.exit_code(r, 0, "list -q %s" % " ".join(args))
    return r.out.split()


def planned_models(s, *args):
    """The models whose manifests rm's dry run plans to remove."""
    r = t.audit(s.root, "rm", *args, "--format", "json")
    t.exit_code(r, 0, "rm %s" % " ".join(args))
    stores = r.json()["stores"]
    return sorted({e["model"] for st in stores for e in st["entries"] if e["category"] == "manifest"})


with t.guard("list --filter: each key, each operator, every filter must hold"):
    s = build("filters")
    models = t.audit(s.root, "list", "--format", "json").json()["stores"][0]["models"]
    size = {m["name"]: m["size"] for m in models if m["format"] != "remote"}
    every = sorted(m["name"] for m in models)
    t.eq(sorted(names(s, "--filter", "size>30KB")), sorted(n for n, b in size.items() if b > 30000), "size>30KB")
    t.eq(sorted(names(s, "--filter", "size>=40339")), sorted(n for n, b in size.items() if b >= 40339),
         "size>=BYTES: the exact figure")
    t.eq(sorted(names(s, "--filter", "size < 0.02 MiB")), sorted(n for n, b in size.items() if b < 0.02 * 1048576),
         "size < 0.02 MiB: IEC units, blanks allowed")
    t.eq(sorted(names(s, "--filter", "size=40339")), ["demo-llama:1b"], "size=BYTES")
    t.eq(sorted(names(s, "--filter", "size!=40339")), sorted(n for n in size if n != "demo-llama:1b"),
         "size!=: the cloud stub has no size and matches no size filter")
    t.eq(sorted(names(s, "--filter", "modified>30d")), ["demo-llama:1b", "tiny-mlx:int4"], "modified>30d")
    t.eq(sorted(names(s, "--filter", "modified<=2d")),
         sorted(n for n in every if n not in ("demo-llama:1b", "tiny-mlx:int4")), "modified<=2d")
    t.eq(names(s, "--filter", "format=safetensors"), ["tiny-mlx:int4"], "format=safetensors")
    t.eq(sorted(names(s, "--filter", "format!=gguf")), ["gpt-oss:120b-cloud", "tiny-mlx:int4"], "format!=gguf")
    t.eq(names(s, "--filter", "runner=MLX"), ["tiny-mlx:int4"], "runner=mlx, in any case")
    t.eq(sorted(names(s, "--filter", "format=gguf", "--filter", "size>40KB")),
         sorted(n for n, b in size.items() if b > 40000 and n != "tiny-mlx:int4"), "two filters: both hold")
    t.eq(names(s, "--filter", "format=gguf", "--filter", "runner=mlx"), [], "no model is both")

with t.guard("used: the age of the last load or pull, exactly --unused-for's rule"):
    s = build("used")
    t.eq(sorted(names(s, "--filter", "used>90d")), ["demo-llama:1b"],
         "used>90d: pulled 100 days ago, last loaded 95 days ago")
    t.eq(sorted(names(s, "--filter", "used>90d")), sorted(names(s, "--unused-for", "90d")),
         "used>90d lists what --unused-for 90d lists")
    t.eq(sorted(names(s, "--filter", "used>96d")), [], "used>96d: its load 95 days ago counts")
    t.eq(sorted(names(s, "--filter", "used>30d")), sorted(names(s, "--unused-for", "30d")),
         "used>30d: the same as --unused-for 30d")
    t.ok("tiny-mlx:int4" in names(s, "--filter", "used>30d"), "never loaded, pulled 40 days ago: unused 30 days")
    t.eq(sorted(names(s, "--filter", "used<=90d") + names(s, "--filter", "used>90d")),
         sorted(names(s)), "used<=D and used>D split the models")
    bare = build("used-nologs", logs=False)
    for cmd in ("list", "du", "rm"):
        r = t.audit(bare.root, cmd, "--filter", "used>90d")
        t.exit_code(r, 8, "%s --filter used without logs, as --unused-for" % cmd)
        t.contains(r.err, "--filter used needs the server's logs", "%s: says why" % cmd)

with t.guard("--sort KEY:asc|:desc and --limit N; the old keys unchanged"):
    s = build("sort")
    by_size = names(s, "--sort", "size")
    t.eq(names(s, "--sort", "size:desc"), by_size, "size:desc is size's own order")
    t.eq(names(s, "--sort", "size:asc"), by_size[::-1], "size:asc its reverse")
    by_name = names(s, "--sort", "name")
    t.eq(by_name, sorted(by_name, key=str.lower), "name ascends")
    t.eq(names(s, "--sort", "name:asc"), by_name, "name:asc is name's own order")
    t.eq(names(s, "--sort", "name:desc"), by_name[::-1], "name:desc its reverse")
    for key in ("unique", "modified", "last-used", "unservable"):
        r = t.audit(s.root, "list", "--sort", key)
        t.exit_code(r, 0, "--sort %s still works" % key)
    t.eq(names(s, "--sort", "size", "--limit", "2"), by_size[:2], "--limit 2: the first two in order")
    t.eq(names(s, "--limit", "100"), names(s), "--limit above the count: all")
    du = t.audit(s.root, "du", "-q", "--sort", "unique:asc")
    du_default = t.audit(s.root, "du", "-q")
    t.eq(du.out.split(), du_default.out.split()[::-1], "du --sort unique:asc reverses du's own order")
    t.eq(t.audit(s.root, "du", "-q", "--limit", "1").out.split(), du_default.out.split()[:1], "du --limit 1")

with t.guard("rm --filter plans exactly what list --filter lists; du shows those rows"):
    s = build("rmfilter")
    cases = [["--filter", "size>30KB"], ["--filter", "modified>30d"], ["--filter", "format!=gguf"],
             ["--filter", "used>30d"], ["--filter", "format=gguf", "--filter", "size<30KB"],
             ["--filter", "size>1KB", "--sort", "size", "--limit", "2"],
             ["--filter", "size>1KB", "--sort", "name:desc", "--limit", "3"]]
    for args in cases:
        listed = names(s, *args)
        t.ok(listed, "%s lists some models" % " ".join(args))
        t.eq(planned_models(s, *args), sorted(listed), "rm %s plans what list names" % " ".join(args))
        t.eq(planned_models(s, *listed), sorted(listed), "and so does rm $(list -q %s)" % " ".join(args))
        rows = t.audit(s.root, "du", "--format", "json", *args).json()["stores"][0]["models"]
        t.ok(all(n in listed for row in rows for n in row["names"]), "du %s: its rows' tags pass" % " ".join(args),
             rows)
    r = t.audit(s.root, "rm", "--filter", "modified>30d", "--units", "bytes", "--format", "json")
    planned = r.json()["stores"][0]["planned_bytes"]
    r = t.audit(s.root, "du", "--filter", "modified>30d", "--units", "bytes")
    t.eq(r.out.strip().splitlines()[-1].split()[:5], ["rm", "would", "free", str(planned), "the"],
         "du --filter ends with what rm --filter frees")
    t.contains(r.out, "`ollama-audit rm --filter 'modified>30d'`", "naming the command, quoted for a shell")
    t.eq(planned_models(s, "demo-llama:1b", "demo-embed:latest", "--filter", "modified>30d"), ["demo-llama:1b"],
         "named models are filtered too")
    r = t.audit(s.root, "rm", "--filter", "format=ggml")
    t.exit_code(r, 16, "an unknown format is a usage error")
    r = t.audit(s.root, "rm", "--filter", "size>100GB")
    t.exit_code(r, 0, "a filter nothing passes")
    t.contains(r.err, "no model matches the selection: nothing to plan", "says so")
    before = t.snapshot(s.root)
    r = t.audit(s.root, "rm", "--filter", "size>1KB", "--apply", "--yes")
    t.exit_code(r, 16, "rm --filter only plans: --apply is refused")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing removed")

with t.guard("a bad filter, sort or limit is a usage error naming the bad part"):
    s = build("bad", logs=False)
    bad = [(["--filter", "sise>1GB"], "unknown key 'sise'"),
           (["--filter", "size>>1GB"], "'>>' is not an operator"),
           (["--filter", "size=<1GB"], "'=<' is not an operator"),
           (["--filter", "size>1XB"], "'1XB' is not a size"),
           (["--filter", "size>-1"], "'-1' is not a size"),
           (["--filter", "modified>ninety"], "'ninety' is not a duration"),
           (["--filter", "format>gguf"], "format takes = or !="),
           (["--filter", "runner=cuda"], "'cuda' is not a runner"),
           (["--filter", "size>"], "has no value"),
           (["--filter", "size"], "has no operator"),
           (["--sort", "size:up"], "'up' is not a direction"),
           (["--sort", "bigness:asc"], "unknown --sort 'bigness'"),
           (["--limit", "0"], "--limit takes a number"),
           (["--limit", "-2"], "--limit takes a number"),
           (["--limit", "2x"], "--limit takes a number")]
    for cmd in ("list", "du", "rm"):
        for args, why in bad:
            r = t.audit(s.root, cmd, *args)
            t.exit_code(r, 16, "%s %s" % (cmd, " ".join(args)))
            t.contains(r.err, why, "%s %s: says what is wrong" % (cmd, " ".join(args)))
            t.eq(r.out, "", "%s %s: nothing on stdout" % (cmd, " ".join(args)))
    r = t.audit(s.root, "rm", "--filter", "size>1KB", "--sort", "size")
    t.exit_code(r, 16, "rm --sort without --limit would change nothing: refused")
    r = t.audit(s.root, "check", "--filter", "size>1GB")
    t.exit_code(r, 16, "a command that does not select refuses --filter")

t.done()
