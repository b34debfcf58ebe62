"""Two code trees' release times, run alternately, and whether their legs are the same bytes.

On a shared machine one release's wall time says little: the same tree took 79-98 s within an hour
(session 9), and a single-thread loop's time varied by 70% from one run to the next. So a change is
judged here against its base by running the two trees in turn (base, head, base, head, ...), each in a
git worktree of this repository, and comparing their medians and minimums; every cell's
``legs.parquet`` is compared byte by byte with the base's first run. Each tree first makes one run that
is not counted: the first run after a code change computes the kept page values again.

    python benchmarks/compare_trees.py --base 631c449 [--head HEAD] [--pairs 3] [--seed 4]

Runs ``benchmarks/generate.py --release --median-legs 0`` of each tree, as that tree has it. Prints;
never fails on a time (it exits non-zero only when a tree cannot be checked out or its run fails).
"""
from __future__ import annotations

import argparse
import filecmp
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WALL = re.compile(r"^generation ([\d.]+) s wall .*?; ([\d.]+) s of stage work", re.MULTILINE)
STAGES = re.compile(r"^time per stage, summed over runs: (.*)$", re.MULTILINE)
RUNS_IN = re.compile(r"^runs in (\S+)$", re.MULTILINE)


def release(tree: Path, seed: int) -> dict:
    """One release of ``tree``: its wall and stage seconds, and its legs (cell -> bytes of legs.parquet)."""
    done = subprocess.run([sys.executable, "benchmarks/generate.py", "--release", "--seed", str(seed),
                           "--median-legs", "0"], check=False, cwd=tree, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the release failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    wall, work = WALL.search(done.stdout).groups()
    stages = {name: float(seconds) for name, seconds in
              re.findall(r"(\w+) ([\d.]+) s", STAGES.search(done.stdout).group(1))}
    runs = Path(RUNS_IN.search(done.stdout).group(1))
    legs = {cell.name: cell / "legs.parquet" for cell in sorted(runs.iterdir()) if (cell / "legs.parquet").is_file()}
    return {"wall": float(wall), "work": float(work), "stages": stages, "runs": runs, "legs": legs}


def same_legs(a: dict, b: dict) -> bool:
    return a["legs"].keys() == b["legs"].keys() and all(
        filecmp.cmp(a["legs"][cell], b["legs"][cell], shallow=False) for cell in a["legs"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, help="the revision to compare against")
    p.add_argument("--head", default="HEAD", help="the revision measured (default: HEAD)")
    p.add_argument("--pairs", type=int, default=3, help="counted runs of each tree")
    p.add_argument("--seed", type=int, default=4, help="the release's --seed")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="legwork-compare-"))
    trees = {}
    try:
        for name in ("base", "head"):
            rev = getattr(args, name)
            trees[name] = work / name
            subprocess.run(["git", "worktree", "add", "--detach", str(trees[name]), rev], cwd=ROOT, check=True,
                           capture_output=True)
        reference = None
        results: dict[str, list[dict]] = {"base": [], "head": []}
        for name in ("base", "head"):   # the uncounted first runs: kept page values computed for this code
            first = release(trees[name], args.seed)
            reference = reference or first
            print(f"{name} (uncounted first run): {first['wall']:.1f} s wall, same legs as base: "
                  f"{same_legs(reference, first)}", flush=True)
            if first is not reference:
                shutil.rmtree(first["runs"], ignore_errors=True)
        for n in range(args.pairs):
            for name in ("base", "head"):
                run = release(trees[name], args.seed)
                same = same_legs(reference, run)
                results[name].append(run)
                print(f"{name} {n + 1}: {run['wall']:.1f} s wall, {run['work']:.1f} s of stage work "
                      f"(verbalize {run['stages'].get('verbalize', 0):.1f}), same legs as base: {same}", flush=True)
                shutil.rmtree(run["runs"], ignore_errors=True)
        shutil.rmtree(reference["runs"], ignore_errors=True)
        print("\n| tree | revision | runs | wall median s | wall min s | stage work median s |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name in ("base", "head"):
            walls = [r["wall"] for r in results[name]]
            works = [r["work"] for r in results[name]]
            print(f"| {name} | {getattr(args, name)} | {len(walls)} | {statistics.median(walls):.1f} | "
                  f"{min(walls):.1f} | {statistics.median(works):.1f} |")
        base, head = (statistics.median(r["wall"] for r in results[k]) for k in ("base", "head"))
        print(f"\nhead / base, medians: {head / base:.3f}")
    finally:
        for tree in trees.values():
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], check=False, cwd=ROOT,
                           capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
