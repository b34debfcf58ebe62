"""Blind race 19 (``--seed 19019``, racers acting through the tools only): what a racer met that admits
another reading, fixed at its cause; the test feeds the case that misled and fails without the fix."""
from __future__ import annotations

import pytest

from pipeline.execute import StopFailed, WideFind, run_stop, wide_value
from pipeline.model import WIDE, Stop, WideSpec
from pipeline.stages import wide

# R25 (extreme linear): the airports within 345 km of the capital of Israel; ADJ and TUI both
# lie at 838 m, then TCP at 754 m and AMM at 698 m. "The third highest" is TCP counted by airports and AMM
# counted by heights: the golden run said 754, the racer saw that 698 reads as well.
R25 = WideSpec("airports", "largest", radius_km=345.0, figure="elevation", rank=3,
               members=["AAC", "ADJ", "AMM", "AQJ", "BEV", "BEY", "DAM", "EIY", "ETM", "HFA", "KSW", "KYE", "MIP",
                        "MTZ", "OMF", "PSD", "RPN", "TCP", "TLV", "TUI", "URY", "VTM", "YOT"])


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory):
    from pipeline.config import load_settings
    from pipeline.tools.registry import Toolbox
    return Toolbox(load_settings(cache_path=tmp_path_factory.mktemp("race19") / "cache.sqlite"))


def test_a_rank_below_a_tie_is_no_value_an_agent_can_collect(toolbox):
    """The collection (golden run, riddle-only solver, invariant 13) refuses the rank under R25's tie, and
    takes the rank above it (the highest: 838 m, whichever of the two airports it is)."""
    stop = Stop(index=8, kind=WIDE, description="the third highest airport", depends_on=[5], wide=R25)
    with pytest.raises(StopFailed, match="tie above rank 3"):
        run_stop(stop, {5: "Israel"}, toolbox, [])
    first = Stop(index=8, kind=WIDE, description="the highest airport", depends_on=[5],
                 wide=WideSpec(**{**R25.__dict__, "rank": 1}))
    assert run_stop(first, {5: "Israel"}, toolbox, []) == 838


def test_a_tie_at_or_below_the_rank_leaves_its_value_one():
    spec = WideSpec("airports", "largest", radius_km=100.0, figure="elevation", rank=2, members=["A", "B", "C"])
    assert wide_value(spec, WideFind(["A", "B", "C"], {"A": 900.0, "B": 700.0, "C": 700.0})) == 700
    with pytest.raises(StopFailed):
        wide_value(spec, WideFind(["A", "B", "C"], {"A": 900.0, "B": 900.0, "C": 700.0}))


def test_the_generator_asks_no_rank_below_figures_that_may_tie():
    """R25's figures: the generator asks no rank below the two airports at 838 m (the old check looked only
    at the rank's neighbours: 84 m and 56 m from TCP); a rank whose figures above it stand apart is asked."""
    cands = [wide.Candidate(code, float(k), (("elevation", m),))
             for k, (code, m) in enumerate([("ADJ", 838.0), ("TUI", 838.0), ("TCP", 754.0), ("AMM", 698.0),
                                            ("DAM", 610.0)])]
    for rank in (2, 3, 4):
        assert not wide._ranked_clear(cands, "elevation", "largest", rank, wide.ELEVATION_MARGIN, relative=False)
    apart = cands[1:]   # 838, 754, 698, 610: 84, 56 and 88 m apart
    assert wide._ranked_clear(apart, "elevation", "largest", 3, wide.ELEVATION_MARGIN, relative=False)


def test_a_place_centred_country_set_says_the_place_s_own_country_counts():
    """R21 (medium linear): "every country ... whose capital lies within 1,190 km ... of the place that clue 6
    asks for" (Moscow): Russia's capital lies 0 km away, yet the racer asked whether the place's own
    country was meant to be left out (Belarus then, another passcode). The clue now says it counts, and
    the riddle-only solver reads it back."""
    from pipeline.clues.wide import parse_wide, wide_clue
    text = wide_clue(WideSpec("countries", "largest", radius_km=1190.0, figure="area", rank=4), "place", 6)
    assert "of the place that is the answer to clue 6 (a country whose capital is that place itself not excluded)." in text
    back, ref = parse_wide(text)
    assert (back.aggregate, back.rank, back.radius_km, ref) == ("largest", 4, 1190.0, 6)


def test_a_name_written_with_a_number_is_no_hop_by_its_bare_title(ctx):
    """R24 (hard linear): The Blue Marble "was taken ... by one of the astronauts aboard the Apollo 17
    spacecraft": the god the first sentence names was Apollo, read inside the mission's name."""
    from pipeline.stages.hops import named_hops, numbered_elsewhere
    page = ctx.page("The Blue Marble")
    assert numbered_elsewhere(page.lead, "Apollo") and not numbered_elsewhere(page.lead, "Moon")
    assert not numbered_elsewhere("Apollo was a god. Some 12 temples stand.", "Apollo")
    assert "Apollo" not in {h.target for h in named_hops(page, ctx)}
