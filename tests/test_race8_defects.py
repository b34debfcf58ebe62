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
