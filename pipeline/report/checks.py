"""Invariant results for the report: the same checks as ``python -m pipeline.validate``
(``pipeline.invariants.check_all`` plus the golden trace executed again offline), kept per leg."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.model import Leg
from pipeline.validate import check_legs as validate_legs

if TYPE_CHECKING:
    from pipeline.invariants import TraceCheck

INVARIANT_NAMES = ("1_dag", "2_counts", "3_expressions", "4_value_flow", "5_riddle", "6_provenance", "7_page_facts",
                   "8_places", "9_route_inputs",
                   "10_bridges", "11_hops", "12_one_question")


def run_params(dataset: Path) -> dict[str, Any]:
    """The generation parameters saved next to a legs.parquet (``run.json``), if any."""
    base = dataset if dataset.is_dir() else dataset.parent
    run_json = base / "run.json"
    if run_json.is_file():
        return json.loads(run_json.read_text(encoding="utf-8")).get("params", {})
    return {}


def check_legs(legs: list[Leg], settings, params: dict[str, Any] | None = None, replay: bool = True,
               calls: TraceCheck | None = None, from_cache: bool = False) -> dict[str, dict[str, list[str]]]:
    """leg_id -> invariant name -> violations, as ``pipeline.validate`` checks them; ``calls``, when
    given, adds up how the traced calls were checked."""
    results, totals = validate_legs(legs, settings, params=params, replay=replay, from_cache=from_cache)
    if calls is not None:
        calls.add(totals)
    return results


def invariant_summary(results: dict[str, dict[str, list[str]]]) -> list[dict[str, Any]]:
    """Per invariant: legs holding, legs checked, and the violations (leg_id, message)."""
    names = sorted({k for r in results.values() for k in r} | set(INVARIANT_NAMES) if results else ())
    out = []
    for name in names:
        failures = [(leg_id, msg) for leg_id, r in sorted(results.items()) for msg in r.get(name, [])]
        holding = sum(not r.get(name) for r in results.values())
        out.append({"name": name, "holding": holding, "checked": len(results), "failures": failures})
    return out
