"""The Inspect tasks, offline: Inspect's ``mockllm/model`` with scripted outputs (tool calls included) races
3 generated legs over the stdio tool server and 3 tasks of each family through the runtime; the log written
to disk scores every trial as ``pipeline.score`` scores the same trials (per trial and in the metrics)."""
import json
import math
import os
import random
import shutil
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    get_model,
)

from pipeline.agents.environments import ENVIRONMENTS, worked_solution
from pipeline.tasks.os.sandbox import sandbox_available
from pipeline.tools.toollog import ToolLog

ROOT = Path(__file__).resolve().parents[1]
MOCK = "mockllm/model"
needs_coq = pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc not installed (Debian package coq)")
needs_sandbox = pytest.mark.skipif(not sandbox_available(), reason="OS sandbox needs root, unshare and overlayfs")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """3 generated easy legs, 3 tasks of each family, and the cache their tools were recorded in (the tool
    server and the math tools answer from it)."""
    from pipeline.config import load_settings
    from pipeline.export import load_legs
    from pipeline.tasks.common import FAMILIES, build_task_set

    base = tmp_path_factory.mktemp("inspect")
    cache = base / "cache.sqlite"
    from pipeline.generate import main as generate
    with pytest.MonkeyPatch.context() as env:   # the generate CLI in this process, without LEGWORK_ variables
        for name in [k for k in os.environ if k.startswith("LEGWORK_")]:
            env.delenv(name)
        assert generate(["--difficulty", "easy", "--count", "3", "--task-runner", "local", "--out", str(base / "run"),
                         "--cache", str(cache), "--quiet"]) == 0
    settings = load_settings(cache_path=cache)
    for family in FAMILIES:
        if family == "os" and not sandbox_available():
            continue
        report = build_task_set(family, 3, 0, base / "tasks", settings)
        assert not report.failures, (family, report.failures)
    saved = os.environ.get("LEGWORK_CACHE")
    os.environ["LEGWORK_CACHE"] = str(cache)   # what the tool server and the tasks' toolbox read
    yield {"base": base, "run": base / "run", "legs": load_legs(base / "run"), "tasks": base / "tasks"}
    if saved is None:
        os.environ.pop("LEGWORK_CACHE", None)
    else:
        os.environ["LEGWORK_CACHE"] = saved


def usage(n: int) -> ModelUsage:
    return ModelUsage(input_tokens=100 + n, output_tokens=10, total_tokens=110 + n)


