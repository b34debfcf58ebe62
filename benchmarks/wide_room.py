"""How large can a wide stop's set be in this world? (issue 34: sets of 20-60 members at extreme.)

A wide stop is drawn around a place or country an earlier stop gave. This asks the generator's own spec
makers (``stages.wide``) around every capital of the country statistics (the commonest inputs), for each
domain, style and band of set sizes: the share of capitals around which a clean set exists. For the
countries domain it also counts, for every capital and every size n in a band, why n fails: no radius
holds exactly the nearest n capitals with both edge margins and a capital near the edge
(``radius_for``), the radius passes the domain's cap, or the set holds a country no set may hold
(``doubtful_countries``: a twin, or one with no capital). For the pages domain, the size of each country name's page set (the pages whose opening text holds the name as a whole word).

Whole-world (reads every capital and airport). Prints; never fails.

    python benchmarks/wide_room.py [--bands 5-15,10-30,20-34,35-60]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.config import load_settings
from pipeline.stages import wide
from pipeline.stages.base import StageContext


def _bands(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in part.split("-")) for part in text.split(",")]


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:5.1f}%" if n else "  n/a"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bands", default="5-15,10-30,20-34,35-60", help="set-size bands, lo-hi, comma separated")
    args = p.parse_args()
    bands = _bands(args.bands)
    started = time.perf_counter()
    ctx = StageContext.create(load_settings())
    capitals = wide._countries(ctx)
    doubtful = wide.doubtful_countries(ctx)
    print(f"world: {len(ctx.store)} pages; {len(capitals)} capitals of the country statistics as the input places; "
          f"no set holds: {', '.join(sorted(doubtful)) or 'none'}")
    print("\nshare of capitals around which the generator finds a set, by domain, style and size band")
    print(f"{'domain':9} {'style':9} " + " ".join(f"{f'{lo}-{hi}':>7}" for lo, hi in bands))
    makers = (("countries", wide.COUNTRY_STYLES, wide._spec_countries),
              ("airports", wide.AIRPORT_STYLES, wide._spec_airports))
    for domain, styles, make in makers:
        for style in styles:
            cells = []
            for band in bands:
                found = sum(make(ctx, random.Random(name), lat, lng, band, style) is not None
                            for name, lat, lng, _ in capitals)
                cells.append(_pct(found, len(capitals)))
            print(f"{domain:9} {style:9} " + " ".join(f"{c:>7}" for c in cells))
    print("\ncountries: why a size n fails around a capital (every capital, every n of the band)")
    print(f"{'band':7} {'clean':>7} {'no radius':>10} {'past cap':>9} {'doubtful':>9}")
    for lo, hi in bands:
        tally: Counter[str] = Counter()
        for _name, lat, lng, _ in capitals:
            cands = wide.country_candidates(ctx, lat, lng)
            distances = [c.distance_km for c in cands]
            for n in range(lo, hi + 1):
                r = wide.radius_for(distances, n)
                tally["no radius" if r is None else "past cap" if r > wide.MAX_RADIUS_KM["countries"]
                      else "doubtful" if doubtful & {c.key for c in cands[:n]} else "clean"] += 1
        total = sum(tally.values())
        print(f"{f'{lo}-{hi}':7} " + " ".join(f"{_pct(tally[k], total):>{w}}" for k, w in
                                               (("clean", 7), ("no radius", 10), ("past cap", 9), ("doubtful", 9))))
    if len(ctx.store) <= wide.PAGE_SCAN_MAX:
        sizes = [len(wide.pages_with_word(ctx, name)) for name, _, _, _ in capitals if len(name) >= 4]
        print(f"\npages: the page sets of {len(sizes)} country names (pages whose opening text holds the name)")
        print(" ".join(f"{lo}-{hi}: {_pct(sum(lo <= s <= hi for s in sizes), len(sizes)).strip()}" for lo, hi in bands)
              + f"; largest {max(sizes, default=0)}")
    else:
        print(f"\npages: none (the page domain scans every opening text: worlds of at most {wide.PAGE_SCAN_MAX:,} pages)")
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
