"""Run agents on legs and leave trials the scorer reads (``python -m pipeline.race``).

Agents:
  oracle  replays the leg's golden trace through the ``Toolbox`` (AAR-imported legs without a
          trace: fetches each page stop and runs each tool chain as recorded) and answers y*;
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
from pipeline.model import MERGE, ROADBLOCK, ROUTE_INFO, Leg
from pipeline.tools.registry import Toolbox
from pipeline.tools.spec import TOOLS

TOOL_OUTPUT_CHARS = 8000
try:  # the same preview length as the tool executor's log (python -m pipeline.tools --log)
    from pipeline.tools.cli import PREVIEW_CHARS
except ImportError:  # pragma: no cover
    PREVIEW_CHARS = 2000
AGENTS = ("oracle", "random", "llm")


# ---- tool log ----------------------------------------------------------------------------
class ToolLog:
    """Append-only JSONL tool log, one line per call, flushed as it goes (a crash leaves a
    readable prefix)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.calls = 0

    def record(self, tool: str, args: Any, success: bool, response: str) -> None:
        entry = {"tool": tool, "args": args, "success": success, "result_preview": response[:PREVIEW_CHARS],
                 "result_len": len(response), "ts": round(time.time(), 3)}
        if tool == "fetch_webpage" and isinstance(args, dict) and "url" in args:
            entry["url"] = args["url"]
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self.calls += 1


def call_tool(toolbox: Toolbox, log: ToolLog, tool: str, args: Any) -> tuple[bool, str, dict | None]:
    """Call one tool through the registry and log it; errors become an ``{error}`` response."""
    try:
        result = toolbox.call(tool, args)
        ok, text, data = result.ok, result.response_json, result.data
    except Exception as exc:  # argument errors, missing backends, replay misses: the agent sees them
        ok, data = False, None
        text = canonical_json({"error": f"{type(exc).__name__}: {exc}"})
    log.record(tool, args, ok, text)
    return ok, text, data


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
def _get_path(obj: Any, path: str) -> Any:
    from pipeline.execute import StopFailed, get_path
    try:
        return get_path(obj, path)
    except StopFailed:
        return None


def _bind_prev(v: Any, outputs: dict[str, Any]) -> Any:
    if isinstance(v, dict) and set(v) == {"$prev"}:
        return outputs.get(v["$prev"])
    if isinstance(v, list):
        return [_bind_prev(x, outputs) for x in v]
    return v


def _coords_of(value: Any) -> Any:
    if isinstance(value, dict) and "lat" in value and "lng" in value:
        return {"lat": value["lat"], "lng": value["lng"]}
    return value


def run_oracle(leg: Leg, toolbox: Toolbox, log: ToolLog) -> TrialResult:
    start = time.monotonic()
    if leg.trace:
        for t in leg.trace:
            call_tool(toolbox, log, t.tool, t.args)
    else:
        for stop in leg.stops:
            if stop.kind == ROUTE_INFO and stop.page_url:
                call_tool(toolbox, log, "fetch_webpage", {"url": stop.page_url})
            elif stop.kind in (ROADBLOCK, MERGE):
                outputs: dict[str, Any] = {}
                for step in stop.tool_chain:
                    props = TOOLS.get(step.tool, {}).get("parameters", {}).get("properties", {})
                    args = {k: _bind_prev(v, outputs) for k, v in step.args.items() if not props or k in props}
                    args = {k: _coords_of(v) if not isinstance(v, list) else [_coords_of(x) for x in v]
                            for k, v in args.items()}
                    ok, _, data = call_tool(toolbox, log, step.tool, args)
                    outputs[step.output_key] = _get_path(data, step.extract) if ok and data is not None else None
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
    m = re.findall(r"ANSWER\s*[:=]\s*\**\s*(\d)\b", text, re.I)
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
        elif agent == "llm":
            result = run_llm(leg, toolbox or Toolbox(), log, client, seed=seed, timeout_s=timeout_s)
        else:
            raise ValueError(f"unknown agent {agent!r}: {', '.join(AGENTS)}")
    except Exception as exc:  # an agent crash is a failed trial with its reason, not a failed run
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
    a = ap.parse_args(argv)

    from pipeline.config import load_settings
    from pipeline.export import load_legs

    legs = load_legs(a.legs)[: a.limit] if a.limit else load_legs(a.legs)
    settings = load_settings(llm_base_url=a.llm_base_url, llm_model=a.llm_model)
    toolbox = Toolbox(settings) if a.agent != "random" else None
    client = None
    if a.agent == "llm":
        from pipeline.llm import LLMClient
        client = LLMClient(settings, toolbox.cache)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for leg in legs:
        d = run_trial(leg, a.agent, out, toolbox=toolbox, seed=a.seed, client=client, timeout_s=a.timeout_s)
        rec = json.loads((d / "trial.json").read_text())
        print(f"{leg.leg_id}: answer={rec['answer']} steps={rec['steps']} ({rec['stop_reason']})", file=sys.stderr)
    print(f"{len(legs)} trials written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
