"""A deterministic solver that sees only the riddle: the check that a leg can be solved at all.

It gets what every agent gets (the riddle, the seed URL, the tools) and acts only through tool
calls: it follows links by the clue's description of the target page, runs searches with the
clue's words, reads the infobox field asked for or the number a sentence gives (named by its
section, its position there and what the number is), rebuilds each roadblock's
tool chain from the public template wording and earlier answers, and applies detours, merges and
the finish line. It never sees stops, values, the golden trace or metadata.

Where a clue admits more than one reading (two linked pages fit the description and carry the
field, a search shows two fitting pages, a sentence pattern matches two numbers, a template picks
the "first" item of a list whose order the clue does not state) the leg is *ambiguous*: the
solution names the clue and its candidates instead of guessing.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipeline import expressions
from pipeline.catalog import roadblock_templates
from pipeline.clues import (
    DETOUR_START,
    FINISH_START,
    HOP_CHOICE,
    HOP_DESCRIBED,
    HOP_INFOBOX,
    HOP_NAMED,
    INFOBOX_ASK,
    LINK_BRIDGE,
    MEASURE_LOOKUPS,
    NAMES_ASK,
    NUMBER_RE,
    ORDER_WORDS,
    POSITION_ASK,
    ROADBLOCK_START,
    SEARCH_BRIDGE,
    SEED_BRIDGE,
    SENTENCE_ASK,
    SUBJECT_ASK,
    NumberKind,
    anchor_targets,
    clue_lines,
    could_be,
    count_value,
    count_word,
    country_name,
    counts_every_number,
    date_ranges,
    finish_groups,
    linked_reading,
    match_hop,
    measure_value,
    number_kinds,
    ordinal_value,
    parse_circumlocution,
    parse_detour,
    parse_merge,
    plural_in,
    quoted_sentence_pattern,
    reduction_named,
    roadblock_inputs,
    roadblock_pattern,
    roadblock_reads,
    search_words,
    singulars,
    split_page_clue,
    stated_count,
)
from pipeline.clues.wide import WIDE_START, parse_wide
from pipeline.execute import (
    NAME_RUN,
    NOT_NAMES,
    StopFailed,
    clean_text_value,
    collect_wide,
    countries_named,
    finalize_number,
    get_path,
    infobox_year,
    nearest_is_one,
    parse_number,
    resolve_args,
    wide_value,
)
from pipeline.model import TraceEntry
from pipeline.snapshot.page import infobox_kind, subject_name, title_to_url
from pipeline.stages.facts import SENTENCE_SPLIT
from pipeline.stages.template_args import expand_params, instantiate_args
from pipeline.tools.errors import SimulatedRefused, ToolArgumentError
from pipeline.tools.registry import Toolbox
from pipeline.transforms import DetourError, apply_detour

SOLVED, AMBIGUOUS, FAILED = "solved", "ambiguous", "failed"
SEARCH_RESULTS = 5                  # what a search shows: the clue's target must be among them


@dataclass(frozen=True)
class RiddleView:
    """All a solver may see of a leg."""
    riddle: str
    seed_url: str


@dataclass
class Solution:
    status: str                                   # solved | ambiguous | failed
    answer: int | None = None
    reason: str = ""
    values: dict[int, Any] = field(default_factory=dict)       # clue number -> value found
    pages: dict[int, str] = field(default_factory=dict)        # clue number -> URL of the page used
    candidates: dict[int, list[str]] = field(default_factory=dict)  # ambiguous clue -> its readings
    calls: list[TraceEntry] = field(default_factory=list)

    @property
    def solved(self) -> bool:
        return self.status == SOLVED


class Unsolvable(Exception):
    """This clue has no reading (the message says why)."""


class Ambiguous(Exception):
    """This clue has more than one reading."""

    def __init__(self, message: str, candidates: list[str]):
        super().__init__(message)
        self.candidates = candidates


# ---- reading clue text ------------------------------------------------------------------------
def clues_of(riddle: str) -> list[tuple[int, str]]:
    """The riddle's numbered clues (``clues.clue_lines``); ``Unsolvable`` when they are not numbered 1..N."""
    try:
        return clue_lines(riddle)
    except ValueError as exc:
        raise Unsolvable(str(exc)) from None


