"""The project's command lines run inside the test process: ``run_module("pipeline.generate", ...)``
does what ``python -m pipeline.generate ...`` does once its interpreter has started (the same ``main``
through the same ``usage.run_cli``, with the given arguments, environment and working folder; stdout,
stderr and the exit status come back as ``subprocess.run`` gives them), without starting one.

Why: a new interpreter pays 0.7-1.4 s of imports (pyarrow pulls in pandas, datasets, Prefect) before
the command does anything, and the default suite started about 150 of them on 2 cores. What only a new
interpreter shows stays a real process in its test: the ``python -m`` entry itself (one test per
command, ``tests/test_in_process.py`` compares the two), the imports a command pays, the locale and
encoding it starts with, signals, kills, process pools and servers.

Not for concurrent use: the environment, the working folder and ``sys.argv`` are the process's own,
swapped in for the call and restored after it (a test runs one command at a time).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os
import subprocess
import sys
import traceback
from pathlib import Path

# module run by ``python -m`` -> module holding the ``main`` its ``__main__`` block runs through ``run_cli``
MAINS = {
    "pipeline.attribute": "pipeline.attribute",
    "pipeline.export": "pipeline.export.__main__",
    "pipeline.generate": "pipeline.generate",
    "pipeline.publish": "pipeline.publish",
    "pipeline.race": "pipeline.race",
    "pipeline.report": "pipeline.report.__main__",
    "pipeline.score": "pipeline.score",
    "pipeline.tasks": "pipeline.tasks.common",
    "pipeline.validate": "pipeline.validate",
}


def run_module(module: str, *args: str, env: dict | None = None, cwd: str | Path | None = None,
               timeout: float | None = None) -> subprocess.CompletedProcess:
    """``subprocess.run([python, "-m", module, *args], env=env, cwd=cwd, capture_output=True,
    text=True)``, run in this process. ``timeout`` is accepted for the callers' symmetry and not
    enforced (pytest's own timeout is). An exception that is not a ``SystemExit`` ends the call as it
    ends an interpreter: its traceback on stderr and exit status 1."""
    from pipeline.usage import run_cli
    main = importlib.import_module(MAINS[module]).main
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = [_script(module), *argv]   # what ``python -m`` puts there (argparse's prog comes from it)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = run_cli(main, argv, prog=f"python -m {module}")
            except SystemExit as exc:
                code = _exit_status(exc.code)
            except Exception:   # noqa: BLE001 - an interpreter prints it and exits 1; so does this
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess([sys.executable, "-m", module, *argv], code, out.getvalue(), err.getvalue())


def _script(module: str) -> str:
    """The file ``python -m module`` runs: the module's, or its package's ``__main__``."""
    spec = importlib.util.find_spec(module)
    if spec.submodule_search_locations is not None:
        spec = importlib.util.find_spec(f"{module}.__main__")
    return spec.origin


def _exit_status(code) -> int:
    """The status an interpreter exits with for ``SystemExit(code)``; a message goes to stderr."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
