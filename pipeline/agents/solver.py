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

import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipeline import expressions
from pipeline.catalog import roadblock_templates
from pipeline.clues import (
    HOP_CHOICE,
    HOP_DESCRIBED,
    HOP_INFOBOX,
    HOP_NAMED,
    MEASURE_LOOKUPS,
    could_be,
    measure_value,
    singulars,
)
from pipeline.execute import (
    NAME_RUN,
    NOT_NAMES,
    NUMBER_RE,
    StopFailed,
    clean_text_value,
    countries_named,
    finalize_number,
    get_path,
    infobox_year,
    nearest_is_one,
    parse_number,
    resolve_args,
)
from pipeline.model import TraceEntry
from pipeline.snapshot.page import infobox_kind, subject_name, title_to_url
from pipeline.stages.build import expand_params, instantiate_args
from pipeline.stages.facts import SENTENCE_SPLIT
from pipeline.tools.errors import SimulatedRefused, ToolArgumentError
from pipeline.tools.registry import Toolbox
from pipeline.transforms import DETOURS, DetourError, apply_detour

SOLVED, AMBIGUOUS, FAILED = "solved", "ambiguous", "failed"
SEARCH_RESULTS = 5                  # what a search shows: the clue's target must be among them
# wording that states which item of a list a chain takes
ORDER_WORDS = ("first", "nearest", "closest", "top", "highest", "lowest", "largest", "smallest")


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
CLUE_LINE = re.compile(r"^(\d+)\. (.*)$", re.DOTALL)
ASK = re.compile(r"\s(?=(?:What number|What year|What date|Which place|Which country) does its infobox give for "
                 r"|In its (?:opening text|section \"|\w+ section,)|Which place is this page about\?)")
SUBJECT_ASK = re.compile(r"^Which place is this page about\? ")
LINK_BRIDGE = re.compile(r"^(?:From the page of clue (\d+), follow a link to|On the page of clue (\d+), take the link "
                         r"leading to|Leave the page of clue (\d+) through its link to) (.+)\.$", re.DOTALL)
SEARCH_BRIDGE = re.compile(r"^(?:Search the web for|Look up, with a search,|Use a web search to reach) (.+)\.$", re.DOTALL)
SEED_BRIDGE = re.compile(r"^(?:Start on the page you are given|Begin at the seed page|Your journey starts on the page "
                         r"you were handed)\.$")
BY_DESCRIPTION = re.compile(r'^the page whose short description reads "(.*)"$', re.DOTALL)
BY_DESCRIPTION_START = re.compile(r'^the page whose short description begins with the words "(.*)"$', re.DOTALL)
BY_INFOBOX = re.compile(r"^a page about a subject whose infobox is of the '(.*)' kind$")
INFOBOX_ASK = re.compile(r'^(What number|What year|What date|Which place|Which country) does its infobox give for "(.*)"'
                         r'( \(rounded to a whole number\))?\?$', re.DOTALL)
# a number named by where its sentence stands and what it is (templates/clues/ask.j2)
POSITION_ASK = re.compile(r'^In its (?:(opening text)|section "(.*?)"|(\w+) section), (?:the (\w+) sentence|the sentence '
                          r'that begins with the words "(.*?)") gives (.+?): '
                          r"(?:which \w+|what \w+|how many(?: \w+)?|what is the (\w+) of the (\w+))\?$",
                          re.DOTALL)
# a country named by its sentence (templates/clues/ask.j2, source "names")
NAMES_ASK = re.compile(r'^In its (?:(opening text)|section "(.*?)"|(\w+) section), (?:the (\w+) sentence|the sentence '
                       r'that begins with the words "(.*?)") names (a country|\w+ countries): '
                       r"(?:which country|which is the (\w+) of the (\w+))\?$", re.DOTALL)
# the older wording, a quoted sentence with the number masked (legs exported before issue 14)
SENTENCE_ASK = re.compile(r'^In its (?:opening text|section "(.*?)"), a sentence reads: "(.*)" '
                          r"What number stands where \[\?\] is\?$", re.DOTALL)


