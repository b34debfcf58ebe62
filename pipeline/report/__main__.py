"""``python -m pipeline.report DATASET [DATASET ...] --out DIR [--runs-report report.json] [--skip-invariants]``

Writes a static HTML report (``DIR/index.html`` and ``DIR/legs/<leg_id>.html``): statistics by
variant and level, tool, template and provenance usage, invariant results, every leg's DAG,
riddle, stops and golden trace, and race scores from a ``python -m pipeline.score`` report.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.report", description=__doc__.split("\n\n")[1].split("\n")[0])
    ap.add_argument("datasets", nargs="+", metavar="DATASET",
                    help="legs.parquet, a run directory holding it, or a directory of AAR JSON (several are merged)")
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("--runs-report", type=Path, help="report JSON written by python -m pipeline.score --out")
    ap.add_argument("--skip-invariants", action="store_true", help="do not run the invariant checks (no snapshot or cache needed)")
    ap.add_argument("--cache", type=Path, help="the generator's cache, read by --from-cache only (default: settings)")
    ap.add_argument("--from-cache", action="store_true",
                    help="let the generator's cache answer the traced calls it holds (faster); others are re-executed")
    ap.add_argument("--snapshot", type=Path, help="snapshot directory for the page checks (default: settings)")
    a = ap.parse_args(argv)

    from pipeline.catalog import diamond_types, roadblock_templates
    from pipeline.config import ConfigError, load_settings
    from pipeline.export import load_legs
    from pipeline.invariants import TraceCheck
    from pipeline.report.checks import check_legs, run_params
    from pipeline.report.render import render_report
    from pipeline.validate import calls_summary

    try:
        settings = load_settings(cache_path=a.cache, snapshot_dir=a.snapshot)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    legs, invariants, calls = [], None if a.skip_invariants else {}, TraceCheck()
    try:
        for dataset in a.datasets:
            some = load_legs(dataset)
            legs += some
            if invariants is not None:
                invariants.update(check_legs(some, settings, run_params(Path(dataset)), calls=calls,
                                             from_cache=a.from_cache))
    except FileNotFoundError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    runs = None
    if a.runs_report:
        try:
            runs = json.loads(a.runs_report.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"cannot read runs report {a.runs_report}: {exc}", file=sys.stderr)
            return 2
    written = render_report(legs, a.out, datasets=[str(d) for d in a.datasets], invariants=invariants,
                            trace_calls=None if invariants is None else calls_summary(calls), runs_report=runs,
                            known_roadblocks=sorted(roadblock_templates(settings.templates_dir)),
                            known_diamonds=sorted(diamond_types(settings.templates_dir)))
    failing = sorted(leg_id for leg_id, r in (invariants or {}).items() if any(r.values()))
    print(f"{len(legs)} legs, {len(written)} pages in {a.out}"
          + ("" if invariants is None else f"; {len(failing)} legs fail an invariant"))
    if invariants is not None:
        print(f"golden traces: {calls_summary(calls)}")
    print(f"open {a.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
