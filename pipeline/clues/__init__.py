"""The clue language of hops (issue 21): how a clue names the next page through the page before it,
the words that say what a page is, and the patterns that read those clues back.

Verbalize renders hops with ``templates/clues/page.j2`` (``bridge == "hop"``); the riddle-only
solver reads them with ``HOP_NAMED``, ``HOP_DESCRIBED``, ``HOP_INFOBOX`` and ``HOP_CHOICE``; both
judge what a page is with ``kind_of`` and ``could_be``, so a clue says only what a careful reader
can check.
"""
from __future__ import annotations

import re

# ---- what a page is, in a reader's word ------------------------------------------------------------
# the head of a short description ends at the first preposition, clause or punctuation
_HEAD_CUT = re.compile(r"\s+(?:of|in|on|from|for|at|by|who|which|that|based|located|founded|born|and|or|with|near|to|"
                       r"between|during|whose|known|used|as|than|under|within|about|against|since|where)\b"
                       r"|[,(;:–—/]|\s-\s")
# kind words too vague for a reader to pick one thing out by ("the type named in ...")
VAGUE = frozenset(["#", "noqa:", "SIM905", "(a", "word", "list", "reads", "best", "as", "words)", "family", "species", "genus", "type", "study", "branch", "group", "process", "form", "system", "order", "class", "part", "set", "concept", "the", "one", "prime", "area", "field", "body", "number", "history", "period", "unit", "structure", "range", "method", "theory", "division", "work", "art", "science", "series", "movement", "collection", "traditions", "tradition", "individual", "head", "stage", "term", "list", "article", "topic", "name", "word", "kind", "style", "way", "member", "line", "use", "practice", "category", "phenomenon", "property", "quantity", "measure", "aspect", "principle", "idea", "model", "product", "element", "compound", "substance", "material", "object", "thing", "item", "piece", "event", "act", "action", "condition", "situation", "two", "three", "four", "five", "first", "second", "third", "found", "natural", "artistic", "major", "main", "largest", "populous", "fields", "primary", "former", "feature", "parent", "academic", "place", "gathering", "progression", "composition", "halfway", "loose"])

# words a careful reader may take for one another: asked for one, a thing of another in the same
# sentence is a second reading
KIND_CLASSES: tuple[frozenset[str], ...] = tuple(frozenset(c.split()) for c in (
    "city town village capital municipality metropolis commune settlement megacity port suburb borough county",
    ("country nation state kingdom republic empire monarchy dynasty caliphate sultanate territory province "
    "principality confederation federation colony polity civilization microstate city-state enclave"),
    "region subregion sub-region zone continent subcontinent landmass",
    ("writer poet novelist author playwright essayist dramatist journalist historian scholar philosopher theologian "
    "critic translator"),
    ("king emperor ruler monarch sultan pharaoh queen caliph prince princess tsar shah khan pope president politician "
    "statesman leader minister general commander chancellor governor"),
    "painter artist sculptor architect illustrator photographer designer",
    ("physicist scientist chemist mathematician astronomer biologist polymath engineer inventor naturalist economist "
    "physician"),
    "actor actress filmmaker director producer screenwriter",
    "singer musician composer songwriter rapper guitarist pianist band conductor",
    "river tributary stream canal",
    "lake reservoir lagoon",
    "sea ocean bay gulf strait sound",
    "mountain volcano peak hill plateau massif",
    "film novel book album song play opera poem series epic",
    "religion faith church denomination sect",
    "language dialect",
    "university college school institute academy",
    "company corporation manufacturer conglomerate firm business",
    "island archipelago peninsula",
))


_DIRECTION = re.compile(r"(?:north|south|east|west)(?:east|west)?(?:ern)?|central")
_NOUNS_IN_EST_TH = frozenset(["forest", "conquest", "contest", "interest", "protest", "festival", "month", "path", "moth", "cloth", "myth", "earth", "mouth", "youth"])


