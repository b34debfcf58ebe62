"""The runs of a release side by side: every level and variant is a generation run of its own
(``flows.generate.run_generation``), independent of the others, so a release uses every core by
running several at once, in worker processes of this machine or on a Dask cluster.

A run's bytes depend only on its arguments, the code, the data and the settings (its run key), never
on which worker ran it or next to what: one worker or many, processes or Dask, give the same
artifacts. Workers share the record/replay cache (SQLite in WAL mode, first writer wins) and the
derived page profiles (``StageContext.derived``), which the first run computes and the rest load.

Runs are handed out longest first (``_effort``: a level's cost a leg times the run's count), so that the
last one to finish is a short one.
"""
from __future__ import annotations

import dataclasses
import math
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from flows.generate import (
    BudgetExhausted,
    GenerationErrors,
    GenerationParams,
    RunResult,
    local_map_stage,
    page_share,
    run_generation,
)
from flows.prefect_api import die_with_parent
from pipeline.catalog import load_presets
from pipeline.config import Settings
from pipeline.model import LEVELS, VARIANTS
from pipeline.stages.base import StageContext

# The AAR-size release: 200 linear and 150 DAG legs per level (1,400 legs).
RELEASE_COUNTS = {"linear": 200, "dag": 150}


@dataclass(frozen=True)
class RunOutcome:
    """What a run made, and why it fell short if it did (``failure``: the budget ran out, or a
    stage met a bug). Exceptions that carry a result do not cross process boundaries; this does."""
    params: GenerationParams
    result: RunResult
    failure: str | None = None


def release_runs(seed: int, counts: dict[str, int] | None = None, out: Path | None = None,
                 levels=LEVELS, variants=VARIANTS, settings: Settings | None = None) -> list[tuple[GenerationParams, Path]]:
    """(arguments, run folder) of every level and variant of a release, in level then variant order;
    with ``settings``, each run holds its share of the release's country allowance (``with_country_caps``)."""
    counts = counts or RELEASE_COUNTS
    out = Path(out or ".")
    params = [GenerationParams(level=level, variant=variant, count=counts[variant], seed=seed)
              for variant in variants for level in levels]
    if settings is not None:
        params = with_country_caps(params, settings)
    return [(p, out / f"{p.level}-{p.variant}") for p in params]


def country_caps(params: list[GenerationParams], settings: Settings) -> list[int]:
    """Each run's ``max_country_uses``, so that no country is on the routes of more than the page share
    of the whole release's legs: the release's allowance (share x its legs) apportioned among its runs by
    the choice hops each owes (its count x the mean of its level's choices; largest remainders first),
    at least one each. A run's own page cap would not do: an extreme run of 200 legs owes some 700
    choice hops among ~200 countries, more than 2% of its legs allow. All 0 (uncapped) where the share
    is off (the embedded world)."""
    allowance, owed = 0.0, []
    for p in params:
        presets, generation = load_presets(list(p.preset_overrides), settings.templates_dir)
        allowance += page_share(generation, settings) * p.count
        lo, hi = presets[p.level].choices
        owed.append(p.count * (lo + hi) / 2)
    if allowance >= sum(p.count for p in params) or not sum(owed):
        return [0] * len(params)
    whole = math.floor(allowance)
    quota = [whole * o / sum(owed) for o in owed]
    caps = [math.floor(q) for q in quota]
    by_remainder = sorted(range(len(params)), key=lambda i: (caps[i] - quota[i], i))
    for i in by_remainder[:whole - sum(caps)]:
        caps[i] += 1
    return [max(1, c) for c in caps]


def with_country_caps(params: list[GenerationParams], settings: Settings) -> list[GenerationParams]:
    """``params`` with each run's ``country_caps`` as a preset override (none where uncapped)."""
    return [p if cap == 0 else dataclasses.replace(
                p, preset_overrides=(*p.preset_overrides, f"generation.max_country_uses={cap}"))
            for p, cap in zip(params, country_caps(params, settings), strict=True)]


