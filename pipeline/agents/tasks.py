"""Races on task sets (math, atp, os, git): one environment per family, agents oracle, random, llm, modular.

``python -m pipeline.race --tasks DIR --agent {oracle,random,llm,modular} --out RUNS`` lands here.

Environments (each judges with its family's own checker, never a second one):
  math  the agent may call ``calculator`` and ``math_knowledge_search`` through the ``Toolbox``
        (logged by ``call_tool``, the legs' tool-log format) and ends with ``ANSWER: <answer>``;
        judged by ``pipeline.tasks.math.answers.check_answer``.
  atp   the agent submits the proof file; the prover's verdict comes back for another try (at most
        ``ATP_TRIES``); judged by ``pipeline.tasks.atp.verify.check_proof`` on its last submission.
        Where no prover runs here (Lean 4, Isabelle; Coq without coqc) a proof that passes the
        structural checks is not judged: ``judged: false``, ``success: null`` and the reason in
        ``judge_note``. A proof the structural checks reject is judged a failure.
  os    one shell command per turn, run in the sandbox (``pipeline.tasks.os.sandbox``) after the
        task's init and start scripts, its output and exit code back as the observation
        (AgentBench style). The sandbox keeps no session between turns, so each turn runs init,
        start and every earlier command again in a fresh root before the new one. Answer tasks
        are judged by the submitted answer against ``evaluation.match``, check tasks by the
        task's check script run after all the agent's commands.
  git   git commands (Learn Git Branching verbs), the tree after each as the observation, played
        on a real repository (``pipeline.tasks.git.replay.Repo``); judged by replaying the
        commands git accepted from the start tree with real git and comparing the result with the
        goal by the LGB rules (``pipeline.tasks.git.trees.trees_match`` with the level's flags).

Agents:
  oracle  follows the row's golden solution (math: the golden trace's tool calls and answer; atp:
          the golden proof; os: the example script, then the expected answer or finish; git: the
          solution commands);
  random  a seeded, plausible but uninformed policy: a random integer for math, one generic tactic
          for ATP, a harmless command then a random integer for OS, one random git command on the
          start tree's refs for git;
  llm     the family's format over an OpenAI-compatible endpoint (``pipeline.llm.LLMClient``):
          function tools for math (the two math tools), os (``bash``, ``answer``, ``finish``) and
          git (``git``), plain replies holding the proof for ATP. ``usage.total_tokens`` of every
          reply is summed into the trial's ``tokens``;
  modular CapaBench's planning, reasoning, action and reflection modules on the same environments
          (``pipeline.agents.modular``; the client is a ``ModularAgent``), trials filed under its label
          ``modular-PtRdAtFd-<models hash>`` (directory and ``agent``), with a ``modular`` entry.

The environments, the agents and the trial writer are the runtime's (``pipeline.agents.environments``,
``pipeline.agents.runtime``, ``pipeline.agents.trial``); this module reads task sets and races them.

A trial is ``RUNS/<agent>-<task_id>-s<seed>/trial.json`` plus ``tool_log.jsonl``: one line per
action the environment executed (math tool calls, ``submit_proof``, ``bash``, ``git``), written by
``pipeline.tools.toollog.ToolLog``; ``steps`` counts those lines. An agent that raises gives a failed
trial (``stop_reason: "crash"``, ``agent_error``), never a failed run. ``trial.json`` is written
last and atomically; a re-run skips every trial whose ``trial.json`` is complete, except crashed ones
(``stop_reason`` crash or llm_error), which it runs again, as ``pipeline.race`` does for legs.
"""
from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.agents.environments import (
    ATP_TRIES,
    ENVIRONMENTS,
    GENERIC_TACTICS,
    GIT_STEPS,
    MATH_STEPS,
    MATH_TOOLS,
    OBSERVATION_CHARS,
    OS_STEPS,
    Judgement,
    TaskEnv,
)
from pipeline.agents.modular import agent_from_args
from pipeline.agents.runtime import agents_for, race, run_trial
from pipeline.agents.trial import TRIAL_KEYS, Budget, finished_trial, trial_dir_name, trial_label
from pipeline.cache import CallCache
from pipeline.config import load_settings
from pipeline.llm import LLMClient
from pipeline.tasks.common import FAMILIES, NoTaskRows, read_task_rows
from pipeline.tools.registry import Toolbox

TASK_AGENTS = agents_for("math")
MAX_TOKENS = 2048            # completion tokens per llm request


def oracle_actions(env: TaskEnv) -> list[tuple]:
    return env.oracle_actions()


def random_actions(env: TaskEnv, rng) -> list[tuple]:
    return env.random_actions(rng)


def trial_complete(path: Path, task_id: str | None = None) -> bool:
    """A ``trial.json`` that parses and holds every field of a finished trial (for ``task_id``), which
    was not broken by its surroundings (``pipeline.agents.trial.BROKEN``: a re-run redoes those)."""
    return finished_trial(Path(path).parent, TRIAL_KEYS, "task_id" if task_id is not None else None, task_id)


def run_task_trial(row: dict, agent: str, out_dir: Path, *, toolbox=None, seed: int = 0, client=None,
                   timeout_s: float = 600.0, max_tokens: int = MAX_TOKENS, trial_tokens: int = 200_000) -> Path:
    """Run one agent on one task; write ``tool_log.jsonl`` then ``trial.json``; return the trial dir."""
    if agent not in TASK_AGENTS:
        raise ValueError(f"unknown task agent {agent!r}: {', '.join(TASK_AGENTS)}")
    return run_trial(row, agent, out_dir, toolbox=toolbox, seed=seed, client=client,
                     budget=Budget(timeout_s=timeout_s, max_tokens=max_tokens, trial_tokens=trial_tokens))


