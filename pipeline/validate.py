"""CLI: python -m pipeline.validate DIR — replay every leg's golden trace from the cache
(replay mode: no tool is computed or contacted) and re-check every invariant.

Exits 0 when every leg passes; otherwise prints one line per failing leg and exits 1."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipeline.config import ConfigError, load_settings


def legs_file(path: Path) -> Path:
    return path / "legs.parquet" if path.is_dir() else path


def replay_leg(leg, toolbox) -> list[str]:
    """Invariant 3: re-execute from the cache alone; values, y* and responses must match."""
    from pipeline.execute import StopFailed, execute_leg
    from pipeline.tools.registry import ReplayMiss
    try:
        values, trace = execute_leg(leg, toolbox)
    except (StopFailed, ReplayMiss) as exc:
        return [f"replay failed: {exc}"]
    errors = [f"stop {s.index} replays to {values[s.index]!r}, golden {s.value!r}"
              for s in leg.stops if values[s.index] != s.value]
    if len(trace) != len(leg.trace):
        errors.append(f"replay made {len(trace)} calls, golden trace has {len(leg.trace)}")
    else:
        errors += [f"call {n} ({a.tool}) replays to different bytes" for n, (a, b) in enumerate(zip(trace, leg.trace))
                   if a.response != b.response or a.args != b.args]
    return errors


def validate_dir(path: Path, settings) -> tuple[int, list[tuple[str, str]], dict]:
    import pyarrow.parquet as pq
    from pipeline.catalog import load_presets
    from pipeline.invariants import check_all, summarize
    from pipeline.model import Leg
    from pipeline.stages.base import StageContext
    from pipeline.stages.verbalize import forbidden_names
    from pipeline.tools.backends.offline.web import page_result
    from pipeline.tools.registry import Toolbox

    run_info = {}
    run_json = (path if path.is_dir() else path.parent) / "run.json"
    if run_json.is_file():
        run_info = json.loads(run_json.read_text())
    overrides = run_info.get("params", {}).get("preset_overrides", [])
    allow_sim = not run_info.get("params", {}).get("no_simulated", False)
    presets, _ = load_presets(overrides, settings.templates_dir)
    replay = Toolbox(settings.with_overrides(default_backend="replay"))
    ctx = StageContext.create(settings, overrides, toolbox=replay)

    def fetch(url: str):
        page = ctx.store.get(url)
        return page_result(page) if page else None

    rows = pq.read_table(legs_file(path)).to_pylist()
    failures: list[tuple[str, str]] = []
    results = []
    for row in rows:
        leg = Leg.from_json(row["leg_json"])
        checks = check_all(leg, presets[leg.level], forbidden=forbidden_names(leg, ctx), allow_simulated=allow_sim,
                           fetch_page=fetch)
        checks["3_expressions"] = checks["3_expressions"] + replay_leg(leg, replay)
        results.append(checks)
        for name, errs in checks.items():
            for e in errs:
                failures.append((leg.leg_id, f"invariant {name}: {e}"))
    return len(rows), failures, summarize(results)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.validate", description=__doc__.split("\n\n")[0])
    p.add_argument("path", type=Path, help="a run directory (with legs.parquet) or a legs.parquet file")
    p.add_argument("--cache", type=Path, default=None)
    p.add_argument("--snapshot", type=Path, default=None)
    args = p.parse_args(argv)
    try:
        settings = load_settings(cache_path=args.cache, snapshot_dir=args.snapshot)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    if not legs_file(args.path).is_file():
        print(f"no legs.parquet at {args.path}", file=sys.stderr)
        return 2
    n, failures, summary = validate_dir(args.path, settings)
    for leg_id, why in failures:
        print(f"FAIL {leg_id}: {why}")
    print(f"{n} legs, {len({f[0] for f in failures})} failing; invariants holding (legs): "
          + ", ".join(f"{k}={v}/{n}" for k, v in summary.items()))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
