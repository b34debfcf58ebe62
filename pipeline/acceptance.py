"""The invariants as an acceptance gate: what `validate` checks on a finished dataset is also
checked on every leg before generation writes it (issue: acceptance is validation).

``leg_invariant_failures`` needs only a leg and a stage context (for the snapshot's pages and
redirect aliases), so the generator, ``validate`` and the report ask the same question the same way.
"""
from __future__ import annotations

from pipeline.invariants import check_all
from pipeline.model import Leg
from pipeline.stages.base import StageContext


def leg_invariants(leg: Leg, ctx: StageContext, *, allow_simulated: bool) -> dict[str, list[str]]:
    """Every invariant by name (``invariants.check_all``) -> its violations (empty: it holds)."""
    from pipeline.stages.verbalize import forbidden_names
    from pipeline.tools.backends.offline.web import page_result

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
