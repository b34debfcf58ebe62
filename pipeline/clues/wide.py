"""The wording of wide stops (issue 34, ``templates/clues/wide.j2``) and its reader: what the
riddle-only solver and the scorer read back from a clue is the set's definition, never its members."""
from __future__ import annotations

import re

from pipeline.clues.hops import FROM_PAGE
from pipeline.clues.numbers import ORDINALS
from pipeline.clues.steps import input_ref, input_ref_tail
from pipeline.clues.templates import render
from pipeline.model import WideSpec

WIDE_START = "Collect every "


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"


def wide_clue(spec: WideSpec, role: str, clue: int) -> str:
    """A wide stop's clue over the answer of clue ``clue`` (a ``role``: place or country)."""
    origin = f"the capital of {input_ref('country', clue)}" if role == "country" else input_ref(role, clue)
    return render("wide.j2", domain=spec.domain, aggregate=spec.aggregate, clue=clue, origin=origin,
                  own=role == "country", at_place=role == "place", radius=_number(spec.radius_km or 0),
                  threshold=_number(spec.threshold) if spec.threshold else None, figure=spec.figure,
                  rank_word=f"{ORDINALS[spec.rank - 1]} " if spec.rank and spec.rank > 1 else "", word=spec.word)


_REF = r"(?:the capital of )?the (?P<role>place|country) " + input_ref_tail("clue")
_RANK = r"(?:(?P<rank>" + "|".join(ORDINALS[1:]) + r") )?"
_COUNTRIES = re.compile(
    r"Collect every country of the country statistics(?: whose population is at least (?P<threshold>[\d,.]+) people "
    r"as the country statistics give it and)? whose capital lies within (?P<radius>[\d,.]+) km, as the crow flies, of "
    + _REF + r"(?: \((?:that country itself|a country whose capital is that place itself) not excluded\))?\. "
    r"(?:(?P<sum>What is their total population in millions as the country statistics give it, rounded to a whole "
    r"number at the end\?)|How many countries is that\?|Among them, take the country with the " + _RANK +
    r"(?P<order>largest|smallest) (?P<figure>population|area) as the country statistics give it: what is its "
    r"(?P=figure) in (?:millions of people|thousands of square kilometres), rounded to a whole number\?)")
_AIRPORTS = re.compile(
    r"Collect every airport with an IATA code(?:, with scheduled flights or not,)?(?: whose ground lies at least (?P<threshold>[\d,.]+) m above sea level, "
    r"as the map elevation gives it at the airport's point, and)? that lies within (?P<radius>[\d,.]+) km, as the crow "
    r"flies, of " + _REF + r"\. (?:How many airports is that\?|(?P<highest>Among them, take the airport whose ground "
    r"lies " + _RANK + r"highest, as the map elevation gives it at the airport's point: how many metres above sea "
    r"level is it, rounded to a whole number\?))")
_PAGES = re.compile(r"Collect every page whose opening text contains the answer to clue (?P<clue>\d+) as a whole "
                    r"word or words, case aside\. How many pages is that\?")


_LINKS = re.compile(rf'Collect every page that {FROM_PAGE} (?P<clue>\d+) links to \(its outgoing links, as '
                    r'the page lists them\) whose short description contains the word "(?P<word>[^"]+)" as a whole '
                    r'word, case aside\. How many pages is that\?')


def _rank(m: re.Match) -> int:
    return ORDINALS.index(m.group("rank")) + 1 if m.group("rank") else 1


def _float(text: str | None) -> float | None:
    return float(text.replace(",", "")) if text else None


def parse_wide(text: str) -> tuple[WideSpec, int] | None:
    """The set a wide clue defines (without its members) and the clue whose answer it starts from."""
    if m := _COUNTRIES.fullmatch(text):
        threshold = _float(m.group("threshold"))
        aggregate = "sum" if m.group("sum") else m.group("order") or "count"
        ranked = aggregate in ("largest", "smallest")
        spec = WideSpec("countries", aggregate, radius_km=_float(m.group("radius")),
                        measure="population" if threshold else None, threshold=threshold,
                        figure="population" if m.group("sum") else m.group("figure"), rank=_rank(m) if ranked else None)
        return spec, int(m.group("clue"))
    if m := _AIRPORTS.fullmatch(text):
        threshold = _float(m.group("threshold"))
        highest = bool(m.group("highest"))
        return WideSpec("airports", "largest" if highest else "count", radius_km=_float(m.group("radius")),
                        measure="elevation" if threshold else None, threshold=threshold,
                        figure="elevation" if highest else None, rank=_rank(m) if highest else None), int(m.group("clue"))
    if m := _LINKS.fullmatch(text):
        return WideSpec("links", "count", word=m.group("word")), int(m.group("clue"))
    if m := _PAGES.fullmatch(text):
        return WideSpec("pages", "count"), int(m.group("clue"))
    return None
