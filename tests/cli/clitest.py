"""clitest: a tiny harness for the ollama-audit CLI tests (Python 3 stdlib only).

Environment (set by ctest, see tests/CMakeLists.txt):
    OA_BIN         the ollama-audit binary (default: build-cli/ollama-audit)
    OA_SOURCE_DIR  the source tree (default: two levels above this file)
    OA_SHARED_DIR  the shared dir with spec/ and reference/ (default: ../shared)

Usage in a test script:

    import clitest as t
    r = t.run("--store", root, "list", "--format", "json")
    t.eq(r.code, 0, "list exits 0")
    doc = r.json()
    ...
    t.done()            # prints "N passed, M failed" and exits non-zero on failure

Every assertion records a pass or a failure (with a clear message) and goes on.
"""

import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("OA_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
SHARED_DIR = os.environ.get("OA_SHARED_DIR") or os.path.abspath(os.path.join(SOURCE_DIR, "..", "shared"))
BIN = os.path.abspath(os.environ.get("OA_BIN") or os.path.join(SOURCE_DIR, "build-cli", "ollama-audit"))
DEMO_STORE = os.path.join(SOURCE_DIR, "fixtures", "demo-store")
REFERENCE_DIR = os.path.join(SOURCE_DIR, "fixtures", "reference")

sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "tools"))
import oastore as oa  # noqa: E402

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

# The build-asan tree sets OA_SANITIZED=1: there a start of the binary costs
# about six times what it does in build/, and the suite starts it thousands of
# times. A matrix that repeats one usage error (the same few lines of option
# parsing) per command and option runs each kind of refusal once per command
# there (first_under_sanitizer); every path that renders or acts still runs
# under the sanitizers, and the whole matrix runs in the normal tree.
SANITIZED = os.environ.get("OA_SANITIZED") == "1"
_sampled = set()


def first_under_sanitizer(*key):
    """True, except under the sanitizers when KEY was seen before."""
    if not SANITIZED:
        return True
    if key in _sampled:
        return False
    _sampled.add(key)
    return True


# LeakSanitizer's check at exit costs as much as the rest of a short run (it
# stops the process and scans its memory), so under the sanitizers a test
# checks for leaks on the first run of each command, format and --apply, and
# the tests of error paths (where a leak hides: an early return, a hostile
# file, an injected fault) on every run. Addresses and undefined behaviour are
# checked on every run everywhere; the C unit tests and the fuzz replay check
# leaks on every call. Runs on a terminal (run_tty) are sampled the same way.
# test_faults checks every run with an injected fault and samples its other
# runs (the fixtures it makes, the clean restores after) itself.
LEAK_CHECK_EVERY_RUN = {"test_golden", "test_hostile", "test_bad_input", "test_crash", "test_unparseable",
                        "test_escape", "test_restore", "test_rm_child", "test_review_safety",
                        "test_shared_stores", "test_history_stdin", "test_trash"}
_leak_keys = set()
_COMMAND_WORDS = {"list", "show", "check", "verify", "du", "prune", "rm", "restore", "stores", "dedupe", "export", "import", "repair",
                  "history", "report", "version", "completion"}


def _leak_check_this_run(args):
    if not SANITIZED or os.path.splitext(os.path.basename(sys.argv[0]))[0] in LEAK_CHECK_EVERY_RUN:
        return True
    args = [str(a) for a in args]
    cmd = next((a for a in args if a in _COMMAND_WORDS), None)
    fmt = next((a.split("=", 1)[1] for a in args if a.startswith("--format=")), None)
    if "--format" in args[:-1]:
        fmt = args[args.index("--format") + 1]
    key = (cmd, fmt, "--apply" in args)
    if key in _leak_keys:
        return False
    _leak_keys.add(key)
    return True

# Every run of the binary inherits this testing aid: an Ollama server whose
# use of a store cannot be seen (another user's process, such as the
# machine's own ollama service or another test run) does not block --apply.
# The tests' own fake servers are always visible. test_prune checks both ways.
os.environ["OA_TEST_IGNORE_HIDDEN_SERVERS"] = "1"

_passed = 0
_failed = 0
_skipped = 0
_failures = []
_section = ""
_tmpdirs = []


# ---------------------------------------------------------------- running


