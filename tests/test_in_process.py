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


# per command, a command line argparse accepts and the command then refuses (a path that is not there): it
# runs the command's own checks and, for most, ``usage.run_cli``'s "python -m <command>: error:" line
ENDPOINT = "m@http://127.0.0.1:9/v1"
REFUSED = {
    "pipeline.attribute": ["--tasks", "{nope}", "--default", ENDPOINT, "--test", ENDPOINT, "--out", "{out}"],
    "pipeline.export": ["aar", "{nope}", "{out}"],
    "pipeline.generate": ["--difficulty", "easy", "--snapshot", "{nope}", "--out", "{out}"],
    "pipeline.publish": ["--repo-id", "org/name", "--dry-run", "--skip-validate", "--legs", "{nope}", "--out", "{out}"],
    "pipeline.race": ["--tasks", "{nope}", "--agent", "oracle", "--out", "{out}"],
    "pipeline.report": ["{nope}", "--out", "{out}"],
    "pipeline.score": ["--legs", "{nope}", "--runs", "{nope}"],
    "pipeline.tasks": ["validate", "{nope}"],
    "pipeline.validate": ["{nope}"],
}


def test_every_command_run_in_process_has_a_refused_command_line():
    assert set(REFUSED) == set(MAINS)


@pytest.mark.parametrize("module", sorted(REFUSED))
def test_a_refused_command_line_is_the_same_in_process_and_in_its_own(module, tmp_path):
    args = [a.format(nope=tmp_path / "nowhere", out=tmp_path / "out") for a in REFUSED[module]]
    real = subprocess.run([sys.executable, "-m", module, *args], cwd=PROJECT_ROOT, env=ENV, capture_output=True,
                          text=True, timeout=120, check=False)
    here = run_module(module, *args, cwd=PROJECT_ROOT, env=ENV)
    assert real.returncode in (1, 2) and str(tmp_path / "nowhere") in real.stderr, real.stderr
    assert "Traceback" not in real.stderr
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
