"""Stage 8, verbalize: the clue envelope, then acceptance by a solver that sees only the riddle.

Clues come from jinja2 templates in ``templates/clues/``: one clue per stop, earlier results
named by clue number, pages described by what they are (short description, its first words,
infobox type), never by title. A page stop's clue must be walked (issue 14): it names its fact
without quoting the page (the infobox label; for a number in a sentence, the section, the
sentence's rank or first few words, and what the number is), and of its wordings the first is
taken that the solver reads to this page and value and that no search with the clue's words
answers (``page_clue``). Acceptance hands the riddle and the seed URL, nothing else, to
``pipeline.agents.solver``: it follows the clues through the tools and must reach exactly one
answer, y*. A clue with two readings (two linked pages fit and carry the field, ...) rejects the
leg as ambiguous.

With an LLM configured, clues are paraphrased and the LLM must reconstruct the steps from the
paraphrased riddle (``parse_riddle``'s alignment, documented in the README): an extra check.
"""
from __future__ import annotations

import re

from pipeline import expressions
from pipeline.agents.solver import (
    AMBIGUOUS,
    Ambiguous,
    RiddleView,
    Solver,
    Unsolvable,
    fits,
    readings_of,
    sentences_of,
    solve,
    words_begin,
)
from pipeline.clues import (
    CLUE_REFERENCES,
    LEAD,
    MONTHS,
    NumberKind,
    by_description,
    by_description_start,
    by_infobox,
    clue_refs,
    counts_safely,
    detour_clue,
    finish_clue,
    hop_clue_text,
    hop_wording,
    infobox_ask,
    input_ref,
    measured_alone,
    merge_clue,
    names_ask,
    nth_section_ref,
    number_kinds,
    page_clue_text,
    position_ask,
    roadblock_clue,
    scaled_numbers,
    search_words,
    section_ref,
    sentence_opening_ref,
    sentence_rank_ref,
    subject_ask,
)
from pipeline.clues.hops import REFERENCE_LEAD
from pipeline.clues.wide import wide_clue
from pipeline.execute import countries_named, country_known, infobox_year
from pipeline.model import (
    DETOUR,
    FINISH_LINE,
    LINK_FOLLOW,
    MERGE,
    ROADBLOCK,
    ROUTE_INFO,
    WIDE,
    Clue,
    Extraction,
    Leg,
    PageWording,
    Stop,
)
from pipeline.snapshot.page import compiled, infobox_kind, name_regex
from pipeline.stages import llm_steps
from pipeline.stages.base import Rejected, StageContext, rng_for
from pipeline.tools.spec import TOOL_NAMES
from pipeline.transforms import DetourError, apply_detour

ACCEPT_ALIGNMENT = 0.7


# ---- leak control -----------------------------------------------------------------------------
def page_names(title: str, ctx: StageContext) -> set[str]:
    """Every name a page goes by: its title, the title without its parenthesised disambiguation
    ("Gone with the Wind (film)" -> "Gone with the Wind"), its redirect aliases (likewise) and its
    infobox's ``name``. Plurals and possessives of each are matched by ``find_leak``."""
    names = {title, *ctx.store.aliases(title)}
    page = ctx.page(title)
    if page is not None:
        named = page.field("name")
        if named is not None and named.text and len(named.text) <= 80:
            names.add(named.text.strip())
    names |= {_DISAMBIGUATION.sub("", n).strip() for n in names}
    return {n for n in names if len(n) >= 3}


_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def forbidden_names(leg: Leg, ctx: StageContext) -> list[str]:
    """Every name of every page on the leg except the seed (``page_names``), longest first."""
    return route_names([s.page_title for s in leg.stops if s.kind == ROUTE_INFO and s.page_title], leg.seed_title, ctx)


def route_names(titles: list[str], seed: str, ctx: StageContext) -> list[str]:
    """Every name of the pages ``titles`` but the ``seed`` (``page_names``), longest first: what no clue may say."""
    names: set[str] = set()
    for title in titles:
        if title != seed:
            names |= page_names(title, ctx)
    return sorted(names, key=lambda n: (-len(n), n))


def find_leak(text: str, names: list[str]) -> str | None:
    """The first of ``names`` that ``text`` holds as ``name_regex`` matches it. Where the text and a
    name are ASCII, a case-insensitive match needs the lowercased name inside the lowercased text, so
    a name that is not is passed over without its regex (most names are not: a release asks this
    millions of times)."""
    return next(names_held(text, names), None)


def names_held(text: str, names: list[str]):
    """``find_leak``'s test, name by name in order: the names ``text`` holds."""
    lowered = text.lower() if text.isascii() else None
    for name in names:
        if lowered is not None and name.isascii() and name.lower() not in lowered:
            continue
        if name_regex(name).search(text):
            yield name


def mask_names(text: str, names: list[str]) -> str:
    for name in names:
        text = name_regex(name).sub("[...]", text)
    return text


