"""Dataset statistics computed from legs alone, in the shape of the AAR benchmark's tables.

Every function takes a list of ``Leg`` and returns plain dicts/lists (sorted, deterministic) that
the HTML templates render and the tests check against hand computations.
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from statistics import mean, median
from typing import Any

from pipeline.model import DETOUR, LEVELS, MERGE, ROADBLOCK, ROUTE_INFO, VARIANTS, WIDE, Leg

# Provenance columns in display order; anything else (e.g. "replay", missing) is "other".
PROVENANCE_ORDER = ("snapshot", "offline-data", "simulated", "live")
OTHER = "other"


def group_order(key: tuple[str, str]) -> tuple:
    variant, level = key
    return (VARIANTS.index(variant) if variant in VARIANTS else len(VARIANTS), variant,
            LEVELS.index(level) if level in LEVELS else len(LEVELS), level)


def by_variant_level(legs: Iterable[Leg]) -> list[tuple[tuple[str, str], list[Leg]]]:
    groups: dict[tuple[str, str], list[Leg]] = defaultdict(list)
    for leg in legs:
        groups[(leg.variant, leg.level)].append(leg)
    return sorted(groups.items(), key=lambda kv: group_order(kv[0]))


def tool_calls(leg: Leg) -> list[str]:
    """Tool names of the leg's golden calls; a leg without a trace (AAR import) uses its tool chains."""
    if leg.trace:
        return [t.tool for t in leg.trace]
    return [step.tool for s in leg.stops for step in s.tool_chain]


def leg_counts(leg: Leg) -> dict[str, Any]:
    kinds = Counter(s.kind for s in leg.stops)
    return {
        "stops": len(leg.stops),
        "route_info": kinds[ROUTE_INFO],
        "roadblocks": kinds[ROADBLOCK],
        "detours": kinds[DETOUR],
        "merges": kinds[MERGE],
        "diamonds": leg.diamonds,
        "tool_calls": len(tool_calls(leg)),
    }


def _summary(legs: list[Leg]) -> dict[str, Any]:
    counts = [leg_counts(leg) for leg in legs]
    row: dict[str, Any] = {"legs": len(legs)}
    for key in ("stops", "route_info", "roadblocks", "detours", "diamonds", "tool_calls"):
        row[f"mean_{key}"] = float(mean(c[key] for c in counts)) if counts else None
    # "% linear" as in AAR: the share of legs without any diamond (a DAG leg may have none)
    row["pct_linear"] = 100.0 * sum(c["diamonds"] == 0 for c in counts) / len(counts) if counts else None
    return row


def dataset_statistics(legs: list[Leg]) -> list[dict[str, Any]]:
    """One row per (variant, level) plus a final ``all`` row: legs, mean stops, mean page stops,
    mean roadblocks, mean detours, mean diamonds, mean golden tool calls, % linear."""
    rows = [{"variant": v, "level": l, **_summary(group)} for (v, l), group in by_variant_level(legs)]
    rows.append({"variant": "all", "level": "", **_summary(legs)})
    return rows


def tool_usage(legs: list[Leg]) -> list[dict[str, Any]]:
    """Per tool: golden calls, legs using it, and calls per provenance (golden trace)."""
    calls: Counter[str] = Counter()
    legs_using: Counter[str] = Counter()
    prov: dict[str, Counter[str]] = defaultdict(Counter)
    for leg in legs:
        names = tool_calls(leg)
        calls.update(names)
        legs_using.update(set(names))
        for t in leg.trace:
            prov[t.tool][_provenance_column(t.provenance)] += 1
    total = sum(calls.values())
    return [{"tool": tool, "calls": n, "legs": legs_using[tool], "share": n / total if total else 0.0,
             "provenance": {p: prov[tool][p] for p in (*PROVENANCE_ORDER, OTHER)}}
            for tool, n in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))]


def _provenance_column(p: str | None) -> str:
    return p if p in PROVENANCE_ORDER else OTHER


