"""The MATH task set as built by the CLI: templates and plans, prompts shared between seeds, the
measured difficulty per level, and the build time. Prints; never fails.

    python benchmarks/math_tasks.py [--count 1000] [--big 2000] [--pairs 1,2 7,8] [--out DIR]

Builds (``python -m pipeline.tasks build --family math``) ``--big`` tasks with the first seed of the
first pair (timed, and checked for repeated prompts) and ``--count`` tasks for every seed of
``--pairs``; a run already in ``--out`` is reused (and then not timed again).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.tasks.common import read_task_rows
from pipeline.tasks.math.core import LEVELS
from pipeline.tasks.math.dataset import FAMILIES


def build(out: Path, count: int, seed: int) -> tuple[list[dict], float | None]:
    """Rows of a CLI build (made now and timed, or reused from an earlier run)."""
    run = out / f"math-c{count}-s{seed}"
    seconds = None
    if not (run / "math-tasks.parquet").is_file():
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pipeline.tasks", "build", "--family", "math", "--count", str(count),
                        "--seed", str(seed), "--out", str(run), "--cache", str(out / f"cache-s{seed}.sqlite")],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - started
    return [r for r in read_task_rows(run) if r["family"] == "math"], seconds


def shared(a: list[dict], b: list[dict]) -> tuple[int, int, float]:
    """Prompts of both builds, distinct prompts over both, and the share of a's prompts that b also has (%)."""
    pa, pb = {r["prompt"] for r in a}, {r["prompt"] for r in b}
    return len(pa) + len(pb), len(pa | pb), 100 * len(pa & pb) / max(1, len(pa))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=1000, help="tasks per seed for the seed comparison")
    ap.add_argument("--big", type=int, default=2000, help="tasks of the timed build")
    ap.add_argument("--pairs", nargs="+", default=["1,2", "7,8"], help="seed pairs to compare")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="legwork-math-"))
    pairs = [tuple(int(v) for v in p.split(",")) for p in a.pairs]

    big, seconds = build(out, a.big, pairs[0][0])
    meta = [json.loads(r["metadata_json"]) for r in big]
    prompts = [r["prompt"] for r in big]
    print(f"MATH --count {a.big} --seed {pairs[0][0]}: {len(big)} tasks, {len(set(prompts))} distinct prompts "
          f"({len(prompts) - len(set(prompts))} repeated), build "
          + (f"{seconds:.1f} s" if seconds is not None else "reused (not timed)"))
    plans = {json.dumps(m["plan"]) for m in meta}
    print(f"templates {len({m['family'] for m in meta})} (cells {len({(m['family'], m['level']) for m in meta})}), "
          f"distinct plans {len(plans)}, distinct tool plans "
          f"{len({json.dumps([m['knowledge_points'], m['difficulty']['calculator_calls']]) for m in meta})}")

    runs = {}
    for pair in pairs:
        for seed in pair:
            runs[seed] = runs.get(seed) or build(out, a.count, seed)[0]
    print(f"\nprompts over two seeds at --count {a.count}:")
    for s1, s2 in pairs:
        total, distinct, pct = shared(runs[s1], runs[s2])
        print(f"  seeds {s1} and {s2}: {distinct} distinct of {total} prompts, shared {pct:.2f}%")

    by_family = defaultdict(list)
    for m in meta:
        by_family[m["family"]].append(m)
    s1, s2 = pairs[0]
    print(f"\nper template (--count {a.big} --seed {s1}; prompts over seeds {s1} and {s2} at --count {a.count}):")
    print(f"{'domain':14} {'template':24} {'tasks':>5} {'plans':>5} {'plans/cell':>10} {'prompts 2 seeds':>15} "
          f"{'shared':>7}  mean effort per level 1-5")
    for name in sorted(by_family, key=lambda n: (FAMILIES[n].domain, n)):
        mine = by_family[name]
        cells = defaultdict(set)
        for m in mine:
            cells[m["level"]].add(json.dumps(m["plan"]))
        one = [r for r in runs[s1] if json.loads(r["metadata_json"])["family"] == name]
        two = [r for r in runs[s2] if json.loads(r["metadata_json"])["family"] == name]
        _, distinct, pct = shared(one, two)
        efforts = " ".join(f"{mean(m['difficulty']['effort'] for m in mine if m['level'] == lv):5.1f}"
                           if any(m["level"] == lv for m in mine) else "    -" for lv in LEVELS)
        print(f"{FAMILIES[name].domain:14} {name:24} {len(mine):5d} {len({json.dumps(m['plan']) for m in mine}):5d} "
              f"{mean(len(p) for p in cells.values()):10.1f} {distinct:15d} {pct:6.1f}%  {efforts}")

    print("\ndifficulty per level (means over the tasks of the timed build; effort = steps + calculator calls + "
          "knowledge points):")
    print(f"{'family set':14} {'level':>5} {'tasks':>5} {'steps':>6} {'calc calls':>10} {'knowledge pts':>13} "
          f"{'effort':>6} {'tool calls':>10}")
    trace_calls = {r["task_id"]: len(json.loads(r["trace_json"])["steps"]) for r in big}
    domains = list(dict.fromkeys(f.domain for f in FAMILIES.values()))
    for domain in [*domains, "all"]:
        for lv in LEVELS:
            mine = [(r, m) for r, m in zip(big, meta) if m["level"] == lv and (domain == "all" or r["domain"] == domain)]
            if not mine:
                continue
            fig = [m["difficulty"] for _, m in mine]
            print(f"{domain:14} {lv:5d} {len(mine):5d} {mean(f['steps'] for f in fig):6.2f} "
                  f"{mean(f['calculator_calls'] for f in fig):10.2f} {mean(f['knowledge_points'] for f in fig):13.2f} "
                  f"{mean(f['effort'] for f in fig):6.2f} {mean(trace_calls[r['task_id']] for r, _ in mine):10.2f}")
    print(f"\nruns in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