def clues_of(riddle: str) -> list[tuple[int, str]]:
    out = []
    for block in (b.strip() for b in riddle.split("\n\n")):
        if not block:
            continue
        m = CLUE_LINE.match(block)
        if not m:
            raise Unsolvable(f"a riddle line without a clue number: {block[:60]!r}")
        out.append((int(m.group(1)), " ".join(m.group(2).split())))
    if [n for n, _ in out] != list(range(1, len(out) + 1)):
        raise Unsolvable("clues are not numbered 1..N")
    return out


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
            if not clues[-1][1].startswith("Finally, ") or not (isinstance(answer, int) and 0 <= answer <= 9):
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
        if text.startswith("Find "):
            return self.roadblock(n, text, sol.values)
        if text.startswith("Work out "):
            return self.detour(n, text, sol.values)
        if text.startswith("Combine the two findings"):
            a, b = (sol.values[int(x)] for x in re.findall(r"clue (\d+)", text))
            return a + b if "add the result" in text else abs(a - b)
        if text.startswith("Finally, "):
            return self.finish(n, text, sol.values)
        return self.page(n, text, view, sol)

    # page stops ------------------------------------------------------------------------------
    def page(self, n: int, text: str, view: RiddleView, sol: Solution) -> Any:
        parts = ASK.split(text, maxsplit=1)
        if len(parts) != 2:
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
        if m := (HOP_NAMED.match(bridge) or HOP_DESCRIBED.match(bridge) or HOP_INFOBOX.match(bridge)
                 or HOP_CHOICE.match(bridge)):
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
            for sentence in sentences:
                for name in names_in(sentence):
                    page = self.fetch(n, title_to_url(name)) if name != origin.get("title") else None
                    if page and page["url"] != origin["url"] and any(
                            could_be(k, page.get("description"), page.get("infobox_type")) for k in kinds):
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
        page = self.fetch(n, title_to_url(picks.pop()))
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
            ranges = {k for k, v in template.get("params", {}).items() if isinstance(v, str)}
            head = re.escape(template["value"])
            head = re.sub(r"\\\{in(\d)\\\}", rf"the {ROLE_WORDS} (?:from clue|that clue) (\\d+)(?: asks for)?", head)
            head = re.sub(r"\\\{(\w+)\\\}", functools.partial(_param_pattern, ranges), head)
            m = re.fullmatch("Find " + head + r"\.", text)
            if not m:
                continue
            inputs = [int(g) for k, g in enumerate(m.groups()) if k not in {m.re.groupindex[r] - 1 for r in ranges}]
            # a list parameter: each of its values; a date range: the date the clue states, if inside it
            choices = sorted((k, [m.group(k)] if k in ranges and within(m.group(k), v) else [] if k in ranges else v)
                             for k, v in template.get("params", {}).items())
            for combo in itertools.product(*(c for _, c in choices)):
                params = expand_params(dict(zip((k for k, _ in choices), combo)))
                fields = dict(params)
                for k, i in enumerate(inputs):
                    fields[f"in{k}"] = f"§{i}"
                wording = re.escape("Find " + template["value"].format(**fields) + ".")
                wording = re.sub(r"§(\d+)", rf"the {ROLE_WORDS} (?:from clue \1|that clue \1 asks for)", wording)
                if re.fullmatch(wording, text):
                    yield name, template, inputs, params

    # detours, finish line ----------------------------------------------------------------------
    def detour(self, n: int, text: str, values: dict[int, Any]) -> Any:
        for name, d in sorted(DETOURS.items()):
            pattern = re.escape(d.phrase).replace(re.escape("{ref}"), r"the result of clue (\d+)")
            m = re.fullmatch("Work out " + pattern + r"\.", text)
            if m:
                try:
                    return apply_detour(name, values[int(m.group(1))])
                except (DetourError, KeyError) as exc:
                    raise Unsolvable(f"clue {n}: {name}: {exc}") from exc
        raise Unsolvable(f"clue {n}: no transform reads {text[:80]!r}")

    def finish(self, n: int, text: str, values: dict[int, Any]) -> int:
        groups = [[int(x) for x in re.findall(r"\d+", g)]
                  for g in re.findall(r"the results? of clues? ((?:\d+(?:, | and )?)+)", text)]
        kind = reduction_named(text)
        if kind is None:
            raise Unsolvable(f"clue {n}: no reduction reads {text[:80]!r}")
        refs = [r for g in groups for r in g]
        try:
            expr = expressions.reduction_expression(kind, refs)
            return expressions.evaluate(expr, {r: values[r] for r in refs})
        except (KeyError, expressions.ExpressionError) as exc:
            raise Unsolvable(f"clue {n}: {exc}") from exc


