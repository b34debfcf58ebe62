"""Run agents on legs and leave trials the scorer reads (``python -m pipeline.race``).

Agents:
  oracle  replays the leg's golden trace through the ``Toolbox`` (AAR-imported legs without a
          trace: runs the leg through ``pipeline.execute``, logging every call) and answers y*;
  random  answers a uniform digit from a seeded RNG, calls no tool;
  llm     a ReAct-style tool-calling loop over an OpenAI-compatible endpoint (``pipeline.llm``),
          with the step budget B = max(10, floor(1.5 K)), a wall-clock timeout, tool outputs
          truncated at 8,000 characters, and the final answer parsed as one digit;
  modular CapaBench's planning, reasoning, action and reflection modules (``pipeline.agents.modular``),
          each on the default or the test model (``--modules P=test,R=default,A=test,F=default``,
          ``--default MODEL[@URL]``, ``--test MODEL[@URL]``); same budgets as llm.

Each trial is a directory ``RUNS_DIR/<agent>-<leg_id>-s<seed>/`` with ``trial.json``
(``{leg_id, answer, tool_log, steps, tokens, wall_time_s, agent, ...}``) and ``tool_log.jsonl``
(one ``{tool, args, success, result_preview, result_len, ts, url?}`` per call). A modular trial's
directory and ``agent`` are its configuration's label (``modular-PtRdAtFd-<models hash>``).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.cache import canonical_json
from pipeline.llm import LLMError, assistant_tool_calls
from pipeline.model import Leg
from pipeline.tools.registry import Toolbox
from pipeline.tools.toollog import ToolLog, call_tool

TOOL_OUTPUT_CHARS = 8000
AGENTS = ("oracle", "random", "solver", "llm", "modular")


# ---- tool log: the one writer (and call_tool) live in pipeline.tools.toollog, shared with the tool CLI
# and the MCP server (python -m pipeline.tools serve), so every way of racing logs the same lines.


@dataclass
class TrialResult:
    leg_id: str
    agent: str
    seed: int
    answer: str | None
    steps: int
    tokens: int | None = None
    wall_time_s: float = 0.0
    stop_reason: str = "answered"
    messages: list[str] = field(default_factory=list)
    error: str | None = None        # why the trial could not go on (llm_error, crash)
    extra: dict[str, Any] = field(default_factory=dict)   # more fields for trial.json (the modular agent's)


# ---- oracle ------------------------------------------------------------------------------
class _LoggedToolbox:
    """The toolbox as the oracle's executor sees it: every call also goes to the trial's tool log."""

    def __init__(self, toolbox: Toolbox, log: ToolLog):
        self.toolbox, self.log = toolbox, log

    def call(self, tool: str, args: Any):
        try:
            result = self.toolbox.call(tool, args)
        except Exception as exc:
            self.log.record(tool, args, False, canonical_json({"error": f"{type(exc).__name__}: {exc}"}))
            raise
        self.log.record(tool, args, result.ok, result.response_json)
        return result


def run_oracle(leg: Leg, toolbox: Toolbox, log: ToolLog) -> TrialResult:
    """Replay the golden trace; a leg without one (an AAR import) is executed by ``pipeline.execute``,
    the generator's own executor, with recorded values standing in for stops it cannot re-derive."""
    start = time.monotonic()
    if leg.trace:
        for t in leg.trace:
            call_tool(toolbox, log, t.tool, t.args)
    else:
        from pipeline.execute import execute_leg
        execute_leg(leg, _LoggedToolbox(toolbox, log), failures={})
    answer = None if leg.passcode is None else str(leg.passcode)
    return TrialResult(leg.leg_id, "oracle", 0, answer, steps=log.calls, wall_time_s=round(time.monotonic() - start, 3),
                       messages=[worked_solution(leg, answer)])


def worked_solution(leg: Leg, answer: str | None) -> str:
    """The oracle's closing message: every clue's value, as a careful agent would write its working.

    Reason-stop values never pass through a tool, so without this the oracle's intermediate
    accuracy would understate what it knew."""
    lines = [f"Clue {stop.index}: {json.dumps(stop.value, ensure_ascii=False, default=str)}"
             for stop in leg.stops if stop.value is not None]
    return "\n".join(lines + [f"ANSWER: {answer}"])


