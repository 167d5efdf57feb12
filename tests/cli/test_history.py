#!/usr/bin/env python3
"""`ollama-audit history`: the loads a server's logs recorded, from each era's
lines (2024 ollama_llama_server, 2025 `ollama runner` and --ollama-engine,
0.3x-0.40 llama-server and MLX), from server.log with its rotated siblings
beside the store, --log files (journalctl text export, docker logs -t) and
standard input; blob paths of another machine matched by digest, MLX names
by name resolution; garbage and truncated lines warned about by FILE:LINE
(docs/history.md)."""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402
from clitest import oa  # noqa: E402

t.check_binary()


def gguf_model(s, seed, arch="llama"):
    gguf = oa.tiny_llama_gguf(name="Tiny hist " + seed, arch=arch)
    layers = [s.layer("model", gguf), s.layer("template", t.TEMPLATE + seed)]
    cfg = oa.gguf_config(s, gguf, layers)
    return cfg, layers


def hexof(d):
    return d.split(":", 1)[1]


def build(root=None):
    """A store (at root, else in a new temp dir) with: llama3.2 (legacy GGUF),
    qwen3:8b (legacy GGUF), qwen3.5:4b (a 0.40 list with a GGUF and an MLX
    child), never:used. Returns (store, facts)."""
    s = oa.Store(root) if root else t.new_store("hist")
    f = {}
    f["llama"] = t.add_gguf_model(s, "llama3.2:latest", seed="a")
    f["qwen3"] = t.add_gguf_model(s, "qwen3:8b", seed="b")
    t.add_gguf_model(s, "never:used", seed="c")
    gcfg, glayers = gguf_model(s, "q35")
    gd, _ = s.add_manifest_blob(gcfg, glayers, runner="llamacpp", fmt="gguf")
    mcfg, mlayers = oa.tiny_mlx_model(s)
    md, _ = s.add_manifest_blob(mcfg, mlayers, runner="mlx", fmt="safetensors")
    ld, _ = s.add_list_blob([{"digest": gd, "runner": "llamacpp", "format": "gguf"},
                             {"digest": md, "runner": "mlx", "format": "safetensors"}])
    s.add_v2_tag("qwen3.5:4b", ld, how="symlink")
    f["q35_gguf_blob"] = hexof(glayers[0]["digest"])
    f["llama_blob"] = hexof(f["llama"]["layers"][0]["digest"])
    f["qwen3_blob"] = hexof(f["qwen3"]["layers"][0]["digest"])
    return s, f


GONE = "0f" * 32  # a blob no model of the store has


def era2024(f, prefix=""):
    """Journal-style lines of a 2024 Linux service (another machine's paths)."""
    p = "/usr/share/ollama/.ollama/models/blobs/sha256-"
    return [
        prefix + "time=2024-09-26T18:00:00.000+02:00 level=INFO source=routes.go:1153 "
        'msg="Listening on 127.0.0.1:11434 (version 0.3.12)"',
        prefix + "time=2024-09-26T18:08:31.100+02:00 level=INFO source=server.go:101 "
        'msg="system memory" total="31.3 GiB" free="28.0 GiB" free_swap="0 B"',
        prefix + "time=2024-09-26T18:08:31.200+02:00 level=INFO source=memory.go:326 msg=offload "
        'library=cuda layers.requested=-1 memory.available="[23.3 GiB]" memory.required.full="5.8 GiB"',
        prefix + "time=2024-09-26T18:08:31.326+02:00 level=INFO source=server.go:388 "
        'msg="starting llama server" cmd="/tmp/ollama2/runners/cuda_v12/ollama_llama_server --model '
        + p + f["llama_blob"] + ' --ctx-size 8192 --batch-size 512 --port 46259"',
        prefix + "time=2024-09-26T18:08:33.500+02:00 level=INFO source=server.go:626 "
        'msg="llama runner started in 2.17 seconds"',
    ]


def era2025(f):
    p = "/root/.ollama/models/blobs/sha256-"
    return [
        "time=2025-03-05T06:00:00.000Z level=INFO source=routes.go:1277 "
        'msg="Listening on [::]:11434 (version 0.5.13)"',
        "time=2025-03-05T06:58:54.116000000Z level=INFO source=server.go:380 "
        'msg="starting llama server" cmd="/usr/bin/ollama runner --model ' + p + f["qwen3_blob"]
        + ' --ctx-size 8192 --parallel 1 --port 33405"',
        "\x00\x01garbage that is not a log line \xff",
        'time=2025-03-05T06:59:00Z level=INFO msg="starting llama server" cmd="/usr/bin/ollama runner '
        "--ollama-engine --model " + p + GONE + " --ctx",   # cut off mid-line
        "time=2025-03-05T07:00:00.000Z level=INFO source=server.go:380 "
        'msg="starting llama server" cmd="/usr/bin/ollama runner --ollama-engine --model ' + p
        + f["qwen3_blob"] + ' --port 40000"',
        "time=2025-03-05T07:00:01.000Z level=ERROR source=sched.go:455 "
        'msg="error loading llama server" error="llama runner process has terminated: exit status 2"',
        "time=notatime level=INFO msg=x",
    ]


def era040(f):
    p = "/Users/me/.ollama/models/blobs/sha256-"
    return [
        "time=2026-10-22T08:00:00.000-07:00 level=INFO source=routes.go:1700 "
        'msg="Listening on 127.0.0.1:11434 (version 0.40.8)"',
        "time=2026-10-22T09:15:02.000-07:00 level=INFO source=server.go:107 "
        'msg="using llama-server for model" model=' + p + f["q35_gguf_blob"],
        "time=2026-10-22T09:15:02.010-07:00 level=INFO source=llama_server.go:457 "
        'msg="starting llama-server" cmd="/Applications/Ollama.app/Contents/Resources/llama-server '
        "--model " + p + f["q35_gguf_blob"] + ' --port 53511 --host 127.0.0.1"',
        "time=2026-10-22T09:15:02.020-07:00 level=INFO source=sched.go:613 "
        'msg="system memory" total="32.0 GiB" free="25.0 GiB" free_swap="0 B"',
        "time=2026-10-22T09:15:02.030-07:00 level=INFO source=llama_server.go:1048 "
        'msg="loading model via llama-server" model=' + p + f["q35_gguf_blob"],
        "time=2026-10-22T09:15:04.000-07:00 level=INFO source=llama_server.go:1362 "
        'msg="llama-server started in 1.99 seconds"',
        "time=2026-10-22T09:20:00.000-07:00 level=INFO source=client.go:508 "
        'msg="starting mlx runner subprocess" model=qwen3.5:4b port=53510',
        "time=2026-10-22T09:20:01.000-07:00 level=INFO source=server.go:46 "
        'msg="MLX engine initialized" "MLX version"=0.32.3-96-gbebd642 device=gpu',
        "time=2026-10-22T09:20:02.000-07:00 level=INFO msg=\"mlx runner is ready\"",
        'time=2026-10-22T09:21:00.000-07:00 level=INFO source=runner.go:300 msg="request done" '
        '"memory peak"="3.85 GiB"',
        "time=2026-10-22T10:00:00.000-07:00 level=INFO source=client.go:508 "
        'msg="starting mlx runner subprocess" model=gone:1b port=53512',
        "time=2026-10-22T10:00:00.500-07:00 level=WARN source=sched.go:300 "
        'msg="error loading llama server" error="model requires 20.1 GiB but only 12.0 GiB are available"',
    ]


