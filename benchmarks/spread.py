"""How widely legs spread over the snapshot: distinct seeds, the most any seed is used, distinct
pages among page visits, per run and overall. Prints; never fails.

    python benchmarks/spread.py [--count 25] [--seed 42] [--out DIR]   (one run per level and variant)
"""
from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.export import load_legs
from pipeline.model import LEVELS, ROUTE_INFO, VARIANTS


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=25)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="legwork-spread-"))
    seeds, pages, legs_all = Counter(), Counter(), 0
    print(f"{'level':8} {'variant':7} {'legs':>5} {'seeds':>6} {'max uses':>8} {'bound':>6}")
    for level in LEVELS:
        for variant in VARIANTS:
            run = out / f"{level}-{variant}"
            if not (run / "legs.parquet").is_file():
                subprocess.run([sys.executable, "-m", "pipeline.generate", "--difficulty", level, "--variant", variant,
                                "--count", str(a.count), "--seed", str(a.seed), "--task-runner", "local", "--quiet",
                                "--out", str(run)], cwd=ROOT, check=True)
            legs = load_legs(run)
            run_seeds = Counter(leg.seed_title for leg in legs)
            seeds.update(run_seeds)
            pages.update(s.page_title for leg in legs for s in leg.stops if s.kind == ROUTE_INFO and s.page_title)
            legs_all += len(legs)
            print(f"{level:8} {variant:7} {len(legs):5d} {len(run_seeds):6d} {max(run_seeds.values()):8d} "
                  f"{math.ceil(len(legs) / 198) + 1:6d}")
    visits = sum(pages.values())
    print(f"all: {legs_all} legs, {len(seeds)} distinct seeds (most used {seeds.most_common(1)[0]}), "
          f"{len(pages)} distinct pages in {visits} page visits ({100 * len(pages) / visits:.0f}%)")
    print(f"runs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
