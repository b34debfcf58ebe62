"""Wide stops over fresh legs (issue 34): per level and variant, how many wide stops the legs hold, of
which domains and aggregates, their set sizes, the golden calls they take, and whether invariant 13
(the set collected through the tools is the set enumerated over the world) and the level's counts hold
on every leg. Prints; never fails.

    python benchmarks/wide_legs.py [--count 25] [--seed 20261202] [--out DIR]   (one run per level and variant)
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.config import load_settings
from pipeline.export import load_legs
from pipeline.invariants import check_counts, check_wide_sets
from pipeline.model import LEVELS, VARIANTS, WIDE
from pipeline.stages.base import StageContext


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=25)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="legwork-wide-"))
    ctx = StageContext.create(load_settings())
    print(f"legs in {out}; seed {a.seed}, {a.count} per level and variant")
    print(f"{'level':8} {'variant':7} {'legs':>4} {'wide':>4} {'per leg':>7} {'sizes min/med/max':>17} "
          f"{'wide calls':>10} {'budget':>6} {'inv 13':>7} {'counts':>6} {'gen s':>6}  domains")
    total_legs = total_ok = 0
    for level in LEVELS:
        for variant in VARIANTS:
            run = out / f"{level}-{variant}"
            t0 = time.perf_counter()
            if not (run / "legs.parquet").is_file():
                subprocess.run([sys.executable, "-m", "pipeline.generate", "--difficulty", level, "--variant", variant,
                                "--count", str(a.count), "--seed", str(a.seed), "--task-runner", "local", "--quiet",
                                "--out", str(run)], cwd=ROOT, check=False)
            took = time.perf_counter() - t0
            legs = load_legs(run) if (run / "legs.parquet").is_file() else []
            wide = [s for leg in legs for s in leg.stops_of(WIDE)]
            sizes = sorted(len(s.wide.members) for s in wide)
            calls = [sum(t.stop == s.index for t in leg.trace) for leg in legs for s in leg.stops_of(WIDE)]
            holds = sum(not check_wide_sets(leg) for leg in legs)
            counted = sum(not check_counts(leg, ctx.presets[level]) for leg in legs)
            kinds = Counter(f"{s.wide.domain}/{s.wide.aggregate}{'+' + s.wide.measure if s.wide.measure else ''}"
                            for s in wide)
            total_legs += len(legs)
            total_ok += holds
            size_text = f"{sizes[0]}/{statistics.median(sizes):g}/{sizes[-1]}" if sizes else "-"
            call_text = f"{statistics.median(calls):g}" if calls else "-"
            budget = f"{statistics.median(leg.step_budget for leg in legs):g}" if legs else "-"
            print(f"{level:8} {variant:7} {len(legs):4d} {len(wide):4d} {len(wide) / max(len(legs), 1):7.2f} "
                  f"{size_text:>17} {call_text:>10} {budget:>6} {holds:3d}/{len(legs):<3d} {counted:3d}/{len(legs):<2d} "
                  f"{took:6.1f}  {dict(sorted(kinds.items()))}")
    print(f"invariant 13 holds on {total_ok} of {total_legs} legs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