def provenance_counts(legs: Iterable[Leg]) -> dict[str, int]:
    c = Counter(_provenance_column(t.provenance) for leg in legs for t in leg.trace)
    return {p: c[p] for p in (*PROVENANCE_ORDER, OTHER)}


def provenance_shares(legs: list[Leg]) -> list[dict[str, Any]]:
    """Shares of golden-trace tool values by provenance, per (variant, level) and overall."""
    def row(variant: str, level: str, group: list[Leg]) -> dict[str, Any]:
        counts = provenance_counts(group)
        n = sum(counts.values())
        return {"variant": variant, "level": level, "n_values": n, "counts": counts,
                "shares": {p: (c / n if n else 0.0) for p, c in counts.items()}}
    rows = [row(v, l, g) for (v, l), g in by_variant_level(legs)]
    rows.append(row("all", "", legs))
    return rows


def template_usage(legs: list[Leg], known_roadblocks: Iterable[str] = (),
                   known_diamonds: Iterable[str] = ()) -> dict[str, list[dict[str, Any]]]:
    """How often each roadblock template, diamond type (merge) and detour transform is used.
    Templates named in ``known_*`` but never used are listed with zero so gaps show."""
    def table(stops, known: Iterable[str], attr: str) -> list[dict[str, Any]]:
        uses: Counter[str] = Counter()
        in_diamond: Counter[str] = Counter()
        legs_with: dict[str, set[str]] = defaultdict(set)
        for leg_id, s in stops:
            name = getattr(s, attr) or "(none)"
            uses[name] += 1
            in_diamond[name] += s.diamond_role == "branch"
            legs_with[name].add(leg_id)
        for name in known:
            uses.setdefault(name, 0)
        return [{"name": name, "uses": n, "legs": len(legs_with[name]), "in_diamonds": in_diamond[name]}
                for name, n in sorted(uses.items(), key=lambda kv: (-kv[1], kv[0]))]

    def stops_of(kind: str):
        return [(leg.leg_id, s) for leg in legs for s in leg.stops if s.kind == kind]

    return {
        "roadblocks": table(stops_of(ROADBLOCK), known_roadblocks, "template"),
        "diamonds": table(stops_of(MERGE), known_diamonds, "template"),
        "detours": table(stops_of(DETOUR), (), "transform"),
    }


def route_pages(leg: Leg) -> list[str]:
    """The pages a leg sends the agent to read (its page stops, in order; a page may recur)."""
    return [s.page_title for s in leg.stops if s.kind == ROUTE_INFO and s.page_title]


def mean_page_overlap(legs: list[Leg]) -> float | None:
    """Mean Jaccard similarity of the route-page sets over all pairs of legs (0: no two legs share a
    page; 1: every leg reads the same pages). Only pairs sharing a page are visited (inverted index),
    so a release of thousands of legs costs what its shared pages cost."""
    sets = [frozenset(route_pages(leg)) for leg in legs]
    n = len(sets)
    if n < 2:
        return None
    holders: dict[str, list[int]] = defaultdict(list)
    for i, pages in enumerate(sets):
        for page in pages:
            holders[page].append(i)
    shared: Counter[tuple[int, int]] = Counter()
    for idx in holders.values():
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                shared[(idx[a], idx[b])] += 1
    total = sum(k / (len(sets[i]) + len(sets[j]) - k) for (i, j), k in shared.items())
    return total / (n * (n - 1) / 2)


def _spread(legs: list[Leg]) -> dict[str, Any]:
    seeds = Counter(leg.seed_title for leg in legs)
    visits = [p for leg in legs for p in route_pages(leg)]
    prov = provenance_counts(legs)
    values = sum(prov.values())
    return {
        "legs": len(legs),
        "distinct_seeds": len(seeds),
        "max_seed_uses": max(seeds.values()) if seeds else 0,
        "page_visits": len(visits),
        "distinct_pages": len(set(visits)),
        "distinct_page_share": len(set(visits)) / len(visits) if visits else None,
        "mean_page_overlap": mean_page_overlap(legs),
        "simulated_share": prov["simulated"] / values if values else None,
        **_hops(legs),
    }