# ---- solver ------------------------------------------------------------------------------
def run_solver(leg: Leg, toolbox: Toolbox, log: ToolLog) -> TrialResult:
    """The riddle-only solver (``pipeline.agents.solver``): it is handed the riddle and the seed URL,
    never the stops, values or trace."""
    from pipeline.agents.solver import RiddleView, solve
    start = time.monotonic()
    solution = solve(RiddleView(riddle=leg.riddle, seed_url=leg.seed_url), toolbox,
                     on_call=lambda tool, args, ok, text: log.record(tool, args, ok, text))
    answer = str(solution.answer) if solution.solved else None
    lines = [f"Clue {n}: {json.dumps(v, ensure_ascii=False, default=str)}" for n, v in sorted(solution.values.items())]
    if not solution.solved:
        lines.append(f"{solution.status.upper()}: {solution.reason}")
    return TrialResult(leg.leg_id, "solver", 0, answer, steps=log.calls, wall_time_s=round(time.monotonic() - start, 3),
                       stop_reason="answered" if solution.solved else solution.status,
                       messages=["\n".join(lines + [f"ANSWER: {answer}"])])


# ---- random ------------------------------------------------------------------------------
def run_random(leg: Leg, seed: int) -> TrialResult:
    rng = random.Random(f"{seed}:{leg.leg_id}")
    return TrialResult(leg.leg_id, "random", seed, str(rng.randrange(10)), steps=0)


# ---- llm -----------------------------------------------------------------------------------
SYSTEM_PROMPT = """You are racing through a puzzle leg. Start at the seed page, solve the numbered clues in order
using the tools (fetch_webpage to read pages, the other tools as the clues require), keep track of every value,
and finish with the final computation. The answer is a single digit 0-9. When you are done, reply without a tool
call and end your reply with: ANSWER: <digit>"""


def instruction_text(leg: Leg) -> str:
    return f"Seed URL: {leg.seed_url}\n\nRiddle:\n{leg.riddle}"


def parse_digit(text: str | None) -> str | None:
    """The final answer: 'ANSWER: d' if present, else a reply that is one digit, else the last lone digit."""
    if not text:
        return None
    m = re.findall(r"ANSWER\s*[:=]\s*\**\s*(\d)\b", text, re.IGNORECASE)
    if m:
        return m[-1]
    if re.fullmatch(r"\s*\d\s*", text):
        return text.strip()
    lone = re.findall(r"(?<![\d.,])(\d)(?![\d.,]\d)", text)
    return lone[-1] if lone else None


@dataclass(frozen=True)
class Budget:
    """What one llm trial may spend; recorded with the trial."""
    steps: int | None = None        # tool calls (default: the leg's step budget)
    timeout_s: float = 600.0        # wall clock for the whole trial
    max_tokens: int = 1024          # completion tokens per request (the server stops the reply there)
    trial_tokens: int = 200_000     # tokens (prompt and completion, as reported) for the whole trial
    stop: tuple[str, ...] = ()      # stop sequences sent with every request


OVERRUN_NOTE = ("Your last reply was cut off at {n} tokens, the limit of one reply, so it was not used. Reply "
                "shorter: one tool call, or your final answer ending with ANSWER: <digit>.")


async def run_llm_async(leg: Leg, toolbox: Toolbox, log: ToolLog, client, *, seed: int = 0,
                        budget: Budget | None = None) -> TrialResult:
    """A ReAct-style tool-calling loop over ``client.achat``. A reply cut off at ``max_tokens`` is
    a failed step the agent is told about (never the same request again); the trial ends at its
    step, token or time budget, or when the LLM cannot be asked (``llm_error``)."""
    budget = budget or Budget()
    steps_allowed = budget.steps or leg.step_budget
    start = time.monotonic()
    messages: list[dict] = [{"role": "system", "content": SYSTEM_PROMPT},
                            {"role": "user", "content": instruction_text(leg)}]
    tools = toolbox.schemas()
    steps, texts = 0, []
    result = TrialResult(leg.leg_id, "llm", seed, None, 0, tokens=0)
    while True:
        left = budget.timeout_s - (time.monotonic() - start)
        if left <= 0:
            result.stop_reason = "timeout"
            break
        if steps >= steps_allowed:
            result.stop_reason = "step_limit"
            break
        if result.tokens >= budget.trial_tokens:
            result.stop_reason = "token_limit"
            break
        try:
            reply = await asyncio.wait_for(
                client.achat(messages, tools=tools, max_tokens=budget.max_tokens, stop=list(budget.stop) or None,
                             timeout_s=left), timeout=left)
        except TimeoutError:
            result.stop_reason = "timeout"
            break
        except LLMError as exc:
            result.stop_reason, result.error = "llm_error", str(exc)
            break
        result.tokens += int((reply.get("usage") or {}).get("total_tokens") or 0)
        content = reply.get("content") or ""
        if content:
            texts.append(content)
        if reply.get("finish_reason") == "length":   # overran its token budget: a failed step, shown to the agent
            steps += 1
            messages.append({"role": "assistant", "content": content or ""})
            messages.append({"role": "user", "content": OVERRUN_NOTE.format(n=budget.max_tokens)})
            continue
        calls = reply.get("tool_calls") or []
        if not calls:
            result.answer = parse_digit(content)
            result.stop_reason = "answered" if result.answer is not None else "no_digit"
            break
        messages.append(assistant_tool_calls(content, calls))
        for c in calls:
            if steps >= steps_allowed:
                output = canonical_json({"error": "step budget exhausted"})
            else:
                steps += 1
                output = await asyncio.to_thread(_agent_tool_call, toolbox, log, c["name"], c["arguments"])
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": output[:TOOL_OUTPUT_CHARS]})
    result.steps = steps
    result.messages = texts[-3:]
    result.wall_time_s = round(time.monotonic() - start, 3)
    return result


