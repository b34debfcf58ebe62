"""Blind race 7's flagged clues, each a leg defect fixed at its cause (benchmarks/blind_race/README.md)."""
from __future__ import annotations

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.clues import kind_of
from pipeline.stages.facts import infobox_facts, named_country_facts
from pipeline.stages.prevalidate import TWO_POINT_DISTANCES


def test_a_country_heading_a_name_of_the_pages_subject_is_no_country(ctx):
    """R20: "... Hanover rat, Norway rat and Norwegian rat" on Brown rat's page names rats, not Norway."""
    assert named_country_facts(ctx.page("Brown rat")) == []
    assert {"Algeria", "Libya"} <= {f.value for f in named_country_facts(ctx.page("Tunisia"))}   # still asked


def test_an_infobox_date_field_holding_several_dates_is_not_asked(ctx):
    """R07: "April 19, 1775 – September 3, 1783, Ratification effective: May 12, 1784": which date?"""
    war = [f for f in infobox_facts(ctx.page("American Revolutionary War")) if f.extraction.field == "date"]
    assert war == []


def test_cradle_is_no_kind_a_reader_picks_one_thing_out_by():
    """R02: "the cradle that the third sentence names" among Sumer, Akkad, Assyria and Ancient Egypt."""
    assert kind_of("Cradle of civilization in Northeast Africa") is None


def test_no_diamond_branch_asks_a_distance_from_a_place_to_itself(ctx, tmp_path):
    """R24: a diamond branch asked the distance from Beijing to the capital of its country (0 km); the
    diamond stage now drops such a branch as prevalidate drops such a roadblock. Seed 9690 made one before."""
    result = run_generation(GenerationParams(level="hard", variant="dag", count=4, seed=9690), tmp_path / "run",
                            ctx.settings, local_map_stage(ctx))
    zero = [(leg.leg_id, s.index) for leg in result.accepted for s in leg.stops
            if s.template in TWO_POINT_DISTANCES and s.value == 0]
    assert len(result.accepted) == 4 and zero == []
