"""The invariants every accepted leg satisfies; shared by acceptance tests, `validate` and
the property tests. Each check returns a list of violations (empty = holds)."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from pipeline import expressions
from pipeline.cache import ReplayMiss, canonical_json
from pipeline.catalog import LevelPreset
from pipeline.config import PROVENANCES
from pipeline.execute import (
    StopFailed,
    collect_wide,
    country_key,
    execute_leg,
    extract_fact,
    wide_input,
    wide_value,
)
from pipeline.model import (
    DETOUR,
    FINISH_LINE,
    LINK_FOLLOW,
    MERGE,
    ROADBLOCK,
    ROUTE_INFO,
    SEARCH_QUERY,
    WIDE,
    Leg,
    Stop,
    TraceEntry,
)
from pipeline.refs import is_stop_ref, value_inputs
from pipeline.snapshot.page import name_regex
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import ToolResult
from pipeline.tools.spec import TOOL_NAMES
from pipeline.world.geo import haversine_km


def dependency_graph(leg: Leg) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(s.index for s in leg.stops)
    for s in leg.stops:
        g.add_edges_from((d, s.index) for d in s.depends_on)
    return g


def value_graph(leg: Leg) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(s.index for s in leg.stops)
    for s in leg.stops:
        g.add_edges_from((i, s.index) for i in value_inputs(s))
    return g


def check_dag(leg: Leg, preset: LevelPreset) -> list[str]:
    errors = []
    for s in leg.stops:
        if s.index != leg.stops.index(s):
            errors.append(f"stop {s.index} is out of place")
        late = [d for d in s.depends_on if d >= s.index]
        if late:
            errors.append(f"stop {s.index} depends on later stops {late}")
    if not nx.is_directed_acyclic_graph(dependency_graph(leg)):
        errors.append("dependencies form a cycle")
    diamonds: dict[int, list] = {}
    for s in leg.stops:
        if s.diamond is not None and s.diamond_role in ("branch", "merge"):
            diamonds.setdefault(s.diamond, []).append(s)
    if leg.variant == "linear" and diamonds:
        errors.append(f"linear leg has {len(diamonds)} diamonds")
    if leg.variant == "dag":
        if not preset.diamonds[0] <= len(diamonds) <= preset.diamonds[1]:
            errors.append(f"{len(diamonds)} diamonds, level needs {preset.diamonds[0]}-{preset.diamonds[1]}")
        for number, parts in diamonds.items():
            branches = [s for s in parts if s.diamond_role == "branch"]
            merges = [s for s in parts if s.diamond_role == "merge"]
            if len(branches) != 2 or len(merges) != 1:
                errors.append(f"diamond {number}: {len(branches)} branches and {len(merges)} merges")
                continue
            sources = [set(value_inputs(b)) for b in branches]
            if not sources[0] or sources[0] != sources[1]:
                errors.append(f"diamond {number}: branches do not fork from one source")
            if sorted(value_inputs(merges[0])) != sorted(b.index for b in branches):
                errors.append(f"diamond {number}: merge does not combine both branches")
    return errors


def _totals(leg: Leg, stop: int) -> list[int]:
    """The match totals (``"total"``) the golden trace's answers for ``stop`` report."""
    found = []
    for entry in leg.trace:
        if entry.stop == stop and entry.response.startswith("{"):
            total = json.loads(entry.response).get("total")
            if isinstance(total, int) and not isinstance(total, bool):
                found.append(total)
    return found


