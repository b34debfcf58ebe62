"""The report as a library call: load datasets, re-check their invariants, write the pages.
Used by ``python -m pipeline.report`` and by the regeneration flow."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.acceptance import run_acceptance
from pipeline.catalog import diamond_types, roadblock_templates
from pipeline.export import load_legs
from pipeline.invariants import TraceCheck
from pipeline.report.checks import check_legs, run_params
from pipeline.report.exposure import search_exposure
from pipeline.report.render import render_report
from pipeline.tools.registry import Toolbox
from pipeline.validate import calls_summary


@dataclass
class ReportSite:
    legs: int
    pages: list[Path]
    failing: list[str] | None      # legs failing an invariant (None: invariants not checked)
    trace_calls: str | None        # how the golden traces were checked (validate's summary line)


def write_report(datasets: list[str | Path], out: Path, settings, *, check_invariants: bool = True,
                 from_cache: bool = False, runs_report: dict[str, Any] | None = None) -> ReportSite:
    """Write ``out/index.html`` and a page per leg for the legs of ``datasets`` (any form
    ``export.load_legs`` reads); raises ``FileNotFoundError`` for a dataset that is not there."""

    legs, invariants, calls, acceptance = [], {} if check_invariants else None, TraceCheck(), []
    for dataset in datasets:
        some = load_legs(dataset)
        legs += some
        figures = run_acceptance(dataset)
        if figures is not None and some:
            acceptance.append({"dataset": str(dataset), "level": some[0].level, "variant": some[0].variant,
                               **figures})
        if invariants is not None:
            invariants.update(check_legs(some, settings, run_params(Path(dataset)), calls=calls, from_cache=from_cache))
    summary = None if invariants is None else calls_summary(calls)
    exposure = None
    if check_invariants:   # the search tool answers from the snapshot, as the invariants' page checks do
        exposure = search_exposure(legs, Toolbox(settings))
    written = render_report(legs, out, datasets=[str(d) for d in datasets], invariants=invariants,
                            trace_calls=summary, runs_report=runs_report, exposure=exposure,
                            known_roadblocks=sorted(roadblock_templates(settings.templates_dir)),
                            known_diamonds=sorted(diamond_types(settings.templates_dir)), acceptance=acceptance)
    failing = None if invariants is None else sorted(i for i, r in invariants.items() if any(r.values()))
    return ReportSite(len(legs), written, failing, summary)
