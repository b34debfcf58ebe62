"""Blind race 18 (``--seed 18018``, after race 17's fixes): what racers met that admits another reading, each
fixed at its cause; every test feeds the case that misled and fails without the fix."""
from __future__ import annotations

from pipeline.clues.numbers import counts_safely, doubtful_numbers
from pipeline.clues.wide import parse_wide, wide_clue
from pipeline.execute import countries_named, country_known, named_as
from pipeline.model import WideSpec
from pipeline.stages.hops import named_hops, named_otherwise


def test_a_name_given_as_a_name_is_no_country(ctx):
    """R13: Jacob's "Jacob, later given the name Israel, is the third Hebrew patriarch" was asked as the
    country its first sentence names: the hop went to Israel, though the sentence speaks of a man's name."""
    sentence = "Jacob, later given the name Israel, is the third Hebrew patriarch in Judaism."
    assert named_as(sentence, "Israel") and countries_named(sentence, country_known) is None
    assert "Israel" not in {h.target for h in named_hops(ctx.page("Jacob"), ctx)}
    assert countries_named("He later moved to Israel with his family.", country_known) == ["Israel"]
    assert not named_as("He later moved to Israel with his family.", "Israel")
    # a city's hop likewise: "a town called Paris in Texas" is no hop to Paris
    cricket = ctx.page("Cricket")
    assert named_otherwise("Settlers founded a town called Paris in Texas in 1844.", "Paris", "city", cricket)
    assert not named_otherwise("Settlers founded a town in Paris in 1844.", "Paris", "city", cricket)


def test_a_quantity_with_its_conversion_written_with_a_digit_power_is_a_doubtful_count():
    """R08, R24: Argentina's "an area of 2,780,085 km2 (1,073,397 mi2)" was asked as "the first of the two
    numbers": one area in two units to some readers, two numbers to others (race 10's rule for "178 miles
    (286 km)"), missed because "km2" writes its power as a digit."""
    sentence = "It covers an area of 2,780,085 km2 (1,073,397 mi2), making it the eighth-largest country."
    assert doubtful_numbers(sentence) == ["2,780,085 km2 (1,073,397 mi2)"] and not counts_safely(sentence)
    assert doubtful_numbers("It spans 700,000 km2 (270,000 sq mi).") == ["700,000 km2 (270,000 sq mi)"]
    assert doubtful_numbers("It covers 632,702 km2 and has 68 million people.") == []


def test_an_airport_set_says_it_holds_airports_without_scheduled_flights():
    """R10: "every airport with an IATA code within 120 km of Wellington" held Paraparaumu and Masterton,
    which the tools mark without scheduled service; the racer counted them (5, as the golden run did) and said
    a reader may not (3). Air bases and fields are most of the airports near a place, so a set keeps them and
    says so; the older wording still parses."""
    spec = WideSpec("airports", "count", radius_km=120.0, members=["BHE", "MRO", "PCN", "PPQ", "WLG"])
    clue = wide_clue(spec, "place", 4)
    assert clue.startswith("Collect every airport with an IATA code, with scheduled flights or not, that lies within")
    parsed, at = parse_wide(clue)
    assert (parsed.domain, parsed.aggregate, parsed.radius_km, at) == ("airports", "count", 120.0, 4)
    older = clue.replace(", with scheduled flights or not,", "")
    assert parse_wide(older)[0].radius_km == 120.0
