"""Hops (issue 21): how plan walks from each page of a route to the next through the page before.

A page's hops are the pages it leads to by a relation only reading it resolves
(``model.Relation``): the one thing of a kind that a stated sentence names (``named``; a sentence of
the opening text or of a section of prose), the thing its infobox gives for a label (``infobox``),
the one thing of a kind its short description names (``described``: "Capital and largest city of
Mexico"), or, of the countries a sentence names, the one with the largest or smallest area or
population (``choice``, which needs a lookup per country). Each hop is kept only if a careful
reader has one reading of it:

* named and described: of every snapshot page the sentence names, the target alone could be taken
  for the kind (``clues.could_be``: its word or a word of its class, "town" for "city"), as the
  solver reads the sentence too (every name and run of its words looked up, ``solver_readings``),
  and no capitalised name in the sentence holds the kind's noun ("the river" beside "Bafing River");
* choice: the sentence names two to five countries (``execute.countries_named``: none inside a
  longer name, no region, continent or former state beside them) whose figures differ;
* and (checked by verbalize on the whole clue) a search with the clue's words does not find the
  target among its top ten results (the skip probe): the clue must be walked, not looked up.
"""
from __future__ import annotations

import functools
import itertools
import re
from collections import defaultdict
from dataclasses import dataclass

from pipeline.agents.solver import names_in
from pipeline.clues import (
    EXTREMES,
    MEASURE_LOOKUPS,
    MEASURES,
    PERSON_WORDS,
    anchor_targets,
    could_be,
    country_name,
    kin,
    kind_of,
    linked_reading,
    measure_value,
    noun_of,
    plural,
    plural_in,
    singulars,
)
from pipeline.execute import (
    NAME_RUN,
    NOT_NAMES,
    countries_named,
    country_key,
    country_known,
    country_like,
    get_path,
    named_as,
)
from pipeline.model import Relation
from pipeline.snapshot.page import compiled, subject_name
from pipeline.snapshot.store import ASCII_LOWER
from pipeline.stages.base import StageContext
from pipeline.stages.facts import (
    NON_PROSE_SECTIONS,
    SENTENCE_SPLIT,
    is_prose,
    links_to,
    stands_for_subject,
    word_after,
    word_before,
)
from pipeline.stages.verbalize import names_in_reach, probe_finds, relation_phrases, skip_probe_words
from pipeline.tools.errors import TRANSIENT_FAILURES
from pipeline.world.gazetteer import gazetteer

MAX_CHOICES = 5         # a sentence naming more countries than this is a list, not a choice
MIN_GAP = 0.05          # a choice's figures differ by at least this share, so data drift cannot swap them
UNPAGED_CITY = 50_000   # a name with no page that GeoNames knows as a city this large is a city to a reader
# a lowercase word after a name that makes the mention an area's or a feature's ("the Seoul metropolitan
# area"): a reader asked for the cities a sentence names may leave that one out
_AREA_AFTER = re.compile(r"\s+(?:metropolitan|metro|urban|area|region|basin|river|valley|province|district|county|"
                         r"department|governorate|prefecture|municipality|agglomeration)\b")


_WORD = re.compile(r"[\w'’.-]+")


NameIndex = dict[str, tuple[tuple[int, frozenset[tuple[str, ...]]], ...]]


def _first_word_index(names) -> NameIndex:
    """Names by first word, as word tuples grouped by their number of words, longest first: what
    ``titles_named`` matches a text against, one set lookup per length (a first word such as "New"
    or "List" begins thousands of a large world's titles, which a scan would try one by one)."""
    index: dict[str, dict[int, set[tuple[str, ...]]]] = defaultdict(lambda: defaultdict(set))
    for name in names:
        words = tuple(_WORD.findall(name))
        if words:
            index[words[0]][len(words)].add(words)
    return {k: tuple((n, frozenset(v[n])) for n in sorted(v, reverse=True)) for k, v in index.items()}


def _longest_name_at(index: NameIndex, words: list[str], i: int) -> tuple[str, ...] | None:
    """The longest name of ``index`` that the words from ``i`` on begin with, or None."""
    for n, names in index.get(words[i], ()):
        if i + n <= len(words) and (run := tuple(words[i:i + n])) in names:
            return run
    return None


def _named_title(title: str) -> bool:
    """A title ``titles_named`` looks for in a text: capitalised, 4+ characters, no qualifier."""
    return title[:1].isupper() and len(title) >= 4 and "(" not in title


def _title_index(ctx: StageContext):
    """Snapshot titles by first word (for ``mentions``), as ``_first_word_index`` gives them: the whole
    index in a world small enough (``titles_in_memory``), else read a first word at a time."""
    if not ctx.store.titles_in_memory():
        return ctx.memo("title_index", lambda: _TitlesByFirstWord(ctx.store))
    return ctx.memo("title_index", lambda: _first_word_index(t for t in ctx.store.titles() if _named_title(t)))


class _TitlesByFirstWord:
    """``_title_index`` of a large world: a first word's titles from one range query on the titles'
    index (every title starts with its first word, ``_named_title`` wanting a capital there), the
    last ``KEPT`` words' answers kept. The whole index of a 10⁶-page world takes some 700 MB in
    every process."""
    KEPT = 100_000

    def __init__(self, store):
        self.store = store
        self._names_of = functools.lru_cache(maxsize=self.KEPT)(self._read)

    def _read(self, word: str) -> tuple:
        titles = (t for t in self.store.titles_starting(word) if _named_title(t))
        return _first_word_index(titles).get(word, ())

    def get(self, word: str, default=()):
        if not word[:1].isupper():
            return default
        return self._names_of(word) or default


_CONNECTORS = ("of", "de", "du", "del")


def titles_named(text: str, ctx: StageContext, limit: int = 1000, *, as_read: bool = False,
                 index: dict[str, list[tuple[str, ...]]] | None = None, known=None) -> list[str]:
    """The snapshot pages a text names by their exact title (as a whole name: "Second" in "Second
    World War" is no mention of "Second"), in order of first mention. ``as_read``: names as a reader
    reads them (what a hop's clue relies on): a name never runs on across punctuation ("Falkirk,
    Scotland" names Falkirk and Scotland, "Tyler, Texas" names Texas; a title holding the punctuation,
    "Washington, D.C.", is still matched whole), and a title followed by "of" and a name is the head
    of a longer name ("University" in "University of Nevada", "City" in "City of Toronto"). ``index``
    and ``known``: other names than the snapshot's titles (a page's link texts, ``sentence_mentions``)."""
    index = _title_index(ctx) if index is None else index
    known = ctx.store.__contains__ if known is None else known
    spans = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]
    words = [w for w, _, _ in spans]
    # joined[i]: word i follows word i - 1 with nothing but spaces between them
    joined = [i > 0 and (not as_read or not text[spans[i - 1][2]:spans[i][1]].strip()) for i in range(len(spans))]
    found: list[str] = []
    i = 0
    while i < len(words) and len(found) < limit:
        match = _longest_name_at(index, words, i)
        if match is None:
            i += 1
            continue
        title = " ".join(match)
        end = i + len(match)
        following = words[end] if end < len(words) and joined[end] else ""
        preceding = words[i - 1] if i and joined[i] else ""
        linked_to = words[i - 2] if i >= 2 and joined[i - 1] and preceding in _CONNECTORS else ""
        links_on = (words[end + 1] if as_read and following in _CONNECTORS and end + 1 < len(words) and joined[end + 1]
                    else "")
        if (following[:1].isupper() and not words[end - 1].endswith(".")) or (
                preceding[:1].isupper() and not preceding.endswith(".") and preceding not in NOT_NAMES | {"The"}) or (
                linked_to[:1].isupper() and linked_to not in NOT_NAMES | {"The"}) or (   # "Edict of Nantes", "Sea of Crete"
                links_on[:1].isupper() and links_on not in NOT_NAMES):                 # "University of Nevada"
            i += 1   # part of a longer name ("Second" in "Second World War", "Southeast Asia" in "Maritime
            continue  # Southeast Asia"): not a mention of the page
        if title not in found and known(title):
            found.append(title)
        i += len(match)
    return found


