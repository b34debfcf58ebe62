"""A throwaway Linux root for shell tasks: scripts run as root but can change nothing on the host.

Layout of one session (everything below is torn down when the session ends):
  unshare --mount --pid --net --fork     new mount, PID and network namespaces (needs root)
  tmpfs at <tmp>/sbx                      holds the overlay's upper and work dirs
  overlayfs <tmp>/sbx/root                lower = host /, upper = the tmpfs: writes, deletions,
                                          useradd's /etc edits, all land in the tmpfs
  fresh /proc (PID namespace: tasks see only their own processes), private /tmp, /run,
  a minimal /dev (null, zero, full, random, urandom, tty bound from the host, nothing else)
  read-only binds of the Python interpreter and the project where the above would hide them
                                          (a virtualenv or a clone under /tmp, another filesystem)
  chroot into the overlay for every step, working directory /root

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

from pipeline.tools.sandbox import interpreter_paths

STEP_TIMEOUT_S = 20
OUTPUT_CAP = 64_000

_DRIVER = r"""
set -e
T="$1"; N="$2"; STEP_TIMEOUT="$3"
mount -t tmpfs -o mode=0755,size=256m legwork-sbx "$T/sbx"
mkdir "$T/sbx/upper" "$T/sbx/work" "$T/sbx/root"
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


def hidden_host_paths() -> list[str]:
    """Interpreter and project folders the session root would hide (bound back read-only)."""
    return interpreter_paths(("/tmp", "/run", "/dev", "/proc"), other_filesystems=True)


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
                step_timeout_s: float = STEP_TIMEOUT_S) -> list[StepResult]:
    """Run ``[(name, bash_script), ...]`` one after another in one fresh throwaway root."""
    if os.geteuid() != 0:
        raise SandboxUnavailable("the OS-task sandbox needs root (unshare --mount --pid --net)")
    with tempfile.TemporaryDirectory(prefix="legwork-os-") as tmp:
        base = Path(tmp)
        for sub in ("sbx", "steps", "out"):
            (base / sub).mkdir()
        for i, (_, script) in enumerate(steps):
            (base / "steps" / f"{i}.sh").write_text(script, encoding="utf-8")
        (base / "driver.sh").write_text(_DRIVER, encoding="utf-8")
        (base / "rebind").write_text("".join(f"{p}\n" for p in hidden_host_paths()), encoding="utf-8")
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

