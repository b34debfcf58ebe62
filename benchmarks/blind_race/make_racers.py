"""Fresh legs and racer files for a blind race (../../shared/BLIND_RACE.md; issue 21, item 8).

    python benchmarks/blind_race/make_racers.py --seed 4242 --count 4 --out /tmp/race

generates COUNT legs per level and variant with ``--seed`` into OUT/legs/<level>-<variant>, then writes
OUT/racers/RNN/racer.txt (the seed URL and the riddle, nothing else) in a shuffled order, OUT/index.json
(racer -> leg id, level, variant: never shown to a racer), and OUT/tool, the only command a racer gets
(``OUT/tool list``, ``OUT/tool call TOOL 'JSON' --log FILE``: the project's tools run from a frozen copy
given with ``--tools-from``, so that work on the project during the race does not change its answers).
Each racer file states the leg's step budget B (the seed paper's max(10, floor(1.5 K)), a wide stop
counting as many stops as its golden trace makes calls), and each racer folder has its own ``tool``
that enforces it: a call when the racer's log already holds B calls is refused and logged (issue 34).
After the race, ``--collect`` writes each racer folder's trial.json (leg id, answer.txt, tool_log.jsonl)
and OUT/all-legs/legs.parquet, which ``python -m pipeline.score --legs OUT/all-legs --runs OUT/racers``
scores.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.model import LEVELS, VARIANTS, Leg

TOOL = """#!/bin/bash
# The race's tools: python -m pipeline.tools of a frozen copy of the project ({root}).
#   {out}/tool list
#   {out}/tool call TOOL_NAME 'JSON_ARGS' --log LOGFILE
args=(); log=({log})
while [ $# -gt 0 ]; do
  if [ "$1" = "--log" ]; then [ -n "{log}" ] || log=(--log "$(realpath -m "$2")"); shift 2; else args+=("$1"); shift; fi
done
cd {root} && PYTHONPATH={root} exec {python} -m pipeline.tools {snapshot}{budget}"${{log[@]}}" "${{args[@]}}"
"""


OVERMAKE = 10   # with --only-wide: legs made per leg raced (a hard leg holds a links set about one time in seven)


def make(out: Path, seed: int, count: int, tools_from: Path, levels: tuple[str, ...] = LEVELS,
         only_wide: str | None = None, snapshot: Path | None = None) -> None:
    rows = []
    world = ["--snapshot", str(snapshot.resolve())] if snapshot else []
    shown = f"--snapshot {snapshot.resolve()} " if snapshot else ""
    for level in levels:
        for variant in VARIANTS:
            run = out / "legs" / f"{level}-{variant}"
            subprocess.run([sys.executable, "-m", "pipeline.generate", "--difficulty", level, "--variant", variant,
                            "--count", str(count * (OVERMAKE if only_wide else 1)), "--seed", str(seed), "--out",
                            str(run), "--task-runner", "local", "--quiet", *world], check=True)
            made = pq.read_table(run / "legs.parquet").to_pylist()
            if only_wide:   # the legs that hold a wide stop of that domain, in the run's order
                made = [r for r in made if any(s.wide is not None and s.wide.domain == only_wide
                                               for s in Leg.from_json(r["leg_json"]).stops)]
            rows += made[:count]
    random.Random(seed).shuffle(rows)
    index = {}
    for n, row in enumerate(rows, start=1):
        racer = out / "racers" / f"R{n:02d}"
        racer.mkdir(parents=True, exist_ok=True)
        budget = row["step_budget"] if "step_budget" in row else Leg.from_json(row["leg_json"]).step_budget
        (racer / "racer.txt").write_text(f"Seed page: {row['seed_url']}\nStep budget: {budget} tool calls\n\n"
                                         f"{row['riddle']}\n", encoding="utf-8")
        tool = racer / "tool"
        # a racer's calls are logged in its own folder whatever --log it passes: the budget counts that log
        # (race 31: a call made with --log /dev/null escaped it)
        tool.write_text(TOOL.format(root=tools_from.resolve(), out=racer.resolve(), python=sys.executable,
                                    snapshot=shown, budget=f"--budget {budget} ",
                                    log=f"--log {racer.resolve() / 'tool_log.jsonl'}"), encoding="utf-8")
        tool.chmod(0o755)
        index[racer.name] = {"leg_id": row["leg_id"], "level": row["level"], "variant": row["variant"],
                             "budget": budget}
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    tool = out / "tool"
    tool.write_text(TOOL.format(root=tools_from.resolve(), out=out.resolve(), python=sys.executable, snapshot=shown,
                                budget="", log=""), encoding="utf-8")
    tool.chmod(0o755)
    print(f"{len(rows)} racer files in {out / 'racers'}; tools: {tool}")


def collect(out: Path, agent: str) -> None:
    index = json.loads((out / "index.json").read_text(encoding="utf-8"))
    raced = {v["leg_id"] for v in index.values()}
    tables = [pq.read_table(p) for p in sorted((out / "legs").glob("*/legs.parquet"))]
    table = pa.concat_tables(tables)
    rows = [r for r in table.to_pylist() if r["leg_id"] in raced]
    (out / "all-legs").mkdir(exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), out / "all-legs" / "legs.parquet")
    for name, leg in index.items():
        folder = out / "racers" / name
        answer = folder / "answer.txt"
        record = {"leg_id": leg["leg_id"], "agent": agent,
                  "answer": answer.read_text(encoding="utf-8").strip() if answer.is_file() else None,
                  "tool_log": "tool_log.jsonl"}
        (folder / "trial.json").write_text(json.dumps(record) + "\n", encoding="utf-8")
    print(f"{len(index)} trials; score with: python -m pipeline.score --legs {out / 'all-legs'} --runs {out / 'racers'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--count", type=int, default=4)
    ap.add_argument("--levels", default=",".join(LEVELS), help="comma-separated levels to race (default: all)")
    ap.add_argument("--tools-from", type=Path, default=Path(__file__).resolve().parents[2],
                    help="the project copy the racers' tools run from (a frozen worktree)")
    ap.add_argument("--snapshot", type=Path, default=None,
                    help="the world to make the legs from and serve to the racers (default: the embedded one)")
    ap.add_argument("--collect", action="store_true", help="after the race: trial.json files and all-legs/")
    ap.add_argument("--agent", default="blind-racer")
    ap.add_argument("--only-wide", choices=["countries", "airports", "pages", "links"],
                    help="race only legs holding a wide stop of this domain (made from 10 times --count legs)")
    args = ap.parse_args()
    levels = tuple(level for level in args.levels.split(",") if level)
    if not levels or set(levels) - set(LEVELS):
        ap.error(f"--levels: choose among {', '.join(LEVELS)}")
    collect(args.out, args.agent) if args.collect else make(args.out, args.seed, args.count, args.tools_from, levels,
                                                                        args.only_wide, args.snapshot)


if __name__ == "__main__":
    main()