def _hops(legs: list[Leg]) -> dict[str, Any]:
    """Issue 21: hops per leg (page stops reached through the page before) and, of them, choices."""
    relations = [s.transition.relation for leg in legs for s in leg.stops
                 if s.transition is not None and s.transition.relation is not None]
    n = len(legs) or 1
    return {"hops_per_leg": len(relations) / n if legs else None,
            "choices_per_leg": sum(r.kind == "choice" for r in relations) / n if legs else None}


def world_spread(legs: list[Leg]) -> list[dict[str, Any]]:
    """How widely legs spread over the world, per (variant, level) and overall: distinct seeds and
    the most any seed starts, distinct pages among page visits, the mean page overlap between legs,
    and the share of golden tool values that are simulated (issue 14's figures); hops and choices per
    leg (issue 21)."""
    rows = [{"variant": v, "level": l, **_spread(group)} for (v, l), group in by_variant_level(legs)]
    rows.append({"variant": "all", "level": "", **_spread(legs)})
    return rows


def spread_line(row: dict[str, Any]) -> str:
    """One line of ``world_spread`` for a terminal."""
    def pct(x):
        return "n/a" if x is None else f"{100 * x:.1f}%"
    overlap = "n/a" if row["mean_page_overlap"] is None else f"{row['mean_page_overlap']:.3f}"
    return (f"{row['legs']} legs: {row['distinct_seeds']} distinct seeds (most used {row['max_seed_uses']}x), "
            f"{row['distinct_pages']} distinct pages in {row['page_visits']} page visits "
            f"({pct(row['distinct_page_share'])}), mean page overlap {overlap}, "
            f"simulated tool values {pct(row['simulated_share'])}")


def blind_races(folder) -> list[dict[str, Any]]:
    """The blind races' scores (``benchmarks/blind_race/race-*/score.json``: capable agents that saw only
    the seed URL, the riddle and the tools), pooled by level: how hard the legs are for a capable agent,
    measured rather than assumed. Empty when the folder holds no race (an installed package)."""
    pooled: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    races = sorted(Path(folder).glob("race-*/score.json"))
    for path in races:
        for group in json.loads(path.read_text()).get("groups", []):
            row, n = pooled[group["level"]], group["n"]
            row["legs"] += n
            for key in ("fa", "pvr", "steps"):
                row[key] += n * (group.get(key) or 0.0)
            if group.get("wide_recall") is not None:   # races of legs with wide stops (issue 34)
                row["wide_legs"] += n
                row["wide_recall"] += n * group["wide_recall"]
    return [{"level": level, "races": len(races), "legs": int(row["legs"]), "fa": row["fa"] / row["legs"],
             "pvr": row["pvr"] / row["legs"], "calls": row["steps"] / row["legs"],
             "wide_recall": row["wide_recall"] / row["wide_legs"] if row["wide_legs"] else None}
            for level, row in sorted(pooled.items(), key=lambda kv: LEVELS.index(kv[0]) if kv[0] in LEVELS else 99)]


def wide_stats(legs: list[Leg]) -> list[dict[str, Any]]:
    """Per level: the wide stops of the legs (issue 34), their sets' sizes and what they collect."""
    rows = []
    for level in LEVELS:
        of_level = [leg for leg in legs if leg.level == level]
        if not of_level:
            continue
        wide = [s for leg in of_level for s in leg.stops_of(WIDE)]
        sizes = sorted(len(s.wide.members) for s in wide)
        kinds = Counter(f"{s.wide.domain} {s.wide.aggregate}" for s in wide)
        rows.append({"level": level, "legs": len(of_level), "wide": len(wide),
                     "sizes": f"{sizes[0]}-{sizes[-1]} (median {median(sizes):g})" if sizes else "none",
                     "kinds": ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"})
    return rows