class Result:
    def __init__(self, args, code, out, err):
        self.args = args
        self.code = code
        self.out = out
        self.err = err

    def json(self):
        try:
            return json.loads(self.out)
        except ValueError as e:
            fail("stdout of %s is not JSON: %s\n%s" % (self.cmdline(), e, self.out[:2000]))
            return {}

    def ndjson(self):
        recs = []
        for i, line in enumerate(self.out.splitlines()):
            if not line.strip():
                continue
            try:
                recs.append(json.loads(line))
            except ValueError as e:
                fail("line %d of %s is not JSON: %s: %r" % (i + 1, self.cmdline(), e, line[:300]))
        return recs

    def cmdline(self):
        return "ollama-audit " + " ".join(str(a) for a in self.args)

    def describe(self):
        return "%s -> exit %s\n--- stdout\n%s\n--- stderr\n%s" % (
            self.cmdline(), self.code, self.out[-3000:], self.err[-3000:])


NOBODY = 65534


def _drop_to_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def closed_to_others(path):
    """The first directory on the way to path (path included) that other
    users cannot enter (no o+x), or None when they can reach it."""
    path = os.path.abspath(path)
    parts = path.split(os.sep)
    for i in range(1, len(parts) + 1):
        d = os.sep.join(parts[:i]) or os.sep
        try:
            st = os.stat(d)
        except OSError:
            return d
        if stat.S_ISDIR(st.st_mode) and not st.st_mode & stat.S_IXOTH:
            return d
    return None


def _pick_temp_base():
    """As root, the temp stores must be reachable by the other users the
    tests run the binary as. A private $TMPDIR (say under /root) is kept
    for everything else but the stores then go under a shared one."""
    base = tempfile.gettempdir()
    if not IS_ROOT or closed_to_others(base) is None:
        return
    for alt in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(alt) and os.access(alt, os.W_OK) and closed_to_others(alt) is None:
            print("note: %s is closed to other users: temp stores go under %s" % (closed_to_others(base), alt))
            tempfile.tempdir = alt
            return


_pick_temp_base()
_for_others = {}


