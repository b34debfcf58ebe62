"""Prefect task and flow definitions at module level, so process and Dask workers can
import them by reference (a task defined inside a function cannot be shipped).

Parameters are left unannotated on purpose: Prefect would otherwise build pydantic schemas
for objects (settings, stage context) that are plain Python values to us."""
from __future__ import annotations

from pathlib import Path

from prefect import flow, task

from flows.generate import apply_stage, run_generation
from pipeline.stages.base import StageContext


def run_stage_batch(stage, legs, settings, preset_overrides):
    """One stage over one batch of legs; rejections come back as data, never as task failures.
    Only plain settings travel: the worker builds (once) its own stage context from them."""
    return apply_stage(stage, legs, StageContext.for_worker(settings, tuple(preset_overrides)))


stage_batch = task(name="stage-batch", retries=0, cache_policy=None)(run_stage_batch)


# Flow parameters travel with every task run to process and Dask workers, so the progress
# callback (which holds locks) is handed over here instead of as a parameter.
PROGRESS = {"callback": None}


def generate_legs_flow(params, out_dir, settings, allow_errors=False):
    progress = PROGRESS["callback"]

    def map_stage(stage, batches):
        futures = [stage_batch.with_options(task_run_name=f"{stage}-{n}").submit(stage, b, settings, list(params.preset_overrides))
                   for n, b in enumerate(batches)]
        return [f.result() for f in futures]
    return run_generation(params, Path(out_dir), settings, map_stage, progress, allow_errors=allow_errors)


generate_legs = flow(name="legwork-generate", log_prints=False, validate_parameters=False)(generate_legs_flow)