def kind_of(description: str | None) -> str | None:
    """What a page is, in one or two plain words from its short description ("Azerbaijani poet
    (1483–1556)" -> "poet", "Central religious text of Islam" -> "religious text", "River in West
    Africa" -> "river"): names, numbers and demonyms left out; None when nothing plain is left or the
    word is too vague to pick a thing out."""
    text = " ".join((description or "").split())
    # a page without a short description shows its first sentence: "Alabama is a state located in ..."
    text = re.sub(r"^[^,]*?\b(?:is|was|are|were)\s+(?:an?|the|one of the)\s+", "", text)
    # "Political and economic union of 27 states": two modifiers joined by "and" before one noun
    text = re.sub(r"\b([A-Za-z]+) (?:and|or) ([a-z]+ (?!(?:of|in|on|from|for|at|by|with|and)\b)[a-z]+)\b", r"\1-\2",
                  text, count=1)
    head = _HEAD_CUT.split(text, maxsplit=1)[0].strip()
    head = re.sub(r"^(?:An?|The|One)\s+", "", head, flags=re.IGNORECASE)   # "A subregion of ..."
    if re.match(r"^[A-Za-z]+ing\b", head) and not re.match(r"^(?:building|painting|kingdom|ring|spring)\b", head,
                                                             re.IGNORECASE):
        return None   # "Founding of the United States": an act, not a thing to go to
    words: list[str | None] = []
    capitalised_first = head[:1].isupper()
    for i, w in enumerate(head.split()):
        if i > 0 and len(w) > 4 and re.fullmatch(r"[a-z]+(?:ed|ing|en)", w):
            break   # a participle ends the noun phrase ("Team sport played with ...")
        if not re.fullmatch(r"[A-Za-z'-]+", w) or (i > 0 and w[:1].isupper()) or w.lower().endswith("ly"):
            words.append(None)   # a number, a name or a demonym
            continue
        words.append(w.lower())
    second = head.split()[1:2]
    if capitalised_first and second and second[0][:1].isupper():
        words[0] = None   # "British Overseas Territory ...": the first word opens a name, it is no kind
    while words and words[-1] is None:
        words.pop()
    while len(words) > 1 and words[-1] and _DIRECTION.fullmatch(words[-1]):
        words.pop()   # "Sea northeast of Australia"
    if (not words or not words[-1] or len(words[-1]) < 3 or words[-1] in VAGUE or re.search(r"[^su]s$", words[-1])
            or re.search(r"(?:est|th|most)$", words[-1]) and words[-1] not in _NOUNS_IN_EST_TH):
        return None   # vague, a plural ("states"), a superlative or an ordinal: not one thing to pick out
    noun = words[-1]
    if len(words) >= 2 and words[-2] and len(words) > 2 and words[-2] not in VAGUE:
        return f"{words[-2]} {noun}"   # a lowercase modifier inside the phrase: "religious text"
    return noun


def plural(kind: str) -> str:
    """A kind phrase in the plural ("city" -> "cities", "religious text" -> "religious texts")."""
    head, _, noun = kind.rpartition(" ")
    if re.search(r"[^aeiou]y$", noun):
        noun = noun[:-1] + "ies"
    elif re.search(r"(?:s|sh|ch|x|z)$", noun):
        noun += "es"
    else:
        noun += "s"
    return f"{head} {noun}".strip()


def singulars(kinds: str) -> list[str]:
    """``plural`` undone: every singular whose plural it is ("cities" -> city, citie; "phases" -> phase,
    phas); the solver takes a page that could be any of them (a made-up form fits no page)."""
    head, _, noun = kinds.rpartition(" ")
    out = [noun[: -len(cut)] + add for cut, add in (("ies", "y"), ("es", ""), ("s", "")) if noun.endswith(cut)]
    return [f"{head} {c}".strip() for c in out if plural(c) == noun] or [kinds]


def noun_of(kind: str) -> str:
    """The head noun of a kind phrase ("religious text" -> "text")."""
    return kind.split()[-1]


