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
    the kind in the plural makes each name it holds a reading (``clues.kinds.called_so``): the hop is ambiguous."""
    import pytest

    from pipeline.agents.solver import Ambiguous, Solver
    from pipeline.clues.kinds import called_so
    from pipeline.snapshot.store import title_to_url
    assert called_so("tragedy", "classified among his major tragedies alongside Macbeth")
    assert not called_so("tragedy", "Hamlet is a tragedy by William Shakespeare")
    assert called_so("city", "the Cities of Paris and Lyon") and not called_so("city", "the city of Paris")
    bridge = ('From the page where you found the answer to clue 1, go to the page of the tragedy that the sentence '
              'that begins with the words "Othello is widely" of its opening text names.')
    with pytest.raises(Ambiguous):
        Solver(ctx.toolbox).hop_pages(2, bridge, title_to_url("Othello"))
