"""Run untrusted Python in a child process that sees nothing of the host but the interpreter.

Each run gets a fresh temporary folder (deleted afterwards) that the code sees as
``/tmp/work`` (a fixed path, so tracebacks and ``os.getcwd()`` are the same on every run).

What the code sees (both isolating modes build the same root from nothing, ``sandbox_mounts``):
the system's ``/usr`` (with ``/bin``, ``/lib``... as the host has them, links or folders) and
``/etc/ld.so.cache``, read-only; the interpreter's prefixes and the site-packages on its path,
read-only at their own paths (for pyenv, ``/root/.pyenv/versions/X`` and nothing else of
``/root``); a fixed two-line ``/etc/passwd`` and ``/etc/group``; a minimal ``/dev``; its own
``/proc``; a private ``/tmp`` holding the work folder (the only writable host folder). Nothing else
of ``/etc`` (no shadow, no hosts), no home folder, not the project checkout (no ``data/``, caches,
snapshots or releases: the code imports nothing of the project), nothing under the host's ``/tmp``.
The project and the home folder are masked by an empty folder should they lie under a bound folder.
The code runs as the unprivileged user 65534 (``nobody``) with no capabilities and
``no_new_privs``, in new network, PID, IPC and UTS namespaces (no interface is brought up, so
nothing is reachable, not even loopback; no host process is visible).

``bwrap``     bubblewrap (Debian package ``bubblewrap``). As root: bwrap keeps only the
              capabilities to change user, and ``setpriv`` switches to 65534:65534 (no groups,
              empty bounding set, ``no_new_privs``) before the interpreter starts, so the code is
              an unprivileged user of the host too. As another user: ``--unshare-user --uid
              65534 --gid 65534`` (the code runs as the caller's own host user).
``unshare``   util-linux ``unshare`` as root: new mount, network, PID, IPC and UTS namespaces; a
              small Python prologue inside them builds the same root on a tmpfs, ``pivot_root``s
              into it (the host's tree is detached, not merely hidden), remounts every mount
              read-only but ``/tmp``, then execs ``setpriv`` to 65534:65534 as above.
``none``      a plain child process with resource limits only. It sees and may write whatever the
              caller may; the result says ``isolation: "none"`` so callers (and tests) never
              mistake it for a sandbox. It is used only when asked for: ``isolation="none"``, or
              the setting ``sandbox_allow_unisolated`` (``LEGWORK_SANDBOX_ALLOW_NONE=1``) when no
              isolating mode works. Otherwise a machine without a sandbox raises
              ``SandboxUnavailable`` naming what is missing.

Each mode is probed once by running a check inside it (``_PROBE``): the interpreter starts, runs
as a user other than root, and neither ``/etc/shadow`` nor the project is there. A mode that
fails the check counts as missing, so an isolating mode either gives these guarantees or refuses.

In every mode resource limits cap CPU time (SIGXCPU), address space, file size (EFBIG) and core
dumps, set before the launcher execs (util-linux ``prlimit`` where present, else ``setrlimit`` in a
``preexec_fn``, which costs a full fork of the caller: ``_limited``); a wall-clock timeout kills the sandbox (its PID namespace's
first process first, so everything inside is gone before the folder is removed); stdout and
stderr are each capped.
"""
from __future__ import annotations

import importlib.metadata
import json
import math
import os
import resource
import select
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Self

from pipeline.config import PROJECT_ROOT
from pipeline.tools.errors import ToolUnavailable