def kin(noun: str) -> frozenset[str]:
    """The words a careful reader may take for ``noun`` (itself and its class)."""
    out = {noun}
    for c in KIND_CLASSES:
        if noun in c:
            out |= c
    return frozenset(out)


def page_words(description: str | None, infobox_type: str | None = None) -> set[str]:
    """The plain words a reader sees of what a page is: its short description and infobox kind."""
    text = f"{description or ''} {(infobox_type or '').replace('_', ' ')}".lower()
    return set(re.findall(r"[a-z]+", text)) | set(re.findall(r"[a-z]+(?:-[a-z]+)+", text))


def could_be(kind: str, description: str | None, infobox_type: str | None = None) -> bool:
    """Could a careful reader take a page so described for a thing of ``kind``? Its description or
    infobox says the kind's noun or a word of its class ("town" for "city")."""
    return bool(page_words(description, infobox_type) & kin(noun_of(kind)))


# ---- numbers a careful reader may count ------------------------------------------------------------------
_NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion", "billions", "dozen", "dozens", "half"]
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
DOUBTFUL_NUMBER = re.compile(r"(?<![\d.,]\s)(?<![\d.,])\b(?:" + "|".join(_NUMBER_WORDS) + r")\b"
                             r"|\b\d+(?:st|nd|rd|th|s)\b|[½¼¾⅓⅔]"
                             # a full date: its day and year are one date to some readers, two numbers to others
                             rf"|\b\d{{1,2}} (?:{_MONTHS}) \d{{3,4}}\b|\b(?:{_MONTHS}) \d{{1,2}}, \d{{3,4}}\b")


def doubtful_numbers(sentence: str) -> list[str]:
    """What a careful reader may count as a number of a sentence besides its numerals (issue 21: "one of
    the five pillars ... lasts 29 to 30 days" gives four numbers to some readers, two to others):
    numbers written as words, ordinals and decades written with digits ("19th", "1990s"), fractions, full
    dates ("1 November 1956": one date or two numbers).
    A clue never counts the numbers of such a sentence."""
    return [m.group(0) for m in DOUBTFUL_NUMBER.finditer(sentence)]


# ---- the wording of hops (templates/clues/page.j2) and its patterns -------------------------------------
MEASURES = ("area", "population", "population density")
EXTREMES = ("largest", "smallest")
# the calls each choice measure is looked up with (tool, figure of its answer), per country
MEASURE_LOOKUPS = {
    "area": (("countries_area", "area_km2"),),
    "population": (("countries_population", "population"),),
    "population density": (("countries_population", "population"), ("countries_area", "area_km2")),
}


def measure_value(measure: str, figures: list[float]) -> float:
    """A country's measure from its looked-up figures (``MEASURE_LOOKUPS`` order): density is people per km²."""
    return figures[0] / figures[1] if measure == "population density" else figures[0]


_SENTENCE = r'(?:the (\w+) sentence|the sentence that begins with the words "(.*?)")'
_BLOCK = r'(?:(opening text)|section "(.*?)"|(\w+) section)'
HOP_NAMED = re.compile(rf"^From the page you read for clue (\d+), go to the page of the (?:(\w+) of the (\w+) )?"
                       rf"([a-z' -]+?) that {_SENTENCE} of its {_BLOCK} names\.$", re.DOTALL)
HOP_DESCRIBED = re.compile(r"^From the page you read for clue (\d+), go to the page of the ([a-z' -]+?) that its short "
                           r"description names\.$", re.DOTALL)
HOP_INFOBOX = re.compile(r'^From the page you read for clue (\d+), go to the page of the ([a-z\' -]+?) that its infobox gives '
                         r'for "(.*?)"\.$', re.DOTALL)
HOP_CHOICE = re.compile(rf"^On the page you read for clue (\d+), {_SENTENCE} of its {_BLOCK} names (\w+) countries: go to the "
                        rf"page of the one with the ({'|'.join(EXTREMES)}) ({'|'.join(sorted(MEASURES, key=len, reverse=True))}), as the country "
                        rf"statistics give it\.$", re.DOTALL)
