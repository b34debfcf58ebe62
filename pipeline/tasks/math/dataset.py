"""Build and validate the MATH task set.

Cells: the 27 problem templates (``FAMILIES``: 10 algebra and 10 geometry knowledge points, and 7
multi-step competition families from ``competition``: sequences, counting, number theory,
functions, chained word problems) x the 5 levels, 135 cells. ``--count N`` is the number of tasks, spread evenly over the cells
(``pipeline.tasks.common.spread``; default 500, five per cell). Each cell draws parameters from
its own seeded stream (``problem_rng(seed, template, level, 0, draw)``, at most ``MAX_DRAWS``
draws) and keeps a draw only when its prompt is new to the whole set, so a cell is sampled without
replacement and no prompt is written twice. Almost every cell holds over a thousand problems (so two
seeds rarely draw the same one); a few are small by nature (polygon angle sums at level 1 have 8
problems), and a cell whose space is used up gives the rest of its share to the others. A count
above what the cells hold is refused before anything is built.

Each row's metadata carries its measured difficulty (``difficulty_figure``: worked steps,
calculator calls and knowledge points of the golden solution); the levels are ordered by it.

A candidate is kept only when it verifies: the worked solution, sympy's direct answer and a
second method agree; every calculator call of the golden trace returns the value the worked step
computed; every knowledge search returns the intended knowledge point in its top 3; and a
solution with one injected error exists for the process-level tasks. Otherwise the cell's next
candidate is tried.
"""
from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import sympy as sp

from pipeline.cache import canonical_json
from pipeline.mathtools.safe_eval import CalcError, parse
from pipeline.tasks.common import (
    Candidates,
    Failure,
    GoldenTrace,
    Report,
    fill_or_refuse,
    print_report,
    replay_trace,
    write_task_table,
)
from pipeline.tasks.math import algebra, competition, geometry
from pipeline.tasks.math.answers import answer_json, answer_text, check_answer, reference_value
from pipeline.tasks.math.core import CAPABILITIES, LEVELS, Family, NotApplicable, Solution, problem_rng, show
from pipeline.tasks.math.derived import derived_rows

# The most tool calls (calculator and knowledge searches) a golden trace may hold. The longest the
# families can make: 25 (divisors of an lcm, level 5: two numbers <= 6000 whose Euclidean algorithm takes
# 12 divisions, e.g. 3952 and 5046; found by enumerating every pair the level draws), then committee
# counting level 5 (22). ``realise`` refuses a problem above it, so the agents' math step budget
# (``pipeline.agents.tasks.MATH_STEPS``, derived from it) always holds the longest golden trace.
MAX_TRACE_CALLS = 25

FAMILIES: dict[str, Family] = {f.name: f for f in algebra.FAMILIES + geometry.FAMILIES + competition.FAMILIES}
DEFAULT_COUNT = 500         # tasks (five per cell)
MAX_DRAWS = 3000            # draws per cell; their distinct prompts are the cell's space
TASKS_FILE = "math-tasks.parquet"
DERIVED_FILE = "math-derived.parquet"
DERIVED_SCHEMA = pa.schema([
    pa.field("derived_id", pa.string(), nullable=False),
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("input_json", pa.string(), nullable=False),
    pa.field("target_json", pa.string(), nullable=False),
])


class Unverified(Exception):
    """The problem's golden solution could not be verified (the message says which check failed)."""


# ---- comparing values ---------------------------------------------------------------------
def values_agree(a, b) -> bool:
    """Do two computed values (numbers, expressions, relations, lists) mean the same thing?"""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        a = list(a) if isinstance(a, (list, tuple)) else [a]
        b = list(b) if isinstance(b, (list, tuple)) else [b]
        if len(a) != len(b):
            return False
        rest = list(b)
        for item in a:
            match = next((i for i, other in enumerate(rest) if values_agree(item, other)), None)
            if match is None:
                return False
            rest.pop(match)
        return True
    if isinstance(a, sp.Equality) and isinstance(b, sp.Equality):
        return sp.simplify((a.lhs - a.rhs) - (b.lhs - b.rhs)) == 0
    if isinstance(a, sp.Rel) or isinstance(b, sp.Rel):
        return isinstance(a, sp.Basic) and isinstance(b, sp.Basic) and a.as_set() == b.as_set()
    if isinstance(a, sp.Basic) and isinstance(b, sp.Basic):
        return sp.simplify(sp.expand(a - b)) == 0
    return a == b


