"""One clue language (issue 21, item 5): every wording of every clue kind, rendered by
``pipeline.clues`` with real arguments, is read back by the same module's parser into exactly the
arguments it was rendered from. The expected fields are written from the arguments, never copied
from the rendered text."""
from __future__ import annotations

import itertools
import random
from datetime import date, timedelta

import pytest

from pipeline.agents.solver import clues_of, fits, read_answer
from pipeline.catalog import roadblock_templates
from pipeline.clues import (
    EXTREMES,
    LEAD,
    MEASURES,
    ROLE_WORD,
    UNPARSED,
    NumberKind,
    by_description,
    by_description_start,
    by_infobox,
    clue_lines,
    count_word,
    detour_clue,
    finish_clue,
    hop_clue_text,
    hop_wording,
    infobox_ask,
    input_ref,
    merge_clue,
    names_ask,
    nth_section_ref,
    number_kinds,
    numbered_clues,
    ordinal,
    page_clue_text,
    parse_ask,
    parse_circumlocution,
    parse_clue,
    parse_detour,
    parse_finish,
    parse_hop,
    parse_merge,
    parse_page_clue,
    parse_riddle,
    parse_roadblock,
    position_ask,
    roadblock_clue,
    roadblock_reads,
    search_words,
    section_ref,
    sentence_opening_ref,
    sentence_rank_ref,
    singulars,
    subject_ask,
)
from pipeline.expressions import REDUCTIONS
from pipeline.model import DETOUR, FINISH_LINE, LINK_FOLLOW, MERGE, ROADBLOCK, ROUTE_INFO, SEARCH_QUERY
from pipeline.stages.template_args import expand_params
from pipeline.transforms import DETOURS

# where a sentence stands: (rendered block, parsed block), (rendered sentence, parsed sentence)
BLOCKS = [(LEAD, LEAD), (section_ref("History"), ("section", "History")),
          (section_ref("Geography and climate"), ("section", "Geography and climate")),
          (nth_section_ref(3), ("nth_section", 3)), (nth_section_ref(24), ("nth_section", 24))]
SENTENCES = [(sentence_rank_ref(1), ("rank", 1)), (sentence_rank_ref(7), ("rank", 7)),
             (sentence_rank_ref(22), ("rank", 22)),
             (sentence_opening_ref("The river rises"), ("opening", "The river rises")),
             (sentence_opening_ref("Its name, Óbuda,"), ("opening", "Its name, Óbuda,"))]
PLACES = list(itertools.product(BLOCKS, SENTENCES))

# what a number is, as the number vocabulary reads it in real sentences: one kind of every class
SENTENCES_WITH_NUMBERS = [
    "The town was founded in 1850 by settlers.",
    "The treaty was signed on 14 July after a long siege.",
    "He died at the age of 45 in Paris.",
    "About 45% of the land is forest.",
    "The city had a population of 12,000 in the census.",
    "The bridge cost $3 million to build.",
    "The lake covers 120 km2 of the valley.",
    "The company has 300 employees worldwide.",
    "Tourism brings in 3 million each summer.",
    "The fort was built in 55 BC by the legion.",
    "The answer was 7 in every trial.",
]


def kinds_of_every_class() -> list[NumberKind]:
    kinds = [number_kinds(s)[0][1] for s in SENTENCES_WITH_NUMBERS]
    assert {k.cls for k in kinds} >= {"year", "day", "age", "percentage", "population", "money", "measurement",
                                      "count", "scaled", "number"}
    return kinds


CIRCUMLOCUTIONS = [(by_description("River in West Africa"), ("description", "River in West Africa")),
                   (by_description_start("Capital city of"), ("description_start", "Capital city of")),
                   (by_infobox("settlement"), ("infobox", "settlement"))]


# ---- page clues: the question ------------------------------------------------------------------------------
def test_subject_ask():
    assert parse_ask(subject_ask()) == {"source": "subject"}


@pytest.mark.parametrize("value_type, role, year, rounded", [
    ("number", "number", False, False), ("number", "number", False, True), ("number", "number", True, False),
    ("date", "date", False, False), ("place", "country", False, False), ("place", "place", False, False),
    ("company", "company", False, False),
])
def test_infobox_asks(value_type, role, year, rounded):
    label = 'Area (total, km²) "metro"'
    parsed = parse_ask(infobox_ask(value_type, label, role, year=year, rounded=rounded))
    # a text field reads back as the word the question says: "country" for a country, else "place"
    asked = value_type if value_type in ("number", "date") else ("country" if role == "country" else "place")
    assert parsed == {"source": "infobox", "value_type": asked, "year": year, "label": label, "rounded": rounded}


