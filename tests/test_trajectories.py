"""Golden trajectories for training: the ``trajectories`` config (chat-template rows, split ``train``),
OpenAI's fine-tuning lines, and ATIF.

Inputs made once per module: a small generated run of easy legs (2 linear, 1 DAG), math tasks and ATP
tasks. The rows are read back with ``datasets`` from the files the CLI and the publisher write, and
every tool call in them is checked against ``python -m pipeline.tools list`` and replayed through the
offline backends of the tool registry (no cache): the responses must come back byte for byte. Every
row renders with the Qwen2.5, Qwen3 and Llama 3.1 chat templates (``tests/chat_templates.py``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pyarrow.parquet as pq
import pytest
from in_process import MAINS, run_module

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.export import load_legs
from pipeline.export.harbor_schema import trajectory_problems
from pipeline.export.hub import assemble, unverified, write_release
from pipeline.export.trajectories import SPLIT, TRAJECTORY_SCHEMA, atif_trajectory
from pipeline.stages.base import StageContext
from pipeline.tasks.common import main as tasks_cli
from pipeline.tasks.common import read_task_rows
from pipeline.tools.registry import Toolbox
from tests.chat_templates import NAMES, null_keys, template_problems


@dataclass
class Inputs:
    cache: Path
    runs: list[Path]
    tasks: Path


def run_cli(module: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m module args``: in this process where ``in_process`` runs it, else a process of its own."""
    if module in MAINS:
        return run_module(module, *args, cwd=PROJECT_ROOT)
    return subprocess.run([sys.executable, "-m", module, *args], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          check=False, timeout=600)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Inputs:
    root = tmp_path_factory.mktemp("inputs")
    cache = root / "cache.sqlite"
    ctx = StageContext.create(load_settings(cache_path=cache))
    runs = []
    for variant, count in (("linear", 2), ("dag", 1)):
        out = root / f"easy-{variant}"
        run_generation(GenerationParams(level="easy", variant=variant, count=count, seed=5), out, ctx.settings,
                       local_map_stage(ctx))
        runs.append(out)
    tasks = root / "tasks"
    for family, count in (("math", "4"), ("atp", "3")):   # the tasks CLI in this process (its own: test_task_counts)
        assert tasks_cli(["build", "--family", family, "--count", count, "--out", str(tasks), "--cache", str(cache)]) == 0
    return Inputs(cache, runs, tasks)


