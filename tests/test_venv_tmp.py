"""The sandboxes work when the interpreter (a virtualenv) and the project live under /tmp.

A fresh clone with its venv in a temporary folder used to fail every sandboxed run: both
sandboxes give the child a private /tmp and so hid the interpreter. Here a real venv is
built under /tmp (``python -m venv``, seconds) and a copy of the ``pipeline`` package is put
next to it, so both interpreter and project live where the sandbox puts its tmpfs.

The new venv sees the packages of the interpreter running the suite, wherever they are, through
a ``.pth`` file naming that interpreter's site directories (``site.getsitepackages()``, the user
site, and the other folders on its ``sys.path``). ``--system-site-packages`` would show it the
base interpreter's packages instead: from a suite run in a venv, not the suite's (``No module
named 'pyarrow'``).
"""
from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from pipeline.config import PROJECT_ROOT
from pipeline.tasks.os.sandbox import sandbox_available
from pipeline.tools.sandbox import available_isolations

ISOLATING = [iso for iso in available_isolations() if iso != "none"]


def suite_site_lines() -> list[str]:
    """``.pth`` lines that give another interpreter of the same version this one's packages: its site
    directories through ``site.addsitedir`` (so their own ``.pth`` files count too), then the other
    folders on its ``sys.path`` but the standard library and the project (the copy must be the one
    imported)."""
    sites = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        sites.append(site.getusersitepackages())
    stdlib = {os.path.realpath(sysconfig.get_path(k)) for k in ("stdlib", "platstdlib")}
    skip = stdlib | {os.path.realpath(PROJECT_ROOT), os.path.realpath(os.getcwd())}
    lines = [f"import site; site.addsitedir({d!r})" for d in dict.fromkeys(sites) if os.path.isdir(d)]
    lines += [d for d in dict.fromkeys(sys.path)
              if os.path.isabs(d) and os.path.isdir(d) and d not in sites and os.path.realpath(d) not in skip
              and not os.path.realpath(d).startswith(tuple(s + os.sep for s in stdlib))]
    return lines


@pytest.fixture(scope="module")
def tmp_venv():
    """(venv python, project copy) both under /tmp, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="legwork-venv-test-", dir="/tmp"))
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=120)
        python = root / "venv" / "bin" / "python"
        venv_site = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                                   capture_output=True, text=True, timeout=60).stdout.strip()
        (Path(venv_site) / "_legwork_suite.pth").write_text("\n".join(suite_site_lines()) + "\n")
        project = root / "clone"
        shutil.copytree(PROJECT_ROOT / "pipeline", project / "pipeline",
                        ignore=shutil.ignore_patterns("__pycache__"))
        yield python, project
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
    # the host's /tmp stays hidden: only the work folder, the one folder holding venv and clone, and
    # the suite's own site-packages where they are under /tmp too (a suite run from a venv in /tmp); the
    # venv is there (read-only), the project beside it is not (agent code sees no checkout)
    suite = {Path(os.path.realpath(d)).relative_to("/tmp").parts[0] for d in [*site.getsitepackages(), *sys.path]
             if os.path.isabs(d) and os.path.realpath(d).startswith("/tmp/")
             and ("site-packages" in d or "dist-packages" in d)}
    assert json.loads(listing.replace("'", '"')) == sorted({"work", project.parent.name} | suite)
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
