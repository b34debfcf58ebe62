"""The wording of page clues (``templates/clues/page.j2`` and ``ask.j2``) and its patterns: how a
clue reaches its page (the seed, a link followed from an earlier clue's page, a web search, or a hop:
``pipeline.clues.hops``), how it describes the page without naming it (``by_description``, ...), and
the question it asks there (the subject, an infobox field, a number or a country a sentence gives)."""
from __future__ import annotations

import re

from pipeline.clues.hops import parse_hop
from pipeline.clues.numbers import NumberKind, count_value, count_word, ordinal, ordinal_value
from pipeline.clues.sentences import BLOCK, SENTENCE, read_place
from pipeline.clues.templates import render
from pipeline.model import LINK_FOLLOW, SEARCH_QUERY

SEED, LINK, SEARCH, HOP = "seed", LINK_FOLLOW, SEARCH_QUERY, "hop"   # how a page clue reaches its page


# ---- the clue: bridge, then question (templates/clues/page.j2) -----------------------------------------
def page_clue_text(*, first: bool, bridge: str, ask: str, variant: int, from_clue: int = 1,
                   circ: str = "") -> str:
    """A page stop's clue: the seed (``first``), a link followed from clue ``from_clue``'s page, or a
    web search, to the page ``circ`` describes (``variant`` picks one of three wordings); then ``ask``."""
    return render("page.j2", first=first, bridge=bridge, from_clue=from_clue, circ=circ, ask=ask, variant=variant)


def hop_clue_text(hop: str, ask: str, variant: int) -> str:
    """A hop's clue: the hop's sentence (``hops.hop_wording``), then ``ask``."""
    return render("page.j2", first=False, bridge=HOP, hop=hop, ask=ask, variant=variant)


SEED_BRIDGE = re.compile(r"^(?:Start on the page you are given|Begin at the seed page|Your journey starts on the page "
                         r"you were handed)\.$")
LINK_BRIDGE = re.compile(r"^(?:From the page of clue (\d+), follow a link to|On the page of clue (\d+), take the link "
                         r"leading to|Leave the page of clue (\d+) through its link to) (.+)\.$", re.DOTALL)
SEARCH_BRIDGE = re.compile(r"^(?:Search the web for|Look up, with a search,|Use a web search to reach) (.+)\.$", re.DOTALL)
# where the question of a page clue begins: the clue is split there into its bridge and its ask
ASK = re.compile(r"\s(?=(?:What number|What year|What date|Which place|Which country) does its infobox give for "
                 r"|In its (?:opening text|section \"|\w+ section,)|Which place is this page about\?)")


