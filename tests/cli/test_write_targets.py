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


def kind(path):
    st = os.lstat(path)
    for name, test in (("symlink", stat.S_ISLNK), ("fifo", stat.S_ISFIFO), ("chardev", stat.S_ISCHR),
                       ("dir", stat.S_ISDIR), ("file", stat.S_ISREG)):
        if test(st.st_mode):
            return name
    return "other"


def read_fifo(path, sink):
    """A reader for a FIFO, so the writer's open does not block."""
    def run():
        with open(path, "rb") as f:
            sink.append(f.read())
    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


def no_temps(d):
    left = [n for n in os.listdir(d) if n.endswith(".tmp")]
    t.eq(left, [], "no temporary file left in %s" % d)


with t.guard("--output, --plan and --cache never replace what is not a regular file"):
    s, info = t.clean_store("wt-kinds")
    d = t.tempdir("wt-out")
    # a FIFO is written through, directly or by a symlink (/dev/stdout on a
    # pipe): the reader gets the output, the FIFO and the link stay
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    link_fifo = os.path.join(d, "to-fifo")
    os.symlink(fifo, link_fifo)
    for target, want in ((fifo, "fifo"), (link_fifo, "symlink")):
        got = []
        th = read_fifo(fifo, got)
        r = t.audit(s.root, "check", "--format", "json", "--output", target)
        th.join(20)
        t.exit_code(r, 0, "check --output %s" % want)
        t.eq(kind(target), want, "the %s is still a %s" % (want, want))
        t.contains(b"".join(got).decode(), "ollama-audit.check/", "the reader got the report (%s)" % want)
    # a symlink to a regular file is refused: neither it nor its target changes
    target = os.path.join(d, "target.json")
    with open(target, "w") as f:
        f.write("old\n")
    link = os.path.join(d, "link.json")
    os.symlink(target, link)
    for args in (["check", "--output", link], ["prune", "--plan", link],
                 ["verify", "--cache", link]):
        r = t.audit(s.root, *args)
        t.ok(r.code & 8, "%s %s symlink: refused (exit %s)" % (args[0], args[1], r.code), r.describe())
        t.contains(r.err, "symlink", "%s: the error says it is a symlink" % args[1])
        t.eq(kind(link), "symlink", "%s: the symlink stays" % args[1])
        t.eq(open(target).read(), "old\n", "%s: its target is unchanged" % args[1])
    # a directory is refused
    sub = os.path.join(d, "adir")
    os.mkdir(sub)
    r = t.audit(s.root, "list", "--output", sub)
    t.exit_code(r, 8, "--output DIR is refused")
    t.eq(kind(sub), "dir", "the directory stays")
    # a regular file is still replaced atomically
    reg = os.path.join(d, "report.json")
    with open(reg, "w") as f:
        f.write("old\n")
    r = t.audit(s.root, "check", "--format", "json", "--output", reg)
    t.exit_code(r, 0, "--output FILE")
    t.contains(open(reg).read(), "ollama-audit.check/", "the file holds the report")
    no_temps(d)
    if not t.IS_ROOT:
        t.skip("not root: character devices need mknod")
    else:
        null = os.path.join(d, "null")
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        for args in (["check", "--output", null], ["prune", "--plan", null],
                     ["verify", "--cache", null], ["list", "--format", "prometheus", "--output", null]):
            r = t.audit(s.root, *args)
            t.eq(kind(null), "chardev", "%s %s: the device node stays a device node" % (args[0], args[-2]))
        r = t.audit(s.root, "check", "--output", null)
        t.exit_code(r, 0, "check --output to a device node works")
        no_temps(d)

with t.guard("--output, --plan and --cache never write into a store"):
    s, info = t.clean_store("wt-store")
    other, oinfo = t.clean_store("wt-other", name="other:latest")
    before = t.snapshot(s.root)
    before_other = t.snapshot(other.root)
    weights = s.blob_path(info["layers"][0]["digest"])
    outside = t.tempdir("wt-link")
    into_blobs = os.path.join(outside, "blobs-link")
    os.symlink(s.blobs, into_blobs)
    for args in (["list", "--output", info["path"]],
                 ["check", "--output", weights],
                 ["check", "--output", os.path.join(s.root, "report.txt")],
                 ["check", "--output", os.path.join(into_blobs, "new.txt")],
                 ["check", "--output", os.path.join(s.manifests, "no", "such", "dir", "x")],
                 ["prune", "--plan", os.path.join(s.root, "plan.json")],
                 ["rm", "tiny", "--plan", os.path.join(s.blobs, "plan.json")],
                 ["verify", "--cache", os.path.join(s.blobs, "cache.json")]):
        r = t.audit(s.root, *args)
        t.exit_code(r, 16, "%s %s inside the store is refused" % (args[0], args[-2]))
        t.contains(r.err, "the tool never writes to a store", "%s: says why" % args[-2])
    r = t.run("--store", other.root, "--store", s.root, "check", "--output", os.path.join(s.blobs, "x"))
    t.exit_code(r, 16, "--output into the second --store is refused")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "the store is untouched")
    t.eq(t.diff_snapshots(before_other, t.snapshot(other.root)), [], "the other store is untouched")

