#!/usr/bin/env python3
"""The harness tells skipped from passed: a script whose every check was
skipped (with its reason) exits 77, which ctest reports as skipped because
every scripted test of the build is registered with SKIP_RETURN_CODE 77; a
script with one check that ran exits 0, one failure 1."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()


def outcome(body):
    code = "import clitest as t\n%s\nt.done()\n" % body
    p = subprocess.run([sys.executable, "-c", code], cwd=t.HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return p.returncode, p.stdout.decode()


with t.guard("exit status"):
    code, out = outcome('t.section("zsh"); t.skip("zsh is not installed")')
    t.eq(code, 77, "every check skipped: exit 77", out)
    t.contains(out, "SKIP: [zsh] zsh is not installed", "the reason is said")
    code, out = outcome('t.skip("no zsh"); t.ok(True, "x")')
    t.eq(code, 0, "one check ran and passed: exit 0", out)
    code, out = outcome('t.skip("no zsh"); t.ok(False, "x")')
    t.eq(code, 1, "a failure: exit 1", out)

with t.guard("under the sanitizers: one refusal per command, a leak check per command, format and --apply"):
    body = """
import os, sys
t.SANITIZED = True
seen = [t.first_under_sanitizer("probe", c) for c in ("list", "list", "du")]
leak = [t._leak_check_this_run(a) for a in (["--store", "s", "list"], ["--store", "t", "list"],
        ["list", "--format", "json"], ["list", "--format=json"], ["prune", "--apply"], ["prune"], ["prune"])]
print(json.dumps([seen, leak]))
"""
    code, out = outcome("import json\n" + body)
    t.contains(out.splitlines(), "[[true, false, true], [true, false, true, false, true, true, false]]",
         "the first of each kind runs, the rest are sampled", out)
    code, out = outcome("import json\n" + body.replace("t.SANITIZED = True", "t.SANITIZED = False"))
    t.contains(out.splitlines(), "[[true, true, true], [true, true, true, true, true, true, true]]",
         "outside the sanitizer tree, every run is whole", out)

with t.guard("ctest"):
    build = os.path.dirname(t.BIN)
    p = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        t.skip("ctest --show-only=json-v1 does not run in %s: %s" % (build, p.stderr.decode()[:200]))
    else:
        tests = json.loads(p.stdout)["tests"]
        scripted = [x for x in tests if x["name"].split(".")[0] in ("cli", "install", "package")]
        t.ok(len(scripted) > 10, "the scripted tests are registered (%d)" % len(scripted))
        for x in scripted:
            props = {q["name"]: q["value"] for q in x.get("properties", [])}
            t.eq(str(props.get("SKIP_RETURN_CODE")), "77", "%s: SKIP_RETURN_CODE" % x["name"])

t.done()
