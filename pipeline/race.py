"""Run agents on legs and leave trials the scorer reads (``python -m pipeline.race``).

Agents:
  oracle  replays the leg's golden trace through the ``Toolbox`` (AAR-imported legs without a
          trace: runs the leg through ``pipeline.execute``, logging every call) and answers y*;
  random  answers a uniform digit from a seeded RNG, calls no tool;
  solver  the riddle-only solver (``pipeline.agents.solver``): the riddle, the seed URL and the tools;
  llm     a ReAct-style tool-calling loop over an OpenAI-compatible endpoint (``pipeline.llm``),
          with the step budget B = max(10, floor(1.5 K)) (K: stops, or golden calls if more), a wall-clock timeout, tool outputs
          truncated at 8,000 characters, and the final answer parsed as one digit;
  modular CapaBench's planning, reasoning, action and reflection modules (``pipeline.agents.modular``),
          each on the default or the test model (``--modules P=test,R=default,A=test,F=default``,
          ``--default MODEL[@URL]``, ``--test MODEL[@URL]``); same budgets as llm.

``pipeline.agents`` is the runtime (environments, agents registered by name, the LLM loop, the trial
writer); this module is its command line, and keeps the names earlier callers imported from here.

Each trial is a directory ``RUNS_DIR/<agent>-<leg_id>-s<seed>/`` with ``trial.json``
(``{leg_id, answer, tool_log, steps, tokens, wall_time_s, agent, ...}``) and ``tool_log.jsonl``
(one ``{tool, args, success, result_preview, result_len, ts, url?}`` per call). A modular trial's
directory and ``agent`` are its configuration's label (``modular-PtRdAtFd-<models hash>``).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from pipeline.agents.environments import LEG_SYSTEM_PROMPT as SYSTEM_PROMPT
from pipeline.agents.environments import instruction_text, parse_digit, worked_solution
from pipeline.agents.loop import OVERRUN_NOTE, TOOL_OUTPUT_CHARS
from pipeline.agents.modular import agent_from_args
from pipeline.agents.runtime import agents_for, race, run_trial_async
from pipeline.agents.tasks import main_tasks
from pipeline.agents.trial import BROKEN, Budget, TrialResult, finished_trial, trial_dir_name, trial_label
from pipeline.config import load_settings
from pipeline.export import DatasetNotFound, load_legs
from pipeline.llm import LLMClient
from pipeline.model import Leg, LegFormatError
from pipeline.tools.registry import Toolbox
from pipeline.tools.toollog import ToolLog, call_tool
from pipeline.usage import run_cli

AGENTS = agents_for("legs")


def run_trial(leg: Leg, agent: str, out_dir: Path, *, toolbox: Toolbox | None = None, seed: int = 0,
              client=None, timeout_s: float = 600.0, budget: Budget | None = None) -> Path:
    """Run one agent on one leg; write ``tool_log.jsonl`` and then ``trial.json``; return the trial dir."""
    if toolbox is None and agent != "random":
        toolbox = Toolbox()
    return asyncio.run(run_trial_async(leg, agent, out_dir, toolbox=toolbox, seed=seed, client=client,
                                       budget=budget or Budget(timeout_s=timeout_s)))


async def race_legs(legs: list[Leg], agent: str, out_dir: Path, *, toolbox: Toolbox | None, seed: int = 0,
                    client=None, budget: Budget | None = None, concurrency: int = 1,
                    on_trial=None) -> tuple[list[Path], int]:
    """Every leg's trial, ``concurrency`` at a time; finished trials are skipped (a re-run resumes).
    Returns the trial dirs in leg order and how many were skipped."""
    if toolbox is None and agent != "random":
        toolbox = Toolbox()
    return await race(legs, agent, out_dir, toolbox=toolbox, seed=seed, client=client, budget=budget,
                      concurrency=concurrency, on_trial=on_trial)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.race", description=__doc__.split("\n\n")[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--legs", help="legs.parquet, a directory holding it, or a directory of AAR JSON")
    source.add_argument("--tasks", help="a task-set directory (python -m pipeline.tasks build); agents oracle, "
                        "random, llm, modular (pipeline.agents.tasks)")
    ap.add_argument("--agent", required=True, choices=AGENTS)
    ap.add_argument("--llm-base-url")
    ap.add_argument("--llm-model")
    ap.add_argument("--modules", default=None, metavar="P=SIDE,R=SIDE,A=SIDE,F=SIDE",
                    help="modular: which model drives planning, reasoning, action and reflection (SIDE test or "
                         "default; unnamed modules: default)")
    ap.add_argument("--default", default=None, metavar="MODEL[@URL][#t=T]",
                    help="modular: the default model (else --llm-model at --llm-base-url)")
    ap.add_argument("--test", default=None, metavar="MODEL[@URL][#t=T]", help="modular: the test model")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout-s", type=float, default=600.0, help="wall-clock limit per trial (llm agent)")
    ap.add_argument("--limit", type=int, help="run only the first N legs")
    ap.add_argument("--out", required=True, help="runs directory (one sub-directory per trial)")
    ap.add_argument("--faults", default=None, metavar="SPEC",
                    help="inject seeded tool faults, e.g. rate=0.1,seed=7 (pipeline.tools.faults); each trial "
                         "draws its own")
    ap.add_argument("--concurrency", type=int, default=1, help="trials run at once (the llm agent awaits its "
                    "server with the asynchronous client; the others run in threads)")
    ap.add_argument("--max-tokens", type=int, default=1024, help="llm: completion tokens per request")
    ap.add_argument("--trial-tokens", type=int, default=200_000, help="llm: tokens (prompt + completion) per trial")
    ap.add_argument("--stop", action="append", default=[], metavar="TEXT", help="llm: a stop sequence (repeatable)")
    ap.add_argument("--max-retries", type=int, default=3,
                    help="llm: retries of a failed request, with backoff and Retry-After, by the openai SDK")
    ap.add_argument("--request-timeout-s", type=float, default=120.0, help="llm: limit of one request")
    a = ap.parse_args(argv)
    if a.tasks:
        return main_tasks(a)


    try:
        legs = load_legs(a.legs)
    except (DatasetNotFound, LegFormatError) as exc:
        print(str(exc), file=sys.stderr)
        return 2
    legs = legs[: a.limit] if a.limit else legs
    settings = load_settings(llm_base_url=a.llm_base_url, llm_model=a.llm_model, faults=a.faults)
    toolbox = Toolbox(settings) if a.agent != "random" else None
    client = None
    if a.agent == "llm":
        client = LLMClient(settings, toolbox.cache, timeout_s=a.request_timeout_s, max_attempts=a.max_retries + 1,
                           max_tokens=a.max_tokens)
    elif a.agent == "modular":
        client = agent_from_args(a, settings, toolbox.cache, timeout_s=a.request_timeout_s,
                                 max_attempts=a.max_retries + 1, max_tokens=a.max_tokens)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    budget = Budget(timeout_s=a.timeout_s, max_tokens=a.max_tokens, trial_tokens=a.trial_tokens, stop=tuple(a.stop))

    def report(leg: Leg, d: Path) -> None:
        rec = json.loads((d / "trial.json").read_text())
        print(f"{leg.leg_id}: answer={rec['answer']} steps={rec['steps']} tokens={rec['tokens']} "
              f"({rec['stop_reason']})", file=sys.stderr)
    _dirs, skipped = asyncio.run(race_legs(legs, a.agent, out, toolbox=toolbox, seed=a.seed, client=client,
                                           budget=budget, concurrency=a.concurrency, on_trial=report))
    print(f"{len(legs)} trials written to {out} ({len(legs) - skipped} run now, {skipped} finished before)")
    return 0


__all__ = ["AGENTS", "BROKEN", "OVERRUN_NOTE", "SYSTEM_PROMPT", "TOOL_OUTPUT_CHARS", "Budget", "ToolLog",
           "TrialResult", "call_tool", "finished_trial", "instruction_text", "main", "parse_digit", "race_legs",
           "run_trial", "trial_dir_name", "trial_label", "worked_solution"]


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m pipeline.race"))