@pytest.mark.parametrize("count, position", [(1, 1), (2, 1), (2, 2), (3, 3), (10, 7), (12, 11)])
def test_names_asks(count, position):
    for (where, block), (sentence, ref) in PLACES:
        parsed = parse_ask(names_ask(where, sentence, count, position))
        assert parsed == {"source": "names", "count": count, "position": position, "block": block, "sentence": ref}


@pytest.mark.parametrize("count, position", [(1, 1), (2, 2), (3, 1), (4, 3), (11, 11)])
def test_position_asks(count, position):
    for kind in [None, *kinds_of_every_class()]:
        phrase = ("a number" if kind is None else kind.singular) if count == 1 else \
            f"{count_word(count)} {'numbers' if kind is None else kind.plural}"
        for (where, block), (sentence, ref) in PLACES:
            parsed = parse_ask(position_ask(where, sentence, kind, count, position))
            assert parsed == {"source": "position", "kind": phrase, "count": count, "position": position,
                              "block": block, "sentence": ref}, (kind, where, sentence)


def test_the_older_quoted_sentence_wording_still_reads():
    ask = 'In its section "Economy", a sentence reads: "The [...] port handles [?] ships a year." ' \
          "What number stands where [?] is?"
    assert parse_ask(ask) == {"source": "sentence", "section": "Economy",
                              "sentence": "The [...] port handles [?] ships a year."}


# ---- page clues: the bridge ----------------------------------------------------------------------------------
def every_ask() -> list[tuple[str, dict]]:
    kind = kinds_of_every_class()[0]
    return [(subject_ask(), {"source": "subject"}),
            (infobox_ask("number", "Elevation", "number", year=False, rounded=True),
             {"source": "infobox", "value_type": "number", "year": False, "label": "Elevation", "rounded": True}),
            (names_ask(nth_section_ref(2), sentence_rank_ref(3), 2, 2),
             {"source": "names", "count": 2, "position": 2, "block": ("nth_section", 2), "sentence": ("rank", 3)}),
            (position_ask(LEAD, sentence_opening_ref("It lies"), kind, 1, 1),
             {"source": "position", "kind": kind.singular, "count": 1, "position": 1, "block": LEAD,
              "sentence": ("opening", "It lies")})]


@pytest.mark.parametrize("variant", [0, 1, 2, 3, 5])
def test_seed_clues(variant):
    for ask, fields in every_ask():
        text = page_clue_text(first=True, bridge=LINK_FOLLOW, ask=ask, variant=variant)
        assert parse_page_clue(text) == {"bridge": "seed", "ask": fields}
        assert parse_clue(text) == {"kind": ROUTE_INFO, "op": "seed", "refs": []}


@pytest.mark.parametrize("variant", [0, 1, 2, 4])
@pytest.mark.parametrize("bridge", [LINK_FOLLOW, SEARCH_QUERY])
def test_link_and_search_clues(bridge, variant):
    for (circ, read), (ask, fields) in itertools.product(CIRCUMLOCUTIONS, every_ask()):
        text = page_clue_text(first=False, bridge=bridge, from_clue=13, circ=circ, ask=ask, variant=variant)
        parsed = parse_page_clue(text)
        expected = {"bridge": bridge, "circ": circ, "ask": fields}
        if bridge == LINK_FOLLOW:
            expected["from_clue"] = 13
        assert parsed == expected, text
        assert parse_circumlocution(parsed["circ"]) == read and search_words(parsed["circ"]) == read[1]
        assert parse_clue(text) == {"kind": ROUTE_INFO, "op": bridge, "refs": [13] if bridge == LINK_FOLLOW else []}


# ---- hops ----------------------------------------------------------------------------------------------------
def test_named_hops():
    for (where, block), (sentence, ref) in PLACES:
        for noun, position, count in [("river", None, None), ("religious text", None, None), ("city", 2, 3),
                                      ("port city", 1, 2), ("country", 4, 4)]:
            text = hop_wording("named", 9, noun, sentence=sentence, where=where, count=count, position=position)
            parsed = parse_hop(text)
            if position is not None:   # "the second of the three cities": the kind word in the plural
                assert noun in singulars(parsed.pop("nouns")), text
                parsed["noun"] = noun
            assert parsed == {"kind": "named", "from_clue": 9, "noun": noun, "position": position,
                              "count": count, "block": block, "sentence": ref}, text


@pytest.mark.parametrize("noun", ["river", "poet", "religious text", "capital"])
def test_described_and_infobox_hops(noun):
    assert parse_hop(hop_wording("described", 4, noun)) == {"kind": "described", "from_clue": 4, "noun": noun}
    label = "Largest city"
    assert parse_hop(hop_wording("infobox", 12, noun, label=label)) == {"kind": "infobox", "from_clue": 12,
                                                                         "noun": noun, "label": label}


