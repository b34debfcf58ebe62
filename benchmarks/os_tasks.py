"""OS task family: what a built set holds and what building it costs. Prints; never fails on a time.

    python benchmarks/os_tasks.py [--counts 100,1000] [--seeds 1,2] [--keep DIR]

Builds the family through the CLI (``python -m pipeline.tasks build --family os``) for every count
with the first seed and validates each set (``python -m pipeline.tasks validate``), timing both; builds
the largest count with the second seed too. On the largest first-seed set it reports:

  kinds (templates)      distinct task kinds, overall and per domain
  plans                  distinct golden-solution shapes (``measure.plan_shape``: the commands and their
                         options with paths, names and numbers taken out), overall and per kind
  prompts shared         prompts of the second seed's set also in the first's, in % of the set
  difficulty per level   tasks, kinds, and the measured figure (simple commands, pipeline stages) of
                         each ``difficulty`` level
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.tasks.common import read_task_rows
from pipeline.tasks.os.measure import plan_shape


def cli(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pipeline.tasks", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    return time.perf_counter() - t0, done


def build(count: int, seed: int, out: Path, cache: Path) -> float:
    seconds, done = cli("build", "--family", "os", "--count", str(count), "--seed", str(seed), "--out", str(out),
                        "--cache", str(cache))
    if done.returncode != 0:
        raise SystemExit(f"build --count {count} --seed {seed} failed ({done.returncode}):\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds


def validate(out: Path, cache: Path) -> tuple[float, bool]:
    seconds, done = cli("validate", str(out), "--cache", str(cache))
    return seconds, done.returncode == 0


def table(header: list[str], rows: list[list]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for r in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())


def example(row: dict) -> str:
    return json.loads(row["metadata_json"])["agentbench"]["evaluation"]["example"]["code"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="100,1000")
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--keep", type=Path, default=None, help="build into this folder (kept) instead of a temp one")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.counts.split(",")]
    first, second = [int(s) for s in args.seeds.split(",")]
    base = args.keep or Path(tempfile.mkdtemp(prefix="legwork-os-bench-"))
    cache = base / "cache.sqlite"

    timings = []
    for count in counts:
        out = base / f"s{first}-c{count}"
        b = build(count, first, out, cache)
        v, ok = validate(out, cache)
        timings.append([count, first, f"{b:.1f}", f"{v:.1f}", f"{b + v:.1f}", "pass" if ok else "FAIL"])
    big = max(counts)
    other = base / f"s{second}-c{big}"
    b2 = build(big, second, other, cache)
    timings.append([big, second, f"{b2:.1f}", "-", f"{b2:.1f}", "-"])

    rows = read_task_rows(base / f"s{first}-c{big}")
    rows2 = read_task_rows(other)
    meta = {r["task_id"]: json.loads(r["metadata_json"]) for r in rows}
    shapes = {r["task_id"]: plan_shape(example(r)) for r in rows}
    print(f"OS task family, seed {first}, count {big}: {len(rows)} tasks, "
          f"{len({r['topic'] for r in rows})} kinds (templates), {len(set(shapes.values()))} plans "
          "(distinct golden-solution shapes)")
    print()

    print("per domain")
    per_domain: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        per_domain[r["domain"]].append(r)
    table(["domain", "tasks", "kinds", "plans", "difficulty levels"],
          [[d, len(rs), len({r["topic"] for r in rs}), len({shapes[r["task_id"]] for r in rs}),
            " ".join(f"{lv}:{sum(r['difficulty'] == lv for r in rs)}" for lv in range(1, 6))]
           for d, rs in sorted(per_domain.items())])
    print()

    print("per kind")
    per_kind: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        per_kind[r["topic"]].append(r)
    kind_rows = []
    for kind, rs in sorted(per_kind.items(), key=lambda kv: (kv[1][0]["domain"], kv[0])):
        cmds = [meta[r["task_id"]]["measure"]["commands"] for r in rs]
        kind_rows.append([kind, rs[0]["domain"], len(rs), len({shapes[r["task_id"]] for r in rs}),
                          f"{min(cmds)}-{max(cmds)}", "yes" if meta[rs[0]["task_id"]].get("wrong") else "no"])
    table(["kind", "domain", "tasks", "plans", "commands", "wrong solution checked"], kind_rows)
    print()

    p1, p2 = {r["prompt"] for r in rows}, {r["prompt"] for r in rows2}
    shared = p1 & p2
    print(f"prompts: seed {first} {len(p1)} distinct of {len(rows)}, seed {second} {len(p2)} distinct of "
          f"{len(rows2)}; shared between the seeds: {len(shared)} ({100 * len(shared) / max(1, len(p2)):.2f} %)")
    print()

    print("difficulty per level (the level bins the golden solution's simple-command count: 1 | 2 | 3-4 | 5-7 | 8+)")
    level_rows = []
    for lv in range(1, 6):
        rs = [r for r in rows if r["difficulty"] == lv]
        if not rs:
            level_rows.append([lv, 0, 0, "-", "-", "-"])
            continue
        cmds = [meta[r["task_id"]]["measure"]["commands"] for r in rs]
        stages = [meta[r["task_id"]]["measure"]["stages"] for r in rs]
        level_rows.append([lv, len(rs), len({r["topic"] for r in rs}), f"{statistics.mean(cmds):.2f}",
                           f"{min(cmds)}-{max(cmds)}", f"{statistics.mean(stages):.2f}"])
    table(["level", "tasks", "kinds", "mean commands", "commands", "mean pipeline stages"], level_rows)
    print()

    print("build + validate (seconds, wall clock; python -m pipeline.tasks build / validate)")
    table(["count", "seed", "build", "validate", "total", "validate result"], timings)
    if args.keep is None:
        import shutil
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
