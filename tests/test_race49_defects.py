"""Defects blind race 49 (benchmarks/blind_race/race-333333, the embedded world) found, each checked where it
was fixed."""
from __future__ import annotations

from pipeline.clues.numbers import counts_safely, doubtful_numbers
from pipeline.stages.facts import prose_facts
from pipeline.stages.verbalize import sentence_refs, sentences_of

CODES = ("Codes 2016 to 7E16, known as the printable characters, represent letters, digits, punctuation marks, "
         "and a few miscellaneous symbols.")


def test_a_sentence_of_codes_gives_no_number_to_count():
    """R16, clue 1: ASCII's "Codes 2016 to 7E16 ..." (the hexadecimal 20 and 7E, their base 16 written as a
    subscript and flattened) was asked as "the first sentence gives a year: which year?" (2016); the racer
    answered it, saying the year was the code 20 in base 16."""
    assert doubtful_numbers(CODES) == ["7E16"]
    assert not counts_safely(CODES)
    assert doubtful_numbers("Its register held the value 0x7F at start.") == ["0x7F"]
    assert counts_safely("The Airbus A380 first flew in 2005 from Toulouse.")   # a name's letters first: no code


def test_the_ascii_page_gives_no_fact_of_its_code_sentence(ctx):
    facts = prose_facts(ctx.page("ASCII"), cross_section=True)
    assert facts and not any(f.extraction.sentence == CODES for f in facts)


def test_no_sentence_is_counted_to_across_a_sentence_opening_with_a_digit(ctx):
    """R16, clue 6: the United Kingdom's "Languages": "... monolingual English speakers. 5.5% of the population
    ..." is two sentences to a reader and one to the split (it cuts only before a capital), so "the fourth
    sentence gives two numbers" meant a reader's fifth; the racer found it by the numbers' count."""
    block = next(s for s in ctx.page("United Kingdom").sections if s.title == "Languages").text
    split = sentences_of(block)
    fourth = split[3]
    assert fourth.startswith("According to the 2011 census") and "speakers. 5.5% of" in split[1]
    assert not any("fourth" in r for r in sentence_refs(block, fourth, []))
    assert any("first sentence" in r for r in sentence_refs(block, split[0], []))


def test_a_name_the_sentence_calls_a_capital_is_a_city_beside_the_hop(ctx):
    """R13, clue 6: "go to the page of the city that the fourth sentence of its opening text names" of Prussia,
    whose fourth sentence says "with its capital at Königsberg and then, ..., Berlin": two cities to a reader;
    the world has no page for Königsberg, so the hop went to Berlin and the racer chose Berlin for that reason."""
    from pipeline.clues.kinds import kin
    from pipeline.stages.hops import called_alike, hops_from
    sentence = next(s for s in sentences_of(ctx.page("Prussia").lead) if "capital at Königsberg" in s)
    assert called_alike(sentence, "Königsberg", kin("city"))
    assert not called_alike("Berlin is the capital of Prussia.", "Prussia", kin("city"))   # the owner is no capital
    assert not [h for h in hops_from("Prussia", ctx) if h.relation.sentence == sentence and h.relation.noun == "city"]


def test_a_hop_from_the_seed_says_it_leaves_the_page_the_leg_started_on():
    """R11, clue 4: "From the page where you found the answer to clue 1, go to the page of the country that the
    third sentence of its opening text names" (clue 1: "the third sentence names a country: which country?" on
    the seed page) was read as the page of that country, the United Kingdom, for eight calls; R07 and R02 weighed
    the same reading. The page the leg starts on is now said so, and the solver reads it."""
    from pipeline.clues.hops import STARTED, WENT, hop_wording, match_hop
    text = hop_wording("described", 1, "country", started=True)
    assert text.startswith("From the page where you found the answer to clue 1 (the page you started on), go to")
    assert match_hop(text).group(1) == "1" and match_hop(hop_wording("described", 3, "city", went=True))
    assert STARTED not in hop_wording("described", 3, "city", went=True) and WENT in hop_wording("described", 3, "city", went=True)


def test_generated_hops_say_started_only_from_the_seed(tmp_path):
    import re

    from flows.generate import GenerationParams, local_map_stage, run_generation
    from pipeline.clues.hops import STARTED
    from pipeline.config import load_settings
    from pipeline.export import load_legs
    from pipeline.stages.base import StageContext
    settings = load_settings(cache_path=tmp_path / "cache.sqlite")
    run_generation(GenerationParams(level="medium", variant="linear", count=2, seed=77), tmp_path / "legs", settings,
                   local_map_stage(StageContext.create(settings)))
    said = 0
    for leg in load_legs(tmp_path / "legs"):
        for clue in leg.clues:
            m = re.match(r"(?:From|On) the page where you found the answer to clue (\d+)( \(the page you started on\))?",
                         clue.text)
            if m:
                seed_clue = leg.stops[int(m.group(1)) - 1].page_title == leg.seed_title
                assert bool(m.group(2)) == seed_clue, clue.text
                said += bool(m.group(2))
    assert said and STARTED.strip(" ()") == "the page you started on"
