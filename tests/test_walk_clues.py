"""Issue 14, item 6: page clues that must be walked. A page stop's clue names its fact without
quoting the text around it (the infobox label; the section, the sentence's position there and what
the number is), the riddle-only solver reads that wording from the page alone and refuses a
wording with two readings, and no search made with a page clue's words shows the stop's value in
its top-5 snippets."""
from __future__ import annotations

import re

import pytest

from flows.generate import BudgetExhausted, GenerationParams, local_map_stage, run_generation
from pipeline.agents.solver import (
    AMBIGUOUS,
    FAILED,
    SOLVED,
    RiddleView,
    fits,
    sentences_of,
    solve,
)
from pipeline.clues import (
    ASK,
    LINK_BRIDGE,
    SEARCH_BRIDGE,
    measured_alone,
    number_kinds,
    ordinal,
    ordinal_value,
    parse_riddle,
    search_words,
)
from pipeline.clues.hops import REFERENCE_LEAD
from pipeline.model import ROUTE_INFO, Extraction, FactSpec, Stop
from pipeline.snapshot.page import title_to_url
from pipeline.stages import verbalize
from pipeline.stages.facts import SENTENCE_SPLIT, prose_facts

FINISH = "Finally, add up the result of clue 1 and keep only the last digit of the total. That single digit is the passcode."
QUOTE_RUN = 6   # a page clue shares no run of this many consecutive words with its fact's sentence


@pytest.fixture(scope="module")
def toronto(ctx):
    return ctx.toolbox.call("fetch_webpage", {"url": title_to_url("Toronto")}).data


@pytest.fixture(scope="module")
def legs(ctx, tmp_path_factory):
    """Accepted legs of every level that asks for prose facts, both variants."""
    out = []
    for level, variant, seed in (("medium", "linear", 5), ("hard", "linear", 7), ("hard", "dag", 3),
                                 ("extreme", "linear", 11)):
        try:
            result = run_generation(GenerationParams(level=level, variant=variant, count=2, seed=seed),
                                    tmp_path_factory.mktemp("run"), ctx.settings, local_map_stage(ctx))
        except BudgetExhausted as exc:   # fewer legs than asked: the checks run on those accepted
            result = exc.result
        out += result.accepted
    assert out, "no leg accepted at all"
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _shared_run(a: str, b: str, n: int) -> str | None:
    """A run of ``n`` consecutive words of ``b`` that also stands in ``a`` (word for word), or None."""
    wa, wb = _words(a), _words(b)
    runs = {tuple(wa[i:i + n]) for i in range(len(wa) - n + 1)}
    return next((" ".join(wb[i:i + n]) for i in range(len(wb) - n + 1) if tuple(wb[i:i + n]) in runs), None)


def _riddle(ask: str) -> str:
    return f"1. Start on the page you are given. {ask}\n\n2. {FINISH}"


# ---- generated legs -------------------------------------------------------------------------------
def test_no_page_clue_quotes_the_sentence_of_its_fact(legs):
    checked = 0
    for leg in legs:
        clues = {c.stop: c.text for c in leg.clues}
        for stop in leg.stops_of(ROUTE_INFO):
            if stop.extraction.source not in ("prose", "cross_section"):
                continue
            shared = _shared_run(clues[stop.index], stop.extraction.sentence, QUOTE_RUN)
            assert shared is None, f"clue {stop.index + 1} quotes {shared!r}: {clues[stop.index]!r}"
            assert "[?]" not in clues[stop.index]
            checked += 1
    assert checked, "no generated leg asked for a number in a sentence"


def test_no_page_clue_states_its_own_value(legs):
    """A description such as "1939 film by Victor Fleming" or a section titled by a year gives the
    answer away: such a wording is never taken."""
    for leg in legs:
        clues = {c.stop: c.text for c in leg.clues}
        for stop in leg.stops_of(ROUTE_INFO):
            assert not verbalize.value_shown(stop.value, [clues[stop.index]]), clues[stop.index]


