"""The sandboxes work when the interpreter (a virtualenv) and the project live under /tmp.

A fresh clone with its venv in a temporary folder used to fail every sandboxed run: both
sandboxes give the child a private /tmp and so hid the interpreter. Here a real venv is
built under /tmp (``python -m venv --system-site-packages``, seconds) and a copy of the
``pipeline`` package is put next to it, so both interpreter and project live where the
sandbox puts its tmpfs.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pipeline.config import PROJECT_ROOT
from pipeline.tasks.os.sandbox import sandbox_available
from pipeline.tools.sandbox import available_isolations

ISOLATING = [iso for iso in available_isolations() if iso != "none"]


@pytest.fixture(scope="module")
def tmp_venv():
    """(venv python, project copy) both under /tmp, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="legwork-venv-test-", dir="/tmp"))
    try:
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                        str(root / "venv")], check=True, timeout=120)
        project = root / "clone"
        shutil.copytree(PROJECT_ROOT / "pipeline", project / "pipeline",
                        ignore=shutil.ignore_patterns("__pycache__"))
        yield root / "venv" / "bin" / "python", project
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(python: Path, project: Path, args: list[str], **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LEGWORK_")}
    environ.update(PYTHONPATH=str(project), **env)
    return subprocess.run([str(python), *args], check=False, capture_output=True, text=True, timeout=120, env=environ,
                          cwd=project)


def test_the_copy_really_runs_from_tmp(tmp_venv):
    python, project = tmp_venv
    done = _run(python, project, ["-c", "import sys, pipeline; print(sys.prefix); print(pipeline.__file__)"])
    prefix, module = done.stdout.split()
    assert prefix.startswith("/tmp/") and module.startswith(str(project))


@pytest.mark.skipif(not ISOLATING, reason="no isolating sandbox mode here (bubblewrap or root for unshare)")
@pytest.mark.parametrize("isolation", ISOLATING)
def test_execute_code_from_a_venv_under_tmp(tmp_venv, isolation, tmp_path):
    python, project = tmp_venv
    code = ("import os, sys\nprint(6*7)\nprint(sorted(os.listdir('/tmp')))\n"
            f"print(os.path.isdir({str(project)!r}), sys.prefix == {str(python.parent.parent)!r})\n"
            "try:\n    open(sys.prefix + '/x.txt', 'w')\nexcept OSError as exc:\n"
            "    print(exc.strerror)\n")
    done = _run(python, project, ["-m", "pipeline.tools", "--cache", str(tmp_path / "c.sqlite"), "call",
                                  "python_execute_code", json.dumps({"code": code})],
                LEGWORK_SANDBOX_ISOLATION=isolation)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["isolation"] == isolation and result["exit_code"] == 0, result
    answer, listing, sees_project, write = result["stdout"].splitlines()
    assert answer == "42"
    # the host's /tmp stays hidden: only the work folder and the path to the venv; the venv is
    # there (read-only), the project beside it is not (agent code sees no checkout)
    assert json.loads(listing.replace("'", '"')) == sorted(["work", project.parent.name])
    assert sees_project == "False True" and write == "Read-only file system"


@pytest.mark.skipif(not sandbox_available(), reason="the OS-task sandbox needs root, unshare and overlayfs")
def test_os_session_from_a_venv_under_tmp(tmp_venv):
    python, project = tmp_venv
    script = ("import sys\nfrom pipeline.tasks.os.sandbox import run_session\n"
              "[r] = run_session([('s', f'{sys.executable} -c \"print(6*7)\"; echo made > /etc/legwork-x; "
              "cat /etc/legwork-x; touch {sys.prefix}/x')])\n"
              "print(r.stdout, r.stderr, sep='|')\n")
    done = _run(python, project, ["-c", script])
    assert done.returncode == 0, done.stderr
    out, err = done.stdout.split("|")
    assert out.split() == ["42", "made"]
    assert "Read-only file system" in err                      # the venv is bound read-only
    assert not Path("/etc/legwork-x").exists()                  # and the host is untouched


def test_no_sandbox_is_a_clear_error_not_an_unisolated_run(tmp_venv, tmp_path):
    """Without bwrap and unshare on PATH nothing isolates: the call fails and says what to do;
    the refusal is not cached, so allowing unisolated runs then answers."""
    python, project = tmp_venv
    cache = str(tmp_path / "c.sqlite")
    args = ["-m", "pipeline.tools", "--cache", cache, "call", "python_execute_code", '{"code": "print(6*7)"}']
    refused = _run(python, project, args, PATH="/nonexistent")
    assert refused.returncode == 1
    message = json.loads(refused.stdout)["error"]
    assert "no sandbox" in message and "bubblewrap" in message and "LEGWORK_SANDBOX_ALLOW_NONE" in message
    allowed = _run(python, project, args, PATH="/nonexistent", LEGWORK_SANDBOX_ALLOW_NONE="1")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    result = json.loads(allowed.stdout)
    assert (result["stdout"], result["isolation"]) == ("42\n", "none")
