"""The step budget B = max(10, floor(1.5 K)): K is the leg's stops (AAR's count, one call a stop) or,
when the golden route takes more tool calls than there are stops (a choice hop looks up every
candidate), those calls, so no accepted leg's budget falls below its own golden route."""
from __future__ import annotations

from pipeline.model import Leg, Stop, TraceEntry


def leg_with(stops: int, calls: int) -> Leg:
    leg = Leg(leg_id="leg_x", level="hard", variant="linear", seed=1, seed_title="X", seed_url="")
    leg.stops = [Stop(index=i, kind="route_info", description="") for i in range(stops)]
    leg.trace = [TraceEntry(stop=0, step=i, tool="countries_area", args={}, response="{}", provenance="snapshot")
                 for i in range(calls)]
    return leg


def test_budget_counts_stops_as_aar_does():
    assert leg_with(4, 0).step_budget == 10          # the floor of 10
    assert leg_with(7, 7).step_budget == 10          # floor(10.5)
    assert leg_with(20, 12).step_budget == 30


def test_budget_counts_the_golden_calls_when_a_stop_takes_several():
    assert leg_with(20, 26).step_budget == 39        # floor(1.5 * 26), not 30
    assert leg_with(9, 16).step_budget == 24         # the easy leg that needed 16 calls against B = 13


def test_no_budget_is_below_its_golden_route():
    for stops in range(1, 40):
        for calls in range(0, 60, 7):
            assert leg_with(stops, calls).step_budget >= calls