def test_no_search_with_a_page_clue_s_words_shows_the_value(ctx, legs):
    """What benchmarks/snippets.py measures, on every page stop but the seed: a search with the whole
    clue (its reference to an earlier clue aside, as ``verbalize.search_exposure`` searches), then with the words of its description of the page alone. The page's own snippet never
    shows the value; another page's snippet may only for the clues the leg notes as coincidences."""
    checked = 0
    for leg in legs:
        clues = {c.stop: c.text for c in leg.clues}
        coincidences = set(leg.metadata.get("snippet_coincidences", []))
        for stop in leg.stops_of(ROUTE_INFO):
            if stop.index == 0:
                continue
            text = REFERENCE_LEAD.sub(" ", clues[stop.index]).strip()   # "From the page where you found the
            bridge = ASK.split(text, maxsplit=1)[0]    # answer to clue 7," names nothing searched (verbalize does so)
            if stop.transition.relation is not None:   # a hop (issue 21): its wording names no key of the page
                queries = (text, bridge)
            else:
                queries = (text, search_words((LINK_BRIDGE.match(bridge) or SEARCH_BRIDGE.match(bridge)).groups()[-1]))
            for query in queries:
                hits = ctx.toolbox.call("web_search", {"query": query[:300], "num_results": 5}).data["results"]
                own = [h["snippet"] for h in hits if h["title"] == stop.page_title]
                assert not verbalize.value_shown(stop.value, own), (query, stop.value)
                if stop.index + 1 not in coincidences:
                    assert not verbalize.value_shown(stop.value, [h["snippet"] for h in hits]), (query, stop.value)
            checked += 1
    assert checked


def test_page_clues_still_parse_into_the_steps_of_the_leg(legs):
    """``parse_riddle`` (the round trip's reference parser) reads every page clue's new wording as the
    page step it is (seed, link followed from which clue, search)."""
    for leg in legs:
        parsed, expected = parse_riddle(leg.riddle), verbalize.expected_steps(leg)
        assert len(parsed) == len(expected)
        pages = [n for n, step in enumerate(expected) if step["kind"] == ROUTE_INFO]
        assert pages and [parsed[n] for n in pages] == [expected[n] for n in pages]


# ---- the solver reads the wording ---------------------------------------------------------------------
@pytest.mark.parametrize("ask, value", [
    ("In its opening text, the sixth sentence gives a year: which year?", 1834),
    ("In its opening text, the seventh sentence gives two years: what is the second of the two?", 1904),
    ('In its section "Geography", the first sentence gives a measurement in square kilometres: what number?', 630),
    (('In its section "Geography", the first sentence gives two measurements in kilometres: what is the second '
      'of the two?'), 43),
    ("In its opening text, the eleventh sentence gives two populations: what is the second of the two?", 6054191),
    ("In its opening text, the eleventh sentence gives three numbers: what is the first of the three?", 5583064),
])
def test_the_solver_reads_a_number_by_its_place_and_kind(ctx, toronto, ask, value):
    solution = solve(RiddleView(riddle=_riddle(ask), seed_url=toronto["url"]), ctx.toolbox)
    assert solution.status == SOLVED, solution.reason
    assert solution.values[1] == value


def test_the_solver_counts_sentences_as_the_facts_stage_cuts_them(toronto):
    pieces = [p.strip() for p in SENTENCE_SPLIT.split(toronto["lead"])]
    assert sentences_of(toronto["lead"]) == pieces
    assert "1834" in pieces[5] and "1849" in pieces[6] and "1904" in pieces[6]


@pytest.mark.parametrize("ask, status", [
    # two years stand in the sentence: "a year" has two readings
    ("In its opening text, the seventh sentence gives a year: which year?", AMBIGUOUS),
    # "two numbers" without saying which one
    ("In its opening text, the seventh sentence gives two years: which year?", AMBIGUOUS),
    # the sentence gives two years, not three
    ("In its opening text, the seventh sentence gives three years: what is the second of the three?", FAILED),
    # no such sentence, no such section, no year in that sentence
    ("In its opening text, the 99th sentence gives a year: which year?", FAILED),
    ('In its section "Nowhere", the first sentence gives a year: which year?', FAILED),
    ("In its opening text, the first sentence gives a year: which year?", FAILED),
])
def test_the_solver_refuses_a_wording_without_exactly_one_reading(ctx, toronto, ask, status):
    solution = solve(RiddleView(riddle=_riddle(ask), seed_url=toronto["url"]), ctx.toolbox)
    assert solution.status == status, solution.reason
    assert solution.answer is None
    assert "clue 1" in solution.reason