with t.guard("--output over an existing file keeps its mode (and, as root, its owner)"):
    s, info = t.clean_store("wt-mode")
    d = t.tempdir("wt-mode-out")
    out = os.path.join(d, "report.txt")
    with open(out, "w") as f:
        f.write("old\n")
    os.chmod(out, 0o600)
    owner = (12345, 12346) if t.IS_ROOT else (os.getuid(), os.getgid())
    if t.IS_ROOT:
        os.chown(out, *owner)
    r = t.audit(s.root, "check", "--output", out)
    t.exit_code(r, 0, "check --output over a 0600 file")
    st = os.stat(out)
    t.eq(oct(stat.S_IMODE(st.st_mode)), oct(0o600), "the report stays 0600")
    t.eq((st.st_uid, st.st_gid), owner, "the report keeps its owner and group")
    t.contains(open(out).read(), "1 model", "the report was written")


def run_with_bind(src, dst, *args):
    """Run the binary in a mount namespace of its own where src is bind
    mounted on dst (unshare -m as root, unshare -rm, a user namespace, as a
    normal user). (Result, None) or (None, why it cannot)."""
    ns = ["unshare", "-m"] if t.IS_ROOT else ["unshare", "-rm"]
    try:
        probe = subprocess.run(ns + ["sh", "-c", 'mount --bind "$1" "$2"', "sh", src, dst],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    except OSError as e:
        return None, "no unshare: %s" % e
    if probe.returncode != 0:
        return None, "cannot bind mount in a namespace of its own: %s" % probe.stderr.decode(errors="replace").strip()
    env = dict(os.environ, HOME=t.tempdir("bind-home"), NO_COLOR="1")
    env["XDG_CACHE_HOME"] = env["HOME"]
    env.pop("OLLAMA_MODELS", None)
    argv = ns + ["sh", "-c", 'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", src, dst, t.BIN] + list(args)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
    return t.Result(args, p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")), None


with t.guard("a bind mount or a symlink of a directory deep in the store is inside the store"):
    s, info = t.clean_store("wt-bind")
    before = t.snapshot(s.root)
    tagdir = os.path.dirname(info["path"])  # manifests/registry.ollama.ai/library/tiny
    outside = t.tempdir("wt-bind-out")
    # a symlink to a directory four levels into manifests/
    link = os.path.join(outside, "tags-link")
    os.symlink(tagdir, link)
    r = t.audit(s.root, "check", "--output", os.path.join(link, "newtag"))
    t.exit_code(r, 16, "--output through a symlink to a tag directory is refused")
    # the same directory, and blobs/, bind mounted elsewhere
    for src, opt in ((tagdir, ["check", "--output"]), (s.blobs, ["prune", "--plan"]),
                     (tagdir, ["verify", "--cache"]), (s.blobs, ["list", "--output"])):
        mnt = t.tempdir("wt-bind-mnt")
        r, why = run_with_bind(src, mnt, "--store", s.root, *opt, os.path.join(mnt, "newtag"))
        if why:
            t.skip("bind mounts: %s" % why)
            break
        t.exit_code(r, 16, "%s %s through a bind mount of %s is refused" % (opt[0], opt[1], t.rel(s, src)))
        t.contains(r.err, "the tool never writes to a store", "%s %s: says why" % tuple(opt))
    s.add_blob(b"nothing references this", mtime=1e9)  # something for prune to move
    before = t.snapshot(s.root)
    mnt = t.tempdir("wt-bind-q")
    r, why = run_with_bind(tagdir, mnt, "--store", s.root, "prune", "--apply", "--yes",
                           "--quarantine", os.path.join(mnt, "q"))
    if not why:
        t.ne(r.code, 0, "--quarantine in a bind mount of a tag directory is refused", r.describe())
        t.contains(r.err, "store", "--quarantine: says why")
    t.eq(t.diff_snapshots(before, t.snapshot(s.root)), [], "the store is untouched")

with t.guard("quarantine on another filesystem leaves nothing behind"):
    mnt, why = tmpfs()
    if not mnt:
        t.skip("quarantine on another filesystem: %s" % why)
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