def check_counts(leg: Leg, preset: LevelPreset) -> list[str]:
    n_diamonds = len({s.diamond for s in leg.stops if s.diamond_role == "merge"})
    base = [s for s in leg.stops if s.diamond_role not in ("branch", "merge") and s.kind != WIDE]
    errors = []
    wide = leg.stops_of(WIDE)
    if not preset.wide[0] <= len(wide) <= preset.wide[1]:
        errors.append(f"{len(wide)} wide stops, level needs {preset.wide[0]}-{preset.wide[1]}")
    for s in wide:
        lo, hi = preset.wide_members
        if s.wide is None or not lo <= len(s.wide.members) <= hi:
            errors.append(f"wide stop {s.index}: {len(s.wide.members) if s.wide else 'no'} members, level needs {lo}-{hi}")
        if not preset.wide_total_counts and s.wide is not None and s.wide.aggregate == "count" \
                and s.value in _totals(leg, s.index):
            errors.append(f"wide stop {s.index}: one tool answer's total is its count ({s.value}), which the "
                          "level does not ask (wide_total_counts)")
    lo, hi = preset.stops
    if not lo <= len(base) <= hi:
        errors.append(f"{len(base)} stops before augmentation, level needs {lo}-{hi}")
    if len(leg.stops) != len(base) + len(wide) + 3 * n_diamonds:
        errors.append("a diamond does not add exactly three stops")
    for kind, (lo, hi) in ((ROADBLOCK, preset.roadblocks), (DETOUR, preset.detours)):
        n = sum(s.kind == kind for s in base)
        if not lo <= n <= hi:
            errors.append(f"{n} {kind} stops, level needs {lo}-{hi}")
    if not leg.stops or leg.stops[-1].kind != FINISH_LINE or sum(s.kind == FINISH_LINE for s in leg.stops) != 1:
        errors.append("the leg must end with exactly one finish line")
    return errors


def check_expressions(leg: Leg) -> list[str]:
    errors = []
    for s in leg.stops:
        if s.kind in (MERGE, FINISH_LINE):
            try:
                lits = set(expressions.literals(s.expression)) - expressions.ALLOWED_LITERALS
                expressions.parse(s.expression)
            except (expressions.ExpressionError, SyntaxError, TypeError) as exc:
                errors.append(f"stop {s.index}: {exc}")
                continue
            if lits:
                errors.append(f"stop {s.index}: literals {sorted(lits)} copied into the expression")
    if leg.passcode is None or not 0 <= leg.passcode <= 9 or leg.passcode != leg.stops[-1].value:
        errors.append(f"passcode {leg.passcode!r} is not the finish line's digit")
    return errors


def check_value_flow(leg: Leg) -> list[str]:
    g = value_graph(leg)
    finish = leg.stops[-1].index
    reaching = nx.ancestors(g, finish) | {finish}
    dead = [s.index for s in leg.stops if s.index not in reaching]
    return [f"stops {dead} do not feed the finish line"] if dead else []


def check_riddle(leg: Leg, forbidden: list[str]) -> list[str]:
    errors = []
    if [c.stop for c in leg.clues] != [s.index for s in leg.stops] or [c.number for c in leg.clues] != [s.index + 1 for s in leg.stops]:
        errors.append("the riddle does not have exactly one numbered clue per stop")
    for c in leg.clues:
        later = [int(n) for n in re.findall(r"clues? ([\d, and]+)", c.text) for n in re.findall(r"\d+", n)
                 if int(n) >= c.number]
        if later:
            errors.append(f"clue {c.number} refers to later clues {later}")
    riddle = leg.riddle.lower()
    for name in forbidden:
        if name_regex(name).search(leg.riddle):
            errors.append(f"the riddle names the page {name!r}")
    for tool in TOOL_NAMES:
        if tool in riddle:
            errors.append(f"the riddle names the tool {tool!r}")
    finish_clue = leg.clues[-1].text if leg.clues else ""
    operands = expressions.references(leg.stops[-1].expression) if leg.stops and leg.stops[-1].expression else []
    stated = [leg.stops[i].value for i in operands
              if re.search(rf"(?<![\w.]){re.escape(str(leg.stops[i].value))}(?![\w.])",
                           re.sub(r"clues? [\d, and]+", "", finish_clue))]
    if stated:
        errors.append(f"the finish clue states operand values {stated}")
    return errors