def equivalent(value, reference, kind: str) -> bool:
    return check_answer(answer_text(value, kind), answer_json(reference, kind))


def trace_calls(solution: Solution) -> int:
    """The tool calls of the solution's golden trace (a search and a calculator call per step at most)."""
    return sum(bool(s.search) + bool(s.calc) for s in solution.steps)


def difficulty_figure(solution: Solution) -> dict[str, int]:
    """The measured size of a worked solution: its steps, the calculator calls and the distinct
    knowledge points its golden trace uses, and their sum (``effort``, what the levels are ordered by)."""
    steps = len(solution.steps)
    calls = sum(1 for s in solution.steps if s.calc)
    points = len({s.search[1] for s in solution.steps if s.search})
    return {"steps": steps, "calculator_calls": calls, "knowledge_points": points, "effort": steps + calls + points}


# ---- one problem --------------------------------------------------------------------------
@dataclass
class Problem:
    family: Family
    level: int
    index: int
    seed: int
    attempt: int
    params: dict
    prompt: str
    kind: str
    answer: Any
    solution: Solution

    @property
    def task_id(self) -> str:
        return f"math-s{self.seed}-{self.family.name}-l{self.level}-{self.index:03d}"


def draft(family: Family, level: int, seed: int, index: int, attempt: int) -> Problem:
    rng = problem_rng(seed, family.name, level, index, attempt)
    params = family.draw(rng, level)
    return realise(family, level, seed, index, attempt, params)


def realise(family: Family, level: int, seed: int, index: int, attempt: int, params: dict) -> Problem:
    """Solve a problem from its parameters and check it offline (no tools)."""
    params = json.loads(canonical_json(params))            # exactly what the row will store
    kind = family.answer_kind(level)
    solution = Solution()
    try:
        answer = family.solve(params, solution)
        direct = family.direct(params)
    except (ArithmeticError, ValueError, TypeError, IndexError, KeyError, NotApplicable) as exc:
        raise Unverified(f"solving failed: {type(exc).__name__}: {exc}") from None
    if not equivalent(answer, direct, kind):
        raise Unverified(f"worked answer {show(answer)} differs from sympy's {show(direct)}")
    if not family.second_way(params, answer):
        raise Unverified(f"second method ({family.second_way_name}) does not confirm {show(answer)}")
    calls = trace_calls(solution)
    if calls > MAX_TRACE_CALLS:
        raise Unverified(f"golden trace of {calls} tool calls, more than MAX_TRACE_CALLS = {MAX_TRACE_CALLS}")
    return Problem(family, level, index, seed, attempt, params, family.prompt(params), kind, answer, solution)


def golden_trace(problem: Problem, toolbox) -> GoldenTrace:
    """Run the solution's searches and calculator calls through the toolbox; each must agree."""
    trace = GoldenTrace(plan=problem.solution.plan)
    for step in problem.solution.steps:
        if step.search:
            query, expected = step.search
            data = trace.record(toolbox, "math_knowledge_search", {"query": query, "k": 3},
                                value_of=lambda d: [r["id"] for r in d.get("results", [])])
            if expected not in trace.steps[-1].value:
                raise Unverified(f"step {step.index}: search {query!r} misses {expected} (got {trace.steps[-1].value})")
        if step.calc:
            data = trace.record(toolbox, "calculator", {"expression": step.calc},
                                value_of=lambda d: d.get("result"))
            if "error" in data:
                raise Unverified(f"step {step.index}: calculator refused {step.calc!r}: {data['error']}")
            if not values_agree(parse(data["result"]), step.value):
                raise Unverified(f"step {step.index}: calculator gives {data['result']} for {step.calc!r}, "
                                 f"the solution has {show(step.value)}")
    trace.final_answer = answer_json(problem.answer, problem.kind)
    return trace


