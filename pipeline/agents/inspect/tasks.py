"""The Inspect tasks: ``race_legs``, ``math``, ``atp``, ``os``, ``git`` (``legwork/<name>`` once installed).

    inspect eval legwork/race_legs --model M -T legs=data/runs/easy-dag-s0 [-T runs=DIR] [-T limit=N]
    inspect eval legwork/race_legs --model M -T legs=ORG/NAME -T revision=<commit> [-T config=legs_dag]
    inspect eval legwork/math --model M -T tasks=DIR [-T runs=DIR] [-T limit=N]     # atp, os, git alike

``legs``: a run folder, ``legs.parquet``, a release or config folder, AAR JSON, or a hub repo id, read at
the pinned ``revision`` (required for a hub id, so a log says exactly which legs it raced). ``runs``: where
the trials go (default ``inspect-runs/<task>-<time>``), one directory per sample and epoch named
``inspect-<item id>-s<epoch - 1>``; ``python -m pipeline.score --legs LEGS --runs RUNS`` (or ``--tasks``)
scores them to the same figures the Inspect scorer put in each score's metadata.
"""
from __future__ import annotations

import os as _os
import sys
import time
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import AgentPrompt, AgentSubmit, as_solver, react
from inspect_ai.approval import Approval, ApprovalPolicy, Approver, approver
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ModelOutput
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    Metric,
    SampleScore,
    Score,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall, ToolCallView, mcp_server_stdio
from inspect_ai.util import message_limit

from pipeline.agents.environments import LEG_SYSTEM_PROMPT, LegEnv, parse_digit
from pipeline.agents.inspect.model import InspectClient
from pipeline.agents.inspect.scripted import ITEMS
from pipeline.agents.runtime import llm_agent, register_agent, run_trial_async
from pipeline.agents.trial import TOOL_LOG, Budget, read_record, trial_dir_name, write_record
from pipeline.config import load_settings
from pipeline.export import HUB_REPO_ID, LEG_CONFIG_PREFIX, DatasetNotFound, legs_from_rows, load_legs
from pipeline.model import Leg
from pipeline.scoring import load_trials, score_trials
from pipeline.scoring.tasks import score_task_trial
from pipeline.scoring.trials import read_tool_log
from pipeline.tasks.common import read_task_rows
from pipeline.tools.registry import Toolbox
from pipeline.tools.toollog import ToolLog

AGENT = "inspect"          # the name trials are filed under (``inspect-<item id>-s<epoch - 1>``)
PROJECT = Path(__file__).resolve().parents[3]
LEG_PROMPT = LEG_SYSTEM_PROMPT.replace(
    "When you are done, reply without a tool\ncall and end your reply with: ANSWER: <digit>",
    "When you are done, write the value you found for every clue,\nthen call the submit tool with the digit.")

# The task families race through the runtime's LLM loop with Inspect's model as the client.
register_agent(AGENT, ("math", "atp", "os", "git"), llm=True)(llm_agent)


def _runs_dir(runs: str | None, name: str) -> Path:
    out = Path(runs) if runs else Path("inspect-runs") / f"{name}-{time.strftime('%Y%m%dT%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    return out.resolve()


def _seed(state: TaskState) -> int:
    return max(0, int(state.epoch or 1) - 1)


# ---- legs -------------------------------------------------------------------------------------------------
def load_race_legs(legs: str, revision: str | None = None, config: str | None = None) -> tuple[list[Leg], Path | None]:
    """The legs of a local dataset (and its path), or of a hub dataset at a pinned revision (path None)."""
    p = Path(legs)
    if p.exists():
        return load_legs(p), p
    m = HUB_REPO_ID.fullmatch(legs)
    if not m:
        raise DatasetNotFound(f"no dataset at {legs} (a run folder, legs.parquet, a release folder, AAR JSON, "
                              "or a hub repo id ORG/NAME with -T revision=<commit>)")
    if not revision:
        raise ValueError(f"{legs}: pin the hub dataset's revision (-T revision=<commit or tag>)")
    import datasets
    repo, config = m["repo"], config or m["config"]
    configs = [config] if config else [c for c in datasets.get_dataset_config_names(repo, revision=revision)
                                       if c.startswith(LEG_CONFIG_PREFIX)]
    out: list[Leg] = []
    for name in configs:
        rows = datasets.load_dataset(repo, name, split="test", revision=revision)
        out += legs_from_rows(rows, where=f"{repo}:{name}@{revision}")
    return out, None


