"""What blind race 42 (benchmarks/blind_race/race-262626, the 10^6-page synthetic world) found, each held
by a test."""
from __future__ import annotations

from pipeline.catalog import roadblock_templates


def test_every_elevation_roadblock_names_the_map_elevation():
    """R07, R09, R15: "the ground elevation in metres at Welovorton" while Welovorton's infobox gives 1,739 m
    and the map's elevation grid 194 m: three racers asked themselves which was meant (all took the grid,
    as the golden traces do). A clue names the reading that decides it, as the country statistics' clues
    do ("as the country statistics give it") and the wide stops' already did ("as the map elevation gives
    it at the airport's point")."""
    asked = {name: t["value"] for name, t in roadblock_templates().items()
             if any(step["tool"] == "maps_elevation" for step in t["steps"])}
    assert len(asked) >= 4   # a point's, a capital's, an airport's, and a difference of two
    assert all("as the map elevation gives" in value for value in asked.values()), asked
