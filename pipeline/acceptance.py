"""The invariants as an acceptance gate: what `validate` checks on a finished dataset is also
checked on every leg before generation writes it (issue: acceptance is validation).

``leg_invariant_failures`` needs only a leg and a stage context (for the snapshot's pages and
redirect aliases), so the generator, ``validate`` and the report ask the same question the same way.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from pipeline.invariants import check_all
from pipeline.model import Leg
from pipeline.stages.base import StageContext
from pipeline.stages.verbalize import forbidden_names
from pipeline.tools.backends.offline.web import page_result


def leg_invariants(leg: Leg, ctx: StageContext, *, allow_simulated: bool) -> dict[str, list[str]]:
    """Every invariant by name (``invariants.check_all``) -> its violations (empty: it holds)."""

    def fetch(url: str):
        page = ctx.page(url)
        return page_result(page) if page else None

    if leg.level not in ctx.presets:
        return {"2_counts": [f"unknown level {leg.level!r}"]}
    return check_all(leg, ctx.presets[leg.level], forbidden=forbidden_names(leg, ctx),
                     allow_simulated=allow_simulated, fetch_page=fetch)


def leg_invariant_failures(leg: Leg, ctx: StageContext, *, allow_simulated: bool) -> dict[str, list[str]]:
    """Invariant name -> violations for every invariant that does not hold (empty when all hold)."""
    return {name: errs for name, errs in leg_invariants(leg, ctx, allow_simulated=allow_simulated).items() if errs}


# The verbalize stage's rejections by the riddle-only solver (pipeline.stages.verbalize), by kind.
SOLVER_REJECTIONS = {
    "ambiguous": "verbalize: the riddle is ambiguous",
    "unsolved": "verbalize: the riddle alone does not solve",
    "wrong_answer": "verbalize: the riddle alone gives",
}


def solver_acceptance(legs: list[Leg], rejected_rows: list[dict]) -> dict[str, int | float | None]:
    """How the riddle-only solver judged a run's candidates: accepted legs it solved, and the
    attempts it rejected as ambiguous, unsolvable or giving another answer."""
    counts = {kind: sum(1 for r in rejected_rows if (r.get("reason") or "").startswith(prefix))
              for kind, prefix in SOLVER_REJECTIONS.items()}
    solved = sum(1 for leg in legs if (leg.metadata.get("solver") or {}).get("status") == "solved")
    candidates = len(legs) + sum(counts.values())
    return {"candidates": candidates, "accepted": len(legs), "solved": solved,
            "solve_rate": round(solved / len(legs), 4) if legs else None, **counts,
            "ambiguous_rate": round(counts["ambiguous"] / candidates, 4) if candidates else None}


def run_acceptance(legs_path) -> dict[str, int | float | None] | None:
    """``solver_acceptance`` of a generate run (its legs.parquet and rejected.parquet); None when the
    path is not a run folder with both (a release shard, AAR JSON)."""

    path = Path(legs_path)
    legs_file = path / "legs.parquet" if path.is_dir() else path
    rejected = legs_file.parent / "rejected.parquet"
    if legs_file.name != "legs.parquet" or not legs_file.is_file() or not rejected.is_file():
        return None
    legs = [Leg.from_json(r["leg_json"]) for r in pq.read_table(legs_file, columns=["leg_json"]).to_pylist()]
    return solver_acceptance(legs, pq.read_table(rejected, columns=["reason"]).to_pylist())