def check_provenance(leg: Leg, allow_simulated: bool) -> list[str]:
    errors = []
    for t in leg.trace:
        if t.provenance not in PROVENANCES:
            errors.append(f"trace call {t.tool} of stop {t.stop} has provenance {t.provenance!r}")
        elif t.provenance == "simulated" and not allow_simulated:
            errors.append(f"trace call {t.tool} of stop {t.stop} is simulated")
    return errors


def check_page_facts(leg: Leg, fetch_page: Callable[[str], dict | None]) -> list[str]:
    """Each page stop's fact is on its snapshot page at the stated place."""
    errors = []
    for s in leg.stops_of(ROUTE_INFO):
        page = fetch_page(s.page_url)
        if page is None:
            errors.append(f"stop {s.index}: page {s.page_url} not in the snapshot")
            continue
        try:
            value = extract_fact(page, s.extraction, s.value_type)
        except StopFailed as exc:
            errors.append(f"stop {s.index}: {exc}")
            continue
        if value != s.value:
            errors.append(f"stop {s.index}: page gives {value!r}, leg says {s.value!r}")
    return errors


PLACE_TOOLS = {"maps_geocode": "address"}   # tools whose argument is one place, as a place stop gives it


def check_places(leg: Leg) -> list[str]:
    """A place stop feeds a place-level tool one place: the whole text geocoded (no partial match of
    a list such as "Basra, Cairo") and not a country ("United States")."""
    by_index = {s.index: s for s in leg.stops}
    traced = {(t.stop, t.step): t for t in leg.trace}
    errors = []
    for stop in leg.stops:
        for j, step in enumerate(stop.tool_chain):
            arg = step.args.get(PLACE_TOOLS.get(step.tool, ""))
            source = by_index.get(arg["$stop"]) if is_stop_ref(arg) and not arg.get("path") else None
            if source is None or source.kind != ROUTE_INFO or not source.fact or source.fact.role != "place":
                continue
            entry = traced.get((stop.index, j))
            if entry is None:
                continue   # an imported leg without a trace: nothing recorded to check
            found = json.loads(entry.response)
            if found.get("partial_match") or found.get("place_type") == "country":
                errors.append(f"stop {stop.index} asks {step.tool} about {source.value!r} (stop {source.index}), which "
                              f"is {'a country' if found.get('place_type') == 'country' else 'not one place'}")
    return errors


def check_route_inputs(leg: Leg) -> list[str]:
    """Every roadblock asks about something the route led to: it takes an input from an earlier
    stop (a company, a place, a date...), never an entity of its own from a fixed list."""
    errors = []
    for stop in leg.stops:
        if stop.kind != ROADBLOCK:
            continue
        inputs = stop.roadblock.inputs if stop.roadblock else []
        if not inputs:
            errors.append(f"roadblock {stop.index} ({stop.template}) takes no input from an earlier stop")
        elif any(i >= stop.index for i in inputs):
            errors.append(f"roadblock {stop.index} ({stop.template}) takes an input from a later stop: {inputs}")
    return errors


def check_bridges(leg: Leg) -> list[str]:
    """Every page stop after the seed says how the agent gets there: a link followed or a search made
    from an earlier page stop, which the stop depends on (diamond once dropped a page stop and left
    the next one with no source; verbalize then crashed on it)."""
    pages = [s.index for s in leg.stops if s.kind == ROUTE_INFO]
    errors = []
    for stop in leg.stops:
        if stop.kind != ROUTE_INFO or stop.index == pages[0]:
            continue
        how = stop.transition
        if how is None or how.kind not in (LINK_FOLLOW, SEARCH_QUERY):
            errors.append(f"page stop {stop.index} ({stop.page_title}) is reached neither by a link nor by a search")
        elif how.from_stop not in pages or how.from_stop >= stop.index:
            errors.append(f"page stop {stop.index} ({stop.page_title}) is reached from {how.from_stop!r}, "
                          "not from an earlier page stop")
        elif how.from_stop not in stop.depends_on:
            errors.append(f"page stop {stop.index} ({stop.page_title}) does not depend on stop {how.from_stop}, "
                          "the page it is reached from")
    return errors