# ---- the solver -------------------------------------------------------------------------------
class Solver:
    """``on_call(tool, args, ok, response_json)`` sees every call (a race's tool log)."""

    def __init__(self, toolbox: Toolbox, on_call: Callable[[str, dict, bool, str], None] | None = None):
        self.toolbox = toolbox
        self.on_call = on_call
        self.calls: list[TraceEntry] = []
        self._templates = roadblock_templates()
        self._countries: dict[str, bool] = {}

    def _record(self, clue: int, tool: str, args: dict, result) -> None:
        self.calls.append(TraceEntry(stop=clue - 1, step=len(self.calls), tool=tool, args=args,
                                     response=result.response_json, provenance=result.provenance,
                                     served_from="solver"))
        if self.on_call:
            self.on_call(tool, args, result.ok, result.response_json)

    # tools ------------------------------------------------------------------------------------
    def call(self, clue: int, tool: str, args: dict) -> dict:
        try:
            result = self.toolbox.call(tool, args)
        except (ToolArgumentError, SimulatedRefused) as exc:
            raise Unsolvable(f"clue {clue}: {tool} refused: {exc}") from exc
        self._record(clue, tool, args, result)
        if not result.ok:
            raise Unsolvable(f"clue {clue}: {tool} failed: {result.error}")
        return result.data

    def country_teller(self, clue: int) -> Callable[[str], bool]:
        """Is a name a country? Asked of ``countries_population`` (once per name and solver)."""
        def is_country(name: str) -> bool:
            if name not in self._countries:
                try:
                    self.call(clue, "countries_population", {"country": name})
                    self._countries[name] = True
                except Unsolvable:
                    self._countries[name] = False
            return self._countries[name]
        return is_country

    def fetch(self, clue: int, url: str) -> dict | None:
        result = self.toolbox.call("fetch_webpage", {"url": url})
        self._record(clue, "fetch_webpage", {"url": url}, result)
        return result.data if result.ok else None

    # the whole riddle --------------------------------------------------------------------------
    def solve(self, view: RiddleView) -> Solution:
        sol = Solution(status=FAILED)
        try:
            clues = clues_of(view.riddle)
            for n, text in clues:
                sol.values[n] = self.solve_clue(n, text, view, sol)
            last = clues[-1][0] if clues else None
            answer = sol.values.get(last)
            if not clues[-1][1].startswith(FINISH_START) or not (isinstance(answer, int) and 0 <= answer <= 9):
                raise Unsolvable(f"the riddle does not end in a one-digit finish line (got {answer!r})")
            sol.status, sol.answer = SOLVED, answer
        except Ambiguous as exc:
            sol.status, sol.reason = AMBIGUOUS, str(exc)
            sol.candidates[int(re.match(r"clue (\d+)", str(exc)).group(1))] = exc.candidates
        except Unsolvable as exc:
            sol.status, sol.reason = FAILED, str(exc)
        sol.calls = self.calls
        return sol

    def solve_clue(self, n: int, text: str, view: RiddleView, sol: Solution) -> Any:
        if text.startswith(WIDE_START):
            return self.wide(n, text, sol.values, sol.pages)
        if text.startswith(ROADBLOCK_START):
            return self.roadblock(n, text, sol.values)
        if text.startswith(DETOUR_START):
            return self.detour(n, text, sol.values)
        if merge := parse_merge(text):
            a, b = (sol.values[x] for x in merge["refs"])
            return a + b if merge["op"] == "sum" else abs(a - b)
        if text.startswith(FINISH_START):
            return self.finish(n, text, sol.values)
        return self.page(n, text, view, sol)

    # page stops ------------------------------------------------------------------------------
    def page(self, n: int, text: str, view: RiddleView, sol: Solution) -> Any:
        parts = split_page_clue(text)
        if parts is None:
            raise Unsolvable(f"clue {n}: no question about a page in {text[:80]!r}")
        bridge, ask = parts
        url, value = self.read_page_clue(n, bridge, ask, view, sol)
        sol.pages[n] = url
        return value

    def read_page_clue(self, n: int, bridge: str, ask: str, view: RiddleView, sol: Solution) -> tuple[str, Any]:
        """The one page the bridge leads to that answers the question, and its answer."""
        readings = readings_of(n, self.reached(n, bridge, view, sol), ask, self.country_teller(n))
        if not readings:
            raise Unsolvable(f"clue {n}: no page reached this way answers {ask[:80]!r}")
        if len(readings) > 1:
            raise Ambiguous(f"clue {n}: {len(readings)} pages fit the description and answer the question",
                            sorted(readings))
        [(url, value)] = readings.items()
        return url, value

    def reached(self, n: int, bridge: str, view: RiddleView, sol: Solution) -> list[dict]:
        """The pages a clue's first sentence may lead to: the seed, the linked pages that fit the
        description, or the search results that fit it."""
        if SEED_BRIDGE.match(bridge):
            page = self.fetch(n, view.seed_url)
            if page is None:
                raise Unsolvable(f"clue {n}: the seed page cannot be fetched")
            return [page]
        if m := LINK_BRIDGE.match(bridge):
            origin = int(next(g for g in m.groups()[:3] if g))
            if origin not in sol.pages:
                raise Unsolvable(f"clue {n}: clue {origin} named no page")
            return [p for p in self.linked_pages(n, sol.pages[origin]) if fits(p, m.group(4))]
        if m := SEARCH_BRIDGE.match(bridge):
            return self.searched_pages(n, m.group(1))
        if m := match_hop(bridge):
            origin = int(m.group(1))
            if origin not in sol.pages:
                raise Unsolvable(f"clue {n}: clue {origin} named no page")
            return self.hop_pages(n, bridge, sol.pages[origin])
        raise Unsolvable(f"clue {n}: cannot tell how to reach the page from {bridge[:80]!r}")

    # hops (issue 21) ---------------------------------------------------------------------------
    def hop_pages(self, n: int, bridge: str, origin_url: str) -> list[dict]:
        """The one page a hop leads to from the page at ``origin_url``, read as a careful reader
        would: every name the stated place holds is looked up (each capitalised run and every run of
        its words, fetched as a page), and every page that could be a thing of the stated kind
        (``clues.could_be``) is a reading; ``Ambiguous`` unless exactly one is. A choice looks up
        the figure of every country the sentence names and takes the extreme, ``Ambiguous`` on a tie."""
        origin = self.fetch(n, origin_url)
        if origin is None:
            raise Unsolvable(f"clue {n}: the page it hops from cannot be fetched")
        if m := HOP_INFOBOX.match(bridge):
            kind, label = m.group(2), m.group(3)
            values = [clean_text_value(i.get("text") or "") for i in origin.get("infobox", [])
                      if (i.get("label") or i.get("name")) == label]
            if len(values) != 1:
                raise Unsolvable(f"clue {n}: the infobox has {len(values)} fields {label!r}")
            page = self.fetch(n, title_to_url(values[0]))
            if page is None or not could_be(kind, page.get("description"), page.get("infobox_type")):
                raise Unsolvable(f"clue {n}: the infobox's {label!r} is no {kind} with a page")
            return [page]
        if (m := HOP_NAMED.match(bridge)) or (d := HOP_DESCRIBED.match(bridge)):
            if m:
                _, nth, count, kind, sentence_ordinal, opening, lead, title, section_ordinal = m.groups()
                sentences = chosen_sentences(origin, lead, title, section_ordinal, sentence_ordinal, opening)
            else:   # the short description, read as one sentence
                nth, count, kind, sentences = None, None, d.group(2), [origin.get("description") or ""]
            kinds = singulars(kind) if nth else [kind]
            found: dict[str, dict] = {}   # url -> page, in the order the sentence first names them
            anchors = anchor_targets(origin.get("link_anchors") or origin.get("links"), origin.get("links") or ())   # a name the page links leads where its link goes
            for sentence in sentences:
                grouped = any(plural_in(k, sentence) for k in kinds)   # "tragedies alongside Macbeth, ...": each one
                for name in names_in(sentence):
                    page = (self.fetch(n, title_to_url(linked_reading(name, anchors)))
                            if name != origin.get("title") else None)
                    if page and page["url"] != origin["url"] and (grouped or any(
                            could_be(k, page.get("description"), page.get("infobox_type")) for k in kinds)):
                        found.setdefault(page["url"], page)
            pages = list(found.values())
            if nth:   # "the second of the three cities": that many, in the sentence's order
                if len(pages) != count_value(count) or not (k := ordinal_value(nth)) or k > len(pages):
                    raise Ambiguous(f"clue {n}: the sentence names {len(pages)} things that could be a {kind}, "
                                    f"not {count}", sorted(found))
                return [pages[k - 1]]
            if len(pages) > 1:
                raise Ambiguous(f"clue {n}: {len(pages)} things the sentence names could be the {kind}", sorted(found))
            if not pages:
                raise Unsolvable(f"clue {n}: the sentence names no {kind} with a page")
            return pages
        m = HOP_CHOICE.match(bridge)
        _, sentence_ordinal, opening, lead, title, section_ordinal, count, extreme, measure = m.groups()
        picks = set()
        for sentence in chosen_sentences(origin, lead, title, section_ordinal, sentence_ordinal, opening):
            names = countries_named(sentence, self.country_teller(n))
            if names is None:
                raise Ambiguous(f"clue {n}: a name in the sentence may or may not be a country: {sentence[:80]!r}",
                                [sentence])
            if len(names) != count_value(count):
                raise Unsolvable(f"clue {n}: the sentence names {len(names)} countries, not {count}")
            figures = {name: measure_value(measure, [get_path(self.call(n, tool, {"country": name}), figure)
                                                     for tool, figure in MEASURE_LOOKUPS[measure]])
                       for name in names}
            best = (max if extreme == "largest" else min)(figures.values())
            tied = [name for name, v in figures.items() if v == best]
            if len(tied) > 1:
                raise Ambiguous(f"clue {n}: {len(tied)} countries share the {extreme} {measure}", tied)
            picks.add(tied[0])
        if len(picks) != 1:
            raise Ambiguous(f"clue {n}: the sentences so named give different countries", sorted(picks))
        # the page its name leads to: where the page links the name ("Georgia"), its link's page
        anchors = anchor_targets(origin.get("link_anchors") or origin.get("links"), origin.get("links") or ())
        page = self.fetch(n, title_to_url(linked_reading(country_name(picks.pop()), anchors)))
        if page is None:
            raise Unsolvable(f"clue {n}: the chosen country has no page")
        return [page]

    def linked_pages(self, n: int, url: str) -> list[dict]:
        """Every page the page at ``url`` links to (that can be fetched)."""
        here = self.fetch(n, url)
        linked = [self.fetch(n, title_to_url(t)) for t in dict.fromkeys((here or {}).get("links", []))]
        return [p for p in linked if p]

    def searched_pages(self, n: int, circumlocution: str) -> list[dict]:
        """The top search results for the description's words that fit the description."""
        query = search_words(circumlocution)
        hits = self.call(n, "web_search", {"query": query, "num_results": SEARCH_RESULTS})["results"]
        found = [self.fetch(n, h["url"]) for h in hits]
        return [p for p in found if p and fits(p, circumlocution)]

    # roadblocks ------------------------------------------------------------------------------
    def roadblock(self, n: int, text: str, values: dict[int, Any]) -> Any:
        readings = []
        for name, template, inputs, params in self.template_readings(text):
            if any(i not in values for i in inputs):
                continue
            readings.append((name, template, inputs, params))
        if not readings:
            raise Unsolvable(f"clue {n}: no roadblock template reads {text[:100]!r}")
        if len(readings) > 1:
            raise Ambiguous(f"clue {n}: {len(readings)} templates read the clue", sorted(r[0] for r in readings))
        name, template, inputs, params = readings[0]
        ordered = any(w in template["value"] for w in ORDER_WORDS)
        refs = {i: values[i] for i in inputs}
        stop_of = {i: i - 1 for i in inputs}
        outputs: list[Any] = []
        for step in template["steps"]:
            spec = instantiate_args(step["args"], [stop_of[i] for i in inputs], params)
            try:
                args = resolve_args(spec, {stop_of[i]: v for i, v in refs.items()}, outputs)
                data = self.call(n, step["tool"], args)
                nearest_is_one(data, step["extract"])   # two at one distance: "the nearest" has two readings
                if not ordered and picks_from_a_longer_list(data, step["extract"]):
                    raise Ambiguous(f"clue {n}: {name} takes one item of a list whose order the clue does not state",
                                    [name])
                outputs.append(get_path(data, step["extract"]))
            except StopFailed as exc:
                raise Unsolvable(f"clue {n}: {exc}") from exc
        try:
            return finalize_number(outputs[-1], template.get("scale", 1), template.get("round", 1))
        except StopFailed as exc:
            raise Unsolvable(f"clue {n}: {exc}") from exc

    def template_readings(self, text: str):
        """Every (template, input clues, parameters) whose wording gives exactly this clue."""
        for name, template in sorted(self._templates.items()):
            ranges = date_ranges(template)
            m = roadblock_pattern(template).fullmatch(text)
            if not m:
                continue
            inputs = roadblock_inputs(m, template)
            # a list parameter: each of its values; a date range: the date the clue states, if inside it
            choices = sorted((k, [m.group(k)] if k in ranges and within(m.group(k), v) else [] if k in ranges else v)
                             for k, v in template.get("params", {}).items())
            for combo in itertools.product(*(c for _, c in choices)):
                params = expand_params(dict(zip((k for k, _ in choices), combo)))
                if roadblock_reads(template["value"], params, inputs, text):
                    yield name, template, inputs, params

    def wide(self, n: int, text: str, values: dict[int, Any], pages: dict[int, str] | None = None) -> Any:
        """A wide clue (issue 34): the set it defines, collected through the tools to its end."""
        read = parse_wide(text)
        pages = pages or {}
        if read is None:
            raise Unsolvable(f"clue {n}: no set reads {text[:100]!r}")
        spec, ref = read
        if ref not in values:
            raise Unsolvable(f"clue {n}: clue {ref} has no answer yet")
        if spec.domain == "links" and ref not in pages:
            raise Unsolvable(f"clue {n}: clue {ref} read no page")
        given = pages[ref] if spec.domain == "links" else values[ref]   # a page's links: the page that clue read
        try:
            return wide_value(spec, collect_wide(spec, given, lambda tool, args: self.call(n, tool, args)))
        except (StopFailed, KeyError, TypeError) as exc:
            raise Unsolvable(f"clue {n}: {exc}") from exc

    # detours, finish line ----------------------------------------------------------------------
    def detour(self, n: int, text: str, values: dict[int, Any]) -> Any:
        if read := parse_detour(text):
            name, ref = read
            try:
                return apply_detour(name, values[ref])
            except (DetourError, KeyError) as exc:
                raise Unsolvable(f"clue {n}: {name}: {exc}") from exc
        raise Unsolvable(f"clue {n}: no transform reads {text[:80]!r}")

    def finish(self, n: int, text: str, values: dict[int, Any]) -> int:
        groups = finish_groups(text)
        kind = reduction_named(text)
        if kind is None:
            raise Unsolvable(f"clue {n}: no reduction reads {text[:80]!r}")
        refs = [r for g in groups for r in g]
        try:
            expr = expressions.reduction_expression(kind, refs)
            return expressions.evaluate(expr, {r: values[r] for r in refs})
        except (KeyError, expressions.ExpressionError) as exc:
            raise Unsolvable(f"clue {n}: {exc}") from exc