def leg_sample(leg: Leg) -> Sample:
    return Sample(id=leg.leg_id, input=LegEnv(leg, ToolLog(None)).instructions(), target=str(leg.passcode),
                  metadata={"leg_id": leg.leg_id, "variant": leg.variant, "level": leg.level,
                            "step_budget": leg.step_budget, "seed_url": leg.seed_url})


def server_env() -> dict[str, str]:
    """What the tool server needs of this process's environment: Legwork's settings and the project's path
    (``mcp_server_stdio`` passes only a default set of variables)."""
    env = {k: v for k, v in _os.environ.items() if k.startswith(("LEGWORK_", "HF_", "PATH", "HOME"))}
    paths = [str(PROJECT)] + [x for x in _os.environ.get("PYTHONPATH", "").split(_os.pathsep) if x]
    env["PYTHONPATH"] = _os.pathsep.join(dict.fromkeys(paths))
    return env


@approver(name="step_budget")
def step_budget(budget: int) -> Approver:
    """The leg's step budget, as race's loop keeps it: a tool call past it is refused, never run."""
    made = 0

    async def approve(message: str, call: ToolCall, view: ToolCallView, history: list) -> Approval:
        nonlocal made
        if call.function == "submit":
            return Approval(decision="approve")
        if made >= budget:
            return Approval(decision="reject", explanation="step budget exhausted: submit your answer")
        made += 1
        return Approval(decision="approve")

    return approve


@solver
def leg_racer(runs: str, dataset: str | None = None, max_chars: int = 8000, steps: int | None = None) -> Solver:
    """Inspect's ``react()`` over the tools of ``python -m pipeline.tools serve`` (stdio), one server per
    sample writing the trial's tool log and ``trial.json``; the model submits the digit with ``submit``.
    At most the leg's step budget B of tool calls (``steps`` overrides it): an approval policy refuses the
    calls past it, which never reach the server; a model that keeps calling stops a few messages later."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        leg_id = state.metadata["leg_id"]
        trial_id = trial_dir_name(AGENT, leg_id, _seed(state))
        args = ["-m", "pipeline.tools", "serve", "--log-dir", runs, "--trial-id", trial_id, "--leg-id", leg_id,
                "--agent", AGENT, "--max-chars", str(max_chars)]
        if dataset:
            args += ["--dataset", dataset]
        server = mcp_server_stdio(name="legwork", command=sys.executable, args=args, env=server_env(),
                                  cwd=_os.getcwd())
        budget = steps or int(state.metadata["step_budget"])
        agent = react(prompt=AgentPrompt(instructions=LEG_PROMPT, assistant_prompt=None, handoff_prompt=None),
                      tools=[server], submit=AgentSubmit(description="Submit your final answer: one digit 0-9.", answer_only=True,
                                         keep_in_messages=True),
                      approval=[ApprovalPolicy(step_budget(budget), "*")])
        with message_limit(len(state.messages) + 2 * budget + 8):   # a model that keeps calling past B stops
            return await as_solver(agent)(state, generate)

    return solve


def _texts(state: TaskState) -> list[str]:
    return [m.text for m in state.messages if isinstance(m, ChatMessageAssistant) and m.text][-3:]


def _tokens(state: TaskState) -> int | None:
    usage = getattr(state, "token_usage", None)
    return int(usage) if isinstance(usage, (int, float)) else None


def _mean_of(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        xs = [s.score.metadata.get(key) for s in scores if s.score.metadata]
        xs = [float(x) for x in xs if x is not None]
        return sum(xs) / len(xs) if xs else float("nan")
    return compute


@metric
def pvr() -> Metric:
    """Mean page visit rate over the legs that define it (as ``pipeline.score``)."""
    return _mean_of("pvr")


@metric
def rcr() -> Metric:
    """Mean roadblock completion rate over the legs that define it (as ``pipeline.score``)."""
    return _mean_of("rcr")


@scorer(metrics=[accuracy(), stderr(), pvr(), rcr()])
def passcode(runs: str, legs: dict[str, Leg]):
    """The passcode, exactly (FA); the trial's ``trial.json`` gets the answer, the agent's last texts and
    tokens, and ``pipeline.scoring`` scores it: its ``TrialScore`` is the score's metadata."""
    async def score(state: TaskState, target: Target) -> Score:
        leg = legs[state.metadata["leg_id"]]
        d = Path(runs) / trial_dir_name(AGENT, leg.leg_id, _seed(state))
        d.mkdir(parents=True, exist_ok=True)
        (d / TOOL_LOG).touch()
        record = read_record(d) or {"trial_id": d.name, "tool_log": TOOL_LOG, "steps": 0, "messages": []}
        submitted = any(isinstance(m, ChatMessageAssistant) and any(c.function == "submit" for c in m.tool_calls or [])
                        for m in state.messages)
        answer = parse_digit(state.output.completion) if submitted else None
        stop_reason = "answered" if answer is not None else "no_digit" if submitted else "step_limit"
        record.update(leg_id=leg.leg_id, agent=AGENT, seed=_seed(state), answer=answer, messages=_texts(state),
                      tokens=_tokens(state), stop_reason=stop_reason,
                      model=str(state.model), variant=leg.variant, level=leg.level)
        write_record(d, record)
        [s] = score_trials([leg], load_trials(d / "trial.json"))
        return Score(value=CORRECT if s.fa else INCORRECT, answer=answer,
                     explanation=f"passcode {leg.passcode}, answer {answer}; trial {d}",
                     metadata={**s.to_dict(), "trial_dir": str(d)})

    return score