def run_eval(task, outputs, logs: Path):
    """Evaluate with the scripted mock model; return the log as read back from disk."""
    [log] = inspect_eval(task, model=get_model(MOCK, custom_outputs=outputs), log_dir=str(logs), display="none")
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def test_race_legs_scores_like_pipeline_score(world, tmp_path):
    from pipeline.agents.inspect.tasks import race_legs
    from pipeline.score import main as score_main

    legs = world["legs"]
    assert len(legs) == 3

    def script(leg, turn: int) -> ModelOutput:
        """legs 0 and 1: the golden calls, the worked solution and the passcode; leg 2: half the calls, a call
        the server refuses (a page off Wikipedia), a wrong digit."""
        if leg is not legs[2]:
            if turn < len(leg.trace):
                t = leg.trace[turn]
                return ModelOutput.for_tool_call(MOCK, t.tool, t.args)
            return ModelOutput.for_tool_call(MOCK, "submit", {"answer": str(leg.passcode)},
                                             content=worked_solution(leg, str(leg.passcode)))
        half = leg.trace[: len(leg.trace) // 2]
        if turn < len(half):
            return ModelOutput.for_tool_call(MOCK, half[turn].tool, half[turn].args)
        if turn == len(half):
            return ModelOutput.for_tool_call(MOCK, "fetch_webpage", {"url": "https://example.com/"})
        return ModelOutput.for_tool_call(MOCK, "submit", {"answer": str((leg.passcode + 1) % 10)})

    def outputs(input, tools, tool_choice, config):
        names = {t.name for t in tools}
        assert {"fetch_webpage", "submit"} <= names
        prompt = next(m.text for m in input if isinstance(m, ChatMessageUser))
        leg = next(leg for leg in legs if leg.seed_url in prompt)
        turn = sum(isinstance(m, ChatMessageAssistant) for m in input)
        out = script(leg, turn)
        out.usage = usage(sum(isinstance(m, ChatMessageTool) for m in input))
        return out

    runs = tmp_path / "runs"
    log = run_eval(race_legs(legs=str(world["run"]), runs=str(runs)), outputs, tmp_path / "logs")
    by_leg = {s.metadata["leg_id"]: s.scores["passcode"] for s in log.samples}
    assert {leg.leg_id: by_leg[leg.leg_id].value for leg in legs} == \
        {legs[0].leg_id: "C", legs[1].leg_id: "C", legs[2].leg_id: "I"}

    assert score_main(["--legs", str(world["run"]), "--runs", str(runs), "--out", str(tmp_path / "r.json")]) == 0
    rows = {r["leg_id"]: r for r in map(json.loads, (tmp_path / "r.trials.jsonl").read_text().splitlines())}
    assert set(rows) == set(by_leg)
    for leg_id, score in by_leg.items():
        mine, theirs = score.metadata, rows[leg_id]
        for key in ("answer", "fa", "pvr", "rcr", "intermediate", "steps", "n_calls", "useful_calls", "eta",
                    "tokens", "error_class", "judgments"):
            assert mine[key] == theirs[key], (leg_id, key, mine[key], theirs[key])
    # the refused call went through the server into the trial's log, as every call did
    bad = rows[legs[2].leg_id]
    assert bad["n_calls"] == len(legs[2].trace) // 2 + 1 and bad["fa"] == 0
    log_lines = (runs / f"inspect-{legs[2].leg_id}-s0" / "tool_log.jsonl").read_text().splitlines()
    assert json.loads(log_lines[-1])["success"] is False
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    overall = json.loads((tmp_path / "r.json").read_text())["overall"]
    assert metrics["accuracy"] == pytest.approx(overall["fa"])
    assert metrics["pvr"] == pytest.approx(overall["pvr"]) and metrics["rcr"] == pytest.approx(overall["rcr"])


FAMILY_PARAMS = ["math", pytest.param("atp", marks=needs_coq), pytest.param("os", marks=needs_sandbox), "git"]


@pytest.mark.parametrize("family", FAMILY_PARAMS)
def test_family_tasks_score_like_pipeline_score(world, tmp_path, family):
    from pipeline.agents.inspect.tasks import TASKS
    from pipeline.scoring.tasks import score_task_runs
    from pipeline.tasks.common import read_task_rows

    rows = [r for r in read_task_rows(world["tasks"]) if r["family"] == family]
    assert len(rows) == 3
    scripts = {}
    for i, row in enumerate(rows):      # the golden solution on two tasks, the seeded random policy on the third
        env = ENVIRONMENTS[family](row, ToolLog(None), None)
        acts = env.random_actions(random.Random(i)) if i == 2 else env.oracle_actions()
        env.close()
        scripts[row["prompt"]] = acts

    def outputs(input, tools, tool_choice, config):
        prompt = next(m.text for m in input if isinstance(m, ChatMessageUser))
        script = scripts[prompt]
        action = script[min(sum(isinstance(m, ChatMessageAssistant) for m in input), len(script) - 1)]
        out = ModelOutput.for_tool_call(MOCK, action[1], action[2]) if action[0] == "act" else \
            ModelOutput.from_content(MOCK, action[1])
        out.usage = usage(0)
        return out

    runs = tmp_path / "runs"
    log = run_eval(TASKS[family](tasks=str(world["tasks"]), runs=str(runs)), outputs, tmp_path / "logs")
    report, scores = score_task_runs(world["tasks"], runs)
    theirs = {s["task_id"]: s for s in scores}
    assert len(log.samples) == 3 and set(theirs) == {r["task_id"] for r in rows}
    for sample in log.samples:
        score = sample.scores["family_checker"]
        mine = {k: v for k, v in score.metadata.items() if k != "trial_dir"}
        assert mine == theirs[sample.metadata["task_id"]]
        assert score.value == ("N" if not mine["judged"] else "C" if mine["success"] else "I")
    judged = [s for s in scores if s["judged"]]
    oracle_ids = {r["task_id"] for r in rows[:2]}
    assert all(s["success"] for s in judged if s["task_id"] in oracle_ids)   # the golden solutions pass
    [group] = report["by_family"]
    metric = log.results.scores[0].metrics["success_rate"].value
    if judged:
        assert metric == pytest.approx(group["success_rate"])
    else:
        assert math.isnan(metric) and group["success_rate"] is None


def test_entry_point_registers_the_legwork_tasks():
    import tomllib

    from inspect_ai._util.registry import registry_lookup

    import pipeline.agents.inspect._registry as registry
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["inspect_ai"] == {"legwork": registry.__name__}
    for name in ("race_legs", "math", "atp", "os", "git"):
        assert registry_lookup("task", f"legwork/{name}") is not None, name


def test_hub_legs_are_read_at_the_pinned_revision(monkeypatch, world):
    import datasets

    from pipeline.agents.inspect.tasks import load_race_legs
    from pipeline.export.hub import leg_record

    asked = []
    monkeypatch.setattr(datasets, "get_dataset_config_names",
                        lambda repo, revision=None: asked.append(("configs", repo, revision)) or ["legs_dag", "math"])
    monkeypatch.setattr(datasets, "load_dataset", lambda repo, name, split, revision=None: asked.append(
        ("rows", repo, name, split, revision)) or [leg_record(leg) for leg in world["legs"]])
    with pytest.raises(ValueError, match="revision"):
        load_race_legs("org/legwork-release")
    legs, path = load_race_legs("org/legwork-release", revision="0123abc")
    assert path is None and [leg.leg_id for leg in legs] == [leg.leg_id for leg in world["legs"]]
    assert asked == [("configs", "org/legwork-release", "0123abc"),
                     ("rows", "org/legwork-release", "legs_dag", "test", "0123abc")]


# slow: 4-5 s of an Inspect eval over the 3 legs; test_scripted_oracle_earns_one_on_an_imported_aar_leg keeps
# --model legwork/oracle earning 1 on every figure, and test_race_legs_scores_like_pipeline_score the golden calls
# through the same task, server and scorer, in the default run
@pytest.mark.slow
def test_scripted_oracle_model_races_offline(world, tmp_path):
    """``--model legwork/oracle``: the golden solutions through the same task, server and scorer."""
    from pipeline.agents.inspect.tasks import race_legs
    [log] = inspect_eval(race_legs(legs=str(world["run"]), runs=str(tmp_path / "runs")), model="legwork/oracle",
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert metrics["accuracy"] == 1.0 and metrics["pvr"] == 1.0
    assert_golden_earns_one(read_eval_log(log.location))


def assert_golden_earns_one(log) -> None:
    """Every sample's score: 1 on every figure the golden solution is the reference for."""
    for sample in log.samples:
        meta = next(iter(sample.scores.values())).metadata
        got = {k: meta[k] for k in ("fa", "pvr", "rcr", "intermediate", "eta") if meta.get(k) is not None}
        assert set(got) >= {"fa", "intermediate", "eta"} and all(v == 1.0 for v in got.values()), (sample.id, got)


AAR = ROOT.parent / "shared" / "anchors" / "aar" / "data"


@pytest.mark.skipif(not AAR.is_dir(), reason="the AAR anchors are absent")
def test_scripted_oracle_earns_one_on_an_imported_aar_leg(world, tmp_path):
    """An AAR leg has no golden trace: the scripted oracle makes the calls its executor makes here (a
    recorded chain geocoding a river stops at the failed step), then its working: RCR was 0 (no calls)."""
    from pipeline.agents.inspect.tasks import race_legs
    legs = tmp_path / "aar" / "aar-linear" / "hard"
    legs.mkdir(parents=True)
    shutil.copy(AAR / "aar-linear" / "hard" / "sample_000.json", legs)
    [log] = inspect_eval(race_legs(legs=str(tmp_path / "aar"), runs=str(tmp_path / "runs")), model="legwork/oracle",
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    log = read_eval_log(log.location)
    assert len(log.samples) == 1
    assert_golden_earns_one(log)


def test_calls_past_the_step_budget_are_refused(world, tmp_path):
    """A model that never submits: B calls reach the server, the rest are refused; no answer, step_limit."""
    from pipeline.agents.inspect.tasks import race_legs
    leg = world["legs"][0]

    def outputs(input, tools, tool_choice, config):
        out = ModelOutput.for_tool_call(MOCK, "fetch_webpage", {"url": leg.seed_url})
        out.usage = usage(0)
        return out

    runs = tmp_path / "runs"
    log = run_eval(race_legs(legs=str(world["run"]), runs=str(runs), limit=1), outputs, tmp_path / "logs")
    score = log.samples[0].scores["passcode"]
    assert score.value == "I" and score.metadata["steps"] == score.metadata["budget"] == leg.step_budget
    assert score.metadata["step_limit_hit"] is True
    record = json.loads((runs / f"inspect-{leg.leg_id}-s0" / "trial.json").read_text())
    assert record["answer"] is None and record["stop_reason"] == "step_limit"
