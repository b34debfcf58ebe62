"""``in_process.run_module`` gives what ``python -m`` gives: for every command the tests run in their own
process, one real interpreter and one in-process call of the same command line must agree on exit
status, stdout and stderr. This is also each command's one run through its ``python -m`` entry (the
``__main__`` block that hands ``main`` to ``usage.run_cli``), which the tests that run it in-process skip."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from in_process import MAINS, run_module

from pipeline.config import PROJECT_ROOT

# COLUMNS: argparse wraps its usage to the terminal's width; a pipe and this process may see different ones
ENV = {**os.environ, "COLUMNS": "100"}


@pytest.mark.parametrize("module", sorted(MAINS))
def test_a_refused_command_line_is_the_same_in_process_and_in_its_own(module, tmp_path):
    args = ["--no-such-option", str(tmp_path / "nowhere")]
    real = subprocess.run([sys.executable, "-m", module, *args], cwd=PROJECT_ROOT, env=ENV, capture_output=True,
                          text=True, timeout=120, check=False)
    here = run_module(module, *args, cwd=PROJECT_ROOT, env=ENV)
    assert real.returncode == 2 and "error:" in real.stderr, real.stderr
    assert (here.returncode, here.stdout, here.stderr) == (real.returncode, real.stdout, real.stderr)


def test_a_bug_ends_the_call_as_it_ends_an_interpreter(tmp_path, monkeypatch):
    """An exception that is neither a user's error nor an exit: its traceback on stderr, exit status 1."""
    import pipeline.score

    def broken(argv):
        raise RuntimeError("a bug")
    monkeypatch.setattr(pipeline.score, "main", broken)
    done = run_module("pipeline.score", "--runs", str(tmp_path))
    assert done.returncode == 1 and "Traceback" in done.stderr and "RuntimeError: a bug" in done.stderr


def test_the_environment_folder_and_arguments_are_given_back(tmp_path):
    before = (dict(os.environ), os.getcwd(), list(sys.argv))
    done = run_module("pipeline.validate", str(tmp_path / "nowhere"), cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    assert done.returncode == 2 and str(tmp_path / "nowhere") in done.stderr
    assert (dict(os.environ), os.getcwd(), list(sys.argv)) == before
