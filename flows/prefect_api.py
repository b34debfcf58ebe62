"""Which Prefect API a flow reports to, and a temporary one that dies with its parent.

Measured on the headline command (``benchmarks/headline.py``): of the ten seconds Prefect added
to three extreme legs, importing Prefect took about 0.7 s, starting its temporary server about
4.4 s (mostly importing the server: FastAPI, SQLAlchemy, the migrations check) and reporting
the task runs to it the rest. The work itself took 1.2 s. So the generator runs as a Prefect
flow where a Prefect API is configured (a server the user runs, Prefect Cloud, a deployment)
and in-process otherwise, with the same driver and the same bytes.

When a flow is asked for with no API configured (``--task-runner thread|process|dask``, the
regeneration flow), Prefect would start its temporary server as an ordinary child process: a
run killed with SIGKILL left it running (230 MB, minutes later). ``temporary_server`` starts the
same server itself, with the kernel told to kill it when its parent dies (``PR_SET_PDEATHSIG``),
and points ``PREFECT_API_URL`` at it before Prefect is imported.
"""
from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def prefect_environment(home: Path) -> None:
    """Project-local, quiet Prefect settings (must run before prefect is imported)."""
    os.environ.setdefault("PREFECT_HOME", str(home))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_LOGGING_TO_API_ENABLED", "false")
    # a local Dask cluster logs connection-closed tracebacks while shutting down: not news to users
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")


def configured_api_url(home: Path, env: dict[str, str] | None = None) -> str | None:
    """The Prefect API the user configured: ``PREFECT_API_URL``, else the active profile's (read
    from ``profiles.toml`` without importing Prefect, which alone costs most of a small run)."""
    env = os.environ if env is None else env
    if env.get("PREFECT_API_URL"):
        return env["PREFECT_API_URL"]
    path = Path(env.get("PREFECT_PROFILES_PATH") or Path(env.get("PREFECT_HOME") or home) / "profiles.toml")
    try:
        profiles = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    active = env.get("PREFECT_PROFILE") or profiles.get("active")
    settings = (profiles.get("profiles") or {}).get(active) or {}
    url = settings.get("PREFECT_API_URL")
    return str(url) if url else None


# Runs first in the server's interpreter: ``die_with_parent``, then uvicorn as ``python -m`` would.
# (A ``preexec_fn`` would do the same before exec, but is unsafe in a process with threads.)
_DIE_WITH_PARENT = """\
import runpy, sys
from flows.prefect_api import die_with_parent
die_with_parent(int(sys.argv[1]))
sys.argv = ["uvicorn", *sys.argv[2:]]
runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)
"""


def die_with_parent(parent: int) -> None:
    """SIGKILL this process when its parent dies (Linux): the temporary server's first act, and
    a process-pool worker's initializer. Leaves at once if the parent is already gone."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def temporary_server(timeout_s: float = 120.0) -> Iterator[str]:
    """Prefect's own temporary server (the command Prefect runs for it), bound to 127.0.0.1,
    killed with its parent; yields its API URL and sets ``PREFECT_API_URL`` while it runs."""
    spec = importlib.util.find_spec("prefect")  # its path, without importing it (settings are read at import)
    if spec is None or not spec.origin:
        raise RuntimeError("Prefect is not installed: run scripts/setup.sh")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    command = [sys.executable, "-c", _DIE_WITH_PARENT, str(os.getpid()), "--app-dir", str(Path(spec.origin).parent.parent),
               "--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(port),
               "--log-level", "error", "--lifespan", "on"]
    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
    env.pop("PREFECT_API_URL", None)
    project = str(Path(__file__).resolve().parent.parent)   # where ``flows`` is, for the server's first line
    env["PYTHONPATH"] = os.pathsep.join(p for p in (project, env.get("PYTHONPATH")) if p)
    server = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout_s
        while not _healthy(url):
            if server.poll() is not None:
                raise RuntimeError(f"the temporary Prefect server exited with code {server.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the temporary Prefect server did not answer within {timeout_s:.0f} s")
            time.sleep(0.1)
        previous = os.environ.get("PREFECT_API_URL")
        os.environ["PREFECT_API_URL"] = url
        try:
            yield url
        finally:
            if previous is None:
                os.environ.pop("PREFECT_API_URL", None)
            else:
                os.environ["PREFECT_API_URL"] = previous
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextlib.contextmanager
def prefect_api(home: Path) -> Iterator[str]:
    """The API flows report to in this block: the configured one, else a temporary server."""
    prefect_environment(home)
    url = configured_api_url(home)
    if url:
        yield url
        return
    with temporary_server() as url:
        yield url
