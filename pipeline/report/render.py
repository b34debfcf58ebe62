"""Render the static HTML report with jinja2 (autoescape on): ``index.html`` and one page per leg.

Self-contained pages: CSS inlined from ``templates/report/report.css``, pictures as inline SVG,
no script and nothing fetched at view time. Deterministic: same legs and report, same bytes.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jinja2

from pipeline.config import PROJECT_ROOT
from pipeline.model import DETOUR, FINISH_LINE, MERGE, STOP_KINDS, Leg
from pipeline.report import charts, stats
from pipeline.report.checks import invariant_summary

TEMPLATES_DIR = PROJECT_ROOT / "templates" / "report"
PREVIEW_CHARS = 240

PROVENANCE_COLOURS = {"snapshot": "#3b6ea8", "offline-data": "#3f8f3a", "simulated": "#d9731a", "live": "#8e5ba6",
                      stats.OTHER: "#9a9a9a"}
OUTCOME_SEGMENTS = [("solved", "solved (FA = 1)", "#3f8f3a"), ("navigation", "navigation error", "#3b6ea8"),
                    ("tool_use", "tool-use error", "#d9731a"), ("computation", "computation error", "#8e5ba6"),
                    ("invalid", "invalid trial", "#9a9a9a")]


def leg_filename(leg_id: str) -> str:
    """A file name for a leg page that cannot leave the ``legs/`` folder."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", leg_id).lstrip(".") + ".html"


def _num(x: Any, digits: int | None = None) -> str:
    """A number for a table cell; with ``digits`` every number gets that many decimals."""
    if x is None:
        return "\u2013"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if digits is None:
        return str(x) if isinstance(x, int) else f"{x:.2f}"
    return f"{x:.{digits}f}"


def _pct(x: Any, digits: int = 1) -> str:
    """A fraction of 1 as a percentage."""
    return "\u2013" if x is None else f"{100 * x:.{digits}f}%"


def environment(templates_dir: Path = TEMPLATES_DIR) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.globals.update(kind_colours=charts.KIND_COLOURS, kind_labels=charts.KIND_LABELS, stop_kinds=STOP_KINDS,
                       provenance_colours=PROVENANCE_COLOURS)
    return env


def _preview(text: Any, limit: int = PREVIEW_CHARS) -> str:
    s = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, sort_keys=True)
    return s if len(s) <= limit else s[:limit] + "\u2026"


def stop_rows(leg: Leg) -> list[dict[str, Any]]:
    provenance: dict[int, list[str]] = {}
    for t in leg.trace:
        provenance.setdefault(t.stop, [])
        if (t.provenance or "missing") not in provenance[t.stop]:
            provenance[t.stop].append(t.provenance or "missing")
    rows = []
    for s in leg.stops:
        computed = s.kind in (DETOUR, MERGE, FINISH_LINE) and not s.tool_chain
        rows.append({
            "index": s.index, "clue": s.index + 1, "kind": s.kind,
            "colour": charts.KIND_COLOURS.get(s.kind, charts.UNKNOWN_COLOUR),
            "page_title": s.page_title, "page_url": s.page_url,
            "operation": charts.stop_operation(s),
            "tools": " \u2192 ".join(step.tool for step in s.tool_chain),
            "depends_on": ", ".join(f"s{d}" for d in s.depends_on),
            "value": charts.format_value(s.value), "value_type": s.value_type or "",
            "provenance": ", ".join(provenance.get(s.index, [])) or ("computed" if computed else "\u2013"),
            "diamond": f"{s.diamond_role} of diamond {s.diamond}" if s.diamond is not None and s.diamond_role else "",
            "description": s.description,
        })
    return rows


def trace_rows(leg: Leg) -> list[dict[str, Any]]:
    return [{"n": n + 1, "stop": t.stop, "step": t.step, "tool": t.tool,
             "args": _preview(json.dumps(t.args, ensure_ascii=False, sort_keys=True), 160),
             "response": _preview(t.response), "response_chars": len(t.response or ""),
             "provenance": t.provenance or "missing", "served_from": t.served_from,
             "value": _preview(charts.format_value(t.value), 60)}
            for n, t in enumerate(leg.trace)]


def leg_row(leg: Leg, invariants: dict[str, list[str]] | None) -> dict[str, Any]:
    counts = stats.leg_counts(leg)
    sims = sum(t.provenance == "simulated" for t in leg.trace)
    failing = sorted(k for k, v in (invariants or {}).items() if v)
    return {"leg_id": leg.leg_id, "href": "legs/" + leg_filename(leg.leg_id), "variant": leg.variant,
            "level": leg.level, "seed_title": leg.seed_title, "passcode": leg.passcode,
            "simulated_share": sims / len(leg.trace) if leg.trace else None,
            "invariants": None if invariants is None else failing, **counts}


