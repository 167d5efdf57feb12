#!/usr/bin/env python3
"""A store that cannot be read sets exit bit 8 (operational error) for every
command, as the man page's EXIT STATUS says: not only list, check, du and
verify, but prune, dedupe and history too, with --store or --all-users."""

import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()


def unreadable_store(tag):
    """A store whose manifests/ the runner of the binary cannot read, and
    how to run the binary: (store, run keyword arguments) or (None, why)."""
    s, _ = t.clean_store(tag)
    if t.IS_ROOT:
        why = t.bin_for_others()[2]
        if why:
            return None, why
        os.chmod(s.manifests, 0o700)  # root's; the binary runs as nobody
        return s, {"as_nobody": True}
    os.chmod(s.manifests, 0)
    return s, {}


with t.guard("an unreadable store: exit 8 from every command"):
    s, kw = unreadable_store("exit-unreadable")
    if s is None:
        t.skip("cannot run as another user: %s" % kw)
    else:
        other, _ = t.clean_store("exit-other", name="other:latest")
        sysroot = t.tempdir("exit-sysroot")
        env = {"OLLAMA_AUDIT_SYSROOT": sysroot, "OLLAMA_AUDIT_PASSWD": t.passwd_with("someone")}
        runs = [["--store", s.root, cmd] for cmd in ("list", "check", "du", "verify", "prune", "history")]
        runs += [["--store", s.root, "prune", "--format", "json"],
                 ["--store", s.root, "--store", other.root, "dedupe"],
                 ["--store", s.root, "history", "--all-users"],
                 ["--store", s.root, "prune", "--all-users"]]
        try:
            for args in runs:
                r = t.run(*args, env=env, **kw)
                t.ok(r.code is not None and r.code >= 0 and r.code & 8,
                     "%s: exit status has bit 8 (got %s)" % (" ".join(args[2:]), r.code), r.err[-400:])
        finally:
            os.chmod(s.manifests, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)

t.done()