def reduction_named(text: str) -> str | None:
    """The finish-line reduction a clue's wording names (templates/clues), or None."""
    if "take the digital root of the total" in text:
        return "digital_root_sum"
    if "multiply those digits" in text:
        return "product_mod_10"
    if "absolute difference" in text:
        return "digital_root_abs_difference" if "digital root" in text else "abs_difference_mod_10"
    if "keep only the last digit" in text:
        return "sum_mod_10"
    return None


# ---- matching pages and reading answers ----------------------------------------------------------
ROLE_WORDS = "(?:place|country|date|number|company|cryptocurrency)"   # verbalize.ROLE_WORD's words


def _param_pattern(ranges: set[str], placeholder: re.Match) -> str:
    """A template's {param} in a clue: a date range's date is captured, a listed value matched."""
    name = placeholder.group(1)
    return rf"(?P<{name}>\d{{4}}-\d\d-\d\d)" if name in ranges else ".+?"


def within(day: str, span: str) -> bool:
    """Is the ISO date inside a template's ``FIRST..LAST`` range?"""
    first, _, last = span.partition("..")
    return first <= day <= last


def fits(page: dict, circumlocution: str) -> bool:
    """Does the page answer the clue's description of it?"""
    description = " ".join((page.get("description") or "").split()).rstrip(".")
    if m := BY_DESCRIPTION.match(circumlocution):
        return description == m.group(1)
    if m := BY_DESCRIPTION_START.match(circumlocution):
        return words_begin(description, m.group(1))
    if m := BY_INFOBOX.match(circumlocution):
        return infobox_kind(page.get("infobox_type")) == m.group(1)
    return False


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


def search_words(circumlocution: str) -> str:
    """What an agent would type into a search box for the clue's description."""
    for pattern in (BY_DESCRIPTION, BY_DESCRIPTION_START, BY_INFOBOX):
        if m := pattern.match(circumlocution):
            return m.group(1)
    return circumlocution


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
        pattern = f"({NUMBER_RE.pattern})".join(_wild(part) for part in sentence.split("[?]"))
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
    stated = 1 if kind == "a country" else count_value(kind.split()[0])
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
    if kind == "a number" or re.fullmatch(r"\w+ numbers", kind):
        matching = [raw for raw, _ in numbers]
    else:
        matching = [raw for raw, k in numbers if kind in (k.singular, f"{count_word(_count(numbers, k))} {k.plural}")]
    if not matching:
        raise Unsolvable(f"the sentence gives no {kind}: {sentence[:80]!r}")
    stated = 1 if re.match(r"^an? ", kind) else count_value(kind.split()[0])
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


# ---- what a number in a sentence is -------------------------------------------------------------
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
            "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
            "twentieth")
COUNTS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
SCALES = ("thousand", "million", "billion", "trillion")
CURRENCIES = {"US$": "US dollars", "C$": "Canadian dollars", "A$": "Australian dollars", "$": "dollars", "£": "pounds",
              "€": "euros", "¥": "yen", "₹": "rupees"}
