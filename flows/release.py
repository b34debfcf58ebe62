"""The regeneration: legs of every level and variant, task sets, validation, the HTML report and
publishing. Here without Prefect: the steps and ``regenerate``, which runs them in order through
the callables it is given. ``flows.prefect_tasks.regeneration`` is the Prefect flow (typed
parameters, a task per step, leg generation as a subflow) over the same steps.

Every step calls the library (``flows.generate``, ``pipeline.tasks.common``, ``pipeline.validate``,
``pipeline.report.site``, ``pipeline.export.hub``, ``pipeline.publish``), never a CLI's ``main``.

Reuse is keyed, never guessed from a file's presence: each leg set and task set folder holds a
completion marker (``.legwork-step.json``, written last, as datatrove's executors mark finished
ranks) whose key is the digest of the step's parameters, the code version and the data version
(``pipeline.versions``, the same functions that key a generate run's folder; a leg set's parameters
are its run key, ``flows.generate.run_key``).
A folder whose marker has another key (other --seed, changed code, another snapshot) is emptied
and made again; a folder without a finished marker resumes what it can (leg generation resumes
its stage artifacts).
"""
from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from flows.generate import GenerationParams, run_key
from flows.runs import RunOutcome, release_runs, run_all
from pipeline.cache import canonical_json
from pipeline.config import PROJECT_ROOT, Settings, load_settings
from pipeline.export.hub import assemble, write_release
from pipeline.model import LEVELS, VARIANTS
from pipeline.publish import commit_message, hub_endpoint, hub_token
from pipeline.publish import upload as upload_folder
from pipeline.report.site import write_report
from pipeline.tasks.common import build_task_set, validate_task_set
from pipeline.validate import validate_run
from pipeline.versions import code_version, data_version

FAMILIES = ("math", "atp", "os", "git")
MARKER = ".legwork-step.json"
class StepFailed(RuntimeError):
    """A regeneration step produced something that does not validate; the flow stops there."""


# ---- versions and completion markers ------------------------------------------------------------
def step_key(step: str, params: dict[str, Any], versions: dict[str, str]) -> str:
    return hashlib.sha256(canonical_json({"step": step, "params": params, **versions}).encode()).hexdigest()[:16]


def finished(folder: Path, key: str) -> bool:
    marker = folder / MARKER
    try:
        done = json.loads(marker.read_text())
        return done["key"] == key and done["state"] == "finished"
    except (OSError, ValueError, KeyError):
        return False


def prepare(folder: Path, key: str) -> None:
    """Empty ``folder`` unless it holds unfinished work of this very key (which then resumes)."""
    marker = folder / MARKER
    try:
        same = json.loads(marker.read_text()).get("key") == key
    except (OSError, ValueError):
        same = False
    if folder.exists() and not same:
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"key": key, "state": "running"}) + "\n")


def mark_finished(folder: Path, key: str, params: dict[str, Any], versions: dict[str, str]) -> None:
    (folder / MARKER).write_text(json.dumps({"key": key, "state": "finished", "params": params, **versions},
                                            indent=2, sort_keys=True) + "\n")


# ---- steps --------------------------------------------------------------------------------------
def validate_legs(run_dir: str, settings: Settings) -> int:
    result = validate_run(run_dir, settings)
    if result.failures:
        leg_id, why = result.failures[0]
        raise StepFailed(f"{run_dir}: {len(result.failures)} invariant failure(s), the first {leg_id}: {why}")
    return result.legs


def task_set(family: str, seed: int, out_dir: str, settings: Settings, versions: dict[str, str]) -> str:
    """Build and validate one family's task set, unless this very build is already finished."""
    folder = Path(out_dir)
    params = {"family": family, "seed": seed, "count": None}
    key = step_key("task-set", params, versions)
    if finished(folder, key):
        return "reused"
    prepare(folder, key)
    report = build_task_set(family, None, seed, folder, settings)
    if report.failures:
        raise StepFailed(f"{family}: {len(report.failures)} task(s) failed to verify, the first "
                         f"{report.failures[0].task_id}: {report.failures[0].reason}")
    for check in validate_task_set(folder, settings):
        if check.failures:
            raise StepFailed(f"{family}: validation failed for {check.failures[0].task_id}: {check.failures[0].reason}")
    mark_finished(folder, key, params, versions)
    return "built"


def report(legs_dirs: list[str], out_dir: str, settings: Settings) -> int:
    site = write_report(legs_dirs, Path(out_dir), settings)
    if site.failing:
        raise StepFailed(f"{len(site.failing)} legs fail an invariant in the report: {site.failing[:5]}")
    return len(site.pages)


def publish(repo_id: str, legs_dirs: list[str], task_dirs: list[str], hub_dir: str, upload: bool) -> dict:
    """Write the release folder (always) and upload it (``upload``); returns what changed since
    the release that was in ``hub_dir`` before."""
    hub = Path(hub_dir)
    previous = release_index(hub) if hub.exists() else {}
    if hub.exists():
        shutil.rmtree(hub)
    release = assemble(repo_id, [Path(d) for d in legs_dirs], [Path(d) for d in task_dirs])
    write_release(release, hub, PROJECT_ROOT / "templates")
    changes = diff_releases(previous, release_index(hub))
    if upload:
        token = hub_token()
        if not token:
            raise StepFailed("upload asked for but no token: set HF_TOKEN (or HUGGING_FACE_HUB_TOKEN)")
        summary, description = commit_message(release)
        upload_folder(hub, repo_id, token=token, endpoint=hub_endpoint(), private=False, revision=None,
                      message=summary, description=description, retries=3, backoff=2.0, say=print)
    return changes


