"""The full regeneration flow: legs of every level and variant, task sets, validation, the
HTML report and publishing, as one Prefect flow with a task per step.

    python -m flows.regenerate --out data/release [--count 5] [--families math,atp,os,git]
                               [--repo-id ORG/NAME [--upload]] [--task-runner thread|process|dask]

Incremental: every step writes into a fixed folder under --out, generation resumes from
finished artifacts, and every tool or LLM call is answered from the record/replay cache
when it was made before, so a re-run with the same settings redoes nothing. After
publishing, ``changes.json`` lists what changed since the previous release in --out
(legs and tasks added, removed or changed, by id and content hash).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

from flows.generate import GenerationParams, prefect_environment, task_runner_for
from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.model import LEVELS, VARIANTS

FAMILIES = ("math", "atp", "os", "git")
DEFAULT_TASK_COUNTS = {"math": None, "atp": None, "os": None, "git": None}  # None: the family's default size


def _cli_step(module: str, argv: list[str]) -> int:
    """Run one of the project's CLIs in-process (the same code path a user runs)."""
    import importlib
    main = importlib.import_module(module).main
    code = main(argv)
    if code:
        raise RuntimeError(f"python -m {module} {' '.join(argv)} exited {code}")
    return code


def release_index(hub_dir: Path) -> dict[str, str]:
    """id -> content hash of every leg and task row in a dry-run hub folder."""
    import pyarrow.parquet as pq
    index: dict[str, str] = {}
    for shard in sorted(hub_dir.glob("*/*.parquet")):
        config = shard.parent.name
        for row in pq.read_table(shard).to_pylist():
            key = row.get("leg_id") or row.get("task_id") or json.dumps(row, sort_keys=True, default=str)[:80]
            index[f"{config}/{key}"] = hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return index


def diff_releases(old: dict[str, str], new: dict[str, str]) -> dict[str, list[str]]:
    return {"added": sorted(set(new) - set(old)), "removed": sorted(set(old) - set(new)),
            "changed": sorted(k for k in set(old) & set(new) if old[k] != new[k])}


def regenerate(out: Path, count: int, seed: int, families: list[str], repo_id: str, upload: bool,
               levels: list[str], variants: list[str], task_runner: str = "thread", dask_address: str | None = None):
    from prefect import flow, task

    run_step = task(name="cli-step", retries=0, cache_policy=None)(_cli_step)
    settings = load_settings()

    @flow(name="legwork-regenerate", log_prints=False, validate_parameters=False,
          task_runner=task_runner_for(task_runner, dask_address))
    def regeneration(out: str, count: int, seed: int):
        from flows.prefect_tasks import generate_legs
        root = Path(out)
        legs_dirs = []
        for variant in variants:
            for level in levels:
                params = GenerationParams(level=level, variant=variant, count=count, seed=seed)
                run_dir = root / "legs" / f"{level}-{variant}"
                generate_legs(params, str(run_dir), settings)  # a subflow; resumes from its artifacts
                legs_dirs.append(run_dir)
        task_dirs = []
        for family in families:
            fam_dir = root / "tasks" / family
            argv = ["build", "--family", family, "--seed", str(seed), "--out", str(fam_dir)]
            if DEFAULT_TASK_COUNTS.get(family) is not None:
                argv += ["--count", str(DEFAULT_TASK_COUNTS[family])]
            if not any(fam_dir.glob("*.parquet")):
                run_step("pipeline.tasks.common", argv)
            task_dirs.append(fam_dir)
        for d in legs_dirs:
            run_step("pipeline.validate", [str(d)])
        for d in task_dirs:
            run_step("pipeline.tasks.common", ["validate", str(d)])
        # the report re-checks the invariants (about a second): its pages then show each leg's results
        run_step("pipeline.report.__main__", [*map(str, legs_dirs), "--out", str(root / "report")])
        hub = root / "hub"
        previous = release_index(hub) if hub.exists() else {}
        if hub.exists():
            import shutil
            shutil.rmtree(hub)
        argv = ["--repo-id", repo_id, "--skip-validate"]  # validated just above
        for d in legs_dirs:
            argv += ["--legs", str(d)]
        for d in task_dirs:
            argv += ["--tasks", str(d)]
        run_step("pipeline.publish", argv + ["--dry-run", "--out", str(hub)])
        changes = diff_releases(previous, release_index(hub))
        (root / "changes.json").write_text(json.dumps(changes, indent=2) + "\n")
        if upload:
            run_step("pipeline.publish", argv)
        return changes

    return regeneration(str(out), count, seed)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flows.regenerate", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=PROJECT_ROOT / "data" / "release")
    p.add_argument("--count", type=int, default=5, help="legs per level and variant")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--levels", default=",".join(LEVELS))
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--repo-id", default="legwork/legwork")
    p.add_argument("--upload", action="store_true", help="publish to the hub (token from HF_TOKEN); default: dry run only")
    p.add_argument("--task-runner", choices=["thread", "process", "dask"], default="thread")
    p.add_argument("--dask-address", default=None)
    args = p.parse_args(argv)
    prefect_environment(PROJECT_ROOT / ".prefect")
    t0 = time.perf_counter()
    changes = regenerate(args.out, args.count, args.seed, [f for f in args.families.split(",") if f],
                         args.repo_id, args.upload, args.levels.split(","), args.variants.split(","),
                         args.task_runner, args.dask_address)
    print(f"regenerated into {args.out} in {time.perf_counter() - t0:.1f} s; since the previous release: "
          + ", ".join(f"{k} {len(v)}" for k, v in changes.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