HOP_QUOTE_RUN = 6   # a clue sharing this many consecutive words with its page's text quotes it


def check_hops(leg: Leg, fetch_page: Callable[[str], dict | None]) -> list[str]:
    """Every hop is walked, not looked up (issue 21): the clue of a page stop after the seed names no
    verbatim key of its page: not its title (invariant 5), not its short description, no run of
    ``HOP_QUOTE_RUN`` words of its opening text; and a hop through the page before says so."""
    if leg.plan is None:
        return []   # an imported leg (AAR) keeps the bridges of its source
    clues = {c.stop: c.text for c in leg.clues}
    errors = []
    for stop in leg.stops:
        if stop.kind != ROUTE_INFO or stop.index == 0:
            continue
        text = clues.get(stop.index, "")
        if stop.transition is None or stop.transition.relation is None:
            errors.append(f"page stop {stop.index} ({stop.page_title}) is not reached through the page before")
            continue
        page = fetch_page(stop.page_url) or {}
        description = " ".join((page.get("description") or "").split()).rstrip(".")
        if len(description.split()) >= 2 and description.lower() in text.lower():
            errors.append(f"clue {stop.index + 1} quotes the short description of its page: {description!r}")
        words = [re.findall(r"\w+", t.lower()) for t in (text, page.get("lead") or "")]
        runs = {tuple(words[1][i:i + HOP_QUOTE_RUN]) for i in range(len(words[1]) - HOP_QUOTE_RUN + 1)}
        if any(tuple(words[0][i:i + HOP_QUOTE_RUN]) in runs for i in range(len(words[0]) - HOP_QUOTE_RUN + 1)):
            errors.append(f"clue {stop.index + 1} quotes the opening text of its page")
    return errors


ONE_POINT_M = 100   # two measures this near are taken at one point (two names of one city's point)


def _points(tool: str, data: dict) -> tuple | None:
    """The points (lat, lng) a call measures at, as its answer gives them (whatever name or route led there)."""
    found = {"maps_search_places": [data.get("center")], "maps_elevation": data.get("results") or [],
             "weather_historical": [data.get("location")]}.get(tool)
    if not found or not all(isinstance(p, dict) and "lat" in p and "lng" in p for p in found):
        return None
    return tuple((p["lat"], p["lng"]) for p in found)


def same_points(a: tuple, b: tuple) -> bool:
    """Are two calls' points one place each, pair by pair, within ``ONE_POINT_M``?"""
    return len(a) == len(b) and all(haversine_km(*p, *q) * 1000 <= ONE_POINT_M for p, q in zip(a, b))


def question_of(stop: Stop, trace: list[TraceEntry]) -> tuple[tuple, tuple] | None:
    """What a roadblock asks of a point: the measure (the measuring call's tool and what it searches
    for, the steps from there on) and the points it measures at. "The nearest airport to the place of
    clue 9" (Rome) and "to the capital the country statistics name for the country of clue 1" (Italy's,
    Rome) are one question asked twice (blind race 10, R28), though their templates and inputs differ;
    the drawn parameters (a radius, a date) do not count, as for the template of one entity below."""
    if stop.kind != ROADBLOCK:
        return None
    calls = {t.step: t for t in trace if t.stop == stop.index}
    for k, step in enumerate(stop.tool_chain):
        call = calls.get(k)
        points = _points(step.tool, json.loads(call.response)) if call is not None else None
        if points:
            return (step.tool, call.args.get("query"), tuple((s.tool, s.extract) for s in stop.tool_chain[k:])), points
    return None