SANDBOX_WORKDIR = "/tmp/work"
SANDBOX_UID = SANDBOX_GID = 65534  # nobody / nogroup
OUTPUT_CAP_BYTES = 100_000
FILE_SIZE_CAP_BYTES = 64 * 1024 * 1024
ISOLATIONS = ("bwrap", "unshare", "none")
# Host folders the OS-task sandbox replaces (pipeline.tasks.os.sandbox): what lives there is bound back.
HIDDEN_ROOTS = ("/tmp",)
# The system the interpreter links against: bound read-only (folders) or recreated (links).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# All the interpreter needs of /etc: the dynamic loader's index of the libraries under /usr.
SYSTEM_FILES = ("/etc/ld.so.cache",)
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
# The sandbox's own account files (fixed, so code asking for its user name gets the same bytes everywhere).
PASSWD = (f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
          f"nobody:x:{SANDBOX_UID}:{SANDBOX_GID}:nobody:{SANDBOX_WORKDIR}:/usr/sbin/nologin\n")
GROUP = f"root:x:0:\nnogroup:x:{SANDBOX_GID}:\n"


class SandboxUnavailable(ToolUnavailable):
    """No isolating mode works here and unisolated runs were not allowed (a configuration error)."""


@dataclass(frozen=True)
class SandboxResult:
    stdout: str
    stderr: str
    exit_code: int          # 128 + signal number when the code was killed by a signal
    timed_out: bool         # wall-clock timeout or CPU-time limit reached
    isolation: str          # bwrap | unshare | none
    limit: str | None = None  # which limit stopped the code: "time" (wall clock), "cpu" (SIGXCPU), None

    def to_dict(self) -> dict:
        return asdict(self)


# --- which isolation works here ------------------------------------------------------------

# Run inside each mode once: a mode that starts the interpreter but would run the code as root,
# or show it /etc/shadow or the project, is no sandbox.
_PROBE = """import os, sys
bad = [what for what, yes in [("runs as root", os.getuid() == 0 or os.getgid() == 0),
       ("wrong folder", os.getcwd() != {workdir!r}), ("sees /etc/shadow", os.path.lexists("/etc/shadow")),
       ("sees the project", os.path.lexists({project!r}))] if yes]
sys.exit(", ".join(bad) or None)
"""


def _probe(cmd: list[str], cwd: str) -> bool:
    try:
        done = subprocess.run(cmd, check=False, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20, cwd=cwd, env=_child_env(SANDBOX_WORKDIR))
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@cache
def _works(isolation: str) -> bool:
    """Run the guarantee check (``_PROBE``) once under the isolation: the machine must allow the
    namespaces, the interpreter must start inside, and what it sees must be the sandbox's."""
    if isolation == "none":
        return True
    code = _PROBE.format(workdir=SANDBOX_WORKDIR, project=str(PROJECT_ROOT))
    with _RunFolder("legwork-probe-") as folder:
        try:
            cmd = _command(isolation, folder, [sys.executable, "-s", "-B", "-c", code])
        except SandboxUnavailable:
            return False
        return _probe(cmd, folder.work)


def available_isolations() -> list[str]:
    """The isolation modes that work on this machine, best first (``none`` always last)."""
    return [iso for iso in ISOLATIONS if iso == "none" or (_tool_present(iso) and _works(iso))]


def _tool_present(isolation: str) -> bool:
    if isolation == "bwrap":
        return shutil.which("bwrap") is not None and (os.geteuid() != 0 or shutil.which("setpriv") is not None)
    if isolation == "unshare":
        return (shutil.which("unshare") is not None and shutil.which("setpriv") is not None
                and os.geteuid() == 0)
    return True


def best_isolation() -> str:
    return available_isolations()[0]


def isolation_available() -> bool:
    """True when code can run without network and without writing outside its folder."""
    return best_isolation() != "none"


