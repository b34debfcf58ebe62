"""ATP task content (issue 12, item 3): distinct templates and proof plans, distinct statements and
prompts over two seeds, difficulty (tactic steps of the checked Coq proof) per level, the share of
Coq theorems one generic tactic closes, and build / validate time per count. Prints; never fails.

    python benchmarks/atp_tasks.py [--counts 1,7,100,1000] [--compare-count 200] [--generic-count 200]
                                   [--out DIR] [--cache FILE]

Needs coqc (Debian package coq). The generic-tactic attempts are cached (``--cache``, default
``~/.cache/legwork/atp-generic.json``), so a second run only times the builds.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.tasks import atp
from pipeline.tasks.atp.families import TOPICS, template_of
from pipeline.tasks.atp.generic import attempts_for, coq_goal, generic_closers
from pipeline.tasks.atp.statements import render, statement_key, theorem_pool
from pipeline.tasks.common import read_task_rows


def _meta(row: dict) -> dict:
    return json.loads(row["metadata_json"])


def _template(row: dict) -> str:
    meta = _meta(row)
    steps = meta["abstract"].get("steps")
    return f"{row['topic']}/{meta['abstract']['kind']}" + (f"/{len(steps)}-step" if steps else "")


def _plan(row: dict) -> str:
    """The golden Coq proof with every number replaced: the shape of the proof, not its constants."""
    tactics = [p["tactic"] for p in json.loads(row["trace_json"])["plan"] if p["tactic"]]
    return re.sub(r"\b\d+\b", "N", "\n".join(tactics))


def _key(row: dict) -> str:
    meta = _meta(row)
    return statement_key(meta["statement"], row["domain"], meta["theorem"])


def _build(count: int, seed: int, out: Path) -> tuple[list[dict], float, float, int]:
    start = time.perf_counter()
    report = atp.build(count, seed, out)
    built = time.perf_counter() - start
    rows = read_task_rows(out)
    start = time.perf_counter()
    checked = atp.validate(rows)
    return rows, built, time.perf_counter() - start, len(report.failures) + len(checked.failures)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default="1,7,100,1000", help="counts to build and validate (seed 1)")
    ap.add_argument("--compare-count", type=int, default=200, help="rows built for seeds 1 and 2 to compare")
    ap.add_argument("--generic-count", type=int, default=200, help="rows whose Coq theorems meet the generic tactics")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--cache", type=Path,
                    default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "legwork" / "atp-generic.json")
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="legwork-atp-bench-"))
    counts = [int(c) for c in a.counts.split(",") if c.strip()]

    print("== build and validate time (seed 1) ==")
    print(f"{'count':>6} {'rows':>5} {'theorems':>8} {'build s':>8} {'validate s':>10} {'failures':>8}")
    built: dict[tuple[int, int], list[dict]] = {}
    for count in counts:
        rows, b, v, failures = _build(count, 1, out / f"s1-c{count}")
        built[(count, 1)] = rows
        print(f"{count:>6} {len(rows):>5} {len({_meta(r)['theorem'] for r in rows}):>8} {b:>8.1f} {v:>10.1f} "
              f"{failures:>8}")

    sets = {}
    for seed in (1, 2):
        key = (a.compare_count, seed)
        if key not in built:
            built[key] = _build(a.compare_count, seed, out / f"s{seed}-c{a.compare_count}")[0]
        sets[seed] = built[key]
    rows1, rows2 = sets[1], sets[2]
    coq1 = [r for r in rows1 if r["domain"] == "coq"]

    print(f"\n== content of a {a.compare_count}-row set ==")
    all_rows = rows1 + rows2
    pool, every = theorem_pool(1), set()
    for topic in TOPICS:
        every |= {template_of(render(topic, pool.get(topic, i), "x")) for i in range(pool.ensure(topic, 400))}
    print(f"templates: {len({_template(r) for r in rows1})} in seed 1, {len({_template(r) for r in all_rows})} over "
          f"seeds 1-2; the generators have {len(every)} in {len(TOPICS)} topics")
    print(f"proof plans (Coq proof with numbers abstracted): {len({_plan(r) for r in coq1})} among {len(coq1)} Coq "
          f"theorems of seed 1")
    k1, k2 = {_key(r) for r in rows1}, {_key(r) for r in rows2}
    p1, p2 = {r["prompt"] for r in rows1}, {r["prompt"] for r in rows2}
    print(f"row statements up to renaming (theorem name ignored): seed 1 {len(k1)}, seed 2 {len(k2)}, shared {len(k1 & k2)} "
          f"({100 * len(k1 & k2) / max(1, len(k1)):.1f}%)")
    print(f"prompts: seed 1 {len(p1)} distinct of {len(rows1)}, seed 2 {len(p2)} of {len(rows2)}, shared "
          f"{len(p1 & p2)} ({100 * len(p1 & p2) / max(1, len(p1)):.1f}%)")

    print("\n== difficulty = tactic steps of the checked Coq proof (seed 1 Coq rows) ==")
    by_level: dict[int, list[int]] = defaultdict(list)
    by_topic: dict[str, list[int]] = defaultdict(list)
    for r in coq1:
        by_level[_meta(r)["level"]].append(r["difficulty"])
        by_topic[r["topic"]].append(r["difficulty"])
    print(f"{'level':>12} {'theorems':>8} {'min':>4} {'mean':>6} {'max':>4}")
    for level, steps in sorted(by_level.items()):
        print(f"{level:>12} {len(steps):>8} {min(steps):>4} {sum(steps) / len(steps):>6.1f} {max(steps):>4}")
    print(f"{'topic':>12} {'theorems':>8} {'min':>4} {'mean':>6} {'max':>4}")
    for topic in TOPICS:
        steps = by_topic.get(topic, [])
        if steps:
            print(f"{topic:>12} {len(steps):>8} {min(steps):>4} {sum(steps) / len(steps):>6.1f} {max(steps):>4}")

    generic_rows = built.get((a.generic_count, 1)) or _build(a.generic_count, 1, out / f"s1-c{a.generic_count}")[0]
    coq_rows = [r for r in generic_rows if r["domain"] == "coq"]
    statements = {_meta(r)["theorem"]: _meta(r)["statement"] for r in coq_rows}
    start = time.perf_counter()
    closers = generic_closers(statements, cache_path=a.cache)
    seconds = time.perf_counter() - start
    tried = sum(len(attempts_for(coq_goal(s)[1])) for s in statements.values())
    closed = {name: ts for name, ts in closers.items() if ts}
    print(f"\n== one generic tactic (Coq theorems of the {a.generic_count}-row set, seed 1) ==")
    print(f"{len(closed)} of {len(statements)} theorems closed by a generic one-liner "
          f"({100 * len(closed) / max(1, len(statements)):.1f}%; goal: under 20%); {tried} attempts, {seconds:.1f} s")
    for name, tactics in sorted(closed.items()):
        print(f"  {name}: {', '.join(tactics[:3])}")
    print(f"\noutputs: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
