"""Candidate facts on a page: what a page stop may ask an agent to extract.

Each candidate says where the fact lives (infobox field, a sentence of a section, or the page's
subject itself), its type and its value as read from the page. Text facts are kept only when they
name a place or a country (they feed roadblocks); numbers must carry information (not 0 or 1).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.clues import MONTHS, PERSON_WORDS, counts_safely, kin, kind_of, measured_alone, noun_of
from pipeline.execute import (
    clean_text_value,
    countries_named,
    country_key,
    country_known,
    infobox_year,
    numbers_in,
    parse_number,
)
from pipeline.model import Extraction
from pipeline.snapshot.page import Page, compiled, subject_name

PLACE_FIELDS = re.compile(
    r"^(birth_?place|death_?place|place_of_birth|place_of_death|location|city|hometown|origin|"
    r"headquarters|hq_location(_city)?|capital|largest_city|residence|seat|venue|locality|town|founded_place)$")
COUNTRY_FIELDS = re.compile(r"^(country|nationality|citizenship|state_party|sovereign_state|location_country)$")
# a company's ticker symbol ("AAPL") or a cryptocurrency's code ("BTC"), as the infobox gives it, feeds
# the market roadblocks (the only place their entity may come from)
TICKER_FIELDS = re.compile(r"^(traded_as|symbol|ticker|ticker_symbol|stock_symbol)$")
COIN_FIELDS = re.compile(r"^(code|currency_code|ticker)$")
TICKER = re.compile(r"[A-Z]{1,5}")
# (the coordinates' and the alt text's names are matched at the start of a word of the field's name:
# "population" holds "lat", "altitude" is a measure)
SKIP_FIELDS = re.compile(r"(image|caption|size|map|signature|website|url|logo|(?:^|_)alt(?!itude)|footnote|coord|"
                         r"zoom|pushpin|blank|_ref$|^ref|note|id$|_id|code|postal|(?:^|_)iso|timezone|utc|dial|"
                         r"calling|(?:^|_)lat|(?:^|_)long|width|height|module|embed|color|colour)", re.IGNORECASE)
SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# sections of apparatus rather than prose: citations there make meaningless "facts"
NON_PROSE_SECTIONS = re.compile(r"^(references|notes|bibliography|further reading|external links|sources|citations|"
                                r"works cited|see also|footnotes|discography|filmography|selected works|works|"
                                r"selected writings|writings|publications|awards|honours|gallery)\b", re.IGNORECASE)


def is_prose(sentence: str) -> bool:
    """A real sentence: starts with a capital, ends with a full stop, mostly words, no citation debris."""
    if not re.match(r"^[A-Z]", sentence) or not sentence.endswith(".") or any(c in sentence for c in "[]{}|=<>"):
        return False
    words = re.findall(r"[A-Za-z]{2,}", sentence)
    return len(words) >= 8 and sum(len(w) for w in words) >= 0.6 * len(sentence)


@dataclass(frozen=True)
class Fact:
    extraction: Extraction
    value_type: str          # number | date | text
    value: object
    label: str               # plain words: "population total", or the cloze sentence
    role: str                # number | date | place | country
    unit: str | None = None  # canonical unit of a number (m, km, km2, kg, ...) when the page states it


def _is_informative_number(x: float) -> bool:
    return abs(x) >= 2 and abs(x) < 10 ** 13


_SHOWN_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def shown_number(text: str | None) -> int | None:
    """The first number an infobox value shows, rounded as a page stop's number is ("1,215" -> 1215,
    "3.0m" -> 3); None when it shows none."""
    m = _SHOWN_NUMBER.search(text or "")
    return round(float(m.group(0).replace(",", ""))) if m else None


_YEARS = re.compile(r"(?<!\d)(1\d{3}|20\d{2})(?!\d)")
_MONTH_NAMES = re.compile(r"\b(?:" + "|".join(MONTHS) + r")\b")
_DAYS = re.compile(r"(?<![\d,.])(?:[1-9]|[12]\d|3[01])(?![\d,.:])")


def one_date(text: str) -> bool:
    """Does an infobox field's text give one date: one year, one month, one day? "April 30 - November 26,
    1956" (the field "Recorded" of a record, blind race 14, R32) is a range: the importer reads its last
    date, a reader may copy the first."""
    return (len(set(_YEARS.findall(text))) <= 1 and len(_MONTH_NAMES.findall(text)) <= 1
            and len(_DAYS.findall(_YEARS.sub(" ", text))) <= 1)


def infobox_facts(page: Page) -> list[Fact]:
    out: list[Fact] = []
    cryptocurrency = "crypto" in (page.infobox_type or "").lower()
    for f in page.infobox:
        listing = COIN_FIELDS.match(f.name) if cryptocurrency else TICKER_FIELDS.match(f.name)
        if listing and f.kind == "text" and TICKER.fullmatch(clean_text_value(f.text or "")):
            out.append(Fact(Extraction(source="infobox", field=f.name), "text", clean_text_value(f.text), f.label,
                            "coin" if cryptocurrency else "company"))
            continue
        if SKIP_FIELDS.search(f.name):
            continue
        ex = Extraction(source="infobox", field=f.name)
        if f.kind == "number" and re.search(r"\b(?:thousand|million|billion|trillion|bn|mn)\b|\d\.\d", f.text or "",
                                             re.IGNORECASE):
            continue   # "$4.510 billion": 4510000000, 4.51 or 4510 million? (a blind racer could not tell)
        if f.kind in ("number", "year") and f.number is not None and _is_informative_number(f.number):
            if shown_number(f.text) != round(f.number):
                continue   # "elevation ft: 1470" stored as 448 m: a reader of the field copies 1470
            out.append(Fact(ex, "number", round(f.number), f.label, "number", f.unit))
        elif (year := infobox_year(f.date, f.number)) is not None:
            if numbers_in(f.text or "") != [str(year)]:
                continue   # "1850; 1901 (reorganised)": which year is the founding a reader would copy?
            out.append(Fact(ex, "number", year, f.label, "number"))
        elif f.kind == "date" and f.date and len(f.date) == 10:
            if not one_date(f.text or ""):
                continue   # "April 19, 1775 – September 3, 1783, Ratification effective: May 12, 1784": which
                #            date does the infobox give? (blind race 7, R07; a range in one year: race 14, R32)
            out.append(Fact(ex, "date", f.date, f.label, "date"))
        elif f.kind == "text":
            text = clean_text_value(f.text)
            if not text or len(text) > 60 or any(c.isdigit() for c in text) or len(text) < 3:
                continue
            if PLACE_FIELDS.match(f.name):
                out.append(Fact(ex, "text", text, f.label, "place"))
            elif COUNTRY_FIELDS.match(f.name):
                out.append(Fact(ex, "text", text, f.label, "country"))
    return out


def prose_facts(page: Page, cross_section: bool) -> list[Fact]:
    """Numbers inside sentences: of the lead (prose) or of a later section (cross_section)."""
    out: list[Fact] = []
    blocks = ([(s.title, s.text) for s in page.sections if s.title and not NON_PROSE_SECTIONS.match(s.title)]
              if cross_section else [("", page.lead)])
    for title, text in blocks:
        for sentence in SENTENCE_SPLIT.split(text or ""):
            sentence = sentence.strip()
            if not 40 <= len(sentence) <= 300 or sentence.count('"') % 2 or not is_prose(sentence):
                continue
            nums = numbers_in(sentence)
            if not nums:
                continue
            # "one of the five pillars ... 29 to 30 days": readers count its numbers differently; such a
            # sentence gives only what a clue may ask by its unit ("a measurement in square kilometres")
            askable = range(len(nums)) if counts_safely(sentence) else measured_alone(sentence)
            for idx in askable:
                raw = nums[idx]
                value = parse_number(raw)
                if not _is_informative_number(value) or value != int(value):
                    continue
                if sentence.count(raw) != 1:
                    continue
                ex = Extraction(source="cross_section" if cross_section else "prose", section=title,
                                sentence=sentence, number_index=idx)
                after = re.match(r"\s*(km2|km²|sq km|km|m|kg|hectares|ha)\b", sentence[sentence.index(raw) + len(raw):])
                unit = {"km²": "km2", "sq km": "km2", "ha": "hectares"}.get(after.group(1), after.group(1)) if after else None
                out.append(Fact(ex, "number", int(value), sentence, "number", unit))
                break
    return out


MAX_NAMED = 3   # a sentence naming more countries than this is a list, not a question
# words that make a country's name another age's ("ancient Greece", "medieval England"): a civilisation or
# a former realm to a reader, which a clue asking for "a country" may or may not mean
FORMER_TIMES = frozenset(["ancient", "archaic", "classical", "medieval", "mediaeval", "prehistoric", "precolonial",
                          "pre-colonial", "colonial", "imperial", "feudal", "dynastic", "pharaonic", "biblical", "historical", "historic"])


def named_country_facts(page: Page) -> list[Fact]:
    """Countries the page's opening text names (a cloze: which country does the n-th sentence
    name?): what a lead-only page, which has no infobox and no links, offers a roadblock. One fact
    per country of a sentence that names one to three different countries and none inside a longer
    name (``execute.countries_named``). On a country's own page a sentence naming it beside others is
    left out: a reader may count the page's own country or not (blind race 6, R04: "names three
    countries: which is the first?" read as Italy, not Tunisia)."""
    subject = subject_name(page.title)
    own = country_key(subject) if country_known(subject) else None
    out: list[Fact] = []
    for sentence in SENTENCE_SPLIT.split(page.lead or ""):
        sentence = sentence.strip()
        if not 40 <= len(sentence) <= 300 or sentence.count('"') % 2 or not is_prose(sentence):
            continue
        names = countries_named(sentence, country_known)
        if not names or len(names) > MAX_NAMED or len(set(names)) != len(names):
            continue
        if any(stands_for_subject(page, name) for name in names):
            continue   # "Jordan is regarded as ..." on Michael Jordan's page: the player (blind race 27, R13)
        if own in {country_key(n) for n in names}:
            continue   # "Tunisia ... with Italy ... and Malta" on Tunisia's page: three countries, or two?
            #            "Japan is an island country" on Japan's page asks what the reader already knows
            #            (racers of every race asked whether another country was meant)
        if any(_heads_compound(sentence, name, page) for name in names):
            continue   # "Norway rat" on the brown rat's page names a rat, not Norway (blind race 7, R20)
        if any(word_before(sentence, name) in FORMER_TIMES for name in names):
            continue   # "a polis of ancient Greece" names a civilisation: Greece, or no country? (race 11, R24)
        for idx, name in enumerate(names):
            out.append(Fact(Extraction(source="prose", section="", sentence=sentence, name_index=idx), "text", name,
                            sentence, "country"))
    return out