def test_choice_hops():
    for (where, block), (sentence, ref) in PLACES:
        for extreme, measure, count in itertools.product(EXTREMES, MEASURES, (2, 5)):
            text = hop_wording("choice", 3, "country", sentence=sentence, where=where, count=count, extreme=extreme,
                               measure=measure)
            assert parse_hop(text) == {"kind": "choice", "from_clue": 3, "count": count, "extreme": extreme,
                                       "measure": measure, "block": block, "sentence": ref}, text


def test_hop_clues_carry_their_question():
    hop = hop_wording("described", 6, "river")
    for ask, fields in every_ask():
        text = hop_clue_text(hop, ask, variant=1)
        assert parse_page_clue(text) == {"bridge": "hop", "kind": "described", "from_clue": 6, "noun": "river",
                                         "ask": fields}
        assert parse_clue(text) == {"kind": ROUTE_INFO, "op": "hop", "refs": [6]}


# ---- roadblocks, detours, merges, the finish line -------------------------------------------------------------
def param_variants(template: dict) -> list[dict]:
    """Every listed value of every parameter at least once, and each date range's first and last day."""
    params = template.get("params", {})
    if not params:
        return [{}]
    width = max(len(v) if isinstance(v, list) else 2 for v in params.values())
    out = []
    for k in range(width):
        drawn = {}
        for name, choices in params.items():
            if isinstance(choices, str):
                first, _, last = choices.partition("..")
                drawn[name] = first if k % 2 == 0 else last
            else:
                drawn[name] = choices[k % len(choices)]
        out.append(drawn)
    return out


@pytest.mark.parametrize("name", sorted(roadblock_templates()))
def test_roadblocks_of_every_template(name):
    template = roadblock_templates()[name]
    for drawn, clues in itertools.product(param_variants(template), ([2, 5], [11, 1], [7, 7])):
        inputs = clues[:len(template["inputs"])]
        params = expand_params(drawn)
        fields = dict(params)
        for k, (role, clue) in enumerate(zip(template["inputs"], inputs)):
            fields[f"in{k}"] = input_ref(role, clue)
        text = roadblock_clue(template["value"], fields)
        dates = {p: v for p, v in drawn.items() if isinstance(template["params"][p], str)}
        assert parse_roadblock(text) == [{"op": name, "refs": inputs, "dates": dates}], text
        assert roadblock_reads(template["value"], params, inputs, text)
        assert not roadblock_reads(template["value"], params, [i + 1 for i in inputs], text) or not inputs
        assert not roadblock_reads(template["value"], params, inputs, text[:-1] + " twice.")
        for other in param_variants(template):   # other parameters read otherwise
            if expand_params(other) != params and roadblock_clue(template["value"], {**fields, **expand_params(other)}) != text:
                assert not roadblock_reads(template["value"], expand_params(other), inputs, text)
        assert parse_clue(text) == {"kind": ROADBLOCK, "op": name, "refs": inputs}


def test_every_role_has_its_word():
    for role in ("place", "country", "date", "number", "company", "coin"):
        assert input_ref(role, 4).startswith(f"the {ROLE_WORD[role]} ")


@pytest.mark.parametrize("name", sorted(DETOURS))
def test_detours(name):
    for clue in (1, 9, 23):
        text = detour_clue(name, clue)
        assert parse_detour(text) == (name, clue)
        assert parse_clue(text) == {"kind": DETOUR, "op": name, "refs": [clue]}


@pytest.mark.parametrize("kind", ["sum", "abs_difference"])
def test_merges(kind):
    text = merge_clue(kind, 4, 12)
    assert parse_merge(text) == {"op": kind, "refs": [4, 12]}
    assert parse_clue(text) == {"kind": MERGE, "op": kind, "refs": [4, 12]}


