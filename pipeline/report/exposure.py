"""Can a page stop be skipped? For every page stop after the seed, a ``web_search`` made with its
clue's own words: is the stop's page in the top 5, and does a top-5 snippet show the stop's value
(``verbalize.value_shown``, the test verbalize applies when it words a clue)? Issue 14's goal: the
value shows for at most 5 % of page stops. Used by the report and ``benchmarks/snippets.py``."""
from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from pipeline.model import ROUTE_INFO, Leg
from pipeline.report.stats import group_order
from pipeline.stages.verbalize import value_shown

TOP_K = 5


def stop_exposure(leg: Leg, toolbox) -> list[dict[str, Any]]:
    """One row per page stop (the seed page excluded: its address is given): the fact's source, page
    found in the top 5, value shown in a top-5 snippet."""
    clues = {c.stop: c.text for c in leg.clues}
    rows = []
    for stop in leg.stops:
        if stop.kind != ROUTE_INFO or stop.index == 0 or stop.index not in clues:
            continue
        query = re.sub(r"^\s*\d+\.\s*", "", clues[stop.index])[:300]
        found = toolbox.call("web_search", {"query": query})
        results = (json.loads(found.response_json).get("results") or [])[:TOP_K] if found.ok else []
        rows.append({"source": stop.extraction.source if stop.extraction else "?",
                     "page_found": any(r.get("title") == stop.page_title for r in results),
                     "value_shown": value_shown(stop.value, [r.get("snippet", "") for r in results])})
    return rows


def _shares(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {"page_stops": n,
            "page_found_share": sum(r["page_found"] for r in rows) / n if n else None,
            "value_shown_share": sum(r["value_shown"] for r in rows) / n if n else None}


def search_exposure(legs: list[Leg], toolbox) -> dict[str, list[dict[str, Any]]]:
    """``by_group``: per (variant, level) and ``all``; ``by_source``: per kind of fact."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    sources: dict[str, list[dict]] = defaultdict(list)
    for leg in legs:
        for row in stop_exposure(leg, toolbox):
            groups[(leg.variant, leg.level)].append(row)
            sources[row["source"]].append(row)
    every = [r for rows in groups.values() for r in rows]
    by_group = [{"variant": v, "level": l, **_shares(rows)}
                for (v, l), rows in sorted(groups.items(), key=lambda kv: group_order(kv[0]))]
    by_group.append({"variant": "all", "level": "", **_shares(every)})
    return {"by_group": by_group,
            "by_source": [{"source": s, **_shares(rows)} for s, rows in sorted(sources.items())]}
