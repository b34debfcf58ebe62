"""The full regeneration, from the command line: legs of every level and variant, task sets,
validation, the HTML report and publishing (the Prefect flow ``flows.prefect_tasks.regeneration``).

    python -m flows.regenerate --out data/release [--count 5] [--seed 0] [--families math,atp,os,git]
                               [--levels ...] [--variants ...] [--repo-id ORG/NAME [--upload]]
                               [--task-runner thread|process|dask] [--workers N] [--dask-address ADDR]

Incremental: a leg or task set is made again only when its parameters, the code or the data
changed (completion markers, see ``flows.release``); every tool or LLM call made before is
answered from the record/replay cache. ``changes.json`` lists what changed since the previous
release in --out (legs and tasks added, removed or changed, by id and content hash). The flow
reports to the configured Prefect API, or to a temporary server that dies with this process.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from flows.prefect_api import prefect_api
from flows.release import FAMILIES, StepFailed
from pipeline.config import PROJECT_ROOT
from pipeline.model import LEVELS, VARIANTS


def _names(text: str) -> list[str]:
    return [name for name in text.split(",") if name]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flows.regenerate", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=PROJECT_ROOT / "data" / "release")
    p.add_argument("--count", type=int, default=5, help="legs per level and variant")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--families", type=_names, default=list(FAMILIES))
    p.add_argument("--levels", type=_names, default=list(LEVELS))
    p.add_argument("--variants", type=_names, default=list(VARIANTS))
    p.add_argument("--repo-id", default="legwork/legwork")
    p.add_argument("--upload", action="store_true", help="publish to the hub (token from HF_TOKEN); default: dry run only")
    p.add_argument("--task-runner", choices=["thread", "process", "dask"], default="thread")
    p.add_argument("--dask-address", default=None, help="a Dask scheduler: leg sets and tasks run on its workers")
    p.add_argument("--workers", type=int, default=0, help="leg sets made side by side (default: one per core)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    with prefect_api(PROJECT_ROOT / ".prefect"):
        from flows.prefect_tasks import regeneration, task_runner_for  # Prefect: once its API is chosen
        flow = regeneration.with_options(task_runner=task_runner_for(args.task_runner, args.dask_address))
        try:
            changes = flow(out=str(args.out), count=args.count, seed=args.seed, families=args.families,
                           levels=args.levels, variants=args.variants, repo_id=args.repo_id, upload=args.upload,
                           workers=args.workers, dask_address=args.dask_address)
        except (StepFailed, ValueError) as exc:
            print(f"regeneration failed: {exc}", file=sys.stderr)
            return 1
    print(f"regenerated into {args.out} in {time.perf_counter() - t0:.1f} s; since the previous release: "
          + ", ".join(f"{k} {len(v)}" for k, v in changes.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
