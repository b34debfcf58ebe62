"""What a leg costs once a world's per-page values exist (issue 33, item 8), against the embedded world.

    python benchmarks/derived_cost.py --snapshot DIR [--level extreme] [--variant linear] [--count 20] [--seed 4]

Runs the same generation twice in one process per world, each run with an empty call cache: the first
computes the per-page values its legs meet (kept in ``derived_dir``: what ``python -m flows.derive``
computes ahead for every page), the second reads them. Prints wall and CPU seconds of each run on the
given snapshot and on the embedded one, and the ratio of the second runs. Reports; never fails.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def one_run(level: str, variant: str, count: int, seed: int, cache: Path) -> tuple[float, float, int, int]:
    """(wall s, CPU s, legs, attempts) of one generation run in this process."""
    from flows.generate import GenerationParams, local_map_stage, run_generation
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext
    ctx = StageContext.create(load_settings(cache_path=cache))
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    result = run_generation(GenerationParams(level=level, variant=variant, count=count, seed=seed),
                            cache.parent / f"run-{cache.stem}", ctx.settings, local_map_stage(ctx))
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - t0, cpu, len(result.accepted), result.attempts


def world(args, snapshot: str | None) -> list[tuple[float, float, int, int]]:
    """Both runs on one world, in a child process (the world is chosen by the environment)."""
    env = {**os.environ}
    if snapshot:
        env["LEGWORK_SNAPSHOT"] = snapshot
    else:
        env.pop("LEGWORK_SNAPSHOT", None)
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); sys.argv = ['x']; "
            f"from benchmarks.derived_cost import one_run; from pathlib import Path; "
            f"tmp = Path({tempfile.mkdtemp(prefix='legwork-derived-cost-')!r}); "
            f"print([one_run({args.level!r}, {args.variant!r}, {args.count}, {args.seed}, tmp / f'c{{k}}.sqlite') "
            f"for k in range(2)])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return eval(out.stdout.strip().splitlines()[-1])   # our own child's printed list of tuples


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--snapshot", required=True, help="the large world's snapshot folder")
    p.add_argument("--level", default="extreme")
    p.add_argument("--variant", default="linear")
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--seed", type=int, default=4)
    args = p.parse_args()
    rows = {"embedded": world(args, None), args.snapshot: world(args, args.snapshot)}
    print(f"{args.count} {args.level} {args.variant} legs, seed {args.seed}; load average at the end "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'world':40} {'run':>6} {'wall s':>8} {'CPU s':>8} {'legs':>5} {'attempts':>9}")
    for name, runs in rows.items():
        for k, (wall, cpu, legs, attempts) in enumerate(runs):
            print(f"{name[-40:]:40} {('first', 'kept')[k]:>6} {wall:8.1f} {cpu:8.1f} {legs:5d} {attempts:9d}")
    (_, base_cpu, _, _), (_, big_cpu, _, _) = rows["embedded"][1], rows[args.snapshot][1]
    (base_wall, _, _, _), (big_wall, _, _, _) = rows["embedded"][1], rows[args.snapshot][1]
    print(f"with the per-page values kept: {big_cpu / base_cpu:.2f}x the embedded world's CPU, "
          f"{big_wall / base_wall:.2f}x its wall time")


if __name__ == "__main__":
    main()