# ---- what a number is -------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence, kinds", [
    ("Founded in 1746 in Elizabeth as the College of New Jersey, Princeton is the fourth-oldest college.",
     ["a year"]),
    ("It covers an area of 78,871 square kilometers (30,452 sq mi) with a mostly temperate climate.",
     ["a measurement in square kilometres", "a measurement in square miles"]),
    ("The oldest butterfly fossils have been dated to the Paleocene, about 56 million years ago.",
     ["a number of years in millions"]),
    ("York was incorporated as the City of Toronto on March 6, 1834, reverting to its native name.",
     ["a day of a month", "a year"]),
    ("He received the prize at the age of 44, the second-youngest recipient in history.", ["an age"]),
    ("Philip II was the king of Macedon from 359 BC until his death in 336 BC.", ["a year BC", "a year BC"]),
    ("About 12 percent of the company's 4,500 employees work abroad, earning $300 a week.",
     ["a percentage", "a number of employees", "an amount in dollars"]),
    ("The region had a population of about 6 million, spread over 120 small villages.",
     ["a population in millions", "a number of small villages"]),
])
def test_a_number_is_named_by_the_words_around_it(sentence, kinds):
    assert [k.singular for _, k in number_kinds(sentence)] == kinds


def test_ordinals_read_back():
    for n in range(1, 130):
        assert ordinal_value(ordinal(n)) == n
    assert [ordinal(n) for n in (1, 3, 11, 21, 22, 23, 112)] == ["first", "third", "eleventh", "21st", "22nd", "23rd",
                                                                 "112th"]


# ---- verbalize's wording ------------------------------------------------------------------------------
def _prose_stop(ctx, title: str, section: str, needle: str) -> Stop:
    page = ctx.page(title)
    fact = next(f for f in prose_facts(page, cross_section=bool(section))
                if f.extraction.section == section and needle in f.extraction.sentence)
    return Stop(index=0, kind=ROUTE_INFO, description="a number", page_title=title, page_url=title_to_url(title), extraction=fact.extraction,
                fact=FactSpec(role="number", label=fact.label), value=fact.value, value_type="number")


def test_the_wording_of_a_number_in_a_sentence_is_golden(ctx, toronto):
    # "It was damaged by two huge fires, in 1849 and 1904": "two" is a number to some readers (issue 21)
    assert not any("two huge fires" in f.extraction.sentence for f in prose_facts(ctx.page("Toronto"), False))
    stop = _prose_stop(ctx, "Toronto", "", "ransacked in the Battle")
    assert stop.value == 1812 and stop.extraction.number_index == 0
    # the sentence's one number: asked by what it is first, then plainly
    assert verbalize.ask_options(stop, [], toronto) == [
        "In its opening text, the fifth sentence gives a year: which year?",
        "In its opening text, the fifth sentence gives a number: what number?",
        'In its opening text, the sentence that begins with the words "The city was" gives a year: which year?',
        'In its opening text, the sentence that begins with the words "The city was" gives a number: what number?',
    ]
    stop = _prose_stop(ctx, "Toronto", "Geography", "covers an area")
    # three numbers (630 km2, 21 km, 43 km): by rank only, since what each is ("a measurement in square
    # kilometres") is the generator's grammar, not a reader's; with the page's name forbidden, the
    # sentence's first words ("Toronto covers an area") are no option; and "Geography" follows three
    # subsections (of History, whose heading holds no text), so "its fourth section" is no option either:
    # it is the first section to a reader counting sections, not subsections (blind race 10, R16)
    assert verbalize.ask_options(stop, ["Toronto"], toronto) == [
        'In its section "Geography", the first sentence gives three numbers: what is the first of the three?',
    ]