def circumlocution_options(stop: Stop, names: list[str]) -> list[str]:
    """Ways to say what the page is about that name no leg page, most telling first: its short
    description; the description's first words (the page is picked among the links of an
    earlier page, so the first words may be enough, and they are far less of a search query);
    the kind of its infobox. (The kind joined to the first words was tried: a wording that singles
    the page out among the links is, in practice, also one a search finds.)"""
    options = []
    wording = stop.wording or PageWording()
    desc = " ".join((wording.description or "").split()).rstrip(".")
    kind = infobox_kind(wording.infobox_type)
    if not (kind and re.fullmatch(r"[a-z][a-z ]{2,40}", kind)):
        kind = ""
    linked = stop.transition is None or stop.transition.kind == LINK_FOLLOW
    starts = description_starts(desc) if desc and len(desc) <= 120 and linked else []
    if desc and len(desc) <= 120:
        options.append(by_description(desc))
    options += [by_description_start(start) for start in starts]
    if kind:
        options.append(by_infobox(kind))
    return [o for o in options if not find_leak(o, names + [stop.page_title or ""])]


PREFIX_END_STOPWORDS = {"a", "an", "and", "as", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"}


def description_starts(desc: str) -> list[str]:
    """The description's proper word prefixes, longest first, that end on a word that is not a
    stopword and cut no quotation or bracket in half."""
    words = desc.split(" ")
    out = []
    for k in range(len(words) - 1, 0, -1):
        start = " ".join(words[:k])
        last = re.sub(r"\W+$", "", words[k - 1]).lower()
        if (last in PREFIX_END_STOPWORDS or not last or start.count('"') % 2 or start.count("(") != start.count(")")
                or start.endswith((",", ":", ";", "-", "–"))):
            continue
        out.append(start)
    return out


def circumlocution(stop: Stop, names: list[str]) -> str:
    """What the page is about, in words that name no leg page (the first of the options)."""
    options = circumlocution_options(stop, names)
    if not options:
        raise Rejected(f"verbalize: no title-free description for stop {stop.index}")
    return options[0]


# ---- clues --------------------------------------------------------------------------------------
def ask_options(stop: Stop, names: list[str], page: dict) -> list[str]:
    """The question of a page stop, in the wordings a solver can read, most telling first.

    Infobox facts are asked by label. A number in a sentence is named without quoting the
    sentence: where the sentence stands (the opening text or a section, then its position there,
    sentences cut as ``facts.SENTENCE_SPLIT`` cuts them) and what the number is (a year, a number
    of employees, a measurement in square kilometres, ...; ``clues.number_kinds``), with "the
    first of the two" when the sentence gives more than one number of that kind. The plain "a
    number" wording comes second: what a number counts can itself be a search word. A sentence
    far down its block, or past a cut a reader may not count, is named by its first words first
    (``sentence_refs``)."""
    ex = stop.extraction
    if ex.source == "subject":
        return [subject_ask()]
    if ex.source == "infobox":
        item = next((f for f in page.get("infobox", []) if f["name"] == ex.field), {})
        year = stop.value_type == "number" and infobox_year(item.get("date"), item.get("number")) is not None
        return [infobox_ask(stop.value_type, stop.fact.label, stop.fact.role, year=year)]
    wheres = sentence_places(ex, page, names)
    if ex.name_index is not None:   # a country the sentence names: which one, of how many
        named = countries_named(ex.sentence or "", country_known) or []
        if not wheres or ex.name_index >= len(named):
            return []
        return [names_ask(where, sentence, len(named), ex.name_index + 1)
                for where, block in wheres for sentence in sentence_refs(block, ex.sentence.strip(), names)]
    numbers = number_kinds(ex.sentence or "")
    if not wheres or not ex.sentence or ex.number_index is None or ex.number_index >= len(numbers):
        return []
    target = numbers[ex.number_index][1]
    kinds = []
    if not counts_safely(ex.sentence):
        # a sentence whose numbers readers count differently: the number only by its unit, never by rank
        if ex.number_index in measured_alone(ex.sentence) and not find_leak(target.singular, names):
            kinds.append((target, [ex.number_index]))
    else:
        if target.cls != "number" and len(numbers) == 1 and not find_leak(target.singular, names) \
                and not counts_what_it_names(ex.sentence, target):
            # what a number is ("a population in millions") only where it is the sentence's one number: a
            # reader tells "a population" from "a number in millions" by no rule of ours (issue 21, a racer)
            kinds.append((target, [ex.number_index]))
        if ex.number_index not in scaled_numbers(ex.sentence):   # "140 million": 140, or 140,000,000?
            kinds.append((None, list(range(len(numbers)))))
    out = []
    for where, block in wheres:
        for sentence in sentence_refs(block, ex.sentence.strip(), names):
            for kind, same in kinds:
                out.append(position_ask(where, sentence, kind, len(same), same.index(ex.number_index) + 1))
    return out


def counts_what_it_names(sentence: str, kind: NumberKind) -> bool:
    """Does the sentence name some of the countries its number counts? "Bangladesh, India, Vietnam,
    Thailand, Pakistan and Sri Lanka were among the 16 countries facing extreme risk": asked "gives a
    number of countries: how many?", a reader may count the six it names (blind race 20, R01). Such a
    number is asked by its position only ("gives a number: what number?")."""
    noun = kind.singular.split(" in ")[0]
    return kind.cls == "count" and noun.endswith(("countries", "nations")) and countries_named(sentence, country_known) != []


MAX_COUNTED = 10    # past this many sentences, a reader is told the sentence's first words rather than its rank
# a cut after an initial or an abbreviation ("Dwight D.", "B.B.", "Washington, D.C.", "viz.": blind
# race 8, R08) may not end a sentence for a reader: counting sentences across it is not safe
DOUBTFUL_CUT = re.compile(r"(?:\b[A-Z]\.|\b(?:[A-Za-z]\.){2,}|\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|No|Nos|Co|Inc|Ltd|Corp|"
                          r"Bros|Gen|Gov|Sen|Rep|Rev|Prof|Lt|Col|Capt|Sgt|Mt|Ft|vs|etc|approx|ca|c|Vol|pp|ed|eds|Op|"
                          r"viz|cf|al|esp|incl|fig|lit|resp|ibid|Fr|Sr|Messrs|Mme|Mlle|Hon|Pres|Adm|Maj|Cmdr)\.)$")
# a cut after a name's middle initial ("Rose U.", "John F."): no sentence end to any reader, so the words after
# it open no sentence (the cut after "A.D." or "Dr." before a capital may be one: only counting across it is unsafe)
MIDDLE_INITIAL = re.compile(r"\b[A-Z][a-z]+ [A-Z]\.$")

# a sentence end the split does not cut at (a full stop inside quotes: '... "Brother Ray." He was ...', or
# before a quote opening a sentence;
# a parenthesised sentence after one: "... Singapore. (NB: ... APEC). Japan ...", blind race 8, R24)
MISSED_CUT = re.compile(r"[.!?][\"”’)]\s+[A-Z]|[a-z]{2}[.!?][A-Z][a-z]|[.!?]\s+\([A-Z]"   # "...great apes.The family": a racer
                        #                                                        counted two sentences there
                        # a lost full stop: "... 45,000 Catholics A 2015 study estimated ..." (blind race 9, R30)
                        r"|[a-z0-9]\s+(?:A|An|The|In|It|This|These|There|He|She|They|On|At)\s+[a-z0-9]"
                        # a sentence opening with a quote: '... a much longer time. "Hiking" is the preferred
                        # term in Canada ...' (blind race 36, R19 counted it as the fourth sentence)
                        r"|[.!?]\s+[\"“][A-Z]"
                        # a sentence opening with a digit: "... monolingual English speakers. 5.5% of the population
                        # ..." (the split cuts only before a capital; blind race 49, R16 counted a sentence more)
                        r"|[a-z]{2}[.!?]\s+\d")


def sentence_refs(block: str, sentence: str, names: list[str]) -> list[str]:
    """How a clue may point at a sentence of a block: its rank ("the third sentence"), first when
    counting up to it is short and crosses no doubtful cut; its first words (a few, no number, no
    leg page name, no other sentence of the block beginning alike)."""
    raw = sentences_of(block)
    sentences = [" ".join(s.split()) for s in raw]
    sentence = " ".join(sentence.split())
    if sentence not in sentences:
        return []
    k = sentences.index(sentence)
    if MISSED_CUT.search(sentence) or "\n" in raw[k]:
        return []   # a reader sees two sentences here (or a heading and a sentence): neither rank nor
        #             first words say which one is meant
    if DOUBTFUL_CUT.search(sentence) and k + 1 < len(sentences):
        return []   # "... in the Dwight D." / "... from 1 to 1800 A.D.": to a reader who does not cut there the
        #             sentence runs on into the next, which may name or give more (blind race 12, R23, R27)
    if k > 0 and MIDDLE_INITIAL.search(sentences[k - 1]):
        return []   # "The writer Rose U. Talisholt described ...": to a reader no sentence begins "Talisholt
        #             described", and its rank is another (blind race 52, R03)
    counted = sentence_rank_ref(k + 1)
    # a line break inside a cut is a heading (or a list's line) glued to the sentence after it: one
    # reader counts it as a sentence, another does not (blind race 6, R08: "the 31st sentence" of a
    # section with the sub-heading "Privateers era", 1551 or 1544)
    doubtful = any(DOUBTFUL_CUT.search(s) or MISSED_CUT.search(s) or "\n" in r for s, r in zip(sentences[:k], raw))
    safe = k < MAX_COUNTED and not doubtful
    refs = [counted] if safe else []
    words = sentence.split(" ")
    for n in range(3, 6):
        opening = " ".join(words[:n])
        if re.search(r"\d", opening) or find_leak(opening, names) or n > len(words) - 2:
            break
        if (opening.count('"') % 2 or opening.endswith((",", ";", ":"))
                or words[n - 1].lower() in PREFIX_END_STOPWORDS):
            continue
        if sum(words_begin(s, opening) for s in sentences) == 1:
            refs.append(sentence_opening_ref(opening))
            break
    # far down, the rank is a last resort; past a cut a reader may not count ("Pearl S. Buck"), never
    return refs if safe or doubtful else refs + [counted]


def sentence_places(ex: Extraction, page: dict, names: list[str]) -> list[tuple[str, str]]:
    """How a clue may name the block holding a fact's sentence, with the block's text: "opening
    text"; 'section "History"' (a title no other section shares and that names no leg page);
    "fifth section" (its place in the page's list of sections, where no heading of another depth comes
    before it: the tool gives each section's ``level``)."""
    if ex.section in ("", None):
        return [(LEAD, page.get("lead", ""))]
    sections = page.get("sections", [])
    index = next((i for i, s in enumerate(sections) if s["title"] == ex.section), None)
    if index is None:
        return []
    out = []
    if sum(s["title"] == ex.section for s in sections) == 1 and not find_leak(ex.section, names):
        out.append((section_ref(ex.section), sections[index]["text"]))
    top = min((s["level"] for s in sections if s.get("level") is not None), default=None)
    if {s.get("level") for s in sections[:index + 1]} == {top}:
        # by its place only where every heading up to it is of the page's top depth: past a subsection,
        # "the fifth section" is the fifth heading to one reader and the fifth top-level one to another
        # (blind race 10, R16: Afghanistan's "Hotak dynasty and Durrani Empire", a subsection of "History"), and
        # subsections whose section the page leaves out (Asia's list opens with four, then "Etymology") are
        # headings to one reader and not sections to another (blind race 27, R20)
        out.append((nth_section_ref(index + 1), sections[index]["text"]))
    return out


def ask_text(stop: Stop, names: list[str], page: dict | None = None) -> str:
    """The first wording of ``ask_options`` (``page``: the stop's page as ``fetch_webpage`` gives it)."""
    options = ask_options(stop, names, page or {})
    if not options:
        raise Rejected(f"verbalize: no wording for the question of stop {stop.index}")
    return options[0]


# ---- clues that must be walked ----------------------------------------------------------------------
def number_forms(value: float) -> set[str]:
    """How a snippet may write a number: as written, an integer also with thousands separators."""
    return {str(value), f"{value:,}"} if isinstance(value, int) else {str(value)}


def value_shown(value, snippets: list[str]) -> bool:
    """Does any snippet show the value (a number as written or with thousands separators; a date
    as ISO or in words; text case-insensitively)? Shared with ``benchmarks/snippets.py``."""
    text = " ".join(snippets)
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return any(compiled(rf"(?<![\d.,]){re.escape(v)}(?![\d])").search(text) for v in number_forms(value))
    value = str(value)
    forms = {value.lower()}
    if m := re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", value):
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if 1 <= mo <= 12:
            forms |= {f"{MONTHS[mo - 1]} {d}, {y}".lower(), f"{d} {MONTHS[mo - 1]} {y}".lower()}
    return any(f in text.lower() for f in forms)


QUOTE_RUN = 6   # a clue sharing this many consecutive words with its fact's sentence quotes it


def quoted_run(text: str, sentence: str, n: int = QUOTE_RUN) -> bool:
    """Does ``text`` repeat ``n`` consecutive words of ``sentence`` (a short description that is
    the opening sentence's own words: a search for it lands on the sentence)?"""
    words = [re.findall(r"\w+", t.lower()) for t in (text, sentence)]
    runs = {tuple(words[0][i:i + n]) for i in range(len(words[0]) - n + 1)}
    return any(tuple(words[1][i:i + n]) in runs for i in range(len(words[1]) - n + 1))


PAGE, ELSEWHERE = "page", "elsewhere"
SHOWN = " shows the value"


def reads_store(ctx: StageContext) -> bool:
    """Are ``web_search``'s results the store's own (the offline backend, no injected faults)?"""
    return ctx.settings.backend_for("web_search") == "offline" and getattr(ctx.toolbox, "faults", None) is None


def value_needles(value) -> tuple[str, ...] | None:
    """The forms ``value_shown`` accepts, lower-cased: a text that holds none of them shows the value in no
    run of it (a snippet). None where that does not follow: a form with white space (a date in words; a
    snippet normalises white space, and two snippets are joined by a space) or outside ASCII (lower-casing
    a run may differ from the whole text's: a final sigma)."""
    if isinstance(value, bool):
        return ()
    if isinstance(value, (int, float)):
        return tuple(sorted(number_forms(value)))
    form = str(value).lower()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", form) or not form.isascii() or any(ch.isspace() for ch in form):
        return None
    return (form,)


def top_snippets(ctx: StageContext, query: str, k: int = 5) -> list[tuple[str, str]]:
    """(title, snippet) of the first ``k`` results ``web_search`` gives for ``query``. Offline they are the
    store's own ranking (``SnapshotStore.search``: the tool's first page is that list, snippets and all),
    read without the tool's paging order of every match; a live search is asked through the tool."""
    if reads_store(ctx):
        return [(h["title"], h.get("snippet") or "") for h in ctx.store.search(query, k=k)]
    result = ctx.toolbox.call("web_search", {"query": query, "num_results": k})
    hits = result.data.get("results", []) if result.ok else []
    return [(h.get("title"), h.get("snippet") or "") for h in hits[:k]]


def search_exposure(ctx: StageContext, query: str, value, title: str | None, memo: dict) -> str | None:
    """Does a search for ``query`` show the value in its top-5 snippets? ``PAGE`` when the snippet
    of the page titled ``title`` shows it (the search answers the stop), ``ELSEWHERE`` when only
    other pages' snippets happen to (a year or a small number in an unrelated result: nothing
    tells a reader it is the answer), None when none does."""
    query = REFERENCE_LEAD.sub(" ", query).strip()[:300]   # (its reference to an earlier clue says nothing searched)
    if query not in memo:   # a stop's memo: one value
        needles = value_needles(value)
        if needles is not None and reads_store(ctx) and not ctx.store.mentions_in_results(query, 5, needles):
            memo[query] = []   # no result's text holds the value, so no snippet shows it
        else:
            memo[query] = top_snippets(ctx, query)
    if any(t == title and value_shown(value, [snippet]) for t, snippet in memo[query]):
        return PAGE
    return ELSEWHERE if value_shown(value, [snippet for _, snippet in memo[query]]) else None


def page_words_exposure(ctx: StageContext, query: str, value, title: str | None, memo: dict) -> str | None:
    """``search_exposure`` of words that are a function of the pages: a hop's own phrase (of the page
    before and this one) or a page's description. Kept with the page values, as a hop's own skip probe is:
    the runs of a release meet the same pages' words again, and a large world's search costs 5-15 ms."""
    query = REFERENCE_LEAD.sub(" ", query).strip()[:300]   # (as ``search_exposure`` asks: no clue number)
    if not reads_store(ctx):
        return search_exposure(ctx, query, value, title, memo)
    return ctx.kept("page_exposure", repr((query, value, title)),
                    lambda: search_exposure(ctx, query, value, title, memo))


def page_clue(leg: Leg, stop: Stop, names: list[str], variant: int, ctx: StageContext) -> str:
    """A page stop's clue: the first wording (circumlocution x question, ``circumlocution_options``
    and ``ask_options`` order) that names no leg page, that the solver reads as this page and
    this value, that does not state the value itself (a description such as "1939 film by ...",
    a section titled by a year), and that a search cannot answer: neither a search made with the
    whole clue nor one made with its description of the page shows the value in a top-5 snippet
    (the page must be walked to, and read). When every such wording has the value turn up only in other pages'
    snippets, the first of those is taken and its clue number noted in the leg's metadata
    (``snippet_coincidences``). Rejected, with the reasons, when no wording qualifies."""
    t = stop.transition
    if t is not None and t.relation is not None and stop.index:
        return hop_clue(leg, stop, names, variant, ctx)
    first = stop.index == 0
    solver = Solver(ctx.toolbox)
    page = solver.fetch(stop.index + 1, stop.page_url)
    if page is None:
        raise Rejected(f"verbalize: the page of stop {stop.index} cannot be fetched")
    asks = ask_options(stop, names, page)
    circs = [""] if first else circumlocution_options(stop, names)
    if not asks or not circs:
        raise Rejected(f"verbalize: no title-free wording for stop {stop.index}")
    bridge = t.kind if t else LINK_FOLLOW
    from_clue = (t.from_stop + 1) if t and t.from_stop is not None else 1
    linked: list[dict] | None = None
    memo: dict = {}
    problems: list[str] = []
    coincidental: str | None = None
    for circ in circs:
        if first:
            reached = [page]
        elif bridge == LINK_FOLLOW:
            if linked is None:
                linked = solver.linked_pages(stop.index + 1, leg.stops[t.from_stop].page_url)
            reached = [p for p in linked if fits(p, circ)]
        else:
            try:
                reached = solver.searched_pages(stop.index + 1, circ)
            except Unsolvable as exc:  # a failed search only rules this wording out
                problems.append(f"{circ[:50]!r}: the search fails ({exc})")
                continue
        if not any(p["url"] == page["url"] for p in reached):
            problems.append(f"{circ[:50]!r}: does not reach the page")
            continue
        for ask in asks:
            text = page_clue_text(first=first, bridge=bridge, from_clue=from_clue, circ=circ, ask=ask,
                                  variant=variant)
            leak = find_leak(text, names)
            if leak:
                problems.append(f"{text[:60]!r}: names {leak!r}")
                continue
            if stop.extraction and stop.extraction.sentence and quoted_run(text, stop.extraction.sentence):
                problems.append(f"{text[:60]!r}: quotes the sentence of its fact")   # a search would find it
                continue
            if value_shown(stop.value, [text]):   # a description or a section title stating the answer
                problems.append(f"{text[:60]!r}: states the value itself")
                continue
            exposure = [] if first else [search_exposure(ctx, text, stop.value, stop.page_title, memo),
                                         page_words_exposure(ctx, search_words(circ), stop.value, stop.page_title, memo)]
            if PAGE in exposure:
                problems.append(f"a search for {text[:60]!r} or its description of the page{SHOWN}")
                continue
            if ELSEWHERE in exposure and coincidental is not None:
                continue
            if misread := _misread(solver, stop.index + 1, reached, ask, page, stop.value):
                problems.append(misread)
                continue
            if ELSEWHERE not in exposure:
                return text
            coincidental = text
    if coincidental is not None:
        leg.metadata.setdefault("snippet_coincidences", []).append(stop.index + 1)
        return coincidental
    if problems and all(p.endswith(SHOWN) for p in problems):
        how = "it is reached by a web search, and" if bridge != LINK_FOLLOW else "for every wording"
        raise Rejected(f"verbalize: clue {stop.index + 1} can be skipped: {how} the page's own search snippet shows "
                       f"its answer {stop.value!r} (a page reached by search needs a fact its snippet does not show)")
    raise Rejected(f"verbalize: no wording of clue {stop.index + 1} is walkable and unambiguous "
                   f"({len(problems)} tried: {'; '.join(problems[:3])})")


def _misread(solver, n: int, reached: list[dict], ask: str, page: dict, value) -> str | None:
    """Why the solver does not read ``ask`` on the reached pages as this page's value (None: it does)."""
    try:
        readings = readings_of(n, reached, ask, solver.country_teller(n))
    except Ambiguous as exc:
        return f"{ask[:60]!r}: {exc}"
    return None if readings == {page["url"]: value} else f"{ask[:60]!r}: the solver reads {readings or 'nothing'}"


PROBE_RESULTS = 10      # the skip probe: a hop whose kind words find its target this high is a look-up


def probe_finds(ctx: StageContext, query: str, title: str, *, hop_phrase: bool = False) -> bool:
    """The skip probe: does a search for ``query`` show the page titled ``title`` in its top ten? The words
    of a hop's own phrase (``hop_phrase``: what a page's sentence and the kind make, a function of the page)
    are searched once for every run and kept with the page values (plan asks them of every hop it may walk,
    verbalize again: a large world's search costs 5-15 ms); a whole clue's words once per process."""
    def search() -> list[str]:
        return ctx.search_titles(query, PROBE_RESULTS)
    titles = ctx.kept("skip_probe", query, search) if hop_phrase else ctx.memo_unfaulted(f"probe|{query}", search)
    return title in titles


def hop_phrases(leg: Leg, stop: Stop, names: list[str], origin: dict) -> list[str]:
    """The ways a hop's clue may name its page through the page before (``templates/clues/hop.j2``),
    most telling first: the sentence by its rank or its first words."""
    before = leg.stops[stop.transition.from_stop]   # clue from_stop + 1: it went to its page, or read the seed's
    return relation_phrases(stop.transition.relation, stop.transition.from_stop + 1, names, origin,
                            went_to(before), started=started_on(before))


def went_to(stop: Stop) -> bool:
    """Did this stop's clue go to its page (a hop through the page before, a choice among countries, a search
    bridge), so that the page it read its answer on is not the one it started from? The seed's clue did not."""
    t = stop.transition
    return t is not None and (t.relation is not None or bool(t.search_query))


def started_on(stop: Stop) -> bool:
    """Is this the stop of the page the leg starts on (the seed's: reached from no stop)?"""
    return stop.transition is None or stop.transition.from_stop is None


def relation_phrases(rel, from_clue: int, names: list[str], origin: dict, went: bool = False,
                     started: bool = False) -> list[str]:
    """``hop_phrases`` of a relation out of the page ``origin`` (a ``fetch_webpage`` result, or its
    lead and sections), from clue ``from_clue``: what plan checks a hop against before it offers it."""
    if rel.kind in ("infobox", "described"):
        return [hop_wording(rel.kind, from_clue, rel.noun, label=rel.label, went=went, started=started)]
    out = []
    for where, block in sentence_places(Extraction(source="prose", section=rel.section or ""), origin, names):
        for sentence in sentence_refs(block, rel.sentence or "", names):
            out.append(hop_wording(rel.kind, from_clue, rel.noun, sentence=sentence, where=where, went=went, started=started,
                                   count=len(rel.candidates), extreme=rel.extreme, measure=rel.measure,
                                   position=rel.position))
    return out


def names_in_reach(rel, names: list[str]) -> list[str]:
    """The ``names`` that can rule out a wording of ``relation_phrases``: those its sentence or its
    section's title holds (a wording quotes only the sentence's first words and the section's title,
    and a name found in those is found in the whole sentence, or in the title). The others change
    nothing, so a check keyed by the names the route holds keys by these alone."""
    if rel.kind in ("infobox", "described"):
        return []
    held = set(names_held(" ".join((rel.sentence or "").split()), names)) | set(names_held(rel.section or "", names))
    return [name for name in names if name in held]


def hop_clue(leg: Leg, stop: Stop, names: list[str], variant: int, ctx: StageContext) -> str:
    """A hop's clue (issue 21): the hop's wording, which the solver must read to this page and no
    other (every thing the sentence names that could be of the kind is a reading), then the
    question, which it must read to this value; no wording whose words a search answers (the skip
    probe: the page among the top ten results of a search for the clue's words) or that names,
    quotes or states what it asks."""
    solver = Solver(ctx.toolbox)
    n, origin_url = stop.index + 1, leg.stops[stop.transition.from_stop].page_url
    origin, page = solver.fetch(n, origin_url), solver.fetch(n, stop.page_url)
    if origin is None or page is None:
        raise Rejected(f"verbalize: the pages of hop {n} cannot be fetched")
    problems: list[str] = []
    memo: dict = {}
    coincidental: str | None = None
    for hop in hop_phrases(leg, stop, names, origin):
        try:
            reached = solver.hop_pages(n, hop, origin_url)
        except (Ambiguous, Unsolvable) as exc:
            problems.append(f"{hop[:60]!r}: {exc}")
            continue
        if [p["url"] for p in reached] != [page["url"]]:
            problems.append(f"{hop[:60]!r}: leads to {[p['title'] for p in reached]}")
            continue
        for ask in ask_options(stop, names, page):
            text = hop_clue_text(hop, ask, variant)
            if leak := find_leak(text, names):
                problems.append(f"{text[:60]!r}: names {leak!r}")
                continue
            if stop.extraction and stop.extraction.sentence and quoted_run(text, stop.extraction.sentence):
                problems.append(f"{text[:60]!r}: quotes the sentence of its fact")
                continue
            if value_shown(stop.value, [text]):
                problems.append(f"{text[:60]!r}: states the value itself")
                continue
            if probe_finds(ctx, skip_probe_words(hop), stop.page_title, hop_phrase=True) or probe_finds(
                    ctx, skip_probe_words(text), stop.page_title):   # (the hop's own words first: kept)
                problems.append(f"{text[:60]!r}: a search with its words finds the page")
                continue
            exposure = [search_exposure(ctx, text, stop.value, stop.page_title, memo),
                        page_words_exposure(ctx, hop, stop.value, stop.page_title, memo)]
            if PAGE in exposure:
                problems.append(f"a search for {text[:60]!r}{SHOWN}")
                continue
            if misread := _misread(solver, n, reached, ask, page, stop.value):
                problems.append(misread)
                continue
            if ELSEWHERE not in exposure:
                return text
            coincidental = coincidental or text   # another page's snippet shows the value: only if nothing better
    if coincidental is not None:
        leg.metadata.setdefault("snippet_coincidences", []).append(n)
        return coincidental
    raise Rejected(f"verbalize: no wording of hop {n} is walkable and unambiguous "
                   f"({len(problems)} tried: {'; '.join(problems[:3])})")


def skip_probe_words(clue: str) -> str:
    """The skip probe's query (issue 21): a clue's own words, its references to earlier clues left out."""
    return " ".join(CLUE_REFERENCES.sub(" ", REFERENCE_LEAD.sub(" ", clue)).split())


def input_phrase(leg: Leg, i: int) -> str:
    s = leg.stops[i]
    word = s.fact.role if s.kind == ROUTE_INFO and s.fact else "number"
    if s.kind == ROUTE_INFO and s.value_type == "number":
        word = "number"
    return input_ref(word, i + 1)   # "that is the answer to clue 10" (clues.input_ref)


def clue_for(leg: Leg, stop: Stop, names: list[str], variant: int, ctx: StageContext) -> str:
    if stop.kind == ROUTE_INFO:
        return page_clue(leg, stop, names, variant, ctx)
    if stop.kind == ROADBLOCK:
        fields = dict(stop.roadblock.params)
        for n, i in enumerate(stop.roadblock.inputs):
            fields[f"in{n}"] = input_phrase(leg, i)
        return roadblock_clue(stop.description, fields)
    if stop.kind == DETOUR:
        return detour_clue(stop.transform, stop.source_stop + 1)
    if stop.kind == WIDE:
        source = leg.stops[stop.depends_on[0]]
        return wide_clue(stop.wide, source.fact.role if source.fact else "place", source.index + 1)
    if stop.kind == MERGE:
        a, b = stop.depends_on
        return merge_clue(stop.operation, a + 1, b + 1)
    return finish_clue(stop.operation, [i + 1 for i in expressions.references(stop.expression)])


# ---- round trip ---------------------------------------------------------------------------------
def expected_steps(leg: Leg) -> list[dict]:
    out = []
    for s in leg.stops:
        if s.kind == ROUTE_INFO:
            if s.index == 0:
                out.append({"kind": ROUTE_INFO, "op": "seed", "refs": []})
            elif s.transition.relation is not None:
                out.append({"kind": ROUTE_INFO, "op": "hop", "refs": [s.transition.from_stop + 1]})
            elif s.transition.kind == LINK_FOLLOW:
                out.append({"kind": ROUTE_INFO, "op": LINK_FOLLOW, "refs": [s.transition.from_stop + 1]})
            else:
                out.append({"kind": ROUTE_INFO, "op": "search_query", "refs": []})
        elif s.kind == ROADBLOCK:
            out.append({"kind": ROADBLOCK, "op": s.template, "refs": [i + 1 for i in s.roadblock.inputs]})
        elif s.kind == DETOUR:
            out.append({"kind": DETOUR, "op": s.transform, "refs": [s.source_stop + 1]})
        elif s.kind == WIDE:
            out.append({"kind": WIDE, "op": s.wide.domain, "refs": [i + 1 for i in s.depends_on]})
        elif s.kind == MERGE:
            out.append({"kind": MERGE, "op": s.operation, "refs": [i + 1 for i in s.depends_on]})
        else:
            out.append({"kind": FINISH_LINE, "op": s.operation, "refs": [i + 1 for i in expressions.references(s.expression)]})
    return out


def alignment(parsed: list[dict], expected: list[dict]) -> float:
    if not expected:
        return 0.0
    score = 0.0
    for n, exp in enumerate(expected):
        got = parsed[n] if n < len(parsed) else {"kind": None, "op": None, "refs": None}
        score += (got["kind"] == exp["kind"]) / 3 + (got["op"] == exp["op"]) / 3 + (got["refs"] == exp["refs"]) / 3
    return score / max(len(expected), len(parsed))


def implied_passcode(parsed: list[dict], leg: Leg) -> int | None:
    """Recompute y* from the parsed steps, taking world facts (pages, tool results) from the golden trace."""
    values: dict[int, int] = {}
    try:
        for n, step in enumerate(parsed, start=1):
            golden = leg.stops[n - 1].value if n - 1 < len(leg.stops) else None
            if step["kind"] in (ROUTE_INFO, ROADBLOCK, WIDE):
                values[n] = golden
            elif step["kind"] == DETOUR:
                values[n] = apply_detour(step["op"], values[step["refs"][0]])
            elif step["kind"] == MERGE:
                a, b = (values[r] for r in step["refs"])
                values[n] = a + b if step["op"] == "sum" else abs(a - b)
            elif step["kind"] == FINISH_LINE:
                refs = step["refs"]
                expr = expressions.reduction_expression(step["op"], refs)
                return expressions.evaluate(expr, {r: values[r] for r in refs})
    except (KeyError, IndexError, TypeError, DetourError, ValueError, expressions.ExpressionError):
        return None
    return None


def _paraphrased(llm, leg: Leg, clue: Clue, names: list[str]) -> Clue:
    """The LLM's wording when it keeps the clue's references and leaks nothing; else the template's."""
    text = llm_steps.paraphrase(llm, clue.number, clue.text, names)
    ok = (clue_refs(text) == clue_refs(clue.text) and not find_leak(text, names)
          and not any(t in text for t in TOOL_NAMES))
    if not ok:
        leg.metadata.setdefault("paraphrase_fallbacks", []).append(clue.number)
        return clue
    return Clue(number=clue.number, stop=clue.stop, text=text)


# ---- the stage ----------------------------------------------------------------------------------
def run(leg: Leg, ctx: StageContext) -> Leg:
    rng = rng_for(leg, "verbalize")
    names = forbidden_names(leg, ctx)
    leg.clues = [Clue(number=s.index + 1, stop=s.index, text=clue_for(leg, s, names, rng.randrange(3), ctx)) for s in leg.stops]
    riddle = leg.riddle
    leak = find_leak(riddle, names)
    if leak:
        raise Rejected(f"verbalize: the riddle names the page title {leak!r}")
    tool = next((t for t in TOOL_NAMES if t in riddle), None)
    if tool:
        raise Rejected(f"verbalize: the riddle names the tool {tool!r}")

    # Acceptance: a solver that sees only the riddle, the seed URL and the tools must reach exactly
    # one answer, and it must be y*. It never reads the stops, so it checks what it does not build.
    solution = solve(RiddleView(riddle=riddle, seed_url=leg.seed_url), ctx.toolbox)
    leg.metadata["solver"] = {"status": solution.status, "answer": solution.answer, "calls": len(solution.calls)}
    if solution.status == AMBIGUOUS:
        raise Rejected(f"verbalize: the riddle is ambiguous: {solution.reason} "
                       f"(candidates: {'; '.join(next(iter(solution.candidates.values()), []))})")
    if not solution.solved:
        raise Rejected(f"verbalize: the riddle alone does not solve: {solution.reason}")
    if solution.answer != leg.passcode:
        raise Rejected(f"verbalize: the riddle alone gives {solution.answer}, the leg's passcode is {leg.passcode}")
    if ctx.llm is not None:  # an extra check: paraphrase each clue, then let the LLM reconstruct the steps
        leg.clues = [_paraphrased(ctx.llm, leg, c, names) for c in leg.clues]
        parsed = llm_steps.round_trip(ctx.llm, leg.riddle)
        score = alignment(parsed, expected_steps(leg))
        implied = implied_passcode(parsed, leg)
        leg.metadata["round_trip"] = {"alignment": round(score, 4), "implied_passcode": implied, "parser": "llm"}
        if score < ACCEPT_ALIGNMENT:
            raise Rejected(f"verbalize: round-trip alignment {score:.2f} < {ACCEPT_ALIGNMENT}")
        if implied != leg.passcode:
            raise Rejected(f"verbalize: the riddle implies {implied}, the leg's passcode is {leg.passcode}")
    return leg