def sentence_names(sentence: str, ctx: StageContext) -> list[str]:
    """The snapshot pages a sentence names as a reader reads it (``titles_named(as_read=True)``; a
    possessive ends a name: "Fuzuli's work" names Fuzuli, "Alexander's Belfast subsidiary" Belfast).
    A page about a common noun ("Hotel") is named only by a word capitalised at the sentence's start:
    within a sentence the capital makes it part of a name ("Dead Mountaineer's Hotel", a novel; blind
    race 6, R18)."""
    text = sentence.rstrip(".")
    names = titles_named(re.sub(r"(?<=\w)['’]s\b", ",", text), ctx, as_read=True)
    return [t for t in names if not (common_noun(t, ctx) and not text.startswith(t))]


def page_anchors(page, ctx: StageContext) -> dict[str, str]:
    """The page's link texts and where they go (``clues.anchor_targets``), kept per page."""
    return ctx.memo(f"anchors|{page.title}", lambda: anchor_targets(page.links))


def _anchor_index(page, ctx: StageContext) -> NameIndex:
    """The page's link texts by first word (``titles_named`` over them: ``sentence_mentions``)."""
    return ctx.memo(f"anchor_index|{page.title}", lambda: _first_word_index(page_anchors(page, ctx)))


def sentence_mentions(sentence: str, page, ctx: StageContext) -> dict[str, str]:
    """The snapshot pages a sentence of ``page`` names, each with the words that name it, in the order
    the sentence first names them (issue 33): a name the page links ("U.S.", "Paris", "Mercury") means
    the page its link goes to, as a reader who clicks it lands (United States; Paris, Texas; Mercury
    (planet)), whatever page holds that title; a name the page does not link means the page of that
    title (``sentence_names``: a lead-only page has no links). A link to a page outside the snapshot
    names nothing a hop can reach."""
    anchors = page_anchors(page, ctx)
    found: dict[str, str] = {}
    if anchors:
        text = re.sub(r"(?<=\w)['’]s\b", ",", sentence.rstrip("."))
        for said in titles_named(text, ctx, as_read=True, index=_anchor_index(page, ctx), known=anchors.__contains__):
            if anchors[said] in ctx.store:
                found.setdefault(anchors[said], said)
    for title in sentence_names(sentence, ctx):
        if title in anchors or linked_reading(title, anchors) != title:
            continue   # the page links this name elsewhere (or here): the link says what it means
        found.setdefault(title, title)
    return dict(sorted(found.items(), key=lambda item: _first_at(sentence, item[1])))


def _first_at(sentence: str, said: str) -> int:
    m = compiled(rf"(?<![\w'’-]){re.escape(said)}").search(sentence)
    return m.start() if m else len(sentence)


def names_page(said: str, title: str, ctx: StageContext) -> bool:
    """Are the words ``said`` a name of the page ``title`` as a reader knows it: its title, its title
    without a qualifier ("Paris" for "Paris, Texas", "Mercury" for "Mercury (planet)"), or a title that
    redirects to it ("U.S.")? A link whose text is something else ("My World" to a discography) sends a
    reader to a page the sentence does not name, so no hop goes through it."""
    if said == title or said in (subject_name(title), subject_name(title).split(",")[0].strip()):
        return True
    return said in ctx.memo(f"aliases|{title}", lambda: set(ctx.store.aliases(title)))


def common_noun(title: str, ctx: StageContext) -> bool:
    """Is the page about a thing a common noun names (a title in sentence case that its opening text
    uses in lower case: "A hotel is an establishment...")? A proper name ("Belfast") or a work's title
    ("A Modest Proposal") is never so."""
    def compute() -> bool:
        page = ctx.page(title)
        lower = title.lower()
        return (page is not None and lower != title and title[1:] == title[1:].lower()   # sentence case
                and compiled(rf"(?<![\w-]){re.escape(lower)}(?:s|es)?(?![\w-])").search(page.lead or "") is not None)
    return ctx.memo(f"common_noun|{title}", compute)


@dataclass(frozen=True)
class Hop:
    target: str          # the title of the page the hop leads to
    relation: Relation


def sentences(block: str) -> list[str]:
    """A block's sentences as the clue counts them (``facts.SENTENCE_SPLIT``)."""
    return [s.strip() for s in SENTENCE_SPLIT.split(block or "")]


def _readable(sentence: str) -> bool:
    return 20 <= len(sentence) <= 400 and sentence.count('"') % 2 == 0 and "\n" not in sentence


def hop_blocks(page) -> list[tuple[str, str]]:
    """The blocks whose sentences a hop may point into, as (section title, text): the opening text
    ("") and, on a full page, every section of prose (not references, lists of works, ...)."""
    return [("", page.lead)] + [(s.title, s.text) for s in page.sections
                                if s.title and s.text and not NON_PROSE_SECTIONS.match(s.title)]


def walkable(hop: Hop, origin: str, names: list[str], ctx: StageContext) -> bool:
    """Has the hop out of the page ``origin`` a wording verbalize may use: one that points at its
    sentence without naming ``names`` (the leg's pages but the seed) and whose words, searched, do not
    show the target in the top ten (the skip probe)? A hop with none would be planned only for every
    wording of it to be rejected at verbalize."""
    def blocks() -> dict | None:
        page = ctx.page(origin)
        return {"lead": page.lead, "sections": [{"title": s.title, "level": s.level, "text": s.text}
                                                for s in page.sections]} \
            if page is not None else None

    def compute() -> bool:
        origin_blocks = ctx.memo(f"hop_blocks|{origin}", blocks)
        return origin_blocks is not None and any(
            not probe_finds(ctx, skip_probe_words(phrase), hop.target, hop_phrase=True)
            for phrase in relation_phrases(hop.relation, 1, reach, origin_blocks))
    rel = hop.relation
    reach = names_in_reach(rel, names)   # the route's other names change nothing: walks through a page share its answers
    key = "|".join(map(str, ("walkable", origin, hop.target, rel.kind, rel.section, rel.sentence, rel.label,
                             rel.measure, rel.extreme, rel.position, *reach)))
    return ctx.memo_unfaulted(key, compute)


def solver_readings(sentence: str, kinds: list[str], origin: str, ctx: StageContext) -> list[str]:
    """The pages a careful reader takes for "the <kind> the sentence names", as the riddle-only solver
    reads them (``solver.hop_pages``): every name and run of words it may look up, fetched as a page,
    that could be a thing of one of ``kinds``, in the order the sentence first names them."""
    found: list[str] = []
    origin_page = ctx.page(origin)
    anchors = page_anchors(origin_page, ctx) if origin_page is not None else {}
    grouped = any(plural_in(k, sentence) for k in kinds)   # the sentence calls its names so: each one is
    for name in names_in(sentence):
        target = ctx.page(linked_reading(name, anchors)) if name != origin else None
        if (target is not None and target.title != origin and target.title not in found
                and (grouped or any(could_be(k, target.description, target.infobox_type) for k in kinds))):
            found.append(target.title)
    return found