# ---- matching pages and reading answers ----------------------------------------------------------
def within(day: str, span: str) -> bool:
    """Is the ISO date inside a template's ``FIRST..LAST`` range?"""
    first, _, last = span.partition("..")
    return first <= day <= last


def fits(page: dict, circumlocution: str) -> bool:
    """Does the page answer the clue's description of it?"""
    description = " ".join((page.get("description") or "").split()).rstrip(".")
    read = parse_circumlocution(circumlocution)
    if read is None:
        return False
    how, words = read
    if how == "description":
        return description == words
    if how == "description_start":
        return words_begin(description, words)
    return infobox_kind(page.get("infobox_type")) == words


def words_begin(text: str, start: str) -> bool:
    """Does ``text`` begin with the words of ``start`` (whole words: "Country in" begins
    "Country in Europe", not "Countryside")?"""
    return text == start or text.startswith(start + " ")


def readings_of(n: int, pages: list[dict], ask: str, is_country: Callable[[str], bool] | None = None
                ) -> dict[str, Any]:
    """URL -> answer, for the pages that answer the question (``Ambiguous`` when one page holds
    two answers); ``is_country`` tells a country's name (the solver asks the tools)."""
    readings: dict[str, Any] = {}
    for page in pages:
        try:
            readings[page["url"]] = read_answer(page, ask, is_country)
        except Unsolvable:
            continue
        except Ambiguous as exc:
            raise Ambiguous(f"clue {n}: on {page['url']}: {exc}", exc.candidates) from exc
    return readings


