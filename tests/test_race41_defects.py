"""Defects blind race 41 (benchmarks/blind_race/race-252525, the 10^6-page synthetic world) found, each
held by a test."""
from __future__ import annotations

import pytest

from pipeline.execute import SIMULATED_TRIP_MAX_KM, StopFailed, run_tool_chain
from pipeline.model import ROADBLOCK, Stop, ToolStep


def _distance(origin: str, destination: str) -> Stop:
    """The ``geocode_distance`` roadblock's last step: a driving distance read from a distance matrix."""
    return Stop(index=0, kind=ROADBLOCK, description="distance", value_type="number", tool_chain=[
        ToolStep("maps_distance_matrix", {"origins": [origin], "destinations": [destination]},
                 "distance_km", "rows.0.0.distance_km")])


def test_no_clue_asks_a_driving_distance_the_tools_only_estimate_across_a_sea(ctx):
    """R10: "the driving distance in kilometres from Melarurton (Costa Rica) to Kirakenfield (North
    Macedonia)" was asked, 13,676 km the tools only estimate; race 16's fix caught routes, not a matrix."""
    data = ctx.toolbox.call("maps_distance_matrix", {"origins": ["São Paulo"], "destinations": ["Paris"]}).data
    cell = data["rows"][0][0]
    assert cell["provenance"] == "simulated" and cell["distance_km"] > SIMULATED_TRIP_MAX_KM
    with pytest.raises(StopFailed, match="may cross a sea"):
        run_tool_chain(_distance("São Paulo", "Paris"), {}, ctx.toolbox, [])


def test_a_short_estimated_driving_distance_and_a_great_circle_one_are_still_asked(ctx):
    data = ctx.toolbox.call("maps_distance_matrix", {"origins": ["Lyon"], "destinations": ["Grenoble"]}).data
    assert data["rows"][0][0]["distance_km"] < SIMULATED_TRIP_MAX_KM
    assert run_tool_chain(_distance("Lyon", "Grenoble"), {}, ctx.toolbox, []) == round(data["rows"][0][0]["distance_km"])
    far = Stop(index=0, kind=ROADBLOCK, description="distance", value_type="number", tool_chain=[
        ToolStep("maps_distance_matrix", {"origins": ["São Paulo"], "destinations": ["Paris"], "mode": "great_circle"},
                 "distance_km", "rows.0.0.distance_km")])
    assert run_tool_chain(far, {}, ctx.toolbox, []) > SIMULATED_TRIP_MAX_KM   # geometry, not a road: asked
