"""Shell tasks (AgentBench OS format): file system, users/groups/permissions, processes.

Cells: the 40 task kinds (16 file-system, 12 user/permission, 12 process generators; see
``generate.GENERATORS``): one-command tasks, questions answered by several commands over generated
logs, CSV trees, accounts and file metadata (``questions``), small commands the agent writes and a
check runs on hidden inputs (``scripts``), and running processes whose behaviour the agent must
discover (``discover``). ``--count N`` is the number of tasks, spread evenly over the kinds (default
60); each kind draws from its own seeded stream, a description is never written twice, and a
candidate that fails in the sandbox is replaced by the kind's next one. A count above the kinds'
distinct descriptions (within ``MAX_DRAWS`` draws each) is refused before anything is run.

Every task is run in the throwaway root of ``sandbox`` (never on the host): init (+ start), then the
golden solution must pass (answer equals ``evaluation.match``, or ``evaluation.check`` exits 0), and
doing nothing must fail (check tasks: the check right after init; answer tasks: the empty answer, and
the golden commands on a system where init never ran must not already print the answer). A task that
passes with no action is rejected. Where the generator gives a plausible wrong solution (the 19
kinds of ``questions``, ``scripts`` and ``discover``; the 21 one-command kinds have none), it must fail too: answer tasks, it must print the wrong answer the generator
predicted, which differs from the right one; check tasks, the check must fail after it.

``difficulty`` is measured, not assigned: the level (1-5) of the golden solution's simple-command
count (``measure``); the counts themselves are kept in the row's metadata (``measure``).
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
from pipeline.tasks.os import agentbench
from pipeline.tasks.os.generate import DOMAINS, MAX_DRAWS, OsTask, kind_draws, kinds
from pipeline.tasks.os.measure import level, measure
from pipeline.tasks.os.sandbox import SandboxUnavailable, run_session, sandbox_available

DEFAULT_COUNT = 60
WORKERS = 4        # sandbox sessions at once: they mostly wait (process start-up, sleeps in checks), not compute
OUTPUT_FILE = "os.parquet"


@dataclass(frozen=True)
class TaskCheck:
    ok: bool
    verified: bool
    detail: str
    golden_output: str = ""


def _steps(task: dict, solution: str | None, with_setup: bool = True) -> list[tuple[str, str]]:
    steps = []
    if with_setup:
        for name, script in (("init", agentbench.init_script(task)), ("start", agentbench.start_script(task))):
            if script:
                steps.append((name, script))
    if solution is not None:
        steps.append(("solution", solution))
    check = agentbench.check_script(task)
    if check is not None:
        steps.append(("check", check))
    return steps


def _failed_setup(results) -> str | None:
    for r in results:
        if r.name in ("init", "start") and r.exit_code != 0:
            return f"{r.name} script failed (exit {r.exit_code}): {r.stderr.strip()[-200:]}"
    return None


def _wrong_fails(task: dict, wrong: str, wrong_expected: str | None, match: str | None) -> str | None:
    """None if the plausible wrong solution fails as it should, else why not."""
    results = run_session(_steps(task, wrong))
    problem = _failed_setup(results)
    if problem:
        return problem
    if match is not None:
        said = results[[r.name for r in results].index("solution")].stdout.strip()
        if said == match:
            return f"the plausible wrong solution prints the right answer {match!r}"
        if wrong_expected is not None and said != wrong_expected:
            return f"the plausible wrong solution printed {said[:80]!r}, the generator predicted {wrong_expected!r}"
        return None
    if results[-1].exit_code == 0:
        return "the check passes after the plausible wrong solution"
    return None


def check_task(task: dict, expected: str | None = None, wrong: str | None = None,
               wrong_expected: str | None = None) -> TaskCheck:
    """Run the golden solution, the do-nothing baseline and (if given) the plausible wrong solution in
    fresh sandboxes."""
    runnable, why = agentbench.is_runnable(task)
    if not runnable:
        return TaskCheck(True, False, f"not runnable here: {why}")
    if not sandbox_available():
        return TaskCheck(True, False, "sandbox unavailable (needs root, unshare and overlayfs)")
    example, match = agentbench.example_script(task), agentbench.match_value(task)
    try:
        golden = run_session(_steps(task, example))
        problem = _failed_setup(golden)
        if problem:
            return TaskCheck(False, False, problem)
        answer = golden[[r.name for r in golden].index("solution")].stdout.strip()
        if match is not None:
            if answer != match:
                return TaskCheck(False, False, f"golden solution printed {answer[:80]!r}, expected {match!r}")
            if expected is not None and expected != match:
                return TaskCheck(False, False, f"generator expected {expected!r} but the task says {match!r}")
            if match.strip() == "":
                return TaskCheck(False, False, "empty expected answer: doing nothing would pass")
            bare = run_session(_steps(task, example, with_setup=False))
            if bare[-1].stdout.strip() == match:
                return TaskCheck(False, False, "the answer does not depend on the task's setup "
                                               "(golden commands print it on an untouched system)")
            if wrong is not None:
                problem = _wrong_fails(task, wrong, wrong_expected, match)
                if problem:
                    return TaskCheck(False, False, problem)
            return TaskCheck(True, True, "sandbox: golden answer matches; empty answer and untouched system do not"
                             + ("; the plausible wrong answer differs" if wrong is not None else ""), answer)
        if golden[-1].exit_code != 0:
            return TaskCheck(False, False, f"check failed after the golden solution (exit {golden[-1].exit_code}): "
                                           f"{golden[-1].stderr.strip()[-200:]}")
        nothing = run_session(_steps(task, None))
        if nothing[-1].exit_code == 0:
            return TaskCheck(False, False, "check passes with no action")
        if wrong is not None:
            problem = _wrong_fails(task, wrong, None, None)
            if problem:
                return TaskCheck(False, False, problem)
        return TaskCheck(True, True, "sandbox: check passes after the golden solution and fails with no action"
                         + (" and after the plausible wrong solution" if wrong is not None else ""), answer)
    except SandboxUnavailable as exc:
        return TaskCheck(False, False, f"sandbox error: {exc}")


def _row(t: OsTask, index: int, seed: int, check: TaskCheck) -> dict:
    """``index``: the task's position among its kind's candidates."""
    match = agentbench.match_value(t.task)
    # the printed answer is kept for answer tasks only: other output may hold PIDs, which vary run to run
    plan = [{"act": "bash", "script": agentbench.example_script(t.task),
             "output": check.golden_output if match is not None else None}]
    plan.append({"act": "answer", "value": match} if match is not None else {"act": "finish"})
    return {
        "task_id": f"os-s{seed}-{index:03d}-{t.kind}", "family": "os", "domain": t.domain, "topic": t.kind,
        "difficulty": t.difficulty, "seed": seed, "prompt": t.task["description"],
        "answer_json": canonical_json({"match": match} if match is not None else {"check": t.task["evaluation"]["check"]}),
        "trace_json": GoldenTrace(plan=plan, steps=[], final_answer=match).to_json(),
        "metadata_json": canonical_json({"agentbench": t.task, "labels": t.task["labels"], "params": t.params,
                                         "expected": t.expected, "runnable": True, "verified": check.verified,
                                         "verification": check.detail, "measure": t.measure.as_dict(),
                                         "wrong": ({"script": t.wrong, "output": t.wrong_expected}
                                                   if t.wrong is not None else None)}),
    }


def _report(title: str, rows: list[dict], checks: dict[str, TaskCheck], failures: list[Failure]) -> Report:
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        c = checks[r["task_id"]]
        per[r["domain"]][0 if c.verified else 1 if c.ok else 2] += 1
    table = [[d, sum(v), *v] for d, v in sorted(per.items())]
    table.append(["all", sum(sum(v) for v in per.values()), *[sum(v[i] for v in per.values()) for i in range(3)]])
    return Report(title=title, columns=["domain", "tasks", "sandbox-verified", "not run", "failed"],
                  rows=table, failures=failures)


def build(count: int | None, seed: int, out_dir: Path, toolbox=None) -> Report:
    """``count`` tasks that pass the sandbox, spread over the kinds; rejected candidates are reported."""
    start = time.perf_counter()
    count = count or DEFAULT_COUNT
    if not sandbox_available():
        return Report("os: sandbox unavailable", ["problem"], [["needs root, unshare and overlayfs"]],
                      [Failure("os", "the OS-task sandbox cannot run on this machine")])
    grid = kinds()
    checks: dict[str, TaskCheck] = {}
    rejected: list[str] = []

    def check(batch):
        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(lambda item: check_task(item[2].task, item[2].expected, item[2].wrong,
                                                            item[2].wrong_expected), batch))
        out = []
        for (kind, index, t), c in zip(batch, results):
            if c.ok and c.verified:
                row = _row(t, index, seed, c)
                checks[row["task_id"]] = c
                out.append(((grid.index(kind), index), row))
            else:
                rejected.append(f"{kind}#{index}: {c.detail}")
                out.append(None)
        return out

    made = fill_or_refuse("os", count, grid, Candidates(lambda kind: kind_draws(seed, kind)), check,
                          f"distinct descriptions among the first {MAX_DRAWS} draws of each of its {len(grid)} "
                          "task kinds")
    rows = [row for _, row in sorted((r for rs in made.values() for r in rs), key=lambda r: r[0])]
    write_task_table(rows, Path(out_dir) / OUTPUT_FILE)
    report = _report(f"os: built {len(rows)} tasks, rejected {len(rejected)} candidates "
                     f"({time.perf_counter() - start:.1f} s)", rows, checks, [])
    report.rows.extend([[f"rejected: {r[:90]}", "", "", "", ""] for r in rejected])
    return report


def verify_row(row: dict) -> TaskCheck:
    meta = json.loads(row["metadata_json"])
    task = meta["agentbench"]
    if row["prompt"] != task.get("description", ""):
        return TaskCheck(False, False, "prompt differs from the AgentBench description")
    if not meta.get("runnable", True):
        return TaskCheck(True, False, meta.get("verification", "not runnable"))
    if "measure" in meta:
        measured = measure(agentbench.example_script(task))
        if measured.as_dict() != meta["measure"] or row["difficulty"] != level(measured.commands):
            return TaskCheck(False, False, f"difficulty {row['difficulty']} / measure {meta['measure']} do not "
                                           f"match the golden solution ({measured.as_dict()})")
    wrong = meta.get("wrong") or {}
    return check_task(task, meta.get("expected"), wrong.get("script"), wrong.get("output"))


def validate(rows: list[dict], toolbox=None) -> Report:
    start = time.perf_counter()
    checks, failures = verify_all(rows, verify_row, WORKERS)
    return _report(f"os: validated {len(rows)} tasks ({time.perf_counter() - start:.1f} s)", rows, checks, failures)


__all__ = ["DEFAULT_COUNT", "DOMAINS", "agentbench", "build", "check_task", "validate", "verify_row"]