def asked_twice(leg: Leg, trace: list[TraceEntry]) -> tuple[int, int] | None:
    """The first two roadblocks (clue numbers) that ask one measure at one point, if any."""
    asked: list[tuple[tuple, tuple, int]] = []
    for stop in leg.stops:
        question = question_of(stop, trace)
        if question is None:
            continue
        measure, points = question
        for earlier, where, index in asked:
            if earlier == measure and same_points(where, points):
                return index + 1, stop.index + 1
        asked.append((measure, points, stop.index))
    return None


def check_one_question(leg: Leg) -> list[str]:
    """No roadblock asks what another asks (issue 21, item 3): not one template of inputs that name one
    entity (a country reached by two stops is asked its capital's elevation once), and not one measure
    at one point under two templates (``asked_twice``: the golden trace's points)."""
    stops = {s.index: s for s in leg.stops}

    def named(i: int) -> str:
        source = stops.get(i)
        if source is None or source.fact is None:
            return f"stop {i}"
        return country_key(str(source.value)) if source.fact.role == "country" else str(source.value)
    errors, seen = [], {}
    for stop in leg.stops:
        if stop.kind != ROADBLOCK or stop.roadblock is None:
            continue
        key = (stop.template, tuple(named(i) for i in stop.roadblock.inputs))
        if key in seen:
            errors.append(f"clues {seen[key] + 1} and {stop.index + 1} ask {stop.template} of {', '.join(key[1])}")
        seen.setdefault(key, stop.index)
    if twice := asked_twice(leg, leg.trace):
        errors.append(f"clues {twice[0]} and {twice[1]} ask one question of one point")
    return errors


def check_wide_sets(leg: Leg) -> list[str]:
    """Invariant 13 (issue 34): each wide stop's set, collected again from the golden trace's recorded
    answers the way an agent collects it, is exactly the set the generator enumerated over the world,
    and its figure is the stop's value. The recorded calls are served in order; a call the collection
    makes that the trace does not hold (a page of results skipped) is an error, as is one left over."""
    errors = []
    values = {s.index: s.value for s in leg.stops}
    seen: dict[tuple, int] = {}
    for stop in leg.stops_of(WIDE):
        key = (stop.wide.domain, tuple(sorted(stop.wide.members)))
        if key in seen:   # the second is answered by the first (blind race 34: Egypt's set asked twice)
            errors.append(f"wide stops {seen[key]} and {stop.index} collect one set")
        seen.setdefault(key, stop.index)
        recorded = [t for t in leg.trace if t.stop == stop.index]
        served = iter(recorded)

        def call(tool: str, args: dict, _served=served, _stop=stop) -> dict:
            entry = next(_served, None)
            if entry is None or entry.tool != tool or entry.args != args:
                raise ValueError(f"the collection calls {tool} {args}, the trace holds "
                                 f"{'nothing more' if entry is None else entry.tool + ' ' + str(entry.args)}")
            return json.loads(entry.response)
        try:
            find = collect_wide(stop.wide, wide_input(stop, values), call)
        except (ValueError, KeyError, StopFailed) as exc:
            errors.append(f"wide stop {stop.index}: its trace does not collect a set: {exc}")
            continue
        if next(served, None) is not None:
            errors.append(f"wide stop {stop.index}: its trace holds calls the collection does not make")
        if find.members != sorted(stop.wide.members):
            missing = sorted(set(stop.wide.members) - set(find.members))
            extra = sorted(set(find.members) - set(stop.wide.members))
            errors.append(f"wide stop {stop.index}: the trace collects {len(find.members)} members, the world "
                          f"holds {len(stop.wide.members)} (missing {missing[:5]}, extra {extra[:5]})")
        else:
            try:
                value = wide_value(stop.wide, find)
            except StopFailed as exc:   # a figure no clue may ask (halfway between two whole numbers ...)
                errors.append(f"wide stop {stop.index}: its set gives no value: {exc}")
                continue
            if value != stop.value:
                errors.append(f"wide stop {stop.index}: its set gives {value}, the stop holds {stop.value}")
    return errors