# a short description's life years ("(born 1963)", "(1887–1986)", "(c. 460 – c. 370 BC)") and the infobox
# types of people: what tells a page about a person
LIFE_YEARS = re.compile(r"\((?:born|died|b\.|d\.|fl\.)?\s*(?:c\.\s*)?\d{1,4}(?:\s*BC)?"
                        r"(?:\s*[–-]\s*(?:c\.\s*)?\d{1,4}(?:\s*(?:BC|AD|BCE|CE))?)?\)")
PERSON_INFOBOX = re.compile(r"person|biography|officeholder|royalty|writer|artist|scientist|philosopher|saint|"
                            r"monarch|president|actor|musician|athlete|player|military", re.IGNORECASE)


def about_a_person(page: Page) -> bool:
    """Is the page about a person (its short description's life years, a person's infobox or kind)?"""
    kind = kind_of(page.description)
    return bool(LIFE_YEARS.search(page.description or "") or PERSON_INFOBOX.search(page.infobox_type or "")
                or (kind and kin(noun_of(kind)) & PERSON_WORDS))


def stands_for_subject(page: Page, name: str) -> bool:
    """Is ``name`` the first or last word of the name of the person the page is about (before an "of":
    "Alexis" of "Alexis of Russia", whose Russia is the country)? There it stands for that person, whatever
    else bears the name: "Jordan is regarded as one of the most influential sports figures" on Michael
    Jordan's page names the player, not the country (blind race 27, R13); "Abraham, on February 12, 1809"
    on Abraham Lincoln's names no patriarch."""
    subject = subject_name(page.title)
    own = subject.split(" of ")[0]
    words = own.split()
    return (name != subject and bool(words) and name in (words[0], words[-1])
            and (len(words) >= 2 or own != subject) and about_a_person(page))


