"""A deterministic solver that sees only the riddle: the check that a leg can be solved at all.

It gets what every agent gets (the riddle, the seed URL, the tools) and acts only through tool
calls: it follows links by the clue's description of the target page, runs searches with the
clue's words, reads the infobox field or the quoted sentence asked for, rebuilds each roadblock's
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
from pipeline.execute import (
    NUMBER_RE,
    StopFailed,
    clean_text_value,
    finalize_number,
    get_path,
    parse_number,
    resolve_args,
)
from pipeline.model import TraceEntry
from pipeline.snapshot.page import infobox_kind, title_to_url
from pipeline.stages.build import expand_params, instantiate_args
from pipeline.tools.registry import SimulatedRefused, ToolArgumentError, Toolbox
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
ASK = re.compile(r"\s(?=(?:What number|What date|Which place|Which country) does its infobox give for "
                 r"|In its (?:opening text|section \"))")
LINK_BRIDGE = re.compile(r"^(?:From the page of clue (\d+), follow a link to|On the page of clue (\d+), take the link "
                         r"leading to|Leave the page of clue (\d+) through its link to) (.+)\.$", re.DOTALL)
SEARCH_BRIDGE = re.compile(r"^(?:Search the web for|Look up, with a search,|Use a web search to reach) (.+)\.$", re.DOTALL)
SEED_BRIDGE = re.compile(r"^(?:Start on the page you are given|Begin at the seed page|Your journey starts on the page "
                         r"you were handed)\.$")
BY_DESCRIPTION = re.compile(r'^the page whose short description reads "(.*)"$', re.DOTALL)
BY_INFOBOX = re.compile(r"^a page about a subject whose infobox is of the '(.*)' kind$")
INFOBOX_ASK = re.compile(r'^(What number|What date|Which place|Which country) does its infobox give for "(.*)"'
                         r'( \(rounded to a whole number\))?\?$', re.DOTALL)
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
        if SEED_BRIDGE.match(bridge):
            page = self.fetch(n, view.seed_url)
            if page is None:
                raise Unsolvable(f"clue {n}: the seed page cannot be fetched")
            candidates = [page]
        elif m := LINK_BRIDGE.match(bridge):
            origin = int(next(g for g in m.groups()[:3] if g))
            if origin not in sol.pages:
                raise Unsolvable(f"clue {n}: clue {origin} named no page")
            here = self.fetch(n, sol.pages[origin])
            linked = [self.fetch(n, title_to_url(t)) for t in dict.fromkeys((here or {}).get("links", []))]
            candidates = [p for p in linked if p and fits(p, m.group(4))]
        elif m := SEARCH_BRIDGE.match(bridge):
            query = search_words(m.group(1))
            hits = self.call(n, "web_search", {"query": query, "num_results": SEARCH_RESULTS})["results"]
            found = [self.fetch(n, h["url"]) for h in hits]
            candidates = [p for p in found if p and fits(p, m.group(1))]
        else:
            raise Unsolvable(f"clue {n}: cannot tell how to reach the page from {bridge[:80]!r}")
        readings: dict[str, Any] = {}
        for page in candidates:
            try:
                readings[page["url"]] = read_answer(page, ask)
            except Unsolvable:
                continue
            except Ambiguous as exc:
                raise Ambiguous(f"clue {n}: on {page['url']}: {exc}", exc.candidates) from exc
        if not readings:
            raise Unsolvable(f"clue {n}: no page reached this way answers {ask[:80]!r}")
        if len(readings) > 1:
            raise Ambiguous(f"clue {n}: {len(readings)} pages fit the description and answer the question",
                            sorted(readings))
        [(url, value)] = readings.items()
        sol.pages[n] = url
        return value

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
            head = re.escape(template["value"])
            head = re.sub(r"\\\{in(\d)\\\}", r"the (?:place|country|date|number) from clue (\\d+)", head)
            head = re.sub(r"\\\{\w+\\\}", ".+?", head)
            m = re.fullmatch("Find " + head + r"\.", text)
            if not m:
                continue
            inputs = [int(g) for g in m.groups()]
            choices = sorted(template.get("params", {}).items())
            for combo in itertools.product(*(c for _, c in choices)):
                params = expand_params(dict(zip((k for k, _ in choices), combo)))
                fields = dict(params)
                for k, i in enumerate(inputs):
                    fields[f"in{k}"] = f"§{i}"
                wording = re.escape("Find " + template["value"].format(**fields) + ".")
                wording = re.sub(r"§(\d+)", r"the (?:place|country|date|number) from clue \1", wording)
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
def fits(page: dict, circumlocution: str) -> bool:
    """Does the page answer the clue's description of it?"""
    if m := BY_DESCRIPTION.match(circumlocution):
        return (page.get("description") or "").strip().rstrip(".") == m.group(1)
    if m := BY_INFOBOX.match(circumlocution):
        return infobox_kind(page.get("infobox_type")) == m.group(1)
    return False


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
    if m := BY_DESCRIPTION.match(circumlocution):
        return m.group(1)
    if m := BY_INFOBOX.match(circumlocution):
        return m.group(1)
    return circumlocution


def read_answer(page: dict, ask: str) -> Any:
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


def _wild(part: str) -> str:
    """A quoted piece of a sentence as a pattern: masked names ([...]) stand for any words."""
    return r".+?".join(re.escape(re.sub(r"\s+", " ", p)) for p in part.split("[...]"))


def solve(view: RiddleView, toolbox: Toolbox, on_call: Callable[[str, dict, bool, str], None] | None = None
          ) -> Solution:
    return Solver(toolbox, on_call).solve(view)
