#!/usr/bin/env python3
"""Every command refuses an option it does not take (exit 16, nothing on
stdout, a message naming the option and the command), instead of ignoring
it; and still takes each option its help lists."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()

COMMANDS = ("list", "show", "check", "verify", "du", "prune", "rm", "restore", "stores", "dedupe",
            "history")
# An option with a harmless argument, for the commands that do not take it.
PROBES = {"--apply": [], "--jobs": ["2"], "--plan": ["p.json"], "--tensors": [], "--duplicates": [],
          "--hardlink": [], "--since": ["1d"], "--quarantine": ["q"], "--cache": ["c.json"],
          "--what": ["all"], "--all": [], "-q": [], "--quiet": []}

# The refusals the first section saw, by (command, option, argument): the
# third asks the same question of the same command line on a store alike
# (a clean one; a refused option is refused before any store is read) and
# reads the answer from here instead of starting the binary again.
refusals = {}

with t.guard("an option a command does not take is a usage error"):
    s, info = t.clean_store("options")
    for cmd in COMMANDS:
        h = t.run(cmd, "--help").out
        for opt, arg in PROBES.items():
            if re.search(r"(^|[\s\[])%s\b" % re.escape(opt), h):
                continue  # the command takes it
            if not t.first_under_sanitizer("probe", cmd):
                continue
            r = t.audit(s.root, cmd, opt, *arg)
            refusals[(cmd, opt, tuple(arg))] = r
            t.exit_code(r, 16, "%s %s" % (cmd, opt))
            t.eq(r.out, "", "%s %s prints nothing on stdout" % (cmd, opt))
            name = "quiet" if opt == "-q" else opt.lstrip("-")
            t.contains(r.err, "--%s is not an option of %s" % (name, cmd), "%s %s names both" % (cmd, opt))

with t.guard("the options a command's help lists are taken"):
    s, info = t.clean_store("options-ok")
    for args in (["list", "--platform", "linux/amd64"], ["show", "tiny", "--tensors"],
                 ["verify", "--jobs", "2", "--quick"], ["du", "--platform", "linux/amd64"],
                 ["prune", "--what", "all", "--min-age", "0"], ["rm", "tiny", "--min-age", "0"],
                 ["stores", "--all"], ["check", "--platform", "darwin/arm64"]):
        env = {"OLLAMA_AUDIT_SYSROOT": t.tempdir("sysroot")} if args[0] in ("stores", "du") else None
        r = t.audit(s.root, *args, env=env)
        t.ok(r.code != 16, " ".join(args) + " is accepted", r.describe())

with t.guard("each command's --help names exactly the options it takes"):
    s, info = t.clean_store("options-help")
    # Every long option of the program, with a harmless argument where one is needed.
    ALL = {"--store": None, "--format": ["table"], "--units": ["si"], "--fail-on": ["error"],
           "--color": ["never"], "--output": None, "--platform": ["linux/amd64"], "--log": ["/dev/null"],
           "--root": None, "--all-users": None, "--unused-for": ["1d"], "--quiet": [], "--sort": ["name"],
           "--no-header": [], "--tensors": [], "--all": [], "--changed": [], "--quick": [], "--jobs": ["2"],
           "--max-duration": ["1h"], "--cache": None, "--progress": [], "--no-progress": [],
           "--duplicates": [], "--apply": [], "--yes": None, "--plan": None, "--quarantine": None,
           "--what": ["all"], "--min-age": ["1h"], "--force": None, "--predict-server": [],
           "--hardlink": [], "--since": ["1d"], "--until": ["1d"]}
    for cmd in COMMANDS:
        h = t.run(cmd, "--help").out
        m = re.search(r"Options it takes:(.*?)\.\n", h, re.S)
        if not t.ok(m, "%s --help lists the options it takes" % cmd, h[-400:]):
            continue
        listed = set(re.findall(r"--[a-z-]+", m.group(1)))
        # The listed options all on one command line first: a run without
        # a usage error (no bit 16) took every one of them. When that run is
        # a usage error (two of them do not combine, the command wants an
        # operand), each is asked alone, as below.
        taken = [(opt, arg) for opt, arg in ALL.items() if arg is not None and opt in listed]
        together = t.audit(s.root, cmd, *[a for opt, arg in taken for a in [opt] + arg])
        for opt, arg in ALL.items():
            if arg is None:
                continue  # needs a real file or would act: covered elsewhere
            if opt not in listed and not t.first_under_sanitizer("unlisted", cmd):
                continue
            if opt in listed and not together.code & 16:
                r, refused = together, False
            else:
                r = refusals.get((cmd, opt, tuple(arg))) or t.audit(s.root, cmd, opt, *arg)
                refused = r.code & 16 and "is not an option of" in r.err
            t.eq(not refused, opt in listed, "%s %s: taken exactly when --help lists it" % (cmd, opt),
                 r.describe())


t.done()