def _agent_tool_call(toolbox: Toolbox, log: ToolLog, name: str, arguments: str | None) -> str:
    return agent_tool_call(toolbox, log, name, arguments)[1]


def agent_tool_call(toolbox: Toolbox, log: ToolLog, name: str, arguments: str | None) -> tuple[bool, str]:
    """One tool call as an agent wrote it, ``(ok, output)``: arguments that are not JSON are a failed,
    logged call."""
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        output = canonical_json({"error": f"arguments are not JSON: {exc.msg}"})
        log.record(name, arguments, False, output)
        return False, output
    ok, output, _ = call_tool(toolbox, log, name, args)
    return ok, output


def run_llm(leg: Leg, toolbox: Toolbox, log: ToolLog, client, *, seed: int = 0, timeout_s: float = 600.0,
            budget: Budget | None = None) -> TrialResult:
    """``run_llm_async`` for one trial outside an event loop."""
    budget = budget or Budget(timeout_s=timeout_s)
    return asyncio.run(run_llm_async(leg, toolbox, log, client, seed=seed, budget=budget))


# ---- runner ----------------------------------------------------------------------------------
def trial_dir_name(agent: str, leg_id: str, seed: int) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{agent}-{leg_id}-s{seed}")


def trial_label(agent: str, client=None) -> str:
    """The name a trial is filed under: the agent, or for ``modular`` its configuration's label."""
    return client.label if agent == "modular" and client is not None else agent


# A trial that ended for these reasons was broken by its surroundings, not by the agent: a re-run redoes it.
BROKEN = ("crash", "llm_error")


