"""What blind race 45 (benchmarks/blind_race/race-292929, the 10^6-page synthetic world) found, held by a
test: "the page where you found the answer to clue N", where clue N went to a page of its own, read as the
page clue N started from (R01; races 34, 37, 38 and 43 before it)."""
from __future__ import annotations

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.clues.hops import FROM_PAGE, WENT, hop_wording, match_hop, parse_hop
from pipeline.config import load_settings
from pipeline.stages.base import StageContext
from pipeline.stages.verbalize import skip_probe_words

HOP_OPENINGS = (f"From {FROM_PAGE} ", f"On {FROM_PAGE} ")


def test_a_hop_from_a_page_a_clue_went_to_says_so_and_reads_back():
    text = hop_wording("choice", 18, "country", sentence="the third sentence", where="opening text", count=5,
                       extreme="largest", measure="population density", went=True)
    assert text.startswith("On the page where you found the answer to clue 18 (the page that clue went to), ")
    assert parse_hop(text) == parse_hop(text.replace(WENT, "")) and match_hop(text).group(1) == "18"
    # the reference says nothing searched: the skip probe's words are the same either way
    assert skip_probe_words(text) == skip_probe_words(text.replace(WENT, ""))


def test_generated_hops_say_when_the_page_they_leave_was_gone_to(tmp_path):
    settings = load_settings(cache_path=tmp_path / "cache.sqlite")
    params = GenerationParams(level="hard", variant="linear", count=2, seed=45)
    result = run_generation(params, tmp_path / "run", settings, local_map_stage(StageContext.create(settings)))
    seen = {True: 0, False: 0}
    for leg in result.accepted:
        texts = {c.stop: c.text for c in leg.clues}
        for stop in leg.stops:
            text = texts.get(stop.index, "")
            if stop.transition is None or stop.transition.from_stop is None or not text.startswith(HOP_OPENINGS):
                continue   # not a hop through the page before (the seed, a search bridge)
            went = "go to the page" in texts[stop.transition.from_stop]   # that clue sent the reader on
            assert (WENT in text) is went, text
            seen[went] += 1
    assert seen[True] and seen[False]   # both forms met: hops from hops, and hops from the seed