def test_a_sentence_far_down_or_past_a_doubtful_cut_is_named_by_its_first_words():
    block = ("The band toured widely. It was led by John F. Kennedy Smith for years. The label signed them in 1961. "
             "The label dropped them in 1965.")
    assert sentences_of(block)[2] == "Kennedy Smith for years."      # what facts.SENTENCE_SPLIT makes of "F."
    # past a cut a reader may not count ("John F. Kennedy"), its rank is no wording at all (a racer counted
    # 31 sentences where the split made 27, issue 21)
    assert verbalize.sentence_refs(block, "The label dropped them in 1965.", []) == [
        'the sentence that begins with the words "The label dropped"']
    assert verbalize.sentence_refs(block, "The band toured widely.", []) == ["the first sentence"]
    quoted = 'He was called "Brother Ray." Fans loved him for decades. The label signed them in 1961.'
    assert len(sentences_of(quoted)) == 2     # no cut after a full stop inside quotes: a reader counts three
    assert verbalize.sentence_refs(quoted, "The label signed them in 1961.", []) == [
        'the sentence that begins with the words "The label signed"']
    # the first words are given only when they name no leg page and hold no number: then nothing is left
    assert verbalize.sentence_refs(block, "The label dropped them in 1965.", ["label"]) == []
    long = " ".join(f"Sentence number {w} is here." for w in ("one", "two", "three", "four", "five", "six", "seven",
                                                               "eight", "nine", "ten", "eleven", "twelve"))
    assert verbalize.sentence_refs(long, "Sentence number twelve is here.", []) == [
        'the sentence that begins with the words "Sentence number twelve"', "the twelfth sentence"]


def test_a_sentence_past_a_sub_heading_is_never_counted_to():
    """Blind race 6, R08: a section's sub-heading ("Privateers era", no full stop) is glued by the cut to
    the sentence after it; one reader counts it as a sentence, another does not. Past it a sentence is
    named by its first words only, and the glued sentence itself not at all."""
    block = ("The regency was orderly for a long time. Tribes were tolerated in the mountains of the east.\n\n"
             "Privateers era\n\nThe pirates preyed on ships in the western sea. Captured crews were sold in "
             "the markets of the city. Trade went on.")
    assert sentences_of(block)[2].startswith("Privateers era")
    assert verbalize.sentence_refs(block, "Captured crews were sold in the markets of the city.", []) == [
        'the sentence that begins with the words "Captured crews were"']
    assert verbalize.sentence_refs(block, "Privateers era The pirates preyed on ships in the western sea.", []) == []
    assert verbalize.sentence_refs(block, "Tribes were tolerated in the mountains of the east.", [])[0] == (
        "the second sentence")


def test_the_solver_reads_a_sentence_by_its_first_words(ctx, toronto):
    ask = ('In its opening text, the sentence that begins with the words "It was damaged" gives two years: what is '
           "the second of the two?")
    solution = solve(RiddleView(riddle=_riddle(ask), seed_url=toronto["url"]), ctx.toolbox)
    assert solution.status == SOLVED and solution.values[1] == 1904
    # "It" begins several sentences of the opening text: two readings
    ask = 'In its opening text, the sentence that begins with the words "It" gives a year: which year?'
    solution = solve(RiddleView(riddle=_riddle(ask), seed_url=toronto["url"]), ctx.toolbox)
    assert solution.status == AMBIGUOUS


def test_every_wording_verbalize_offers_reads_back_to_the_value(ctx):
    """For each prose fact of a few pages, each wording in ``ask_options`` is read by the solver to
    the fact's value, and quotes no run of ``QUOTE_RUN`` words of the sentence."""
    checked = 0
    for title in ("Toronto", "Ray Charles", "Princeton University", "Andorra"):
        page = ctx.toolbox.call("fetch_webpage", {"url": title_to_url(title)}).data
        for cross in (False, True):
            for fact in prose_facts(ctx.page(title), cross_section=cross)[:6]:
                stop = Stop(index=0, kind=ROUTE_INFO, description="a number", page_title=title, page_url=page["url"],
                            extraction=fact.extraction, fact=FactSpec(role="number", label=fact.label),
                            value=fact.value, value_type="number")
                for ask in verbalize.ask_options(stop, [], page):
                    solution = solve(RiddleView(riddle=_riddle(ask), seed_url=page["url"]), ctx.toolbox)
                    assert solution.values.get(1) == fact.value, (ask, fact.extraction.sentence, solution.reason)
                    assert _shared_run(ask, fact.extraction.sentence, QUOTE_RUN) is None, ask
                    checked += 1
    assert checked >= 10


