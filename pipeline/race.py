"""Run agents on legs and leave trials the scorer reads (``python -m pipeline.race``).

Agents:
  oracle  replays the leg's golden trace through the ``Toolbox`` (AAR-imported legs without a
          trace: runs the leg through ``pipeline.execute``, logging every call) and answers y*;
  random  answers a uniform digit from a seeded RNG, calls no tool;
  llm     a ReAct-style tool-calling loop over an OpenAI-compatible endpoint (``pipeline.llm``),
          with the step budget B = max(10, floor(1.5 K)), a wall-clock timeout, tool outputs
          truncated at 8,000 characters, and the final answer parsed as one digit.

Each trial is a directory ``RUNS_DIR/<agent>-<leg_id>-s<seed>/`` with ``trial.json``
(``{leg_id, answer, tool_log, steps, tokens, wall_time_s, agent, ...}``) and ``tool_log.jsonl``
(one ``{tool, args, success, result_preview, result_len, ts, url?}`` per call).
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.cache import canonical_json
from pipeline.model import Leg
from pipeline.tools.registry import Toolbox
from pipeline.tools.toollog import ToolLog, call_tool

TOOL_OUTPUT_CHARS = 8000
AGENTS = ("oracle", "random", "solver", "llm")


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


def run_llm(leg: Leg, toolbox: Toolbox, log: ToolLog, client, *, seed: int = 0, timeout_s: float = 600.0,
            budget: int | None = None) -> TrialResult:
    budget = budget or leg.step_budget
    start = time.monotonic()
    messages: list[dict] = [{"role": "system", "content": SYSTEM_PROMPT},
                            {"role": "user", "content": instruction_text(leg)}]
    tools = toolbox.schemas()
    steps, texts = 0, []
    result = TrialResult(leg.leg_id, "llm", seed, None, 0)
    while True:
        if time.monotonic() - start > timeout_s:
            result.stop_reason = "timeout"
            break
        if steps >= budget:
            result.stop_reason = "step_limit"
            break
        reply = client.chat(messages, tools=tools)
        content = reply.get("content") or ""
        if content:
            texts.append(content)
        calls = reply.get("tool_calls") or []
        if not calls:
            result.answer = parse_digit(content)
            result.stop_reason = "answered" if result.answer is not None else "no_digit"
            break
        messages.append({"role": "assistant", "content": content or None,
                         "tool_calls": [{"id": c["id"], "type": "function",
                                         "function": {"name": c["name"], "arguments": c["arguments"] or "{}"}}
                                        for c in calls]})
        for c in calls:
            if steps >= budget:
                output = canonical_json({"error": "step budget exhausted"})
            else:
                steps += 1
                try:
                    args = json.loads(c["arguments"] or "{}")
                except json.JSONDecodeError as exc:
                    args = None
                    output = canonical_json({"error": f"arguments are not JSON: {exc.msg}"})
                    log.record(c["name"], c["arguments"], False, output)
                if args is not None:
                    _, output, _ = call_tool(toolbox, log, c["name"], args)
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": output[:TOOL_OUTPUT_CHARS]})
    result.steps = steps
    result.messages = texts[-3:]
    result.wall_time_s = round(time.monotonic() - start, 3)
    return result


# ---- runner ----------------------------------------------------------------------------------
def trial_dir_name(agent: str, leg_id: str, seed: int) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{agent}-{leg_id}-s{seed}")


def run_trial(leg: Leg, agent: str, out_dir: Path, *, toolbox: Toolbox | None = None, seed: int = 0,
              client=None, timeout_s: float = 600.0) -> Path:
    """Run one agent on one leg; write ``trial.json`` and ``tool_log.jsonl``; return the trial dir."""
    d = Path(out_dir) / trial_dir_name(agent, leg.leg_id, seed)
    d.mkdir(parents=True, exist_ok=True)
    log_path = d / "tool_log.jsonl"
    log_path.write_text("", encoding="utf-8")
    log = ToolLog(log_path)
    error = None
    try:
        if agent == "oracle":
            result = run_oracle(leg, toolbox or Toolbox(), log)
            result.seed = seed
        elif agent == "random":
            result = run_random(leg, seed)
        elif agent == "solver":
            result = run_solver(leg, toolbox or Toolbox(), log)
            result.seed = seed
        elif agent == "llm":
            result = run_llm(leg, toolbox or Toolbox(), log, client, seed=seed, timeout_s=timeout_s)
        else:
            raise ValueError(f"unknown agent {agent!r}: {', '.join(AGENTS)}")
    except Exception as exc:  # noqa: BLE001 - an agent crash is a failed trial with its reason, not a failed run
        result = TrialResult(leg.leg_id, agent, seed, None, log.calls, stop_reason="crash")
        error = f"{type(exc).__name__}: {exc}"
    record = {"leg_id": leg.leg_id, "agent": agent, "seed": seed, "answer": result.answer,
              "tool_log": "tool_log.jsonl", "steps": result.steps, "tokens": result.tokens,
              "wall_time_s": result.wall_time_s, "stop_reason": result.stop_reason, "variant": leg.variant,
              "level": leg.level, "messages": result.messages}
    if error:
        record["agent_error"] = error
    (d / "trial.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.race", description=__doc__.split("\n\n")[0])
    ap.add_argument("--legs", required=True, help="legs.parquet, a directory holding it, or a directory of AAR JSON")
    ap.add_argument("--agent", required=True, choices=AGENTS)
    ap.add_argument("--llm-base-url")
    ap.add_argument("--llm-model")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout-s", type=float, default=600.0, help="wall-clock limit per trial (llm agent)")
    ap.add_argument("--limit", type=int, help="run only the first N legs")
    ap.add_argument("--out", required=True, help="runs directory (one sub-directory per trial)")
    ap.add_argument("--faults", default=None, metavar="SPEC",
                    help="inject seeded tool faults, e.g. rate=0.1,seed=7 (pipeline.tools.faults); each trial "
                         "draws its own")
    a = ap.parse_args(argv)

    from pipeline.config import load_settings
    from pipeline.export import load_legs

    legs = load_legs(a.legs)[: a.limit] if a.limit else load_legs(a.legs)
    settings = load_settings(llm_base_url=a.llm_base_url, llm_model=a.llm_model, faults=a.faults)
    toolbox = Toolbox(settings) if a.agent != "random" else None
    client = None
    if a.agent == "llm":
        from pipeline.llm import LLMClient
        client = LLMClient(settings, toolbox.cache)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    from pipeline.tools.faults import fault_scope
    for leg in legs:
        with fault_scope(trial_dir_name(a.agent, leg.leg_id, a.seed)):
            d = run_trial(leg, a.agent, out, toolbox=toolbox, seed=a.seed, client=client, timeout_s=a.timeout_s)
        rec = json.loads((d / "trial.json").read_text())
        print(f"{leg.leg_id}: answer={rec['answer']} steps={rec['steps']} ({rec['stop_reason']})", file=sys.stderr)
    print(f"{len(legs)} trials written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
