#!/usr/bin/env python3
"""What the tool writes, and where (issue 11, defects 5, 6 and 11).

--output, prune/rm --plan FILE (dry run) and verify --cache never replace a
device node, a FIFO or a symlink with a regular file; never write inside a
store on the command line; a quarantine refused for being on another
filesystem leaves nothing behind."""

import os
import stat
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clitest as t  # noqa: E402

t.check_binary()


def tmpfs():
    """As root, a small tmpfs: another filesystem. (mount point, reason)."""
    if not t.IS_ROOT:
        return None, "not root"
    mnt = t.tempdir("tmpfs")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return None, "mount -t tmpfs failed: " + r.stderr.decode(errors="replace").strip()
    return mnt, None


with t.guard("quarantine on another filesystem leaves nothing behind"):
    mnt, why = tmpfs()
    if not mnt:
        print("skipped: quarantine on another filesystem: %s" % why)
    else:
        try:
            s, info = t.clean_store("q-xdev")
            s.write_raw("blobs/sha256-" + "ab" * 32 + "-partial", b"x" * 100)
            s.age_all(7200)
            before = t.snapshot(s.root)
            q = os.path.join(mnt, "quarantine")
            r = t.audit(s.root, "prune", "--apply", "--yes", "--quarantine", q)
            t.exit_code(r, 8, "a quarantine on another filesystem is refused")
            t.contains(r.err, "different filesystem", "the refusal says why")
            t.ok(not os.path.exists(q), "no quarantine directory left behind",
                 os.listdir(mnt))
            nested = os.path.join(mnt, "q2")
            r = t.audit(s.root, "rm", "tiny", "--apply", "--yes", "--quarantine", nested)
            t.exit_code(r, 8, "rm: refused too")
            t.ok(not os.path.exists(nested), "rm: no quarantine directory left behind")
            t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "the store is untouched")
        finally:
            subprocess.run(["umount", mnt])

t.done()
