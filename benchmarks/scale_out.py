"""Scale-out: the release's eight runs on a local Dask cluster of 1 worker, then of 2 (``flows.runs``),
each from an empty call cache. Each cluster is started first and the release sent to its address, as
to a cluster that is already up (its start-up, a few seconds, is printed beside). Prints both wall times, the speed-up and whether the two made the same
bytes. Prints; never fails on a time.

    python benchmarks/scale_out.py [--count 10 | --release] [--seed 1] [--workers 1 2]

The page profiles (derived from the snapshot and the code once, then loaded) are made before the
first timing, and each cluster starts from its own copy of them with an empty hop store
(``StageContext.kept``, filled as pages are met), so both clusters start alike. On a machine with other work running, the speed-up
measures that work too: run it on an idle machine.
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flows.runs import RELEASE_COUNTS, local_cluster, release_runs, run_all
from pipeline.config import load_settings
from pipeline.stages.base import StageContext
from pipeline.stages.crawl import _profiles


def digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.parquet"))}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=10, help="legs per level and variant")
    p.add_argument("--release", action="store_true", help="the 1,400-leg release (200 linear, 150 DAG legs a level)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="legwork-scale-"))
    warm = StageContext.create(load_settings(cache_path=tmp / "warm.sqlite"))
    _profiles(warm)   # derived once, as in any run
    times = {}
    counts = RELEASE_COUNTS if args.release else {"linear": args.count, "dag": args.count}
    for n in args.workers:
        derived = tmp / f"derived-{n}"   # the derived data, without the hop stores an earlier run filled
        shutil.copytree(warm.settings.derived_dir, derived, ignore=shutil.ignore_patterns("*.sqlite*", "*.tmp"))
        settings = load_settings(cache_path=tmp / f"cache-{n}.sqlite", derived_dir=derived)
        runs = [(params, tmp / f"dask-{n}" / folder) for params, folder in release_runs(args.seed, counts, settings=settings)]
        t0 = time.perf_counter()
        cluster = local_cluster(n)   # as a cluster address would be: up before the release is sent
        started = time.perf_counter() - t0
        t0 = time.perf_counter()
        outcomes = run_all(runs, settings, dask_address=cluster.scheduler_address)
        times[n] = time.perf_counter() - t0
        cluster.close()
        legs = sum(len(o.result.accepted) for o in outcomes)
        short = [f"{o.params.level}-{o.params.variant}" for o in outcomes if o.failure]
        print(f"Dask, {n} worker{'s' if n > 1 else ''}: {times[n]:.1f} s for {legs} legs in {len(runs)} runs "
              f"(the cluster started in {started:.1f} s before)"
              + (f" (short of count: {', '.join(short)})" if short else ""))
    base = args.workers[0]
    for n in args.workers[1:]:
        same = digests(tmp / f"dask-{base}") == digests(tmp / f"dask-{n}")
        print(f"speed-up {n} workers against {base}: {times[base] / times[n]:.2f}x; same bytes: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
