"""``python -m pipeline.export {harbor,aar,trajectories} ...``: write Harbor tasks, AAR JSON, or the
golden trajectories (chat rows for training).

OUT_DIR must be new or empty, or hold an earlier export of the same kind, which is replaced (and said
so); anything else in it is refused (``pipeline.export.outdir``)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipeline.export import load_legs
from pipeline.export.aar import write_aar_dir
from pipeline.export.harbor import IMAGE_NAME, SHARED, export_harbor
from pipeline.export.hub import ConfigData, read_task_dir, unverified, write_shards
from pipeline.export.outdir import prepare, record
from pipeline.export.trajectories import (
    CONFIG,
    SPLIT,
    TRAJECTORY_SCHEMA,
    Origin,
    openai_finetune_line,
    run_origin,
    storage_row,
    trajectory_rows,
)
from pipeline.usage import run_cli

OPENAI_JSONL = f"{CONFIG}.openai.jsonl"     # OpenAI's fine-tuning format, beside the Parquet shards


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.export", description=__doc__)
    sub = ap.add_subparsers(dest="format", required=True)
    h = sub.add_parser("harbor", help="one Harbor task per leg, sharing one environment (image build context)")
    h.add_argument("dataset", help="legs.parquet, a directory holding it, a release, or a directory of AAR JSON")
    h.add_argument("out_dir")
    h.add_argument("--snapshot", help="snapshot directory the tools serve (default: the configured one)")
    h.add_argument("--world", help="offline tool-world directory (default: the configured one)")
    h.add_argument("--wheel", help="use this wheel of the project instead of building one (pip wheel --no-deps)")
    h.add_argument("--image-name", default=None,
                   help="image repository for the shared environment (default legwork-harbor-env; a registry "
                        "path such as ghcr.io/org/legwork-env for cloud providers)")
    h.add_argument("--agent-allow-host", action="append", default=[], metavar="HOST",
                   help="a host the agent phase may reach (e.g. api.openai.com for an agent running inside the "
                        "container): [agent] network_mode = allowlist; repeatable. Default: no network at all")
    a_ = sub.add_parser("aar", help="one AAR JSON file per leg")
    a_.add_argument("dataset")
    a_.add_argument("out_dir")
    t = sub.add_parser("trajectories", help=f"golden trajectories: OUT/{CONFIG}/{SPLIT}-*.parquet (chat-template form) "
                                             f"and OUT/{OPENAI_JSONL} (OpenAI fine-tuning form)")
    t.add_argument("dataset", nargs="*", help="leg datasets (run folders, legs.parquet, releases, AAR JSON)")
    t.add_argument("out_dir")
    t.add_argument("--tasks", action="append", type=Path, default=[], metavar="TASKS_DIR",
                   help="an output directory of 'python -m pipeline.tasks build' (math and ATP rows); repeatable")
    t.add_argument("--include-unverified", action="store_true", help="also ATP rows no prover verified")
    a = ap.parse_args(argv)
    if a.format == "trajectories" and not a.dataset and not a.tasks:
        ap.error("trajectories: give at least one leg dataset or --tasks DIR")
    # read every input before the folder is touched: a bad input leaves an earlier export as it was
    if a.format in ("harbor", "aar"):
        legs = load_legs(a.dataset)
        note = prepare(a.out_dir, a.format)
        if a.format == "harbor":
            paths = export_harbor(legs, a.out_dir, snapshot_dir=a.snapshot, world_dir=a.world, wheel=a.wheel,
                                  image_name=a.image_name or IMAGE_NAME, origin=run_origin(a.dataset),
                                  agent_allowed_hosts=a.agent_allow_host)
            image = json.loads((Path(a.out_dir) / SHARED / "image.json").read_text())["image"]
            done = (f"{len(paths)} harbor tasks written to {a.out_dir}, sharing {SHARED}/ (image {image}; "
                    f"build it once with {a.out_dir}/build-image.sh)")
        else:
            paths = write_aar_dir(legs, a.out_dir)
            done = f"{len(paths)} aar legs written to {a.out_dir}"
        record(a.out_dir, a.format)
        print(done + (f"; {note}" if note else ""))
        return 0
    return export_trajectories(a)


def export_trajectories(a: argparse.Namespace) -> int:
    legs = [(leg, run_origin(d) if Path(d).exists() else Origin(f"hub:{d}")) for d in a.dataset
            for leg in load_legs(d)]
    tasks, dropped = [], 0
    for d in a.tasks:
        origins: dict[str, str] = {}
        _, by_config = read_task_dir(d, origins)
        for name, rows in by_config.items():
            if name == "math_derived":
                continue
            for r in rows:
                if not a.include_unverified and unverified(r):
                    dropped += 1
                    continue
                tasks.append((r, Origin(origins.get(r["task_id"]))))
    rows, left_out = trajectory_rows(legs, tasks)
    if dropped:
        left_out["atp (unverified)"] = dropped
    out = Path(a.out_dir)
    note = prepare(out, "trajectories")
    shards = write_shards(ConfigData(CONFIG, "trajectories", TRAJECTORY_SCHEMA, [storage_row(r) for r in rows],
                                     split=SPLIT), out)
    with (out / OPENAI_JSONL).open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(openai_finetune_line(r), ensure_ascii=False) + "\n")
    record(out, "trajectories")
    kinds = {k: sum(r["metadata"]["family"] == k for r in rows) for k in sorted({r["metadata"]["family"] for r in rows})}
    print(f"{len(rows)} trajectories ({', '.join(f'{k} {n}' for k, n in kinds.items()) or 'none'}) written to "
          f"{out / CONFIG} ({len(shards)} shard(s), split {SPLIT}) and {out / OPENAI_JSONL}"
          + (f"; left out: {', '.join(f'{k} {n}' for k, n in sorted(left_out.items()))}" if left_out else "")
          + (f"; {note}" if note else ""))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m pipeline.export"))
