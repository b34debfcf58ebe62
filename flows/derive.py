"""Compute a world's per-page derived data ahead of generation, shard by shard (issue 33, items 7-8).

    python -m flows.derive [--snapshot DIR] [--workers N | --dask | --dask-address ADDR] [--shard-rows R]

A large world's pages are profiled when a leg first meets them (``StageContext.kept``): after an import
nearly every page is new, so the first releases pay for them. This computes the same kept values for
every page (``pipeline.stages.derive``), the page rows cut into shards of ``--shard-rows`` that run side
by side in worker processes of this machine or on a Dask cluster. Each finished shard leaves a marker
file (``derive-<key>/shard-<first>-<last>.json``, datatrove's way): a re-run after a kill skips the
finished shards and redoes only those in flight, whose pages already kept are read, not computed
again. The values kept are the ones a leg would compute, so generation's bytes do not change.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from concurrent.futures import as_completed as finished
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from flows.runs import _process_pool, local_cluster
from pipeline.config import ConfigError, Settings, load_settings
from pipeline.snapshot.store import SnapshotError
from pipeline.stages.base import StageContext
from pipeline.stages.derive import derive_rows, level_modes


def shards(last_row: int, rows: int) -> list[tuple[int, int]]:
    """Row ranges (first, last), inclusive, of at most ``rows`` rows each, covering rows 1 .. ``last_row``."""
    rows = max(1, int(rows))
    return [(first, min(first + rows - 1, last_row)) for first in range(1, last_row + 1, rows)]


def markers_dir(ctx: StageContext) -> Path:
    """Where finished shards are marked: by the key of the kept values (snapshot, data, the settings that
    change answers, code version) and the extraction modes derived, beside them."""
    kept_key = ctx.kept_key()
    modes = hashlib.sha256(repr(level_modes(ctx)).encode()).hexdigest()[:8]
    return ctx.settings.derived_dir / f"derive-{kept_key}-{modes}"


def derive_shard(first: int, last: int, settings: Settings, preset_overrides: tuple[str, ...] = ()) -> dict:
    """One shard in this process (its shared context), its marker written last and atomically."""
    ctx = StageContext.for_worker(settings, preset_overrides)
    marker = markers_dir(ctx) / f"shard-{first}-{last}.json"
    if marker.is_file():
        return {**json.loads(marker.read_text(encoding="utf-8")), "skipped": True}
    started = time.perf_counter()
    counts = derive_rows(ctx, first, last)
    record = {"first": first, "last": last, **counts, "seconds": round(time.perf_counter() - started, 3)}
    marker.parent.mkdir(parents=True, exist_ok=True)
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
    os.replace(tmp, marker)
    return {**record, "skipped": False}


def derive_world(settings: Settings, *, workers: int = 1, shard_rows: int = 2000, dask: bool = False,
                 dask_address: str | None = None, progress=None, preset_overrides: tuple[str, ...] = (),
                 last_row: int | None = None) -> dict:
    """Every shard of the world, ``workers`` at a time (processes, or Dask); ``progress(shard_record)``
    as each finishes. Returns the totals: pages, pages profiled, shards run and skipped, seconds.
    ``preset_overrides`` as generation's ``--set`` (the kept values depend on the levels' presets);
    ``last_row``: only rows 1 .. ``last_row`` (a part of the world, to measure what the whole will cost)."""
    ctx = StageContext.for_worker(settings, preset_overrides)
    rows = ctx.store.last_row()
    todo = shards(min(rows, last_row) if last_row else rows, shard_rows)
    started = time.perf_counter()
    records = []

    def done(record: dict) -> None:
        records.append(record)
        if progress is not None:
            progress(record)
    if dask or dask_address:
        from distributed import Client, as_completed  # heavy and optional: only for Dask runs
        cluster = None if dask_address else local_cluster(workers)
        with Client(dask_address or cluster) as client:
            for future in as_completed([client.submit(derive_shard, a, b, settings, preset_overrides, pure=False) for a, b in todo]):
                done(future.result())
        if cluster is not None:
            cluster.close()
    elif workers <= 1:
        for a, b in todo:
            done(derive_shard(a, b, settings, preset_overrides))
    else:
        with _process_pool(workers) as pool:
            for future in finished([pool.submit(derive_shard, a, b, settings, preset_overrides) for a, b in todo]):
                done(future.result())
    return {"pages": sum(r["pages"] for r in records), "profiled": sum(r["profiled"] for r in records),
            "shards": len(todo), "skipped": sum(r["skipped"] for r in records),
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--snapshot", type=Path, default=None, help="the world (default: the configured snapshot)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="shards side by side")
    p.add_argument("--dask", action="store_true", help="on a local Dask cluster of --workers processes")
    p.add_argument("--dask-address", default=None, help="scheduler address of an existing Dask cluster")
    p.add_argument("--shard-rows", type=int, default=2000, help="page rows a shard holds")
    p.add_argument("--rows", type=int, default=None, help="only the first ROWS page rows (to measure a part)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="LEVEL.KEY=VALUE",
                   help="the preset overrides generation will run with (as its --set)")
    args = p.parse_args(argv)
    try:
        settings = load_settings(**({"snapshot_dir": args.snapshot} if args.snapshot else {}))
        total_rows = StageContext.for_worker(settings, tuple(args.overrides)).store.last_row()
        total_rows = min(total_rows, args.rows) if args.rows else total_rows
    except (ConfigError, SnapshotError) as exc:
        print(f"derive: {exc}", file=sys.stderr)
        return 2
    columns = (TextColumn("derive"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
               TimeRemainingColumn())
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task("rows", total=total_rows, rate="")
        started = time.perf_counter()

        def shown(record: dict) -> None:
            bar.advance(task, record["last"] - record["first"] + 1)
            done = bar.tasks[task].completed
            bar.update(task, rate=f"{done / max(1e-9, time.perf_counter() - started):,.0f} rows/s")
        totals = derive_world(settings, workers=args.workers, shard_rows=args.shard_rows, dask=args.dask,
                              dask_address=args.dask_address, progress=shown, preset_overrides=tuple(args.overrides),
                              last_row=args.rows)
    print(f"derived {totals['pages']:,} pages ({totals['profiled']:,} with a profile) in {totals['seconds']} s; "
          f"{totals['shards']} shards, {totals['skipped']} already done; kept in {settings.derived_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
