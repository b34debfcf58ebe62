"""Defects blind race 33 found on solved legs, each fixed at its cause."""
from __future__ import annotations

from pipeline.catalog import roadblock_templates
from pipeline.clues.kinds import kind_of
from pipeline.execute import country_known, read_countries
from pipeline.stages.hops import described_hops
from pipeline.transforms import DETOURS


def test_a_figure_in_thousands_is_rounded_to_a_whole_number_of_them():
    """R03: "the area, in thousands of square kilometres, ... rounded to a whole thousand" read two ways
    (17,124 thousand, or 17,000 thousand: the racer's reading gave 3, the other 5). A figure asked in
    thousands is rounded to a whole number of thousands."""
    in_thousands = {name: t["value"] for name, t in roadblock_templates().items() if "in thousands" in t["value"]}
    assert in_thousands and all("a whole number of thousands" in v and "a whole thousand" not in v
                                for v in in_thousands.values()), in_thousands


def test_an_attempt_is_no_kind_to_go_to():
    """R20: "go to the page of the attempt that the sentence ... names": the sentence named three
    campaigns, and only the target's own description ("Attempt by Germany during World War II to cut
    supply lines to Britain") called one an attempt. Like "event" or "act", the word picks nothing out."""
    assert kind_of("Attempt by Germany during World War II to cut supply lines to Britain") is None
    assert kind_of("Systematic endeavour to gain knowledge") is None
    assert kind_of("Military campaign following the September 11 attacks") == "campaign"


def test_ancient_egypt_is_not_the_country(ctx):
    """R21: the Valley of the Kings, "Necropolis in ancient Egypt", was a hop to "the country that its
    short description names": the racer went to Egypt, noting the description names the civilisation
    (a page of this world). A country's name after "ancient" (or "medieval", "prehistoric") names a
    state of another age, so the text asks for no countries."""
    assert read_countries("Necropolis in ancient Egypt", country_known) is None
    assert read_countries("Fables credited to Aesop, a storyteller in ancient Greece", country_known) is None
    assert read_countries("Necropolis in Egypt", country_known) == ("Egypt",)
    assert "Egypt" not in {h.target for h in described_hops(ctx.page("Valley of the Kings"), ctx)}


def test_a_range_of_years_reads_either_way():
    """R22: "how many leap years there are from 2013 to 2000" ran backwards for a year after 2000."""
    clue = DETOURS["leap_years_to_2000"].phrase.format(ref="the result of clue 9")
    assert "between 2000 and the result of clue 9" in clue and " from " not in clue   # "clue 9 and 2000" would
    # read as two clues (invariant 5)
