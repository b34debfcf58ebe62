"""How widely can a release spread at all? Issue 33 asks for 40% distinct pages among a release's page
visits. Every page after a leg's seed is reached by a hop (issue 21) and must offer a fact, so a
release can visit no more distinct pages than the seeds it may start from plus the pages a hop can
reach. This prints those bounds for the configured world:

* the hop graph (``hops.hops_from`` of every page): pages with a hop out, pages a hop reaches, and of
  those the ones with a fact at a level's hop modes (what a route page needs);
* the pages any route can visit: every seed of each level's linear pool planned ``--tries`` times
  (crawl and plan, as a run's attempts are), the union of their routes;
* two figures against a release's page visits (``--visits``: 6,852 in the 1,400-leg release of seed 4):
  a bound no page choice can pass (one seed a leg, ``--legs``, plus every hop target with a fact), and
  that union (sampled: more tries may find a few more pages; what routes reach in practice).

Whole-world only (it reads every page). Prints; never fails.

    python benchmarks/spread_ceiling.py [--tries 3] [--visits 6852]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flows.generate import GenerationParams, new_leg
from pipeline.config import load_settings
from pipeline.model import LEVELS
from pipeline.stages import crawl, plan
from pipeline.stages.base import Rejected, StageContext
from pipeline.stages.build import usable_facts
from pipeline.stages.facts import hop_modes
from pipeline.stages.hops import hops_from


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tries", type=int, default=3, help="plans per seed and level")
    p.add_argument("--visits", type=int, default=6852, help="a release's page visits")
    p.add_argument("--legs", type=int, default=1400, help="a release's legs (one seed each)")
    args = p.parse_args()
    ctx = StageContext.create(load_settings())
    started = time.perf_counter()
    titles = ctx.store.titles()
    out = {t: {h.target for h in hops_from(t, ctx)} for t in titles}
    reached = Counter(target for targets in out.values() for target in targets)
    print(f"world: {len(titles)} pages; {sum(1 for v in out.values() if v)} with a hop out, {len(reached)} reached "
          f"by a hop ({time.perf_counter() - started:.0f} s)")
    targets: set[str] = set()
    for level in LEVELS:
        modes = hop_modes(ctx.presets[level].extraction)
        usable = {t for t in reached if usable_facts(t, ctx, modes)}
        targets |= usable
        print(f"  {level:8} hop targets with a fact at its hop modes: {len(usable)}")
    print("most reached by hops:", ", ".join(f"{t} {n}" for t, n in reached.most_common(10)))
    seeds: set[str] = set()
    pages: set[str] = set()
    for level in LEVELS:
        t0 = time.perf_counter()
        pool = crawl.run_pool(ctx, level, "linear")
        capable: set[str] = set()
        on_routes: Counter[str] = Counter()
        for title in pool:
            for attempt in range(args.tries):
                params = GenerationParams(level=level, variant="linear", count=1, seed=7 + attempt, seed_title=title)
                try:
                    leg = plan.run(crawl.run(new_leg(params, 0, attempt), ctx), ctx)
                except Rejected:
                    continue
                capable.add(title)
                on_routes.update(leg.plan.route[1:])
        seeds |= capable
        pages |= set(on_routes)
        print(f"{level:8} seed pool {len(pool)}, seeds with a route {len(capable)}, pages after the seed on "
              f"some route {len(on_routes)} ({time.perf_counter() - t0:.0f} s)")
    union = len(seeds | pages)
    bound = min(args.legs, len(seeds)) + len(targets)
    print(f"every level: {len(seeds)} seeds with a route, {len(pages)} pages after a seed, {union} pages in all")
    print(f"bound: at most {bound} distinct pages in a release's {args.visits} page visits "
          f"({100 * bound / args.visits:.1f}%): one seed a leg, every other page a hop target with a fact "
          f"({len(targets)}), whatever the routes' page choice")
    print(f"routes sampled ({args.tries} tries a seed): {union} distinct pages ({100 * union / args.visits:.1f}%)")


if __name__ == "__main__":
    main()