def era040_crash(f):
    """A 0.40 llama-server load that fails, told twice: by the process
    reaper (llm/llama_server.go), then by the scheduler (server/sched.go)."""
    p = "/Users/me/.ollama/models/blobs/sha256-"
    return [
        "time=2026-10-22T11:00:00.000-07:00 level=INFO source=server.go:107 "
        'msg="using llama-server for model" model=' + p + f["q35_gguf_blob"],
        "time=2026-10-22T11:00:00.010-07:00 level=INFO source=llama_server.go:433 "
        'msg="starting llama-server" cmd="/Applications/Ollama.app/Contents/Resources/llama-server '
        "--model " + p + f["q35_gguf_blob"] + ' --port 53513"',
        "time=2026-10-22T11:00:01.000-07:00 level=ERROR source=llama_server.go:1023 "
        'msg="llama-server terminated" error="exit status 2" exit=2',
        "time=2026-10-22T11:00:01.010-07:00 level=INFO source=sched.go:641 "
        'msg="Load failed" model=' + p + f["q35_gguf_blob"]
        + ' error="llama-server process has terminated: exit status 2: error loading model"',
    ]


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")


# A fake machine with no journal, so this machine's own journal never shows up.
NO_SYSTEM = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("no-journal")}


def run(*args, env=None, **kw):
    return t.run(*args, env=dict(NO_SYSTEM, **(env or {})), **kw)


def hist(s, *args, **kw):
    return run("--store", s.root, "history", *args, **kw)


with t.guard("server.log and its rotated siblings beside the store"):
    s, f = build()
    logs = os.path.join(os.path.dirname(s.root), "logs")
    write(os.path.join(logs, "server.log"), era040(f))
    write(os.path.join(logs, "server-1.log"), era2025(f))
    write(os.path.join(logs, "server-2.log"), era2024(f))
    write(os.path.join(logs, "app.log"), ['msg="starting mlx runner subprocess" model=never:used'])
    r = hist(s, "--format", "json")
    t.exit_code(r, 0, "history reads the logs beside the store")
    doc = r.json()
    t.eq(doc["schema"], "ollama-audit.history/3", "versioned schema")
    st = doc["stores"][0]
    t.eq([os.path.basename(x) for x in st["sources"]], ["server-2.log", "server-1.log", "server.log"],
         "server*.log found, oldest first; app.log is not a server log")
    loads = st["loads"]
    got = [(l["time"], [m["name"] for m in l["models"]], l["runner"], l["result"]) for l in loads]
    want = [
        ("2026-10-22T17:00:00Z", [], "mlx", "failed"),
        ("2026-10-22T16:20:00Z", ["qwen3.5:4b"], "mlx", "ok"),
        ("2026-10-22T16:15:02Z", ["qwen3.5:4b"], "llamacpp", "ok"),
        ("2025-03-05T07:00:00Z", ["qwen3:8b"], "ollama", "failed"),
        ("2025-03-05T06:59:00Z", [], "ollama", "unknown"),
        ("2025-03-05T06:58:54.116000000Z", ["qwen3:8b"], "llamacpp", "unknown"),
        ("2024-09-26T16:08:31.326000000Z", ["llama3.2:latest"], "llamacpp", "ok"),
    ]
    t.eq(got, want, "one event per load, newest first, runner and result per era", got)
    by_time = {l["time"]: l for l in loads}
    l24 = by_time["2024-09-26T16:08:31.326000000Z"]
    t.eq(l24["zone"], "+02:00", "the zone the line was logged in is kept")
    t.eq(l24["server_version"], "0.3.12", "the version the server announced before the load")
    t.eq(l24["memory"], {"required": round(5.8 * 2**30), "gpu_free": round(23.3 * 2**30),
                         "system_total": round(31.3 * 2**30), "system_free": 28 * 2**30},
         "memory lines logged before the start belong to it", l24["memory"])
    t.eq(l24["models"][0]["id"], f["llama"]["id"], "the model's ID")
    t.eq(l24["digest"], "sha256:" + f["llama_blob"], "the blob's digest")
    t.ok(l24["logged_model"].startswith("/usr/share/ollama/"), "another machine's path matched by digest")
    lg = by_time["2026-10-22T16:15:02Z"]
    t.eq(lg["memory"].get("system_free"), 25 * 2**30, "0.40's memory lines after the start")
    t.eq(lg["server_version"], "0.40.8", "0.40.8")
    lm = by_time["2026-10-22T16:20:00Z"]
    t.eq(lm["memory"].get("peak"), round(3.85 * 2**30), "the MLX peak goes to its load")
    t.eq(lm["logged_model"], "qwen3.5:4b", "the MLX runner's model name")
    lf = by_time["2026-10-22T17:00:00Z"]
    t.eq((lf["logged_model"], lf["in_store"]), ("gone:1b", False), "an MLX name not in the store")
    t.eq(lf["reason"], "model requires 20.1 GiB but only 12.0 GiB are available", "the fit check's reason")
    lc = by_time["2025-03-05T06:59:00Z"]
    t.eq((lc["digest"], lc["in_store"]), ("sha256:" + GONE, False),
         "a truncated start line still counts, its blob not in the store")
    t.eq(by_time["2025-03-05T07:00:00Z"]["reason"],
         "llama runner process has terminated: exit status 2", "a runner crash is the load's result")
    t.eq(lg["result"], "ok", "0.40: 'llama-server started in N seconds' is a successful load")
    t.eq(st["logs_from"], "2024-09-26T16:00:00Z", "how far back the logs go")
    models = {m["name"]: m for m in st["models"]}
    t.eq(models["qwen3.5:4b"]["runners"], ["llamacpp", "mlx"], "both engines seen for the list tag")
    t.eq(models["qwen3.5:4b"]["last_loaded"], "2026-10-22T16:20:00Z", "its last load")
    t.eq((models["qwen3:8b"]["loads"], models["qwen3:8b"]["failed"]), (2, 1), "loads and failures counted")
    t.ok("never:used" not in models, "a model never loaded has no summary row")
    t.eq(len(st["warnings"]), 3, "three bad lines", st["warnings"])
    for n in (3, 4, 7):
        t.contains(r.err, "server-1.log:%d: " % n, "a FILE:LINE warning for line %d" % n)

    r = hist(s)
    t.exit_code(r, 0, "table")
    lines = r.out.splitlines()
    t.contains(lines[0], "7 loads in 3 log sources covering 2024-09-26T16:00:00Z", "the header line")
    t.ok(lines[1].split()[:7] == ["TIME", "MODEL", "ID", "RUNNER", "MEMORY", "VERSION", "RESULT"], "columns (the reason last)",
         lines[1])
    t.ok(lines[3].startswith("2026-10-22 09:20:00-07:00  qwen3.5:4b"), "time in the logged zone, newest first",
         lines[3])
    t.contains(r.out, "failed: model requires 20.1 GiB", "the reason in the table")
    t.contains(r.out, "sha256:" + GONE[:12] + " (not in the store)", "an unknown blob named by digest")
    t.contains(r.out, "gone:1b (not in the store)", "an unknown MLX name")
    summ = lines[lines.index("") + 1:]
    t.ok(summ[0].split() == ["MODEL", "ID", "LAST", "LOADED", "LOADS", "RUNNERS"], "summary columns", summ)
    t.ok(any(x.startswith("qwen3:8b") and "2 (1 failed)" in x and "llamacpp,ollama" in x for x in summ),
         "per-model summary", summ)

    r = hist(s, "qwen3:8b", "--format", "json")
    t.eq(len(r.json()["stores"][0]["loads"]), 2, "MODEL keeps that model's loads")
    r = hist(s, "no:such")
    t.exit_code(r, 16, "an unknown MODEL is a usage error")
    r = hist(s, "--since", "2025-01-01", "--until", "2025-03-05T06:59:30Z", "--format", "json")
    t.eq([l["time"] for l in r.json()["stores"][0]["loads"]], ["2025-03-05T06:59:00Z", "2025-03-05T06:58:54.116000000Z"],
         "--since a date, --until a time")
    r = hist(s, "--since", "36500d", "--format", "json")
    t.eq(len(r.json()["stores"][0]["loads"]), 7, "--since a duration ago")
    r = hist(s, "--since", "1s", "--format", "json")
    t.eq(len(r.json()["stores"][0]["loads"]), 0, "--since 1s: nothing that recent")
    r = hist(s, "--since", "last tuesday")
    t.exit_code(r, 16, "a --since that is no time")

    r = hist(s, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(r.out)))
    t.eq(len(rows), 7, "csv: a row per load")
    t.eq((rows[1]["model"], rows[1]["runner"], rows[1]["memory_peak"]),
         ("qwen3.5:4b", "mlx", str(round(3.85 * 2**30))), "csv fields")
    r = hist(s, "--format", "ndjson")
    recs = [json.loads(x) for x in r.out.splitlines()]
    t.eq(sorted(set(x["type"] for x in recs)), ["load", "model", "sources"], "ndjson record types")
    t.ok(all(x["schema"] == "ollama-audit.history/3" for x in recs), "every record names the schema")

