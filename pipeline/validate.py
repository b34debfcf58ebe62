"""CLI: python -m pipeline.validate DIR — check a run from its legs alone: execute every leg's
golden trace again with the offline backends (no cache needed) and re-check every invariant.

Calls answered from the snapshot, packaged data or a seeded simulation are computed again and
their responses compared byte for byte with the trace; `live` answers cannot be asked again
offline and are checked for consistency with the trace only. The summary says how many of each.
``--from-cache`` lets the generator's cache answer the calls it holds (faster; a call it lacks is
still re-executed). Exits 0 when every leg passes; otherwise prints one line per failure, exits 1."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from pipeline.acceptance import leg_invariants
from pipeline.cache import CallCache
from pipeline.config import ConfigError, load_settings
from pipeline.export import DatasetNotFound, load_legs
from pipeline.invariants import TraceCheck, check_golden_trace, summarize
from pipeline.model import LegFormatError
from pipeline.stages.base import StageContext
from pipeline.tools.registry import Toolbox
from pipeline.usage import run_cli


def legs_file(path: Path) -> Path:
    return path / "legs.parquet" if path.is_dir() else path


def run_info(path) -> dict:
    """``run.json`` next to the legs (parameters and snapshot hash of the generation), if any."""
    path = Path(path)
    run_json = (path if path.is_dir() else path.parent) / "run.json"
    return json.loads(run_json.read_text(encoding="utf-8")) if run_json.is_file() else {}


class TraceChecker:
    """Invariant 3's re-execution for many legs: one offline Toolbox over a throwaway cache (so a
    call repeated across legs is computed once per validation), optionally the generator's cache
    in front of it. ``totals`` adds up how every call was checked."""

    def __init__(self, settings, *, allow_simulated: bool = True, from_cache: bool = False):
        self._scratch = tempfile.TemporaryDirectory(prefix="legwork-validate-")
        self._caches = [CallCache(Path(self._scratch.name) / "calls.sqlite")]
        # Offline everywhere, whatever backends the caller's settings name: the point is to
        # compute the answers here. allow_simulated as in the run, since it changes which answers
        # a tool may give (a refused simulated geocode fails the call that needs it).
        self.offline = Toolbox(settings.with_overrides(default_backend="offline", backends={},
                                                       allow_simulated=allow_simulated), cache=self._caches[0])
        self.recorded = []
        if from_cache and settings.cache_path.is_file():
            generator_cache = CallCache(settings.cache_path)
            self._caches.append(generator_cache)
            self.recorded = [Toolbox(settings.with_overrides(default_backend="replay", backends={}, replay_of=source,
                                                             allow_simulated=allow_simulated), cache=generator_cache)
                             for source in ("offline", "live")]
        self.totals = TraceCheck()

    def check(self, leg) -> TraceCheck:
        result = check_golden_trace(leg, self.offline, self.recorded)
        self.totals.add(result)
        return result

    def close(self) -> None:
        for cache in self._caches:
            cache.close()
        self._scratch.cleanup()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def calls_summary(totals: TraceCheck) -> str:
    """The one line saying how the golden traces' calls were checked (CLI and report)."""
    text = f"{totals.reexecuted} calls re-executed, {totals.trace_only} checked against the trace only"
    if totals.from_cache:
        text += f", {totals.from_cache} answered from the generator's cache"
    return text


@dataclass
class Validation:
    legs: int
    failures: list[tuple[str, str]] = field(default_factory=list)
    holding: dict[str, int] = field(default_factory=dict)
    calls: TraceCheck = field(default_factory=TraceCheck)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


def check_legs(legs, settings, *, params: dict | None = None, replay: bool = True, from_cache: bool = False
               ) -> tuple[dict[str, dict[str, list[str]]], TraceCheck]:
    """leg_id -> invariant name -> violations (empty: holds), and how the traced calls were checked.
    With ``replay`` every golden trace is executed again offline (no cache needed; ``from_cache``
    lets the generator's cache answer what it holds)."""

    params = params or {}
    allow_sim = not params.get("no_simulated", False)
    results: dict[str, dict[str, list[str]]] = {}
    with TraceChecker(settings, allow_simulated=allow_sim, from_cache=from_cache) as checker:
        ctx = StageContext.create(settings, params.get("preset_overrides", []), toolbox=checker.offline)
        for leg in legs:
            checks = leg_invariants(leg, ctx, allow_simulated=allow_sim)
            if replay:
                checks["3_expressions"] = checks.get("3_expressions", []) + checker.check(leg).errors
            results[leg.leg_id] = checks
        return results, checker.totals


def validate_run(path, settings, *, from_cache: bool = False) -> Validation:
    """Every invariant of every leg of a dataset in any form ``export.load_legs`` reads; needs no cache."""

    started = time.monotonic()
    info = run_info(path)
    warnings = []
    manifest = settings.snapshot_dir / "manifest.json"
    here = json.loads(manifest.read_text())["hash"] if manifest.is_file() else None
    if info.get("snapshot") and here != info["snapshot"]:
        warnings.append(f"the run was generated on snapshot {info['snapshot'][:12]}, this one is "
                        f"{(here or 'missing')[:12]}: page responses will differ")
    legs = load_legs(path)
    results, totals = check_legs(legs, settings, params=info.get("params", {}), from_cache=from_cache)
    failures = [(leg_id, f"invariant {name}: {e}") for leg_id, checks in results.items()
                for name, errs in checks.items() for e in errs]
    return Validation(len(legs), failures, summarize(list(results.values())), totals, warnings,
                      time.monotonic() - started)


def validate_dir(path: Path, settings) -> tuple[int, list[tuple[str, str]], dict]:
    """(legs, failures, legs holding per invariant): the form ``pipeline.publish`` uses."""
    result = validate_run(path, settings)
    return result.legs, result.failures, result.holding


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.validate", description=__doc__.split("\n\n")[0])
    p.add_argument("path", help="a run folder, legs.parquet, a release folder, a config folder or shard, "
                                "AAR JSON, or a hub repo id ORG/NAME")
    p.add_argument("--cache", type=Path, default=None, help="the generator's cache, read by --from-cache only")
    p.add_argument("--from-cache", action="store_true",
                   help="let the generator's cache answer the calls it recorded (faster); others are re-executed")
    p.add_argument("--snapshot", type=Path, default=None)
    args = p.parse_args(argv)
    try:
        settings = load_settings(cache_path=args.cache, snapshot_dir=args.snapshot)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        result = validate_run(args.path, settings, from_cache=args.from_cache)
    except (DatasetNotFound, LegFormatError) as exc:
        print(str(exc), file=sys.stderr)
        return 2
    for warning in result.warnings:
        print(f"warning: {warning}")
    for note in result.calls.notes:
        print(f"note: {note}")
    for leg_id, why in result.failures:
        print(f"FAIL {leg_id}: {why}")
    n = result.legs
    print(f"{n} legs, {len({f[0] for f in result.failures})} failing; invariants holding (legs): "
          + ", ".join(f"{k}={v}/{n}" for k, v in result.holding.items()))
    print(f"golden traces: {calls_summary(result.calls)}; {result.seconds:.1f} s")
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m pipeline.validate"))