def bin_for_others():
    """(path, env, None) of a copy of BIN that another user can run, or
    (None, None, why). The build tree may sit where they cannot enter (/root
    is mode 0700, mktemp -d makes 0700 dirs): the binary, and any library it
    loads from the build tree, is copied into a temp dir of mode 0755."""
    if "bin" in _for_others:
        return _for_others["bin"]
    if not IS_ROOT:
        _for_others["bin"] = (None, None, "not root: cannot run the binary as another user")
        return _for_others["bin"]
    d = tempdir("bin")
    os.chmod(d, 0o755)
    closed = closed_to_others(d)
    if closed:
        _for_others["bin"] = (None, None, "no temp dir other users can reach (%s is closed)" % closed)
        return _for_others["bin"]
    dst = os.path.join(d, os.path.basename(BIN))
    shutil.copy2(BIN, dst)
    os.chmod(dst, 0o755)
    env = {}
    build = os.path.dirname(os.path.realpath(BIN)) + os.sep
    try:
        ldd = subprocess.run(["ldd", BIN], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    except OSError:
        ldd = ""
    for line in ldd.splitlines():
        lib = line.split("=>")[-1].split("(")[0].strip()  # "libx.so => /path (0x...)"
        if os.path.isabs(lib) and os.path.realpath(lib).startswith(build):
            shutil.copy2(lib, os.path.join(d, os.path.basename(lib)))
            os.chmod(os.path.join(d, os.path.basename(lib)), 0o755)
            env["LD_LIBRARY_PATH"] = d
    _for_others["bin"] = (dst, env, None)
    return _for_others["bin"]


def nobody_skip():
    """Why the checks that run the binary as nobody (as root, to make files
    unreadable) cannot run here, or None (also None without root: those
    checks then use chmod as the current user)."""
    why = IS_ROOT and bin_for_others()[2]
    return "root reads any file, and nobody cannot run the binary: %s" % why if why else None


def open_up():
    """chmod 755 every temp dir made by tempdir() (not what is inside), so
    another user can reach the stores in them."""
    for d in _tmpdirs:
        if os.path.isdir(d):
            os.chmod(d, 0o755)


def fake_home():
    """The temp dir that is HOME and, in the fake passwd, the home of the
    user running the tests: what the binary takes for ~ (never the real one)."""
    if "OA_TEST_HOME" not in _globals:
        _globals["OA_TEST_HOME"] = tempdir("home")
        os.makedirs(os.path.join(_globals["OA_TEST_HOME"], "cache"), exist_ok=True)
    return _globals["OA_TEST_HOME"]


def fake_passwd():
    """A passwd file for every run that names no other (OLLAMA_AUDIT_PASSWD,
    or a fake machine's /etc/passwd): the tests' user, whose home is
    fake_home(), and nobody. The real passwd, and so the real ~/.ollama/logs,
    are never read."""
    if "OA_TEST_PASSWD" not in _globals:
        p = os.path.join(tempdir("passwd"), "passwd")
        with open(p, "w") as f:
            f.write("tester:x:%d:%d::%s:/bin/sh\n" % (os.getuid(), os.getgid(), fake_home()))
            if os.getuid() != 65534:
                f.write("nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n")
        os.chmod(os.path.dirname(p), 0o755)
        os.chmod(p, 0o644)
        _globals["OA_TEST_PASSWD"] = p
    return _globals["OA_TEST_PASSWD"]


def _hermetic(e, env):
    """The environment of a run: HOME, the cache and the passwd are fakes."""
    e.pop("OLLAMA_MODELS", None)
    e.pop("OLLAMA_AUDIT_UNITS", None)
    e.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    e["HOME"] = fake_home()
    e["XDG_CACHE_HOME"] = os.path.join(fake_home(), "cache")
    e["NO_COLOR"] = "1"
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    _no_real_passwd(e, env)
    return e


def run(*args, env=None, timeout=120, cwd=None, input=None, as_nobody=False):
    """Run the binary; return a Result. env entries are added to a clean copy
    of the environment in which OLLAMA_MODELS is unset, HOME points at an empty
    temp dir and XDG_CACHE_HOME at a temp dir (never the user's own cache), and
    the passwd is fake_passwd() unless env names another (_no_real_passwd)."""
    e = _hermetic(dict(os.environ), env)
    if "ASAN_OPTIONS" not in (env or {}) and not _leak_check_this_run(args):
        e["ASAN_OPTIONS"] += ":detect_leaks=0"
    argv = [BIN] + [str(a) for a in args]
    if as_nobody:
        path, extra, why = bin_for_others()
        if why:
            fail("cannot run as nobody: %s (check bin_for_others() first)" % why)
            return Result(args, -999, "", why)
        argv[0] = path
        e.update(extra)
    try:
        if as_nobody:
            open_up()
            os.chmod(_globals["OA_TEST_HOME"], 0o777)
            os.chmod(e["XDG_CACHE_HOME"], 0o777)
        p = subprocess.run(argv, env=e, cwd=cwd or "/", input=input, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout,
                           preexec_fn=_drop_to_nobody if as_nobody else None)
    except subprocess.TimeoutExpired as x:
        fail("timeout after %ss: %s" % (timeout, " ".join(argv)))
        return Result(args, -999, (x.stdout or b"").decode("utf-8", "replace"),
                      (x.stderr or b"").decode("utf-8", "replace"))
    r = Result(args, p.returncode, p.stdout.decode("utf-8", "replace"),
               p.stderr.decode("utf-8", "replace"))
    # A sanitizer report is always a failure, whatever the test checks.
    for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer"):
        if marker in r.err:
            fail("sanitizer report (%s) from %s" % (marker, r.describe()))
            break
    return r


_globals = {}


def _no_real_passwd(e, env):
    """Every command may read the passwd (the user's home, the stores that
    share a store's blobs): unless a test sets up a machine of its own
    (OLLAMA_AUDIT_SYSROOT, OLLAMA_AUDIT_PASSWD), it sees fake_passwd(), or
    an empty one when env unsets OLLAMA_AUDIT_PASSWD (None); never the real
    one."""
    if "OLLAMA_AUDIT_SYSROOT" in e or "OLLAMA_AUDIT_PASSWD" in e:
        return
    if "OLLAMA_AUDIT_PASSWD" not in (env or {}):
        e["OLLAMA_AUDIT_PASSWD"] = fake_passwd()
        return
    if "passwd" not in _globals:
        _globals["passwd"] = os.path.join(tempdir("passwd"), "passwd")
        open(_globals["passwd"], "w").close()
        os.chmod(os.path.dirname(_globals["passwd"]), 0o755)
    e["OLLAMA_AUDIT_PASSWD"] = _globals["passwd"]


def run_tty(args, answer, env=None, stdout_tty=False, cols=None):
    """Run the binary with a terminal (a pty) as standard input, type
    `answer`, and return a Result. With stdout_tty standard output is the
    terminal too (cols: its width), as it is for a person at a shell."""
    import pty
    import fcntl
    import struct
    import termios
    master, slave = pty.openpty()
    if cols:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    e = dict(os.environ)
    e.pop("COLUMNS", None)
    e = _hermetic(e, env)
    if "ASAN_OPTIONS" not in (env or {}) and not _leak_check_this_run(args):
        e["ASAN_OPTIONS"] += ":detect_leaks=0"
    p = subprocess.Popen([BIN] + [str(a) for a in args], stdin=slave,
                         stdout=slave if stdout_tty else subprocess.PIPE, stderr=subprocess.PIPE,
                         env=e, cwd="/")
    os.close(slave)
    if answer:
        os.write(master, answer)
    out = b""
    if stdout_tty:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not chunk:
                break
            out += chunk
    o, err = p.communicate(timeout=120)
    os.close(master)
    out = out.replace(b"\r\n", b"\n") if stdout_tty else o
    return Result(args, p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def start_fake_server(script, argv0, cwd=None, args=()):
    """Start `bash -c script` that ends in `exec -a argv0 ...`, and return
    once the exec has happened (its /proc cmdline starts with argv0): a fixed
    sleep is a race on a busy machine, where bash may still be starting."""
    p = subprocess.Popen(["bash", "-c", script, "x"] + list(args), cwd=cwd or "/")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        try:
            with open("/proc/%d/cmdline" % p.pid, "rb") as f:
                if f.read().startswith(argv0.encode() + b"\0"):
                    return p
        except OSError:
            if not os.path.isdir("/proc/self"):
                break  # no /proc: nothing better than a pause
        time.sleep(0.01)
    if not os.path.isdir("/proc/self"):
        time.sleep(0.3)
        return p
    p.kill()
    p.wait()
    fail("fake server %r never started" % argv0)
    return None


def audit(root, *args, **kw):
    """run('--store', root, *args)."""
    return run("--store", root, *args, **kw)


# ---------------------------------------------------------------- temp stores


def tempdir(tag="t"):
    d = tempfile.mkdtemp(prefix="oa-cli-%s-" % tag)
    _tmpdirs.append(d)
    return d


def new_store(tag="store"):
    """An empty oastore.Store in a fresh temp dir (root = <tmp>/models)."""
    return oa.Store(os.path.join(tempdir(tag), "models"))


def copy_demo_store(tag="demo"):
    dst = os.path.join(tempdir(tag), "models")
    shutil.copytree(DEMO_STORE, dst, symlinks=True)
    return oa.Store(dst)


def forged_cache(path, blob, hexd, mode=0o600, failed=None):
    """A verify cache whose one entry says `blob`, as it is now, verified
    good (or, failed, found corrupt: "digest-mismatch"): what someone who can
    write the file puts there to pass a corrupt blob, or to have a sound one
    removed."""
    st = os.stat(blob)
    entry = {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
             "ctime_ns": st.st_ctime_ns, "xxh128": "0" * 32, "verified_at": st.st_ctime_ns / 1e9 + 60}
    if failed:
        entry["failed"] = failed
    with open(path, "w") as f:
        json.dump({"schema": "ollama-audit.verify-cache/3", "entries": {hexd: [entry]}}, f)
    os.chmod(path, mode)


def flip_last_byte(p):
    """Corrupt a blob in place: its last byte's low bit flipped."""
    with open(p, "r+b") as f:
        f.seek(-1, 2)
        c = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([c[0] ^ 0x01]))


def clean_store(tag="clean", name="tiny:latest", mtime=None):
    """A small store that `check` finds clean: one tiny GGUF model with a
    config, a template and params. Returns (store, info dict)."""
    s = new_store(tag)
    info = add_gguf_model(s, name, mtime=mtime)
    return s, info


TEMPLATE = "{{ if .System }}<|system|>{{ .System }}{{ end }}<|user|>{{ .Prompt }}<|assistant|>"


def add_gguf_model(s, name, seed="", style="local", mtime=None, **gguf_kw):
    gguf = oa.tiny_llama_gguf(name=("Tiny %s %s" % (name, seed)).strip(), **gguf_kw)
    layers = [s.layer("model", gguf),
              s.layer("template", TEMPLATE),
              s.layer("params", oa.go_json({"stop": ["<|user|>"], "temperature": 0.7}))]
    cfg = oa.gguf_config(s, gguf, layers)
    path, data = s.add_manifest(name, cfg, layers, style=style, mtime=mtime)
    return {"name": name, "path": path, "bytes": data, "config": cfg, "layers": layers,
            "gguf": gguf, "id": oa.manifest_id(data), "digest": oa.manifest_id(data, full=True)}


def many_models_store(tag, n, name_of=lambda k: "ns%d/model%d:tag%d" % (k % 7, k, k % 3),
                      params_of=lambda k: {"num_ctx": 1000 + k}):
    """A store of n models over 10 shared GGUF weights and one template; each
    model has a params blob of its own (params_of(k)) and the name name_of(k)."""
    s = new_store(tag)
    ggufs = [oa.tiny_llama_gguf(name="%s %d" % (tag, k)) for k in range(10)]
    model_layers = [s.layer("model", g) for g in ggufs]
    tmpl = s.layer("template", TEMPLATE)
    cfgs = [oa.gguf_config(s, g, [l], rootfs=False) for g, l in zip(ggufs, model_layers)]
    for k in range(n):
        params = s.layer("params", oa.go_json(params_of(k)))
        s.add_manifest(name_of(k), cfgs[k % 10], [model_layers[k % 10], tmpl, params])
    return s


def passwd_with(name):
    """A passwd file (for OLLAMA_AUDIT_PASSWD) that names the user running
    the tests `name`."""
    p = os.path.join(tempdir("passwd"), "passwd")
    with open(p, "w", encoding="utf-8") as f:
        f.write("%s:x:%d:%d::/nonexistent:/bin/sh\n" % (name, os.getuid(), os.getgid()))
    return p


def server_loads_at(when, root, blob):
    """Lines of a server log (2025's format): a start naming root as
    OLLAMA_MODELS, and a load of blob (hex) from it, at unix time `when`."""
    ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(when))
    return ['time=%s level=INFO source=routes.go:1277 msg="Listening on [::]:11434 (version 0.5.13)"' % ts,
            'time=%s level=INFO source=routes.go:1200 msg="server config" env="map[OLLAMA_HOST:'
            'http://127.0.0.1:11434 OLLAMA_MODELS:%s OLLAMA_NUM_PARALLEL:0]"' % (ts, root),
            'time=%s level=INFO source=server.go:380 msg="starting llama server" cmd="/usr/bin/ollama runner '
            '--model %s/blobs/sha256-%s --ctx-size 8192 --port 33405"' % (ts, root, blob),
            'time=%s level=INFO source=server.go:626 msg="llama runner started in 1.00 seconds"' % ts]