@task
def race_legs(legs: str, revision: str | None = None, config: str | None = None, runs: str | None = None,
              limit: int | None = None, max_chars: int = 8000, steps: int | None = None) -> Task:
    """Race legs: ``react()`` with the tool server's tools; judged by the passcode, FA/PVR/RCR in metadata."""
    loaded, path = load_race_legs(legs, revision, config)
    loaded = loaded[:limit] if limit else loaded
    ITEMS.update((leg.leg_id, leg) for leg in loaded)
    out = _runs_dir(runs, "race_legs")
    return Task(dataset=MemoryDataset([leg_sample(leg) for leg in loaded], name=f"legwork legs {legs}"),
                solver=leg_racer(str(out), str(path) if path is not None else None, max_chars, steps),
                scorer=passcode(str(out), {leg.leg_id: leg for leg in loaded}),
                metadata={"legs": legs, "revision": revision, "runs": str(out)})


# ---- task families ------------------------------------------------------------------------------------------
def family_rows(tasks: str, family: str, limit: int | None) -> list[dict]:
    rows = [r for r in read_task_rows(Path(tasks)) if r["family"] == family]
    if not rows:
        raise ValueError(f"no {family} tasks in {tasks} (build them with python -m pipeline.tasks build "
                         f"--family {family})")
    return rows[:limit] if limit else rows


def task_sample(row: dict) -> Sample:
    return Sample(id=row["task_id"], input=row["prompt"], metadata={
        k: row[k] for k in ("task_id", "family", "domain", "topic", "difficulty")})


@solver
def family_racer(runs: str, rows: dict[str, dict], budget: Budget) -> Solver:
    """Legwork's LLM loop on the task's environment (its tools, sandbox and checker) with the sample's model."""
    toolbox: list[Any] = []

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        row = rows[state.metadata["task_id"]]
        if row["family"] == "math" and not toolbox:
            toolbox.append(Toolbox(load_settings()))
        d = await run_trial_async(row, AGENT, Path(runs), toolbox=toolbox[0] if toolbox else None,
                                  seed=_seed(state), client=InspectClient(), budget=budget)
        record = read_record(d) or {}
        answer = record.get("answer")
        state.output = ModelOutput.from_content(str(state.model), "" if answer is None else str(answer))
        state.messages.append(state.output.message)
        return state

    return solve


