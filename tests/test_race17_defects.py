"""Blind race 17 (``--seed 17017``, extreme sets of 30-60 members): what racers met that admits another
reading, each fixed at its cause (the others, for the country sets, the scaled number, the compass words
and the numbered name, are in test_wide.py, test_walk_clues.py and test_hops.py); every test feeds the case
that misled and fails without the fix."""
from __future__ import annotations

import pytest

from pipeline.execute import StopFailed, count_is_clear, not_in_use, run_stop
from pipeline.model import ROADBLOCK, Stop, ToolStep


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory):
    from pipeline.config import load_settings
    from pipeline.tools.registry import Toolbox
    return Toolbox(load_settings(cache_path=tmp_path_factory.mktemp("race17") / "cache.sqlite"))


def counted(km: int, place: str, toolbox) -> int:
    stop = Stop(index=1, kind=ROADBLOCK, description=f"airports within {km} km of {place}", template="airports_within",
                tool_chain=[ToolStep("maps_search_places", {"query": "airport", "location": place,
                                                            "radius_m": km * 1000}, "airport_count", "count")])
    calls = []
    value = run_stop(stop, {}, toolbox, calls)
    count_is_clear(stop, calls, toolbox)
    return value


@pytest.mark.parametrize(("km", "place", "why"), [
    (40, "Berlin", "closed"),                       # R03: Berlin-Tegel (TXL), closed, 9 km from Berlin's point
    (20, "Kunming", "closed"),                      # R29: Kunming Wujiaba (KMG), closed
    (30, "Seoul", "without scheduled service"),     # R02: Seoul Air Base (SSN)
])
def test_a_count_holding_an_airport_out_of_use_is_never_asked(toolbox, km, place, why):
    """"How many airports with an IATA code lie within 40 km of Berlin": 2 with Tegel, closed since 2020,
    1 without; racers counted it and said a reader may not. Such a count is asked nowhere."""
    with pytest.raises(StopFailed, match=why):
        counted(km, place, toolbox)


def test_a_count_of_airports_in_use_is_asked(toolbox):
    """Vienna's one airport within 50 km (VIE, operating, scheduled flights): the count stands."""
    assert counted(50, "Vienna", toolbox) == 1
    assert not_in_use({"status": "operating", "scheduled_service": True}) == ""
    assert not_in_use({"scheduled_service": None}) == ""
