"""How widely routes spread, in about a minute instead of a release's ten: crawl and plan only, for
the release's slots (200 per linear level, 150 per DAG level), each slot's first attempt that plans.
Prints distinct pages among page visits (the release's figure, which this overstates by 1-3 points:
later stages reject some legs and their replacements), per run and how many runs share a page.
Prints; never fails.

    python benchmarks/plan_spread.py [--seed 1] [--scale 1.0]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flows.generate import GenerationParams, new_leg
from pipeline.config import load_settings
from pipeline.stages import crawl, plan
from pipeline.stages.base import Rejected, StageContext


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--scale", type=float, default=1.0, help="fraction of the release's slots")
    args = p.parse_args()
    ctx = StageContext.create(load_settings())
    runs = [(level, "linear", 200) for level in ("easy", "medium", "hard", "extreme")] + \
           [(level, "dag", 150) for level in ("easy", "medium", "hard", "extreme")]
    visits: Counter[str] = Counter()
    per_run: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    seeds: Counter[str] = Counter()
    started = time.perf_counter()
    for level, variant, count in runs:
        params = GenerationParams(level=level, variant=variant, count=max(1, int(count * args.scale)), seed=args.seed)
        for slot in range(params.count):
            for attempt in range(4):
                try:
                    leg = plan.run(crawl.run(new_leg(params, slot, attempt), ctx), ctx)
                except Rejected:
                    continue
                visits.update(leg.plan.route)
                per_run[(level, variant)].update(leg.plan.route)
                seeds[leg.seed_title] += 1
                break
    total = sum(visits.values())
    for (level, variant), pages in per_run.items():
        n = sum(pages.values())
        print(f"{variant:7} {level:8} {len(pages):5d} distinct pages in {n:5d} visits ({100 * len(pages) / n:.1f}%)")
    print(f"all: {sum(seeds.values())} planned legs, {len(seeds)} distinct seeds, {len(visits)} distinct pages in "
          f"{total} visits ({100 * len(visits) / total:.1f}%), in {time.perf_counter() - started:.0f} s")
    shared = Counter(sum(1 for pages in per_run.values() if page in pages) for page in visits)
    print("pages by the number of runs visiting them:", dict(sorted(shared.items())))
    hubs = sum(n for page, n in visits.items() if ctx.store.mention_count(page) >= plan.HUB_MENTIONS)
    print("most visited:", ", ".join(f"{page} {n}" for page, n in visits.most_common(15)))
    print(f"visits to hubs (named by >= {plan.HUB_MENTIONS} pages): {hubs} ({100 * hubs / total:.1f}%)")


if __name__ == "__main__":
    main()
