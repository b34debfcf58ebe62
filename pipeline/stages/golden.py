"""Stage 7, golden-execute: run every stop in dependency order through the tools, record the
trace (every call, its exact response and provenance) and y*. A value that differs from
what the earlier stages saw means a tool is not deterministic: the leg is rejected."""
from __future__ import annotations

from pipeline.execute import StopFailed, execute_leg
from pipeline.invariants import asked_twice
from pipeline.model import Leg, simulated_share
from pipeline.stages.base import Rejected, StageContext


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