def picks_from_a_longer_list(data: Any, path: str) -> bool:
    """Does the path index into a list of more than one item (so that tool ordering decides)?"""
    cur = data
    for part in (p for p in path.split(".") if p and not path.startswith("sum:")):
        if isinstance(cur, list):
            if len(cur) > 1:
                return True
            cur = cur[int(part)] if part.isdigit() and int(part) < len(cur) else None
        elif isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return False
    return False


def read_answer(page: dict, ask: str, is_country: Callable[[str], bool] | None = None) -> Any:
    """The value the question asks for on this page (``Unsolvable`` if it is not there, ``Ambiguous``
    when the page holds two different answers)."""
    if m := INFOBOX_ASK.match(ask):
        kind, label = m.group(1), m.group(2)
        found = set()
        for item in page.get("infobox", []):
            if (item.get("label") or item.get("name")) != label:
                continue
            if kind == "What number":
                if item.get("number") is not None:
                    found.add(round(item["number"]))
            elif kind == "What year":   # a field giving a year and nothing finer
                if (year := infobox_year(item.get("date"), item.get("number"))) is not None:
                    found.add(year)
            elif kind == "What date":
                if item.get("date") and len(item["date"]) == 10:
                    found.add(item["date"])
            else:
                found.add(clean_text_value(item["text"]))
        if not found:
            raise Unsolvable(f"no infobox field {label!r} with such a value")
        if len(found) > 1:
            raise Ambiguous(f"infobox label {label!r} holds {len(found)} values", sorted(map(str, found)))
        return found.pop()
    if SUBJECT_ASK.match(ask):   # the page's subject: its title without the bracketed disambiguation
        return subject_name(page.get("title") or "")
    if m := POSITION_ASK.match(ask):
        return read_position_ask(page, m)
    if m := NAMES_ASK.match(ask):
        return read_names_ask(page, m, is_country)
    if m := SENTENCE_ASK.match(ask):
        section, sentence = m.group(1), m.group(2)
        if section is None:
            text = page.get("lead", "")
        else:
            text = next((s["text"] for s in page.get("sections", []) if s["title"] == section), None)
            if text is None:
                raise Unsolvable(f"no section {section!r}")
        pattern = quoted_sentence_pattern(sentence, NUMBER_RE.pattern)
        numbers = {round(parse_number(hit.group(1))) for hit in re.finditer(pattern, " ".join(text.split()))}
        if not numbers:
            raise Unsolvable("the quoted sentence is not on the page")
        if len(numbers) > 1:
            raise Ambiguous("the quoted sentence matches several numbers", sorted(map(str, numbers)))
        return numbers.pop()
    raise Unsolvable(f"an unknown kind of question: {ask[:80]!r}")


