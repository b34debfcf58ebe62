"""A throwaway Linux root for shell tasks: scripts run as root but can change nothing on the host.

Layout of one session (everything below is torn down when the session ends):
  unshare --mount --pid --net --fork     new mount, PID and network namespaces (needs root)
  tmpfs at <tmp>/sbx                      holds the overlay's upper and work dirs
  overlayfs <tmp>/sbx/root                lower = host /, upper = the tmpfs: writes, deletions,
                                          useradd's /etc edits, all land in the tmpfs
  fresh /proc (PID namespace: tasks see only their own processes), private /tmp, /run,
  a minimal /dev (null, zero, full, random, urandom, tty bound from the host, nothing else)
  the host's private places masked: an empty folder over the home folders (/root, /home), every
                                          top-level folder a Linux system does not have (/work,
                                          /srv, /mnt: where checkouts, runs and datasets live),
                                          the project checkout and the caller's own ``private``
                                          folders; /etc/shadow and /etc/gshadow with every password
                                          locked, ssh host keys and /etc/ssl/private emptied
  read-only binds of the Python interpreter where the above would hide it
                                          (a virtualenv under /tmp, pyenv under /root)
  chroot into the overlay for every step, working directory /root (empty)

Steps of one session run in order in the same root, so an init script's files and background
processes are there for the solution and the check. The session's PID 1 is the driver; when it
exits the kernel kills every process left in the namespace.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pipeline.tools.sandbox import interpreter_paths, outermost, private_paths

STEP_TIMEOUT_S = 20
OUTPUT_CAP = 64_000

_DRIVER = r"""
set -e
T="$1"; N="$2"; STEP_TIMEOUT="$3"
mount -t tmpfs -o mode=0755,size=256m legwork-sbx "$T/sbx"
mkdir "$T/sbx/upper" "$T/sbx/work" "$T/sbx/root"
cp -a "$T/upper/." "$T/sbx/upper/"
mount -t overlay legwork-root -o "lowerdir=/,upperdir=$T/sbx/upper,workdir=$T/sbx/work" "$T/sbx/root"
R="$T/sbx/root"
mount -t proc proc "$R/proc"
mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
mount -t tmpfs -o mode=0755 tmpfs "$R/run"
mount -t tmpfs -o mode=0755 tmpfs "$R/dev"
for d in null zero full random urandom tty; do
  touch "$R/dev/$d"; mount --bind "/dev/$d" "$R/dev/$d"
done
mkdir "$R/dev/shm" "$R/dev/pts"; mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm"
ln -s /proc/self/fd "$R/dev/fd"; ln -s /proc/self/fd/0 "$R/dev/stdin"
ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
while IFS= read -r p; do
  [ -n "$p" ] || continue
  if [ -L "$R$p" ]; then continue
  elif [ "$p" = /root ]; then mount -t tmpfs -o mode=0700 legwork-mask "$R$p"
  elif [ -d "$R$p" ]; then mount -t tmpfs -o mode=0755 legwork-mask "$R$p"
  elif [ -e "$R$p" ]; then mount --bind /dev/null "$R$p"
  fi
done < "$T/mask"
while IFS= read -r p; do
  [ -n "$p" ] || continue
  mkdir -p "$R$p"; mount --rbind "$p" "$R$p"; mount -o remount,bind,ro "$R$p"
done < "$T/rebind"
ip link set lo up 2>/dev/null || true
set +e
i=0
while [ "$i" -lt "$N" ]; do
  script="$(cat "$T/steps/$i.sh")"
  HOME=/root USER=root LOGNAME=root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    timeout -k 2 "$STEP_TIMEOUT" chroot "$R" /bin/bash -c "cd /root 2>/dev/null || cd /; $script" \
    < /dev/null > "$T/out/$i.stdout" 2> "$T/out/$i.stderr"
  echo $? > "$T/out/$i.rc"
  i=$((i + 1))
