"""Leg generation as a Prefect 3 flow: eight stages, each a task over batches of legs, each
writing a Parquet artifact; rejected legs go to rejected.parquet and their slot is retried
with a new attempt until --count legs are accepted or the attempt budget is spent.

Resume: every stage artifact of every round is written atomically under the run directory
together with the run's parameters; a re-run with the same parameters loads finished
artifacts instead of recomputing them, so an interrupted run completes to the same bytes.
Determinism: a leg's randomness depends only on its id and the stage, results are sorted
by slot, and nothing time-dependent enters an artifact.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.cache import ReplayMiss, canonical_json
from pipeline.config import Settings
from pipeline.model import ARTIFACT_SCHEMA, DETOUR, ROADBLOCK, ROUTE_INFO, Leg
from pipeline.stages import STAGE_MODULES
from pipeline.stages.base import STAGES, Rejected, StageContext

ARTIFACT_FORMAT = 1


@dataclass(frozen=True)
class GenerationParams:
    level: str
    variant: str
    count: int
    seed: int
    no_simulated: bool = False
    preset_overrides: tuple[str, ...] = ()
    batch_size: int = 8
    seed_title: str | None = None

    def digest(self) -> str:
        d = {k: v for k, v in self.__dict__.items() if k != "batch_size"}
        return hashlib.sha256(canonical_json({"format": ARTIFACT_FORMAT, **d}).encode()).hexdigest()[:16]


@dataclass
class RunResult:
    accepted: list[Leg]
    rejected: list[dict]
    out_dir: Path
    rounds: int
    attempts: int
    seconds: float
    stage_seconds: dict[str, float] = field(default_factory=dict)


class BudgetExhausted(RuntimeError):
    """The attempt budget ran out before --count legs were accepted."""


# ---- rows ------------------------------------------------------------------------------------
def leg_row(leg: Leg, stage: str, attempt: int, status: str = "ok", reason: str | None = None) -> dict[str, Any]:
    kinds = [s.kind for s in leg.stops]
    return {
        "leg_id": leg.leg_id, "level": leg.level, "variant": leg.variant, "seed": leg.seed, "attempt": attempt,
        "stage": stage, "status": status, "reason": reason,
        "n_stops": len(leg.stops) or None, "n_route_info": kinds.count(ROUTE_INFO) or None,
        "n_roadblocks": kinds.count(ROADBLOCK) or None, "n_detours": kinds.count(DETOUR) or None,
        "n_diamonds": leg.diamonds or None, "n_tool_calls": len(leg.trace) or None,
        "passcode": leg.passcode, "seed_url": leg.seed_url or None, "riddle": leg.riddle or None,
        "simulated_share": leg.metadata.get("simulated_share"), "leg_json": leg.to_json(),
    }


def write_rows(path: Path, rows: list[dict]) -> None:
    """Atomic, deterministic Parquet write (tmp file then rename: a crash leaves no half artifact)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=ARTIFACT_SCHEMA)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, compression="zstd", use_dictionary=False, write_statistics=False)
    os.replace(tmp, path)


def read_rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


# ---- one stage over a batch (pure: no Prefect, no files) -----------------------------------------
def apply_stage(stage: str, legs: list[Leg], ctx: StageContext) -> list[tuple[Leg, str | None]]:
    """Run a stage on each leg; a failure of any kind becomes that leg's rejection reason."""
    module = STAGE_MODULES[stage]
    out = []
    for leg in legs:
        try:
            out.append((module.run(leg, ctx), None))
        except Rejected as exc:
            out.append((leg, str(exc)))
        except ReplayMiss as exc:  # replay mode and a call never recorded: the message names the call
            out.append((leg, f"{stage}: {exc}"))
        except Exception as exc:  # errors are data: one bad page or tool never stops the run
            out.append((leg, f"{stage}: unexpected {type(exc).__name__}: {exc}"))
    return out


def new_leg(params: GenerationParams, slot: int, attempt: int) -> Leg:
    leg_id = "leg_" + hashlib.sha256(f"{params.variant}|{params.level}|{params.seed}|{slot}|{attempt}".encode()).hexdigest()[:12]
    leg = Leg(leg_id=leg_id, level=params.level, variant=params.variant, seed=params.seed * 1_000_003 + slot,
              seed_title="", seed_url="")
    leg.metadata["slot"], leg.metadata["attempt"] = slot, attempt
    if params.seed_title:
        leg.metadata["seed_title"] = params.seed_title
    return leg


# ---- the driver (shared by the Prefect flow and the in-process runner) ----------------------------
MapStage = Callable[[str, list[list[Leg]]], list[list[tuple[Leg, str | None]]]]