def test_a_number_a_scale_word_follows_is_asked_by_what_it_is_only(ctx):
    """Blind race 17, R21: Russia's "With a population of over 140 million" asked as "the third sentence
    gives a number: what number?" is 140 to one reader and 140,000,000 to another; asked as "a population
    in millions: how many millions?" (as R22 was asked) it is 140 to both."""
    russia = ctx.toolbox.call("fetch_webpage", {"url": title_to_url("Russia")}).data
    stop = _prose_stop(ctx, "Russia", "", "140 million")
    assert stop.value == 140 and verbalize.scaled_numbers(stop.extraction.sentence) == {stop.extraction.number_index}
    asks = verbalize.ask_options(stop, [], russia)
    assert asks and all("a population in millions: how many millions?" in a for a in asks), asks
    assert not verbalize.scaled_numbers("It was ransacked in 1812 by 300 soldiers.")


def test_a_number_of_countries_beside_countries_the_sentence_names_is_asked_by_position_only(ctx):
    """Blind race 20, R01: Asia's "Bangladesh, India, Vietnam, Thailand, Pakistan and Sri Lanka were among the
    16 countries facing extreme risk", asked "gives a number of countries: how many?", is 16 to one reader and
    6 (the countries it names) to another; asked "gives a number: what number?" it is 16 to both."""
    asia = ctx.toolbox.call("fetch_webpage", {"url": title_to_url("Asia")}).data
    stop = _prose_stop(ctx, "Asia", "Climate change", "among the 16 countries")
    assert stop.value == 16
    asks = verbalize.ask_options(stop, [], asia)
    assert asks and not any("number of countries" in a for a in asks) and all("gives a number: what number?" in a
                                                                               for a in asks), asks
    kind = verbalize.number_kinds(stop.extraction.sentence)[stop.extraction.number_index][1]
    assert verbalize.counts_what_it_names(stop.extraction.sentence, kind)
    assert not verbalize.counts_what_it_names("Its 27 member countries signed the treaty.",
                                              verbalize.number_kinds("Its 27 member countries signed the treaty.")[0][1])


def test_a_kind_naming_a_leg_page_falls_back_to_a_plain_number(ctx, toronto):
    stop = _prose_stop(ctx, "Toronto", "", "ransacked in the Battle")
    asks = verbalize.ask_options(stop, ["year"], toronto)
    assert asks and not any("year" in a for a in asks)
    assert asks[0] == "In its opening text, the fifth sentence gives a number: what number?"


def test_a_sentence_whose_numbers_readers_count_differently_is_never_asked_by_rank(ctx, toronto):
    # "According to the 2011 Census, the city has 2.6 million residents": 2.6 or 2,600,000 where asked by
    # rank? facts makes no fact of it, and a stop made by hand of it gets no wording either
    stop = Stop(index=0, kind=ROUTE_INFO, description="a number", page_title="Toronto", page_url=toronto["url"],
                extraction=Extraction(source="prose", section="",
                                      sentence=sentences_of(toronto["lead"])[8], number_index=0),
                fact=FactSpec(role="number", label=""), value=2011, value_type="number")
    assert "2.6 million residents" in stop.extraction.sentence
    assert verbalize.ask_options(stop, [], toronto) == []


def test_a_description_may_be_cut_to_its_first_words():
    assert verbalize.description_starts("Prime Minister of the United Kingdom from 1940 to 1945") == [
        "Prime Minister of the United Kingdom from 1940", "Prime Minister of the United Kingdom",
        "Prime Minister of the United", "Prime Minister", "Prime"]
    assert verbalize.description_starts('"Hit the Road Jack" song (1961)') == ['"Hit the Road Jack" song',
                                                                               '"Hit the Road Jack"']
    circ = 'the page whose short description begins with the words "Most populous"'
    assert fits({"description": "Most populous city in Canada"}, circ)
    assert not fits({"description": "Most populousness"}, circ)