def missing_sandbox_message() -> str:
    """What to install or set so that agent code can run (the text of ``SandboxUnavailable``)."""
    why = []
    if shutil.which("bwrap") is None:
        why.append("bwrap not installed")
    elif os.geteuid() == 0 and shutil.which("setpriv") is None:
        why.append("setpriv (util-linux) not installed, needed by bwrap as root to drop to an unprivileged user")
    elif not _works("bwrap"):
        why.append("bwrap cannot create namespaces here, cannot start the interpreter or fails the isolation check")
    if os.geteuid() != 0:
        why.append("not root (unshare mode)")
    elif shutil.which("unshare") is None or shutil.which("setpriv") is None:
        why.append("unshare/setpriv (util-linux) not installed")
    elif not _works("unshare"):
        why.append("unshare cannot create namespaces here, cannot start the interpreter or fails the isolation check")
    return ("no sandbox for agent code (" + "; ".join(why) + "): install bubblewrap (Debian package "
            "'bubblewrap') or run as root for unshare, or set sandbox_allow_unisolated = true "
            "(LEGWORK_SANDBOX_ALLOW_NONE=1) to run it without isolation (resource limits only)")


def choose_isolation(allow_unisolated: bool = False) -> str:
    """The best isolating mode; ``none`` only when allowed, else ``SandboxUnavailable``."""
    best = best_isolation()
    if best == "none" and not allow_unisolated:
        raise SandboxUnavailable(missing_sandbox_message())
    return best


# --- what the sandbox must still see ---------------------------------------------------------

def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def interpreter_paths(hidden_roots: tuple[str, ...] = HIDDEN_ROOTS, other_filesystems: bool = False,
                      with_project: bool = True) -> list[str]:
    """For the OS-task sandbox (a root overlaid on the host's ``/``): folders the child needs that
    it would hide: the interpreter's prefixes, the folder of the executable (and of its real path),
    site-packages on sys.path, the project.

    Kept: real paths (a venv's ``bin/python`` is a symlink) under one of ``hidden_roots`` (never
    a hidden root itself), plus with ``other_filesystems`` those on another filesystem than ``/``
    (an overlay of ``/`` does not show them); no folder inside another one of the list."""
    root_dev = os.stat("/").st_dev
    found: set[str] = set()
    project = [str(PROJECT_ROOT)] if with_project else []
    for variant in _path_variants(_interpreter_candidates() + project):
        if variant in hidden_roots:
            continue
        hidden = any(_under(variant, root) for root in hidden_roots)
        if hidden or (other_filesystems and os.stat(variant).st_dev != root_dev):
            found.add(variant)
    return outermost(found)


def _interpreter_candidates() -> list[str]:
    """The interpreter's prefixes, the folders of its executable, the site-packages on sys.path
    (not the user's own: the child runs with ``-s``)."""
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  sys.executable and os.path.dirname(sys.executable),
                  sys.executable and os.path.dirname(os.path.realpath(sys.executable))]
    user_site = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
    candidates += [p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)
                   and not (user_site and _under(os.path.abspath(p), user_site))]
    return [c for c in candidates if c]  # sys.executable may be empty (embedded interpreters)


def _path_variants(paths: list[str]) -> set[str]:
    """Absolute and real path of each existing folder, never ``/``."""
    out: set[str] = set()
    for path in paths:
        for variant in (os.path.abspath(path), os.path.realpath(path)):
            if variant != "/" and os.path.isdir(variant):
                out.add(variant)
    return out


def outermost(paths) -> list[str]:
    kept: list[str] = []
    for path in sorted(paths):  # parents sort before their children
        if not any(_under(path, k) for k in kept):
            kept.append(path)
    return kept


def private_paths(extra: tuple[str, ...] = ()) -> list[str]:
    """What the code must never see even if it lies under a bound folder: the project checkout
    (its data/, snapshots, caches), the home folders, and whatever the caller adds."""
    paths = [str(PROJECT_ROOT), str(Path.home()), "/root", "/home", *map(str, extra)]
    return sorted({os.path.realpath(p) for p in paths if p and os.path.realpath(p) != "/"})


@dataclass(frozen=True)
class Mount:
    """One step of building the sandbox's root, applied in order (a parent before its children).

    ``ro``: the host's ``path`` bound read-only at the same path; ``mask``: an empty read-only
    folder over ``path`` (the project or a home folder under a bound one); ``link``: a symlink
    ``path`` -> ``target`` (``/bin`` -> ``usr/bin`` on a merged-/usr system)."""
    kind: str
    path: str
    target: str = ""