def check_all(leg: Leg, preset: LevelPreset, *, forbidden: list[str], allow_simulated: bool,
              fetch_page: Callable[[str], dict | None]) -> dict[str, list[str]]:
    """Every invariant by number (1-12, as in the README); a key with an empty list holds."""
    checks = {
        "1_dag": lambda: check_dag(leg, preset),
        "2_counts": lambda: check_counts(leg, preset),
        "3_expressions": lambda: check_expressions(leg),
        "4_value_flow": lambda: check_value_flow(leg),
        "5_riddle": lambda: check_riddle(leg, forbidden),
        "6_provenance": lambda: check_provenance(leg, allow_simulated),
        "7_page_facts": lambda: check_page_facts(leg, fetch_page),
        "8_places": lambda: check_places(leg),
        "9_route_inputs": lambda: check_route_inputs(leg),
        "10_bridges": lambda: check_bridges(leg),
        "11_hops": lambda: check_hops(leg, fetch_page),
        "12_one_question": lambda: check_one_question(leg),
        "13_wide_sets": lambda: check_wide_sets(leg),
    }
    out = {}
    for name, check in checks.items():
        try:
            out[name] = check()
        except (expressions.ExpressionError, KeyError, IndexError, TypeError, ValueError) as exc:
            out[name] = [f"cannot be checked: {type(exc).__name__}: {exc}"]
    return out


def summarize(results: list[dict[str, list[str]]]) -> dict[str, Any]:
    keys = sorted({k for r in results for k in r})
    return {k: sum(not r.get(k) for r in results) for k in keys}


# ---- invariant 3, second half: the golden trace executed again ----------------------------
# A dataset must be checkable by someone who did not generate it, so the golden trace is not
# looked up in the generator's cache: every call whose answer is computable here (snapshot,
# packaged data, seeded simulation) is computed again by the offline backends and compared byte
# for byte; a `live` answer cannot be asked again offline, so only its consistency with the rest
# of the trace is checked (it parses, its extract path gives the traced value, later stops follow).
REEXECUTABLE_PROVENANCES = ("snapshot", "offline-data", "simulated")
# Response fields that describe the machine a call ran on rather than its answer: the sandbox
# names its isolation and interpreter. A re-execution differing only there is noted, not failed.
MACHINE_FIELDS = {"python_execute_code": ("isolation", "source")}


@dataclass
class TraceCheck:
    """Outcome of executing one leg's golden trace again, with how each call was checked."""

    errors: list[str] = field(default_factory=list)
    reexecuted: int = 0         # computed again offline, response compared byte for byte
    trace_only: int = 0         # not computable here (live): checked against the trace only
    from_cache: int = 0         # answered by the generator's cache (opt-in speed-up)
    notes: list[str] = field(default_factory=list)   # differences in machine fields only

    def add(self, other: TraceCheck) -> None:
        self.reexecuted += other.reexecuted
        self.trace_only += other.trace_only
        self.from_cache += other.from_cache
        self.notes += other.notes


class TraceMismatch(Exception):
    """Executing the leg asks for a call the golden trace does not have at that position."""


def _first_difference(a: str, b: str) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"at character {at}: trace {a[max(0, at - 20):at + 20]!r}, now {b[max(0, at - 20):at + 20]!r}"


def _without(response: str, names: tuple[str, ...]) -> Any:
    try:
        data = json.loads(response)
    except ValueError:
        return None
    return {k: v for k, v in data.items() if k not in names} if isinstance(data, dict) else data


