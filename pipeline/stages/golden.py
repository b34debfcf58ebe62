"""Stage 7, golden-execute: run every stop in dependency order through the tools, record the
trace (every call, its exact response and provenance) and y*. A value that differs from
what the earlier stages saw means a tool is not deterministic: the leg is rejected."""
from __future__ import annotations

import json

from pipeline.execute import StopFailed, execute_leg
from pipeline.model import ROADBLOCK, Leg, Stop, TraceEntry, simulated_share
from pipeline.stages.base import Rejected, StageContext


def _points(tool: str, data: dict) -> tuple | None:
    """The points a call measures at, as its answer gives them (whatever name or route led there)."""
    found = {"maps_search_places": [data.get("center")], "maps_elevation": data.get("results") or [],
             "weather_historical": [data.get("location")]}.get(tool)
    if not found or not all(isinstance(p, dict) and "lat" in p and "lng" in p for p in found):
        return None
    return tuple((round(p["lat"], 4), round(p["lng"], 4)) for p in found)


def question_of(stop: Stop, trace: list[TraceEntry]) -> tuple | None:
    """What a roadblock asks of a point: the measuring call (tool, what it searches for), the steps
    from there on, and the point it measures at. "The nearest airport to the place of clue 9" (Rome)
    and "to the capital the country statistics name for the country of clue 1" (Italy's, Rome) are
    one question asked twice (blind race 10, R28), though their templates and inputs differ; the drawn
    parameters (a radius, a date) do not count, as for ``diamond._signature``."""
    if stop.kind != ROADBLOCK:
        return None
    calls = {t.step: t for t in trace if t.stop == stop.index}
    for k, step in enumerate(stop.tool_chain):
        call = calls.get(k)
        points = _points(step.tool, json.loads(call.response)) if call is not None else None
        if points:
            return (step.tool, call.args.get("query"), tuple((s.tool, s.extract) for s in stop.tool_chain[k:]), points)
    return None


def asked_twice(leg: Leg, trace: list[TraceEntry]) -> tuple[int, int] | None:
    """The first two roadblocks (clue numbers) that ask one question of one point, if any."""
    seen: dict[tuple, int] = {}
    for stop in leg.stops:
        question = question_of(stop, trace)
        if question is not None:
            if question in seen:
                return seen[question] + 1, stop.index + 1
            seen[question] = stop.index
    return None


def run(leg: Leg, ctx: StageContext) -> Leg:
    try:
        values, trace = execute_leg(leg, ctx.toolbox)
    except StopFailed as exc:
        raise Rejected(f"golden: {exc}") from exc
    for stop in leg.stops:
        if values[stop.index] != stop.value:
            raise Rejected(f"golden: stop {stop.index} re-executed to {values[stop.index]!r}, expected {stop.value!r}")
    y = values[leg.stops[-1].index]
    if not (isinstance(y, int) and 0 <= y <= 9):
        raise Rejected(f"golden: the finish line gives {y!r}, not one digit")
    if twice := asked_twice(leg, trace):
        raise Rejected(f"golden: clues {twice[0]} and {twice[1]} ask one question of one point")
    leg.passcode = y
    leg.trace = trace
    if not ctx.settings.allow_simulated and any(t.provenance == "simulated" for t in trace):
        raise Rejected("golden: a simulated value appears although simulated values are refused")
    share = leg.metadata["simulated_share"] = simulated_share(leg)
    cap = ctx.generation.get("max_simulated_share", {}).get(leg.variant)
    if ctx.settings.allow_simulated and cap is not None and share > cap:
        raise Rejected(f"golden: {share:.0%} of the tool values are simulated; at most {cap:.0%} for {leg.variant} "
                       f"legs (real data first: [generation] max_simulated_share)")
    return leg
