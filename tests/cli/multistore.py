"""multistore: a fake machine with several Ollama stores for the multi-store
tests (test_stores.py, test_dedupe.py, test_prometheus.py).

Everything lives under one temp dir used as OLLAMA_AUDIT_SYSROOT (a testing
aid of the binary, see docs/multi-store.md): its etc/passwd names the
accounts, its etc/systemd/... holds the unit and drop-ins, and the stores sit
at the paths a real machine would have them, relative to it.

Ownership is simulated: the accounts exist only in the sysroot's passwd (uids
23001..23009 that no real account uses); the files are chown()ed to those
uids when we run as root. The non-root checks run the binary with that uid
(setpriv-like: os.setresuid in the child), which the kernel enforces for real.
Without root nothing can be chown()ed: every store then belongs to the user
running the tests, and the tool must say so (Machine.user_of).
"""

import hashlib
import os
import socket
import stat
import subprocess

import clitest as t
import oastore as oa

UIDS = {"ollama": 23001, "alice": 23002, "bob": 23003, "carol": 23004, "dave": 23005, "frank": 23006}
GID = 23000
IS_ROOT = t.IS_ROOT


def chown_tree(path, uid, gid=GID):
    if not IS_ROOT:
        return
    for d, dirs, files in os.walk(path):
        os.lchown(d, uid, gid)
        for n in dirs + files:
            os.lchown(os.path.join(d, n), uid, gid)


def user_name(passwd, uid):
    """The name the tool gives uid: its entry in the passwd file, else the number."""
    with open(passwd) as f:
        for line in f:
            fields = line.rstrip("\n").split(":")
            if len(fields) >= 3 and not line.startswith("#") and fields[2] == str(uid):
                return fields[0]
    return str(uid)


def owner_uid(owner):
    """The real owner of a store made for the simulated `owner` (None: not
    chown()ed): that uid as root, the user running the tests otherwise."""
    return UIDS[owner] if owner and IS_ROOT else os.geteuid()


def make_store(root, models, owner=None, seed=""):
    """A store at root with the given model names (each a tiny GGUF model;
    the same name gives the same bytes in every store: shared digests)."""
    s = oa.Store(root)
    infos = [t.add_gguf_model(s, m, seed=seed) for m in models]
    if owner:
        # the store dir and its parents up to .ollama belong to the owner
        chown_tree(root, UIDS[owner])
        parent = os.path.dirname(root)
        if os.path.basename(parent) == ".ollama":
            chown_tree(parent, UIDS[owner])
            home = os.path.dirname(parent)
            if IS_ROOT:
                os.lchown(home, UIDS[owner], GID)
    return s, infos


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