class _TraceAnswers:
    """Stands in for the Toolbox while a leg is executed again: each call must be the next
    traced one; computable calls go to the offline toolbox (or the generator's cache when
    asked), live ones are answered with the traced response."""

    def __init__(self, leg: Leg, offline, recorded: list, check: TraceCheck):
        self.trace, self.offline, self.recorded, self.check = leg.trace, offline, recorded, check
        self.position = 0

    def _label(self, n: int) -> str:
        t = self.trace[n]
        return f"call {n} (stop {t.stop} step {t.step}, {t.tool})"

    def _from_cache(self, name: str, args: dict):
        for toolbox in self.recorded:
            try:
                return toolbox.call(name, args)
            except ReplayMiss:
                continue
        return None

    def call(self, name: str, args: dict):
        n = self.position
        if n >= len(self.trace):
            raise TraceMismatch(f"call {n} ({name} {canonical_json(args)}) is not in the golden trace")
        entry = self.trace[n]
        if entry.tool != name or canonical_json(entry.args) != canonical_json(args):
            raise TraceMismatch(f"{self._label(n)}: executing the leg asks {name} {canonical_json(args)},"
                                f" the trace has {entry.tool} {canonical_json(entry.args)}")
        self.position += 1
        result = self._from_cache(name, args) if self.recorded else None
        if result is not None:
            self.check.from_cache += 1
        elif entry.provenance in REEXECUTABLE_PROVENANCES:
            result = self.offline.call(name, args)
            self.check.reexecuted += 1
        else:
            self.check.trace_only += 1
            try:
                data = json.loads(entry.response)
            except (TypeError, ValueError) as exc:
                raise TraceMismatch(f"{self._label(n)}: traced response is not JSON: {exc}") from None
            if not isinstance(data, dict) or canonical_json(data) != entry.response:
                raise TraceMismatch(f"{self._label(n)}: traced response is not a canonical JSON object")
            if data.get("provenance") != entry.provenance:
                raise TraceMismatch(f"{self._label(n)}: traced response says provenance {data.get('provenance')!r},"
                                    f" the trace entry {entry.provenance!r}")
            return ToolResult(name, args, "error" not in data, data, entry.response, "replay")
        if result.response_json != entry.response:
            machine = MACHINE_FIELDS.get(name, ())
            if machine and _without(result.response_json, machine) == _without(entry.response, machine):
                self.check.notes.append(f"{self._label(n)}: same answer, other machine "
                                        f"({_first_difference(entry.response, result.response_json)})")
            else:
                self.check.errors.append(f"{self._label(n)}: response differs from the trace "
                                         f"{_first_difference(entry.response, result.response_json)}")
        return result


def check_golden_trace(leg: Leg, offline, recorded: list | None = None) -> TraceCheck:
    """Execute the leg again through ``offline`` (a Toolbox on offline backends); every
    value, response byte and y* must match the golden trace. ``recorded``: replay Toolboxes
    on the generator's cache, asked first when given (a speed-up, never required)."""
    check = TraceCheck()
    answers = _TraceAnswers(leg, offline, recorded or [], check)
    try:
        values, trace = execute_leg(leg, answers)
    except (StopFailed, TraceMismatch, ToolError) as exc:
        check.errors.append(f"re-execution failed: {exc}")
        return check
    if answers.position < len(leg.trace):
        check.errors.append(f"the golden trace has {len(leg.trace) - answers.position} calls the re-execution"
                            f" never made, from {answers._label(answers.position)}")
    for n, (now, golden) in enumerate(zip(trace, leg.trace)):
        if now.value != golden.value:
            check.errors.append(f"{answers._label(n)} yields {now.value!r}, the trace says {golden.value!r}")
        if now.provenance != golden.provenance:
            check.errors.append(f"{answers._label(n)} has provenance {now.provenance!r}, "
                                f"the trace says {golden.provenance!r}")
    check.errors += [f"stop {s.index} re-executes to {values[s.index]!r}, the leg says {s.value!r}"
                     for s in leg.stops if values[s.index] != s.value]
    if leg.stops and values[leg.stops[-1].index] != leg.passcode:
        check.errors.append(f"y* re-executes to {values[leg.stops[-1].index]!r}, the leg says {leg.passcode!r}")
    return check