def runs_context(report: dict[str, Any]) -> dict[str, Any]:
    """Tables and the error-decomposition chart of a ``python -m pipeline.score`` report."""
    groups = list(report.get("groups", []))
    overall = report.get("overall")
    rows = groups + ([{"agent": "all", "variant": "", "level": "", **overall}] if overall else [])

    def outcome(g: dict[str, Any]) -> dict[str, float]:
        errors = g.get("errors") or {}
        shares = {k: errors.get(k) or 0.0 for k, _, _ in OUTCOME_SEGMENTS if k != "solved"}
        shares["solved"] = g.get("fa") or 0.0
        return shares

    bars = charts.stacked_bars(
        [(" \u00b7 ".join(x for x in (g.get("agent"), g.get("variant"), g.get("level")) if x) + f" (n={g.get('n', 0)})",
          outcome(g), "") for g in rows],
        OUTCOME_SEGMENTS)
    return {"rows": rows, "bars": bars, "judge": report.get("judge"), "legs": report.get("legs"),
            "runs": report.get("runs"), "n_legs": report.get("n_legs"),
            "tool_utility": sorted((report.get("tool_utility") or {}).items(), key=lambda kv: (-kv[1], kv[0])),
            "invalid_trials": report.get("invalid_trials") or []}


def render_report(legs: list[Leg], out_dir: str | Path, *, datasets: list[str] | None = None,
                  invariants: dict[str, dict[str, list[str]]] | None = None, trace_calls: str | None = None,
                  runs_report: dict[str, Any] | None = None, templates_dir: Path = TEMPLATES_DIR,
                  known_roadblocks: list[str] | None = None, known_diamonds: list[str] | None = None,
                  acceptance: list[dict[str, Any]] | None = None,
                  exposure: dict[str, list[dict[str, Any]]] | None = None) -> list[Path]:
    """Write ``index.html`` and ``legs/<leg_id>.html`` under ``out_dir``; returns the written paths.
    ``invariants`` None means the checks were skipped; ``trace_calls`` says how invariant 3 checked
    the golden traces' calls (re-executed, or against the trace only); ``acceptance`` has one row per
    generate run: its level, variant and the riddle-only solver's figures (``pipeline.acceptance``);
    ``exposure`` what a search with each page clue's words shows (``report.exposure``; None: not measured)."""
    out = Path(out_dir)
    (out / "legs").mkdir(parents=True, exist_ok=True)
    env = environment(templates_dir)
    legs = sorted(legs, key=lambda l: (stats.group_order((l.variant, l.level)), l.leg_id))

    prov_rows = stats.provenance_shares(legs)
    prov_segments = [(p, p, PROVENANCE_COLOURS[p]) for p in (*stats.PROVENANCE_ORDER, stats.OTHER)]
    prov_bars = charts.stacked_bars(
        [(f"{r['variant']} \u00b7 {r['level']}" if r["level"] else r["variant"], r["shares"], "") for r in prov_rows],
        prov_segments)
    written = []
    index = env.get_template("index.html.j2").render(
        datasets=datasets or [], n_legs=len(legs),
        statistics=stats.dataset_statistics(legs), tools=stats.tool_usage(legs),
        spread=stats.world_spread(legs), exposure=exposure, provenance_rows=prov_rows, provenance_bars=prov_bars, provenance_keys=[*stats.PROVENANCE_ORDER, stats.OTHER],
        templates=stats.template_usage(legs, known_roadblocks or (), known_diamonds or ()),
        invariants=None if invariants is None else invariant_summary(invariants), trace_calls=trace_calls,
        legs=[leg_row(leg, None if invariants is None else invariants.get(leg.leg_id, {})) for leg in legs],
        runs=runs_context(runs_report) if runs_report else None, acceptance=acceptance or [])
    (out / "index.html").write_text(index, encoding="utf-8")
    written.append(out / "index.html")

    leg_template = env.get_template("leg.html.j2")
    for leg in legs:
        page = leg_template.render(
            leg=leg, clues=leg.clues, picture=charts.dag_picture(leg), stops=stop_rows(leg),
            trace=trace_rows(leg), counts=stats.leg_counts(leg),
            invariants=None if invariants is None else invariants.get(leg.leg_id, {}))
        path = out / "legs" / leg_filename(leg.leg_id)
        path.write_text(page, encoding="utf-8")
        written.append(path)
    return written
