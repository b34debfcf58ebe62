"""Blind race 26 (``--seed 51205``): what racers met that admits another reading, fixed at its cause; each
test feeds the case that misled and fails without the fix."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.execute import countries_named, country_known, inside_another
from pipeline.stages.facts import named_country_facts
from pipeline.stages.hops import called_alike, kin, named_hops, noun_of

# R29 (hard linear) and R32 (easy linear), both solved: "the city that the third sentence names" of
# Constantinople was Istanbul, the one city of the sentence with a page, though the sentence names "the
# ancient cities of Chalcedon and Chrysopolis" too; both racers asked which of the three was meant.
CONSTANTINOPLE_3 = ("It was located at the core of the modern city of Istanbul, on a peninsula at the southeastern "
                    "tip of Thrace in Europe; with the Bosporus strait and the ancient cities of Chalcedon and "
                    "Chrysopolis in Bithynia, Anatolia to the east")
# R30 (extreme DAG, solved): "the third sentence names two countries: which is the first?" of Babak Khorramdin
# read Azerbaijan from "from its base in Azerbaijan in northwestern Iran": Iranian Azerbaijan, a region of
# Iran, as the racer said.
BABAK_3 = ("Babak's Iranianizing rebellion, from its base in Azerbaijan in northwestern Iran, called for a return "
           "of the political glories of the Iranian past.")
CITY = kin(noun_of("city"))


def test_no_hop_to_the_one_paged_city_of_a_sentence_that_calls_others_cities(ctx):
    page = ctx.page("Constantinople")
    assert CONSTANTINOPLE_3 in page.lead   # the case as the world holds it
    hops = named_hops(page, ctx)
    assert not [h for h in hops if h.target == "Istanbul" and h.relation.sentence.startswith("It was located")]
    assert hops   # the page still offers hops (its other sentences)


def test_a_sentence_calls_a_name_a_thing_of_the_kind_in_its_own_words():
    assert called_alike(CONSTANTINOPLE_3, "Chalcedon", CITY) and called_alike(CONSTANTINOPLE_3, "Chrysopolis", CITY)
    assert not called_alike(CONSTANTINOPLE_3, "Bithynia", CITY)        # after the cities, not one of them
    assert not called_alike(CONSTANTINOPLE_3, "Thrace", CITY)
    assert called_alike("Piraeus, an ancient port town, lies nearby.", "Piraeus", CITY)
    assert called_alike("It lies between the rivers Tigris and Euphrates.", "Euphrates", kin(noun_of("river")))
    assert not called_alike("Londinium was the capital of Roman Britain.", "Roman Britain", CITY)   # what has a capital


def test_a_country_placed_inside_another_is_no_country_a_sentence_names(ctx):
    assert countries_named(BABAK_3, country_known) is None
    assert countries_named("He sailed from France to Germany and Iran.", country_known) == ["France", "Germany", "Iran"]
    page = ctx.page("Babak Khorramdin")
    assert BABAK_3 in page.lead
    assert not [f for f in named_country_facts(page) if f.extraction.sentence == BABAK_3]


def test_a_part_of_a_country_or_an_owner_is_not_called_a_country(ctx):
    """The rule's bounds, measured on the embedded world's 2,682 pages of a release (13 of 4,983 named hops
    go, each to a sentence that names another thing of the kind): "the Australian state of Victoria" names a
    part of Australia, "Hugh Capet, the founder of the dynasty" no dynasty, "emperor Justinian I and Eastern
    Roman empress" no second emperor."""
    melbourne = ctx.page("Melbourne")
    assert "Australia" in [h.target for h in named_hops(melbourne, ctx)
                           if h.relation.sentence.startswith("Melbourne is the capital")]
    country = kin(noun_of("country"))
    assert not called_alike("Hugh Capet, the founder of the dynasty, and his descendants.", "Hugh Capet", country)
    assert not called_alike("the wife of emperor Justinian I and Eastern Roman empress", "Eastern Roman",
                            kin(noun_of("emperor")))
    quebec = ("It shares borders with the provinces of Ontario to the west, Newfoundland and Labrador to the "
              "northeast, New Brunswick to the southeast and a coastal border with the territory of Nunavut.")
    assert called_alike(quebec, "Nunavut", kin(noun_of("province")))   # asked for a province, a territory counts


_PLACES = ["Azerbaijan", "East Timor", "Timor", "Congo", "Korea", "Iran", "North Korea", "Republic of the Congo"]


@settings(max_examples=300, deadline=None)
@given(pre=st.sampled_from(["", "from ", "x-", "'", "the "]), name=st.sampled_from(_PLACES),
       gaps=st.tuples(*[st.sampled_from([" ", "  ", "\n", ""])] * 2), the=st.sampled_from(["", "the ", "The ", "the"]),
       way=st.sampled_from(["", "northwestern ", "far east ", "North ", "Central", "south-east "]),
       written=st.sampled_from(_PLACES + ["Iranian", "korea"]), post=st.sampled_from(["", ",", "ian", "-based", " and"]),
       other=st.sampled_from(_PLACES))
def test_a_country_is_placed_inside_another_by_the_pattern_alone(pre, name, gaps, the, way, written, post, other):
    """The cheap checks before the pair's pattern (the other name in the sentence, "name in" after the name)
    decide nothing the pattern would decide otherwise."""
    sentence = f"{pre}{name}{gaps[0]}in{gaps[1]}{the}{way}{written}{post}"
    pattern = (rf"(?<![\w'’-]){re.escape(name)}\s+in\s+(?:the\s+)?(?:(?i:(?:far\s+)?(?:north|south|east|west|central)"
               rf"[\w-]*)\s+)?{re.escape(other)}(?![\w'’-])")
    assert inside_another(sentence, name, other) == (re.search(pattern, sentence) is not None)
