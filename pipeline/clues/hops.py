"""The wording of hops (issue 21): how a clue names the next page through the page before it
(``templates/clues/hop.j2``, rendered by ``hop_wording``), and the patterns that read it back
(``HOP_NAMED``, ``HOP_DESCRIBED``, ``HOP_INFOBOX``, ``HOP_CHOICE``; ``parse_hop``). The kind words a
hop names its page by are ``pipeline.clues.kinds``'."""
from __future__ import annotations

import functools
import re

from pipeline.clues.kinds import plural
from pipeline.clues.numbers import count_value, count_word, ordinal, ordinal_value
from pipeline.clues.sentences import BLOCK, SENTENCE, read_place
from pipeline.clues.templates import render

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


@functools.lru_cache(maxsize=1 << 16)   # a pure function of its arguments; plan words each hop it weighs again and again
def hop_wording(kind: str, from_clue: int, noun: str | None, *, label: str | None = None, sentence: str | None = None,
                where: str | None = None, count: int | None = None, extreme: str | None = None,
                measure: str | None = None, position: int | None = None, went: bool = False,
                started: bool = False) -> str:
    """A hop's sentence (``templates/clues/hop.j2``): ``named`` (the ``noun`` that ``sentence`` of its
    ``where`` names; with ``position``, the position-th of the ``count`` such things), ``described``
    (the ``noun`` its short description names), ``infobox`` (the ``noun`` its infobox gives for
    ``label``), ``choice`` (of the ``count`` countries the sentence names, the one with the ``extreme``
    ``measure``). ``went``: clue ``from_clue`` went to the page it read its answer on (a hop or a choice), which
    the wording then says (``WENT``); ``started``: it read its answer on the page the leg starts on (``STARTED``)."""
    note = WENT if went else STARTED if started else ""
    if kind in ("infobox", "described"):
        return render("hop.j2", kind=kind, from_clue=from_clue, noun=noun, label=label, note=note)
    return render("hop.j2", kind=kind, from_clue=from_clue, noun=noun, sentence=sentence, where=where,
                  note=note, count=count_word(count or 0), extreme=extreme, measure=measure, position=position,
                  nouns=plural(noun or ""), nth=ordinal(position or 1))


# how a hop names the page it leaves (templates/clues/hop.j2 and wide.j2 write it)
FROM_PAGE = "the page where you found the answer to clue"
# said of a clue that went to a page of its own (a hop or a choice): the page it read its answer on is the page it
# went to, not the one it started from, where it read the sentence or the list (five racers read it so: blind races
# 34, 37, 38, 43 and 45)
WENT = " (the page that clue went to)"
# said of the clue read on the page the leg starts on: "the page where you found the answer to clue 1" was read as
# the page of clue 1's answer (a country's) by a racer who then went on from there (blind race 49, R11; R07 and
# R02 weighed the same reading)
STARTED = " (the page you started on)"
_PAGE_NOTE = "(?:" + re.escape(WENT) + "|" + re.escape(STARTED) + ")"   # either, after the clue's number
# a hop clue's opening words, which say nothing of the page it goes to (the skip probe leaves them out)
REFERENCE_LEAD = re.compile(rf"\b(?:From|On) {FROM_PAGE} \d+(?:{_PAGE_NOTE})?,\s*")
HOP_NAMED = re.compile(rf"^From {FROM_PAGE} (\d+)(?:{_PAGE_NOTE})?, go to the page of the (?:(\w+) of the (\w+) )?"
                       rf"([a-z' -]+?) that {SENTENCE} of its {BLOCK} names\.$", re.DOTALL)
HOP_DESCRIBED = re.compile(rf"^From {FROM_PAGE} (\d+)(?:{_PAGE_NOTE})?, go to the page of the ([a-z' -]+?) that its short "
                           r"description names\.$", re.DOTALL)
HOP_INFOBOX = re.compile(rf'^From {FROM_PAGE} (\d+)(?:{_PAGE_NOTE})?, go to the page of the ([a-z\' -]+?) that its infobox gives '
                         r'for "(.*?)"\.$', re.DOTALL)