def named_hops(page, ctx: StageContext) -> list[Hop]:
    """The pages a sentence of the opening text (or of a section of prose) names, each picked out by
    its kind: the only thing of its kind there, or, where the sentence names several things that are
    all exactly of that kind (each described by the same word, none by a word of its class only), the
    n-th of them in the sentence's order. Kept only where the solver reads the sentence so too."""
    out: list[Hop] = []
    for section, block in hop_blocks(page):
        for sentence in sentences(block):
            if not _readable(sentence) or (section and not is_prose(sentence)):
                continue   # (in a section, a list's line or a citation is no sentence to point at)
            mentions = sentence_mentions(sentence, page, ctx)   # page -> the words that name it
            named = list(mentions)
            pages = {t: p for t in named if t != page.title and (p := ctx.page(t)) is not None}
            said_names = {**pages, **{said: None for said in mentions.values()}}
            for title, target in pages.items():
                kind = kind_of(target.description)
                said = mentions[title]
                if kind is None or title in out_titles(out) or _unpaged_namesake(sentence, said, kind):
                    continue
                if said != title and not names_page(said, title, ctx):
                    continue   # a link whose words are no name of its page ("My World" to a discography)
                if stands_for_subject(page, said):
                    continue   # "Jordan is regarded as ..." on Michael Jordan's page names him (blind race 27, R13)
                if page.title in named and could_be(kind, page.description, page.infobox_type):
                    continue   # "India, Sri Lanka and the Maldives" on India's page: two countries, or three?
                if (_country_doubt(sentence, said, kind) or _qualified_elsewhere(sentence, said, target)
                        or _in_compound(sentence, said, page, ctx) or _among_regions(sentence, said, kind)):
                    continue
                if stands_for_a_state(sentence, said, kind):
                    continue   # "France, the United Kingdom, and Sardinia": the kingdom, not the island
                if in_a_quoted_title(sentence, said):
                    continue   # "the hymn "O Mother dear, Jerusalem"": the hymn, not the city (race 34, R19)
                if noun_of(kind) not in SUBNATIONAL and called_alike(sentence, said, SUBNATIONAL):
                    continue   # "the states of Punjab and Haryana": the Indian state, not the region (race 32, R19)
                # read by its title, not through a link to the page, the name may be someone's or something else's:
                # "the story of Santiago, an aging fisherman" (a person, not the city: issue 34), "Nasir ad-Din
                # Muhammad ibn Qalawun" on his own page (his name, not the prophet's), "by Baybars I ... he had
                # Baybars executed" (which Baybars? blind race 17, R23)
                if page_anchors(page, ctx).get(said) != title and (
                        named_otherwise(sentence, said, kind, page) or own_name_part(sentence, said, page.title)
                        or numbered_elsewhere(block, said) or opens_another(sentence, said, title, mentions, pages)):
                    continue
                alike = [t for t, p in pages.items()
                         if could_be(kind, p.description, p.infobox_type) or called_so(p, kind)]
                if (any(_area_mention(sentence, mentions[t]) for t in alike)
                        or _unpaged_alike(sentence, kind, said_names, page.title, ctx)):
                    continue
                if any(subject_called_short(sentence, page.title, mentions[t]) for t in alike):
                    continue
                if called_otherwise(sentence, said, kind, [mentions[t] for t in pages if t not in alike]):
                    continue
                if alike == [title]:
                    hop = Hop(title, Relation(kind="named", noun=kind, section=section, sentence=sentence))
                    readings = solver_readings(sentence, [kind], page.title, ctx)
                elif (2 <= len(alike) <= 4 and all(kind_of(pages[t].description) == kind for t in alike)
                      and not _unpaged_names(sentence, set(said_names) | {page.title}, ctx)):
                    hop = Hop(title, Relation(kind="named", noun=kind, section=section, sentence=sentence,
                                              candidates=alike, position=alike.index(title) + 1))
                    readings = solver_readings(sentence, singulars(plural(kind)), page.title, ctx)
                else:
                    continue
                if readings == alike:
                    out.append(hop)
    return out


def own_name_part(sentence: str, said: str, title: str) -> bool:
    """Is ``said`` a word (or words) of the page's own title that the sentence writes inside a longer name,
    after another capitalised word? Then it is the subject's own name: an-Nasir Muhammad's "Nasir ad-Din
    Muhammad ibn Qalawun, commonly known as an-Nasir Muhammad" names no prophet, "The Toronto Star is a
    newspaper" no city. Standing alone ("a university in Toronto" on University of Toronto's page) it is
    the other page's name."""
    if said == title or not compiled(rf"(?<![\w'’-]){re.escape(said.lower())}(?![\w'’-])").search(subject_name(title).lower()):
        return False
    return any(re.search(r"(?:^|\s)[\w'’-]*[A-Z][\w'’]*[\s-]$", sentence[:m.start()])
               for m in compiled(rf"(?<![\w'’-]){re.escape(said)}(?![\w'’-])").finditer(sentence))


def opens_another(sentence: str, said: str, title: str, mentions: dict, pages: dict) -> bool:
    """Is the one word ``said`` a bare given name, paired with another ("Jacob and Wilhelm"), in an apposition
    right after another page the sentence names, whose opening sentence holds that word too? Then it names one
    of that page's own: "by the Brothers Grimm, Jacob and Wilhelm, first published" names Jacob Grimm, with
    whom the Brothers Grimm's page opens, not the patriarch the title Jacob reads (blind race 25, R05). Without
    the pair, "in Paris, France" would lose France, which Paris's page opens with too; a country named so
    ("the border between Argentina and Uruguay", after the Río de la Plata) is the country."""
    if " " in said or country_known(title):
        return False
    name = re.escape(said)
    if not compiled(rf"(?<![\w'’-]){name}\s+and\s+[A-Z][\w'’-]*(?![\w'’-])(?!\s+[A-Z])|(?<![\w'’-])[A-Z][\w'’-]*\s+and\s+{name}(?![\w'’-])"
                    ).search(sentence):
        return False
    word = compiled(rf"(?<![\w'’-]){name}(?![\w'’-])")
    for other_title, other in pages.items():
        if (other_title == title or said in other_title
                or not word.search(SENTENCE_SPLIT.split(other.lead or "", maxsplit=1)[0])):
            continue
        if compiled(rf"(?<![\w'’-]){re.escape(mentions[other_title])},\s+(?:[^,.;()]{{0,40}}\s)?{name}(?![\w'’-])"
                    ).search(sentence):
            return True
    return False


def numbered_elsewhere(block: str, said: str) -> bool:
    """Does the text also name ``said`` with a regnal number ("Baybars I") or a number ("Apollo 17")? Then
    the name is part of a longer one and the bare name may be another's: an-Nasir Muhammad's "overthrown
    ... by Baybars I ... he had Baybars executed" speaks of Baybars II, whom the world has no page for, and
    a reading by title went to Baybars I; The Blue Marble's "the Apollo 17 spacecraft" names a mission,
    and a reading by title went to the god (blind race 19, R24)."""
    return compiled(rf"(?<![\w-]){re.escape(said)}\s+(?:[IVX]+|\d+)\b").search(block) is not None


_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')


