"""Leg generation figures: time per run and per stage, legs per minute, and the invariant figures
on the generated legs. Prints; never fails on a time.

    python benchmarks/generate.py [--count 10] [--release] [--seed 1] [--workers N] [--dask]

--release: the AAR-size release (1,400 legs). The eight runs go side by side, ``--workers`` at a
time (default: one per core) in worker processes, or with ``--dask`` on a local Dask cluster of that
many workers (``flows.runs``). The call cache starts empty; the page profiles, which depend only on
the snapshot and the code, are computed by the first run after a change and loaded after that
(``--cold-profiles`` computes them here too).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flows.generate import BudgetExhausted, GenerationParams, local_map_stage, run_generation
from flows.prefect_api import prefect_api
from flows.runs import RELEASE_COUNTS, release_runs, run_all
from pipeline.config import load_settings
from pipeline.invariants import check_all, summarize
from pipeline.model import ROUTE_INFO
from pipeline.report.exposure import search_exposure
from pipeline.report.stats import spread_line, world_spread
from pipeline.stages.base import StageContext
from pipeline.stages.verbalize import forbidden_names
from pipeline.tools.backends.offline.web import page_result

MAX_PAGE_SHARE = 0.02   # issue 33: no page but the seed on more than this share of a release's legs


def crowded_pages(legs, share: float = MAX_PAGE_SHARE, top: int = 12) -> str:
    """Which pages after the seed the legs crowd onto: how many are on more than ``share`` of the legs,
    and the most used, each with the hops that reached it (named, described, infobox, choice)."""
    legs_on: Counter[str] = Counter()
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    for leg in legs:
        pages = set()
        for stop in leg.stops:
            if stop.kind == ROUTE_INFO and stop.page_title and stop.page_title != leg.seed_title:
                pages.add(stop.page_title)
                relation = stop.transition.relation if stop.transition is not None else None
                kinds[stop.page_title][relation.kind if relation is not None else "other"] += 1
        legs_on.update(pages)
    cap = share * len(legs)
    over = sum(1 for n in legs_on.values() if n > cap)
    most = ", ".join(f"{page} {n} ({' '.join(f'{k} {c}' for k, c in kinds[page].most_common())})"
                     for page, n in legs_on.most_common(top))
    return (f"pages after the seed on more than {100 * share:g}% of the {len(legs)} legs ({cap:.0f}): {over}; "
            f"most used: {most}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--release", action="store_true")
    p.add_argument("--seed", type=int, default=1, help="the runs' --seed")
    p.add_argument("--prefect", action="store_true", help="run through the Prefect flow (thread runner)")
    p.add_argument("--median-legs", type=int, default=10, help="single extreme DAG legs timed one by one")
    p.add_argument("--workers", type=int, default=None, help="runs side by side (default: one per core)")
    p.add_argument("--dask", action="store_true", help="run on a local Dask cluster of --workers processes")
    p.add_argument("--cold-profiles", action="store_true", help="page profiles computed afresh, not loaded")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="legwork-bench-"))
    stack = contextlib.ExitStack()
    if args.prefect:  # the configured Prefect API, else a temporary server for the whole benchmark
        stack.enter_context(prefect_api(tmp / "prefect"))
        from flows.prefect_tasks import run_with_prefect  # Prefect: once its API is chosen
    settings = load_settings(cache_path=tmp / "cache.sqlite")
    if args.cold_profiles:
        settings = dataclasses.replace(settings, derived_dir=tmp / "derived")
    ctx = StageContext.create(settings)
    counts = RELEASE_COUNTS if args.release else {"linear": args.count, "dag": args.count}
    runs = release_runs(args.seed, counts, tmp, settings=settings)
    all_checks = []
    print(f"runs in {tmp}")
    accepted = []   # how widely the legs spread over the snapshot, and how many page stops a search skips
    started = time.perf_counter()
    if args.prefect:
        outcomes = []
        for params, run_dir in runs:
            try:
                outcomes.append((params, run_with_prefect(params, run_dir, ctx.settings, ctx), None))
            except BudgetExhausted as exc:
                outcomes.append((params, exc.result, str(exc)))
        runner = "Prefect thread runner, one run at a time"
    else:
        outcomes = [(o.params, o.result, o.failure) for o in run_all(runs, settings, args.workers, dask=args.dask)]
        workers = args.workers or os.cpu_count()
        runner = f"{workers} {'Dask workers' if args.dask else 'worker processes'}, runs side by side"
    print(f"{'level':8} {'variant':7} {'legs':>5} {'run s':>7} {'s/leg':>7} {'attempts':>8}")
    stage_seconds: dict[str, float] = {}
    for params, result, failure in outcomes:
        if failure:   # a figure, not a failure: say it and go on with what was made
            print(f"  {failure}".split("; most frequent")[0])
        print(f"{params.level:8} {params.variant:7} {len(result.accepted):5d} {result.seconds:7.1f} "
              f"{result.seconds / max(1, params.count):7.2f} {result.attempts:8d}")
        for stage, seconds in result.stage_seconds.items():
            stage_seconds[stage] = stage_seconds.get(stage, 0.0) + seconds
        accepted += result.accepted
    wall = time.perf_counter() - started
    busy = sum(stage_seconds.values())
    print("time per stage, summed over runs: " + ", ".join(
        f"{stage} {seconds:.1f} s ({100 * seconds / busy:.0f}%)" for stage, seconds in stage_seconds.items()))
    for leg in accepted:
        level = leg.level
        all_checks.append(check_all(leg, ctx.presets[level], forbidden=forbidden_names(leg, ctx), allow_simulated=True,
                                    fetch_page=lambda u: page_result(ctx.store.get(u)) if ctx.store.get(u) else None))
    total = time.perf_counter() - started
    n = len(all_checks)
    for row in world_spread(accepted):
        print(f"spread {row['variant']:6} {row['level']:8} " + spread_line(row))
    print("spread " + crowded_pages(accepted))
    for row in search_exposure(accepted, ctx.toolbox)["by_group"]:
        shown = "n/a" if row["value_shown_share"] is None else f"{100 * row['value_shown_share']:.1f}%"
        print(f"search with a page clue's words {row['variant']:6} {row['level']:8}: {row['page_stops']} page stops, "
              f"value in a top-5 snippet for {shown}")
    print(f"generation {wall:.1f} s wall for {len(accepted)} legs ({runner}, empty call cache; "
          f"{busy:.1f} s of stage work, {busy / wall:.2f} runs busy on average)")
    print(f"total {total:.1f} s with the invariant checks")
    single = []
    for k in range(args.median_legs):  # one extreme DAG leg at a time, fresh cache: the per-leg figure
        solo = StageContext.create(load_settings(cache_path=tmp / f"solo-{k}.sqlite"))
        t0 = time.perf_counter()
        run_generation(GenerationParams(level="extreme", variant="dag", count=1, seed=100 + k),
                       tmp / f"solo-{k}", solo.settings, local_map_stage(solo))
        single.append(time.perf_counter() - t0)
    if single:
        print(f"extreme DAG leg, one at a time with a cold cache: median {statistics.median(single):.2f} s, "
              f"max {max(single):.2f} s over {len(single)} legs")
    print("invariants holding: " + ", ".join(f"{k} {v}/{n}" for k, v in summarize(all_checks).items()))
    stack.close()


if __name__ == "__main__":
    main()
