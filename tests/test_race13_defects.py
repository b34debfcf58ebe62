"""Blind race 13 (``--seed 13131``): what racers met that admits another reading or cost them calls, each
fixed at its cause; every test feeds the case that misled and fails without the fix."""
from __future__ import annotations

import pytest

from pipeline.clues import counts_safely, doubtful_numbers
from pipeline.mathtools.safe_eval import CalcError, calculate


@pytest.mark.parametrize("sentence, doubtful", [
    # R14: "gives two numbers: what is the first of the two?" of Algeria's motorway; "3-way" is a number to
    # some readers and a word to others
    ("It is a 3-way, 1,216 km long highway, linking Annaba in the extreme east to the Tlemcen in the far west.",
     ["3-way"]),
    # R17: a quantity and its conversion, hyphened: one length to some readers, two numbers to others
    ("Situated on the Balkan Peninsula, it has a 20-kilometre-long (12-mile) coast on the Adriatic Sea.",
     ["20-kilometre-long (12-mile)"]),
    # a name's number is no hyphened count, but a doubtful number all the same ("the 2 in WD-2": race 36, R22)
    ("The F-16 first flew in 1974 and COVID-19 came in 2019.", ["F-16", "D-19"]),
])
def test_a_number_joined_to_a_word_by_a_hyphen_is_a_doubtful_count(sentence, doubtful):
    assert doubtful_numbers(sentence) == doubtful
    if doubtful:
        assert not counts_safely(sentence)


@pytest.mark.parametrize("expression, result", [("round(2.5)", "3"), ("round(-2.5)", "-3"), ("round(212.57)", "213"),
                                                ("round(1234, -1)", "1230"), ("round(3.14159, 2)", "157/50"),
                                                ("round(7/2)", "4")])
def test_the_calculator_rounds_as_the_clues_do(expression, result):
    """"rounded to a whole number", "to the nearest 10 metres": three racers' calculator calls failed on
    round() (R21, R30 of race 12 and 13, R19), each a wasted call. Halves go away from zero."""
    assert calculate(expression)["result"] == result


def test_the_calculator_refuses_to_round_what_is_no_real_number():
    with pytest.raises(CalcError, match="round"):
        calculate("round(x)")
