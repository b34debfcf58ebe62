"""The riddle-only solver at every level and variant: how many candidate legs it rejects as
ambiguous or unsolvable at acceptance, and its race score on the accepted legs (goal: FA 1.0).

    python benchmarks/solver.py [--count 5] [--seed 42] [--out DIR] [--aar ../shared/anchors/aar]

Prints one row per level and variant; figures only, never a pass/fail on time.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.model import LEVELS, VARIANTS


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--aar", type=Path, default=ROOT.parent / "shared" / "anchors" / "aar")
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="legwork-solver-"))
    print(f"{'level':8} {'variant':7} {'accepted':>8} {'attempts':>8} {'ambiguous':>9} {'unsolved':>8} "
          f"{'FA':>5} {'gen s':>6} {'race s':>6}")
    for level in LEVELS:
        for variant in VARIANTS:
            run = out / f"{level}-{variant}"
            t0 = time.perf_counter()
            cli("pipeline.generate", "--difficulty", level, "--variant", variant, "--count", str(a.count),
                "--seed", str(a.seed), "--task-runner", "local", "--quiet", "--out", str(run))
            gen_s = time.perf_counter() - t0
            rejected = pq.read_table(run / "rejected.parquet").to_pylist()
            reasons = Counter("ambiguous" if "is ambiguous" in (r["reason"] or "")
                              else "unsolved" if "riddle alone" in (r["reason"] or "") else "other"
                              for r in rejected)
            t0 = time.perf_counter()
            cli("pipeline.race", "--legs", str(run), "--agent", "solver", "--out", str(run / "solver-runs"))
            cli("pipeline.score", "--legs", str(run), "--runs", str(run / "solver-runs"), "--out",
                str(run / "solver-report.json"))
            race_s = time.perf_counter() - t0
            overall = json.loads((run / "solver-report.json").read_text())["overall"]
            print(f"{level:8} {variant:7} {overall['n']:8d} {overall['n'] + len(rejected):8d} "
                  f"{reasons['ambiguous']:9d} {reasons['unsolved']:8d} {overall['fa']:5.2f} {gen_s:6.1f} {race_s:6.1f}")
    if a.aar.is_dir():
        from pipeline.agents.solver import RiddleView, solve
        from pipeline.export import load_legs
        from pipeline.tools.registry import Toolbox
        toolbox = Toolbox()
        legs = load_legs(a.aar)
        outcomes = Counter()
        for leg in legs:
            s = solve(RiddleView(leg.riddle, leg.seed_url), toolbox)
            outcomes["right" if s.solved and s.answer == leg.passcode else s.status] += 1
        print(f"AAR anchor legs ({len(legs)}, LLM-written riddles): {dict(sorted(outcomes.items()))}")
    print(f"runs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
