"""Leg generation figures: legs per minute and peak memory per level and variant, and
the invariant figures on the generated legs. Prints; never fails on a time.

    python benchmarks/generate.py [--count 10] [--release] [--seed 1]   (--release: the AAR-size release)
"""
from __future__ import annotations

import argparse
import contextlib
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flows.generate import BudgetExhausted, GenerationParams, local_map_stage, run_generation
from flows.prefect_api import prefect_api
from pipeline.config import load_settings
from pipeline.invariants import check_all, summarize
from pipeline.report.exposure import search_exposure
from pipeline.report.stats import spread_line, world_spread
from pipeline.stages.base import StageContext
from pipeline.stages.verbalize import forbidden_names
from pipeline.tools.backends.offline.web import page_result


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--release", action="store_true")
    p.add_argument("--seed", type=int, default=1, help="the runs' --seed")
    p.add_argument("--prefect", action="store_true", help="run through the Prefect flow (thread runner)")
    p.add_argument("--median-legs", type=int, default=10, help="single extreme DAG legs timed one by one")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="legwork-bench-"))
    stack = contextlib.ExitStack()
    if args.prefect:  # the configured Prefect API, else a temporary server for the whole benchmark
        stack.enter_context(prefect_api(tmp / "prefect"))
        from flows.prefect_tasks import run_with_prefect  # Prefect: once its API is chosen
    ctx = StageContext.create(load_settings(cache_path=tmp / "cache.sqlite"))
    plan = [(lvl, var, args.count) for var in ("linear", "dag") for lvl in ("easy", "medium", "hard", "extreme")]
    if args.release:
        plan = [(lvl, "linear", 200) for lvl in ("easy", "medium", "hard", "extreme")] + \
               [(lvl, "dag", 150) for lvl in ("easy", "medium", "hard", "extreme")]
    all_checks = []
    print(f"runs in {tmp}")
    accepted = []   # how widely the legs spread over the snapshot, and how many page stops a search skips
    started = time.perf_counter()
    print(f"{'level':8} {'variant':7} {'legs':>5} {'s/leg':>7} {'legs/min':>9} {'attempts':>8} {'peak MB':>8}")
    for level, variant, count in plan:
        t0 = time.perf_counter()
        params = GenerationParams(level=level, variant=variant, count=count, seed=args.seed)
        run_dir = tmp / f"{level}-{variant}"
        try:
            result = run_with_prefect(params, run_dir, ctx.settings, ctx) if args.prefect else \
                run_generation(params, run_dir, ctx.settings, local_map_stage(ctx))
        except BudgetExhausted as exc:   # a figure, not a failure: say it and go on with what was made
            print(f"  {exc}".split("; most frequent")[0])
            result = exc.result
        dt = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{level:8} {variant:7} {len(result.accepted):5d} {dt / count:7.2f} {60 * count / dt:9.1f} "
              f"{result.attempts:8d} {peak:8.0f}")
        accepted += result.accepted
        for leg in result.accepted:
            all_checks.append(check_all(leg, ctx.presets[level], forbidden=forbidden_names(leg, ctx), allow_simulated=True,
                                        fetch_page=lambda u: page_result(ctx.store.get(u)) if ctx.store.get(u) else None))
    total = time.perf_counter() - started
    n = len(all_checks)
    for row in world_spread(accepted):
        print(f"spread {row['variant']:6} {row['level']:8} " + spread_line(row))
    for row in search_exposure(accepted, ctx.toolbox)["by_group"]:
        shown = "n/a" if row["value_shown_share"] is None else f"{100 * row['value_shown_share']:.1f}%"
        print(f"search with a page clue's words {row['variant']:6} {row['level']:8}: {row['page_stops']} page stops, "
              f"value in a top-5 snippet for {shown}")
    print(f"total {total:.1f} s for {n} legs ({'Prefect thread runner' if args.prefect else 'in-process runner'}, cold cache)")
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
