"""Issue 14's measurement on generated runs: do legs grow from the world they send agents through?
Per level and variant: roadblocks and those without an input from an earlier stop (invariant 9),
place inputs and those that are a list or a country (invariant 8), route pages in another language
than the snapshot's, legs whose riddle names a leg page in any form (invariant 5), the simulated share
of tool values, distinct seeds and pages, and page stops whose value a search with their clue's words
shows in a top-5 snippet. Prints; never fails.

    python benchmarks/world_checks.py RUN_DIR [RUN_DIR ...]
    (e.g. the runs of ``benchmarks/spread.py --count 25 --seed 42 --out DIR``: DIR/*)
"""
from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.config import load_settings
from pipeline.export import load_legs
from pipeline.invariants import check_places, check_riddle, check_route_inputs
from pipeline.model import ROADBLOCK, ROUTE_INFO
from pipeline.report.exposure import search_exposure
from pipeline.report.stats import by_variant_level, spread_line, world_spread
from pipeline.snapshot.language import in_language
from pipeline.stages.base import StageContext
from pipeline.stages.verbalize import forbidden_names


def main() -> int:
    ctx = StageContext.create(load_settings())
    legs = [leg for run in sys.argv[1:] for leg in load_legs(run)]
    rows = defaultdict(lambda: defaultdict(int))
    for (variant, level), group in by_variant_level(legs):
        row = rows[(variant, level)]
        for leg in group:
            row["roadblocks"] += sum(s.kind == ROADBLOCK for s in leg.stops)
            row["no route input"] += len(check_route_inputs(leg))
            row["list or country as place"] += len(check_places(leg))
            pages = [ctx.page(s.page_title) for s in leg.stops if s.kind == ROUTE_INFO and s.page_title]
            row["other-language pages"] += sum(1 for p in pages if p is not None
                                               and not in_language(p, ctx.store.language))
            row["legs naming a page"] += bool([e for e in check_riddle(leg, forbidden_names(leg, ctx))
                                               if "names the page" in e])
    keys = ["roadblocks", "no route input", "list or country as place", "other-language pages", "legs naming a page"]
    print(f"{'variant':7} {'level':8} " + " ".join(f"{k:>24}" for k in keys))
    for (variant, level), row in rows.items():
        print(f"{variant:7} {level:8} " + " ".join(f"{row[k]:24d}" for k in keys))
    print(f"{'all':16} " + " ".join(f"{sum(r[k] for r in rows.values()):24d}" for k in keys))
    print()
    for row in world_spread(legs):
        print(f"{row['variant']:7} {row['level']:8} " + spread_line(row))
    print()
    for row in search_exposure(legs, ctx.toolbox)["by_group"]:
        shown = "n/a" if row["value_shown_share"] is None else f"{100 * row['value_shown_share']:.1f}%"
        print(f"{row['variant']:7} {row['level']:8} {row['page_stops']:4d} page stops after the seed; a search with "
              f"the clue's words shows the value for {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