def sandbox_mounts(private: tuple[str, ...] = ()) -> list[Mount]:
    """The host paths the code sees, all read-only: the system (``SYSTEM_DIRS``, ``SYSTEM_FILES``)
    and the interpreter (prefixes and site-packages), with the private paths masked under them.

    ``SandboxUnavailable`` when a private path *is* one of the interpreter's folders or holds it
    (an interpreter whose prefix is the project or a home folder cannot be shown alone)."""
    steps: list[Mount] = []
    system: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            steps.append(Mount("link", path, os.readlink(path)))
        elif os.path.isdir(path):
            system.append(path)
    system += [p for p in SYSTEM_FILES if os.path.isfile(p)]
    # Folders the code walks in already (a path through /lib -> usr/lib lands in the bound /usr).
    reach = [os.path.realpath(p) for p in system] + system + [m.path for m in steps]
    hidden = private_paths(private)
    interpreter = [p for p in outermost(_path_variants(_interpreter_candidates()))
                   if not any(_under(p, s) for s in reach)
                   or any(_under(p, h) and _under(h, s) for h in hidden for s in reach)]
    for path in interpreter:
        holding = [h for h in hidden if _under(h, path)]
        if holding:
            raise SandboxUnavailable(f"the interpreter's folder {path} holds {holding[0]}, which agent code must "
                                     "not see: install the interpreter (or the virtualenv) elsewhere")
    binds = system + interpreter
    masks = [h for h in hidden if os.path.isdir(h) and any(_under(h, b) and h != b for b in binds)]
    ordered = sorted([(p, 0, Mount("ro", p)) for p in binds] + [(p, 1, Mount("mask", p)) for p in masks],
                     key=lambda item: (item[0].split("/"), item[1]))
    return steps + [m for _, _, m in ordered]


# --- command lines ---------------------------------------------------------------------------