def test_a_value_is_shown_in_any_form_an_agent_would_recognise():
    assert verbalize.value_shown(78871, ["…covers an area of 78,871 square kilometers…"])
    assert verbalize.value_shown(1834, ["In 1834, York became a city"])
    assert not verbalize.value_shown(1834, ["In 18345 or 1.1834 or 21834"])
    assert verbalize.value_shown("1930-09-23", ["Ray Charles (September 23, 1930 – June 10, 2004)"])
    assert verbalize.value_shown("1930-09-23", ["born 23 September 1930"])
    assert verbalize.value_shown("Toronto, Ontario", ["a city in toronto, ontario"])
    assert not verbalize.value_shown(True, ["True"])


def test_a_search_answers_a_stop_when_the_page_s_own_snippet_shows_its_value(ctx):
    query = "largest city of Canada on Lake Ontario"
    hits = ctx.toolbox.call("web_search", {"query": query, "num_results": 5}).data["results"]
    numbers = {h["title"]: {int(x) for x in re.findall(r"(?<![\d.,])\d{2,4}(?![\d.,])", h["snippet"])} for h in hits}
    title = next((t for t, ns in numbers.items() if ns), None)
    if title is None:
        pytest.skip("no snippet of that search shows a number")
    others = set().union(*(ns for t, ns in numbers.items() if t != title))
    own = min(numbers[title])
    assert verbalize.search_exposure(ctx, query, own, title, {}) == verbalize.PAGE
    elsewhere = sorted(others - numbers[title])
    if elsewhere:
        assert verbalize.search_exposure(ctx, query, elsewhere[0], title, {}) == verbalize.ELSEWHERE
    absent = next(n for n in range(9001, 9999) if n not in numbers[title] | others)
    assert verbalize.search_exposure(ctx, query, absent, title, {}) is None


# ---- a number asked by its unit alone, where readers count the sentence's numbers differently ----------
@pytest.mark.parametrize("sentence, alone", [
    # a quantity and its conversion: one distance to some readers, two numbers to others; each unit once
    ("Liverpool lies 178 miles (286 km) north-west of London.", [0, 1]),
    # "kilometres" is in "square kilometres": the length is no question by unit, the areas are
    ("The lake covers 1,200 km2 (463 sq mi), is 80 km long and holds 7 islands.", [0, 1]),
    (("Approximately 2,200 km (1,400 mi) long, with a drainage basin of 504,000 square kilometres (195,000 mi2), "
     "it is the longest river of Ukraine and Belarus."), [2, 3]),
    # two numbers of one unit: which one? none by unit alone
    ("The tower is 300 m tall, 20 m wide and stands on 4 legs since 1889.", []),
    # beside a number of no known kind ("12,000 mi3"), the unit of that one is unknown to the rule
    ("The river is 300 km long and its basin is 12,000 mi3 in volume.", []),
    # a scaled measurement ("2.2 million km2") is a number a reader may write two ways
    ("Its empire covered 2 million km2 (0.8 million sq mi) at its height.", []),
])
def test_a_number_a_reader_finds_by_its_unit_alone(sentence, alone):
    assert measured_alone(sentence) == alone


def test_a_sentence_with_a_conversion_gives_its_measurement_by_unit_only(ctx):
    """Austria's "an area of 83,879 km2 (32,386 sq mi) and ... about 9.2 million": no clue counts its
    numbers (a conversion, a scale word), yet its area in square kilometres is one number to every reader
    (imported pages' opening texts, issue 21 item 9). The fact is made, asked by unit only, and read back."""
    austria = ctx.toolbox.call("fetch_webpage", {"url": title_to_url("Austria")}).data
    stop = _prose_stop(ctx, "Austria", "", "occupies an area")
    assert stop.value == 83879 and stop.extraction.number_index == 0
    asks = verbalize.ask_options(stop, [], austria)
    assert asks == [
        "In its opening text, the fourth sentence gives a measurement in square kilometres: what number?",
        ('In its opening text, the sentence that begins with the words "The country occupies" gives a measurement in '
        "square kilometres: what number?"),
    ]
    for ask in asks:
        solution = solve(RiddleView(riddle=_riddle(ask), seed_url=austria["url"]), ctx.toolbox)
        assert solution.status == SOLVED and solution.values[1] == 83879, solution.reason
    # by rank, the same sentence has two readings ("gives three numbers" or two, with the pair one area)
    assert not any("numbers" in a for a in asks)