@pytest.mark.parametrize("kind", REDUCTIONS)
@pytest.mark.parametrize("refs", [[3], [2, 9], [1, 4, 10], [3, 6, 8, 12, 15]])
def test_finish_lines(kind, refs):
    text = finish_clue(kind, refs)
    half = max(1, len(refs) // 2)
    two_sided = "abs_difference" in kind
    groups = [refs[:half], refs[half:] or refs[:half]] if two_sided else [refs]
    assert parse_finish(text) == {"op": kind, "groups": groups, "refs": [r for g in groups for r in g]}
    assert parse_clue(text) == {"kind": FINISH_LINE, "op": kind, "refs": sorted(set(refs)), "groups": groups}


# ---- the riddle -----------------------------------------------------------------------------------------------
def a_riddle() -> tuple[str, list[dict]]:
    """A riddle of one clue of every kind, and the steps it was written from."""
    template = roadblock_templates()["geocode_elevation"]
    clues = [
        (page_clue_text(first=True, bridge=LINK_FOLLOW, ask=subject_ask(), variant=2),
         {"kind": ROUTE_INFO, "op": "seed", "refs": []}),
        (page_clue_text(first=False, bridge=LINK_FOLLOW, from_clue=1, circ=by_infobox("river"),
                        ask=infobox_ask("number", "Length", "number"), variant=0),
         {"kind": ROUTE_INFO, "op": LINK_FOLLOW, "refs": [1]}),
        (page_clue_text(first=False, bridge=SEARCH_QUERY, circ=by_description("Port city in Chile"),
                        ask=infobox_ask("place", "Country", "country"), variant=1),
         {"kind": ROUTE_INFO, "op": SEARCH_QUERY, "refs": []}),
        (hop_clue_text(hop_wording("named", 2, "lake", sentence=sentence_rank_ref(2), where=LEAD),
                       position_ask(section_ref("Geography"), sentence_rank_ref(1), None, 2, 2), variant=0),
         {"kind": ROUTE_INFO, "op": "hop", "refs": [2]}),
        (roadblock_clue(template["value"], {"in0": input_ref("place", 3)}),
         {"kind": ROADBLOCK, "op": "geocode_elevation", "refs": [3]}),
        (detour_clue("digit_sum", 4), {"kind": DETOUR, "op": "digit_sum", "refs": [4]}),
        (merge_clue("sum", 5, 6), {"kind": MERGE, "op": "sum", "refs": [5, 6]}),
        (finish_clue("sum_mod_10", [7]), {"kind": FINISH_LINE, "op": "sum_mod_10", "refs": [7], "groups": [[7]]}),
    ]
    return "\n\n".join(f"{n}. {text}" for n, (text, _) in enumerate(clues, start=1)), [s for _, s in clues]


def test_the_riddle_parser_reads_every_kind():
    riddle, steps = a_riddle()
    assert parse_riddle(riddle) == steps
    assert parse_riddle(riddle + "\n\nnot a clue") == [*steps, {"kind": UNPARSED, "op": None, "refs": []}]


def test_the_solver_and_the_aar_import_split_clues_alike():
    riddle, steps = a_riddle()
    lines = clue_lines(riddle)
    assert [n for n, _ in lines] == list(range(1, len(steps) + 1))
    assert clues_of(riddle) == lines
    assert numbered_clues(riddle) == lines
    assert numbered_clues(riddle.replace("\n\n", "\n")) == lines   # an AAR riddle may use single newlines
    with pytest.raises(ValueError):
        clue_lines("1. One clue.\n\n3. Another.")


# ---- the solver reads what verbalize renders ---------------------------------------------------------------
def test_the_solver_reads_rendered_questions():
    page = {"title": "Lake Example", "lead": "The lake lies high. It covers 120 km2 and was dammed in 1931 and 1957.",
            "sections": [{"title": "History", "text": "Settlers came in 1820. The dam rose 80 m in 1931."}],
            "infobox": [{"name": "area", "label": "Area", "text": "120 km2", "number": 120.4}],
            "description": "Reservoir in Example Country", "infobox_type": "body_of_water"}
    years = next(k for _, k in number_kinds("founded in 1931 and 1957") if k.cls == "year")
    assert read_answer(page, infobox_ask("number", "Area", "number")) == 120
    assert read_answer(page, subject_ask()) == "Lake Example"
    assert read_answer(page, position_ask(LEAD, sentence_rank_ref(2), years, 2, 2)) == 1957
    assert read_answer(page, position_ask(LEAD, sentence_rank_ref(2), None, 3, 1)) == 120
    assert read_answer(page, position_ask(section_ref("History"), sentence_opening_ref("Settlers came in"), None,
                                          1, 1)) == 1820
    assert read_answer(page, position_ask(nth_section_ref(1), sentence_rank_ref(2), None, 2, 2)) == 1931
    assert fits(page, by_description("Reservoir in Example Country"))
    assert fits(page, by_description_start("Reservoir in"))
    assert not fits(page, by_description_start("Reservoir in Ex"))


def test_ordinals_and_dates_agree_with_the_vocabulary():
    assert [ordinal(n) for n in (1, 2, 3, 11, 21, 22, 23, 101)] == ["first", "second", "third", "eleventh",
                                                                    "21st", "22nd", "23rd", "101st"]
    day = date(2012, 1, 1) + timedelta(days=random.Random(5).randrange(100))
    template = roadblock_templates()["geocode_weather_historical"]
    text = roadblock_clue(template["value"], {"in0": input_ref("place", 2), "date": day.isoformat()})
    assert parse_roadblock(text)[0]["dates"] == {"date": day.isoformat()}
