"""Blind race 12 (``--seed 12121``): what racers met that admits another reading, each fixed at its cause;
every test feeds the case that misled and fails without the fix."""
from __future__ import annotations

import pytest

from pipeline.clues.steps import finish_clue, parse_finish
from pipeline.snapshot.page import Page
from pipeline.stages.hops import named_hops, short_name_of
from pipeline.stages.verbalize import sentence_refs


def test_a_sentence_a_reader_may_not_cut_at_its_end_is_never_pointed_at():
    """Apollo program's "Apollo was conceived in 1960 in the Dwight D." (R27) and Asia's "... from 1 to 1800
    A.D." (R23): a reader who does not cut after the abbreviation reads on into the next sentence, which
    may name or give more; the block's last sentence has nothing after it."""
    block = ("The program ran for years. Apollo was conceived in 1960 in the Dwight D. Eisenhower "
             "administration and went on under later presidents.")
    assert sentence_refs(block, "Apollo was conceived in 1960 in the Dwight D.", []) == []
    assert sentence_refs(block, "The program ran for years.", [])[0] == "the first sentence"
    last = "China and India alternated in being the largest economies from 1 to 1800 A.D."
    assert sentence_refs("Asia is large. " + last, last, [])[0] == "the second sentence"


def test_the_page_subject_called_short_is_no_other_page(ctx):
    """On the page "Apollo program", "Apollo was conceived in 1960" speaks of the program: "the god that
    the second sentence names" had two readings (R27)."""
    assert short_name_of("Apollo program", "Apollo") and not short_name_of("Richard I of England", "England")
    assert ctx.page("Apollo") is not None
    page = Page(title="Apollo program", url="https://en.wikipedia.org/wiki/Apollo_program",
                lead=("The Apollo program was a human spaceflight program of the United States. Apollo was "
                      "conceived in 1960 as a three-person spacecraft to follow the one-person Project Mercury."))
    assert "Apollo" not in {h.target for h in named_hops(page, ctx)}


def test_a_place_named_by_a_title_it_gives_is_a_second_reading(ctx):
    """Richard I's "Count of Poitiers, Anjou, Maine, and Nantes": asked for "the prefecture", a reader
    counts Poitiers (a prefecture and a city of 86,000 people without a page here) beside Nantes (R28)."""
    hops = named_hops(ctx.page("Richard I of England"), ctx)
    assert "Nantes" not in {h.target for h in hops}


@pytest.mark.parametrize("refs, groups", [([3, 4], [[3], [4]]), ([2, 3, 5], [[2], [3, 5]])])
def test_a_lone_result_is_taken_not_added_up(refs, groups):
    """"add up the result of clue 3" (R13): to a reader that may mean adding up its digits."""
    for kind in ("abs_difference_mod_10", "digital_root_abs_difference"):
        text = finish_clue(kind, refs)
        assert "add up the result of" not in text
        assert parse_finish(text) == {"op": kind, "groups": groups, "refs": refs}