def word_before(sentence: str, name: str) -> str | None:
    """The lower-case word right before ``name`` in the sentence ("ancient" in "ancient Greece"), if any:
    with the name it may be the name of another thing."""
    m = compiled(rf"(?<![\w-])([a-z][\w-]*)\s+{re.escape(name)}(?![\w-])").search(sentence)
    return m.group(1) if m else None


def word_after(sentence: str, name: str) -> str | None:
    """The lower-case word right after ``name`` in the sentence ("pine" in "Aleppo pine"), if any: with
    the name it may be a compound that names another thing."""
    m = compiled(rf"(?<![\w-]){re.escape(name)}\s+([a-z][\w-]*)").search(sentence)
    return m.group(1) if m else None


def links_to(page: Page, title: str) -> bool:
    """Does the page link to ``title`` (whatever the case)?"""
    return title.casefold() in {link.title.casefold() for link in page.links}


def _heads_compound(sentence: str, name: str, page: Page) -> bool:
    """Does the name head a compound: one the page links to or is also called, or one of the page's
    own subject ("Norway rat" on the brown rat's page names a rat, not Norway)?"""
    word = word_after(sentence, name)
    if word is None:
        return False
    compound = f"{name} {word}"
    head = subject_name(page.title).split()[-1].casefold()
    return (links_to(page, compound) or compound.casefold() in {a.casefold() for a in page.aliases}
            or word in (head, head + "s"))


