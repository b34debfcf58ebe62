"""``python -m pipeline.export {harbor,aar,trajectories} ...``: write Harbor tasks, AAR JSON, or the
golden trajectories (OpenAI chat rows for training)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipeline.export import load_legs
from pipeline.export.aar import write_aar_dir
from pipeline.export.harbor import IMAGE_NAME, SHARED, export_harbor
from pipeline.export.hub import ConfigData, read_task_dir, unverified, write_shards
from pipeline.export.trajectories import CONFIG, TRAJECTORY_SCHEMA, Origin, run_origin, trajectory_rows


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
    t = sub.add_parser("trajectories", help="golden trajectories: OUT/trajectories/*.parquet and OUT/trajectories.jsonl")
    t.add_argument("dataset", nargs="*", help="leg datasets (run folders, legs.parquet, releases, AAR JSON)")
    t.add_argument("out_dir")
    t.add_argument("--tasks", action="append", type=Path, default=[], metavar="TASKS_DIR",
                   help="an output directory of 'python -m pipeline.tasks build' (math and ATP rows); repeatable")
    t.add_argument("--include-unverified", action="store_true", help="also ATP rows no prover verified")
    a = ap.parse_args(argv)

    if a.format == "harbor":
        paths = export_harbor(load_legs(a.dataset), a.out_dir, snapshot_dir=a.snapshot, world_dir=a.world,
                              wheel=a.wheel, image_name=a.image_name or IMAGE_NAME, origin=run_origin(a.dataset),
                              agent_allowed_hosts=a.agent_allow_host)
        image = json.loads((Path(a.out_dir) / SHARED / "image.json").read_text())["image"]
        print(f"{len(paths)} harbor tasks written to {a.out_dir}, sharing {SHARED}/ (image {image}; "
              f"build it once with {a.out_dir}/build-image.sh)")
        return 0
    if a.format == "aar":
        paths = write_aar_dir(load_legs(a.dataset), a.out_dir)
        print(f"{len(paths)} aar legs written to {a.out_dir}")
        return 0

    if not a.dataset and not a.tasks:
        ap.error("trajectories: give at least one leg dataset or --tasks DIR")
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
    shards = write_shards(ConfigData(CONFIG, "trajectories", TRAJECTORY_SCHEMA, rows), out)
    with (out / f"{CONFIG}.jsonl").open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    kinds = {k: sum(r["metadata"]["family"] == k for r in rows) for k in sorted({r["metadata"]["family"] for r in rows})}
    print(f"{len(rows)} trajectories ({', '.join(f'{k} {n}' for k, n in kinds.items()) or 'none'}) written to "
          f"{out / CONFIG} ({len(shards)} shard(s)) and {out / (CONFIG + '.jsonl')}"
          + (f"; left out: {', '.join(f'{k} {n}' for k, n in sorted(left_out.items()))}" if left_out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