HOP_CHOICE = re.compile(rf"^On {FROM_PAGE} (\d+)(?:{_PAGE_NOTE})?, {SENTENCE} of its {BLOCK} names (\w+) countries: go to the "
                        rf"page of the one with the ({'|'.join(EXTREMES)}) ({'|'.join(sorted(MEASURES, key=len, reverse=True))}), as the country "
                        rf"statistics give it\.$", re.DOTALL)
HOPS = (HOP_NAMED, HOP_DESCRIBED, HOP_INFOBOX, HOP_CHOICE)


def match_hop(text: str) -> re.Match | None:
    """The first hop pattern that reads ``text`` (a hop's sentence), matched."""
    return next((m for pattern in HOPS if (m := pattern.match(text))), None)


def parse_hop(text: str) -> dict | None:
    """A hop's sentence read back into ``hop_wording``'s fields (``sentence``/``where`` as
    ``sentences.read_place`` gives them; a named hop with a position gives ``nouns``, its kind word in
    the plural, for ``noun``), or None."""
    if m := HOP_NAMED.match(text):
        from_clue, nth, count, noun, sentence_ordinal, opening, lead, title, section_ordinal = m.groups()
        # "the second of the three cities": the kind word is written in the plural (``kinds.singulars`` undoes it)
        return {"kind": "named", "from_clue": int(from_clue), "noun" if not nth else "nouns": noun,
                "position": ordinal_value(nth) if nth else None, "count": count_value(count) if count else None,
                **read_place(lead, title, section_ordinal, sentence_ordinal, opening)}
    if m := HOP_DESCRIBED.match(text):
        return {"kind": "described", "from_clue": int(m.group(1)), "noun": m.group(2)}
    if m := HOP_INFOBOX.match(text):
        return {"kind": "infobox", "from_clue": int(m.group(1)), "noun": m.group(2), "label": m.group(3)}
    if m := HOP_CHOICE.match(text):
        from_clue, sentence_ordinal, opening, lead, title, section_ordinal, count, extreme, measure = m.groups()
        return {"kind": "choice", "from_clue": int(from_clue), "count": count_value(count), "extreme": extreme,
                "measure": measure, **read_place(lead, title, section_ordinal, sentence_ordinal, opening)}
    return None


def anchor_targets(links, titles=()) -> dict[str, str]:
    """What a page's own links say its names mean: each text a link shows ("U.S.", "Paris") -> the page
    it goes to ("United States", "Paris, Texas"), as a reader who clicks it lands (issue 33). ``links``
    are the page's links as the page record keeps them (objects or dicts with ``title`` and ``anchors``;
    a bare title shows no anchor) or ``fetch_webpage``'s ``link_anchors`` (title -> texts). A text that
    is its page's own title says nothing more than the title does and is left out (``fetch_webpage``
    lists only the others), as is a text two links show for two pages, and a lowercase or very short one
    (a common noun, "city"). A text that is the title of another page the page links (``titles``, or
    the titles of ``links``) may mean either: left out too ("Paris" shown for Paris, Texas on a page that
    also links Paris)."""
    out: dict[str, str] = {}
    clash: set[str] = set()
    if isinstance(links, dict):
        links = [{"title": title, "anchors": texts} for title, texts in links.items()]
    links = list(links or ())
    linked = set(titles) | {link if isinstance(link, str) else link.get("title") if isinstance(link, dict)
                            else link.title for link in links}
    for link in links:
        if isinstance(link, str):
            continue
        title = link.get("title") if isinstance(link, dict) else link.title
        anchors = link.get("anchors") if isinstance(link, dict) else link.anchors
        for text in anchors or ():
            if len(text) < 3 or not text[:1].isupper() or text == title:
                continue
            if out.get(text, title) != title:
                clash.add(text)
            out[text] = title
    return {text: title for text, title in out.items() if text not in clash and text not in linked}


def linked_reading(name: str, anchors: dict[str, str]) -> str:
    """The page a name of a sentence leads to: where the page links that name (with or without its
    final full stop, "U.S." read as "U.S"), its link's page; else the name itself, looked up as a title."""
    return anchors.get(name) or anchors.get(name + ".") or name


def country_name(name: str) -> str:
    """A country as a sentence names it, as its page is titled: "the Netherlands" -> "Netherlands"
    (``execute.read_countries`` keeps the article a list gives it: "Germany and the Netherlands")."""
    return re.sub(r"^the\s+", "", name, flags=re.IGNORECASE)
