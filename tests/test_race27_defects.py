"""Blind race 27 (``--seed 61206``): what racers met that admits another reading, fixed at its cause; each
test feeds the case that misled and fails without the fix."""
from __future__ import annotations

from pipeline.execute import countries_named, country_known
from pipeline.model import Extraction
from pipeline.stages.facts import named_country_facts, stands_for_subject
from pipeline.stages.hops import named_hops
from pipeline.stages.verbalize import sentence_places

# R13 (hard DAG, solved): "the third sentence names a country: which country?" of Michael Jordan was Jordan,
# read from "Jordan is regarded as one of the most influential sports figures ...": the player, as the racer said.
JORDAN_3 = "Jordan is regarded as one of the most influential sports figures"


def test_a_persons_own_name_is_no_country_and_no_hop(ctx):
    page = ctx.page("Michael Jordan")
    assert JORDAN_3 in page.lead
    assert not [f for f in named_country_facts(page) if f.extraction.sentence.startswith(JORDAN_3)]
    assert "Jordan" not in [h.target for h in named_hops(page, ctx)]
    assert stands_for_subject(page, "Jordan")
    assert not stands_for_subject(ctx.page("History of Germany"), "Germany")   # no person: the country
    assert not stands_for_subject(page, "Michael Jordan")                      # the whole name is the page's


# R13 and R29 (hard linear, solved): "the first sentence names two countries: which is the second?" of the Dead
# Sea, "bordered by Jordan to the east, the West Bank to the west and Israel to the southwest": both racers
# asked whether the West Bank counts (Palestine, to some readers).
def test_the_west_bank_beside_two_countries_leaves_the_count_in_doubt(ctx):
    first = ctx.page("Dead Sea").lead.split(". ")[0]
    assert "the West Bank" in first
    assert countries_named(first, country_known) is None


# R20 (hard linear, solved): "In its second section, the third sentence gives a year" of Asia: the page's list
# of sections opens with four subsections whose section ("Definition and boundaries") it leaves out, then
# "Etymology"; the racer took the list's second entry and asked whether the second top-level section was meant.
def test_no_section_is_counted_among_subsections_without_their_section(ctx):
    asia = ctx.toolbox.call("fetch_webpage", {"url": "Asia"}).data
    assert [s["level"] for s in asia["sections"][:5]] == [3, 3, 3, 3, 2]
    refs = [r for r, _ in sentence_places(Extraction(source="prose", section="Asia–Europe boundary", sentence="x"),
                                          asia, [])]
    assert refs == ['section "Asia–Europe boundary"']   # by its title only, never "second section"
    algeria = ctx.toolbox.call("fetch_webpage", {"url": "Algeria"}).data
    refs = [r for r, _ in sentence_places(Extraction(source="prose", section="Etymology", sentence="x"), algeria, [])]
    assert "first section" in refs   # a top-level section first in the list is still counted


def test_a_persons_own_name_joins_no_choice_of_countries(ctx):
    import dataclasses

    from pipeline.stages.hops import choice_hops
    page = ctx.page("Michael Jordan")
    sentence = "Jordan later played exhibition games in France and Italy before returning to the league."
    fake = dataclasses.replace(page, lead=sentence, sections=[])
    assert not choice_hops(fake, ctx)
    other = dataclasses.replace(page, title="Michael Smith", lead=sentence.replace("Jordan later", "Smith later")
                                .replace("France and Italy", "France, Jordan and Italy"), sections=[])
    assert choice_hops(other, ctx)   # the same countries, none of them his name: a choice


def test_a_country_name_given_as_a_name_is_no_country_named():
    """Blind race 28, R12 (extreme linear, solved): Eastern Arabia 'was known as "Bahrain" for a millennium' names
    the region's old name, not the country."""
    eastern_arabia = 'The entire coastal strip of Eastern Arabia was known as "Bahrain" for a millennium.'
    assert countries_named(eastern_arabia, country_known) is None
    assert countries_named("The strip lies beside Bahrain and Qatar.", country_known) == ["Bahrain", "Qatar"]
