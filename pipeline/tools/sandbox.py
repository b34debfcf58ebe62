"""Run untrusted Python in a child process that can touch nothing but its own folder.

Each run gets a fresh temporary folder (deleted afterwards) that the code sees as
``/tmp/work`` (a fixed path, so tracebacks and ``os.getcwd()`` are the same on every run).
Isolation, best first:

``bwrap``     bubblewrap (Debian package ``bubblewrap``): read-only bind of ``/``, a private
              tmpfs ``/tmp`` (with the interpreter and the project bound back read-only when
              they live there), the work folder bound read-write, new network, PID, IPC and UTS
              namespaces (no interface is brought up, so nothing is reachable, not even
              loopback), all capabilities dropped, killed with its parent.
``unshare``   util-linux ``unshare`` as root: new mount, network, PID, IPC and UTS namespaces;
              a small Python prologue inside the namespace hides ``/tmp`` the same way, binds
              the work folder at ``/tmp/work``, remounts every other mount read-only, then
              drops every capability with ``setpriv`` before running the code.
``none``      a plain child process with resource limits only. Nothing stops it from writing
              files or opening sockets; the result says ``isolation: "none"`` so callers (and
              tests) never mistake it for a sandbox. It is used only when asked for:
              ``isolation="none"``, or the setting ``sandbox_allow_unisolated``
              (``LEGWORK_SANDBOX_ALLOW_NONE=1``) when no isolating mode works. Otherwise a
              machine without a sandbox raises ``SandboxUnavailable`` naming what is missing.

The interpreter may live anywhere, also under ``/tmp`` (a virtualenv in a fresh clone's
temporary folder): its prefixes, the real path of the executable and the project are bound
back read-only at their own paths (``interpreter_paths``), the rest of the host's ``/tmp``
stays hidden. Each mode is probed once by starting that interpreter inside it, so a sandbox
that cannot run the interpreter counts as missing instead of failing every call.

In every mode ``resource.setrlimit`` (in ``preexec_fn``) caps CPU time, address space,
file size and core dumps; a wall-clock timeout kills the whole process group (and, with
a PID namespace, everything inside it); stdout and stderr are each capped.
"""
from __future__ import annotations

import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from functools import cache

from pipeline.tools.registry import ToolUnavailable

SANDBOX_WORKDIR = "/tmp/work"
OUTPUT_CAP_BYTES = 100_000
FILE_SIZE_CAP_BYTES = 64 * 1024 * 1024
ISOLATIONS = ("bwrap", "unshare", "none")
# Host folders the sandbox replaces by a private tmpfs: what lives there must be bound back.
HIDDEN_ROOTS = ("/tmp",)


class SandboxUnavailable(ToolUnavailable):
    """No isolating mode works here and unisolated runs were not allowed (a configuration error)."""


@dataclass(frozen=True)
class SandboxResult:
    stdout: str
    stderr: str
    exit_code: int          # 128 + signal number when the code was killed by a signal
    timed_out: bool         # wall-clock timeout or CPU-time limit reached
    isolation: str          # bwrap | unshare | none

    def to_dict(self) -> dict:
        return asdict(self)


# --- which isolation works here ------------------------------------------------------------

def _probe(cmd: list[str]) -> bool:
    try:
        done = subprocess.run(cmd, check=False, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@cache
def _works(isolation: str) -> bool:
    """Start the interpreter once under the isolation: the machine must allow the namespaces
    and the interpreter must be reachable inside (a sandbox hiding it is no sandbox)."""
    if isolation == "none":
        return True
    workdir = tempfile.mkdtemp(prefix="legwork-probe-")
    try:
        return _probe(_command(isolation, workdir, [sys.executable, "-s", "-B", "-c", "pass"]))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def available_isolations() -> list[str]:
    """The isolation modes that work on this machine, best first (``none`` always last)."""
    return [iso for iso in ISOLATIONS if iso == "none" or (_tool_present(iso) and _works(iso))]


def _tool_present(isolation: str) -> bool:
    if isolation == "bwrap":
        return shutil.which("bwrap") is not None
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
    elif not _works("bwrap"):
        why.append("bwrap cannot create namespaces here or cannot start the interpreter")
    if os.geteuid() != 0:
        why.append("not root (unshare mode)")
    elif shutil.which("unshare") is None or shutil.which("setpriv") is None:
        why.append("unshare/setpriv (util-linux) not installed")
    elif not _works("unshare"):
        why.append("unshare cannot create namespaces here or cannot start the interpreter")
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


def interpreter_paths(hidden_roots: tuple[str, ...] = HIDDEN_ROOTS, other_filesystems: bool = False) -> list[str]:
    """Folders the child needs that the sandbox would hide: the interpreter's prefixes, the
    folder of the executable (and of its real path), site-packages on sys.path, the project.

    Kept: real paths (a venv's ``bin/python`` is a symlink) under one of ``hidden_roots`` (never
    a hidden root itself), plus with ``other_filesystems`` those on another filesystem than ``/``
    (an overlay of ``/`` does not show them); no folder inside another one of the list."""
    from pipeline.config import PROJECT_ROOT

    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  sys.executable and os.path.dirname(sys.executable),
                  sys.executable and os.path.dirname(os.path.realpath(sys.executable)), str(PROJECT_ROOT)]
    candidates += [p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)]
    root_dev = os.stat("/").st_dev
    found: set[str] = set()
    for path in filter(None, candidates):  # sys.executable may be empty (embedded interpreters)
        for variant in (os.path.abspath(path), os.path.realpath(path)):
            if not os.path.isdir(variant) or variant in hidden_roots or variant == "/":
                continue
            hidden = any(_under(variant, root) for root in hidden_roots)
            if hidden or (other_filesystems and os.stat(variant).st_dev != root_dev):
                found.add(variant)
    kept: list[str] = []
    for path in sorted(found):  # parents sort before their children
        if not any(_under(path, k) for k in kept):
            kept.append(path)
    return kept