def in_a_quoted_title(sentence: str, said: str) -> bool:
    """Is every mention of ``said`` inside a longer quoted run, a work's title ("for the hymn "O Mother dear,
    Jerusalem""), which names the work and not the place (blind race 34, R19)?"""
    spans = [m.span(1) if m.group(1) is not None else m.span(2) for m in _QUOTED.finditer(sentence)]
    mentions = [m.span() for m in compiled(rf"(?<![\w'’-]){re.escape(said)}(?![\w'’-])").finditer(sentence)]
    return bool(mentions) and all(any(a <= s and e <= b and (a, b) != (s, e) for a, b in spans) for s, e in mentions)


def subject_called_short(sentence: str, title: str, name: str) -> bool:
    """Does the sentence open with the page's own subject called short (``short_name_of``), as its
    subject ("Apollo was conceived in 1960", "Punjab is a province of Pakistan")? Elsewhere the name is
    the other thing's: "Capital and most populous city of Mexico" on Mexico City's page names the country."""
    return short_name_of(title, name) and re.match(rf"(?:The\s+)?{re.escape(name)}\b", sentence) is not None


def short_name_of(title: str, name: str) -> bool:
    """Is ``name`` the page's own subject called short: the words its title opens with ("Apollo" on the
    page "Apollo program", "Chicago" on "Chicago Bulls"), or its title without the qualifier after a comma
    or in brackets ("Punjab" on "Punjab, Pakistan", "Georgia" on "Georgia (country)")? "Apollo was
    conceived in 1960" speaks of the program: asked for "the god that the second sentence names", a reader
    may take the program or go to the god (blind race 12, R27); "Punjab is a province of Pakistan" names
    the province the page is about, not the region (blind race 14, R17)."""
    if name == title:
        return False
    subject = subject_name(title)
    return title.startswith(name + " ") or name in (subject, subject.split(",")[0].strip())


def called_so(page, kind: str) -> bool:
    """Does the page's opening text call its subject a thing of the kind's class ("Cuba ... is an island
    country", Greenland's "It is the world's largest island": islands to a reader, though their
    descriptions say country and territory)? Asked for "the island" of "the third-largest island ...
    after Cuba and the island of Hispaniola", a reader may take Cuba (blind race 11, R32; Baffin Bay's
    "between Greenland and Baffin Island", R25). Sentences of the first ``OPENING_SENTENCES`` whose subject is the
    page's (its name's first word, or "It") count, each "is a ..." of them to its first preposition."""
    first_word = (subject_name(page.title).split() or [""])[0]
    akin = kin(noun_of(kind))
    for sentence in sentences(page.lead)[:OPENING_SENTENCES]:
        if not (sentence.startswith(("It ", "It's ")) or (first_word and sentence.startswith(first_word))):
            continue
        for m in _OPENING_CALLED.finditer(sentence):
            # "town in the region": a town, not a region; "a city and the seat of a district": both (blind race
            # 52, R04: Buenos Aires, a seat to a reader asked for "the seat", though its description says city)
            head = _CALLED_CUT.split(m.group(1).lower(), 1)[0]
            if set(re.findall(r"[a-z]+", head)) & akin:
                return True
    return False


