"""Generation under injected tool faults: legs, attempts, rejections by reason, injected faults
by kind, wall time; then the same run resumed without faults. Prints; never fails on a time.

    python benchmarks/faults.py [--count 100] [--level easy] [--variant linear] [--faults rate=0.1,seed=7]
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow.parquet as pq

from flows.generate import BudgetExhausted, GenerationParams, local_map_stage, run_generation
from pipeline.config import load_settings
from pipeline.stages.base import StageContext

FAULT_TYPES = ("ToolTimeout", "ServiceFailure", "MalformedResponse")


def reason_kind(reason: str) -> str:
    """A rejection reason reduced to its kind: the fault type it names, else its stage's first words."""
    for name in FAULT_TYPES:
        if name in reason:
            return f"fault: {name}"
    stage, _, rest = reason.partition(": ")
    words = re.split(r"[\s(:;,]+", rest)[:4]
    return f"{stage}: {' '.join(words)}"


def run(params: GenerationParams, out: Path, cache: Path, faults: str | None) -> dict:
    ctx = StageContext.create(load_settings(cache_path=cache, faults=faults or "off"))
    t0 = time.perf_counter()
    message = None
    try:
        result = run_generation(params, out, ctx.settings, local_map_stage(ctx))
        legs, attempts = len(result.accepted), result.attempts
    except BudgetExhausted as exc:
        message, legs, attempts = str(exc), None, None
    seconds = time.perf_counter() - t0
    rejected = pq.read_table(out / "rejected.parquet").to_pylist() if (out / "rejected.parquet").exists() else []
    accepted = pq.read_table(out / "legs.parquet").to_pylist() if (out / "legs.parquet").exists() else []
    injected = dict(ctx.toolbox.faults.counts) if ctx.toolbox.faults else {}
    # what the failed tries cost (metadata["tool_failures"]): retried, a fact or stop, or gave up
    outcomes = Counter(f["outcome"].split(" ")[0] if f["outcome"] in ("retried", "gave up") else "cost: " +
                       " ".join(w for w in f["outcome"].split() if w.isalpha() and w not in ("the", "for", "this"))[:40]
                       for r in accepted + rejected
                       for f in json.loads(r["leg_json"])["metadata"].get("tool_failures", []))
    return {"legs": legs, "attempts": attempts, "seconds": seconds, "message": message, "injected": injected,
            "reasons": Counter(reason_kind(r["reason"] or "") for r in rejected), "rejected": len(rejected),
            "outcomes": outcomes}


def show(title: str, figures: dict) -> None:
    print(f"== {title}")
    if figures["message"]:
        print(f"  budget: {figures['message']}")
    else:
        print(f"  legs accepted: {figures['legs']}  attempts: {figures['attempts']}  "
              f"wall time: {figures['seconds']:.1f} s")
    injected = figures["injected"]
    print(f"  injected faults: {sum(injected.values())}  by kind: "
          + (", ".join(f"{k} {v}" for k, v in sorted(injected.items())) or "none"))
    print(f"  failed tries recorded in the legs: {sum(figures['outcomes'].values())}  by outcome:")
    for outcome, n in figures["outcomes"].most_common(8):
        print(f"    {n:5d}  {outcome}")
    print(f"  rejections: {figures['rejected']}  by reason:")
    for reason, n in figures["reasons"].most_common():
        print(f"    {n:5d}  {reason}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--level", default="easy")
    p.add_argument("--variant", default="linear")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--faults", default="rate=0.1,seed=7")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="legwork-faults-"))
    params = GenerationParams(level=args.level, variant=args.variant, count=args.count, seed=args.seed)
    print(f"{args.count} {args.level} {args.variant} legs, seed {args.seed}, faults {args.faults}, "
          f"local runner, cold cache in {tmp}")
    show("clean run (no faults, separate folder and cache)", run(params, tmp / "clean", tmp / "clean.sqlite", None))
    show("fault run", run(params, tmp / "run", tmp / "cache.sqlite", args.faults))
    crash_after_round0_prevalidate(tmp / "run")
    show("crash after round 0's pre-validation, same --out and cache resumed without faults",
         run(params, tmp / "run", tmp / "cache.sqlite", None))


def crash_after_round0_prevalidate(out: Path) -> None:
    """Delete what a run would not have written had it stopped after round 0's stage 4."""
    round0 = out / "artifacts" / "round-00"
    for path in [p for p in round0.glob("*.parquet") if int(p.name.split("-")[0]) > 4]:
        path.unlink()
    for path in (out / "legs.parquet", out / "rejected.parquet"):
        path.unlink(missing_ok=True)
    for folder in (out / "artifacts").glob("round-*"):
        if folder != round0:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