# --- command lines ---------------------------------------------------------------------------

# Runs as root inside the new mount namespace (unshare mode), then execs the payload.
_UNSHARE_PROLOGUE = r"""
import ctypes, os, sys
host_workdir, target = sys.argv[1], sys.argv[2]
rebind = sys.argv[3:sys.argv.index("--")]
libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
def mount(src, dst, fstype, flags, data=None):
    if libc.mount(src.encode(), dst.encode(), fstype.encode() if fstype else None, flags,
                  data.encode() if data else None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "mount %s -> %s: %s" % (src, dst, os.strerror(err)))
def unescape(path):
    return path.encode().decode("unicode_escape")
mount("none", "/", None, MS_REC | MS_PRIVATE)
libc.sethostname(b"sandbox", 7)
keep = os.open(host_workdir, os.O_PATH | os.O_DIRECTORY)
kept = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in rebind]
mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777,size=64m")
for path, fd in kept:  # the interpreter and the project, where /tmp hid them
    os.makedirs(path, exist_ok=True)
    mount("/proc/self/fd/%d" % fd, path, None, MS_BIND | MS_REC)
    os.close(fd)
os.mkdir(target)
# Bind first: a bind mount copies its source's read-only flag.
mount("/proc/self/fd/%d" % keep, target, None, MS_BIND)
os.close(keep)
points = [unescape(line.split()[4]) for line in open("/proc/self/mountinfo")]
for point in sorted(set(points) - {target}):
    try:
        mount("none", point, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    except OSError:
        pass  # e.g. a mount hidden under another; the one on top is remounted
os.chdir(target)
payload = sys.argv[sys.argv.index("--") + 1:]
os.execvp(payload[0], payload)
"""


def _command(isolation: str, workdir: str, payload: list[str]) -> list[str]:
    rebind = interpreter_paths()
    if isolation == "bwrap":
        return ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--ro-bind-try", "/proc/sys", "/proc/sys",
                "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
                "--tmpfs", "/tmp", *[arg for path in rebind for arg in ("--ro-bind", path, path)],
                "--bind", workdir, SANDBOX_WORKDIR, "--chdir", SANDBOX_WORKDIR,
                "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox",
                "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--", *payload]
    if isolation == "unshare":
        return ["unshare", "--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--mount-proc",
                "--kill-child", "--", sys.executable, "-I", "-S", "-c", _UNSHARE_PROLOGUE,
                workdir, SANDBOX_WORKDIR, *rebind, "--",
                "setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--", *payload]
    if isolation == "none":
        return payload
    raise ValueError(f"unknown isolation {isolation!r}; choose one of {', '.join(ISOLATIONS)}")


def _limits(timeout_s: float, memory_mb: int):
    cpu = math.ceil(timeout_s) + 1

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_CAP_BYTES,) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


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
               allow_unisolated: bool = False) -> SandboxResult:
    """Run ``code`` with ``python -`` in a fresh folder under the best isolation available.

    ``isolation`` forces one mode (tests use it); the default is ``choose_isolation``: the best
    isolating mode, ``none`` only with ``allow_unisolated``, else ``SandboxUnavailable``.
    """
    isolation = isolation or choose_isolation(allow_unisolated)
    if isolation != "none" and not (_tool_present(isolation) and _works(isolation)):
        raise SandboxUnavailable(f"isolation {isolation!r} does not work on this machine")
    workdir = tempfile.mkdtemp(prefix="legwork-sandbox-")
    try:
        os.chmod(workdir, 0o777)
        seen = workdir if isolation == "none" else SANDBOX_WORKDIR
        payload = [sys.executable, "-s", "-B", "-"]
        proc = subprocess.Popen(
            _command(isolation, workdir, payload), cwd=workdir, env=_child_env(seen),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            # rlimits must be set in the child before exec; the function only calls setrlimit
            preexec_fn=_limits(timeout_s, memory_mb), start_new_session=True, close_fds=True,  # noqa: PLW1509
        )
        readers = [_CappedReader(proc.stdout, output_cap), _CappedReader(proc.stderr, output_cap)]
        for reader in readers:
            reader.start()
        timed_out = False
        try:
            proc.stdin.write(code.encode("utf-8"))
            proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            proc.wait()
        for reader in readers:
            reader.join(timeout=5)
        exit_code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        if exit_code == 128 + signal.SIGXCPU:
            timed_out = True
        stderr = readers[1].text()
        if timed_out:
            stderr += f"\n[killed: time limit of {timeout_s:g} s reached]"
        return SandboxResult(readers[0].text(), stderr, exit_code, timed_out, isolation)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


__all__ = ["SANDBOX_WORKDIR", "SandboxResult", "SandboxUnavailable", "available_isolations", "best_isolation",
           "choose_isolation", "interpreter_paths", "isolation_available", "missing_sandbox_message", "run_python"]
