"""Geometry for the report's inline SVG pictures (the templates draw it, so every label is
escaped by jinja2): a leg's dependency DAG and stacked share bars."""
from __future__ import annotations

import itertools
from statistics import mean
from typing import Any

import networkx as nx

from pipeline.invariants import dependency_graph
from pipeline.model import DETOUR, FINISH_LINE, MERGE, ROADBLOCK, ROUTE_INFO, WIDE, Leg

KIND_COLOURS = {
    ROUTE_INFO: "#3b6ea8",
    ROADBLOCK: "#d9731a",
    DETOUR: "#3f8f3a",
    MERGE: "#8e5ba6",
    FINISH_LINE: "#c0392b",
    WIDE: "#1a8a8a",
}
KIND_LABELS = {ROUTE_INFO: "route info (page)", ROADBLOCK: "roadblock (tools)", DETOUR: "detour (transform)",
               MERGE: "merge (diamond)", FINISH_LINE: "finish line", WIDE: "wide (a whole set)"}
UNKNOWN_COLOUR = "#777777"

NODE_W, NODE_H = 176, 58
COL_STEP, ROW_STEP = 236, 96      # distance between layer columns / between nodes of a layer
MARGIN = 24


def shorten(text: Any, limit: int) -> str:
    s = "" if text is None else str(text)
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "\u2026"


