"""All the Prefect glue: the tasks and flows (generation, regeneration), the task runners, and
``run_with_prefect``. The driver (``flows.generate``) and the regeneration steps
(``flows.release``) know nothing of Prefect.

Task and flow definitions are at module level, so process and Dask workers can import them by
reference (a task defined inside a function cannot be shipped). The generation flow's parameters
are left unannotated on purpose: Prefect would otherwise build pydantic schemas for objects
(settings, stage context) that are plain Python values to us; the regeneration flow's are typed,
for its deployment (``flows.serve``).

Importing this module imports Prefect: do it only after ``flows.prefect_api.prefect_api`` (or
``prefect_environment``) has chosen the Prefect API, which Prefect reads when it is imported.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from prefect import flow, task
from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner

from flows import release
from flows.generate import GenerationParams, RunResult, apply_stage, run_generation
from flows.prefect_api import die_with_parent
from pipeline.config import Settings
from pipeline.stages.base import StageContext


# ---- generation -----------------------------------------------------------------------------------
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


def task_runner_for(name: str, dask_address: str | None = None):
    if name == "thread":
        return ThreadPoolTaskRunner(max_workers=2)
    if name == "process":
        return ProcessPoolTaskRunner(max_workers=2, initializer=die_with_parent, initargs=(os.getpid(),))
    if name == "dask":
        from prefect_dask import DaskTaskRunner
        if dask_address:
            return DaskTaskRunner(address=dask_address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": 2, "threads_per_worker": 1, "processes": True})
    raise ValueError(f"unknown task runner {name!r}: choose thread, process or dask")


def run_with_prefect(params: GenerationParams, out_dir: Path, settings: Settings, ctx: StageContext,
                     task_runner: str = "thread", dask_address: str | None = None,
                     progress: Callable[[str, int, int], None] | None = None, *,
                     allow_errors: bool = False) -> RunResult:
    """Run the generation flow in Prefect, its stage batches as tasks on ``task_runner``."""
    flow_run = generate_legs.with_options(task_runner=task_runner_for(task_runner, dask_address))
    PROGRESS["callback"] = progress
    try:
        return flow_run(params, str(out_dir), settings, allow_errors)
    finally:
        PROGRESS["callback"] = None


# ---- regeneration ---------------------------------------------------------------------------------
validate_legs = task(name="validate-legs", cache_policy=None)(release.validate_legs)
task_set = task(name="task-set", cache_policy=None)(release.task_set)
report = task(name="report", cache_policy=None)(release.report)
publish = task(name="publish", cache_policy=None)(release.publish)
generate_leg_sets = task(name="generate-leg-sets", cache_policy=None)(release.generate_leg_sets)
STEPS = release.Steps(generate_leg_sets=generate_leg_sets, validate_legs=validate_legs, task_set=task_set,
                      report=report, publish=publish)


@flow(name="legwork-regenerate", log_prints=False)
def regeneration(out: str = release.DEFAULT_OUT, count: int = 5, seed: int = 0,
                 families: list[str] | None = None, levels: list[str] | None = None,
                 variants: list[str] | None = None, repo_id: str = "legwork/legwork",
                 upload: bool = False, workers: int = 0, dask_address: str | None = None) -> dict[str, list[str]]:
    """``flows.release.regenerate`` as a Prefect flow, each step a task; the parameters are spelled out
    so that a deployment and the Prefect UI show and validate them."""
    return release.regenerate(STEPS, out, count, seed, families, levels, variants, repo_id, upload, workers,
                              dask_address)