with t.guard("--log: journalctl and docker exports, standard input"):
    s, f = build()
    d = t.tempdir("exports")
    jtext = os.path.join(d, "journal.txt")
    write(jtext, ["-- Logs begin at Thu 2024-09-26 17:00:00 CEST. --",
                  "Sep 26 17:59:59 gpu-box systemd[1]: Started ollama.service - Ollama Service."]
          + era2024(f, prefix="Sep 26 18:08:31 gpu-box ollama[3886]: ")
          + ["Sep 26 18:08:32 gpu-box ollama[4066]: llm_load_tensors: ggml ctx size =    0.14 MiB"])
    r = hist(s, "--log", jtext, "--format", "json")
    t.exit_code(r, 0, "a journalctl text export")
    st = r.json()["stores"][0]
    t.eq(st["sources"], [jtext], "--log replaces the automatic sources")
    t.eq([(l["models"][0]["name"], l["time"], l["result"]) for l in st["loads"]],
         [("llama3.2:latest", "2024-09-26T16:08:31.326000000Z", "ok")], "the slog time inside, not the prefix")
    t.eq(st["warnings"], [], "journal noise is not a bad line")
    # docker logs -t: the daemon's own receive time, nanoseconds, before each line
    docker = ["2025-03-05T%02d:00:00.%09dZ %s" % (6 + i // 4, 123456789 + i, l)
              for i, l in enumerate(era2025(f)) if l.startswith("time=2025-03-05T0")]
    r = hist(s, "--log", "-", "--log", jtext, "--format", "json", input="\n".join(docker).encode())
    t.exit_code(r, 0, "docker logs -t on standard input")
    st = r.json()["stores"][0]
    t.eq(st["sources"], ["(stdin)", jtext], "both sources read")
    t.eq(len(st["loads"]), 4, "three docker loads and the journal's one", st["loads"])
    t.eq(st["loads"][0]["source"], "(stdin)", "each load names its source")
    r = hist(s, "--log", os.path.join(d, "missing.log"))
    t.exit_code(r, 8, "a --log that cannot be read")
    t.contains(r.err, "missing.log", "it is named")

JOURNAL_REMOTE = next((p for p in ("/usr/lib/systemd/systemd-journal-remote",
                                    "/lib/systemd/systemd-journal-remote") if os.path.exists(p)), None)
BOOT = "0123456789abcdef0123456789abcdef"


def journal_file(path, entries):
    """A real journal file: the export format, converted by systemd-journal-remote.
    entries: (usec, unit, message bytes)."""
    out = b""
    for i, (usec, unit, msg) in enumerate(entries):
        # one boot: the monotonic clock runs with the wall clock, as sd-journal expects
        out += b"__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n_BOOT_ID=%s\n" % (
            usec, usec - 1700000000000000, BOOT.encode())
        out += b"_SYSTEMD_UNIT=%s\n_TRANSPORT=stdout\n" % unit.encode()
        if b"\n" in msg or b"\0" in msg:  # binary field: name, newline, le64 size, data
            out += b"MESSAGE\n" + len(msg).to_bytes(8, "little") + msg + b"\n\n"
        else:
            out += b"MESSAGE=" + msg + b"\n\n"
    exp = path + ".export"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(exp, "wb") as fh:
        fh.write(out)
    r = subprocess.run([JOURNAL_REMOTE, "-o", path, exp], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.unlink(exp)
    return r.returncode == 0 and os.path.exists(path)


with t.guard("the systemd journal of another machine (--root)"):
    s, f = build()
    root = t.tempdir("journal-root")
    r = hist(s, "--root", root)
    if "built without libsystemd" in r.err:
        t.exit_code(r, 8, "--root in a build without libsystemd is an operational error")
        t.contains(r.err, "--log FILE", "and says how to do without")
    elif not JOURNAL_REMOTE:
        t.fail("systemd-journal-remote is not installed (make test-deps installs it)")
    else:
        t.exit_code(r, 8, "--root with no journal there")
        t.contains(r.err, "no ollama.service entries", "says so")
        usec = 1727366911326000
        entries = [(usec - 3600 * 10**6, "ollama.service", b"2023/12/15 15:33:10 routes.go:871: Listening on "
                    b"127.0.0.1:11434 (version 0.3.12)")]
        entries += [(usec + i, "ollama.service", l.encode()) for i, l in enumerate(era2024(f))]
        entries += [(usec + 50, "sshd.service", b'time=2024-09-26T18:09:00Z level=INFO '
                     b'msg="starting mlx runner subprocess" model=never:used'),
                    (usec + 60, "ollama.service", b"time=2024-09-26T18:10:00Z msg=\"a\0b\"")]
        ok1 = journal_file(os.path.join(root, "var/log/journal", BOOT, "system.journal"), entries)
        later = [(1741157934116000 + i, "ollama.service", l.encode()) for i, l in enumerate(era2025(f)[:2])]
        ok2 = journal_file(os.path.join(root, "run/log/journal", BOOT, "system.journal"), later)
        t.ok(ok1 and ok2, "systemd-journal-remote wrote the journal files")
        r = hist(s, "--root", root, "--format", "json")
        t.exit_code(r, 0, "the journal read through sd-journal")
        st = r.json()["stores"][0]
        t.eq(st["sources"], ["journal (--root)"], "the journal is the source")
        t.eq([(l["models"][0]["name"] if l["models"] else None, l["time"], l["runner"], l["server_version"])
              for l in st["loads"]],
             [("qwen3:8b", "2025-03-05T06:58:54.116000000Z", "llamacpp", "0.5.13"),
              ("llama3.2:latest", "2024-09-26T16:08:31.326000000Z", "llamacpp", "0.3.12")],
             "/var/log/journal and /run/log/journal, ollama.service only", st["loads"])
        t.eq(st["logs_from"], "2024-09-26T15:08:31.326000000Z",
             "a line without a time of its own takes the journal's")
        t.eq(len(st["warnings"]), 1, "the binary message is warned about", st["warnings"])
        t.ok(st["warnings"] and st["warnings"][0].startswith("journal (--root):"), "named by source and entry")
        r = hist(s, "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": root})
        t.eq(r.json()["stores"][0]["sources"], [], "without --root: the machine's own journal, only for "
             "the store its service served (/usr/share/ollama/.ollama/models there), not this one")
        served, _ = build(os.path.join(root, "usr/share/ollama/.ollama/models"))
        r = hist(served, "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": root})
        t.eq(r.json()["stores"][0]["sources"], ["journal"], "the machine's own journal, for the store it "
             "names as that machine names it")
        t.eq(len(r.json()["stores"][0]["loads"]), 2, "read the same way")
        r = hist(s, "--root", root, "--log", os.devnull, "--format", "json")
        t.eq(r.json()["stores"][0]["sources"], [os.devnull, "journal (--root)"], "--root with --log reads both")