def run_one(params: GenerationParams, out_dir: str, settings: Settings) -> RunOutcome:
    """One run in this process, on the process's shared context (``StageContext.for_worker``). The
    outcome's rejected rows come without their legs' JSON, which the run's ``rejected.parquet`` holds:
    an extreme run's rows are tens of megabytes that the process boundary would copy for nothing."""
    ctx = StageContext.for_worker(settings, params.preset_overrides)
    try:
        outcome = RunOutcome(params, run_generation(params, Path(out_dir), settings, local_map_stage(ctx)))
    except (BudgetExhausted, GenerationErrors) as exc:
        outcome = RunOutcome(params, exc.result, str(exc))
    rows = [{k: v for k, v in row.items() if k != "leg_json"} for row in outcome.result.rejected]
    return dataclasses.replace(outcome, result=dataclasses.replace(outcome.result, rejected=rows))


# seconds a leg of each level takes, relative to easy (benchmarks/generate.py --release: 0.035, 0.05,
# 0.11, 0.20 s a leg); a DAG leg about a tenth more than a linear one
LEVEL_EFFORT = {"easy": 1.0, "medium": 1.5, "hard": 3.0, "extreme": 6.0}


def _effort(params: GenerationParams) -> tuple[float, str, str]:
    """Longest first, by the expected work: a level's cost a leg times the count (200 extreme linear
    legs outlast 150 extreme DAG legs); ties by name, so the order is fixed."""
    per_leg = LEVEL_EFFORT.get(params.level, max(LEVEL_EFFORT.values())) * (1.1 if params.variant == "dag" else 1.0)
    return (-per_leg * params.count, params.level, params.variant)


def run_all(runs: list[tuple[GenerationParams, Path]], settings: Settings, workers: int | None = None,
            dask_address: str | None = None, dask: bool = False) -> list[RunOutcome]:
    """Every run, ``workers`` at a time (default: one per core), in worker processes, or on Dask: the
    cluster at ``dask_address``, or with ``dask`` a local cluster of ``workers`` processes. Outcomes
    come back in the order of ``runs``."""
    workers = max(1, workers or os.cpu_count() or 1)
    order = sorted(range(len(runs)), key=lambda i: _effort(runs[i][0]))
    if dask or dask_address:
        from distributed import Client  # heavy and optional: only for Dask runs
        cluster = None if dask_address else local_cluster(workers)
        with Client(dask_address or cluster) as client:
            futures = {i: client.submit(run_one, runs[i][0], str(runs[i][1]), settings, pure=False,
                                        priority=len(order) - rank) for rank, i in enumerate(order)}
            outcomes = {i: f.result() for i, f in futures.items()}
        if cluster is not None:
            cluster.close()
        return [outcomes[i] for i in range(len(runs))]
    if workers == 1:
        return [run_one(params, str(out_dir), settings) for params, out_dir in runs]
    with _process_pool(workers) as pool:
        futures = {i: pool.submit(run_one, runs[i][0], str(runs[i][1]), settings) for i in order}
        return [futures[i].result() for i in range(len(runs))]


def local_cluster(workers: int):
    """A local Dask cluster of ``workers`` single-threaded processes, set up for runs (close it after).

    A run is minutes of work: the scheduler hands one to a worker only when it is free (worker
    saturation 1.0, not 1.1's two a worker), longest first (``priority``), so no long run waits
    behind another on a busy worker while one idles. The workers run without Dask's sampling profiler
    (a stack sample every 10 ms, taken under the GIL the run needs) and keep glibc's own trim
    threshold (Dask's 64 KiB one hands back memory a run's memo asks for again at once)."""
    import dask  # heavy and optional: only for Dask runs
    from distributed import LocalCluster
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0,
                          "distributed.worker.profile.enabled": False,
                          "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)


def _process_pool(workers: int) -> Executor:
    """Fresh interpreters (spawn: no SQLite connection or lock is inherited mid-use) that die with us."""
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=die_with_parent, initargs=(os.getpid(),))
