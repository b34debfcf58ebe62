"""Can a page stop be skipped? For every page stop of the legs given, a web_search made with its
clue's own words: is the stop's page in the top 5, and does a top-5 snippet show the stop's value?
Prints the shares per level and variant, then per kind of fact (infobox, prose, cross_section,
subject) (issue goal: value shown for at most 5% of page stops). "Shown" is
``verbalize.value_shown``, the test verbalize itself applies when it picks a clue's wording.

    python benchmarks/snippets.py RUN_DIR [RUN_DIR ...]
"""
from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.export import load_legs
from pipeline.model import ROUTE_INFO
from pipeline.stages.verbalize import value_shown
from pipeline.tools.registry import Toolbox


def main() -> int:
    toolbox = Toolbox()
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])   # stops, page found, value shown
    by_source: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for run in sys.argv[1:]:
        for leg in load_legs(run):
            clues = {c.stop: c.text for c in leg.clues}
            for stop in leg.stops:
                if stop.kind != ROUTE_INFO or stop.index == 0 or stop.index not in clues:
                    continue
                query = re.sub(r"^\s*\d+\.\s*", "", clues[stop.index])[:300]
                found = toolbox.call("web_search", {"query": query})
                results = (json.loads(found.response_json).get("results") or [])[:5] if found.ok else []
                found_page = any(r.get("title") == stop.page_title for r in results)
                value = value_shown(stop.value, [r.get("snippet", "") for r in results])
                for row in (tally[(leg.level, leg.variant)], by_source[stop.extraction.source if stop.extraction else "?"]):
                    row[0] += 1
                    row[1] += found_page
                    row[2] += value
    total = [sum(r[i] for r in tally.values()) for i in range(3)]
    print(f"{'level':8} {'variant':7} {'page stops':>10} {'page in top 5':>13} {'value in a snippet':>18}")
    for (level, variant), (n, page, value) in sorted(tally.items()):
        print(f"{level:8} {variant:7} {n:10d} {100 * page / n:12.0f}% {100 * value / n:17.0f}%")
    print(f"{'all':16} {total[0]:10d} {100 * total[1] / total[0]:12.0f}% {100 * total[2] / total[0]:17.0f}%")
    print(f"\n{'fact':16} {'page stops':>10} {'page in top 5':>13} {'value in a snippet':>18}")
    for source, (n, page, value) in sorted(by_source.items()):
        print(f"{source:16} {n:10d} {100 * page / n:12.0f}% {100 * value / n:17.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
