"""Defects blind race 16 found (benchmarks/blind_race/README.md, race 16), each held by a test."""
from __future__ import annotations

import pytest

from pipeline.execute import SIMULATED_TRIP_MAX_KM, StopFailed, run_tool_chain
from pipeline.model import ROADBLOCK, Stop, ToolStep


def _drive(origin: str, destination: str) -> Stop:
    return Stop(index=0, kind=ROADBLOCK, description="drive", value_type="number", tool_chain=[
        ToolStep("maps_directions", {"origin": origin, "destination": destination, "mode": "driving"},
                 "minutes", "duration_min")])


def test_no_clue_asks_a_drive_the_tools_only_estimate_across_a_sea(ctx):
    """R14: "the driving time from Sao Paulo to Paris" was asked (9,166 min, simulated: no road data);
    the racer flagged it and a reader has no answer to give."""
    data = ctx.toolbox.call("maps_directions", {"origin": "São Paulo", "destination": "Paris"}).data
    assert data["provenance"] == "simulated" and data["distance_km"] > SIMULATED_TRIP_MAX_KM
    with pytest.raises(StopFailed, match="may cross a sea"):
        run_tool_chain(_drive("São Paulo", "Paris"), {}, ctx.toolbox, [])


def test_a_short_estimated_drive_is_still_asked(ctx):
    data = ctx.toolbox.call("maps_directions", {"origin": "Lyon", "destination": "Grenoble"}).data
    assert data["distance_km"] < SIMULATED_TRIP_MAX_KM
    assert run_tool_chain(_drive("Lyon", "Grenoble"), {}, ctx.toolbox, []) == round(data["duration_min"])