def run_generation(params: GenerationParams, out_dir: Path, settings: Settings, map_stage: MapStage,
                   progress: Callable[[str, int, int], None] | None = None) -> RunResult:
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = out_dir / "run.json"
    snapshot_manifest = settings.snapshot_dir / "manifest.json"
    snapshot_hash = json.loads(snapshot_manifest.read_text())["hash"] if snapshot_manifest.is_file() else None
    info = {"params": {k: list(v) if isinstance(v, tuple) else v for k, v in params.__dict__.items() if k != "batch_size"},
            "digest": params.digest(), "format": ARTIFACT_FORMAT, "snapshot": snapshot_hash}
    if manifest.exists():  # resuming: only the very same run may continue in this folder
        previous = json.loads(manifest.read_text())
        if previous.get("digest") != info["digest"] or previous.get("snapshot") != snapshot_hash:
            raise SystemExit(f"{out_dir} holds a run with other parameters or another snapshot "
                             f"({previous.get('params')}, snapshot {str(previous.get('snapshot'))[:12]}); "
                             "choose another --out or delete it")
    else:
        manifest.write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")

    pending = [(slot, 0) for slot in range(params.count)]
    accepted: dict[int, Leg] = {}
    rejected_rows: list[dict] = []
    stage_seconds = {s: 0.0 for s in STAGES}
    attempts = 0
    round_no = 0
    from pipeline.catalog import load_presets
    _, generation = load_presets(list(params.preset_overrides), settings.templates_dir)
    attempts_per_leg = int(generation["attempts_per_leg"])
    while pending:
        round_dir = out_dir / "artifacts" / f"round-{round_no:02d}"
        legs = [new_leg(params, slot, attempt) for slot, attempt in pending]
        attempts += len(legs)
        for n, stage in enumerate(STAGES):
            path = round_dir / f"{n + 1}-{stage}.parquet"
            t0 = time.perf_counter()
            if path.exists():  # finished earlier: resume from the artifact
                rows = read_rows(path)
                results = [(Leg.from_json(r["leg_json"]), r["reason"] if r["status"] == "rejected" else None) for r in rows]
            else:
                batches = [legs[i:i + params.batch_size] for i in range(0, len(legs), params.batch_size)]
                results = [pair for batch in map_stage(stage, batches) for pair in batch]
                rows = [leg_row(leg, stage, leg.metadata["attempt"], "rejected" if why else "ok", why) for leg, why in results]
                write_rows(path, rows)
            stage_seconds[stage] += time.perf_counter() - t0
            legs = []
            for leg, why in results:
                if why:
                    rejected_rows.append(leg_row(leg, stage, leg.metadata["attempt"], "rejected", why))
                else:
                    legs.append(leg)
            if progress:
                progress(stage, round_no, len(legs))
        for leg in legs:
            accepted[leg.metadata["slot"]] = leg
        pending = [(slot, attempt + 1) for slot, attempt in pending
                   if slot not in accepted and attempt + 1 < attempts_per_leg]
        round_no += 1
    legs_sorted = [accepted[s] for s in sorted(accepted)]
    write_rows(out_dir / "legs.parquet", [leg_row(leg, "accepted", leg.metadata["attempt"]) for leg in legs_sorted])
    write_rows(out_dir / "rejected.parquet", sorted(rejected_rows, key=lambda r: (r["attempt"], r["leg_id"])))
    result = RunResult(legs_sorted, rejected_rows, out_dir, round_no, attempts, time.perf_counter() - started, stage_seconds)
    if len(legs_sorted) < params.count:
        raise BudgetExhausted(f"accepted {len(legs_sorted)} of {params.count} legs after {attempts} attempts "
                              f"({attempts_per_leg} per leg); most frequent reasons: {common_reasons(rejected_rows)}; "
                              f"see {out_dir / 'rejected.parquet'} for all of them")
    return result


def common_reasons(rejected_rows: list[dict], top: int = 3) -> str:
    """The commonest rejection reasons, details (arguments, stop numbers in brackets) cut off."""
    counts = Counter((r.get("reason") or "").split(" (")[0] for r in rejected_rows)
    return "; ".join(f"{n} x {reason}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top])


def local_map_stage(ctx: StageContext, workers: int = 1) -> MapStage:
    """Run stage batches in this process (threads), without Prefect: used by tests and benchmarks."""
    def map_stage(stage: str, batches: list[list[Leg]]):
        if workers <= 1:
            return [apply_stage(stage, b, ctx) for b in batches]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(lambda b: apply_stage(stage, b, ctx), batches))
    return map_stage


# ---- Prefect ------------------------------------------------------------------------------------
def prefect_environment(home: Path) -> None:
    """Project-local, quiet Prefect settings (must run before prefect is imported)."""
    os.environ.setdefault("PREFECT_HOME", str(home))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_LOGGING_TO_API_ENABLED", "false")
    # a local Dask cluster logs connection-closed tracebacks while shutting down: not news to users
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")


def task_runner_for(name: str, dask_address: str | None = None):
    from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner
    if name == "thread":
        return ThreadPoolTaskRunner(max_workers=2)
    if name == "process":
        return ProcessPoolTaskRunner(max_workers=2)
    if name == "dask":
        from prefect_dask import DaskTaskRunner
        if dask_address:
            return DaskTaskRunner(address=dask_address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": 2, "threads_per_worker": 1, "processes": True})
    raise ValueError(f"unknown task runner {name!r}: choose thread, process or dask")


def run_with_prefect(params: GenerationParams, out_dir: Path, settings: Settings, ctx: StageContext,
                     task_runner: str = "thread", dask_address: str | None = None,
                     progress: Callable[[str, int, int], None] | None = None) -> RunResult:
    """Run the generation flow in Prefect (tasks are defined in flows/prefect_tasks.py so that
    process and Dask workers can import them)."""
    from flows import prefect_tasks
    flow = prefect_tasks.generate_legs.with_options(task_runner=task_runner_for(task_runner, dask_address))
    prefect_tasks.PROGRESS["callback"] = progress
    try:
        return flow(params, str(out_dir), settings)
    finally:
        prefect_tasks.PROGRESS["callback"] = None