def finished_trial(d: Path) -> bool:
    """``d`` holds a complete trial (a re-run skips it) and not a broken one (a re-run redoes it)."""
    try:
        record = json.loads((d / "trial.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return record.get("stop_reason") not in BROKEN


def _open_trial(leg: Leg, agent: str, out_dir: Path, seed: int) -> tuple[Path, ToolLog]:
    d = Path(out_dir) / trial_dir_name(agent, leg.leg_id, seed)
    d.mkdir(parents=True, exist_ok=True)
    (d / "trial.json").unlink(missing_ok=True)   # a trial.json is written last: its presence means finished
    log_path = d / "tool_log.jsonl"
    log_path.write_text("", encoding="utf-8")
    return d, ToolLog(log_path)


def _close_trial(d: Path, leg: Leg, agent: str, seed: int, result: TrialResult, budget: Budget | None) -> Path:
    record = {"leg_id": leg.leg_id, "agent": agent, "seed": seed, "answer": result.answer,
              "tool_log": "tool_log.jsonl", "steps": result.steps, "tokens": result.tokens,
              "wall_time_s": result.wall_time_s, "stop_reason": result.stop_reason, "variant": leg.variant,
              "level": leg.level, "messages": result.messages}
    if budget is not None:
        record["budget"] = {"steps": budget.steps or leg.step_budget, "timeout_s": budget.timeout_s,
                            "max_tokens": budget.max_tokens, "trial_tokens": budget.trial_tokens,
                            "stop": list(budget.stop)}
    record.update(result.extra)
    if result.error:
        record["agent_error"] = result.error
    tmp = d / "trial.json.tmp"
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(d / "trial.json")
    return d


def _crashed(leg: Leg, agent: str, seed: int, log: ToolLog, exc: Exception) -> TrialResult:
    return TrialResult(leg.leg_id, agent, seed, None, log.calls, stop_reason="crash",
                       error=f"{type(exc).__name__}: {exc}")


def run_trial(leg: Leg, agent: str, out_dir: Path, *, toolbox: Toolbox | None = None, seed: int = 0,
              client=None, timeout_s: float = 600.0, budget: Budget | None = None) -> Path:
    """Run one agent on one leg; write ``tool_log.jsonl`` and then ``trial.json``; return the trial dir."""
    if agent in ("llm", "modular"):
        return asyncio.run(run_trial_async(leg, agent, out_dir, toolbox=toolbox, seed=seed, client=client,
                                           budget=budget or Budget(timeout_s=timeout_s)))
    d, log = _open_trial(leg, agent, out_dir, seed)
    try:
        if agent == "oracle":
            result = run_oracle(leg, toolbox or Toolbox(), log)
            result.seed = seed
        elif agent == "random":
            result = run_random(leg, seed)
        elif agent == "solver":
            result = run_solver(leg, toolbox or Toolbox(), log)
            result.seed = seed
        else:
            raise ValueError(f"unknown agent {agent!r}: {', '.join(AGENTS)}")
    except Exception as exc:  # noqa: BLE001 - an agent crash is a failed trial with its reason, not a failed run
        result = _crashed(leg, agent, seed, log, exc)
    return _close_trial(d, leg, agent, seed, result, None)


async def run_trial_async(leg: Leg, agent: str, out_dir: Path, *, toolbox: Toolbox | None = None, seed: int = 0,
                          client=None, budget: Budget | None = None) -> Path:
    """``run_trial`` inside an event loop: the llm and modular agents await their servers, the others run
    in a thread."""
    if agent not in ("llm", "modular"):
        return await asyncio.to_thread(run_trial, leg, agent, out_dir, toolbox=toolbox, seed=seed)
    if agent == "modular" and client is None:
        raise ValueError("the modular agent needs a ModularAgent (pipeline.agents.modular) as its client")
    budget = budget or Budget()
    label = trial_label(agent, client)
    d, log = _open_trial(leg, label, out_dir, seed)
    try:
        if agent == "modular":
            from pipeline.agents.modular import run_modular_leg
            result = await run_modular_leg(leg, toolbox or Toolbox(), log, client, seed=seed, budget=budget)
        else:
            result = await run_llm_async(leg, toolbox or Toolbox(), log, client, seed=seed, budget=budget)
    except Exception as exc:  # noqa: BLE001 - an agent crash is a failed trial with its reason, not a failed run
        result = _crashed(leg, label, seed, log, exc)
    return _close_trial(d, leg, label, seed, result, budget)


async def race_legs(legs: list[Leg], agent: str, out_dir: Path, *, toolbox: Toolbox | None, seed: int = 0,
                    client=None, budget: Budget | None = None, concurrency: int = 1,
                    on_trial=None) -> tuple[list[Path], int]:
    """Every leg's trial, ``concurrency`` at a time; finished trials are skipped (a re-run resumes).
    Returns the trial dirs in leg order and how many were skipped."""
    from pipeline.tools.faults import fault_scope

    gate = asyncio.Semaphore(max(1, concurrency))
    skipped = 0
    label = trial_label(agent, client)

    async def one(leg: Leg) -> Path:
        nonlocal skipped
        d = Path(out_dir) / trial_dir_name(label, leg.leg_id, seed)
        if finished_trial(d):
            skipped += 1
            return d
        async with gate:
            with fault_scope(trial_dir_name(label, leg.leg_id, seed)):   # each trial draws its own faults
                d = await run_trial_async(leg, agent, out_dir, toolbox=toolbox, seed=seed, client=client,
                                          budget=budget)
        if on_trial:
            on_trial(leg, d)
        return d
    dirs = await asyncio.gather(*(one(leg) for leg in legs))
    return list(dirs), skipped


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
        from pipeline.agents.tasks import main_tasks
        return main_tasks(a)

    from pipeline.config import load_settings
    from pipeline.export import DatasetNotFound, load_legs
    from pipeline.model import LegFormatError

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
        from pipeline.llm import LLMClient
        client = LLMClient(settings, toolbox.cache, timeout_s=a.request_timeout_s, max_attempts=a.max_retries + 1,
                           max_tokens=a.max_tokens)
    elif a.agent == "modular":
        from pipeline.agents.modular import agent_from_args
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


if __name__ == "__main__":
    sys.exit(main())