@pytest.fixture(scope="module")
def exported(inputs, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("traj") / "out"
    r = run_cli("pipeline.export", "trajectories", *map(str, inputs.runs), str(out), "--tasks", str(inputs.tasks))
    assert r.returncode == 0, r.stdout + r.stderr
    return out, r.stdout


def load(path_glob: str, kind: str, cache_dir: Path):
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    import datasets
    return datasets.load_dataset(kind, data_files=path_glob, split="train", cache_dir=str(cache_dir))


@pytest.fixture(scope="module")
def registry_tools() -> dict[str, dict]:
    r = run_cli("pipeline.tools", "list")
    assert r.returncode == 0, r.stderr
    return {t["function"]["name"]: t for t in json.loads(r.stdout)}


def expected_items(inputs: Inputs) -> tuple[dict, dict]:
    legs = {leg.leg_id: leg for run in inputs.runs for leg in load_legs(run)}
    tasks = {r["task_id"]: r for r in read_task_rows(inputs.tasks)
             if r["family"] in ("math", "atp") and not unverified(r)}
    return legs, tasks


def test_cli_writes_one_row_per_leg_and_task(inputs, exported, tmp_path):
    out, stdout = exported
    legs, tasks = expected_items(inputs)
    n_unverified = sum(unverified(r) for r in read_task_rows(inputs.tasks))
    assert f"{len(legs) + len(tasks)} trajectories (" in stdout and f"legs {len(legs)}" in stdout
    if n_unverified:
        assert f"atp (unverified) {n_unverified}" in stdout
    [shard] = (out / "trajectories").glob("*.parquet")
    assert shard.name.startswith(f"{SPLIT}-") and SPLIT == "train"
    assert pq.read_schema(shard).names == TRAJECTORY_SCHEMA.names
    parquet = load(str(out / "trajectories" / "*.parquet"), "parquet", tmp_path / "hf")
    assert parquet.num_rows == len(legs) + len(tasks)
    rows = parquet.to_list()
    assert [r["trajectory_id"] for r in rows] == sorted(r["trajectory_id"] for r in rows)
    assert {r["trajectory_id"] for r in rows} == {f"leg/{k}" for k in legs} | {f"task/{k}" for k in tasks}
    # the JSON lines: OpenAI's fine-tuning form of the same chats, in the same order
    lines = [json.loads(line) for line in (out / "trajectories.openai.jsonl").read_text().splitlines()]
    assert len(lines) == len(rows)
    for r, line in zip(rows, lines):
        assert set(line) == {"messages", "tools", "parallel_tool_calls"} and line["tools"] == r["tools"]
        assert [m["role"] for m in line["messages"]] == [m["role"] for m in r["messages"]]
        assert [m.get("content") for m in line["messages"]] == [m.get("content") for m in r["messages"]]
        for m, o in zip(r["messages"], line["messages"]):
            for c, oc in zip(m.get("tool_calls", []), o.get("tool_calls", [])):
                assert json.loads(oc["function"]["arguments"]) == c["function"]["arguments"]
                assert isinstance(oc["function"]["arguments"], str)
            assert "name" not in o or o["role"] != "tool"
        assert null_keys(line["messages"]) == []


@pytest.mark.parametrize("template", NAMES)
def test_every_exported_row_renders_with_the_chat_template(exported, tmp_path, template):
    """Legs, math and ATP rows, read back with ``datasets``: no error, no null key, arguments and tool
    schemas shown to the model as objects (tests/chat_templates.py)."""
    out, _ = exported
    rows = load(str(out / "trajectories" / "*.parquet"), "parquet", tmp_path / "hf").to_list()
    assert {r["metadata"]["family"] for r in rows} >= {"legs", "math"}
    for row in rows:        # an ATP row (a proof, no calls) has no tools: rendered without a tool preamble
        assert template_problems(template, row["messages"], row["tools"]) == [], row["trajectory_id"]


def test_rows_are_openai_chats_whose_calls_name_registry_tools_with_valid_arguments(inputs, exported, registry_tools,
                                                                                   tmp_path):
    out, _ = exported
    legs, tasks = expected_items(inputs)
    snapshots = {json.loads((run / "run.json").read_text())["digest"]: json.loads((run / "run.json").read_text())
                 for run in inputs.runs}
    for row in load(str(out / "trajectories" / "*.parquet"), "parquet", tmp_path / "hf").to_list():
        msgs, meta = row["messages"], row["metadata"]
        assert [m["role"] for m in msgs[:2]] == ["system", "user"] and msgs[0]["content"] and msgs[1]["content"]
        assert msgs[-1]["role"] == "assistant" and "tool_calls" not in msgs[-1] and msgs[-1]["content"]
        assert null_keys(msgs) == []
        calls, used = [], []
        for i, m in enumerate(msgs[2:-1], 2):
            if m["role"] == "assistant":
                (call,) = m["tool_calls"]
                assert "content" not in m and call["type"] == "function" and call["id"]
                assert call["function"]["name"] in registry_tools, call["function"]["name"]
                args = call["function"]["arguments"]
                assert isinstance(args, dict)
                jsonschema.Draft202012Validator(
                    registry_tools[call["function"]["name"]]["function"]["parameters"]).validate(args)
                answer = msgs[i + 1]
                assert answer["role"] == "tool" and answer["tool_call_id"] == call["id"]
                assert answer["name"] == call["function"]["name"]
                calls.append((call["function"]["name"], args, answer["content"]))
                used.append(call["function"]["name"])
            else:
                assert m["role"] == "tool"
        assert len({c["tool_calls"][0]["id"] for c in msgs if c.get("tool_calls")}) == len(calls)
        tools = row["tools"]
        assert [t["function"]["name"] for t in tools] == [n for n in registry_tools if n in used]
        assert all(t == registry_tools[t["function"]["name"]] for t in tools)
        assert meta["n_tool_calls"] == len(calls) and meta["n_messages"] == len(msgs)
        assert len(meta["tool_provenance"]) == len(calls)
        if meta["kind"] == "leg":
            leg = legs[meta["source_id"]]
            assert [(t.tool, t.args, t.response) for t in leg.trace] == calls
            assert meta["tool_provenance"] == [t.provenance for t in leg.trace]
            assert meta["passcode"] == str(leg.passcode) and msgs[-1]["content"].endswith(f"ANSWER: {leg.passcode}")
            assert (meta["level"], meta["variant"], meta["n_stops"]) == (leg.level, leg.variant, len(leg.stops))
            assert leg.seed_url in msgs[1]["content"] and leg.riddle in msgs[1]["content"]
            digest = meta["source"].removeprefix("run:")
            assert meta["snapshot"] == snapshots[digest]["snapshot"]
            assert snapshots[digest]["params"]["variant"] == leg.variant
        else:
            task = tasks[meta["source_id"]]
            assert meta["family"] == task["family"] and msgs[1]["content"] == task["prompt"]
            steps = json.loads(task["trace_json"])["steps"]
            assert [(s["tool"], s["args"], s["response"]) for s in steps] == calls
            assert meta["passcode"] == json.dumps(json.loads(task["answer_json"]), sort_keys=True,
                                                  separators=(",", ":"), ensure_ascii=False)
            assert meta["source"].startswith("tasks:") and meta["snapshot"] is None
            if task["family"] == "math":
                assert msgs[-1]["content"] == f"ANSWER: {json.loads(task['answer_json'])['value']}"
            else:
                assert msgs[-1]["content"] == json.loads(task["answer_json"])["proof"] and not calls


def test_replaying_every_call_through_the_registry_gives_the_responses_byte_for_byte(inputs, exported, tmp_path):
    out, _ = exported
    offline = Toolbox(load_settings(cache_path=tmp_path / "fresh.sqlite"), cache=False)   # computed, not recalled
    n = 0
    for row in load(str(out / "trajectories" / "*.parquet"), "parquet", tmp_path / "hf").to_list():
        msgs = row["messages"]
        for i, m in enumerate(msgs):
            for call in m.get("tool_calls", []):
                got = offline.call(call["function"]["name"], call["function"]["arguments"])
                assert got.response_json == msgs[i + 1]["content"], (row["trajectory_id"], call)
                n += 1
    assert n > 10


def test_legs_without_a_golden_trace_are_counted_not_written():
    from pipeline.export.trajectories import Origin, trajectory_rows
    from tests.test_race import small_leg
    leg, bare = small_leg(), small_leg()
    bare.leg_id, bare.trace = "imported", []           # as an AAR import arrives: no recorded calls
    rows, left_out = trajectory_rows([(leg, Origin()), (bare, Origin())])
    assert [r["trajectory_id"] for r in rows] == ["leg/race-1"]
    assert left_out == {"legs without a golden trace": 1}


def test_atif_trajectories_validate_against_harbors_schema(inputs, exported, tmp_path):
    out, _ = exported
    rows = load(str(out / "trajectories" / "*.parquet"), "parquet", tmp_path / "hf").to_list()
    for row in rows:
        atif = atif_trajectory(row)
        assert trajectory_problems(atif) == [], row["trajectory_id"]
        calls = [c for s in atif["steps"] for c in s.get("tool_calls") or []]
        assert len(calls) == row["metadata"]["n_tool_calls"]
        assert atif["steps"][-1]["source"] == "agent" and atif["steps"][-1]["message"] == row["messages"][-1]["content"]
    # the Harbor export of the same legs carries them as solution/trajectory.json
    harbor = tmp_path / "harbor"
    r = run_cli("pipeline.export", "harbor", str(inputs.runs[0]), str(harbor))
    assert r.returncode == 0, r.stderr
    for path in harbor.glob("*/solution/trajectory.json"):
        data = json.loads(path.read_text())
        assert trajectory_problems(data) == []
        [row] = [r for r in rows if r["trajectory_id"] == data["session_id"]]
        assert data == json.loads(json.dumps(atif_trajectory(row)))


def test_a_release_carries_the_trajectories_config(inputs, tmp_path, monkeypatch):
    """``publish`` (``hub.assemble``) adds the config; the card's YAML loads it through ``datasets``."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets
    from huggingface_hub import DatasetCard

    repo = tmp_path / "repo"
    write_release(assemble("legwork/test", inputs.runs, [inputs.tasks]), repo, PROJECT_ROOT / "templates")
    legs, tasks = expected_items(inputs)
    ds = datasets.load_dataset(str(repo), "trajectories", split="train", cache_dir=str(tmp_path / "hf"))
    assert ds.num_rows == len(legs) + len(tasks)
    assert all(template_problems("llama3_1", r["messages"], r["tools"]) == [] for r in ds if r["tools"])
    assert {r["metadata"]["source_id"] for r in ds} == set(legs) | set(tasks)
    card = DatasetCard.load(repo / "README.md")
    info = {i["config_name"]: i for i in card.data.to_dict()["dataset_info"]}
    assert [f["name"] for f in info["trajectories"]["features"]] == TRAJECTORY_SCHEMA.names
    assert [s["name"] for s in info["trajectories"]["splits"]] == ["train"]
    assert {c["config_name"]: c["data_files"][0]["split"] for c in card.data.to_dict()["configs"]}["trajectories"] \
        == "train"
    assert "python -m pipeline.export trajectories" in card.text and "tool_calls" in card.text
