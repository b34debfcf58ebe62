"""Blind race 8 (``--seed 9797``): the clues racers met that admit another reading, each fixed at its
cause; every test feeds the reading that misled and fails without the fix."""
from __future__ import annotations

import pytest

from pipeline.stages.verbalize import sentence_refs

SUNDARBANS = ("The Sundarbans is a mangrove area in the delta. It spans from the Hooghly River. The forest lies in two "
              "countries. It is among the largest in the world. It is listed in three sites, viz. Sundarbans West, "
              "Sundarbans South and Sundarbans East. It was assessed as endangered in a 2020 assessment of the forests.")


@pytest.mark.parametrize("abbreviation", ["viz.", "cf.", "esp.", "incl."])
def test_no_sentence_is_counted_across_an_abbreviation(abbreviation):
    """R08: "... three sites, viz. Sundarbans West, ..." is one sentence to a reader and two to the
    split; the sentence after it is pointed at by its first words, never by its rank."""
    block = SUNDARBANS.replace("viz.", abbreviation)
    refs = sentence_refs(block, "It was assessed as endangered in a 2020 assessment of the forests.", [])
    assert refs and not any(r.endswith("sentence") for r in refs), refs


def test_a_sentence_before_the_abbreviation_keeps_its_rank():
    refs = sentence_refs(SUNDARBANS, "It is among the largest in the world.", [])
    assert "the fourth sentence" in refs


def test_a_country_by_its_initials_makes_a_sentence_name_no_countries():
    """R24: "Japan and South Korea ... but increasingly the PRC and India ..." was asked as three
    countries; "the PRC" is China to a reader, so the sentence cannot ask for its countries."""
    from pipeline.execute import countries_named
    from pipeline.stages.facts import country_known
    sentence = ("Japan and South Korea continue to dominate in the area of multinational corporations, but "
                "increasingly the PRC and India are making significant inroads.")
    assert countries_named(sentence, country_known) is None
    assert countries_named(sentence.replace("the PRC and ", ""), country_known) == ["Japan", "South Korea", "India"]


def test_no_rank_is_counted_past_a_parenthesised_sentence():
    """R24: "... in 1968. (NB: ... APEC). This ended ..." is three sentences to one reader, two to the
    split: a sentence after it is not pointed at by its rank."""
    block = ("Asia has many economies. Japan was the largest economy after surpassing Germany in 1968. (NB: A number "
             "of supernational economies are larger, such as the European Union or APEC). Japan and South Korea "
             "dominate the area of large corporations today.")
    refs = sentence_refs(block, "Japan and South Korea dominate the area of large corporations today.", [])
    assert refs and not any(r.endswith("sentence") for r in refs), refs


@pytest.mark.parametrize("name, value, applies", [
    ("leap_years_to_2000", 1351, False), ("leap_years_to_2000", 1582, False), ("leap_years_to_2000", 1583, True),
    ("leap_years_to_2000", 1947, True), ("day_of_week", "1066-10-14", False), ("day_of_week", "1969-07-20", True)])
def test_no_calendar_question_before_the_gregorian_calendar(name, value, applies):
    """R14: "how many leap years there are from 1351 to 2000" is 158 by today's rule and 163 by the Julian
    calendar of the time (1400 and 1500): before 1583 neither the leap years nor a weekday are asked."""
    from pipeline.transforms import DETOURS
    assert DETOURS[name].domain(value) is applies


def test_a_name_beside_another_in_an_and_run_counts_without_its_page():
    """R27: "the two major river systems that drain the region–Indus and Ganges" was asked as "the river
    the sentence names" (Ganges: no page is titled "Indus", but "Indus River" is one). A name joined
    to another by "and" is a name of its own; "Trinidad and Tobago", one page, stays whole."""
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext
    from pipeline.stages.hops import _unpaged_names, named_hops
    ctx = StageContext.create(load_settings())
    assert "Ganges" not in [h.target for h in named_hops(ctx.page("Indo-Gangetic Plain"), ctx)]
    sentence = "It is named after the two major river systems that drain the region–Indus and Ganges."
    assert _unpaged_names(sentence, {"Ganges"}, ctx) == ["Indus"]
    assert _unpaged_names("Its ships sailed to Trinidad and Tobago in 1990.", set(), ctx) == []