done
"""


@dataclass(frozen=True)
class StepResult:
    name: str
    stdout: str
    stderr: str
    exit_code: int


# Top-level folders of a Linux system (FHS): kept as the host has them. Every other top-level entry
# (/work, /srv, /mnt, /media, a machine's own /data) is where checkouts, runs and datasets live.
SYSTEM_TOP = frozenset({"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc",
                        "run", "sbin", "sys", "tmp", "usr", "var"})
ETC_SECRETS = ("/etc/ssl/private", "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
               "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key")
PASSWORD_FILES = ("shadow", "gshadow", "shadow-", "gshadow-")
_FRESH_ROOTS = ("/tmp", "/run", "/dev", "/proc")


def masked_host_paths(private: tuple[str, ...] = ()) -> list[str]:
    """What a session sees empty: what the code sandbox never shows (the checkout, home folders, the
    caller's ``private`` folders: ``tools.sandbox.private_paths``), every non-system top-level entry and
    /etc's keys. Outermost only (a masked parent hides its children)."""
    top = [f"/{name}" for name in os.listdir("/") if name not in SYSTEM_TOP]
    return outermost({*private_paths(tuple(private)), *top, *ETC_SECRETS} - {"/"})


def hidden_host_paths(masked: list[str] | None = None) -> list[str]:
    """Interpreter folders the session root would hide (fresh /tmp, masks, another filesystem),
    bound back read-only; never the project checkout itself."""
    masked = masked_host_paths() if masked is None else masked
    return [p for p in interpreter_paths((*_FRESH_ROOTS, *masked), other_filesystems=True, with_project=False)
            if p not in masked]


def locked_passwords(text: str) -> str:
    """An /etc/shadow or /etc/gshadow with every password field replaced by ``!`` (locked): the
    users stay, their hashes do not."""
    lines = []
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) > 2:
            fields[1] = "!"
        lines.append(":".join(fields))
    return "".join(f"{line}\n" for line in lines)


def _write_upper_etc(upper: Path) -> None:
    """Locked copies of the host's password files, laid in the overlay's upper layer so a task's
    ``useradd`` still edits them (inside the session)."""
    etc = upper / "etc"
    etc.mkdir(parents=True)
    for name in PASSWORD_FILES:
        host = Path("/etc") / name
        try:
            text, st = host.read_text(encoding="utf-8", errors="replace"), host.stat()
        except OSError:
            continue
        copy = etc / name
        copy.write_text(locked_passwords(text), encoding="utf-8")
        os.chown(copy, st.st_uid, st.st_gid)
        os.chmod(copy, st.st_mode & 0o777)
    os.chmod(etc, 0o755)


class SandboxUnavailable(RuntimeError):
    """The machine cannot build the sandbox (not root, no unshare or overlayfs)."""


@lru_cache(maxsize=1)
def sandbox_available() -> bool:
    """True if a trivial session runs (root, util-linux unshare, overlayfs in a mount namespace)."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("chroot"):
        return False
    try:
        return run_session([("probe", "echo ok")], timeout_s=30)[0].stdout.strip() == "ok"
    except (SandboxUnavailable, OSError, subprocess.SubprocessError):
        return False


def run_session(steps: list[tuple[str, str]], timeout_s: float = 120,
                step_timeout_s: float = STEP_TIMEOUT_S, private: tuple[str, ...] = ()) -> list[StepResult]:
    """Run ``[(name, bash_script), ...]`` one after another in one fresh throwaway root;
    ``private`` names more host folders the session must see empty (a dataset being raced)."""
    if os.geteuid() != 0:
        raise SandboxUnavailable("the OS-task sandbox needs root (unshare --mount --pid --net)")
    with tempfile.TemporaryDirectory(prefix="legwork-os-") as tmp:
        base = Path(tmp)
        for sub in ("sbx", "steps", "out", "upper"):
            (base / sub).mkdir()
        _write_upper_etc(base / "upper")
        masked = masked_host_paths(private)
        (base / "mask").write_text("".join(f"{p}\n" for p in masked), encoding="utf-8")
        for i, (_, script) in enumerate(steps):
            (base / "steps" / f"{i}.sh").write_text(script, encoding="utf-8")
        (base / "driver.sh").write_text(_DRIVER, encoding="utf-8")
        (base / "rebind").write_text("".join(f"{p}\n" for p in hidden_host_paths(masked)), encoding="utf-8")
        cmd = ["unshare", "--mount", "--pid", "--net", "--fork", "--propagation", "private",
               "/bin/bash", str(base / "driver.sh"), str(base), str(len(steps)), str(int(step_timeout_s))]
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise SandboxUnavailable(f"sandbox session exceeded {timeout_s:.0f} s")
        results = []
        for i, (name, _) in enumerate(steps):
            rc_file = base / "out" / f"{i}.rc"
            if not rc_file.exists():
                raise SandboxUnavailable(f"sandbox setup failed (exit {proc.returncode}): "
                                         f"{err.decode(errors='replace').strip()[-400:]}")
            results.append(StepResult(
                name=name,
                stdout=(base / "out" / f"{i}.stdout").read_bytes()[:OUTPUT_CAP].decode("utf-8", "replace"),
                stderr=(base / "out" / f"{i}.stderr").read_bytes()[:OUTPUT_CAP].decode("utf-8", "replace"),
                exit_code=int(rc_file.read_text().strip() or -1)))
        return results