# unit words after a number, longest first, with the name a clue gives them
UNITS = (
    (r"square kilomet(?:re|er)s|sq\.? ?km|km2|km²", "square kilometres"),
    (r"square miles|sq\.? ?mi", "square miles"),
    (r"square met(?:re|er)s|m2|m²", "square metres"),
    (r"km/h|kilomet(?:re|er)s per hour", "kilometres per hour"),
    (r"mph|miles per hour", "miles per hour"),
    (r"kilomet(?:re|er)s|km", "kilometres"),
    (r"centimet(?:re|er)s|cm", "centimetres"),
    (r"millimet(?:re|er)s|mm", "millimetres"),
    (r"met(?:re|er)s|m", "metres"),
    (r"miles|mi", "miles"),
    (r"feet|ft", "feet"),
    (r"inches", "inches"),
    (r"kilograms|kg", "kilograms"),
    (r"tonnes|tons", "tonnes"),
    (r"hectares|ha", "hectares"),
    (r"acres", "acres"),
    (r"°C|°F|degrees", "degrees"),
    (r"megawatts|MW", "megawatts"),
    (r"lit(?:re|er)s", "litres"),
)
UNIT = re.compile(r"\s?(?:" + "|".join(f"(?P<u{i}>{p})" for i, (p, _) in enumerate(UNITS)) + r")(?![\w²])")
IRREGULAR_PLURALS = {"people", "children", "men", "women", "staff", "personnel", "cattle", "sheep", "fish", "deer",
                     "police", "aircraft", "crew", "troops", "alumni", "faculty", "media", "data"}
NOT_NOUNS = {"was", "has", "is", "its", "this", "thus", "as", "always", "perhaps", "across", "towards", "besides", "less",
             "unless", "whereas", "plus", "minus", "versus", "does", "goes", "his", "hers", "ours", "yours", "theirs"}
NOT_MODIFIERS = {"and", "or", "of", "in", "to", "the", "a", "an", "at", "by", "for", "from", "on", "with", "than", "that",
                 "which", "who", "more", "less", "other", "such", "were", "are", "had", "have", "has", "was", "is",
                 "per", "into", "over", "under", "after", "before", "since", "during", "between", "about"}


@dataclass(frozen=True)
class NumberKind:
    """What a number in a sentence is, in a clue's words: ``singular`` ("a year", "a number of
    employees", "a measurement in square kilometres") and ``plural`` ("years", ...)."""
    cls: str            # year | day | age | percentage | population | money | measurement | count | scaled | number
    singular: str
    plural: str

    @property
    def question(self) -> str:
        scaled = re.search(r"\bin (thousands|millions|billions|trillions)$", self.singular)
        if scaled and self.cls in ("count", "population", "scaled"):
            return f"how many {scaled.group(1)}"
        return {"year": "which year", "day": "which day", "percentage": "what percentage", "age": "what age",
                "count": "how many", "population": "how many people"}.get(self.cls, "what number")


def ordinal(n: int) -> str:
    if 1 <= n <= len(ORDINALS):
        return ORDINALS[n - 1]
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def ordinal_value(word: str) -> int | None:
    if word in ORDINALS:
        return ORDINALS.index(word) + 1
    m = re.fullmatch(r"(\d+)(?:st|nd|rd|th)", word)
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


def count_word(n: int) -> str:
    return COUNTS[n - 1] if 1 <= n <= len(COUNTS) else str(n)


def count_value(word: str) -> int | None:
    if word in COUNTS:
        return COUNTS.index(word) + 1
    return int(word) if word.isdigit() else None


def sentences_of(text: str) -> list[str]:
    """A block's sentences exactly as ``facts.prose_facts`` cuts them (so positions agree)."""
    return [s.strip() for s in SENTENCE_SPLIT.split(text or "")]


def _plural_noun(word: str) -> bool:
    return word in IRREGULAR_PLURALS or (len(word) >= 4 and word.endswith("s") and word not in NOT_NOUNS
                                         and not word.endswith(("ss", "us", "is", "ous")))


