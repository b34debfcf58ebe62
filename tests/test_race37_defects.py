"""Defects blind race 37 (benchmarks/blind_race/race-161616) found, each checked where it was fixed."""
from __future__ import annotations

MERNEPTAH = ('The earliest documented mention of "Israel" as a people appears on the Merneptah Stele, an ancient '
             'Egyptian inscription dating back to around 1208 BCE.')


def test_a_country_name_alone_in_quotes_is_a_word_talked_about(ctx):
    """R03: Ancient Israel and Judah's third sentence was asked as "names a country" (Israel), where it
    quotes the word "Israel" as a people's name; the racer read it as naming no country, or Egypt by its
    adjective, and the hop from it went to Israel's page. A name alone inside quotation marks is a name
    talked about (``execute.named_as``): the sentence asks for no country."""
    from pipeline.execute import country_known, read_countries
    assert read_countries(MERNEPTAH, country_known) is None
    assert read_countries(MERNEPTAH.replace('"Israel"', "“Israel”"), country_known) is None
    assert read_countries(MERNEPTAH.replace('"Israel"', "Israel"), country_known) == ("Israel",)
    assert read_countries('Egypt exported cotton, "white gold" to its traders.', country_known) == ("Egypt",)


def test_a_sentence_calling_several_names_by_the_kind_leads_to_none_of_them(ctx):
    """R20: "go to the page of the tragedy that the sentence that begins with the words "Othello is widely"
    ... names" meant Hamlet, the one name there whose page says "tragedy"; the sentence says "his major
    tragedies alongside Macbeth, King Lear, and Hamlet", and the racer fetched all three. A sentence holding
    the kind in the plural makes each name it holds a reading (``clues.kinds.plural_in``): the hop is ambiguous."""
    import pytest

    from pipeline.agents.solver import Ambiguous, Solver
    from pipeline.clues.kinds import plural_in
    from pipeline.snapshot.store import title_to_url
    assert plural_in("tragedy", "classified among his major tragedies alongside Macbeth")
    assert not plural_in("tragedy", "Hamlet is a tragedy by William Shakespeare")
    assert plural_in("city", "the Cities of Paris and Lyon") and not plural_in("city", "the city of Paris")
    bridge = ('From the page where you found the answer to clue 1, go to the page of the tragedy that the sentence '
              'that begins with the words "Othello is widely" of its opening text names.')
    with pytest.raises(Ambiguous):
        Solver(ctx.toolbox).hop_pages(2, bridge, title_to_url("Othello"))


def test_plan_offers_no_hop_the_solver_would_find_ambiguous(tmp_path):
    """The generator's reading of the same sentence (``hops.solver_readings``) counts the three tragedies:
    Othello's page offers no hop to Hamlet through it."""
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext
    from pipeline.stages.hops import hops_from
    ctx = StageContext.create(load_settings(cache_path=tmp_path / "c.sqlite", derived_dir=tmp_path / "derived"))
    assert not [h for h in hops_from("Othello", ctx)
                if h.relation.sentence and h.relation.sentence.startswith("Othello is widely")]