def release_index(hub_dir: Path) -> dict[str, str]:
    """id -> content hash of every leg and task row in a hub folder."""
    index: dict[str, str] = {}
    for shard in sorted(hub_dir.glob("*/*.parquet")):
        config = shard.parent.name
        for row in pq.read_table(shard).to_pylist():
            key = (row.get("leg_id") or row.get("task_id") or row.get("trajectory_id")
                   or hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()[:16])
            index[f"{config}/{key}"] = hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return index


def diff_releases(old: dict[str, str], new: dict[str, str]) -> dict[str, list[str]]:
    return {"added": sorted(set(new) - set(old)), "removed": sorted(set(old) - set(new)),
            "changed": sorted(k for k in set(old) & set(new) if old[k] != new[k])}


def _choose(given: list[str] | None, allowed: tuple[str, ...], what: str) -> list[str]:
    chosen = list(allowed) if given is None else list(given)
    unknown = sorted(set(chosen) - set(allowed))
    if unknown or not chosen:
        raise ValueError(f"{what}: {unknown or 'none given'}; choose from {', '.join(allowed)}")
    return chosen


# ---- the flow -----------------------------------------------------------------------------------
def generate_leg_sets(runs: list[tuple[GenerationParams, Path]], settings: Settings, workers: int | None,
                      dask_address: str | None) -> list[RunOutcome]:
    """Every leg set still to make, side by side (``flows.runs``): a release on every core, or a cluster.
    Each resumes from its artifacts."""
    return run_all(runs, settings, workers, dask_address=dask_address)


@dataclass(frozen=True)
class Steps:
    """How ``regenerate`` runs each step: the functions above, or Prefect tasks of them in
    ``flows.prefect_tasks``."""
    generate_leg_sets: Callable[[list[tuple[GenerationParams, Path]], Settings, int | None, str | None],
                                list[RunOutcome]] = generate_leg_sets
    validate_legs: Callable[[str, Settings], int] = validate_legs
    task_set: Callable[[str, int, str, Settings, dict[str, str]], str] = task_set
    report: Callable[[list[str], str, Settings], int] = report
    publish: Callable[[str, list[str], list[str], str, bool], dict] = publish


DEFAULT_OUT = str(PROJECT_ROOT / "data" / "release")


def regenerate(steps: Steps, out: str = DEFAULT_OUT, count: int = 5, seed: int = 0,
               families: list[str] | None = None, levels: list[str] | None = None,
               variants: list[str] | None = None, repo_id: str = "legwork/legwork",
               upload: bool = False, workers: int = 0, dask_address: str | None = None) -> dict[str, list[str]]:
    """Regenerate the release under ``out``: ``count`` legs per level and variant, every family's
    task set at its default size, validation, the report, the hub folder (``out/hub``) and, with
    ``upload``, the hub repository ``repo_id``. The leg sets are made side by side, ``workers`` at a
    time (0: one per core) in worker processes, or on the Dask cluster at ``dask_address``. Returns
    (and writes to ``changes.json``) what changed since the previous release in ``out``."""
    families = _choose(families, FAMILIES, "families")
    levels = _choose(levels, LEVELS, "levels")
    variants = _choose(variants, VARIANTS, "variants")
    if count < 1:
        raise ValueError("count must be at least 1")
    root = Path(out)
    settings = load_settings()
    versions = {"code": code_version(settings), "data": data_version(settings)}

    legs_dirs, pending = [], []
    for params, run_dir in release_runs(seed, {v: count for v in variants}, root / "legs", levels, variants,
                                        settings):
        key = step_key("legs", {"run": run_key(params, settings)[0]}, versions)
        if not finished(run_dir, key):
            prepare(run_dir, key)
            pending.append((params, run_dir, key))
        legs_dirs.append(str(run_dir))
    outcomes = steps.generate_leg_sets([(params, run_dir) for params, run_dir, _ in pending], settings,
                                       workers or None, dask_address) if pending else []
    for (params, run_dir, key), outcome in zip(pending, outcomes, strict=True):
        if outcome.failure:   # each run resumes from its artifacts next time
            raise StepFailed(f"legs {params.level}-{params.variant}: {outcome.failure}")
        steps.validate_legs(str(run_dir), settings)
        mark_finished(run_dir, key, {"level": params.level, "variant": params.variant, "count": count, "seed": seed},
                      versions)
    task_dirs = [str(root / "tasks" / family) for family in families]
    for family, task_dir in zip(families, task_dirs, strict=True):  # one after another: they share the tool cache
        steps.task_set(family, seed, task_dir, settings, versions)
    steps.report(legs_dirs, str(root / "report"), settings)
    changes = steps.publish(repo_id, legs_dirs, task_dirs, str(root / "hub"), upload)
    (root / "changes.json").write_text(json.dumps(changes, indent=2) + "\n")
    return changes
