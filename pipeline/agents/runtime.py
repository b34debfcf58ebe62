"""The agent runtime: agents registered by name, one trial runner, one race runner, for every product.

An agent is a coroutine ``(env, ctx) -> TrialResult`` over an ``Environment``
(``pipeline.agents.environments``), registered with the products it races:

  oracle   plays the environment's golden solution (``oracle_actions``): legs replay the golden trace
           (AAR imports without one are executed) and answer y* with a worked solution;
  random   plays the environment's seeded, uninformed policy (``random_actions``; seed ``<seed>:<item id>``);
  solver   legs only: the riddle-only solver (``pipeline.agents.solver``), which sees the riddle and the
           seed URL, never the stops, values or trace;
  llm      the one LLM loop (``pipeline.agents.loop``) over an OpenAI-compatible client;
  modular  CapaBench's four modules (``pipeline.agents.modular``); ``client`` is a ``ModularAgent``.

``run_trial_async`` opens the trial (``pipeline.agents.trial``), builds the environment, runs the agent,
judges and writes ``trial.json`` last; an agent that raises gives a failed trial (``crash``), never a
failed run. ``race`` runs many, ``concurrency`` at a time in one event loop (LLM agents await their
servers; the scripted agents run in threads), skipping finished trials.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.agents.environments import Environment, environment_for
from pipeline.agents.loop import run_llm_loop
from pipeline.agents.modular import run_modular
from pipeline.agents.solver import RiddleView, solve
from pipeline.agents.trial import (
    TRIAL_KEYS,
    Budget,
    TrialResult,
    base_record,
    finished_trial,
    open_trial,
    trial_dir_name,
    trial_label,
    write_record,
)
from pipeline.tools.faults import fault_scope


@dataclass
class TrialContext:
    seed: int = 0
    client: Any = None
    budget: Budget | None = None
    label: str = ""


AgentFn = Callable[[Environment, TrialContext], Awaitable[TrialResult]]


@dataclass(frozen=True)
class AgentSpec:
    name: str
    run: AgentFn
    products: tuple[str, ...]     # "legs" and/or task families
    llm: bool = False             # asks a model: needs a client, gets a budget, runs in the event loop


AGENTS: dict[str, AgentSpec] = {}
ALL_PRODUCTS = ("legs", "math", "atp", "os", "git")
TASK_PRODUCTS = ("math", "atp", "os", "git")


def register_agent(name: str, products: tuple[str, ...] = ALL_PRODUCTS, *, llm: bool = False):
    def wrap(fn: AgentFn) -> AgentFn:
        AGENTS[name] = AgentSpec(name, fn, products, llm)
        return fn
    return wrap


def agents_for(product: str) -> tuple[str, ...]:
    return tuple(name for name, spec in AGENTS.items() if product in spec.products)


# ---- the agents ------------------------------------------------------------------------------------
def _scripted(env: Environment, ctx: TrialContext, actions_of: Callable[[], list[tuple]]) -> TrialResult:
    start = time.monotonic()
    stop_reason, messages = env.play(actions_of())
    if stop_reason == "answered":
        stop_reason = env.finished_reason()
    return TrialResult(env.item_id, ctx.label, ctx.seed, env.answer, env.record_steps(),
                       wall_time_s=round(time.monotonic() - start, 3), stop_reason=stop_reason, messages=messages)


@register_agent("oracle")
async def oracle_agent(env: Environment, ctx: TrialContext) -> TrialResult:
    return _scripted(env, ctx, env.oracle_actions)


@register_agent("random")
async def random_agent(env: Environment, ctx: TrialContext) -> TrialResult:
    rng = random.Random(f"{ctx.seed}:{env.item_id}")
    return _scripted(env, ctx, lambda: env.random_actions(rng))


@register_agent("solver", ("legs",))
async def solver_agent(env: Environment, ctx: TrialContext) -> TrialResult:
    start = time.monotonic()
    leg, log = env.leg, env.log
    solution = solve(RiddleView(riddle=leg.riddle, seed_url=leg.seed_url), env.toolbox,
                     on_call=lambda tool, args, ok, text: log.record(tool, args, ok, text))
    answer = str(solution.answer) if solution.solved else None
    env.answer = answer
    lines = [f"Clue {n}: {json.dumps(v, ensure_ascii=False, default=str)}" for n, v in sorted(solution.values.items())]
    if not solution.solved:
        lines.append(f"{solution.status.upper()}: {solution.reason}")
    return TrialResult(leg.leg_id, "solver", ctx.seed, answer, steps=log.calls,
                       wall_time_s=round(time.monotonic() - start, 3),
                       stop_reason="answered" if solution.solved else solution.status,
                       messages=["\n".join(lines + [f"ANSWER: {answer}"])])


@register_agent("llm", llm=True)
async def llm_agent(env: Environment, ctx: TrialContext) -> TrialResult:
    if ctx.client is None:
        raise ValueError("the llm agent needs an LLM client")
    result = await run_llm_loop(env, ctx.client, agent=ctx.label, seed=ctx.seed, budget=ctx.budget)
    if env.family != "legs" and result.stop_reason == "llm_error":
        result.stop_reason = "crash"   # task-set records have always called a failed request a crash (both: BROKEN)
    return result


@register_agent("modular", llm=True)
async def modular_agent(env: Environment, ctx: TrialContext) -> TrialResult:
    if ctx.client is None:
        raise ValueError("the modular agent needs a ModularAgent (pipeline.agents.modular) as its client")
    return await run_modular(env, ctx.client, seed=ctx.seed, budget=ctx.budget)


# ---- trials ----------------------------------------------------------------------------------------
def item_id_of(item) -> str:
    return item["task_id"] if isinstance(item, dict) else item.leg_id


def _identity(item, env: Environment | None, result: TrialResult) -> dict[str, Any]:
    if env is not None:
        return env.record(result)
    if isinstance(item, dict):   # the environment could not even be made: a failed trial of the task
        return {"task_id": item["task_id"], "family": item.get("family"), "domain": item.get("domain"),
                "topic": item.get("topic"), "difficulty": item.get("difficulty"), "success": False, "judged": True,
                "judge_note": "the trial crashed"}
    return {"leg_id": item.leg_id, "variant": item.variant, "level": item.level}


def _check(agent: str, item) -> AgentSpec:
    spec = AGENTS.get(agent)
    if spec is None:
        raise ValueError(f"unknown agent {agent!r}: {', '.join(AGENTS)}")
    product = item.get("family") if isinstance(item, dict) else "legs"
    if product in ALL_PRODUCTS and product not in spec.products:
        raise ValueError(f"agent {agent!r} does not race {product}; agents: {', '.join(agents_for(product))}")
    return spec


async def run_trial_async(item, agent: str, out_dir: Path, *, toolbox=None, seed: int = 0, client=None,
                          budget: Budget | None = None, private: tuple[str, ...] = ()) -> Path:
    """One agent on one leg or task row: ``tool_log.jsonl``, then ``trial.json``; returns the trial dir.
    ``private``: host folders the agent's commands must not see (``environment_for``); the trials'
    own folder always among them."""
    private = (*private, str(out_dir))
    spec = _check(agent, item)
    if spec.llm and budget is None:
        budget = Budget()
    label = trial_label(agent, client)
    ctx = TrialContext(seed, client, budget if spec.llm else None, label)
    d, log = open_trial(out_dir, label, item_id_of(item), seed)
    start = time.monotonic()
    env = None
    try:
        if spec.llm:
            env = await asyncio.to_thread(environment_for, item, log, toolbox, private)
            result = await spec.run(env, ctx)
        else:
            def blocking() -> TrialResult:
                nonlocal env
                env = environment_for(item, log, toolbox, private)
                return asyncio.run(spec.run(env, ctx))
            result = await asyncio.to_thread(blocking)
    except Exception as exc:  # noqa: BLE001 - an agent crash is a failed trial with its reason, not a failed run
        result = TrialResult(item_id_of(item), label, seed, None if env is None else env.answer, log.calls,
                             stop_reason="crash", error=f"{type(exc).__name__}: {exc}")
    try:
        if not result.wall_time_s:
            result.wall_time_s = round(time.monotonic() - start, 3)
        record = {**_identity(item, env, result),
                  **base_record(result, ctx.budget, env.max_steps if env is not None else 0)}
        record.update(result.extra)
        if result.error:
            record["agent_error"] = result.error
    finally:
        if env is not None:
            await asyncio.to_thread(env.close)
    return write_record(d, record)


def run_trial(item, agent: str, out_dir: Path, **kw) -> Path:
    """``run_trial_async`` outside an event loop."""
    return asyncio.run(run_trial_async(item, agent, out_dir, **kw))


def trial_finished(out_dir: Path, label: str, item, seed: int) -> bool:
    d = Path(out_dir) / trial_dir_name(label, item_id_of(item), seed)
    if isinstance(item, dict):
        return finished_trial(d, TRIAL_KEYS, "task_id", item["task_id"])
    return finished_trial(d)


async def race(items: list, agent: str, out_dir: Path, *, toolbox=None, seed: int = 0, client=None,
               budget: Budget | None = None, concurrency: int = 1,
               on_trial: Callable[[Any, Path], None] | None = None,
               private: tuple[str, ...] = ()) -> tuple[list[Path], int]:
    """Every item's trial, ``concurrency`` at a time; finished trials are skipped (a re-run resumes).
    ``private``: the folders the items were read from (``run_trial_async``). Returns the trial dirs in
    item order and how many were skipped."""
    gate = asyncio.Semaphore(max(1, concurrency))
    skipped = 0
    label = trial_label(agent, client)

    async def one(item) -> Path:
        nonlocal skipped
        name = trial_dir_name(label, item_id_of(item), seed)
        if trial_finished(out_dir, label, item, seed):
            skipped += 1
            return Path(out_dir) / name
        async with gate:
            with fault_scope(name):   # each trial draws its own faults
                d = await run_trial_async(item, agent, out_dir, toolbox=toolbox, seed=seed, client=client,
                                          budget=budget, private=private)
        if on_trial:
            on_trial(item, d)
        return d
    dirs = await asyncio.gather(*(one(item) for item in items))
    return list(dirs), skipped


__all__ = ["AGENTS", "ALL_PRODUCTS", "TASK_PRODUCTS", "AgentSpec", "TrialContext", "agents_for", "item_id_of", "race",
           "register_agent", "run_trial", "run_trial_async", "trial_finished"]