@metric
def success_rate() -> Metric:
    """Successes over judged trials (as ``pipeline.score --tasks``; trials nothing here can judge are left out)."""
    def compute(scores: list[SampleScore]) -> float:
        judged = [s.score.metadata for s in scores if s.score.metadata and s.score.metadata.get("judged")]
        return sum(m.get("success") is True for m in judged) / len(judged) if judged else float("nan")
    return compute


@scorer(metrics=[success_rate()])
def family_checker(runs: str, rows: dict[str, dict]):
    """The family's own checker, as the trial recorded it; the score's metadata is the trial's row of
    ``pipeline.score --tasks`` (``pipeline.scoring.tasks.score_task_trial``)."""

    async def score(state: TaskState, target: Target) -> Score:
        row = rows[state.metadata["task_id"]]
        d = Path(runs) / trial_dir_name(AGENT, row["task_id"], _seed(state))
        record = read_record(d)
        if record is None:
            return Score(value=INCORRECT, explanation=f"no trial at {d}", metadata={"judged": True, "success": False})
        trial = {**record, "trial_id": d.name, "calls": read_tool_log(d / record.get("tool_log", TOOL_LOG))}
        figures = score_task_trial(trial, row)
        value = NOANSWER if not figures["judged"] else CORRECT if figures["success"] else INCORRECT
        return Score(value=value, answer=None if record.get("answer") is None else str(record["answer"]),
                     explanation=figures["judge_note"], metadata={**figures, "trial_dir": str(d)})

    return score


def family_task(family: str, tasks: str, runs: str | None, limit: int | None, timeout_s: float, max_tokens: int,
                trial_tokens: int) -> Task:
    rows = family_rows(tasks, family, limit)
    out = _runs_dir(runs, family)
    by_id = {r["task_id"]: r for r in rows}
    ITEMS.update(by_id)
    budget = Budget(timeout_s=timeout_s, max_tokens=max_tokens, trial_tokens=trial_tokens)
    return Task(dataset=MemoryDataset([task_sample(r) for r in rows], name=f"legwork {family} {tasks}"),
                solver=family_racer(str(out), by_id, budget), scorer=family_checker(str(out), by_id),
                metadata={"tasks": tasks, "family": family, "runs": str(out)})


@task(name="math")
def math_tasks(tasks: str, runs: str | None = None, limit: int | None = None, timeout_s: float = 600.0,
               max_tokens: int = 2048, trial_tokens: int = 200_000) -> Task:
    """Math tasks: calculator and knowledge search, a final ``ANSWER:``; judged by ``check_answer``."""
    return family_task("math", tasks, runs, limit, timeout_s, max_tokens, trial_tokens)


@task(name="atp")
def atp_tasks(tasks: str, runs: str | None = None, limit: int | None = None, timeout_s: float = 600.0,
              max_tokens: int = 2048, trial_tokens: int = 200_000) -> Task:
    """ATP: proof files checked by the prover, its verdict back (3 tries); Lean 4/Isabelle unjudged here."""
    return family_task("atp", tasks, runs, limit, timeout_s, max_tokens, trial_tokens)


@task(name="os")
def os_tasks(tasks: str, runs: str | None = None, limit: int | None = None, timeout_s: float = 600.0,
             max_tokens: int = 2048, trial_tokens: int = 200_000) -> Task:
    """OS (AgentBench): shell commands in Legwork's sandbox; judged by the task's match or check script."""
    return family_task("os", tasks, runs, limit, timeout_s, max_tokens, trial_tokens)


@task(name="git")
def git_tasks(tasks: str, runs: str | None = None, limit: int | None = None, timeout_s: float = 600.0,
              max_tokens: int = 2048, trial_tokens: int = 200_000) -> Task:
    """Git (Learn Git Branching): git commands on a real repository; judged by a real-git replay."""
    return family_task("git", tasks, runs, limit, timeout_s, max_tokens, trial_tokens)


TASKS = {"race_legs": race_legs, "math": math_tasks, "atp": atp_tasks, "os": os_tasks, "git": git_tasks}

__all__ = ["AGENT", "TASKS", "atp_tasks", "family_checker", "family_racer", "git_tasks", "leg_racer",
           "load_race_legs", "math_tasks", "os_tasks", "passcode", "race_legs"]
