"""Blind race 50's R13 (and race 34's R12 and race 38's R21 before it): "the country that clue 11 asks for" read as the
country whose page clue 11 went to (Lebanon) where clue 11's answer was another country (Syria). An earlier
clue's answer is now "the country that is the answer to clue 11"; legs released with the older wordings
still read back (the solver and the parsers take all three)."""
from __future__ import annotations

import pytest

from pipeline.clues.steps import input_ref, parse_roadblock, roadblock_clue, roadblock_reads, roadblock_templates
from pipeline.clues.wide import parse_wide, wide_clue
from pipeline.model import WideSpec

OLD_WORDINGS = ("the country that clue 11 asks for", "the country from clue 11")


def test_an_input_names_the_answer_not_the_clue_s_asking():
    ref = input_ref("country", 11)
    assert "answer to clue 11" in ref
    assert "asks for" not in ref and "from clue" not in ref


def _distance_template():
    for name, template in sorted(roadblock_templates().items()):
        if "{in0}" in template["value"] and "{in1}" not in template["value"] and not template.get("params"):
            return name, template
    pytest.skip("no one-input roadblock template without parameters")


@pytest.mark.parametrize("old", OLD_WORDINGS)
def test_a_released_leg_s_older_wording_still_reads(old):
    name, template = _distance_template()
    text = roadblock_clue(template["value"], {"in0": input_ref("country", 11)})
    assert parse_roadblock(text)[0]["refs"] == [11]
    older = text.replace(input_ref("country", 11), old)
    assert any(r["op"] == name and r["refs"] == [11] for r in parse_roadblock(older))
    assert roadblock_reads(template["value"], {}, [11], older)


@pytest.mark.parametrize("old", OLD_WORDINGS)
def test_a_wide_stop_s_older_wording_still_reads(old):
    text = wide_clue(WideSpec("countries", "count", radius_km=800.0), "country", 11)
    assert input_ref("country", 11) in text
    spec, ref = parse_wide(text.replace(input_ref("country", 11), old))
    assert ref == 11 and spec.radius_km == 800.0
