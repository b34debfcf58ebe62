"""The golden view of a leg that scoring compares trials against: pages, tool chains, values."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from pipeline import refs
from pipeline.model import FINISH_LINE, MERGE, ROADBLOCK, ROUTE_INFO, Leg, TraceEntry
from pipeline.scoring.matching import (
    PreparedValue,
    args_match,
    as_number,
    is_scalar_value,
    normalize_text,
    value_in_text,
    values_match,
)
from pipeline.scoring.urls import Resolver, page_key
from pipeline.tools.spec import TOOLS


class GoldenStep(TraceEntry):
    """A golden tool call as scoring compares it: the same ``TraceEntry`` as a leg's trace (arguments
    cut to the tool's schema; for an imported leg without a trace, the chain's arguments with stop
    references resolved and step references left as wildcards), plus the matching rule."""

    def matches(self, tool: str, args: dict, result_text: str = "") -> bool:
        if tool != self.tool:
            return False
        if self.tool == "python_execute_code":
            # Code is free-form: a run counts when it prints the step's value (or any run if unknown).
            if self.value is None:
                return True
            return value_in_text(self.value, result_text) or normalize_text(args.get("code", "")) == \
                normalize_text(self.args.get("code", ""))
        return args_match(self.args, args, _defaults(self.tool))


def _defaults(tool: str) -> dict:
    props = TOOLS.get(tool, {}).get("parameters", {}).get("properties", {})
    return {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}


def _known_args(tool: str, args: dict) -> dict:
    props = TOOLS.get(tool, {}).get("parameters", {}).get("properties")
    return {k: v for k, v in args.items() if props is None or k in props}


@dataclass
class GoldenLeg:
    leg: Leg
    pages: list[tuple[int, str]]                   # (stop index, page key)
    chains: dict[int, list[GoldenStep]]            # roadblock stop -> chain
    values: list[tuple[int, PreparedValue]]        # (stop index, scalar golden value) for intermediate accuracy
    all_steps: list[GoldenStep] = field(default_factory=list)   # every roadblock chain's steps
    calls: list[GoldenStep] = field(default_factory=list)       # every golden call: chain steps, merges, the rest of the trace

    @property
    def budget(self) -> int:
        return self.leg.step_budget


def golden_view(leg: Leg, resolve: Resolver | None = None) -> GoldenLeg:
    known = {s.index: s.value for s in leg.stops if s.value is not None}
    traced = {(t.stop, t.step): t for t in leg.trace}
    pages = [(s.index, page_key(s.page_url, resolve)) for s in leg.stops if s.kind == ROUTE_INFO and s.page_url]
    chains: dict[int, list[GoldenStep]] = {}
    merges: list[GoldenStep] = []        # an imported merge's code run (computation: no RCR, but a golden call)
    for s in leg.stops:
        if s.kind not in (ROADBLOCK, MERGE) or not s.tool_chain:
            continue
        chain = []
        for j, step in enumerate(s.tool_chain):
            t = traced.get((s.index, j))
            if t is not None:
                chain.append(GoldenStep(**{**asdict(t), "args": _known_args(step.tool, t.args)}))
                continue
            args = refs.resolve(step.args, known, partial=True)
            value = s.value if j == len(s.tool_chain) - 1 else None
            chain.append(GoldenStep(s.index, j, step.tool, _known_args(step.tool, args), "", None, value=value))
        if s.kind == MERGE:
            merges += chain
        else:
            chains[s.index] = chain
    gvalues = [(s.index, PreparedValue(s.value)) for s in leg.stops
               if s.kind != FINISH_LINE and is_scalar_value(s.value)]
    steps = [g for chain in chains.values() for g in chain]
    # the golden trace's every call (page fetches, a choice hop's look-ups, searches, chain steps): each
    # one the golden solution makes, so each one an agent repeats is useful (eta)
    # (a leg without a trace: its chains' steps, and the code runs of its merges, in stop order)
    # (a trace entry of a chain step is that step, as the chain resolves it; a leg without a trace: its
    # chains' steps and the code runs of its merges)
    chained = {(g.stop, g.step) for g in steps + merges}
    traced_calls = [GoldenStep(**{**asdict(t), "args": _known_args(t.tool, t.args)}) for t in leg.trace
                    if (t.stop, t.step) not in chained]
    calls = sorted(steps + merges + traced_calls, key=lambda g: (g.stop if g.stop is not None else -1, g.step or 0))
    return GoldenLeg(leg, pages, chains, gvalues, steps, calls)


__all__ = ["GoldenLeg", "GoldenStep", "as_number", "golden_view", "values_match"]
