"""Every error a user can cause on the command line ends in one sentence on stderr and a non-zero exit,
never a traceback; ``pipeline.score`` prints its table without ``--out``; an export into a folder that
holds its own earlier export replaces it and says so, and refuses a folder holding anything else.

The entry points run through ``pipeline.usage.run_cli`` (their ``__main__`` does): the wiring is run
end to end through ``python -m`` for the export and the scorer, the other commands in process through
the same function (a process each would cost seconds of imports)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from in_process import run_module

from pipeline import attribute, generate, publish, race, score, validate
from pipeline.config import PROJECT_ROOT
from pipeline.export import __main__ as export_cli
from pipeline.export.outdir import MANIFEST
from pipeline.report import __main__ as report_cli
from pipeline.tasks.common import main as tasks_main
from pipeline.usage import USAGE_EXIT, UserError, one_sentence, run_cli

AAR = PROJECT_ROOT.parent / "shared" / "anchors" / "aar" / "data"
NOPE = "/nonexistent/legwork-folder"


def cli(module: str, *args: str, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess:
    return run_module(module, *args, cwd=cwd)


def one_line_error(stderr: str) -> str:
    """The stderr of a refused command: no traceback, and its last line says why in one sentence."""
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert lines, "nothing said on stderr"
    assert "error" in lines[-1].lower(), lines[-1]
    return lines[-1]


# ---- end to end through python -m -------------------------------------------------------------
def test_the_readme_trajectories_command_on_a_fresh_clone_says_one_sentence(tmp_path):
    r = cli("pipeline.export", "trajectories", str(tmp_path / "traj"), "--tasks", str(tmp_path / "data/tasks"))
    assert r.returncode == USAGE_EXIT
    assert "no task directory at" in one_line_error(r.stderr) and not (tmp_path / "traj").exists()


def test_an_unknown_dataset_says_one_sentence(tmp_path):
    for args in (("export", "harbor", NOPE, str(tmp_path / "h")), ("score", "--legs", NOPE, "--runs", str(tmp_path))):
        r = cli(f"pipeline.{args[0]}", *args[1:])
        assert r.returncode == USAGE_EXIT and f"no dataset at {NOPE}" in one_line_error(r.stderr), args
    for argv in (["aar", NOPE, str(tmp_path / "a")], ["trajectories", NOPE, str(tmp_path / "t")]):
        assert run_cli(export_cli.main, argv) == USAGE_EXIT and not (tmp_path / argv[-1]).exists()


def test_a_bad_flag_is_argparses_one_line(tmp_path):
    r = cli("pipeline.export", "harbor", "--no-such-flag", NOPE, str(tmp_path))
    assert r.returncode == 2 and "unrecognized arguments" in one_line_error(r.stderr)


@pytest.mark.skipif(not AAR.is_dir(), reason="the AAR anchors are absent")
def test_score_prints_its_table_without_out_and_refuses_missing_runs(tmp_path):
    legs = tmp_path / "legs" / "aar-linear" / "easy"
    legs.mkdir(parents=True)
    shutil.copy(AAR / "aar-linear" / "easy" / "sample_000.json", legs)
    assert race.main(["--legs", str(tmp_path / "legs"), "--agent", "oracle", "--out", str(tmp_path / "runs")]) == 0
    before = sorted(p.name for p in tmp_path.iterdir())
    r = cli("pipeline.score", "--legs", str(tmp_path / "legs"), "--runs", str(tmp_path / "runs"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Legwork race scores" in r.stdout and "oracle" in r.stdout and "report:" not in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == before          # nothing written
    r = cli("pipeline.score", "--legs", str(tmp_path / "legs"), "--runs", str(tmp_path / "no-runs"))
    assert r.returncode == USAGE_EXIT and "no runs at" in one_line_error(r.stderr)
    (tmp_path / "empty-runs").mkdir()   # a folder with no trial in it: no table of nothing, no exit 0
    r = cli("pipeline.score", "--legs", str(tmp_path / "legs"), "--runs", str(tmp_path / "empty-runs"))
    assert r.returncode == USAGE_EXIT and f"no trials in {tmp_path / 'empty-runs'}" in one_line_error(r.stderr)


# ---- in process, through run_cli ----------------------------------------------------------------
@pytest.mark.parametrize(("main", "argv", "says"), [
    (score.main, ["--tasks", NOPE, "--runs", NOPE], "no task set at"),
    (race.main, ["--legs", NOPE, "--agent", "oracle", "--out", "{tmp}/r"], "no dataset at"),
    (race.main, ["--tasks", NOPE, "--agent", "oracle", "--out", "{tmp}/r"], "no task rows"),
    (validate.main, [NOPE], "no dataset at"),
    (report_cli.main, [NOPE, "--out", "{tmp}/rep"], "no dataset at"),
    (publish.main, ["--repo-id", "org/name", "--legs", NOPE, "--dry-run", "--out", "{tmp}/p", "--skip-validate"],
     "no legs.parquet"),
    (tasks_main, ["validate", NOPE], "no task rows"),
    (attribute.main, ["--tasks", NOPE, "--default", "m", "--test", "m", "--out", "{tmp}/at"], "no endpoint"),
    (attribute.main, ["--tasks", NOPE, "--default", "m@http://127.0.0.1:9/v1", "--test", "m@http://127.0.0.1:9/v1",
                      "--out", "{tmp}/at"], "no task rows in"),
    (generate.main, ["--difficulty", "nope"], "invalid choice"),
    (generate.main, ["--difficulty", "easy", "--snapshot", NOPE, "--out", "{tmp}/g"], f"snapshot not found: {NOPE}"),
    (generate.main, ["--difficulty", "easy", "--cache", "{tmp}", "--out", "{tmp}/g"], "the call cache"),
    (score.main, ["--tasks", "{tmp}", "--runs", "{tmp}"], "no trials in"),
    (export_cli.main, ["trajectories", "{tmp}/t"], "give at least one leg dataset"),
])
def test_each_command_refuses_a_bad_input_in_one_line(main, argv, says, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        code = run_cli(main, argv, prog="legwork")
    except SystemExit as exc:           # argparse's refusal (usage, one "error:" line, exit 2), or SystemExit(message),
        code = exc.code                 # which the interpreter prints on stderr and exits 1 with
        if isinstance(code, str):
            print(code, file=sys.stderr)
    err = capsys.readouterr().err
    assert code not in (0, None)
    line = [ln for ln in err.splitlines() if ln.strip()][-1]
    assert "Traceback" not in err and says in line, err


def test_run_cli_keeps_a_bugs_traceback_and_words_a_users_error():
    def bug(argv):
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        run_cli(bug, [])

    def user(argv):
        raise UserError("no such thing\n  (expected another)")

    assert run_cli(user, []) == USAGE_EXIT
    assert one_sentence(FileNotFoundError(2, "No such file or directory", "/x")) == "No such file or directory: /x"


# ---- exports into a folder that is not empty ----------------------------------------------------
@pytest.mark.skipif(not AAR.is_dir(), reason="the AAR anchors are absent")
def test_an_export_replaces_its_own_earlier_export_and_refuses_anything_else(tmp_path, capsys):
    legs = tmp_path / "legs" / "aar-dag" / "easy"
    legs.mkdir(parents=True)
    for name in ("sample_003.json", "sample_004.json"):
        shutil.copy(AAR / "aar-dag" / "easy" / name, legs)
    out = tmp_path / "out"
    assert export_cli.main(["aar", str(tmp_path / "legs"), str(out)]) == 0
    assert "replaced" not in capsys.readouterr().out
    first = sorted(p.name for p in out.iterdir())
    assert MANIFEST in first and len(first) == 3
    (legs / "sample_004.json").unlink()                       # a smaller export: the stale leg must go
    assert export_cli.main(["aar", str(tmp_path / "legs"), str(out)]) == 0
    said = capsys.readouterr().out
    assert f"replaced the earlier aar export in {out} (2 entries removed)" in said
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, first[0] if "003" in first[0] else first[1]]
    assert json.loads((out / MANIFEST).read_text())["kind"] == "aar"
    # another kind of export, or a file it did not write: refused, nothing touched
    assert run_cli(export_cli.main, ["trajectories", str(tmp_path / "legs"), str(out)]) == USAGE_EXIT
    assert "holds an earlier aar export, not a trajectories export" in capsys.readouterr().err
    (out / "notes.txt").write_text("mine")
    assert run_cli(export_cli.main, ["aar", str(tmp_path / "legs"), str(out)]) == USAGE_EXIT
    assert "'notes.txt', which no earlier aar export wrote" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine" and len(list(out.glob("aar-*.json"))) == 1
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "x").write_text("")
    assert run_cli(export_cli.main, ["aar", str(tmp_path / "legs"), str(stranger)]) == USAGE_EXIT
    assert "holds no earlier Legwork export" in capsys.readouterr().err
