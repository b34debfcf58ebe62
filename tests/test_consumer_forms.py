"""What consumers hold is what the tools read: a release written by ``publish`` (folder, config
folder, single shard, or rows loaded with ``datasets``) gives back the very legs that were generated,
and ``race`` and ``score`` run on it."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from in_process import run_module

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.export import DatasetNotFound, load_legs
from pipeline.stages.base import StageContext


def cli(module: str, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    if cache:
        env["LEGWORK_CACHE"] = str(cache)
    done = run_module(module, *args, env=env, cwd=PROJECT_ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("consumer")
    ctx = StageContext.create(load_settings(cache_path=root / "cache.sqlite"))
    runs = {}
    for variant in ("linear", "dag"):
        runs[variant] = root / variant
        run_generation(GenerationParams(level="easy", variant=variant, count=2, seed=17), runs[variant],
                       ctx.settings, local_map_stage(ctx))
    out = root / "release"
    cli("pipeline.publish", "--repo-id", "legwork/consumer-test", "--dry-run", "--out", str(out),
        "--legs", str(runs["linear"]), "--legs", str(runs["dag"]), cache=root / "cache.sqlite")
    generated = {leg.leg_id: leg.to_json() for run in runs.values() for leg in load_legs(run)}
    return root, out, generated


def test_every_release_form_gives_back_the_generated_legs(release):
    _, out, generated = release
    assert {leg.leg_id: leg.to_json() for leg in load_legs(out)} == generated
    dag_ids = {leg.leg_id for leg in load_legs(out / "legs_dag")}
    assert dag_ids and dag_ids < set(generated)
    [shard] = sorted((out / "legs_linear").glob("*.parquet"))
    assert {leg.leg_id for leg in load_legs(shard)} == set(generated) - dag_ids


def test_rows_loaded_with_datasets_are_the_same_legs(release, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets
    _, out, generated = release
    loaded = {}
    for config in ("legs_linear", "legs_dag"):
        rows = datasets.load_dataset(str(out), config, split="test", cache_dir=str(tmp_path / "hf"))
        loaded.update({leg.leg_id: leg.to_json() for leg in load_legs(rows)})
    assert loaded == generated


def test_race_and_score_read_a_release_folder(release):
    root, out, generated = release
    runs = root / "oracle-runs"
    done = cli("pipeline.race", "--legs", str(out), "--agent", "oracle", "--out", str(runs))
    assert f"{len(generated)} trials written" in done.stdout
    cli("pipeline.score", "--legs", str(out), "--runs", str(runs), "--out", str(root / "report.json"))
    report = json.loads((root / "report.json").read_text())
    assert report["n_legs"] == len(generated) and report["invalid_trials"] == []
    assert report["overall"]["n"] == len(generated) and report["overall"]["fa"] == 1.0


def test_a_path_that_holds_no_legs_says_so(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here")
    with pytest.raises(DatasetNotFound):
        load_legs(tmp_path)
    with pytest.raises(DatasetNotFound):
        load_legs(tmp_path / "missing" / "folder")


@pytest.mark.parametrize("args", [
    ("pipeline.race", "--legs", "{missing}", "--agent", "oracle", "--out", "{runs}"),
    ("pipeline.score", "--legs", "{missing}", "--runs", "{runs}", "--out", "{runs}/report.json"),
    ("pipeline.validate", "{missing}"),
    ("pipeline.race", "--tasks", "{missing}", "--agent", "oracle", "--out", "{runs}"),
])
def test_the_clis_say_when_a_path_holds_nothing_to_race(tmp_path, args):
    """A wrong path is a one-line message and exit 2, never a traceback or '0 trials written'."""
    filled = [a.format(missing=tmp_path / "missing", runs=tmp_path / "runs") for a in args]
    done = run_module(*filled, cwd=PROJECT_ROOT)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and str(tmp_path / "missing") in done.stderr
