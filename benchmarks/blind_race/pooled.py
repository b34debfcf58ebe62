"""What the blind races show, pooled (issue 21, item 8): per level the legs raced, FA and clues per leg;
the failures by what their reviews found (``reviews.json``: a leg defect or the agent's own error); the
agent's own error rate per clue, and the FA a careful agent would have at each level's length by that
rate alone. Reads every ``race-*/`` folder (legs, racers' answers); prints, never fails.

    python benchmarks/blind_race/pooled.py
"""
from __future__ import annotations

import collections
import json
import math
import sys
from pathlib import Path

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent


def raced(folder: Path) -> list[dict]:
    """Each leg of a race folder with the racer's answer: racer, level, variant, clues, solved."""
    index = json.loads((folder / "index.json").read_text())
    legs = {row["leg_id"]: row for row in pq.read_table(folder / "legs.parquet").to_pylist()}
    out = []
    for racer, entry in sorted(index.items()):
        answer_file = folder / "racers" / racer / "answer.txt"
        answer = answer_file.read_text().strip() if answer_file.exists() else ""
        leg = legs[entry["leg_id"]]
        out.append({"race": folder.name, "racer": racer, "level": leg["level"], "variant": leg["variant"],
                    "clues": leg["n_stops"], "solved": answer == str(leg["passcode"])})
    return out


def main() -> int:
    reviews = json.loads((HERE / "reviews.json").read_text())
    rows = [r for folder in sorted(HERE.glob("race-*")) if (folder / "legs.parquet").exists() for r in raced(folder)]
    unreviewed = [f"{r['race']}/{r['racer']}" for r in rows if not r["solved"] and r["racer"] not in reviews.get(r["race"], {})]
    by_level: dict[str, list[dict]] = collections.defaultdict(list)
    for r in rows:
        by_level[r["level"]].append(r)
    print(f"{len({r['race'] for r in rows})} race folders, {len(rows)} legs")
    print(f"{'level':8} {'legs':>5} {'solved':>7} {'FA':>7} {'clues/leg':>10}")
    for level in ("easy", "medium", "hard", "extreme"):
        g = by_level.get(level, [])
        if g:
            solved = sum(r["solved"] for r in g)
            print(f"{level:8} {len(g):5} {solved:7} {100 * solved / len(g):6.1f}% {sum(r['clues'] for r in g) / len(g):10.1f}")
    classes = collections.Counter(reviews[r["race"]][r["racer"]]["class"] for r in rows
                                  if not r["solved"] and r["racer"] in reviews.get(r["race"], {}))
    lost = reviews.get("lost", {})
    lost_clues = sum(v["legs"] * v["clues_per_leg"] for v in lost.values())
    for v in lost.values():
        classes.update(v["failures"].values())
    clues = sum(r["clues"] for r in rows) + lost_clues
    legs = len(rows) + sum(v["legs"] for v in lost.values())
    print(f"with the lost race(s): {legs} legs, about {clues:.0f} clues; failures by review: {dict(classes)}"
          + (f"; NOT REVIEWED: {unreviewed}" if unreviewed else ""))
    agent = classes.get("agent", 0)
    if agent:
        rate = agent / clues
        print(f"the agent's own errors: {agent} in {clues:.0f} clues, one in {1 / rate:,.0f}")
        for level in ("easy", "medium", "hard", "extreme"):
            g = by_level.get(level, [])
            if g:
                n = sum(r["clues"] for r in g) / len(g)
                print(f"  {level:8} a careful agent's FA by that rate alone at {n:.1f} clues: {100 * (1 - rate) ** n:.1f}%")
        print(f"  FA 50% by that rate needs legs of about {math.log(0.5) / math.log(1 - rate):,.0f} clues")
    return 1 if unreviewed else 0


if __name__ == "__main__":
    sys.exit(main())
