"""Marginal utility of each tool call: positive (it moved the agent forward) or non_positive.

Two judges share one interface, ``judge(golden, trial) -> list[Judgment]`` (one per call):
  * ``GoldenTraceJudge``: deterministic; a call is useful when it yields a golden page, repeats a call
    of the golden trace (any of them: page fetches, a choice hop's look-ups, chain steps; an imported
    leg without a trace: its chains' steps) or shows a golden value that the trajectory had not
    obtained before;
  * ``LLMJudge``: asks an OpenAI-compatible endpoint (``pipeline.llm.LLMClient``) for strict JSON
    ``{label: positive|non_positive, confidence, rationale}`` given the trajectory up to the call
    and the call's result; every request goes through ``pipeline.cache`` (kind "llm").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pipeline.cache import CallCache, canonical_json
from pipeline.config import load_settings
from pipeline.llm import LLMClient, parse_json_reply
from pipeline.scoring.golden import GoldenLeg
from pipeline.scoring.matching import value_in_text
from pipeline.scoring.trials import ToolCall, Trial
from pipeline.scoring.urls import Resolver, page_key

POSITIVE, NON_POSITIVE = "positive", "non_positive"


@dataclass
class Judgment:
    call: int
    tool: str
    label: str               # positive | non_positive
    confidence: float
    rationale: str

    @property
    def sign(self) -> int:
        return 1 if self.label == POSITIVE else -1


class Judge(Protocol):
    name: str

    def judge(self, golden: GoldenLeg, trial: Trial) -> list[Judgment]: ...


def call_text(call: ToolCall) -> str:
    return call.result_preview or ""


class GoldenTraceJudge:
    name = "golden"

    def __init__(self, resolve: Resolver | None = None):
        self.resolve = resolve

    def judge(self, golden: GoldenLeg, trial: Trial) -> list[Judgment]:
        page_keys = {key for _, key in golden.pages}
        seen_pages: set[str] = set()
        done_steps: set[int] = set()
        seen_values: set[int] = set()
        out = []
        for i, call in enumerate(trial.calls):
            text = call_text(call)
            index = call.index
            reasons = []
            if call.page_url:
                key = page_key(call.page_url, self.resolve)
                if key in page_keys and key not in seen_pages:
                    reasons.append(f"reached golden page {key}")
                seen_pages.add(key)
            for n, g in enumerate(golden.calls):
                if n not in done_steps and g.matches(call.tool, call.args, text):
                    done_steps.add(n)
                    reasons.append(f"golden step {g.stop}.{g.step} ({g.tool})" if g.stop is not None
                                   else f"golden call {n} ({g.tool})")
                    break
            for stop, value in golden.values:
                if stop not in seen_values and value_in_text(value, index):
                    seen_values.add(stop)
                    reasons.append(f"value of stop {stop}")
            label = POSITIVE if reasons else NON_POSITIVE
            out.append(Judgment(i, call.tool, label, 1.0,
                                "; ".join(reasons) if reasons else "nothing new on the golden trace"))
        return out


JUDGE_PROMPT = """You judge one tool call of an agent solving a multi-step puzzle (a race leg).
Puzzle: {riddle}
Trajectory before the call:
{before}
The call: {call}
Its result (truncated): {result}
Did this call make progress toward the answer (new necessary information or a needed computation)?
Reply with strict JSON only: {{"label": "positive" | "non_positive", "confidence": 0..1, "rationale": "..."}}"""


def _summary(calls: list[ToolCall], limit: int = 12) -> str:
    lines = [f"- {c.tool}({canonical_json(c.args)[:200]}) -> {(c.result_preview or '')[:160]!r}" for c in calls[-limit:]]
    return "\n".join(lines) or "(no calls yet)"


def parse_judgment(text: str) -> tuple[str, float, str]:
    """Strict JSON ``{label, confidence, rationale}``; anything else raises ValueError."""
    d = parse_json_reply(text)
    if not isinstance(d, dict):
        raise ValueError("judgment must be a JSON object")  # noqa: TRY004 - a reply error, like the others
    label = d.get("label")
    if label not in (POSITIVE, NON_POSITIVE):
        raise ValueError(f"label must be positive|non_positive, got {label!r}")
    conf = float(d.get("confidence", 0.0))
    return label, max(0.0, min(1.0, conf)), str(d.get("rationale", ""))


class LLMJudge:
    """Judges calls with ``pipeline.llm.LLMClient`` (OpenAI-compatible, cached with kind "llm")."""
    name = "llm"

    def __init__(self, client):
        self.client = client

    def judge(self, golden: GoldenLeg, trial: Trial) -> list[Judgment]:
        out = []
        for i, call in enumerate(trial.calls):
            prompt = JUDGE_PROMPT.format(riddle=golden.leg.riddle[:3000], before=_summary(trial.calls[:i]),
                                         call=f"{call.tool}({canonical_json(call.args)[:500]})",
                                         result=(call.result_preview or "")[:1500])
            try:
                reply = self.client.chat([{"role": "user", "content": prompt}])
                label, conf, why = parse_judgment(reply.get("content") or "")
            except Exception as exc:  # noqa: BLE001 - a bad or missing reply is recorded, not fatal
                label, conf, why = NON_POSITIVE, 0.0, f"judge error: {exc}"
            out.append(Judgment(i, call.tool, label, conf, why))
        return out


def make_judge(kind: str, *, resolve: Resolver | None = None, settings=None, cache: CallCache | None = None) -> Any:
    """``golden`` or ``llm`` (the endpoint and model come from settings: LEGWORK_LLM_BASE_URL/MODEL)."""
    if kind == "golden":
        return GoldenTraceJudge(resolve)
    if kind == "llm":
        return LLMJudge(LLMClient(settings or load_settings(), cache))
    raise ValueError(f"unknown judge {kind!r}: golden | llm")