with t.guard("a libsystemd.so.0 that lacks sd-journal: the journal is not read, and history says why"):
    # libsystemd is loaded when the journal is first read (dlopen), not
    # linked: the one found first here is an empty library of that name.
    s, f = build()
    fake = t.tempdir("fake-libsystemd")
    cc = shutil.which("cc") or shutil.which("gcc")
    t.ok(cc is not None, "a C compiler (the build's) makes the stand-in library")
    if cc and "built without libsystemd" not in hist(s, "--root", fake).err:
        made = subprocess.run([cc, "-shared", "-fPIC", "-o", os.path.join(fake, "libsystemd.so.0"),
                               "-x", "c", os.devnull], capture_output=True)
        t.eq(made.returncode, 0, "cc -shared made the stand-in")
        r = hist(s, "--root", fake, env={"LD_LIBRARY_PATH": fake})
        t.exit_code(r, 8, "--root whose journal cannot be read is an operational error")
        t.contains(r.err, "has no sd_journal_open", "names what the library lacks")
        t.contains(r.err, "--log FILE", "and says how to do without")
        r = hist(s, env={"LD_LIBRARY_PATH": fake})
        t.exit_code(r, 0, "without --root the log files beside the store are read all the same")


with t.guard("the machine's journal gives LAST USED only to the store its service served"):
    a, fa = build()
    b, _ = build()  # the same models: a load of A's blob would match B's by digest
    sysroot = t.tempdir("journal-two-stores")
    if "built without libsystemd" not in hist(a, "--root", sysroot).err and JOURNAL_REMOTE:
        usec = 1727366911326000
        config = ('time=2024-09-26T16:00:00.000Z level=INFO source=routes.go:1200 msg="server config" '
                  'env="map[OLLAMA_HOST:http://127.0.0.1:11434 OLLAMA_MODELS:%s OLLAMA_NUM_PARALLEL:0]"' % a.root)
        load = ('time=2024-09-26T16:08:31.326Z level=INFO source=server.go:388 msg="starting llama server" '
                'cmd="/usr/local/bin/ollama runner --model %s/blobs/sha256-%s --port 46259"'
                % ("/elsewhere/models", fa["llama_blob"]))
        ok = journal_file(os.path.join(sysroot, "var/log/journal", BOOT, "system.journal"),
                          [(usec, "ollama.service", config.encode()), (usec + 1, "ollama.service", load.encode())])
        t.ok(ok, "systemd-journal-remote wrote the journal file")
        env = {"OLLAMA_AUDIT_SYSROOT": sysroot}

        def last_used(r):
            return [{m["name"]: m.get("last_used", "(no logs)") for m in st["models"]}.get("llama3.2:latest")
                    for st in r.json()["stores"]]

        r = run("--store", a.root, "--store", b.root, "list", "--format", "json", env=env)
        t.exit_code(r, 0, "list of both stores")
        t.eq(last_used(r), ["2024-09-26T16:08:31.326000000Z", "(no logs)"],
             "the journal names A as OLLAMA_MODELS: A's LAST USED, none for B", r.out)
        r = run("--store", b.root, "list", "--format", "json", env=env)
        t.eq(last_used(r), ["(no logs)"], "list --store B alone: no LAST USED from A's journal", r.out)
        t.eq(hist(b, "--format", "json", env=env).json()["stores"][0]["sources"], [],
             "history --store B does not read it")
        r = run("--store", b.root, "list", env=env)
        t.ok("journal" not in r.err and "LAST USED" not in r.out, "the table says no logs for B", r.err)

with t.guard("0.40: one failed llama-server load however many lines tell it"):
    s, f = build()
    write(os.path.join(os.path.dirname(s.root), "logs", "server.log"), era040(f)[:1] + era040_crash(f))
    r = hist(s, "--format", "json")
    t.exit_code(r, 0, "history reads a 0.40 crash")
    loads = r.json()["stores"][0]["loads"]
    t.eq([(l["runner"], l["result"], l["reason"]) for l in loads],
         [("llamacpp", "failed", "llama-server process has terminated: exit status 2: error loading model")],
         "the reaper's and the scheduler's lines are one failed load, with the fuller reason", loads)