def read_position_ask(page: dict, m: re.Match) -> int:
    """'In its section "History", the third sentence gives a year: which year?': the blocks so
    named (the opening text, every section of that title, or the n-th section), their n-th
    sentence as ``facts.SENTENCE_SPLIT`` cuts it (or the one sentence that begins with the words
    quoted), and there the numbers of the kind named."""
    lead, title, section_ordinal, sentence_ordinal, opening, kind, nth, count = m.groups()
    return _one_reading([number_given(s, kind, nth, count)
                         for s in chosen_sentences(page, lead, title, section_ordinal, sentence_ordinal, opening)],
                        sentence_ordinal or opening)


def read_names_ask(page: dict, m: re.Match, is_country: Callable[[str], bool] | None) -> str:
    """'In its opening text, the third sentence names two countries: which is the first of the
    two?': that sentence's countries (``execute.countries_named``, each looked up with the tools)."""
    lead, title, section_ordinal, sentence_ordinal, opening, kind, nth, count = m.groups()
    if is_country is None:
        raise Unsolvable("no tool to tell a country's name")
    stated = stated_count(kind)
    found = []
    for sentence in chosen_sentences(page, lead, title, section_ordinal, sentence_ordinal, opening):
        names = countries_named(sentence, is_country)
        if names is None:
            raise Ambiguous(f"a name in the sentence holds a country: {sentence[:80]!r}", [sentence])
        if len(names) != stated:
            raise Unsolvable(f"the sentence names {len(names)} countries, not {kind}")
        k = 1 if stated == 1 else ordinal_value(nth or "")
        if not k or k > stated or (stated > 1 and count_value(count or "") != stated):
            raise Ambiguous(f"the sentence names {kind} and the clue does not say which", names)
        found.append(names[k - 1])
    return _one_reading(found, sentence_ordinal or opening)