def inject_error(problem: Problem) -> tuple[int, str, Solution, Any]:
    """The first (in seeded order) single-step error that makes the final answer wrong."""
    candidates = [(s.index, t) for s in problem.solution.steps for t in s.errors]
    rng = random.Random(problem_rng(problem.seed, problem.family.name, problem.level, problem.index,
                                    problem.attempt).random())
    rng.shuffle(candidates)
    for index, error_type in candidates:
        flawed = Solution(inject=(index, error_type))
        try:
            wrong = problem.family.solve(problem.params, flawed)
        except (NotApplicable, ArithmeticError, ValueError, TypeError, IndexError, KeyError, AttributeError):
            continue
        if not flawed.injected:
            continue
        if _equivalent_or_false(wrong, problem.answer, problem.kind):
            continue
        return index, error_type, flawed, wrong
    raise Unverified("no single-step error changes the final answer")


def _equivalent_or_false(a, b, kind: str) -> bool:
    """An answer of the wrong shape cannot be compared, and is certainly not equivalent."""
    try:
        return equivalent(a, b, kind)
    except Exception:  # noqa: BLE001 - any comparison failure means "not the same answer"
        return False


def _steps_json(solution: Solution) -> list[dict]:
    return [{"step": s.index, "capability": s.capability, "goal": s.goal, "text": s.text,
             "value": None if s.value is None else show(s.value)} for s in solution.steps]


def _knowledge_points(solution: Solution) -> list[str]:
    """The knowledge points the golden solution looks up, in order."""
    return [s.search[1] for s in solution.steps if s.search]


def _call_steps(solution: Solution) -> list[int]:
    """The worked step each golden-trace call belongs to, in trace order."""
    return [s.index for s in solution.steps for kind in ("search", "calc") if getattr(s, kind)]


def _final_text(value, kind: str) -> str:
    try:
        return answer_text(value, kind)
    except Exception:  # noqa: BLE001 - a value answer_text cannot format is shown as it is
        return show(value)


def task_row(problem: Problem, trace: GoldenTrace) -> dict:
    index, error_type, flawed, wrong = inject_error(problem)
    family = problem.family
    metadata = {
        "family": family.name, "knowledge_point": family.knowledge_point, "level": problem.level,
        "index": problem.index, "attempt": problem.attempt, "params": problem.params,
        "capabilities": problem.solution.capabilities, "plan": problem.solution.plan,
        "solution": _steps_json(problem.solution), "call_steps": _call_steps(problem.solution),
        "knowledge_points": _knowledge_points(problem.solution),
        "difficulty": difficulty_figure(problem.solution),
        "verification": {"worked_equals_sympy": True, "second_way": family.second_way_name,
                         "calculator_calls": sum(1 for s in trace.steps if s.tool == "calculator"),
                         "search_calls": sum(1 for s in trace.steps if s.tool == "math_knowledge_search")},
        "flawed_solution": {"first_error_step": index, "error_type": error_type, "steps": _steps_json(flawed),
                            "final_answer": _final_text(wrong, problem.kind)},
    }
    return {"task_id": problem.task_id, "family": "math", "domain": family.domain, "topic": family.knowledge_point,
            "difficulty": problem.level, "seed": problem.seed, "prompt": problem.prompt,
            "answer_json": canonical_json(trace.final_answer), "trace_json": trace.to_json(),
            "metadata_json": canonical_json(metadata)}


