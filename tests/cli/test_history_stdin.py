#!/usr/bin/env python3
"""`history --log -` reads standard input in bounded memory: a log of
96 MiB through a pipe needs no more than a few MiB, with one store or two
(the second reads a copy the first made on disk, not in memory). Both logs
are larger than the bound, so a program that held its input would fail."""

import os
import threading
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

HEX = "ab" * 32
LOAD = ('time=2026-01-02T03:04:05.000Z level=INFO source=server.go:100 msg="starting llama server" '
        'cmd="/usr/bin/ollama runner --model /x/blobs/sha256-%s --port 1"\n' % HEX)
FILLER = 'time=2026-01-02T03:04:05.000Z level=INFO source=x.go:1 msg="%s"\n' % ("y" * 180)
BLOCK = (LOAD + FILLER * 99).encode()
MIB = 1024 * 1024
LIMIT_MIB = 64


def pipe_log(args, mib):
    """Run the binary with a generated log of `mib` MiB on stdin; returns
    (exit code, stdout, its peak RSS in MiB, loads written)."""
    blocks = mib * MIB // len(BLOCK)
    env = dict(os.environ, HOME=t.tempdir("hs-home"), NO_COLOR="1")
    env["XDG_CACHE_HOME"] = env["HOME"]
    env.pop("OLLAMA_MODELS", None)
    # An ASan build keeps up to 256 MiB of freed memory in quarantine: the
    # bound is about what the program holds, so the quarantine is off.
    env["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS", "detect_leaks=1"),
                                                 "quarantine_size_mb=0"]))
    p = subprocess.Popen([t.BIN] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env)
    out = []
    th = threading.Thread(target=lambda: out.append(p.stdout.read()))
    th.start()
    try:
        for _ in range(blocks):
            p.stdin.write(BLOCK)
        p.stdin.close()
    except BrokenPipeError:
        pass
    # wait4: the resource usage of this child alone (ru_maxrss in KiB)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    th.join()
    code, peak = p.returncode, usage.ru_maxrss
    return code, out[0].decode(errors="replace"), peak / 1024, blocks


with t.guard("history --log - streams 96 MiB in bounded memory"):
    s1, _ = t.clean_store("hs-a")
    code, out, peak, blocks = pipe_log(["--store", s1.root, "history", "--log", "-"], 96)
    t.eq(code, 0, "history --log - exits 0")
    t.contains(out, "%d loads in 1 log source" % blocks, "every load in the stream is counted")
    t.ok(peak < LIMIT_MIB, "peak RSS %.0f MiB stays under %d MiB for a 96 MiB log" % (peak, LIMIT_MIB))

with t.guard("history --log - of two stores: each sees the whole stream, memory bounded"):
    s1, _ = t.clean_store("hs-b")
    s2, _ = t.clean_store("hs-c", name="other:latest")
    code, out, peak, blocks = pipe_log(["--store", s1.root, "--store", s2.root, "history", "--log", "-"], 80)
    t.eq(code, 0, "history of two stores exits 0")
    t.eq(out.count("%d loads in 1 log source" % blocks), 2, "both stores read every load", out[:300])
    t.ok(peak < LIMIT_MIB, "peak RSS %.0f MiB stays under %d MiB for an 80 MiB log" % (peak, LIMIT_MIB))

t.done()