class _RunFolder:
    """One run's host folder: ``work`` (the code's /tmp/work) and ``etc`` (its passwd and group, and an
    empty file shown over the project's own import hooks)."""

    def __init__(self, prefix: str = "legwork-sandbox-"):
        self.base = tempfile.mkdtemp(prefix=prefix)
        self.work = os.path.join(self.base, "work")
        self.etc = os.path.join(self.base, "etc")
        os.mkdir(self.work)
        os.chmod(self.work, 0o777)  # the sandbox user writes here; the base folder stays 0700
        os.mkdir(self.etc)
        for name, text in (("passwd", PASSWD), ("group", GROUP), ("empty", "")):
            with open(os.path.join(self.etc, name), "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(os.path.join(self.etc, name), 0o644)
        os.chmod(self.etc, 0o755)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        _remove_tree(self.base)


def _remove_tree(path: str) -> None:
    """Remove a run folder whatever the code left in it (read-only folders included)."""
    def retry(func, failed, _exc):
        parent = os.path.dirname(failed)
        try:
            os.chmod(parent, stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, stat.S_IRWXU)
            func(failed)
        except OSError:
            pass
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


@cache
def project_hooks() -> tuple[str, ...]:
    """The ``.pth`` files of the project's own distribution (an editable install's import hook): the code
    imports nothing of the project, whose folder it cannot see, yet every interpreter start ran the hook,
    24 ms of a 40 ms run (its finder imports pathlib). The sandbox shows them empty."""
    # every record of the distribution: run from the checkout, its ``legwork.egg-info`` (which lists the
    # sources) comes first on the path, and the installed ``.dist-info`` (which lists the hook) after it
    found = {os.path.realpath(dist.locate_file(f)) for dist in importlib.metadata.distributions(name="legwork")
             for f in dist.files or () if str(f).endswith(".pth")}
    return tuple(sorted(path for path in found if os.path.isfile(path)))


def _plan(folder: _RunFolder, private: tuple[str, ...]) -> list[list[str]]:
    """Every step building the root, in order: ``sandbox_mounts`` then the run's own files, /dev,
    /proc, a private /tmp and the work folder (the only writable host folder)."""
    steps = [[m.kind, m.path, m.target] for m in sandbox_mounts(private)]
    bound = [path for kind, path, _ in steps if kind == "ro"]
    steps += [["file", os.path.join(folder.etc, "empty"), hook] for hook in project_hooks()
              if any(_under(hook, b) for b in bound)]
    steps += [["file", os.path.join(folder.etc, "passwd"), "/etc/passwd"],
              ["file", os.path.join(folder.etc, "group"), "/etc/group"],
              ["dev", "/dev", ""], ["proc", "/proc", ""], ["tmpfs", "/tmp", ""], ["rw", folder.work, SANDBOX_WORKDIR]]
    # A parent before its children: a private /tmp first, then an interpreter living under /tmp.
    return sorted(steps, key=lambda step: _destination(step).split("/"))


def _destination(step: list[str]) -> str:
    kind, path, target = step
    return target if kind in ("file", "rw") else path


def _parents(path: str) -> list[str]:
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _bwrap_args(plan: list[list[str]]) -> list[str]:
    args: list[str] = []
    made: set[str] = set()   # folders of the new root made here (bwrap would make them 0700)
    covered: list[str] = []  # host folders bound at their own path: what lies under them exists already

    def parents(path: str) -> None:
        for parent in _parents(path):
            if parent not in made and not any(_under(parent, c) for c in covered):
                args.extend(["--perms", "0755", "--dir", parent])
                made.add(parent)

    masks: list[str] = []
    for kind, path, target in plan:
        parents(_destination([kind, path, target]))
        if kind == "link":
            args.extend(["--symlink", target, path])
        elif kind == "ro":
            args.extend(["--ro-bind", path, path])
        elif kind == "mask":
            args.extend(["--perms", "0755", "--size", "65536", "--tmpfs", path])
            masks.append(path)
        elif kind == "file":
            args.extend(["--ro-bind", path, target])
        elif kind == "dev":
            args.extend(["--dev", path])
        elif kind == "proc":
            args.extend(["--proc", path, "--ro-bind-try", "/proc/sys", "/proc/sys",
                         "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"])
        elif kind == "tmpfs":
            args.extend(["--perms", "1777", "--tmpfs", path])
        elif kind == "rw":
            args.extend(["--bind", path, target])
        if kind == "ro":
            covered.append(path)
    for path in masks:
        args.extend(["--remount-ro", path])
    return args + ["--remount-ro", "/"]


# Runs as root inside the new namespaces (unshare mode), builds the root, then execs the payload.
_UNSHARE_PROLOGUE = r"""
import ctypes, json, os, sys
plan = json.loads(sys.argv[1])
payload = sys.argv[sys.argv.index("--") + 1:]
libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}[os.uname().machine]
def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))
def mount(src, dst, fstype, flags, data=None):
    check(libc.mount(src.encode(), dst.encode(), fstype.encode() if fstype else None, flags,
                     data.encode() if data else None), "mount %s on %s" % (src, dst))
def unescape(path):
    return path.encode().decode("unicode_escape")
os.umask(0o022)
mount("none", "/", None, MS_REC | MS_PRIVATE)
libc.sethostname(b"sandbox", 7)
# Every host path the root takes, opened before anything is mounted over it (e.g. the host's /tmp).
sources = {src: os.open(src, os.O_PATH) for kind, src, _ in plan if kind in ("ro", "rw", "file")}
sources.update({"/dev/" + d: os.open("/dev/" + d, os.O_PATH) for d in DEVICES})
R = "/tmp"
mount("tmpfs", R, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
writable, readonly_proc = set(), set()
def bind(src, dst):
    if os.path.isdir("/proc/self/fd/%d" % sources[src]):
        os.makedirs(R + dst, exist_ok=True)
    elif not os.path.lexists(R + dst):   # (a file shown over a bound one is there already)
        os.makedirs(os.path.dirname(R + dst), exist_ok=True)
        open(R + dst, "a").close()
    mount("/proc/self/fd/%d" % sources[src], R + dst, None, MS_BIND | MS_REC)
for kind, path, target in plan:
    if kind == "link":
        os.makedirs(os.path.dirname(R + path), exist_ok=True)
        os.symlink(target, R + path)
    elif kind == "ro":
        bind(path, path)
    elif kind == "file":
        bind(path, target)
    elif kind == "rw":
        bind(path, target)
        writable.add(target)
    elif kind == "mask":
        os.makedirs(R + path, exist_ok=True)
        mount("tmpfs", R + path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
    elif kind == "tmpfs":
        os.makedirs(R + path, exist_ok=True)
        mount("tmpfs", R + path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
        writable.add(path)
    elif kind == "proc":
        os.makedirs(R + path, exist_ok=True)
        mount("proc", R + path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for name in ("sys", "sysrq-trigger", "irq", "bus"):  # read-only below, as bwrap has them
            if os.path.exists(R + path + "/" + name):
                mount(R + path + "/" + name, R + path + "/" + name, None, MS_BIND | MS_REC)
                readonly_proc.add(path + "/" + name)
    elif kind == "dev":
        os.makedirs(R + path, exist_ok=True)
        mount("tmpfs", R + path, "tmpfs", MS_NOSUID, "mode=0755,size=64k")
        for name in DEVICES:
            bind("/dev/" + name, path + "/" + name)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
            os.symlink(target, R + path + "/" + name)
        os.mkdir(R + path + "/shm")
        mount("tmpfs", R + path + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
        writable.add(path + "/shm")
for fd in sources.values():
    os.close(fd)
# Into the new root; the host's tree is detached from this namespace, not merely covered.
os.chdir(R)
check(libc.syscall(PIVOT_ROOT, b".", b"."), "pivot_root")
check(libc.umount2(b".", 2), "detach the host root")  # MNT_DETACH
os.chdir("/")
# Read-only everywhere but /tmp (and /dev/shm); /proc stays as mounted, /proc/sys & co read-only.
points = [unescape(line.split()[4]) for line in open("/proc/self/mountinfo")]
for point in sorted(set(points), key=lambda p: p.split("/")):
    if point in writable or (point.startswith("/proc") and point not in readonly_proc):
        continue
    mount("none", point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | (0 if point.startswith("/dev") else MS_NODEV))
os.chdir([target for kind, _, target in plan if kind == "rw"][0])  # the work folder
# This process stays the namespace's first process (as bwrap's own init does): the code runs as
# its child, so it gets the signals any process gets (an init ignores SIGXCPU, SIGTERM...), and
# its end ends the namespace, everything in it killed before this process is reaped.
os.setsid()  # a session of its own, as bwrap --new-session gives the code (same ids in both modes)
child = os.fork()
if child == 0:
    try:
        os.execv(payload[0], payload)
    finally:
        os._exit(127)
while True:
    pid, status = os.wait()
    if pid == child:
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
""".replace("DEVICES", repr(DEVICES))


def _drop_to_nobody(payload: list[str]) -> list[str]:
    """Run ``payload`` as 65534:65534, no groups, no capabilities (none to gain: ``no_new_privs``)."""
    return [shutil.which("setpriv") or "setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}",
            "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", *payload]


def _command(isolation: str, folder: _RunFolder, payload: list[str], private: tuple[str, ...] = ()) -> list[str]:
    if isolation == "none":
        return payload
    if isolation not in ISOLATIONS:
        raise ValueError(f"unknown isolation {isolation!r}; choose one of {', '.join(ISOLATIONS)}")
    plan = _plan(folder, private)
    if isolation == "bwrap":
        if os.geteuid() == 0:
            user = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                    "--cap-add", "CAP_SETPCAP"]
            payload = _drop_to_nobody(payload)
        else:
            user = ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID), "--cap-drop", "ALL"]
        return ["bwrap", *_bwrap_args(plan), "--chdir", SANDBOX_WORKDIR, *user,
                "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox",
                "--die-with-parent", "--new-session", "--", *payload]
    return ["unshare", "--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--mount-proc",
            "--kill-child", "--", sys.executable, "-I", "-S", "-c", _UNSHARE_PROLOGUE, json.dumps(plan),
            "--", *_drop_to_nobody(payload)]


