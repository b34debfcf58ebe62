"""Can a page stop be skipped? For every page stop of the legs given, a web_search made with its
clue's own words: is the stop's page in the top 5, and does a top-5 snippet show the stop's value?
Prints the shares per level and variant, then per kind of fact (infobox, prose, cross_section,
subject) (issue goal: value shown for at most 5% of page stops). The measure is
``pipeline.report.exposure``, which the report shows too.

    python benchmarks/snippets.py RUN_DIR [RUN_DIR ...]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.export import load_legs
from pipeline.report.exposure import search_exposure
from pipeline.tools.registry import Toolbox


def pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def main() -> int:
    legs = [leg for run in sys.argv[1:] for leg in load_legs(run)]
    figures = search_exposure(legs, Toolbox())
    print(f"{'variant':8} {'level':8} {'page stops':>10} {'page in top 5':>13} {'value in a snippet':>18}")
    for r in figures["by_group"]:
        print(f"{r['variant']:8} {r['level']:8} {r['page_stops']:10d} {pct(r['page_found_share']):>13} "
              f"{pct(r['value_shown_share']):>18}")
    print(f"\n{'fact':17} {'page stops':>10} {'page in top 5':>13} {'value in a snippet':>18}")
    for r in figures["by_source"]:
        print(f"{r['source']:17} {r['page_stops']:10d} {pct(r['page_found_share']):>13} "
              f"{pct(r['value_shown_share']):>18}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
