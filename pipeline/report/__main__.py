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

from pipeline.config import ConfigError, load_settings
from pipeline.report.site import write_report
from pipeline.usage import run_cli


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


    try:
        settings = load_settings(cache_path=a.cache, snapshot_dir=a.snapshot)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    runs = None
    if a.runs_report:
        try:
            runs = json.loads(a.runs_report.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"cannot read runs report {a.runs_report}: {exc}", file=sys.stderr)
            return 2
    try:
        site = write_report(a.datasets, a.out, settings, check_invariants=not a.skip_invariants,
                            from_cache=a.from_cache, runs_report=runs)
    except FileNotFoundError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print(f"{site.legs} legs, {len(site.pages)} pages in {a.out}"
          + ("" if site.failing is None else f"; {len(site.failing)} legs fail an invariant"))
    if site.trace_calls is not None:
        print(f"golden traces: {site.trace_calls}")
    print(f"open {a.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m pipeline.report"))