def _limits(cpu_s: int, memory_mb: int, file_cap: int) -> dict[int, tuple[int, int]]:
    return {resource.RLIMIT_CPU: (cpu_s, cpu_s + 1), resource.RLIMIT_AS: (memory_mb * 1024 * 1024,) * 2,
            resource.RLIMIT_FSIZE: (file_cap,) * 2, resource.RLIMIT_CORE: (0, 0)}


_PRLIMIT_OPTIONS = {resource.RLIMIT_CPU: "--cpu", resource.RLIMIT_AS: "--as", resource.RLIMIT_FSIZE: "--fsize",
                    resource.RLIMIT_CORE: "--core"}


@cache
def _prlimit() -> str | None:
    return shutil.which("prlimit")


def _limited(command: list[str], limits: dict[int, tuple[int, int]]) -> tuple[list[str], Callable[[], None] | None]:
    """``command`` and the ``preexec_fn`` that start it under ``limits``.

    util-linux ``prlimit`` sets the limits on itself and execs the command (the same process, the same
    limits from the launcher on), so Python starts the child by vfork. A ``preexec_fn`` forces a full
    fork, whose copy of the caller's page tables is the cost of a run in a large process: 70 ms of a
    130 ms run from a 1.5 GB generator (a 10^6-page world's) against 1 ms. Without prlimit the limits
    are set by ``setrlimit`` in a ``preexec_fn`` as before."""
    if _prlimit():
        return [_prlimit(), *(f"{_PRLIMIT_OPTIONS[kind]}={soft}:{hard}" for kind, (soft, hard) in limits.items()),
                "--", *command], None

    def apply() -> None:
        for kind, pair in limits.items():
            resource.setrlimit(kind, pair)

    return command, apply