# what a page about a place or a country says it is (short description or infobox type)
PLACE_SUBJECT = re.compile(r"^(?:[\w-]+\s+){0,3}(city|capital|town|village|country|nation|sovereign state|"
                           r"municipality|metropolis|commune|settlement)\b", re.IGNORECASE)
COUNTRY_WORDS = ("country", "nation", "sovereign state")   # the kinds of PLACE_SUBJECT that are countries
SUBJECT_LABEL = "the place the page is about"


def subject_facts(page: Page) -> list[Fact]:
    """A page about a place or a country is that place: its name is the fact (the lead-only pages
    of a snapshot are mostly of this kind of use: most hold no infobox). The build keeps it only
    when the whole name geocodes as one place or names a country (``build.resolved``)."""
    what = [w for w in (page.description, (page.infobox_type or "").replace("_", " ")) if w and len(w) <= 80]
    name = subject_name(page.title)
    if (not any(PLACE_SUBJECT.search(w) for w in what) or "disambiguation" in page.title
            or not 3 <= len(name) <= 60 or any(c.isdigit() for c in name)):
        return []
    return [Fact(Extraction(source="subject"), "text", name, SUBJECT_LABEL, "place")]


# where a page's candidate facts come from, in order, and the extraction mode each needs (None: every
# level, since a page's subject, a place or a country, is what an agent sees first)
_FINDERS: tuple[tuple[str, str | None, Callable[[Page], list[Fact]]], ...] = (
    ("infobox", "infobox", infobox_facts),
    ("subject", None, subject_facts),
    ("prose", "prose", lambda page: prose_facts(page, cross_section=False) + named_country_facts(page)),
    ("cross_section", "cross_section", lambda page: prose_facts(page, cross_section=True)),
)


def _found(page: Page, part: str, find) -> list[Fact]:
    """One finder's facts of a page, found once per page object (``StageContext.page`` keeps the parsed
    pages; a page is read-only): the profile, each level's usable facts and the entity probe all ask the
    same page, and reading every sentence's numbers again was most of a large world's plan time."""
    memo = page.__dict__.setdefault("_facts_found", {})
    if part not in memo:
        memo[part] = tuple(find(page))   # facts are frozen; the tuple keeps callers from changing the list
    return list(memo[part])


def page_facts(page: Page, modes: tuple[str, ...]) -> list[Fact]:
    """The candidate facts of a page at a level's extraction modes; a page's subject (a place or a
    country) is a fact at every level, as its title is what an agent sees first."""
    return [f for part, mode, find in _FINDERS if mode is None or mode in modes for f in _found(page, part, find)]


def fact_parts(page: Page) -> dict[str, list[Fact]]:
    """Every candidate fact of the page by where it comes from (``page_facts`` at any modes is the
    union of the parts those modes take): one pass serves every level."""
    return {part: _found(page, part, find) for part, _, find in _FINDERS}


def parts_for(modes: tuple[str, ...]) -> list[str]:
    """The parts of ``fact_parts`` a level's extraction modes take."""
    return [part for part, mode, _ in _FINDERS if mode is None or mode in modes]


def hop_modes(modes: tuple[str, ...]) -> tuple[str, ...]:
    """The extraction modes of a page reached by a hop: the level's, and always a sentence's number or
    country (most pages a hop reaches are lead-only: at easy's infobox-only modes few could be a stop)."""
    return tuple(sorted(set(modes) | {"prose"}))