@dataclass
class RaceSummary:
    trials: list[Path] = field(default_factory=list)
    skipped: int = 0


def race_task_set(task_dir: Path, agent: str, out_dir: Path, *, settings=None, limit: int | None = None,
                  seed: int = 0, client=None, timeout_s: float = 600.0, max_tokens: int = MAX_TOKENS,
                  workers: int = 1, echo: bool = False, trial_tokens: int = 200_000,
                  client_options: dict | None = None) -> RaceSummary:
    """Run ``agent`` on every task of ``task_dir`` (the first ``limit``), skipping finished trials;
    ``workers`` trials at a time (``pipeline.agents.runtime.race``)."""
    if agent not in TASK_AGENTS:
        raise ValueError(f"agent {agent!r} does not race on task sets; choose one of {', '.join(TASK_AGENTS)}")
    if agent == "modular" and client is None:
        raise ValueError("the modular agent needs a ModularAgent (pipeline.agents.modular) as its client")
    label = trial_label(agent, client)
    rows = [r for r in read_task_rows(Path(task_dir)) if r["family"] in FAMILIES]
    rows = rows[:limit] if limit else rows
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    todo = [r for r in rows if not trial_complete(out / trial_dir_name(label, r["task_id"], seed) / "trial.json",
                                                  r["task_id"])]
    toolbox = None
    if todo and (agent in ("llm", "modular") or any(r["family"] == "math" for r in todo)):
        toolbox = Toolbox(settings or load_settings())
    if agent == "llm" and todo and client is None:
        client = LLMClient(toolbox.settings, toolbox.cache, **(client_options or {}))

    def report(row: dict, d: Path) -> None:
        if echo:
            rec = json.loads((d / "trial.json").read_text(encoding="utf-8"))
            print(f"{row['task_id']}: success={rec['success']} steps={rec['steps']} ({rec['stop_reason']})",
                  file=sys.stderr)

    budget = Budget(timeout_s=timeout_s, max_tokens=max_tokens, trial_tokens=trial_tokens)
    dirs, skipped = asyncio.run(race(rows, agent, out, toolbox=toolbox, seed=seed, client=client, budget=budget,
                                     concurrency=workers, on_trial=report, private=(str(task_dir),)))
    return RaceSummary(dirs, skipped)


def print_race_summary(trials: list[Path]) -> None:
    per: dict[str, list[int]] = {}
    for d in trials:
        rec = json.loads((d / "trial.json").read_text(encoding="utf-8"))
        n = per.setdefault(rec["family"], [0, 0, 0])
        n[0] += 1
        n[1] += bool(rec["judged"])
        n[2] += rec["success"] is True
    for family, (n, judged, ok) in sorted(per.items()):
        rate = f"{ok / judged:.3f}" if judged else "-"
        print(f"{family}: {n} trials, {judged} judged, {ok} succeeded, success rate {rate}")


def main_tasks(a) -> int:
    """``python -m pipeline.race --tasks DIR ...`` (``a``: the race CLI's parsed arguments)."""
    if a.agent not in TASK_AGENTS:
        raise SystemExit(f"--tasks races the agents {', '.join(TASK_AGENTS)}, not {a.agent!r}")
    if not read_task_rows(Path(a.tasks)):
        print(NoTaskRows(a.tasks), file=sys.stderr)
        return 2
    settings = load_settings(llm_base_url=getattr(a, "llm_base_url", None), llm_model=getattr(a, "llm_model", None),
                             faults=getattr(a, "faults", None))
    client = None
    if a.agent == "modular":
        client = agent_from_args(a, settings, CallCache(settings.cache_path),
                                 timeout_s=getattr(a, "request_timeout_s", 120.0),
                                 max_attempts=getattr(a, "max_retries", 3) + 1,
                                 max_tokens=getattr(a, "max_tokens", None) or MAX_TOKENS)
    summary = race_task_set(Path(a.tasks), a.agent, Path(a.out), settings=settings, limit=a.limit, seed=a.seed,
                            client=client,
                            timeout_s=getattr(a, "timeout_s", 600.0),
                            max_tokens=getattr(a, "max_tokens", None) or MAX_TOKENS,
                            workers=getattr(a, "concurrency", None) or 1, echo=True,
                            trial_tokens=getattr(a, "trial_tokens", 200_000),
                            client_options={"timeout_s": getattr(a, "request_timeout_s", 120.0),
                                            "max_attempts": getattr(a, "max_retries", 3) + 1,
                                            "max_tokens": getattr(a, "max_tokens", None) or MAX_TOKENS})
    print_race_summary(summary.trials)
    print(f"{len(summary.trials)} trials in {a.out} ({summary.skipped} already complete, skipped)")
    return 0


__all__ = ["ATP_TRIES", "ENVIRONMENTS", "GENERIC_TACTICS", "GIT_STEPS", "MATH_STEPS", "MATH_TOOLS", "OBSERVATION_CHARS",
           "OS_STEPS", "TASK_AGENTS", "TRIAL_KEYS", "Judgement", "TaskEnv", "main_tasks", "oracle_actions",
           "race_task_set", "random_actions", "run_task_trial", "trial_complete"]