def _child_env(workdir_seen: str) -> dict[str, str]:
    """A small fixed environment: nothing of the caller leaks in, hashing is deterministic."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir_seen, "TMPDIR": workdir_seen,
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8",
            "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1"}


class _CappedReader(threading.Thread):
    """Drain a pipe, keeping the first ``cap`` bytes and counting the rest."""

    def __init__(self, stream, cap: int):
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.kept = bytearray()
        self.dropped = 0

    def run(self) -> None:
        while True:
            chunk = self.stream.read(65536)
            if not chunk:
                break
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))
        self.stream.close()

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[output truncated: {self.dropped} more bytes]"
        return text


def run_python(code: str, *, timeout_s: float = 10, memory_mb: int = 512,
               isolation: str | None = None, output_cap: int = OUTPUT_CAP_BYTES,
               allow_unisolated: bool = False, cpu_s: int | None = None,
               file_cap: int = FILE_SIZE_CAP_BYTES, private: tuple[str, ...] = ()) -> SandboxResult:
    """Run ``code`` with ``python -`` in a fresh folder under the best isolation available.

    ``isolation`` forces one mode (tests use it); the default is ``choose_isolation``: the best
    isolating mode, ``none`` only with ``allow_unisolated``, else ``SandboxUnavailable``.
    ``cpu_s`` is the CPU-time limit (default: the wall-clock timeout rounded up, plus one second),
    ``file_cap`` the largest file the code may write; ``private`` names more host folders to mask
    should they lie under a folder the sandbox binds (the project and home folders always are).
    """
    isolation = isolation or choose_isolation(allow_unisolated)
    if isolation != "none" and not (_tool_present(isolation) and _works(isolation)):
        raise SandboxUnavailable(f"isolation {isolation!r} does not work on this machine")
    cpu_s = cpu_s if cpu_s is not None else math.ceil(timeout_s) + 1
    with _RunFolder() as folder:
        seen = folder.work if isolation == "none" else SANDBOX_WORKDIR
        payload = [sys.executable, "-s", "-B", "-"]
        command, set_limits = _limited(_command(isolation, folder, payload, private),
                                       _limits(cpu_s, memory_mb, file_cap))
        proc = subprocess.Popen(
            command, cwd=folder.work, env=_child_env(seen),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            # rlimits must be set in the child before exec; the function only calls setrlimit
            preexec_fn=set_limits, start_new_session=True, close_fds=True,  # noqa: PLW1509
        )
        readers = [_CappedReader(proc.stdout, output_cap), _CappedReader(proc.stderr, output_cap)]
        for reader in readers:
            reader.start()
        limit = None
        try:
            proc.stdin.write(code.encode("utf-8"))
            proc.stdin.close()
        except BrokenPipeError:
            pass
        if not _exited_within(proc, timeout_s):
            limit = "time"
            _kill(proc, isolation)
        for reader in readers:
            reader.join(timeout=5)
        exit_code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        if limit == "time":  # killed here, whichever way the launcher reports it
            exit_code = 128 + signal.SIGKILL
        if limit is None and exit_code == 128 + signal.SIGXCPU:
            limit = "cpu"
        stderr = readers[1].text()
        if limit == "time":
            stderr += f"\n[killed: time limit of {timeout_s:g} s reached]"
        elif limit == "cpu":
            stderr += f"\n[killed: CPU time limit of {cpu_s} s reached]"
        return SandboxResult(readers[0].text(), stderr, exit_code, limit is not None, isolation, limit)


def _exited_within(proc: subprocess.Popen, timeout_s: float) -> bool:
    """Wait for ``proc`` to end, at most ``timeout_s``; False if it is still running. Told by a pidfd
    (Linux 5.3+): ``Popen.wait(timeout)`` polls with sleeps of up to 50 ms, about 25 ms lost on every run
    of a snippet that takes a few milliseconds."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):   # another OS, an older kernel, or already reaped
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(max(0, int(timeout_s * 1000))):
            return False
    finally:
        os.close(fd)
    proc.wait()   # it has ended: reaped at once
    return True


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _kill(proc: subprocess.Popen, isolation: str) -> None:
    """Stop a run that reached its wall-clock limit, and return once nothing of it is left.

    Sandboxed, the launcher's child is the first process of the run's PID namespace and the code
    its child: killing the code ends the first process, which makes the kernel kill everything in
    the namespace, and the first process is reaped (so the launcher exits) only when all of it is
    gone. Killing the launcher first (the old order) left the namespace to die on its own, its
    processes possibly still writing while the run folder was being removed."""
    if isolation != "none":
        first = _children(proc.pid)
        # The code itself (and orphans reparented to the first process): the first process then
        # ends as it does when the code ends by itself, and the launcher reports it quietly.
        targets = [g for child in first for g in _children(child)] or first
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if targets:  # (none yet: the launcher is still building the root, the group kill below is enough)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


__all__ = ["SANDBOX_WORKDIR", "Mount", "SandboxResult", "SandboxUnavailable", "available_isolations",
           "best_isolation", "choose_isolation", "interpreter_paths", "isolation_available",
           "missing_sandbox_message", "outermost", "private_paths", "run_python", "sandbox_mounts"]
