"""What a page is, in a reader's word: the kind word of a short description (``kind_of``), its
plural and singulars, the words a careful reader may take for one another (``KIND_CLASSES``), and
whether a page could be a thing of a kind (``could_be``). Hops name their target by such a word.
"""
from __future__ import annotations

import re

# ---- what a page is, in a reader's word ------------------------------------------------------------
# the head of a short description ends at the first preposition, clause or punctuation
_HEAD_CUT = re.compile(r"\s+(?:of|in|on|from|for|at|by|who|which|that|based|located|founded|born|and|or|with|near|to|"
                       r"between|during|whose|known|used|as|than|under|within|about|against|since|where)\b"
                       r"|[,(;:–—/]|\s-\s")
# kind words too vague for a reader to pick one thing out by ("the type named in ...")
VAGUE = frozenset(["word", "list", "reads", "best", "as", "family", "species", "genus", "type", "study", "branch", "group", "process", "form", "system", "order", "class", "part", "set", "concept", "the", "one", "prime", "area", "field", "body", "number", "history", "period", "unit", "structure", "range", "method", "theory", "division", "work", "art", "science", "series", "movement", "collection", "traditions", "tradition", "individual", "head", "stage", "term", "list", "article", "topic", "name", "word", "kind", "style", "way", "member", "line", "use", "practice", "category", "phenomenon", "property", "quantity", "measure", "aspect", "principle", "idea", "model", "product", "element", "compound", "substance", "material", "object", "thing", "item", "piece", "event", "act", "action", "condition", "situation", "two", "three", "four", "five", "first", "second", "third", "found", "natural", "artistic", "major", "main", "largest", "populous", "fields", "primary", "former", "feature", "parent", "academic", "place", "gathering", "progression", "composition", "halfway", "loose", "cradle", "attempt", "endeavour"])

# words a careful reader may take for one another: asked for one, a thing of another in the same
# sentence is a second reading
KIND_CLASSES: tuple[frozenset[str], ...] = tuple(frozenset(c.split()) for c in (
    # a French prefecture is a city (Nantes beside an unpaged Poitiers: blind race 12, R28)
    "city town village capital municipality metropolis commune settlement megacity port suburb borough county prefecture",
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
    # bodies of states: "the forum the sentence names" beside the East Asia Summit (blind race 11, R31)
    ("organization organisation forum alliance union association bloc agreement treaty summit council community "
     "league partnership pact intergovernmental"),
))


# the kinds of people (the person classes of ``KIND_CLASSES``): an unpaged person's name beside the target
# may be one of the kind, and nothing the reader can read says it is not
PERSON_WORDS = frozenset().union(*(c for c in KIND_CLASSES if c & {"king", "writer", "painter", "physicist", "actor",
                                                                   "singer"}))
# a kind that says what a thing is to another, not what it is: "Capital of Sindh, Pakistan" is a capital
# to its page and a city to a sentence that calls it one ("Islamabad is the nation's capital, while Karachi
# is its largest city" names one capital to a reader, two to the pages: blind race 9, R19)
RELATIONAL_KINDS = {"capital": "city"}

_DIRECTION = re.compile(r"(?:north|south|east|west)(?:east|west)?(?:ern)?|central")
# nouns that end as adverbs do ("Large family of flowering plants" is a family, not a "large")
_NOUNS_IN_LY = frozenset(["family", "assembly", "monopoly", "ally", "butterfly", "dragonfly", "fly", "lily", "jelly",
                          "rally", "anomaly", "homily", "supply", "belly", "gully", "folly", "dynasty"])
_NOUNS_IN_EST_TH = frozenset(["forest", "conquest", "contest", "interest", "protest", "festival", "month", "path", "moth", "cloth", "myth", "earth", "mouth", "youth"])


_DEMONYM = r"[A-Z][a-z]+(?:ish|ese|ian|an|ic|i|ss|ch|ek|et|yz)"   # Swedish, Chinese, Russian, Czech, Greek, Soviet


def kind_of(description: str | None) -> str | None:
    """What a page is, in one or two plain words from its short description ("Azerbaijani poet
    (1483–1556)" -> "poet", "Central religious text of Islam" -> "religious text", "River in West
    Africa" -> "river"): names, numbers and demonyms left out; None when nothing plain is left or the
    word is too vague to pick a thing out."""
    text = " ".join((description or "").split())
    # a page without a short description shows its first sentence: "Alabama is a state located in ...";
    # its brackets first ("Ray Charles Robinson (September 23, 1930 – June 10, 2004) was an American singer")
    if re.search(r"\)\s+(?:is|was|are|were)\s", text):
        text = re.sub(r"\s*\([^()]*\)", "", text)
    text = re.sub(r"^[^,]*?\b(?:is|was|are|were)\s+(?:an?|the|one of the)\s+", "", text)
    # "Political and economic union of 27 states": two modifiers joined by "and" before one noun
    text = re.sub(r"\b([A-Za-z]+) (?:and|or) ([a-z]+ (?!(?:of|in|on|from|for|at|by|with|and)\b)[a-z]+)\b", r"\1-\2",
                  text, count=1)
    # "Austrian and Czech writer": two demonyms before one noun (blind race 31, R17 was sent to "the austrian")
    text = re.sub(rf"^({_DEMONYM}) (?:and|or) ({_DEMONYM} [a-z]+)\b", r"\1-\2", text)
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
        if not re.fullmatch(r"[A-Za-z'-]+", w) or (i > 0 and w[:1].isupper()) or (w.lower().endswith("ly") and w.lower() not in _NOUNS_IN_LY):
            words.append(None)   # a number, a name or a demonym
            continue
        words.append(w.lower())
    second = head.split()[1:2]
    if capitalised_first and second and second[0][:1].isupper():
        words[0] = None   # "British Overseas Territory ...": the first word opens a name, it is no kind
    if capitalised_first and words and words[0] and re.search(r"(?:ean|ese|ish)$", words[0]) \
            and words[0] not in ("ocean", "parish", "fish", "dish", "dervish"):
        words[0] = None   # "Mediterranean between Greece and Turkey": a proper adjective, no kind (blind race 9, R13)
    while words and words[-1] is None:
        words.pop()
    while len(words) > 1 and words[-1] and _DIRECTION.fullmatch(words[-1]):
        words.pop()   # "Sea northeast of Australia"
    if (not words or not words[-1] or len(words[-1]) < 3 or words[-1] in VAGUE or re.search(r"[^su]s$", words[-1])
            or re.search(r"(?:est|th|most)$", words[-1]) and words[-1] not in _NOUNS_IN_EST_TH):
        return None   # vague, a plural ("states"), a superlative or an ordinal: not one thing to pick out
    noun = RELATIONAL_KINDS.get(words[-1], words[-1])
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


def plural_in(kind: str, sentence: str) -> bool:
    """Does the sentence itself call several things it names by the kind, its noun in the plural ("his major
    tragedies alongside Macbeth, King Lear, and Hamlet")? Then a reader takes each name there for one,
    whatever its own page says it is (blind race 37, R20: Macbeth's page is a "play", Hamlet's a "tragedy")."""
    return re.search(rf"\b{re.escape(plural(noun_of(kind)))}\b", sentence, re.IGNORECASE) is not None


def could_be(kind: str, description: str | None, infobox_type: str | None = None) -> bool:
    """Could a careful reader take a page so described for a thing of ``kind``? Its description or
    infobox says the kind's noun or a word of its class ("town" for "city")."""
    return bool(page_words(description, infobox_type) & kin(noun_of(kind)))
