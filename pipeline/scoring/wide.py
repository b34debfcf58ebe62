"""Item-level recall and precision of a leg's wide stops (issue 34), as WideSearch scores a table's
items: per wide stop, which members of the exact set an agent's tool log reached, and how many of
the items it looked up one by one were members.

A member is *reached* when a call of the agent names it in its arguments (a country's name, an
airport's IATA code, a page's title), points at it (a point within ``POINT_TOLERANCE`` degrees of the
member's point: a capital in a distance matrix, an airport in an elevation call), repeats one of
the golden collection's calls (same tool and arguments) whose answer lists it (a page of the place
search), reads a search or a page's links that the golden collection read whole at an offset or page
size where that slice holds it, or runs code that carries it (its name quoted, or its point's two
numbers as the tools gave them: a list pasted into ``python_execute_code``). A *looked-up* item is a candidate of the stop's domain (every country
the golden trace listed, every airport or page it found) that the agent named or pointed at; precision
is the share of those that are members, undefined when the agent looked up none one by one (a count
read from a search's total; a list worked through in code is reached, not looked up one by one). The log keeps only previews of answers, so nothing is read from them."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pipeline.execute import shown_links
from pipeline.model import WIDE, Leg
from pipeline.scoring.matching import args_match
from pipeline.scoring.trials import Trial
from pipeline.scoring.urls import page_key

POINT_TOLERANCE = 0.01   # degrees: a point this near a member's is that member


@dataclass
class WideReach:
    stop: int
    domain: str
    members: int
    reached: int
    looked_up: int
    looked_up_members: int

    @property
    def recall(self) -> float:
        return self.reached / self.members if self.members else 1.0

    @property
    def precision(self) -> float | None:
        return self.looked_up_members / self.looked_up if self.looked_up else None

    def to_dict(self) -> dict[str, Any]:
        return {"stop": self.stop, "domain": self.domain, "members": self.members, "reached": self.reached,
                "recall": round(self.recall, 4),
                "precision": None if self.precision is None else round(self.precision, 4)}


def _candidates(domain: str, responses: list[tuple[str, dict, dict]]) -> tuple[dict[str, tuple], list]:
    """The items the golden collection met (id -> point, or () for pages) and its listing calls with
    the ids each answer lists."""
    points: dict[str, tuple] = {}
    listings = []
    for tool, args, data in responses:
        if tool == "countries_list":
            for c in data.get("countries", []):
                points[c["name"]] = (c["lat"], c["lng"])
        elif tool == "maps_search_places":
            ids = [p["iata"] for p in data.get("places", []) if p.get("iata")]
            points.update({p["iata"]: (p["lat"], p["lng"]) for p in data.get("places", []) if p.get("iata")})
            listings.append((tool, args, ids))
        elif tool == "fetch_webpage" and "links_offset" in args:   # a page's links (reached: ``_slice_shown``)
            points.update({t: () for t in shown_links(data)})
        elif tool == "web_search":
            ids = [r["title"] for r in data.get("results", [])]
            points.update({t: () for t in ids})
            listings.append((tool, args, ids))
    return points, listings


def _points_in(value: Any):
    if isinstance(value, dict):
        if isinstance(value.get("lat"), (int, float)) and isinstance(value.get("lng"), (int, float)):
            yield (float(value["lat"]), float(value["lng"]))
        for v in value.values():
            yield from _points_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from _points_in(v)


SEARCH_DEFAULT_RESULTS = 5   # web_search's num_results when a call leaves it out (the tool's schema)


def _search_family(args: dict) -> tuple[str, str, str]:
    return (" ".join(str(args.get("query", "")).lower().split()), args.get("mode", "words"), args.get("field", "all"))


def _ranked_listings(responses: list[tuple[str, dict, dict]]) -> dict[tuple, list[str]]:
    """Every whole listing the golden collection read, in its order: a search's ranked matches (its
    pages in offset order) by (query, mode, field), a page's links (the answer at links offset 0 holds
    them all) by the page. An agent's call of the same listing at any offset or page size is a slice of
    it, so what it showed is known without running the tool."""
    out: dict[tuple, list[str]] = {}
    for tool, args, data in responses:
        if tool == "web_search":
            out.setdefault(("web_search", *_search_family(args)), []).extend(r["title"] for r in data.get("results", []))
        elif tool == "fetch_webpage" and args.get("links_offset") == 0:
            out[("links", page_key(str(args.get("url", ""))))] = list(data.get("links", []))
    return out


def _slice_shown(call_tool: str, args: dict, ranked: dict[tuple, list[str]]) -> set[str]:
    """What an agent's search or links call showed, read off the golden listing it slices (empty when
    the golden collection read no such listing)."""
    if call_tool == "web_search":
        whole = ranked.get(("web_search", *_search_family(args)))
        if whole is None:
            return set()
        n = int(args.get("num_results") or SEARCH_DEFAULT_RESULTS)
        start = int(args.get("offset") or 0) if args.get("page") is None else (int(args["page"]) - 1) * n
        return set(whole[start:start + n])
    if call_tool == "fetch_webpage" and "links_offset" in args:
        whole = ranked.get(("links", page_key(str(args.get("url", "")))))
        if whole is None:
            return set()
        start = int(args.get("links_offset") or 0)
        return set(shown_links({"links": whole[start:], "links_offset": start, "links_total": len(whole)}))
    return set()


CODE_TOOLS = ("python_execute_code", "calculator")
CENTER_TOLERANCE = 0.05   # degrees: a search centred this near the golden one searches the same place


def _same_search(golden: dict, actual: dict) -> bool:
    """An agent's place search that lists what a golden page of it lists: the same query, at least the
    radius, the same offset, centred on the golden point or on a place's name (the tools geocode a name
    to the point the golden run started from; the scorer runs no tool to check it)."""
    if "radius_m" not in golden or str(actual.get("query", "")).strip().lower().rstrip("s") != golden.get("query"):
        return False
    if not isinstance(actual.get("radius_m"), (int, float)) or actual["radius_m"] < golden["radius_m"] * 0.99:
        return False
    if int(actual.get("offset", 0) or 0) != int(golden.get("offset", 0)):
        return False
    where, center = actual.get("location"), golden.get("location")
    if isinstance(where, str):
        return True
    return isinstance(where, dict) and isinstance(center, dict) and all(
        isinstance(where.get(k), (int, float)) and abs(where[k] - center[k]) <= CENTER_TOLERANCE for k in ("lat", "lng"))


def _in_code(key: str, point: tuple, code: str) -> bool:
    """Does code an agent ran carry a member: its name or code quoted, or its point's two numbers as the
    tools gave them (a list pasted into the code)?"""
    if f'"{key}"' in code or f"'{key}'" in code:
        return True
    return bool(point) and repr(point[0]) in code and repr(point[1]) in code


def wide_reach(leg: Leg, trial: Trial) -> list[WideReach]:
    out = []
    for stop in leg.stops_of(WIDE):
        members = set(stop.wide.members)
        responses = [(t.tool, t.args, json.loads(t.response)) for t in leg.trace if t.stop == stop.index]
        points, listings = _candidates(stop.wide.domain, responses)
        ranked = _ranked_listings(responses)
        reached: set[str] = set()
        looked: set[str] = set()
        for call in trial.calls:
            if call.tool in CODE_TOOLS:   # a whole list worked through in code: reached, not looked up one by one
                code = " ".join(v for v in call.args.values() if isinstance(v, str))
                reached |= {k for k in members if k in points and _in_code(k, points[k], code)}
                continue
            text = json.dumps(call.args, ensure_ascii=False)
            named = {k for k in points if json.dumps(k, ensure_ascii=False) in text
                     or f'/wiki/{k.replace(" ", "_")}"' in text}
            pointed = {k for k, p in points.items() if p for q in _points_in(call.args)
                       if abs(p[0] - q[0]) <= POINT_TOLERANCE and abs(p[1] - q[1]) <= POINT_TOLERANCE}
            looked |= named | pointed
            reached |= (named | pointed) & members
            for tool, args, ids in listings:
                if call.tool == tool and (args_match(args, call.args) or _same_search(args, call.args)):
                    reached |= set(ids) & members
            reached |= _slice_shown(call.tool, call.args, ranked) & members
        out.append(WideReach(stop.index, stop.wide.domain, len(members), len(reached),
                             len(looked), len(looked & members)))
    return out
