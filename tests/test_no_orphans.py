"""A generation killed with SIGKILL leaves no process behind, whatever runs its stages.

Prefect's temporary server used to outlive a killed run (uvicorn, 230 MB, still alive a minute
later); a scheduled run that crashes now and then piled them up. The run is started in a session
of its own, killed mid-flow, and every process of that session must be gone shortly after.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.config import PROJECT_ROOT


def session_processes(sid: int) -> list[str]:
    """Live (not zombie) processes of session ``sid``: "pid command"."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()   # after "pid (comm) ": state ppid pgrp session ...
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(f"{proc.name} {cmdline[:120]}")
    return found


# thread: the same Prefect server as process, behind the slow marker (15 s of the default run); process: 13 s
# of a Prefect flow on a process pool, slow too: test_the_temporary_prefect_server_dies_with_its_killed_parent
# keeps the server dying with a killed run in the default run
@pytest.mark.parametrize("runner", ["auto", pytest.param("thread", marks=pytest.mark.slow),
                                    pytest.param("process", marks=pytest.mark.slow)])
def test_a_killed_run_leaves_no_process(tmp_path, runner):
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEGWORK_", "PREFECT_API_URL"))}
    env["LEGWORK_CACHE"] = str(tmp_path / "cache.sqlite")
    run = subprocess.Popen([sys.executable, "-m", "pipeline.generate", "--difficulty", "hard", "--count", "8",
                            "--seed", "5", "--batch-size", "2", "--task-runner", runner, "--out", str(out), "--quiet"],
                           cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not any((out / "artifacts").rglob("*.parquet")):   # the flow is under way (server up, stages running)
            assert run.poll() is None, f"the run ended before it could be killed (exit {run.returncode})"
            assert time.monotonic() < deadline, "no stage artifact within 180 s"
            time.sleep(0.05)
        if runner != "auto":
            assert len(session_processes(run.pid)) > 1, "a Prefect run should have a server process to leave behind"
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
        deadline = time.monotonic() + 20
        while (left := session_processes(run.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"processes left behind by a killed run: {left}"
    finally:
        for line in session_processes(run.pid):   # never leak into the rest of the suite
            os.kill(int(line.split()[0]), signal.SIGKILL)


def test_the_temporary_prefect_server_dies_with_its_killed_parent():
    """The server ``prefect_api`` starts for a flow where no Prefect API is configured (as ``pipeline.generate``
    asks for it, with its Prefect home) is gone as soon as the process that started it is killed with SIGKILL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEGWORK_", "PREFECT_API_URL"))}
    code = ("import time\nfrom flows.prefect_api import prefect_api\nfrom pipeline.generate import PREFECT_HOME\n"
            "with prefect_api(PREFECT_HOME) as url:\n    print(url, flush=True)\n    time.sleep(600)\n")
    run = subprocess.Popen([sys.executable, "-c", code], cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        url = run.stdout.readline()   # printed once the server answers its health check
        assert url.startswith("http://127.0.0.1:"), f"no temporary server (exit {run.poll()})"
        assert len(session_processes(run.pid)) > 1, "the temporary server should be a process of its own"
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
        deadline = time.monotonic() + 20
        while (left := session_processes(run.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"processes left behind by a killed run: {left}"
    finally:
        for line in session_processes(run.pid):   # never leak into the rest of the suite
            os.kill(int(line.split()[0]), signal.SIGKILL)
        run.stdout.close()