class Machine:
    """The fake machine. Attributes: sysroot, stores (name -> root path as
    the binary reports it), envstore (outside the sysroot, via $OLLAMA_MODELS)."""

    def __init__(self):
        self.base = t.tempdir("machine")
        os.chmod(self.base, 0o755)
        self.sysroot = os.path.join(self.base, "root")
        S = self.sysroot
        os.makedirs(S)
        write(os.path.join(S, "etc/passwd"),
              "root:x:0:0:root:/root:/bin/bash\n"
              "ollama:x:%d:%d::/usr/share/ollama:/usr/sbin/nologin\n"
              "alice:x:%d:%d:Alice:/home/alice:/bin/bash\n"
              "bob:x:%d:%d:Bob:/home/bob:/bin/bash\n"
              "carol:x:%d:%d:Carol (no store):/home/carol:/bin/bash\n"
              "dave:x:%d:%d:Dave:/home/dave:/bin/bash\n"
              "frank:x:%d:%d:Frank:/home/frank:/bin/bash\n"
              "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n"
              "# a comment line\n"
              % (UIDS["ollama"], GID, UIDS["alice"], GID, UIDS["bob"], GID, UIDS["carol"], GID,
                 UIDS["dave"], GID, UIDS["frank"], GID))
        self.stores = {}
        self.infos = {}
        self.objs = {}
        self.owners = {"env": None}

        def add(key, rel, models, owner=None):
            root = os.path.join(S, rel)
            s, infos = make_store(root, models, owner)
            self.owners[key] = owner
            self.stores[key] = root
            self.infos[key] = infos
            self.objs[key] = s

        # the Linux service's store, and one model everybody has
        add("service", "usr/share/ollama/.ollama/models", ["shared:latest", "svc-only:latest"], "ollama")
        add("alice", "home/alice/.ollama/models", ["shared:latest", "alice-own:7b"], "alice")
        add("bob", "home/bob/.ollama/models", ["shared:latest", "bob-own:latest"], "bob")
        add("dave", "home/dave/.ollama/models", ["dave-own:latest"], "dave")
        add("frank", "home/frank/.ollama/models", ["frank-own:latest"], "frank")
        os.makedirs(os.path.join(S, "home/carol"))
        # stores named by systemd and environment files
        add("dropin", "srv/models-x", ["dropin-model:latest"], "ollama")
        add("envfile", "srv/envfile-store", ["envfile-model:latest"], "ollama")
        add("default", "opt/ollama models", ["default-file:latest"])
        # a symlinked second path to alice's store
        os.makedirs(os.path.join(S, "srv"), exist_ok=True)
        self.alice_link = os.path.join(S, "srv/link-to-alice")
        os.symlink(self.stores["alice"], self.alice_link)

        unit = os.path.join(S, "etc/systemd/system/ollama.service")
        write(unit, "[Unit]\nDescription=Ollama Service\n\n[Service]\n"
                    "ExecStart=/usr/local/bin/ollama serve\nUser=ollama\n"
                    "Environment=\"PATH=/usr/local/bin:/usr/bin\"\n"
                    "EnvironmentFile=-/etc/ollama.env\n"
                    "EnvironmentFile=-/etc/ollama-missing.env\n\n"
                    "[Install]\nWantedBy=default.target\n"
                    "Environment=OLLAMA_MODELS=/not/in/service/section\n")
        dropdir = os.path.join(S, "etc/systemd/system/ollama.service.d")
        # several assignments on one line, both quoting forms, a continuation
        write(os.path.join(dropdir, "10-models.conf"),
              "[Service]\n# a comment\nEnvironment=\"OLLAMA_HOST=0.0.0.0\" \"OLLAMA_MODELS=/srv/models-x\"\n")
        write(os.path.join(dropdir, "20-link.conf"),
              "[Service]\nEnvironment=OLLAMA_KEEP_ALIVE=5m OLLAMA_MODELS=/srv/link-to-alice\n")
        write(os.path.join(dropdir, "30-forms.conf"),
              "[Service]\n"
              "Environment=OLLAMA_MODELS=\"/srv/quoted value\" OTHER=1\n"
              "Environment='OLLAMA_MODELS=/srv/single-quoted'\n"
              "Environment=A=1 \\\n  OLLAMA_MODELS=/srv/continued\n")
        write(os.path.join(dropdir, "not-a-dropin.txt"),
              "[Service]\nEnvironment=OLLAMA_MODELS=/srv/ignored\n")
        write(os.path.join(S, "etc/ollama.env"),
              "# ollama settings\nOLLAMA_MODELS=/srv/envfile-store\n")
        write(os.path.join(S, "etc/default/ollama"),
              "export OLLAMA_MODELS=\"/opt/ollama models\"  # with a space\n")

        # $OLLAMA_MODELS of the calling process: outside the sysroot
        self.envstore = os.path.join(self.base, "envstore", "models")
        s, infos = make_store(self.envstore, ["env-model:latest"])
        self.stores["env"] = self.envstore
        self.infos["env"] = infos
        self.objs["env"] = s
        # dave's store is private (mode 0700 on the models dir: others see it
        # exists but cannot read it); frank's whole home is private (others
        # cannot even tell whether he has a store)
        os.chmod(os.path.join(S, "home/dave/.ollama/models"), 0o700)
        os.chmod(os.path.join(S, "home/frank"), 0o700)
        for d in (S, os.path.join(S, "home"), os.path.join(S, "srv"), os.path.join(S, "usr"),
                  os.path.join(self.base, "envstore")):
            os.chmod(d, 0o755)
        self.home = t.tempdir("home-none")
        os.chmod(self.home, 0o755)

    def user_of(self, key):
        """The user the tool must report as the owner of store `key`."""
        return user_name(os.path.join(self.sysroot, "etc/passwd"), owner_uid(self.owners[key]))

    def env(self, **extra):
        e = {"OLLAMA_AUDIT_SYSROOT": self.sysroot, "OLLAMA_MODELS": self.envstore, "HOME": self.home}
        e.update(extra)
        return e

    def run(self, *args, **kw):
        env = self.env()
        env.update(kw.pop("env", {}) or {})
        return t.run(*args, env=env, **kw)


def host():
    return socket.gethostname()


def blob_inventory(roots):
    """{hex: [(root, dev, ino, allocated)]} of valid blobs under each root."""
    inv = {}
    for root in roots:
        bd = os.path.join(root, "blobs")
        for n in sorted(os.listdir(bd)):
            if not (n.startswith("sha256-") and len(n) == 71):
                continue
            st = os.stat(os.path.join(bd, n))
            if not stat.S_ISREG(st.st_mode):
                continue
            inv.setdefault(n[7:], []).append((root, st.st_dev, st.st_ino, st.st_blocks * 512))
    return inv


def expected_dupes(roots):
    """(digests, saving, already_shared) computed from the files."""
    inv = blob_inventory(roots)
    n = saving = shared = 0
    for hexd, copies in inv.items():
        if len({c[0] for c in copies}) < 2:
            continue
        n += 1
        seen = {}
        for root, dev, ino, alloc in copies:
            if (dev, ino) in seen:
                shared += alloc
            else:
                seen[(dev, ino)] = alloc
        saving += sum(seen.values()) - max(seen.values())
    return n, saving, shared


def run_as(uid, args, env, timeout=120):
    """Run the binary with args, with real and effective uid `uid` (gid GID,
    no groups). Callers check t.bin_for_others() first."""
    def drop():
        os.setgroups([])
        os.setresgid(GID, GID, GID)
        os.setresuid(uid, uid, uid)
    path, extra, why = t.bin_for_others()
    if why:
        t.fail("cannot run as uid %d: %s" % (uid, why))
        return t.Result(args, -999, "", why)
    e = dict(os.environ)
    e.pop("OLLAMA_MODELS", None)
    e.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    e["NO_COLOR"] = "1"
    e.update(extra)
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    p = subprocess.run([path] + list(args), env=e, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, preexec_fn=drop)
    r = t.Result(args, p.returncode, p.stdout.decode("utf-8", "replace"),
                 p.stderr.decode("utf-8", "replace"))
    for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
        if marker in r.err:
            t.fail("sanitizer report (%s) from %s" % (marker, r.describe()))
            break
    return r


def sha256_file(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