def number_kinds(sentence: str) -> list[tuple[str, NumberKind]]:
    """Every number of a sentence (in the order ``execute.numbers_in`` lists them) with what it is."""
    return [(m.group(0), kind_of_number(sentence, m.start(), m.end())) for m in NUMBER_RE.finditer(sentence)]


def kind_of_number(sentence: str, start: int, end: int) -> NumberKind:
    """What the number at ``sentence[start:end]`` is, read from the words around it."""
    raw, before, after = sentence[start:end], sentence[:start], sentence[end:]
    if re.match(r"\s?(?:%|percent\b|per cent\b)", after):
        return NumberKind("percentage", "a percentage", "percentages")
    scale = re.match(r"\s(" + "|".join(SCALES) + r")\b", after)
    rest = after[scale.end():] if scale else after
    in_scale = f"{scale.group(1)}s of " if scale else ""
    currency = re.search(r"(US\$|C\$|A\$|\$|£|€|¥|₹)\s?$", before)
    if currency:
        name = CURRENCIES[currency.group(1)]
        return NumberKind("money", f"an amount in {in_scale}{name}", f"amounts in {in_scale}{name}")
    unit = UNIT.match(rest)
    if unit:
        name = next(UNITS[int(k[1:])][1] for k, v in unit.groupdict().items() if v is not None)
        return NumberKind("measurement", f"a measurement in {in_scale}{name}", f"measurements in {in_scale}{name}")
    if re.search(r"\bpopulation (?:of|was|is|at)\s(?:(?:about|around|approximately|nearly|over|some|roughly|almost)\s)?$",
                 before):
        return NumberKind("population", f"a population{in_scale and ' in ' + scale.group(1) + 's'}",
                          f"populations{in_scale and ' in ' + scale.group(1) + 's'}")
    if not scale and (re.search(r"\b(?:age of|aged)\s$", before) or re.match(r"\s?-?years?[- ]old\b", after)):
        return NumberKind("age", "an age", "ages")
    if not scale and re.match(r"\s(?:BC|BCE)\b", after):
        return NumberKind("year", "a year BC", "years BC")
    if not scale and (re.match(r"\s(?:AD|CE)\b", after) or re.search(r"\bAD\s$", before)):
        return NumberKind("year", "a year", "years")
    words = re.match(r"\s([a-z][a-z-]+)(?:\s([a-z][a-z-]+))?", rest)
    noun = None
    if words and _plural_noun(words.group(1)):
        noun = words.group(1)
    elif words and words.group(2) and words.group(1) not in NOT_MODIFIERS and _plural_noun(words.group(2)):
        noun = f"{words.group(1)} {words.group(2)}"
    if noun:
        in_scale = f" in {scale.group(1)}s" if scale else ""
        return NumberKind("count", f"a number of {noun}{in_scale}", f"numbers of {noun}{in_scale}")
    if scale:
        return NumberKind("scaled", f"a number in {scale.group(1)}s", f"numbers in {scale.group(1)}s")
    if re.fullmatch(r"1\d{3}|20\d{2}", raw):
        return NumberKind("year", "a year", "years")
    if re.fullmatch(r"[1-9]|[12]\d|3[01]", raw) and (re.search(r"\b(?:" + "|".join(MONTHS) + r")\s$", before)
                                                    or re.match(r"\s(?:" + "|".join(MONTHS) + r")\b", after)):
        return NumberKind("day", "a day of a month", "days of a month")
    return NumberKind("number", "a number", "numbers")


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


def _wild(part: str) -> str:
    """A quoted piece of a sentence as a pattern: masked names ([...]) stand for any words."""
    return r".+?".join(re.escape(re.sub(r"\s+", " ", p)) for p in part.split("[...]"))


def solve(view: RiddleView, toolbox: Toolbox, on_call: Callable[[str, dict, bool, str], None] | None = None
          ) -> Solution:
    return Solver(toolbox, on_call).solve(view)