with t.guard("logs in the store owner's home when the store is elsewhere"):
    s, f = build()
    # The store lives in /srv (OLLAMA_MODELS); the app still logs to ~/.ollama/logs.
    sysroot = t.tempdir("owner-home")
    home = os.path.join(sysroot, "home", "me")
    os.makedirs(os.path.join(sysroot, "etc"))
    with open(os.path.join(sysroot, "etc", "passwd"), "w") as fh:
        fh.write("me:x:%d:%d::/home/me:/bin/sh\n" % (os.stat(s.root).st_uid, os.getgid()))
    # server.log names the store in its config line; server-1.log by its blob paths
    config = ('time=2026-10-22T07:59:59.000-07:00 level=INFO source=routes.go:1600 msg="server config" '
              'env="map[OLLAMA_HOST:http://127.0.0.1:11434 OLLAMA_MODELS:%s OLLAMA_NOPRUNE:false]"' % s.root)
    write(os.path.join(home, ".ollama", "logs", "server.log"), [config] + era040(f))
    write(os.path.join(home, ".ollama", "logs", "server-1.log"),
          [x.replace("/root/.ollama/models", s.root) for x in era2025(f)])
    r = t.run("--store", s.root, "history", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": sysroot})
    t.exit_code(r, 0, "history finds the owner's logs")
    st = r.json()["stores"][0]
    t.eq([os.path.relpath(x, sysroot) for x in st["sources"]],
         ["home/me/.ollama/logs/server-1.log", "home/me/.ollama/logs/server.log"],
         "the owner's ~/.ollama/logs, oldest first", st["sources"])
    r = t.run("--store", s.root, "list", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": sysroot})
    last = {m["name"]: m.get("last_used") for m in r.json()["stores"][0]["models"]}
    t.eq(last.get("qwen3.5:4b"), "2026-10-22T16:20:00Z", "list's LAST USED from the owner's logs", last)
    # The same directory reached both ways is read once.
    write(os.path.join(os.path.dirname(s.root), "logs", "server.log"), era040(f))
    shutil.rmtree(os.path.join(home, ".ollama", "logs"))
    os.symlink(os.path.join(os.path.dirname(s.root), "logs"), os.path.join(home, ".ollama", "logs"))
    r = t.run("--store", s.root, "history", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": sysroot})
    t.eq(len(r.json()["stores"][0]["sources"]), 1, "one directory reached twice is read once",
         r.json()["stores"][0]["sources"])


def iso(when):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


with t.guard("a store under another name: logs that name it through a symlinked parent"):
    # /srv is a link to /data: older logs name the store by its real path,
    # newer ones by the link (OLLAMA_MODELS=/srv/models), and the reverse
    base = t.tempdir("other-name")
    os.makedirs(os.path.join(base, "data"))
    os.symlink("data", os.path.join(base, "srv"))
    os.symlink(os.path.join(base, "data"), os.path.join(base, "mnt"))   # a second name, absolute
    s, f = build(os.path.join(base, "data", "models"))
    s.age_all(90 * 86400)   # pulled long ago: only the loads decide
    real, link, other = s.root, os.path.join(base, "srv", "models"), os.path.join(base, "mnt", "models")
    now = int(time.time())
    hour_ago, months_ago = now - 3600, now - 60 * 86400
    sysroot = t.tempdir("other-name-machine")   # the owner's home, where the app logs
    os.makedirs(os.path.join(sysroot, "etc"))
    with open(os.path.join(sysroot, "etc", "passwd"), "w") as fh:
        fh.write("me:x:%d:%d::/home/me:/bin/sh\n" % (os.stat(s.root).st_uid, os.getgid()))
    logs = os.path.join(sysroot, "home", "me", ".ollama", "logs")
    me = {"OLLAMA_AUDIT_SYSROOT": sysroot}

    def last_used(root):
        r = t.run("--store", root, "list", "--format", "json", env=me)
        t.exit_code(r, 0, "list --store %s" % os.path.relpath(root, base))
        return {m["name"]: m.get("last_used") for m in r.json()["stores"][0]["models"]}.get("qwen3:8b")

    for older, newer in ((real, link), (link, real), (real, other), (link, other)):
        write(os.path.join(logs, "server-1.log"), t.server_loads_at(months_ago, older, f["qwen3_blob"]))
        write(os.path.join(logs, "server.log"), t.server_loads_at(hour_ago, newer, f["qwen3_blob"]))
        how = "older logs name %s, newer %s" % (os.path.relpath(older, base), os.path.relpath(newer, base))
        for opened in (real, link):
            t.eq(last_used(opened), iso(hour_ago), "opened as %s, %s: LAST USED an hour ago"
                 % (os.path.relpath(opened, base), how))
        r = t.run("--store", real, "history", "--format", "json", env=me)
        t.eq(r.json()["stores"][0]["sources"], [os.path.join(logs, "server-1.log"), os.path.join(logs, "server.log")],
             "%s: history reads both logs" % how, r.out)
    write(os.path.join(logs, "server-1.log"), t.server_loads_at(months_ago, real, f["qwen3_blob"]))
    write(os.path.join(logs, "server.log"), t.server_loads_at(hour_ago, link, f["qwen3_blob"]))
    r = t.run("--store", real, "rm", "--unused-for", "30d", "--format", "json", env=me)
    t.exit_code(r, 0, "rm --unused-for 30d, the store opened by its real path")
    planned = [e.get("model") for e in r.json()["stores"][0]["entries"]]
    t.ok("qwen3:8b" not in planned, "the model loaded an hour ago (through the link) is not planned", planned)
    t.ok("never:used" in planned, "a model never loaded is", planned)
    r = t.run("--store", real, "list", "--unused-for", "30d", "-q", env=me)
    t.ok("qwen3:8b" not in r.out.split(), "list --unused-for leaves it out", r.out)
    # A path that names no existing directory is compared as text,
    # normalised: a log naming a path that is not there and is not the
    # store's names another store; doubled or trailing slashes and "." do
    # not make a path another.
    write(os.path.join(logs, "server-1.log"), t.server_loads_at(months_ago, real, f["qwen3_blob"]))
    write(os.path.join(logs, "server.log"), t.server_loads_at(hour_ago, os.path.join(base, "gone", "models"), f["qwen3_blob"]))
    t.eq(last_used(real), iso(months_ago), "a log naming a path that does not exist (and is not the store's "
         "text) is another store's")
    write(os.path.join(logs, "server.log"), t.server_loads_at(hour_ago, base + "//data/./models/", f["qwen3_blob"]))
    t.eq(last_used(real), iso(hour_ago), "a path spelled with // and /./ names the store")


with t.guard("the journal of a machine mounted elsewhere: its symlinks resolve under its root"):
    sysroot = t.tempdir("journal-other-name")
    s, f = build(os.path.join(sysroot, "data", "models"))
    s.age_all(90 * 86400)
    os.symlink("/data", os.path.join(sysroot, "srv"))             # that machine's /srv -> /data
    os.symlink(os.path.join(sysroot, "data"), os.path.join(sysroot, "live"))  # a path of this machine, not its
    if "built without libsystemd" not in hist(s, "--root", sysroot).err and JOURNAL_REMOTE:
        now = int(time.time())

        def journal_naming(root):
            shutil.rmtree(os.path.join(sysroot, "var"), ignore_errors=True)
            lines = t.server_loads_at(now - 3600, root, f["qwen3_blob"])
            return journal_file(os.path.join(sysroot, "var/log/journal", BOOT, "system.journal"),
                                [(now * 10**6 - 3600 * 10**6 + i, "ollama.service", l.encode())
                                 for i, l in enumerate(lines)])

        t.ok(journal_naming("/srv/models"), "systemd-journal-remote wrote the journal file")
        r = t.run("--store", s.root, "list", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": sysroot})
        st = r.json()["stores"][0]
        t.eq(st.get("log_sources"), ["journal"], "the journal naming /srv/models (/srv -> /data on that "
             "machine) is this store's", r.out)
        t.eq({m["name"]: m.get("last_used") for m in st["models"]}.get("qwen3:8b"), iso(now - 3600),
             "LAST USED from it")
        t.ok(journal_naming("/live/models"), "systemd-journal-remote wrote the journal file")
        r = t.run("--store", s.root, "list", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": sysroot})
        t.eq(r.json()["stores"][0].get("log_sources"), None, "a link of that machine to a path of this one "
             "resolves under its root (where nothing is): not this store", r.out)


with t.guard("a FIFO planted as server.log is refused, never waited on"):
    s, f = build()
    logs = os.path.join(os.path.dirname(s.root), "logs")
    write(os.path.join(logs, "server-1.log"), era2025(f))
    os.mkfifo(os.path.join(logs, "server.log"))
    for args in (["history", "--format", "json"], ["list", "--format", "json"]):
        try:
            r = run("--store", s.root, *args, timeout=60)
        except subprocess.TimeoutExpired:
            t.fail("%s waits on a FIFO planted as server.log" % args[0])
            continue
        t.ok(r.code & 8, "%s: a log that cannot be read is an operational error" % args[0], r.describe())
        t.contains(r.err, "server.log: not a regular file", "%s says why" % args[0], r.err)
    doc = run("--store", s.root, "history", "--format", "json", timeout=60).json()
    t.eq([os.path.basename(x) for x in doc["stores"][0]["sources"]], ["server-1.log"],
         "the other logs are still read")


with t.guard("a blob two tags share: one summary row per tag, each with its own ID"):
    s = t.new_store("hist-shared")
    a = t.add_gguf_model(s, "base:1b", seed="shared")
    layers = a["layers"][:1] + [s.layer("system", "You are terse.")]
    cfg = oa.gguf_config(s, a["gguf"], layers)
    _, data = s.add_manifest("terse:1b", cfg, layers)
    terse_id = oa.manifest_id(data)
    blob = hexof(a["layers"][0]["digest"])
    write(os.path.join(os.path.dirname(s.root), "logs", "server.log"), [
        "time=2025-03-05T06:00:00.000Z level=INFO source=routes.go:1277 "
        'msg="Listening on [::]:11434 (version 0.5.13)"',
        "time=2025-03-05T07:00:00.000Z level=INFO source=server.go:380 "
        'msg="starting llama server" cmd="/usr/bin/ollama runner --model /root/.ollama/models/blobs/sha256-'
        + blob + ' --port 1"'])
    st = hist(s, "--format", "json").json()["stores"][0]
    rows = sorted((m["name"], m["id"], m["loads"]) for m in st["models"])
    t.eq(rows, [("base:1b", a["id"], 1), ("terse:1b", terse_id, 1)],
         "each tag its own row with its own ID (was one joined name with the first ID)", st["models"])


with t.guard("LAST USED in list, --unused-for on list, du and rm"):
    s, f = build()
    write(os.path.join(os.path.dirname(s.root), "logs", "server.log"), era2025(f) + era040(f))
    # pulled long ago (2020), so only the loads decide; a duration that reaches
    # back to just before the 2025 load of qwen3:8b
    import time
    s.age_all(int(time.time()) - 1577836800)
    unused = "%dd" % (int((time.time() - 1741157999) / 86400) + 2)
    r = run("--store", s.root, "list")
    t.exit_code(r, 0, "list with logs beside the store")
    head, *rows = r.out.splitlines()
    t.ok(head.rstrip().endswith("LAST USED"), "a LAST USED column when logs are found", head)
    last = {x.split()[0]: x for x in rows}
    t.ok(last["never:used"].rstrip().endswith("never"), "never loaded: never", last["never:used"])
    t.ok(last["qwen3:8b"].rstrip().endswith("ago"), "loaded: how long ago", last["qwen3:8b"])
    doc = run("--store", s.root, "list", "--format", "json").json()
    lu = {m["name"]: m.get("last_used", "absent") for m in doc["stores"][0]["models"]}
    t.eq(lu, {"qwen3:8b": "2025-03-05T07:00:00Z", "qwen3.5:4b": "2026-10-22T16:20:00Z",
              "llama3.2:latest": None, "never:used": None}, "list json: last_used, null when never loaded")
    r = run("--store", s.root, "list", "--unused-for", unused, "--format", "json")
    t.eq(sorted(m["name"] for m in r.json()["stores"][0]["models"]), ["llama3.2:latest", "never:used"],
         "list --unused-for: only the models not loaded in that time")
    t.contains(r.err, "the logs go back to 2025-03-05T06:00:00Z", "and how far back the logs go")
    r = run("--store", s.root, "du")
    head, *rows = r.out.splitlines()[1:]
    t.ok(head.rstrip().endswith("LAST USED"), "du: a LAST USED column", head)
    t.ok(any(x.startswith("never:used") and x.rstrip().endswith("never") for x in rows), "du: never", rows)
    r = run("--store", s.root, "du", "--format", "json")
    t.eq({x["names"][0]: x["last_used"] for x in r.json()["stores"][0]["models"]},
         {"qwen3:8b": "2025-03-05T07:00:00Z", "qwen3.5:4b": "2026-10-22T16:20:00Z",
          "llama3.2:latest": None, "never:used": None}, "du json: last_used per row")
    r = run("--store", s.root, "du", "--unused-for", unused, "--format", "json")
    t.eq(sorted(x["names"][0] for x in r.json()["stores"][0]["models"]), ["llama3.2:latest", "never:used"],
         "du --unused-for")
    before = t.snapshot(s.root)
    r = run("--store", s.root, "rm", "--unused-for", unused, "--format", "json")
    t.exit_code(r, 0, "rm --unused-for: a dry run")
    planned = r.out
    t.contains(planned, "llama3.2/latest", "plans the never-loaded llama3.2")
    t.contains(planned, "never/used", "and never:used")
    t.not_contains(planned, "qwen3/8b", "not a model the logs show loaded")
    t.contains(r.err, "the logs go back to", "says how far back the logs go")
    r = run("--store", s.root, "rm", "qwen3:8b", "never:used", "--unused-for", unused, "-v")
    t.not_contains(r.out, "qwen3/8b", "named models are filtered too")
    t.contains(r.out, "never/used", "the unused one stays")
    r = run("--store", s.root, "rm", "--unused-for", unused, "--apply", "--yes")
    t.exit_code(r, 16, "rm --unused-for --apply is refused: plan, review, apply the plan")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "nothing in the store changed")
    r = run("--store", s.root, "--platform", "linux/amd64", "check", "--format", "json")
    fs = [(x["code"], x.get("model")) for x in t.findings_of(r.json())
          if x["code"] in ("load-failed", "runner-changed")]
    t.eq(sorted(fs), [("load-failed", "qwen3:8b"), ("runner-changed", "qwen3.5:4b")],
         "check: the latest load failed; a tag that last ran on MLX selects llama.cpp here", fs)
    msgs = {x["code"]: x["message"] for x in t.findings_of(r.json())}
    t.contains(msgs.get("load-failed", ""), "llama runner process has terminated: exit status 2",
               "load-failed carries the server's reason")
    t.exit_code(r, 0, "load-failed is a warning: exit 0 by default")
    r = run("--store", s.root, "--platform", "linux/amd64", "check", "--fail-on", "warning")
    t.exit_code(r, 1, "and exit 1 with --fail-on warning")
    r = run("--store", s.root, "--platform", "darwin/arm64", "check", "--format", "json")
    t.eq([x["code"] for x in t.findings_of(r.json()) if x["code"] == "runner-changed"], [],
         "on darwin/arm64 the tag selects MLX, as it last ran")
    s2, _ = build()
    r = run("--store", s2.root, "check", "--format", "json")
    t.eq([x["code"] for x in t.findings_of(r.json()) if x["code"] in ("load-failed", "runner-changed")], [],
         "no logs: no log findings")
    r = run("--store", s2.root, "rm", "--unused-for", "90d")
    t.exit_code(r, 8, "no logs: --unused-for refuses")
    t.contains(r.err, "nothing is taken as unused", "and says why")
    t.eq(r.out, "", "no plan")
    r = run("--store", s2.root, "list")
    t.not_contains(r.out.splitlines()[0], "LAST USED", "no logs: no LAST USED column")

def machine(tag, libs=(), meminfo=None):
    """A fake machine root: MLX runtimes at libs (paths under it), a meminfo."""
    root = t.tempdir(tag)
    for rel in libs:
        p = os.path.join(root, rel.lstrip("/"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb").close()
    if meminfo:
        os.makedirs(os.path.join(root, "proc"), exist_ok=True)
        with open(os.path.join(root, "proc", "meminfo"), "w") as fh:
            fh.write("MemTotal:       %d kB\nMemFree:        1 kB\nMemAvailable:   %d kB\n" % meminfo)
    return root


with t.guard("what can run here: MLX runtime, fit check, no-runtime-for-model"):
    s, f = build()
    mcfg, mlayers = oa.tiny_mlx_model(s)
    s.add_manifest("tiny-mlx:int4", mcfg, mlayers)
    weights = sum(l["size"] for l in mlayers if l["mediaType"].endswith("image.tensor"))
    GiB = 1 << 20  # meminfo counts kB

    def here(root, name, *extra, env=None):
        e = {"OLLAMA_AUDIT_SYSROOT": root}
        e.update(env or {})
        r = t.run("--store", s.root, "show", name, "--format", "json", *extra, env=e)
        return r.json()["runs_here"]

    bare = machine("bare")
    rh = here(bare, "tiny-mlx:int4")
    t.eq((rh["engine"], rh["can_run"], rh["mlx_runtime"]), ("mlx", False, None), "no MLX runtime: cannot run")
    r = t.run("--store", s.root, "show", "tiny-mlx:int4", env={"OLLAMA_AUDIT_SYSROOT": bare})
    t.contains(r.out, "cannot run", "show says so in its paragraph")
    t.contains(r.out, bare + "/usr/lib/ollama", "and where it looked")
    r = t.run("--store", s.root, "check", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": bare})
    t.eq([x["model"] for x in t.findings_of(r.json()) if x["code"] == "no-runtime-for-model"], ["tiny-mlx:int4"],
         "check: no-runtime-for-model for the MLX model only")

    cuda = machine("cuda", libs=["/usr/lib/ollama/mlx_cuda_v12/libmlxc.so", "/usr/lib/ollama/mlx_cuda_v13/libmlxc.so",
                                 "/usr/lib/ollama/libggml-base.so"], meminfo=(32 * GiB, 25 * GiB))
    rh = here(cuda, "tiny-mlx:int4")
    t.eq((rh["can_run"], rh["mlx_runtime"], rh["fit"]),
         (True, cuda + "/usr/lib/ollama/mlx_cuda_v13/libmlxc.so", "fits"), "the newest mlx_* runtime; it fits")
    t.eq((rh["weights_bytes"], rh["reserve_bytes"], rh["memory_available"]), (weights, 457 << 20, 25 << 30),
         "the tensor bytes against free memory less the 457 MiB reserve")
    rh = here(cuda, "tiny-mlx:int4", env={"OLLAMA_LLM_LIBRARY": "mlx_cuda_v12"})
    t.eq(rh["mlx_runtime"], cuda + "/usr/lib/ollama/mlx_cuda_v12/libmlxc.so", "OLLAMA_LLM_LIBRARY picks the variant")
    rh = here(cuda, "tiny-mlx:int4", env={"OLLAMA_GPU_OVERHEAD": str(1 << 30)})
    t.eq(rh["reserve_bytes"], (457 << 20) + (1 << 30), "OLLAMA_GPU_OVERHEAD adds to the reserve")
    r = t.run("--store", s.root, "check", "--format", "json", env={"OLLAMA_AUDIT_SYSROOT": cuda})
    t.eq([x for x in t.findings_of(r.json()) if x["code"] == "no-runtime-for-model"], [],
         "with a runtime: no finding")
    # Free memory minus the reserve below the weights, total above: tight; total below: won't fit.
    tight = machine("tight", libs=["/usr/local/lib/ollama/libmlxc.so"], meminfo=(460 * 1024, 300 * 1024))
    t.eq(here(tight, "tiny-mlx:int4")["fit"], "tight", "fits total memory, not what is free now")
    small = machine("small", libs=["/usr/local/lib/ollama/libmlxc.so"], meminfo=(400 * 1024, 300 * 1024))
    t.eq(here(small, "tiny-mlx:int4")["fit"], "won't fit", "not even total memory")
    r = t.run("--store", s.root, "show", "tiny-mlx:int4", env={"OLLAMA_AUDIT_SYSROOT": small})
    t.contains(r.out, "won't fit", "show says it")
    rh = here(bare, "qwen3:8b")
    t.eq((rh["engine"], rh["can_run"], rh["fit"]), ("llamacpp", True, "unknown"),
         "GGUF runs on llama.cpp anywhere; another root without meminfo: fit unknown")
    rh = here(cuda, "qwen3:8b")
    t.eq(rh["fit"], "fits", "GGUF weights against memory")

with t.guard("no logs, and garbage"):
    s, f = build()
    r = hist(s)
    t.exit_code(r, 0, "no logs is not an error")
    t.contains(r.out, "no server logs found", "says so")
    d = t.tempdir("garbage")
    g = os.path.join(d, "junk.log")
    with open(g, "wb") as fh:
        fh.write(b"x" * (3 << 20) + b"\n" + bytes(range(256)) * 80 + b"time=" + b"\"" * 5000 + b"\ntime=")
    r = hist(s, "--log", g, "--format", "json")
    t.exit_code(r, 0, "a file of garbage reads without a crash")
    w = r.json()["stores"][0]["warnings"]
    t.contains(w[0], "junk.log:1: a line longer than 1 MiB", "an over-long line warned")
    t.contains(w[1], "junk.log:2: binary data", "binary bytes warned")
    t.eq(len(w), 50, "at most 50 warnings kept")
    t.contains(r.err, "more lines could not be read", "the rest counted on stderr")

with t.guard("history: the failure reason last, cut on a terminal; no row padded to the longest reason"):
    s, f = build()
    long_reason = ("model requires 20.1 GiB but only 12.0 GiB are available" + " and then some more words" * 7)
    lines = era040(f)
    lines[-1] = lines[-1].replace("model requires 20.1 GiB but only 12.0 GiB are available", long_reason)
    write(os.path.join(os.path.dirname(s.root), "logs", "server.log"), lines)
    r = hist(s)
    t.exit_code(r, 0, "history piped")
    head = next(ln for ln in r.out.splitlines() if ln.startswith("TIME"))
    t.eq(head.split()[-1], "RESULT", "RESULT is the last column", head)
    t.contains(r.out, long_reason.strip(), "piped: the whole reason")
    rows = [ln for ln in r.out.splitlines() if ln[:4].isdigit()]
    t.ok(rows and all(not ln.endswith(" ") for ln in rows), "piped: no row padded after its reason", r.out)
    t.ok(all(len(ln) < 200 for ln in rows if "failed" not in ln),
         "a row without a failure is not padded to the longest reason", r.out)
    for cols in (60, 80, 100, 140):
        r = t.run_tty(("--store", s.root, "history"), None, stdout_tty=True, cols=cols, env=NO_SYSTEM)
        t.exit_code(r, 0, "history on a %d-column terminal" % cols)
        table = [ln for ln in r.out.splitlines() if ln.startswith("TIME") or ln[:4].isdigit()]
        t.ok(table and all(len(ln) <= cols for ln in table), "%d columns: no table line wider" % cols, r.out)
        t.ok(any("\u2026" in ln and "failed: " in ln for ln in table),
             "%d columns: the long reason is cut with an ellipsis" % cols, r.out)

with t.guard("the owner's ~/.ollama/logs feed only the store that server served"):
    s, f = build()
    other, _ = build()
    # a fake machine (its journal, its passwd) where the tests' user lives in /home/tester
    sysroot = t.tempdir("owner-logs")
    os.makedirs(os.path.join(sysroot, "etc"))
    with open(os.path.join(sysroot, "etc", "passwd"), "w") as fh:
        fh.write("tester:x:%d:%d::/home/tester:/bin/sh\n" % (os.getuid(), os.getgid()))
    home = os.path.join(sysroot, "home", "tester")
    me = {"OLLAMA_AUDIT_SYSROOT": sysroot}
    logs = os.path.join(home, ".ollama", "logs")
    try:
        # the server of `other` logged its loads; s is a copy with the same blobs
        write(os.path.join(logs, "server.log"), [x.replace("/root/.ollama/models", other.root) for x in era2025(f)])
        write(os.path.join(logs, "server-1.log"), era040(f))   # another machine's paths: no store of ours
        for store, want in ((s, False), (other, True)):
            r = run("--store", store.root, "list", "--format", "json", env=me)
            t.exit_code(r, 0, "list")
            st = r.json()["stores"][0]
            got = [m.get("last_used") for m in st["models"] if "last_used" in m]
            if want:
                t.eq(st.get("log_sources"), [os.path.join(logs, "server.log")],
                     "the store the log shows: its log read, and named", st.get("log_sources"))
                t.ok(any(got), "its LAST USED comes from it", st["models"])
            else:
                t.ok("log_sources" not in st and not got, "a store the logs do not show gets no LAST USED", st)
            r = run("--store", store.root, "list", env=me)
            t.eq("LAST USED" in r.out, want, "list table: LAST USED %s" % ("shown" if want else "not shown"), r.out)
            if want:
                t.contains(r.err, "LAST USED from " + os.path.join(logs, "server.log"), "stderr names the log")
            r = run("--store", store.root, "history", "--format", "json", env=me)
            t.eq(r.json()["stores"][0]["sources"], [os.path.join(logs, "server.log")] if want else [],
                 "history reads the same")
            r = run("--store", store.root, "history", env=me)
            if want:
                t.contains(r.err, "read " + os.path.join(logs, "server.log"), "history's table names the log")
    finally:
        shutil.rmtree(os.path.join(home, ".ollama"), ignore_errors=True)

with t.guard("a server.log in the home the tests run with changes nothing for the demo store"):
    s, f = build()
    logs = os.path.join(t.fake_home(), ".ollama", "logs")
    try:
        write(os.path.join(logs, "server.log"), era040(f) + [x.replace("/root/.ollama/models", s.root)
                                                            for x in era2025(f)])
        demo = t.copy_demo_store("demo-logs")
        for args in (("list",), ("du",), ("list", "--format", "csv")):
            r = t.run("--store", demo.root, *args)   # the default fakes: HOME, passwd
            t.exit_code(r, 0, " ".join(args))
            t.ok("LAST USED" not in r.out and "last_used" not in r.out and "never" not in r.out,
                 "%s: no LAST USED from a log of another store" % " ".join(args), r.out)
        r = t.run("--store", s.root, "list", "--format", "json")
        t.ok(r.json()["stores"][0].get("log_sources") == [os.path.join(logs, "server.log")],
             "the store that log shows does read it", r.out)
    finally:
        shutil.rmtree(os.path.join(t.fake_home(), ".ollama"), ignore_errors=True)

with t.guard("--unused-for: a model pulled within the duration is not unused, loaded or not"):
    s, f = build()
    write(os.path.join(os.path.dirname(s.root), "logs", "server.log"), era2025(f) + era040(f))
    import time
    s.age_all(90 * 86400)                          # everything pulled 90 days ago...
    fresh = t.add_gguf_model(s, "fresh:latest", seed="fresh")   # ...but this one just now, never loaded
    r = run("--store", s.root, "rm", "--unused-for", "30d", "--format", "json")
    t.exit_code(r, 0, "rm --unused-for 30d")
    planned = [e.get("model") for e in r.json()["stores"][0]["entries"]]
    t.ok("fresh:latest" not in planned, "a model pulled two minutes ago is not planned", planned)
    t.ok("never:used" in planned, "an old model never loaded is", planned)
    r = run("--store", s.root, "list", "--unused-for", "30d", "-q")
    t.ok("fresh:latest" not in r.out.split(), "list --unused-for leaves out the fresh pull", r.out)
    t.ok("never:used" in r.out.split(), "and lists the old unused one", r.out)
    r = run("--store", s.root, "du", "--unused-for", "30d", "-q")
    t.ok("fresh:latest" not in r.out.split(), "du --unused-for too", r.out)

with t.guard("text gives times to the second; json keeps the log's nanoseconds"):
    s, f = build()
    logs = os.path.join(os.path.dirname(s.root), "logs")
    p = "/root/.ollama/models/blobs/sha256-"
    write(os.path.join(logs, "server.log"), [
        "time=2026-07-15T02:26:38.999123456Z level=INFO source=routes.go:1277 "
        'msg="Listening on [::]:11434 (version 0.6.0)"',
        "time=2026-07-15T03:00:00.250000000Z level=INFO source=server.go:380 "
        'msg="starting llama server" cmd="/usr/bin/ollama runner --model ' + p + f["qwen3_blob"] + ' --port 1"',
        "time=2026-07-15T03:00:01.500000000Z level=ERROR source=sched.go:455 "
        'msg="error loading llama server" error="llama runner process has terminated: exit status 2"',
        "time=2026-12-06T05:14:48.207000000Z level=INFO source=routes.go:1277 msg=\"still here\""])
    nanos = re.compile(r"\d\d:\d\d:\d\d\.\d+")
    for args in (["list", "--unused-for", "1d"], ["du", "--unused-for", "1d"], ["history"], ["check"],
                 ["rm", "--unused-for", "1d"], ["show", "qwen3:8b"]):
        r = run("--store", s.root, *args)
        t.ok(not nanos.search(r.out + r.err), "%s: no fraction of a second in its text" % " ".join(args),
             [ln for ln in (r.out + r.err).splitlines() if nanos.search(ln)])
    r = run("--store", s.root, "list", "--unused-for", "1d")
    t.contains(r.err, "the logs go back to 2026-07-15T02:26:38Z (newest line 2026-12-06T05:14:48Z)",
               "the horizon of the logs, to the second")
    r = run("--store", s.root, "check")
    t.contains(r.out, "(2026-07-15T03:00:00Z, llamacpp", "the failed load's time in check's text, to the second")
    doc = run("--store", s.root, "history", "--format", "json").json()
    t.contains(json.dumps(doc), "2026-07-15T03:00:00.25", "history's json keeps the fraction (RFC 3339)")

t.done()
