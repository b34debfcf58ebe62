"""Blind race 25 (``--seed 41204``): what a racer met that admits another reading, fixed at its cause; the
test feeds the case that misled and fails without the fix."""
from __future__ import annotations

from pipeline.stages.hops import named_hops, opens_another

# R05 (hard linear, solved): "the patriarch the first sentence names" of Grimms' Fairy Tales was Jacob, the
# biblical patriarch, read by title from "by the Brothers Grimm, Jacob and Wilhelm, first published ...":
# the racer answered as the tools lead but noted that the sentence's Jacob is Jacob Grimm.
GRIMM = ("Grimms' Fairy Tales, originally known as the Children's and Household Tales, is a German collection "
         "of fairy tales by the Brothers Grimm, Jacob and Wilhelm, first published on 20 December 1812.")


def test_a_given_name_in_an_apposition_to_a_named_group_is_no_hop_to_its_namesake(ctx):
    targets = [hop.target for hop in named_hops(ctx.page("Grimms' Fairy Tales"), ctx)]
    assert "Jacob" not in targets
    assert "Brothers Grimm" in targets   # the group itself is still a hop


def test_only_a_paired_given_name_that_the_other_page_opens_with_is_held_back(ctx):
    grimm = {"Brothers Grimm": ctx.page("Brothers Grimm"), "Jacob": ctx.page("Jacob")}
    said = {"Brothers Grimm": "Brothers Grimm", "Jacob": "Jacob"}
    assert opens_another(GRIMM, "Jacob", "Jacob", said, grimm)
    alone = GRIMM.replace("Jacob and Wilhelm", "Jacob")   # no pair of bare names: the apposition may be anything
    assert not opens_another(alone, "Jacob", "Jacob", said, grimm)
    paris = {"Paris": ctx.page("Paris"), "France": ctx.page("France")}
    assert not opens_another("The Louvre is a museum in Paris, France and Europe.", "France", "France",
                             {"Paris": "Paris", "France": "France"}, paris)   # a country named so is the country