OPENING_SENTENCES = 6   # how far into the opening text a reader learns what the subject is
# what an opening sentence says its subject is: "is an island country", "was a city-state", "is the
# world's largest island"
_CALLED_CUT = re.compile(r"\b(?:in|of|on|at|from|for|with|that|which|who|whose|located|situated|by|near)\b|,")
# (named apart from ``_CALLED`` below, which long shadowed it here: called_so read only to the first "and")
_OPENING_CALLED = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the|one of the)\s+((?:[\w'’-]+\s+){0,3}[\w'’-]+)")


def _area_mention(sentence: str, title: str) -> bool:
    """Is ``title`` named as an area's or a feature's head ("the Seoul metropolitan area")?"""
    start = sentence.find(title)
    while start >= 0:
        whole = start == 0 or not (sentence[start - 1].isalnum() or sentence[start - 1] in "'’-_")
        if whole and _AREA_AFTER.match(sentence, start + len(title)):
            return True
        start = sentence.find(title, start + 1)
    return False


# words that make a capitalised run the name of a thing, a place or a body, not of a person
THING_WORDS = frozenset([
    "River", "University", "Empire", "Kingdom", "Republic", "Company", "Party", "Church", "Island", "Islands",
    "Mountains", "Sea", "Ocean", "Lake", "City", "County", "State", "States", "Province", "War", "Battle",
    "Treaty", "Award", "Prize", "Museum", "Hotel", "Street", "Road", "Park", "Bridge", "Tower", "Palace",
    "Castle", "Cathedral", "Temple", "Festival", "Records", "Books", "Press", "Times", "News", "Act", "Bank",
    "Group", "Club", "Team", "Council", "Assembly", "Parliament", "Congress", "Court", "Department",
    "Ministry", "Institute", "College", "School", "Academy", "Center", "Centre", "Hospital", "Airport",
    "Station", "Port", "Bay", "Gulf", "Desert", "Valley", "Mount", "Peninsula", "Dynasty", "Revolution",
    "Union", "League", "Association", "Society", "Foundation", "Corporation", "Inc", "Ltd", "Games", "Cup",
    "Championship", "Olympics", "Series", "Show", "Album", "Film", "Age", "Era", "Period", "Basin", "North",
    "South", "East", "West", "Northern", "Southern", "Eastern", "Western", "Central", "Great", "Old", "New",
    "Middle", "Upper", "Lower", "District", "Region", "Territory", "Forest", "Plain", "Plains", "Coast",
    "Federal",
])


def _person_like(name: str) -> bool:
    """Could a reader take the unpaged name for a person's: two to four capitalised words, none a
    thing's, a place's or a body's word, and no country."""
    words = name.split()
    return (2 <= len(words) <= 4 and all(w[:1].isupper() and w.replace("-", "").replace("'", "").isalpha() for w in words)
            and not THING_WORDS & set(words) and not country_known(name))


def _unpaged_names(sentence: str, paged: set[str], ctx: StageContext) -> list[str]:
    """The whole names of a sentence that have no page (``execute.NAME_RUN`` runs, a leading "The" or
    "In" left out): "the second of the three cities" counts only what pages say, so a name whose kind
    no page tells (Santa Marta in a list of Colombian cities and districts) leaves the count in doubt."""
    out = []
    for m in NAME_RUN.finditer(re.sub(r"(?<=\w)['’]s\b", "", sentence)):
        words = [w.strip(",.;:") for w in m.group(0).split()]
        while words and words[0] in NOT_NAMES | {"The"}:
            words = words[1:]
        run = " ".join(words)
        # a run joined by "and" is names side by side ("Indus and Ganges": the page of one does not
        # account for the other; blind race 8, R27), unless the whole run has a page ("Trinidad and Tobago")
        parts = [run] if ctx.store.resolve(run) is not None else re.split(r"\s+and\s+", run)
        # a title's holder is named by the place after "of" too ("Count of Poitiers": Poitiers to a reader;
        # blind race 12, R28)
        parts += [p.rsplit(" of ", 1)[1] for p in parts if " of " in p and ctx.store.resolve(p) is None]
        for name in parts:
            if (name and m.start() > 0 and name not in paged and not any(name in t or t in name for t in paged)
                    and ctx.store.resolve(name) is None):
                out.append(name)
    return out



# ---- a name the sentence says is a person's, an animal's, a vessel's or a work's (issue 34) ----------------
# "It tells the story of Santiago, an aging fisherman, ..." (The Old Man and the Sea) names no city, though
# the snapshot's page "Santiago" is Chile's capital: a page without links offers no link to say which
# Santiago, so the sentence's own words must. ``named_otherwise`` reads what a careful reader reads.
_PEOPLE_NOUNS_WORDS = """
man woman boy girl child son daughter father mother wife husband brother sister friend companion lover
hero heroine protagonist antagonist character narrator servant slave hunter shepherd student teacher
professor doctor lawyer judge officer captain detective orphan widow widower prophet saint god goddess
deity navigator explorer farmer merchant soldier sailor priest monk nun knight warrior peasant apostle
disciple preacher missionary bishop cardinal archbishop duke duchess count countess earl baron lord lady
heir successor ancestor descendant founder mentor pupil apprentice teenager villain wizard witch hermit beggar thief pirate outlaw spy agent veteran rival cousin uncle aunt nephew niece grandson
granddaughter grandfather grandmother princess actress empress heiress hostess poetess priestess
sorceress mistress waitress stewardess baroness
"""
_ANIMAL_NOUNS_WORDS = """
dog cat horse mare stallion bird parrot mouse duck bear lion tiger elephant whale shark dolphin pig cow
bull goat sheep rabbit fox wolf monkey ape donkey mule camel dragon
"""
_VESSEL_NOUNS_WORDS = """
ship vessel boat steamer steamship liner frigate schooner yacht submarine battleship cruiser destroyer
carrier galleon ferry warship tanker sloop brig clipper airship aircraft spacecraft spaceship locomotive
"""
_WORK_NOUNS_WORDS = """
film movie novel novella book album song single play opera poem series epic musical painting sculpture
symphony ballet story sitcom manga comic soundtrack documentary miniseries mixtape drama comedy tragedy
trilogy saga sonnet hymn anthem concerto oratorio cantata sonata memoir biography essay treatise
"""
PEOPLE_NOUNS = PERSON_WORDS | frozenset(_PEOPLE_NOUNS_WORDS.split())
ANIMAL_NOUNS = frozenset(_ANIMAL_NOUNS_WORDS.split())
VESSEL_NOUNS = frozenset(_VESSEL_NOUNS_WORDS.split())
WORK_NOUNS = frozenset(_WORK_NOUNS_WORDS.split())
# the kinds a place's page is asked by: a name of a place may be a person's too (Santiago, Jordan, Venus)
PLACE_NOUNS = frozenset().union(*(kin(n) for n in ("city", "country", "region", "river", "lake", "sea", "mountain",
                                                   "island"))) | {"desert", "valley", "forest", "state", "planet"}
_PERSON_SUFFIX = re.compile(r"[a-z]{3,}(?:man|woman|ist)")   # fisherman, novelist (a lowercase head word)
_NOT_PERSON_SUFFIX = frozenset(["german", "roman", "norman", "ottoman", "talisman", "persist", "insist", "assist",
                                "resist", "consist"])
# a verb only a person's subject takes ("Truth was born into slavery", Sojourner Truth's page; "Santiago
# struggles"); no verb of speech or will, which a city or a company takes too ("Moscow said")
_PERSON_VERB = re.compile(r"\s+(?:married|marries|died|dies|struggles|struggled|dreams|dreamed|dreamt|loves|loved|"
                          r"fell in love|falls in love|befriends|befriended|fishes|fished|sings|sang|reali[sz]es|"
                          r"reali[sz]ed|remembers|remembered|feels|felt|(?:is|was) born)\b")
# ", an aging fisherman", ", the lesser bear": an appositive after the name, to its first preposition or clause
_APPOSITIVE = re.compile(r",\s+(?:an?|the|his|her|their|its)\s+((?:[\w'’-]+\s+){0,4}?[\w'’-]+)(?=\s+(?:of|in|on|from|"
                         r"for|at|by|who|whom|which|that|and|or|with|near|to|whose|where|when|born|based|located|"
                         r"known|after|during|as)\b|\s*[,;:.()]|\s+[-–—]|$)")
# words that place the name that follows: "in Santiago", "from ancient Mesopotamia", "to 15th-century Paris"
_LOCATIVE = re.compile(r"\b(?:in|at|near|from|to|into|across|outside|around|within|through|towards?|off|between|"
                       r"throughout|via|inside|onto)\s+(?:the\s+)?(?:[a-z0-9][\w-]*\s+){0,2}$", re.IGNORECASE)
# nouns whose "of" names a person's doings, not a place ("the story of Santiago", "the life of ...")
_NARRATIVE = frozenset(["story", "tale", "life", "legend", "adventures", "adventure", "exploits", "saga", "biography",
                        "account", "death", "birth", "childhood", "youth", "marriage", "quest", "fate", "romance",
                        "ballad", "memoirs", "diary", "letters", "tragedy"])


def reading_of(word: str) -> str | None:
    """What a noun says a thing is to a reader: "person" (fisherman, goddess, novelist), "animal", "vessel",
    "work" (novel, film, song), else None (a place's word, or a word that says nothing of the kind)."""
    w = word.lower()
    if w in PEOPLE_NOUNS or (_PERSON_SUFFIX.fullmatch(w) is not None and w not in _NOT_PERSON_SUFFIX):
        return "person"
    return ("animal" if w in ANIMAL_NOUNS else "vessel" if w in VESSEL_NOUNS else "work" if w in WORK_NOUNS
            else None)


def is_work(page) -> bool:
    """Is the page about a work: its short description's kind ("1952 novella by Ernest Hemingway") or its
    infobox's ("book", "song", "film"; a "tennis biography" is a person's infobox, not a biography's)?"""
    kind = kind_of(page.description)
    infobox = set((page.infobox_type or "").lower().replace("_", " ").split()) - {"biography"}
    return bool((kind and reading_of(noun_of(kind)) == "work") or WORK_NOUNS & infobox)


def _makers(page) -> set[str]:
    """The words of the name a work's description gives its maker by ("1952 novella by Ernest Hemingway",
    "a song ... released in 1946 by Louis Jordan And His Tympany Five"): in a sentence of that page,
    "Jordan" is the singer."""
    if not is_work(page):
        return set()
    return {w for name in re.findall(r"\bby\s+((?:[A-Z][\w.'’-]*\s*)+)", page.description or "") for w in name.split()}


def _placed(before: str, after: str) -> bool:
    """Do the words around a name read it as a place: after a locative word ("in", "at", "near", "from",
    "to": "in 15th-century Paris"), after "of" (not "the story of"), after a place's word ("the city
    Santiago"), as the place qualifying another ("Copenhagen, Denmark"), or qualified by a country
    ("Santiago, Chile")?"""
    if _LOCATIVE.search(before) or re.search(r"[A-Z][\w.'’-]*,\s+$", before):
        return True
    prior = re.search(r"([A-Za-z-]+)\s+(of\s+)?(?:the\s+)?$", before)
    if prior and (prior.group(1).lower() in PLACE_NOUNS | PLACE_EXTENSIONS
                  or (prior.group(2) and prior.group(1).lower() not in _NARRATIVE)):
        return True
    qualifier = re.match(r",\s+([A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*)", after)
    return qualifier is not None and country_known(qualifier.group(1))


def called_otherwise(sentence: str, said: str, kind: str, others: list[str]) -> bool:
    """Does the sentence of a hop to a person of ``kind`` (named ``said`` there) call that person by an
    occupation a reader does not take for the kind's, just before the name ("The writer Olive Rosepisford
    described ..." for a painter), in an appositive after it or as what the person "was" ("His brother, Julia
    Moreridholt, was also a well known politician" for an architect); or put the kind's own word just before
    another name, whose page is not of the kind ("the painter" before a writer's name)? The clue's word
    comes from the target's page; a reader weighs the sentence's and may read another name or doubt this
    one. The synthetic world's sentences are drawn apart from the pages they name: blind races 42-44 met it
    in five legs, every racer going by the page (issue 34, item 7)."""
    noun = noun_of(kind)
    if noun not in _OCCUPATIONS:
        return False
    akin = kin(noun)
    m = compiled(rf"(?<![\w'’-]){re.escape(said)}(?![\w-])").search(sentence)
    if m is None:
        return False
    before, after = sentence[:m.start()], sentence[m.end():]
    labels = [prior.group(1)] if (prior := _WORD_BEFORE.search(before)) else []
    if appositive := _APPOSITIVE.match(after):
        labels.append(appositive.group(1).split()[-1])
    if called := _CALLED.match(after):
        labels.append(called.group(1).split()[-1])
    if any(w in _OCCUPATIONS and w not in akin for w in labels):
        return True
    return any((n := re.search(rf"([a-z][\w'-]*)\s+{re.escape(other)}(?![\w-])", sentence)) and n.group(1) in akin
               for other in others)


# the lowercase word just before a name ("the ship Santiago", "The writer Olive Rosepisford")
_WORD_BEFORE = re.compile(r"([a-z][\w'-]*)\s+$")
# what a person is by trade: the person classes of ``KIND_CLASSES`` and the sports, which have none
# ("The writer George Calarwick ..." for a footballer: blind race 45, R16)
_OCCUPATIONS = PERSON_WORDS | frozenset(["footballer", "cricketer", "athlete", "boxer", "swimmer", "cyclist", "golfer",
                                         "wrestler", "jockey", "skier", "sprinter", "gymnast", "rugby", "tennis"])
# what a sentence says its subject "was": ", was also a well known politician", " is a British architect"
_CALLED = re.compile(r",?\s+(?:was|is|became|remains)\s+(?:also\s+|later\s+)?(?:an?|the)\s+"
                     r"((?:[\w'’-]+\s+){0,4}?[\w'’-]+)(?=\s+(?:of|in|on|from|for|at|by|who|and|with|to|whose|"
                     r"during|as)\b|\s*[,;:.()]|$)")


def named_otherwise(sentence: str, said: str, kind: str, page) -> bool:
    """Does the sentence say that the name ``said`` (read by its title, not through a link) is a person's,
    an animal's, a vessel's or a work's, so that a careful reader takes it for no thing of ``kind``?

    * for any kind but a person's: the name is the subject of a verb only a person takes ("Santiago
      struggles", "Truth was born into slavery");
    * for a place's kind (a city, a country, a river, a planet ...):
      - a noun of a person, an animal, a vessel or a work stands before it ("his pet dog Pluto", "the
        goddess Venus", "the ship Santiago");
      - or the page is a work's and the name is of its maker's ("Jordan's version" on a song its
        description gives "by Louis Jordan And His Tympany Five");
      - or, where nothing places it (``_placed``), an appositive follows whose head is such a noun
        ("the story of Santiago, an aging fisherman, ...");
      - or the page is a work's (``is_work``: The Old Man and the Sea is a novella) without links (a
        lead-only page: a full article links what it means) and nothing places the name: in a story a
        name is a character's until the sentence makes it a place ("set in Denmark", "published in
        Paris", "Monroeville, Alabama")."""
    m = compiled(rf"(?<![\w'’-]){re.escape(said)}(?![\w-])").search(sentence)
    if m is None or reading_of(noun_of(kind)) == "person":
        return False
    before, after = sentence[:m.start()], sentence[m.end():]
    if _PERSON_VERB.match(after):
        return True
    if noun_of(kind) not in PLACE_NOUNS:
        return False
    if named_as(sentence, said):
        return True   # "Jacob, later given the name Israel": a name given, not the country (blind race 18, R13)
    prior = _WORD_BEFORE.search(before)
    if (prior and reading_of(prior.group(1))) or set(said.split()) <= _makers(page):
        return True
    if _placed(before, after):
        return False
    appositive = _APPOSITIVE.match(after)
    head = [w for w in appositive.group(1).split() if re.fullmatch(r"[a-z][a-z'-]*", w)] if appositive else []
    return bool(head and reading_of(head[-1])) or (is_work(page) and not page.links)

# words after a place's name that leave it the place ("the Moscow region", "the Volga river")
PLACE_EXTENSIONS = frozenset(["city", "area", "region", "border", "coast", "river", "lake", "valley", "basin", "delta", "bay", "harbour", "harbor", "port", "airport", "station", "province", "district", "county", "state", "metropolitan", "capital"])


def _in_compound(sentence: str, title: str, page, ctx: StageContext) -> bool:
    """Is the name part of a longer name, so that a reader may not count it as named? The head of a
    compound the page links to or the snapshot holds ("Aleppo pine", a tree, not the city: blind race 6,
    R04), or of one whose last word is a thing with a page ("notably Jerusalem artichoke": the plant,
    not the city, blind race 9, R17); or qualified by a word that makes another page's name ("ancient
    Greece" is Ancient Greece, a civilisation, beside Greece: blind race 9, R13)."""
    before = word_before(sentence, title)
    if before and ctx.store.resolve(f"{before} {title}") not in (None, title):
        return True
    word = word_after(sentence, title)
    if word is None:
        return False
    compound = f"{title} {word}"
    return (links_to(page, compound) or ctx.store.resolve(compound) is not None
            or (word not in PLACE_EXTENSIONS and ctx.store.resolve(word) is not None))


_REGION_LIST = re.compile(r"\b(?:states|provinces|regions|departments|prefectures|districts|counties|governorates|"
                          r"territories|oblasts|cantons)\b", re.IGNORECASE)


_LIST_ITEM = r"(?:the\s+)?[A-Z][\w'’.-]*(?:\s+(?:of\s+(?:the\s+)?)?[A-Z][\w'’.-]*)*"
_LIST_RUN = re.compile(rf"{_LIST_ITEM}(?:\s*,\s*{_LIST_ITEM})*,?\s+(?:and|or)\s+{_LIST_ITEM}")
_LIST_CUT = re.compile(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+")


def listed_with_states(sentence: str, said: str) -> bool:
    """Is ``said`` an item of a list whose other items include a country or a polity ("an alliance of the
    Ottoman Empire, France, the United Kingdom, and Sardinia")? Then the name stands for a state (the
    Kingdom of Sardinia), not for the island or region its page is about (blind race 30, R13)."""
    for m in _LIST_RUN.finditer(sentence):
        items = [re.sub(r"^the\s+", "", item) for item in _LIST_CUT.split(m.group(0))]
        if said in items and any(country_known(item) or country_like(item) for item in items if item != said):
            return True
    return False


# places that were states under the same name (Sardinia, Rome, Korea, Ireland); a continent, a peninsula or an
# archipelago listed beside countries is still itself ("North America, Europe, and Australia")
_NOT_STATES = frozenset({"continent", "landmass", "subcontinent", "peninsula", "archipelago"})


def stands_for_a_state(sentence: str, said: str, kind: str) -> bool:
    """Asked for an island, a region or a city, does the sentence list the name with states
    (``listed_with_states``) without calling it a thing of the kind ("the cities of Lima, Peru and Bogota,
    Colombia", "the islands of Ireland and Great Britain")?"""
    if noun_of(kind) in _NOT_STATES or not any(could_be(kind, c) for c in ("island", "region", "city")):
        return False
    return listed_with_states(sentence, said) and not called_alike(sentence, said, kin(noun_of(kind)))


def _among_regions(sentence: str, title: str, kind: str) -> bool:
    """Asked for a city, is the name in a list the sentence calls states, provinces or regions ("the
    states of Goiás, ..., São Paulo, Paraná": the state, not the city; blind race 6, R09)?"""
    if not could_be(kind, "city"):
        return False
    m = _REGION_LIST.search(sentence)
    return m is not None and sentence.find(title, m.end()) >= 0


def _qualified_elsewhere(sentence: str, title: str, target) -> bool:
    """Is the name qualified by a place its page does not say it lies in ("Athens, Texas" where the
    page is Greece's Athens: another city, blind race 6, R05)? "Paris, France" on Paris's page is fine."""
    m = compiled(rf"(?<![\w-]){re.escape(title)},\s+([A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*)").search(sentence)
    if m is None:
        return False
    said = f"{target.description or ''} {target.lead or ''}"
    return compiled(rf"(?<![\w-]){re.escape(m.group(1))}(?![\w-])").search(said) is None


def _unpaged_alike(sentence: str, kind: str, pages: dict, origin: str, ctx: StageContext) -> bool:
    """Does the sentence name, without a page of that title, a thing a reader takes for one of the
    kind? A reader counts it whether or not the snapshot holds its page, so "the peninsula the
    sentence names" would have two answers. Each whole name without a page (``_unpaged_names``) is
    looked up as a reader would:

    * searched: a top-three result titled by the name and more ("Sinai" finds "Sinai Peninsula",
      blind race 5, R28) that could be of the kind;
    * by its own last word, where that is of the kind's class ("East Asia Summit" for a forum);
    * for kinds of the city class, in GeoNames: a city of ``UNPAGED_CITY`` people or more ("Pavia and
      Rome", "Busan, Daegu, and Incheon"). Whole names only: "Judge Davis" is no Davis, California."""
    akin = kin(noun_of(kind))
    city_kind = could_be(kind, "city")
    person_kind = bool(akin & PERSON_WORDS)
    gaz = gazetteer(ctx.settings.world_dir, ctx.settings.derived_dir) if city_kind or person_kind else None
    for name in ctx.memo(f"unpaged_names|{origin}|{sentence}",
                         lambda: _unpaged_names(sentence, set(pages) | {origin}, ctx)):
        head = name.split()[-1].lower()
        if len(name.split()) > 1 and (head in akin or head.removesuffix("s") in akin):
            return True   # its own name says its kind ("East Asia Summit" beside the forum asked for: race 11, R31)
        if called_alike(sentence, name, akin if noun_of(kind) in SUBNATIONAL or not could_be(kind, "country")
                        else akin - SUBNATIONAL):
            return True   # the sentence says its kind ("the ancient cities of Chalcedon and Chrysopolis")
        if city_kind and gaz.city_population(name) >= UNPAGED_CITY:
            return True
        if person_kind and _person_like(name) and not gaz.city_population(name):
            return True   # "founded by Sundiata Keita ... especially Mansa Musa": two rulers (race 6, R12)
        for title in ctx.memo(f"completions|{name}", lambda name=name: _completions(name, ctx)):
            found = ctx.page(title)
            if found is not None and could_be(kind, found.description, found.infobox_type):
                return True
    return False


# words of a kind's class that, followed by "of", name what the named thing has, not what it is: "the
# capital of the Roman Empire" calls no empire a capital
_OF_OWNER = frozenset({"capital"})
# words of the country class that name a part of a country to a reader: "the Australian state of Victoria"
# beside Australia leaves one country named (the hop Melbourne -> Australia); asked for a state, they count
SUBNATIONAL = frozenset({"state", "province", "territory"})
_NAME_WORD = r"[A-Z][\w'’-]*"


def called_alike(sentence: str, name: str, akin: frozenset[str] | set[str]) -> bool:
    """Does the sentence call ``name`` a thing of the kind's class in its own words: right after the class's
    noun ("the city of Ciutadella", "the port of Piraeus"), in a list after its plural ("the ancient cities of
    Chalcedon and Chrysopolis", "the rivers Tigris and Euphrates"), or in an apposition ("Chalcedon, an ancient
    city")? A reader asked for "the city the third sentence names" of Constantinople counts those cities,
    whether or not the world has their pages (blind race 26: R29 and R32 both asked which of three cities
    was meant)."""
    nouns = sorted(set(akin) - _OF_OWNER, key=len, reverse=True)
    if not nouns:
        return False
    one = "|".join(re.escape(n) for n in nouns)
    many = "|".join(re.escape(plural(n)) for n in nouns)
    listed = rf"(?:{_NAME_WORD}(?:\s+{_NAME_WORD})*(?:,\s+and\s+|,\s+|\s+and\s+))*"
    named = rf"{re.escape(name)}(?![\w'’-])"
    # "with its capital at Königsberg and then ... Berlin" calls Königsberg a capital, a city to a reader (blind
    # race 49, R13: "the city that the fourth sentence names" of Prussia, the world without Königsberg's page)
    owner = "|".join(sorted(_OF_OWNER & set(akin)))
    placed = rf"|\b(?:{owner})\s+(?:at|was|is|became)\s+{named}" if owner else ""
    # "neighboring Sri Jayawardenepura Kotte is the legislative capital" (blind races 51 and 55: "the city that the
    # fourth sentence names" of Sri Lanka's, beside Colombo; the world has no page of it, GeoNames spells it otherwise)
    said_to_be = "|".join(filter(None, (one, owner)))
    predicate = (rf"|(?<![\w'’-]){re.escape(name)}\s+(?:is|was|became|remains)\s+(?:an?|the)\s+"
                 rf"(?:(?!of\b)[a-z][\w-]*\s+){{0,3}}(?:{said_to_be})\b")
    return compiled(rf"\b(?:(?:{one})\s+(?:of\s+)?{named}|(?:{many})\s+(?:of\s+)?{listed}{named})"
                    rf"|(?<![\w'’-]){re.escape(name)},\s+an?\s+(?:(?!of\b)[a-z][\w-]*\s+){{0,3}}(?:{one})\b"
                    + placed + predicate).search(sentence) is not None


def _completions(name: str, ctx: StageContext) -> list[str]:
    """The pages among a search's top three for ``name`` whose titles are the name and more ("Sinai
    Peninsula" for "Sinai"): what a reader finds who looks the name up."""
    prefix = name.translate(ASCII_LOWER) + " "
    if not ctx.store.has_title_starting(name + " "):   # no title so starts: no search can find one (a large
        return []                                      # world's search costs far more than this index look-up)
    return [hit["title"] for hit in ctx.store.search(name, k=3, snippets=False)
            if hit["title"].translate(ASCII_LOWER).startswith(prefix)]


def _country_doubt(sentence: str, title: str, kind: str) -> bool:
    """Where the kind could be a country ("country", "state", "kingdom"), may a reader take something
    else the sentence names for the target? A former state, a constituent country or a region beside
    it ("England", "America": ``countries_named`` is None), for a country, no clean mention of it
    (its name inside a longer one) or another country the sentence names, whatever its spelling there:
    "in the Indonesian archipelago and Timor Leste" names Timor-Leste beside Indonesia though no page is
    titled so (blind race 53, R13). A U.S. state named where no country is ("in Tyler, Texas") is fine."""
    if not could_be(kind, "country"):
        return False
    named = countries_named(sentence, country_known)
    if named is None and not country_known(title) and _lone_country_like(sentence, title):
        return False   # "a newspaper published in England": the target is the one country-like name there
    if named and country_known(title) and any(country_key(name) != country_key(title) for name in named):
        return True
    return named is None or (not named and country_known(title))


def _lone_country_like(sentence: str, title: str) -> bool:
    """Is the target, a country the country data does not hold ("England", "Scotland"), the one name in
    the sentence a reader may take for a country? Named once, as a whole name, with nothing else there
    that is (or may be taken for) a country: the sentence without it names no country."""
    mentions = [m for m in re.finditer(rf"(?<![\w'’-]){re.escape(title)}(?![\w'’-])", sentence)]
    if len(mentions) != 1 or title not in country_like(sentence):
        return False
    rest = sentence[:mentions[0].start()] + " " + sentence[mentions[0].end():]
    return countries_named(rest, country_known) == [] and not country_like(rest)


def out_titles(hops: list[Hop]) -> set[str]:
    return {h.target for h in hops}


def _unpaged_namesake(sentence: str, title: str, kind: str) -> bool:
    """Does the sentence hold, outside the target's name, a capitalised name with the kind's noun
    ("Bafing River" where the clue asks for the river)? A reader could take that one."""
    return bool(_namesake_regex(noun_of(kind)).search(sentence.replace(title, " ")))


@functools.lru_cache(maxsize=1024)
def _namesake_regex(noun: str) -> re.Pattern:
    """"Bafing River", "the Central-West region", "River of Grass" for the noun "river"."""
    return re.compile(rf"(?:\b[A-Z][\w'-]+\s+(?:{noun.capitalize()}|{noun})s?\b|\b{noun.capitalize()}s?\s+(?:of\s+)?[A-Z])")


def infobox_hops(page, ctx: StageContext) -> list[Hop]:
    """The pages the infobox gives by name for a label no other field of it carries. A field whose
    value is a common noun ("subdivision_type = Country", the heading of the ``subdivision_name`` beside
    it) names no thing: a reader asked for "the body-political entity its infobox gives for subdivision
    type" is sent to the page about countries in general."""
    out: list[Hop] = []
    labels = [f.label for f in page.infobox]
    for f in page.infobox:
        if f.kind != "text" or labels.count(f.label) != 1 or not f.text:
            continue
        name = " ".join(f.text.split())
        title = ctx.store.resolve(name)
        if title is None or title == page.title or name != title or common_noun(title, ctx):
            continue
        target = ctx.page(title)
        kind = kind_of(target.description) if target else None
        if kind is None:
            continue
        out.append(Hop(title, Relation(kind="infobox", noun=kind, label=f.label)))
    return out


def choice_hops(page, ctx: StageContext) -> list[Hop]:
    """Of the countries a sentence of the opening text (or of a section of prose) names, the one with
    the largest or smallest area or population (the agent looks each up)."""
    out: list[Hop] = []
    for section, block in hop_blocks(page):
        for sentence in sentences(block):
            if not _readable(sentence) or (section and not is_prose(sentence)):
                continue
            names = countries_named(sentence, country_known)
            if not names or not 2 <= len(names) <= MAX_CHOICES or len(set(names)) != len(names):
                continue
            if any(stands_for_subject(page, name) for name in names):
                continue   # a person's own name ("Jordan" on Michael Jordan's page) is no country of the sentence
            anchors = page_anchors(page, ctx)   # a name the page links ("Georgia") goes where its link goes
            titles = {n: ctx.store.resolve(linked_reading(country_name(n), anchors)) for n in names}
            if any(t is None or t == page.title for t in titles.values()):
                continue
            for measure in MEASURES:
                figures = {n: _figure(ctx, measure, n) for n in names}
                if any(v is None for v in figures.values()):
                    continue
                ranked = sorted(figures.values())
                if any(b - a < MIN_GAP * b for a, b in itertools.pairwise(ranked)):
                    continue   # two figures too close to tell apart safely
                for extreme in EXTREMES:
                    pick = max(figures, key=figures.get) if extreme == "largest" else min(figures, key=figures.get)
                    out.append(Hop(titles[pick], Relation(kind="choice", noun="country", section=section,
                                                          sentence=sentence, measure=measure, extreme=extreme,
                                                          candidates=list(names))))
    return out


def _figure(ctx: StageContext, measure: str, country: str) -> float | None:
    def look_up():
        figures = []
        for tool, figure in MEASURE_LOOKUPS[measure]:
            result = ctx.toolbox.call(tool, {"country": country})
            if not result.ok:
                return None
            figures.append(get_path(result.data, figure))
        return measure_value(measure, figures)
    try:
        return ctx.memo_unfaulted(f"measure|{measure}|{country}", look_up)
    except TRANSIENT_FAILURES:
        return None


def described_hops(page, ctx: StageContext) -> list[Hop]:
    """The one thing of its kind that the page's short description names ("Capital and largest city
    of Mexico": the country): most pages of a snapshot are a title, a description and an opening text,
    and the description is the part of them that most often names a place. Kept as a named hop is."""
    text = " ".join((page.description or "").split())
    if not 3 <= len(text) <= 300 or text.count('"') % 2:
        return []
    out: list[Hop] = []
    pages = {t: p for t in sentence_names(text, ctx) if t != page.title and (p := ctx.page(t)) is not None}
    for title, target in pages.items():
        kind = kind_of(target.description)
        if kind is None or _unpaged_namesake(text, title, kind) or re.match(re.escape(title) + r"\b", text):
            continue   # (the head word a description opens with, "Country in North America", is no name)
        if numbered_elsewhere(text, title):
            continue   # "Photograph of Earth taken by Apollo 17 crew": the mission, not the god (blind race 31, R31)
        if _country_doubt(text, title, kind):
            continue
        alike = [t for t, p in pages.items() if could_be(kind, p.description, p.infobox_type) or called_so(p, kind)]
        if any(subject_called_short(text, page.title, t) for t in alike):
            continue
        if alike == [title] and solver_readings(text, [kind], page.title, ctx) == alike:
            out.append(Hop(title, Relation(kind="described", noun=kind, sentence=text)))
    return out


def hops_from(title: str, ctx: StageContext) -> list[Hop]:
    """Every hop out of a page, in the page's order (named, infobox, choice, described); memoised per
    context."""
    def compute() -> list[Hop]:
        page = ctx.page(title)
        if page is None:
            return []
        return named_hops(page, ctx) + infobox_hops(page, ctx) + page_choice_hops(title, ctx) + described_hops(page, ctx)
    return ctx.kept("hops", title, compute)


def page_choice_hops(title: str, ctx: StageContext) -> list[Hop]:
    """The choice hops out of a page (memoised per context): far cheaper than all its hops."""
    def compute() -> list[Hop]:
        page = ctx.page(title)
        return choice_hops(page, ctx) if page is not None else []
    return ctx.kept("choice_hops", title, compute)


def offers_choice(title: str, ctx: StageContext) -> bool:
    """Does a choice hop leave the page? (what plan's walk looks one page ahead for while choices are owed)"""
    return bool(page_choice_hops(title, ctx))
