"""Publishing: hub layout, dataset card, validation gate, upload to a local stand-in hub, token hygiene.

One small release is made once per module: easy legs of both variants (2 linear, 1 DAG) and the two
fast task families (git, and os when its sandbox can run). Rows read back through ``datasets`` are
compared with the source Parquet files, not with what the publisher printed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fake_hub import FakeHub
from in_process import run_module

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.model import ARTIFACT_SCHEMA, Leg
from pipeline.stages.base import StageContext
from pipeline.tasks.common import TASK_SCHEMA, write_task_table
from pipeline.tasks.common import main as tasks_cli
from pipeline.tasks.os.sandbox import sandbox_available

FAKE_TOKEN = "hf_LegworkFakeToken_7f3a9c1e5b_DoNotLeak"
TASK_FAMILIES = ("git", "os") if sandbox_available() else ("git",)


@dataclass
class Inputs:
    root: Path
    cache: Path
    runs: dict[str, Path]            # variant -> run dir
    tasks: dict[str, Path]           # family -> task dir

    def legs(self, variant: str) -> list[Leg]:
        rows = pq.read_table(self.runs[variant] / "legs.parquet").to_pylist()
        return [Leg.from_json(r["leg_json"]) for r in rows]

    def task_rows(self, family: str) -> list[dict]:
        return pq.read_table(self.tasks[family] / f"{family}.parquet").to_pylist()

    def cli_inputs(self) -> list[str]:
        args = []
        for d in self.runs.values():
            args += ["--legs", str(d)]
        for d in self.tasks.values():
            args += ["--tasks", str(d)]
        return args + ["--cache", str(self.cache)]


def run_cli(module: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=PROJECT_ROOT, env=env or dict(os.environ),
                          check=False, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Inputs:
    root = tmp_path_factory.mktemp("inputs")
    cache = root / "cache.sqlite"
    ctx = StageContext.create(load_settings(cache_path=cache))
    runs = {}
    for variant, count in (("linear", 2), ("dag", 1)):
        out = root / f"easy-{variant}"
        run_generation(GenerationParams(level="easy", variant=variant, count=count, seed=3), out, ctx.settings,
                       local_map_stage(ctx))
        runs[variant] = out
    tasks = {}
    for family in TASK_FAMILIES:   # the tasks CLI in this process (its own process: test_task_counts.py)
        out = root / f"tasks-{family}"
        assert tasks_cli(["build", "--family", family, "--count", "2", "--out", str(out), "--cache", str(cache)]) == 0
        tasks[family] = out
    return Inputs(root, cache, runs, tasks)


@pytest.fixture(scope="module")
def dry_run(inputs, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, float]:
    out = tmp_path_factory.mktemp("dry") / "repo"
    t0 = time.perf_counter()
    r = run_module("pipeline.publish", "--repo-id", "legwork/test-release", "--dry-run", "--out", str(out),
                   *inputs.cli_inputs(), cwd=PROJECT_ROOT)
    seconds = time.perf_counter() - t0
    assert r.returncode == 0, r.stdout + r.stderr
    return out, r, seconds


def load_config(repo: Path, config: str, cache_dir: Path):
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import datasets
    return datasets.load_dataset(str(repo), config, cache_dir=str(cache_dir))


# ---- the local repository --------------------------------------------------------------------
def test_every_config_loads_with_datasets_and_matches_the_sources(inputs, dry_run, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo, _result, seconds = dry_run
    configs = sorted(p.name for p in repo.iterdir() if p.is_dir())
    assert configs == sorted(["legs_linear", "legs_dag", *TASK_FAMILIES, "trajectories"])

    for variant in ("linear", "dag"):
        source = sorted(inputs.legs(variant), key=lambda l: l.leg_id)
        ds = load_config(repo, f"legs_{variant}", tmp_path / "hf")
        assert list(ds) == ["test"]
        rows = ds["test"].to_list()
        assert [r["leg_id"] for r in rows] == [l.leg_id for l in source]
        for row, leg in zip(rows, source):
            assert row["passcode"] == leg.passcode and 0 <= row["passcode"] <= 9
            assert row["variant"] == variant and row["level"] == "easy"
            assert row["n_stops"] == len(leg.stops)
            assert row["n_route_info"] == sum(s.kind == "route_info" for s in leg.stops)
            assert row["n_diamonds"] == len({s.diamond for s in leg.stops if s.diamond is not None})
            assert row["n_tool_calls"] == len(leg.trace)
            assert row["step_budget"] == max(10, (3 * max(len(leg.stops), len(leg.trace))) // 2)
            assert row["seed_title"] == leg.seed_title and row["seed_url"] == leg.seed_url
            assert row["riddle"] == "\n\n".join(f"{c.number}. {c.text}" for c in leg.clues)
            simulated = sum(t.provenance == "simulated" for t in leg.trace)
            assert row["simulated_share"] == pytest.approx(simulated / len(leg.trace), abs=1e-6)
            # the nested columns put the leg back together exactly
            body = json.loads(row["leg"])
            assert "trace" not in body
            body["trace"] = json.loads(row["golden_trace"])
            assert Leg.from_dict(body) == leg
        if variant == "dag":
            assert all(r["n_diamonds"] >= 1 for r in rows)
        else:
            assert all(r["n_diamonds"] == 0 for r in rows)

    for family in TASK_FAMILIES:
        source = sorted(inputs.task_rows(family), key=lambda r: r["task_id"])
        rows = load_config(repo, family, tmp_path / "hf")["test"].to_list()
        assert len(rows) == len(source) == 2
        for row, src in zip(rows, source):
            assert {k: row[k] for k in TASK_SCHEMA.names} == src
            assert row["n_tool_calls"] == len(json.loads(src["trace_json"])["steps"])

    size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
    print(f"\ndry-run publish: {seconds:.1f} s (validation included), {size:,} bytes")


def test_card_front_matter_lists_every_config_and_the_datasheet_counts_provenance(inputs, dry_run):
    from huggingface_hub import DatasetCard

    repo, _, _ = dry_run
    card = DatasetCard.load(repo / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-sa-4.0"
    assert data["task_categories"] and data["tags"] and data["pretty_name"]
    names = [c["config_name"] for c in data["configs"]]
    assert sorted(names) == sorted(p.name for p in repo.iterdir() if p.is_dir())
    for c in data["configs"]:
        (entry,) = c["data_files"]
        assert entry["split"] == ("train" if c["config_name"] == "trajectories" else "test")   # training data
        shards = sorted(repo.glob(entry["path"]))
        assert shards and all(s.parent.name == c["config_name"] for s in shards)
    info = {i["config_name"]: i for i in data["dataset_info"]}
    assert sorted(info) == sorted(names)
    # trajectories: one golden chat per leg (git and os golden actions are not registry tool calls)
    expected_rows = {"legs_linear": 2, "legs_dag": 1, **{f: 2 for f in TASK_FAMILIES}, "trajectories": 3}
    for name, n in expected_rows.items():
        (split,) = info[name]["splits"]
        want = "train" if name == "trajectories" else "test"
        assert split == {"name": want, "num_examples": n, "num_bytes": split["num_bytes"]}
        shard_files = list((repo / name).glob("*.parquet"))
        assert info[name]["download_size"] == sum(p.stat().st_size for p in shard_files)
        assert [f["name"] for f in info[name]["features"]] == pq.read_schema(shard_files[0]).names
    legs_features = {f["name"]: f["dtype"] for f in info["legs_dag"]["features"]}
    assert legs_features["passcode"] == "int64" and legs_features["simulated_share"] == "float64"
    assert legs_features["leg"] == legs_features["golden_trace"] == "string"

    text = card.text
    for needle in ("Wikipedia contributors", "CC BY-SA", "GeoNames", "CC BY 4.0", "OpenStreetMap", "ODbL",
                   "crawl", "prevalidate", "diamond", "verbalize", "Every stop's value flows into y*", "Intended use",
                   "Limits"):
        assert needle in text, needle
    for variant, run in inputs.runs.items():
        digest = json.loads((run / "run.json").read_text())["digest"]
        assert f"`{digest}`" in text
        legs = inputs.legs(variant)
        total = sum(len(l.trace) for l in legs)
        simulated = sum(t.provenance == "simulated" for l in legs for t in l.trace)
        assert f"| `legs_{variant}` | {total} | {simulated} | {100 * simulated / total:.1f}% |" in text


def test_shards_are_bounded_sorted_and_byte_identical(inputs, dry_run, tmp_path):
    from pipeline.export.hub import assemble, write_release

    repo, _, _ = dry_run
    args = (list(inputs.runs.values()), list(inputs.tasks.values()))
    # the same inputs written in this process give the CLI's bytes
    same = write_release(assemble("legwork/test-release", *args), tmp_path / "again", PROJECT_ROOT / "templates")
    assert [p.relative_to(tmp_path / "again") for p in same] == \
        sorted(p.relative_to(repo) for p in repo.rglob("*") if p.is_file())
    for p in same:
        assert p.read_bytes() == (repo / p.relative_to(tmp_path / "again")).read_bytes(), p
    # one row per shard: NNNNN-of-NNNNN names, every row once, in order
    small = tmp_path / "small"
    write_release(assemble("legwork/test-release", *args), small, PROJECT_ROOT / "templates", shard_rows=1)
    shards = sorted((small / "legs_linear").iterdir())
    assert [p.name for p in shards] == ["test-00000-of-00002.parquet", "test-00001-of-00002.parquet"]
    ids = [pq.read_table(p).column("leg_id").to_pylist() for p in shards]
    assert ids == [[l.leg_id] for l in sorted(inputs.legs("linear"), key=lambda l: l.leg_id)]
    manifest = json.loads((small / "release.json").read_text())
    assert manifest["configs"]["legs_linear"]["rows"] == 2
    assert [s["path"] for s in manifest["configs"]["legs_linear"]["shards"]] == \
        [f"legs_linear/{p.name}" for p in shards]
    assert str(inputs.root) not in (small / "release.json").read_text() + (small / "README.md").read_text()


# ---- the validation gate ---------------------------------------------------------------------
def test_publish_refuses_a_tampered_leg_and_a_tampered_task(inputs, tmp_path, capsys):
    from pipeline.publish import main

    bad_run = tmp_path / "bad-run"
    shutil.copytree(inputs.runs["dag"], bad_run)
    rows = pq.read_table(bad_run / "legs.parquet").to_pylist()
    leg = json.loads(rows[0]["leg_json"])
    leg["trace"][0]["response"] = leg["trace"][0]["response"].replace("}", ', "x": 1}', 1)
    rows[0]["leg_json"] = json.dumps(leg)
    pq.write_table(pa.Table.from_pylist(rows, schema=ARTIFACT_SCHEMA), bad_run / "legs.parquet")
    out = tmp_path / "out"
    code = main(["--repo-id", "legwork/x", "--dry-run", "--out", str(out), "--legs", str(bad_run),
                 "--cache", str(inputs.cache)])
    err = capsys.readouterr().err
    assert code == 1 and "refusing to publish" in err and rows[0]["leg_id"] in err
    assert not out.exists()

    bad_tasks = tmp_path / "bad-tasks"
    task_rows = inputs.task_rows("git")
    answer = json.loads(task_rows[0]["answer_json"])
    answer["solutionCommand"] = "git commit"
    task_rows[0]["answer_json"] = json.dumps(answer)
    write_task_table(task_rows, bad_tasks / "git.parquet")
    code = main(["--repo-id", "legwork/x", "--dry-run", "--out", str(out), "--tasks", str(bad_tasks),
                 "--cache", str(inputs.cache)])
    err = capsys.readouterr().err
    assert code == 1 and "refusing to publish" in err and task_rows[0]["task_id"] in err
    assert not out.exists()
    # --skip-validate is the explicit way past the gate
    assert main(["--repo-id", "legwork/x", "--dry-run", "--out", str(out), "--tasks", str(bad_tasks),
                 "--skip-validate"]) == 0
    assert (out / "git" / "test-00000-of-00001.parquet").is_file()


# ---- upload ----------------------------------------------------------------------------------
def hub_env(hub: FakeHub, home: Path, token: str | None = FAKE_TOKEN) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(home / "hf-home"), TMPDIR=str(home / "tmp"),
               HF_HUB_DISABLE_PROGRESS_BARS="1")
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    if token:
        env["HF_TOKEN"] = token
    return env


def assert_token_absent(result: subprocess.CompletedProcess, root: Path) -> None:
    assert FAKE_TOKEN not in result.stdout and FAKE_TOKEN not in result.stderr
    for p in root.rglob("*"):
        if p.is_file():
            assert FAKE_TOKEN.encode() not in p.read_bytes(), p


def test_upload_to_a_local_hub_retries_names_the_runs_and_never_shows_the_token(inputs, dry_run, tmp_path):
    repo_dir, _, _ = dry_run
    with FakeHub(FAKE_TOKEN) as hub:
        hub.fail_next["create"] = 1          # a transient 503 (its body echoes the Authorization header)
        env = hub_env(hub, tmp_path)
        # validated by the dry run (the fixture); the gate is test_publish_refuses_a_tampered_leg_and_a_tampered_task
        r = run_cli("pipeline.publish", "--repo-id", "legwork/test-release", "--private", "--backoff", "0.01",
                    "--skip-validate", *inputs.cli_inputs(), env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "retrying" in r.stdout and "Bearer ***" in r.stdout
        assert hub.requests.count(("POST", "/api/repos/create")) == 2
        assert hub.unhandled == []
        repo = hub.repos["legwork/test-release"]
        assert repo.repo_type == "dataset" and repo.private
        # every file arrived, byte for byte the dry run's
        local = {p.relative_to(repo_dir).as_posix(): p.read_bytes() for p in repo_dir.rglob("*") if p.is_file()}
        assert repo.branches["main"] == local
        (commit,) = repo.commits
        for run in inputs.runs.values():
            assert json.loads((run / "run.json").read_text())["digest"] in commit.summary
        assert all(f in commit.summary for f in TASK_FAMILIES)
        assert_token_absent(r, tmp_path)

        # a second release to a branch, one row per shard: the branch is made, stale shards deleted;
        # this time through huggingface_hub's single-commit path (no hf_xet pipeline)
        r2 = run_cli("pipeline.publish", "--repo-id", "legwork/test-release", "--revision", "staging",
                     "--shard-rows", "1", "--skip-validate", *inputs.cli_inputs(), env={**env, "HF_HUB_DISABLE_XET": "1"})
        assert r2.returncode == 0, r2.stdout + r2.stderr
        staging = repo.branches["staging"]
        assert "legs_linear/test-00000-of-00001.parquet" not in staging
        assert {"legs_linear/test-00000-of-00002.parquet", "legs_linear/test-00001-of-00002.parquet"} <= set(staging)
        assert repo.branches["main"] == local
        assert "legs_linear/test-00000-of-00001.parquet" in repo.commits[-1].deleted
        assert hub.unhandled == []
        assert_token_absent(r2, tmp_path)


def test_upload_failure_and_missing_token_are_reported_without_the_token(inputs, tmp_path):
    with FakeHub(FAKE_TOKEN) as hub:
        hub.fail_next["create"] = 10
        r = run_cli("pipeline.publish", "--repo-id", "legwork/down", "--skip-validate", "--retries", "1",
                    "--backoff", "0.01", "--tasks", str(inputs.tasks["git"]), env=hub_env(hub, tmp_path))
        assert r.returncode == 1
        assert "failed after 2 attempt(s)" in r.stderr and "503" in r.stderr
        assert hub.repos == {}
        assert_token_absent(r, tmp_path)

        r = run_cli("pipeline.publish", "--repo-id", "legwork/down", "--skip-validate",
                    "--tasks", str(inputs.tasks["git"]), env=hub_env(hub, tmp_path, token=None))
        assert r.returncode == 2 and "HF_TOKEN" in r.stderr
        api_calls = [r for r in hub.requests if r[1] != "/api/agent-harnesses"]
        assert api_calls == [("POST", "/api/repos/create")] * 2      # nothing was sent without a token