def spread(desired: list[float], gap: float = 1.0) -> list[float]:
    """Positions closest (least squares) to ``desired`` that keep their order at least ``gap``
    apart: isotonic regression of desired[i] - i*gap by pooling adjacent violators."""
    blocks: list[list[float]] = []            # [sum, count] of pooled targets
    for i, d in enumerate(desired):
        blocks.append([d - i * gap, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    pooled = [total / count for total, count in blocks for _ in range(int(count))]
    return [z + i * gap for i, z in enumerate(pooled)]


def dependency_layers(leg: Leg) -> tuple[list[list[int]], dict[int, float]]:
    """Stops grouped by longest-path depth over ``depends_on`` (layer = topological generation),
    and a row for each: a stop sits near the mean row of its dependencies (fewer, shorter
    crossings), in order, one row apart; diamond parts stay together."""
    g = dependency_graph(leg)
    try:
        generations = [sorted(gen) for gen in nx.topological_generations(g)]
    except nx.NetworkXUnfeasible:           # a broken leg (cycle): one stop per layer, in order
        generations = [[s.index] for s in leg.stops]
    diamond = {s.index: s.diamond for s in leg.stops}
    row: dict[int, float] = {}
    layers: list[list[int]] = []
    for gen in generations:
        def wanted(n: int) -> float | None:
            preds = [row[p] for p in g.predecessors(n) if p in row]
            return mean(preds) if preds else None
        ordered = sorted(gen, key=lambda n: (wanted(n) if wanted(n) is not None else 0.0,
                                             diamond[n] if diamond.get(n) is not None else -1, n))
        centred = [i - (len(ordered) - 1) / 2 for i in range(len(ordered))]
        desired = [wanted(n) if wanted(n) is not None else c for n, c in zip(ordered, centred)]
        row.update(zip(ordered, spread(desired)))
        layers.append(ordered)
    return layers, row


def dag_picture(leg: Leg) -> dict[str, Any]:
    """Nodes, edges and diamond outlines of a leg in pixels (layers left to right)."""
    g = dependency_graph(leg)
    layers, row = dependency_layers(leg)
    # networkx places the layers (columns, one unit apart after its rescaling); rows come from
    # dependency_layers, which keeps a stop beside what it depends on instead of centring layers.
    pos = nx.multipartite_layout(g, subset_key={i: layer for i, layer in enumerate(layers)}, align="vertical")
    xs = sorted({round(float(p[0]), 9) for p in pos.values()})
    column = {x: i for i, x in enumerate(xs)}
    top = min(row.values(), default=0.0)
    stops = {s.index: s for s in leg.stops}
    nodes = []
    at: dict[int, tuple[float, float]] = {}
    for n in sorted(pos):
        x = MARGIN + column[round(float(pos[n][0]), 9)] * COL_STEP
        y = round(MARGIN + 18 + (row[n] - top) * ROW_STEP, 1)
        at[n] = (x, y)
        s = stops[n]
        nodes.append({
            "index": n, "kind": s.kind, "x": x, "y": y, "w": NODE_W, "h": NODE_H,
            "colour": KIND_COLOURS.get(s.kind, UNKNOWN_COLOUR),
            "label": f"s{n} \u00b7 {s.kind.replace('_', ' ')}",
            "detail": shorten(stop_operation(s), 26),
            "value": "= " + shorten(format_value(s.value), 22),
            "title": f"stop {n} (clue {n + 1}), {s.kind}: {s.description} [{stop_operation(s)}]",
            "diamond": s.diamond if s.diamond_role in ("branch", "merge", "source") else None,
            "diamond_role": s.diamond_role,
        })
    columns: dict[float, list[float]] = {}
    for x, y in at.values():
        columns.setdefault(x, []).append(y)
    edges = []
    for a, b in sorted(g.edges()):
        role_a, role_b = stops[a].diamond_role, stops[b].diamond_role
        forks = role_b == "branch" and role_a == "source"
        joins = role_b == "merge" and role_a == "branch" and stops[a].diamond == stops[b].diamond
        edges.append({"from": a, "to": b, "d": edge_path(at[a], at[b], columns), "diamond": forks or joins})
    boxes = []
    for number in sorted({s.diamond for s in leg.stops if s.diamond is not None and s.diamond_role in ("branch", "merge")}):
        parts = [at[s.index] for s in leg.stops if s.diamond == number and s.diamond_role in ("branch", "merge")]
        pad = 9
        left = min(x for x, _ in parts) - pad
        top = min(y for _, y in parts) - pad - 14
        boxes.append({"number": number, "x": left, "y": top,
                      "w": max(x for x, _ in parts) + NODE_W + pad - left,
                      "h": max(y for _, y in parts) + NODE_H + pad - top})
    width = max((x + NODE_W for x, _ in at.values()), default=0) + MARGIN + 10
    height = max((y + NODE_H for _, y in at.values()), default=0) + MARGIN + 10
    return {"width": width, "height": height, "nodes": nodes, "edges": edges, "diamonds": boxes}


def edge_path(src: tuple[float, float], dst: tuple[float, float], columns: dict[float, list[float]]) -> str:
    """An SVG path from the right side of one node to the left side of another; an edge that
    skips layers runs through the gaps between the nodes of each column it crosses."""
    (ax, ay), (bx, by) = src, dst
    sy, ty = ay + NODE_H / 2, by + NODE_H / 2
    points = [(ax + NODE_W, sy)]
    for cx in sorted(x for x in columns if ax < x < bx):
        want = sy + (ty - sy) * (cx - ax) / (bx - ax)
        tops = sorted(columns[cx])
        gap = (ROW_STEP - NODE_H) / 2
        candidates = [tops[0] - gap, tops[-1] + NODE_H + gap]
        candidates += [t1 + NODE_H + (t2 - t1 - NODE_H) / 2 for t1, t2 in itertools.pairwise(tops) if t2 - t1 > NODE_H]
        if not any(t - 4 <= want <= t + NODE_H + 4 for t in tops):
            candidates.append(want)
        y = min(candidates, key=lambda c: (abs(c - want), c))
        points += [(cx - 10, y), (cx + NODE_W + 10, y)]
    points.append((bx - 6, ty))
    d = [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for i, ((x1, y1), (x2, y2)) in enumerate(itertools.pairwise(points)):
        if i % 2 == 1:                       # across a column: straight
            d.append(f"L{x2:.1f},{y2:.1f}")
        else:                                # between columns: smooth with level tangents
            mid = (x1 + x2) / 2
            d.append(f"C{mid:.1f},{y1:.1f} {mid:.1f},{y2:.1f} {x2:.1f},{y2:.1f}")
    return " ".join(d)


def stop_operation(stop) -> str:
    """What a stop does, in one line: page, template, transform or expression."""
    if stop.kind == ROUTE_INFO:
        return stop.page_title or stop.page_url or ""
    if stop.kind == DETOUR:
        return f"{stop.transform}(s{stop.source_stop})" if stop.source_stop is not None else (stop.transform or "")
    if stop.kind in (MERGE, FINISH_LINE):
        return stop.expression or stop.template or ""
    return stop.template or " \u2192 ".join(step.tool for step in stop.tool_chain)


def format_value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict) and {"lat", "lng"} <= set(value):
        return f"{value['lat']}, {value['lng']}"
    return "" if value is None else str(value)


def stacked_bars(rows: list[tuple[str, dict[str, float], str]], segments: list[tuple[str, str, str]],
                 bar_width: int = 560, label_width: int = 230) -> dict[str, Any]:
    """Horizontal 100 % bars. ``rows``: (label, share per segment key, note); ``segments``:
    (key, label, colour). Shares are fractions of 1; segments under 0.5 % are drawn but not labelled."""
    bar_h, gap, top = 22, 10, 8
    bars = []
    for i, (label, shares, note) in enumerate(rows):
        y = top + i * (bar_h + gap)
        x = label_width
        rects = []
        for key, seg_label, colour in segments:
            share = max(0.0, float(shares.get(key) or 0.0))
            w = share * bar_width
            rects.append({"x": x, "w": w, "colour": colour, "share": share,
                          "text": f"{100 * share:.0f}%" if w >= 34 else "",
                          "title": f"{label}: {seg_label} {100 * share:.1f}%"})
            x += w
        bars.append({"label": label, "note": note, "y": y, "h": bar_h, "rects": rects})
    return {"width": label_width + bar_width + 90, "height": top + len(rows) * (bar_h + gap) + 4,
            "bars": bars, "label_width": label_width, "bar_width": bar_width,
            "legend": [{"label": seg_label, "colour": colour} for _, seg_label, colour in segments]}
