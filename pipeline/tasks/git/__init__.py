"""Git tasks in the Learn Git Branching level format: a start tree, a goal tree and a golden command
sequence (commit, branch, checkout, merge, rebase, cherry-pick, reset, revert, tag, fetch).

Goal trees are computed by replaying the golden commands with real git (``replay``) and checked with
LGB's comparison rules (``trees``). A task is rejected when its start tree already matches the goal,
or when its prompt (start and goal tree) is one an earlier task already has.

Cells: the 9 level kinds (``KINDS``). ``--count N`` is the number of tasks, spread evenly over the
kinds (default 40); each kind draws scenarios from its own seeded stream (distinct start tree and
commands, at most ``MAX_DRAWS`` draws) and a rejected candidate is replaced by the kind's next one.
A count above the kinds' distinct scenarios is refused before anything is replayed.
"""
from __future__ import annotations

import json
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pipeline.cache import canonical_json
from pipeline.tasks.common import Candidates, Failure, GoldenTrace, Report, fill_or_refuse, verify_all, write_task_table
from pipeline.tasks.git.generate import KINDS, MAX_DRAWS, Scenario, kind_draws
from pipeline.tasks.git.replay import GitCommandError, replay, split_commands
from pipeline.tasks.git.trees import default_tree, level_flags, reduce_tree, trees_match

DEFAULT_COUNT = 40
WORKERS = 2
OUTPUT_FILE = "git.parquet"


@dataclass(frozen=True)
class LevelCheck:
    ok: bool
    detail: str


def check_level(level: dict) -> LevelCheck:
    """The golden solution reaches the goal with real git; the start tree alone does not."""
    return _check_level(level)[0]


def _check_level(level: dict) -> tuple[LevelCheck, dict | None]:
    start = level.get("startTree") or default_tree()
    flags = level_flags(level)
    try:
        tree, _ = replay(start, level["solutionCommand"])
    except GitCommandError as exc:
        return LevelCheck(False, f"replay failed: {exc}"), None
    if not trees_match(tree, level["goalTreeString"], flags):
        return LevelCheck(False, "the golden commands do not reach the goal tree"), tree
    if trees_match(start, level["goalTreeString"], flags):
        return LevelCheck(False, "the start tree already matches the goal (doing nothing passes)"), tree
    return LevelCheck(True, "real git replay reaches the goal; the start tree does not"), tree


def load_level(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _prompt(start: dict, goal: dict, flags: dict) -> str:
    rule = "ids compared without primes (copies may be made any way)" if flags else "exact ids, HEAD and tags"
    return ("Learn Git Branching: starting from the start tree, run git commands until the repository matches "
            f"the goal tree (every goal branch must match; {rule}).\n"
            f"Start tree: {canonical_json(start)}\nGoal tree: {canonical_json(goal)}\n")


def _make_row(s: Scenario, index: int, seed: int) -> tuple[dict | None, str]:
    try:
        goal, steps = replay(s.start, s.commands)
    except GitCommandError as exc:
        return None, f"replay failed: {exc}"
    level = {"name": f"generated {s.kind} #{index}", "startTree": canonical_json(s.start),
             "goalTreeString": canonical_json(goal), "solutionCommand": ";".join(s.commands), **s.flags}
    if trees_match(s.start, goal, s.flags):
        return None, "start tree already matches the goal"
    difficulty = 1 if len(s.commands) <= 2 else 2 if len(s.commands) <= 4 else 3
    plan = [{"step": i, "command": st["command"], "tree": st["tree"]} for i, st in enumerate(steps, 1)]
    return {
        "task_id": f"git-s{seed}-{index:03d}-{s.kind}", "family": "git", "domain": "generated", "topic": s.kind,
        "difficulty": difficulty, "seed": seed, "prompt": _prompt(s.start, goal, s.flags),
        "answer_json": canonical_json({"solutionCommand": level["solutionCommand"], "goalTree": goal}),
        "trace_json": GoldenTrace(plan=plan, steps=[], final_answer=goal).to_json(),
        "metadata_json": canonical_json({"level": level, "labels": ["git", s.kind], "verified": True,
                                         "verification": "real git replay reaches the goal; the start tree does not"}),
    }, ""


def _report(title: str, rows: list[dict], checks: dict[str, LevelCheck], failures: list[Failure]) -> Report:
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        per[r["topic"]][0 if checks[r["task_id"]].ok else 1] += 1
    table = [[k, sum(v), *v] for k, v in sorted(per.items())]
    table.append(["all", sum(sum(v) for v in per.values()), *[sum(v[i] for v in per.values()) for i in range(2)]])
    return Report(title=title, columns=["kind", "tasks", "git-verified", "failed"], rows=table, failures=failures)


def build(count: int | None, seed: int, out_dir: Path, toolbox=None) -> Report:
    """``count`` levels that replay with real git, spread over the kinds; rejected candidates are reported."""
    start = time.perf_counter()
    count = count or DEFAULT_COUNT
    rejected: list[str] = []
    prompts: set[str] = set()

    def check(batch):
        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(lambda item: _make_row(item[2], item[1], seed), batch))
        out = []
        for (kind, index, _s), (row, why) in zip(batch, results):
            if row is not None and row["prompt"] in prompts:
                row, why = None, "same start and goal tree as an earlier level"
            if row is None:
                rejected.append(f"{kind}#{index}: {why}")
                out.append(None)
            else:
                prompts.add(row["prompt"])
                out.append(((KINDS.index(kind), index), row))
        return out

    made = fill_or_refuse("git", count, list(KINDS), Candidates(lambda kind: kind_draws(seed, kind)), check,
                          f"distinct scenarios among the first {MAX_DRAWS} draws of each of its {len(KINDS)} "
                          "level kinds")
    rows = [row for _, row in sorted((r for rs in made.values() for r in rs), key=lambda r: r[0])]
    write_task_table(rows, Path(out_dir) / OUTPUT_FILE)
    checks = {r["task_id"]: LevelCheck(True, "") for r in rows}
    report = _report(f"git: built {len(rows)} tasks, rejected {len(rejected)} candidates "
                     f"({time.perf_counter() - start:.1f} s)", rows, checks, [])
    report.rows.extend([[f"rejected: {r[:90]}", "", "", ""] for r in rejected])
    return report


def verify_row(row: dict) -> LevelCheck:
    meta = json.loads(row["metadata_json"])
    level = meta["level"]
    answer = json.loads(row["answer_json"])
    if answer["solutionCommand"] != level["solutionCommand"]:
        return LevelCheck(False, "answer and level disagree on the solution")
    trace = GoldenTrace.from_json(row["trace_json"])
    if [p["command"] for p in trace.plan] != split_commands(level["solutionCommand"]):
        return LevelCheck(False, "the golden trace does not follow the solution commands")
    check, goal = _check_level(level)
    if not check.ok:
        return check
    if reduce_tree(goal) != reduce_tree(level["goalTreeString"]):
        return LevelCheck(False, "replaying the solution no longer gives the stored goal tree exactly")
    return check


def validate(rows: list[dict], toolbox=None) -> Report:
    start = time.perf_counter()
    checks, failures = verify_all(rows, verify_row, WORKERS)
    return _report(f"git: validated {len(rows)} tasks ({time.perf_counter() - start:.1f} s)", rows, checks, failures)


__all__ = ["DEFAULT_COUNT", "KINDS", "build", "check_level", "load_level", "validate", "verify_row"]