def _one_reading(found: list, which: str | None) -> Any:
    values = set(found)
    if not values:
        raise Unsolvable(f"the section has no such sentence: {which!r}")
    if len(values) > 1:
        raise Ambiguous("sections of that title give different answers", sorted(map(str, values)))
    return values.pop()


def chosen_sentences(page: dict, lead: str | None, title: str | None, section_ordinal: str | None,
                     sentence_ordinal: str | None, opening: str | None) -> list[str]:
    """The sentences a clue points at: in the blocks it names (the opening text, every section of
    that title, or the n-th section), the n-th sentence or the one beginning with the words quoted."""
    sections = page.get("sections", [])
    if lead:
        blocks = [page.get("lead", "")]
    elif section_ordinal:
        k = ordinal_value(section_ordinal)
        blocks = [sections[k - 1]["text"]] if k and k <= len(sections) else []
    else:
        blocks = [s["text"] for s in sections if s["title"] == title]
    if not blocks:
        raise Unsolvable(f"no such section: {title or section_ordinal!r}")
    out: list[str] = []
    for block in blocks:
        sentences = sentences_of(block)
        if opening is not None:
            chosen = [s for s in sentences if words_begin(" ".join(s.split()), opening)]
            if len(chosen) > 1:
                raise Ambiguous(f"{len(chosen)} sentences begin with {opening!r}", chosen)
        else:
            position = ordinal_value(sentence_ordinal)
            if position is None:
                raise Unsolvable(f"not an ordinal: {sentence_ordinal!r}")
            chosen = sentences[position - 1:position]
        out += chosen
    return out