def weight_layer(info):
    """The GGUF weights layer of a model add_gguf_model made."""
    return next(l for l in info["layers"] if l["mediaType"].endswith(".model"))


def can_reflink(where):
    probe_src = os.path.join(where, "probe")
    with open(probe_src, "wb") as f:
        f.write(b"x" * 8192)
    cp = subprocess.run(["cp", "--reflink=always", probe_src, probe_src + ".clone"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
    for p in (probe_src, probe_src + ".clone"):
        if os.path.exists(p):
            os.remove(p)
    return cp.returncode == 0


def mount_btrfs():
    """As root, a small btrfs on a loop device gives the test a filesystem
    that can reflink. Returns the mount point, or None (with the reason)."""
    if not IS_ROOT or not shutil.which("mkfs.btrfs"):
        return None, "not root, or no mkfs.btrfs"
    img = os.path.join(tempdir("btrfs-img"), "fs.img")
    mnt = tempdir("btrfs-mnt")
    with open(img, "wb") as f:
        f.truncate(256 << 20)
    r = subprocess.run(["mkfs.btrfs", "-q", img], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return None, "mkfs.btrfs failed"
    r = subprocess.run(["mount", "-o", "loop", img, mnt], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return None, "mount -o loop failed: " + r.stderr.decode(errors="replace").strip()
    os.chmod(mnt, 0o755)
    return mnt, None


def blob_file(s, digest):
    return s.blob_path(digest)


def rel(s, path):
    return os.path.relpath(path, s.root)


# ---------------------------------------------------------------- snapshots


def snapshot(root):
    """{relpath: (type, size, mtime_ns, mode, sha256 or link target)} of every
    entry under root, not following symlinks."""
    out = {}
    for d, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            r = os.path.relpath(p, root)
            if stat.S_ISLNK(st.st_mode):
                extra = os.readlink(p)
            elif stat.S_ISREG(st.st_mode) and st.st_mode & 0o444 and st.st_size < (64 << 20):
                try:
                    with open(p, "rb") as f:
                        extra = hashlib.sha256(f.read()).hexdigest()
                except OSError:
                    extra = "unreadable"
            else:
                extra = None
            out[r] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode), extra)
    return out


def diff_snapshots(a, b):
    lines = []
    for k in sorted(set(a) | set(b)):
        if k not in a:
            lines.append("new: %s" % k)
        elif k not in b:
            lines.append("removed: %s" % k)
        elif a[k] != b[k]:
            lines.append("changed: %s %r -> %r" % (k, a[k], b[k]))
    return lines


# ---------------------------------------------------------------- findings


def findings_of(doc):
    """All findings of a check/verify --format json document (every store)."""
    out = []
    for st in doc.get("stores", []) if isinstance(doc, dict) else []:
        out.extend(st.get("findings", []))
    return out


def summary_of(doc, i=0):
    try:
        return doc["stores"][i]["summary"]
    except (KeyError, IndexError, TypeError):
        fail("no stores[%d].summary in %r" % (i, str(doc)[:500]))
        return {}


def codes(findings, min_severity="info"):
    order = {"info": 0, "warning": 1, "error": 2}
    return sorted(f["code"] for f in findings if order.get(f.get("severity"), 0) >= order[min_severity])


# ---------------------------------------------------------------- assertions


def section(name):
    global _section
    _section = name


def ok(cond, msg, detail=None):
    global _passed, _failed
    if cond:
        _passed += 1
        return True
    _failed += 1
    text = "[%s] %s" % (_section, msg) if _section else msg
    if detail:
        text += "\n    " + str(detail).replace("\n", "\n    ")
    _failures.append(text)
    print("FAIL: " + text, flush=True)
    return False


def skip(why):
    """Say that the checks of the current section do not run here, and why
    (one line); done() counts them."""
    global _skipped
    _skipped += 1
    print("SKIP: %s%s" % ("[%s] " % _section if _section else "", why), flush=True)


def fail(msg, detail=None):
    return ok(False, msg, detail)


def eq(got, want, msg, detail=None):
    return ok(got == want, "%s: got %r, want %r" % (msg, got, want), detail)


def ne(got, unwanted, msg, detail=None):
    return ok(got != unwanted, "%s: got %r" % (msg, got), detail)


def contains(hay, needle, msg, detail=None):
    return ok(needle in hay, "%s: %r not in %r" % (msg, needle, hay if len(str(hay)) < 600 else str(hay)[:600] + "..."), detail)


def not_contains(hay, needle, msg, detail=None):
    return ok(needle not in hay, "%s: %r unexpectedly in %r" % (msg, needle, str(hay)[:600]), detail)


def exit_code(r, want, msg=""):
    return ok(r.code == want, "%sexit code of `%s`: got %s, want %s" % (msg + ": " if msg else "", r.cmdline(), r.code, want),
              r.describe())


@contextlib.contextmanager
def guard(name):
    """Run a block; an exception in it is one failure, and the script goes on."""
    section(name)
    try:
        yield
    except Exception:
        fail("exception in %s" % name, traceback.format_exc())


# The exit status of a script whose every check was skipped (each with its
# reason): ctest's SKIP_RETURN_CODE (tests/CMakeLists.txt), so it shows as
# skipped, not passed.
SKIPPED = 77


def done():
    for d in _tmpdirs:
        # make everything removable again (chmod 000 tests)
        for dd, dirs, files in os.walk(d):
            for n in dirs + files:
                p = os.path.join(dd, n)
                try:
                    if not os.path.islink(p):
                        os.chmod(p, 0o755 if os.path.isdir(p) else 0o644)
                except OSError:
                    pass
        shutil.rmtree(d, ignore_errors=True)
    if _failures:
        print("\nFailures:")
        for f in _failures:
            print("  - " + f.splitlines()[0])
    print("%d passed, %d failed%s" % (_passed, _failed, ", %d skipped" % _skipped if _skipped else ""),
          flush=True)
    sys.exit(1 if _failed else SKIPPED if _skipped and not _passed else 0)


def check_binary():
    if not os.access(BIN, os.X_OK):
        print("OA_BIN %s is not an executable" % BIN)
        print("0 passed, 1 failed")
        sys.exit(1)