def split_page_clue(text: str) -> tuple[str, str] | None:
    """A page clue cut into its bridge and its question, or None when no question is found."""
    parts = ASK.split(text, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else None


def parse_bridge(bridge: str) -> dict | None:
    """A page clue's bridge read back: ``{"bridge": SEED}``, ``{"bridge": LINK, "from_clue", "circ"}``,
    ``{"bridge": SEARCH, "circ"}`` or ``{"bridge": HOP, **hops.parse_hop}``; None if none reads it."""
    if SEED_BRIDGE.match(bridge):
        return {"bridge": SEED}
    if m := LINK_BRIDGE.match(bridge):
        return {"bridge": LINK, "from_clue": int(next(g for g in m.groups()[:3] if g)), "circ": m.group(4)}
    if m := SEARCH_BRIDGE.match(bridge):
        return {"bridge": SEARCH, "circ": m.group(1)}
    if hop := parse_hop(bridge):
        return {"bridge": HOP, **hop}
    return None


# ---- the page described, never named --------------------------------------------------------------------
def by_description(description: str) -> str:
    return f'the page whose short description reads "{description}"'


def by_description_start(start: str) -> str:
    return f'the page whose short description begins with the words "{start}"'


def by_infobox(kind: str) -> str:
    return f"a page about a subject whose infobox is of the '{kind}' kind"


BY_DESCRIPTION = re.compile(r'^the page whose short description reads "(.*)"$', re.DOTALL)
BY_DESCRIPTION_START = re.compile(r'^the page whose short description begins with the words "(.*)"$', re.DOTALL)
BY_INFOBOX = re.compile(r"^a page about a subject whose infobox is of the '(.*)' kind$")
CIRCUMLOCUTIONS = (("description", BY_DESCRIPTION), ("description_start", BY_DESCRIPTION_START),
                   ("infobox", BY_INFOBOX))


def parse_circumlocution(circ: str) -> tuple[str, str] | None:
    """("description" | "description_start" | "infobox", the words quoted) of a page's description."""
    return next(((how, m.group(1)) for how, pattern in CIRCUMLOCUTIONS if (m := pattern.match(circ))), None)


def search_words(circumlocution: str) -> str:
    """What an agent would type into a search box for the clue's description."""
    read = parse_circumlocution(circumlocution)
    return read[1] if read else circumlocution


# ---- the question (templates/clues/ask.j2) ------------------------------------------------------------------
def subject_ask() -> str:
    return render("ask.j2", source="subject")


def infobox_ask(value_type: str, label: str, role: str | None, year: bool = False, rounded: bool = False) -> str:
    """An infobox field by its label: a year, a number (``rounded``), a date, a country or a place."""
    return render("ask.j2", source="infobox", value_type=value_type, label=label, role=role, rounded=rounded, year=year)


def names_ask(where: str, sentence: str, count: int, position: int) -> str:
    """The country a sentence names (``sentence`` of the block ``where``): the ``position``-th (1-based)
    of the ``count`` it names."""
    kind = "a country" if count == 1 else f"{count_word(count)} countries"
    question = "which country" if count == 1 else f"which is the {ordinal(position)} of the {count_word(count)}"
    return render("ask.j2", source="names", where=where, sentence=sentence, kind=kind, question=question)


def position_ask(where: str, sentence: str, kind: NumberKind | None, count: int, position: int) -> str:
    """A number a sentence gives, said to be of ``kind`` (None: "a number"): the ``position``-th
    (1-based) of the ``count`` such numbers of the sentence."""
    if count == 1:
        phrase, question = (kind.singular, kind.question) if kind else ("a number", "what number")
    else:
        phrase = f"{count_word(count)} {kind.plural if kind else 'numbers'}"
        question = f"what is the {ordinal(position)} of the {count_word(count)}"
    return render("ask.j2", source="position", where=where, sentence=sentence, kind=phrase, question=question)


SUBJECT_ASK = re.compile(r"^Which place is this page about\? ")
INFOBOX_ASK = re.compile(r'^(What number|What year|What date|Which place|Which country) does its infobox give for "(.*)"'
                         r'( \(rounded to a whole number\))?\?$', re.DOTALL)
# a number named by where its sentence stands and what it is
POSITION_ASK = re.compile(rf"^In its {BLOCK}, {SENTENCE} gives (.+?): "
                          r"(?:which \w+|what \w+|how many(?: \w+)?|what is the (\w+) of the (\w+))\?$",
                          re.DOTALL)
# a country named by its sentence
NAMES_ASK = re.compile(rf"^In its {BLOCK}, {SENTENCE} names (a country|\w+ countries): "
                       r"(?:which country|which is the (\w+) of the (\w+))\?$", re.DOTALL)
# the older wording, a quoted sentence with the number masked (legs exported before issue 14); nothing renders it
SENTENCE_ASK = re.compile(r'^In its (?:opening text|section "(.*?)"), a sentence reads: "(.*)" '
                          r"What number stands where \[\?\] is\?$", re.DOTALL)
MASKED_NAME, MASKED_NUMBER = "[...]", "[?]"   # in a quoted sentence of SENTENCE_ASK


def quoted_sentence_pattern(sentence: str, number: str) -> str:
    """A sentence quoted by SENTENCE_ASK as a pattern: masked names stand for any words, the masked
    number is ``number`` (a pattern, captured)."""
    def wild(part: str) -> str:
        return r".+?".join(re.escape(re.sub(r"\s+", " ", p)) for p in part.split(MASKED_NAME))
    return f"({number})".join(wild(part) for part in sentence.split(MASKED_NUMBER))


def stated_count(kind: str) -> int | None:
    """How many things a question's kind phrase says its sentence gives: "a year", "a country": 1;
    "two years", "three countries": 2, 3."""
    return 1 if re.match(r"^an? ", kind) else count_value(kind.split()[0])


def counts_every_number(kind: str) -> bool:
    """Does the kind phrase count every number of the sentence ("a number", "two numbers")?"""
    return kind == "a number" or re.fullmatch(r"\w+ numbers", kind) is not None


_INFOBOX_ASKED = {"What number": ("number", False), "What year": ("number", True), "What date": ("date", False),
                  "Which place": ("place", False), "Which country": ("country", False)}


def parse_ask(ask: str) -> dict | None:
    """A page clue's question read back into the fields it was rendered from, or None."""
    if m := INFOBOX_ASK.match(ask):
        value_type, year = _INFOBOX_ASKED[m.group(1)]
        return {"source": "infobox", "value_type": value_type, "year": year, "label": m.group(2),
                "rounded": m.group(3) is not None}
    if SUBJECT_ASK.match(ask + " "):
        return {"source": "subject"}
    if m := POSITION_ASK.match(ask):
        lead, title, section_ordinal, sentence_ordinal, opening, kind, nth, _ = m.groups()
        return {"source": "position", "kind": kind, "count": stated_count(kind), "position": ordinal_value(nth) if nth else 1,
                **read_place(lead, title, section_ordinal, sentence_ordinal, opening)}
    if m := NAMES_ASK.match(ask):
        lead, title, section_ordinal, sentence_ordinal, opening, kind, nth, _ = m.groups()
        return {"source": "names", "count": stated_count(kind), "position": ordinal_value(nth) if nth else 1,
                **read_place(lead, title, section_ordinal, sentence_ordinal, opening)}
    if m := SENTENCE_ASK.match(ask):
        return {"source": "sentence", "section": m.group(1), "sentence": m.group(2)}
    return None


def parse_page_clue(text: str) -> dict | None:
    """A page clue read back: its bridge's fields (``parse_bridge``) and its question's (``ask``:
    ``parse_ask``), or None when either is not read."""
    parts = split_page_clue(text)
    if parts is None or (bridge := parse_bridge(parts[0])) is None:
        return None
    return {**bridge, "ask": parse_ask(parts[1])}
