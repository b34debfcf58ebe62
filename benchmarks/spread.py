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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.config import load_settings
from pipeline.export import load_legs
from pipeline.model import LEVELS, VARIANTS
from pipeline.report.stats import spread_line, world_spread
from pipeline.stages.base import StageContext
from pipeline.stages.crawl import seed_candidates


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=25)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="legwork-spread-"))
    ctx = StageContext.create(load_settings())
    all_legs = []
    print(f"{'level':8} {'variant':7} {'legs':>5} {'seeds':>6} {'max uses':>8} {'bound':>6}  (bound: ceil(legs / seed pool) + 1)")
    for level in LEVELS:
        for variant in VARIANTS:
            run = out / f"{level}-{variant}"
            if not (run / "legs.parquet").is_file():
                subprocess.run([sys.executable, "-m", "pipeline.generate", "--difficulty", level, "--variant", variant,
                                "--count", str(a.count), "--seed", str(a.seed), "--task-runner", "local", "--quiet",
                                "--out", str(run)], cwd=ROOT, check=True)
            legs = load_legs(run)
            all_legs += legs
            pool = len(seed_candidates(ctx, ctx.presets[level].extraction))
            row = world_spread(legs)[-1]
            print(f"{level:8} {variant:7} {row['legs']:5d} {row['distinct_seeds']:6d} {row['max_seed_uses']:8d} "
                  f"{math.ceil(len(legs) / pool) + 1:6d}")
    for row in world_spread(all_legs):
        print(f"{row['variant']:7} {row['level']:8} " + spread_line(row))
    print(f"runs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
