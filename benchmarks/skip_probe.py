"""Skip probe and chain figures of fresh legs (issue 21, item 7).

For every hop (a page stop after the seed), a ``web_search`` with the clue's own words (its references
to earlier clues left out), and one with the hop's sentence alone (the clue's first sentence): a hop
whose page is among the top ten results of either can be looked up instead of walked. Goal: at most 5%
of hops. Also prints per level the hops per leg, choice hops per leg, and roadblock templates asked
twice of the same input (goal: none).

    python benchmarks/skip_probe.py --count 25 --seed 9001          # generates 25 legs per level and variant
    python benchmarks/skip_probe.py --runs data/runs/hard-linear-s1  # or reads run folders
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.model import LEVELS, ROADBLOCK, ROUTE_INFO, VARIANTS, Leg
from pipeline.stages.verbalize import skip_probe_words
from pipeline.tools.registry import Toolbox

TOP = 10


def legs_of(run: Path) -> list[Leg]:
    return [Leg.from_json(r["leg_json"]) for r in pq.read_table(run / "legs.parquet").to_pylist()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="*", type=Path, help="run folders (default: generate fresh ones)")
    ap.add_argument("--count", type=int, default=25)
    ap.add_argument("--seed", type=int, default=9001)
    args = ap.parse_args()
    runs = args.runs
    if not runs:
        out = Path(tempfile.mkdtemp(prefix="skip-probe-"))
        runs = []
        for level in LEVELS:
            for variant in VARIANTS:
                run = out / f"{level}-{variant}"
                subprocess.run([sys.executable, "-m", "pipeline.generate", "--difficulty", level, "--variant", variant,
                                "--count", str(args.count), "--seed", str(args.seed), "--out", str(run),
                                "--task-runner", "local", "--quiet"], check=False)   # a short run still counts
                runs.append(run)
    toolbox = Toolbox()
    rows = collections.defaultdict(lambda: collections.Counter())
    for run in runs:
        for leg in legs_of(run):
            row = rows[(leg.level, leg.variant)]
            row["legs"] += 1
            clues = {c.stop: c.text for c in leg.clues}
            asked: set[tuple] = set()
            for stop in leg.stops:
                if stop.kind == ROADBLOCK:
                    key = (stop.template, tuple(stop.roadblock.inputs))
                    row["repeated templates"] += key in asked
                    asked.add(key)
                if stop.kind != ROUTE_INFO or stop.index == 0:
                    continue
                row["hops"] += 1
                relation = stop.transition.relation if stop.transition else None
                row["choice hops"] += bool(relation and relation.kind == "choice")
                text = clues[stop.index]
                hop_sentence = text.split(". ")[0] if relation else text
                found = False
                for query in (skip_probe_words(text), skip_probe_words(hop_sentence)):
                    hits = toolbox.call("web_search", {"query": query, "num_results": TOP}).data.get("results", [])
                    found |= any(h["title"] == stop.page_title for h in hits)
                row["skipped"] += found
    total = collections.Counter()
    print(f"{'level':8} {'variant':7} {'legs':>4} {'hops/leg':>8} {'choices/leg':>11} {'skip rate':>9} "
          f"{'repeated templates':>18}")
    for (level, variant), row in sorted(rows.items(), key=lambda kv: (LEVELS.index(kv[0][0]), kv[0][1])):
        total.update(row)
        legs = max(row["legs"], 1)
        print(f"{level:8} {variant:7} {row['legs']:>4} {row['hops'] / legs:>8.2f} {row['choice hops'] / legs:>11.2f} "
              f"{row['skipped'] / max(row['hops'], 1):>9.1%} {row['repeated templates']:>18}")
    print(f"all: {total['legs']} legs, {total['hops']} hops, skip rate {total['skipped'] / max(total['hops'], 1):.1%} "
          f"(goal <= 5%), repeated templates {total['repeated templates']} (goal 0)")
    print(json.dumps({"legs": total["legs"], "hops": total["hops"], "skipped": total["skipped"]}))


if __name__ == "__main__":
    main()
