"""One race's table (issue 34, item 6): per variant and level the legs raced, FA, PVR, the wide stops'
recall and precision, tool calls per leg, the median step budget and how many legs reached it. Reads a
race folder (``index.json`` and the ``score.json`` that ``python -m pipeline.score`` wrote); prints a
Markdown table, never fails.

    python benchmarks/blind_race/table.py benchmarks/blind_race/race-19019
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def table(folder: Path) -> list[str]:
    score = json.loads((folder / "score.json").read_text())
    index = json.loads((folder / "index.json").read_text())
    budgets: dict[tuple[str, str], list[int]] = {}
    for entry in index.values():
        budgets.setdefault((entry["variant"], entry["level"]), []).append(entry["budget"])
    header = ("| variant | level | n | FA % | PVR % | wide recall % | wide precision % | calls per leg "
              "| budget (median) | budget hits |")
    lines = [header,
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for g in score["groups"]:
        median = statistics.median(budgets.get((g["variant"], g["level"]), [0]))
        lines.append(f"| {g['variant']} | {g['level']} | {g['n']} | {pct(g['fa'])} | {pct(g['pvr'])} "
                     f"| {pct(g.get('wide_recall'))} | {pct(g.get('wide_precision'))} | {g['steps']:.1f} "
                     f"| {median:g} | {round(g['step_limit_rate'] * g['n'])} |")
    o = score["overall"]
    lines.append(f"| all | | {o['n']} | {pct(o['fa'])} | {pct(o['pvr'])} | {pct(o.get('wide_recall'))} "
                 f"| {pct(o.get('wide_precision'))} | {o['steps']:.1f} | | {round(o['step_limit_rate'] * o['n'])} |")
    return lines


if __name__ == "__main__":
    for line in table(Path(sys.argv[1])):
        print(line)