# ---- build ----------------------------------------------------------------------------------
def cells(families: list[str] | None = None) -> list[tuple[str, int]]:
    """Every (template, level) cell, ordered so that a small count reaches every template and every
    level early: the k-th cell is template k % T at level (k // T + k % T) % 5 (one cell each)."""
    names = sorted(families or FAMILIES)
    n = len(names)
    return [(names[k % n], LEVELS[(k // n + k % n) % len(LEVELS)]) for k in range(n * len(LEVELS))]


def _draws(seed: int):
    def draw(cell: tuple[str, int]):
        name, level = cell
        family = FAMILIES[name]
        for attempt in range(MAX_DRAWS):
            params = json.loads(canonical_json(family.draw(problem_rng(seed, name, level, 0, attempt), level)))
            yield (family.prompt(params),), (attempt, params)
    return draw


def build_count(count: int, seed: int, toolbox, families: list[str] | None = None) -> tuple[list[dict], dict[str, int]]:
    """Exactly ``count`` verified rows spread over the cells of every template (or the named ones),
    in template, level, index order; also the rejected candidates per template.
    Raises ``CountTooLarge`` (before verifying anything) when the cells hold fewer problems."""
    grid = cells(families)
    rejected: Counter = Counter()

    def check(batch):
        out = []
        for (name, level), index, (attempt, params) in batch:
            try:
                problem = realise(FAMILIES[name], level, seed, index, attempt, params)
                out.append(((name, level, index), task_row(problem, golden_trace(problem, toolbox))))
            except Unverified:
                rejected[name] += 1
                out.append(None)
        return out

    made = fill_or_refuse("math", count, grid, Candidates(_draws(seed)), check,
                          f"distinct problems among the first {MAX_DRAWS} draws of each of its {len(grid)} "
                          "template x level cells")
    rows = [row for _, row in sorted((r for rs in made.values() for r in rs), key=lambda r: r[0])]
    return rows, {name: rejected[name] for name, _ in grid}


def build_rows(per_cell: int, seed: int, toolbox, families: list[str] | None = None) -> tuple[list[dict], dict[str, int]]:
    """``per_cell`` problems in every cell of every template (or the named ones), when the cells hold them."""
    return build_count(per_cell * len(cells(families)), seed, toolbox, families)


def build(count: int | None, seed: int, out_dir: Path, toolbox) -> Report:
    count = DEFAULT_COUNT if count is None else count
    if count < 1:
        raise SystemExit("--count must be at least 1")
    rows, rejected = build_count(count, seed, toolbox)
    out_dir = Path(out_dir)
    write_task_table(rows, out_dir / TASKS_FILE)
    derived = [d for row in rows for d in derived_rows(row)]
    write_task_table(derived, out_dir / DERIVED_FILE, DERIVED_SCHEMA)
    print_report(coverage_report(rows))
    return summary_report(rows, rejected, f"MATH build: {len(rows)} tasks, {len(derived)} derived tasks -> {out_dir}")


def summary_report(rows: list[dict], rejected: dict[str, int] | None, title: str,
                   failures: list[Failure] | None = None) -> Report:
    failed = {f.task_id for f in failures or []}
    table = []
    for name in sorted(FAMILIES):
        mine = [r for r in rows if json.loads(r["metadata_json"])["family"] == name]
        if not mine:
            continue
        levels = [sum(1 for r in mine if r["difficulty"] == lv) for lv in LEVELS]
        bad = sum(1 for r in mine if r["task_id"] in failed)
        efforts = [[json.loads(r["metadata_json"]).get("difficulty", {}).get("effort", 0) for r in mine
                    if r["difficulty"] == lv] for lv in LEVELS]
        line = [FAMILIES[name].domain, name, len(mine), " ".join(map(str, levels)),
                " ".join(f"{sum(e) / len(e):.1f}" if e else "-" for e in efforts),
                sum(len(json.loads(r["trace_json"])["steps"]) for r in mine)]
        line += [rejected.get(name, 0)] if rejected is not None else []
        line += [f"{len(mine) - bad}/{len(mine)}"]
        table.append(line)
    columns = ["domain", "family", "tasks", "per level 1-5", "mean effort 1-5", "tool calls"]
    columns += ["rejected draws"] if rejected is not None else []
    columns += ["verified"]
    return Report(title, columns, table, failures or [])


def coverage_report(rows: list[dict]) -> Report:
    table = []
    for domain in dict.fromkeys(f.domain for f in FAMILIES.values()):
        mine = [json.loads(r["metadata_json"]) for r in rows if r["domain"] == domain]
        errors = {}
        for m in mine:
            errors[m["flawed_solution"]["error_type"]] = errors.get(m["flawed_solution"]["error_type"], 0) + 1
        for cap in CAPABILITIES:
            table.append([domain, cap, sum(1 for m in mine if cap in m["capabilities"]), len(mine)])
        table.append([domain, "injected errors", ", ".join(f"{k} {v}" for k, v in sorted(errors.items())), len(mine)])
    return Report("Capability coverage (problems needing each capability)", ["domain", "capability", "problems", "of"],
                  table)


# ---- validate -------------------------------------------------------------------------------
def validate_row(row: dict, toolbox) -> list[str]:
    """Everything that is wrong with one stored task (empty when it re-verifies)."""
    problems: list[str] = []
    try:
        meta = json.loads(row["metadata_json"])
        answer = json.loads(row["answer_json"])
        trace = GoldenTrace.from_json(row["trace_json"])
        family = FAMILIES[meta["family"]]
    except (KeyError, ValueError) as exc:
        return [f"unreadable row: {exc}"]
    try:
        problem = realise(family, meta["level"], row["seed"], meta["index"], meta["attempt"], meta["params"])
    except Unverified as exc:
        return [f"parameters no longer verify: {exc}"]
    if problem.task_id != row["task_id"]:
        problems.append(f"task id should be {problem.task_id}")
    if problem.prompt != row["prompt"]:
        problems.append("prompt differs from the one the parameters give")
    try:
        stored = reference_value(answer)
    except (CalcError, KeyError) as exc:
        return problems + [f"stored answer unreadable: {exc}"]
    if answer.get("kind") != problem.kind or not equivalent(problem.answer, stored, problem.kind):
        problems.append(f"stored answer {answer.get('value')!r} is wrong: recomputed {answer_text(problem.answer, problem.kind)}")
    elif not family.second_way(meta["params"], stored if problem.kind not in ("set", "tuple") else problem.answer):
        problems.append(f"second method ({family.second_way_name}) rejects the stored answer")
    if trace.final_answer != answer:
        problems.append("golden trace's final answer differs from the stored answer")
    if trace.plan != problem.solution.plan or meta["plan"] != problem.solution.plan:
        problems.append("stored plan differs from the worked solution's plan")
    if (meta.get("solution") != _steps_json(problem.solution) or meta.get("call_steps") != _call_steps(problem.solution)
            or meta.get("knowledge_points") != _knowledge_points(problem.solution)):
        problems.append("stored worked solution differs from the one the parameters give")
    if meta.get("difficulty") != difficulty_figure(problem.solution):
        problems.append("stored difficulty figure differs from the worked solution's")
    expected_calls = []
    for s in problem.solution.steps:
        if s.search:
            expected_calls.append(("math_knowledge_search", {"query": s.search[0], "k": 3}))
        if s.calc:
            expected_calls.append(("calculator", {"expression": s.calc}))
    if [(s.tool, s.args) for s in trace.steps] != expected_calls:
        problems.append("golden trace calls differ from the worked solution's calls")
    problems += replay_trace(trace, toolbox)
    try:
        index, error_type, flawed, _wrong = inject_error(problem)
        stored_flaw = meta["flawed_solution"]
        if (index, error_type) != (stored_flaw["first_error_step"], stored_flaw["error_type"]) \
                or _steps_json(flawed) != stored_flaw["steps"]:
            problems.append("flawed solution differs from the one the parameters give")
    except Unverified as exc:
        problems.append(str(exc))
    return problems


def validate(rows: list[dict], toolbox) -> Report:
    failures = []
    for row in sorted(rows, key=lambda r: r["task_id"]):
        for reason in validate_row(row, toolbox):
            failures.append(Failure(row["task_id"], reason))
    return summary_report(rows, None, f"MATH validate: {len(rows)} tasks, "
                          f"{len({f.task_id for f in failures})} failing", failures)