def number_given(sentence: str, kind: str, nth: str | None, count: str | None) -> int:
    """The number of the kind named in a sentence: 'a year' (the sentence's only year), or 'two
    years' with 'the first of the two'. 'a number' / 'two numbers' count every number."""
    numbers = number_kinds(sentence)
    if counts_every_number(kind):
        matching = [raw for raw, _ in numbers]
    else:
        matching = [raw for raw, k in numbers if kind in (k.singular, f"{count_word(_count(numbers, k))} {k.plural}")]
    if not matching:
        raise Unsolvable(f"the sentence gives no {kind}: {sentence[:80]!r}")
    stated = stated_count(kind)
    if stated != len(matching):
        if stated == 1:
            raise Ambiguous(f"the sentence gives {len(matching)} numbers that are {kind}", matching)
        raise Unsolvable(f"the sentence gives {len(matching)} of {kind}, not {kind.split()[0]}")
    if stated == 1:
        return round(parse_number(matching[0]))
    if nth is None or count is None or count_value(count) != stated or not (k := ordinal_value(nth)) or k > stated:
        raise Ambiguous(f"the sentence gives {kind} and the clue does not say which", matching)
    return round(parse_number(matching[k - 1]))


def _count(numbers: list[tuple[str, NumberKind]], kind: NumberKind) -> int:
    return sum(1 for _, k in numbers if k.singular == kind.singular)


# ---- sentences ------------------------------------------------------------------------------------
def sentences_of(text: str) -> list[str]:
    """A block's sentences exactly as ``facts.prose_facts`` cuts them (so positions agree)."""
    return [s.strip() for s in SENTENCE_SPLIT.split(text or "")]


def names_in(sentence: str) -> list[str]:
    """Every name a careful reader may look up in a sentence: each capitalised run (``execute.NAME_RUN``,
    a leading "In" or "The" left out) and every shorter run of its words, possessives cut ("Fuzuli's")."""
    out: list[str] = []
    for m in NAME_RUN.finditer(sentence):
        words = [re.sub(r"(?:'s|’s|[.,])$", "", w) for w in m.group(0).split()]
        while words and words[0] in NOT_NAMES:
            words = words[1:]
        for i in range(len(words)):
            for j in range(i + 1, min(len(words), i + 6) + 1):
                span = words[i:j]
                if span[0][:1].isupper() and span[-1][:1].isupper() and len(" ".join(span)) >= 3:
                    out.append(" ".join(span))
    return list(dict.fromkeys(out))


def solve(view: RiddleView, toolbox: Toolbox, on_call: Callable[[str, dict, bool, str], None] | None = None
          ) -> Solution:
    return Solver(toolbox, on_call).solve(view)
