"""Scoring races on task sets (``python -m pipeline.score --tasks DIR --runs RUNS --out report.json``).

Trials are the directories ``pipeline.agents.tasks`` writes (``trial.json`` with ``task_id`` and
``family``, plus ``tool_log.jsonl``). The judgement is the trial's own: the race judged it with the
family's checker (math answer check, prover, sandbox check, git replay), which needs the prover or
the sandbox and is not repeated here. Per trial:

  success          the race's verdict; ``null`` for a trial nothing here could judge (no Lean 4 or
                   Isabelle toolchain, a task the sandbox cannot run), which is left out of success
                   rates and counted as ``unjudged``
  steps            actions the environment executed (tool calls, proof submissions, commands)
  tokens           as the llm agent recorded them from the server's ``usage`` (else null)
  tool efficiency  useful calls / calls, where a call is useful when it succeeded (``success`` in
                   the tool log: the tool answered, the prover found no defect, the command exited 0,
                   git accepted the command) and the trial succeeded, i.e. it served a correct answer;
                   in a failed trial no call is useful. Undefined for a trial with no calls.

Groups (per agent): overall, per family, per family and topic, per family and difficulty. A group's
success rate is over its judged trials; its tool efficiency pools the calls of its judged trials
(sum of useful calls / sum of calls); mean steps is over all its trials; tokens are summed (and
averaged over the trials that report them). Trials that cannot be read, or name a task that is not
in the set, are listed under ``invalid_trials`` and not scored.
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from pipeline.agents.tasks import TRIAL_KEYS
from pipeline.scoring.trials import TrialFormatError, read_tool_log
from pipeline.tasks.common import read_task_rows
from pipeline.usage import UserError


def load_task_trials(runs: Path) -> tuple[list[dict], list[dict]]:
    """``(trials, invalid)``: every ``*/trial.json`` under ``runs`` that is a task trial, each with its
    tool calls under ``calls``; the unreadable ones as ``{trial_id, reason}``. Leg trials are skipped."""
    trials, invalid = [], []
    for path in sorted(Path(runs).glob("*/trial.json")):
        trial_id = path.parent.name
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            invalid.append({"trial_id": trial_id, "reason": f"trial.json unreadable: {exc}"})
            continue
        if not isinstance(record, dict):
            invalid.append({"trial_id": trial_id, "reason": "trial.json is not an object"})
            continue
        if "task_id" not in record and "leg_id" in record:
            continue            # a trial on a leg
        missing = [k for k in TRIAL_KEYS if k not in record]
        if missing:
            invalid.append({"trial_id": trial_id, "reason": f"trial.json lacks {', '.join(missing)}"})
            continue
        try:
            calls = read_tool_log(path.parent / record.get("tool_log", "tool_log.jsonl"))
        except TrialFormatError as exc:
            invalid.append({"trial_id": trial_id, "reason": str(exc)})
            continue
        trials.append({**record, "trial_id": trial_id, "calls": calls})
    return trials, invalid


def score_task_trial(trial: dict, row: dict) -> dict:
    """One trial's figures; family, topic and difficulty come from the task row."""
    n_calls = len(trial["calls"])
    ok_calls = sum(1 for c in trial["calls"] if c.success)
    useful = ok_calls if trial["success"] is True else 0
    return {
        "trial_id": trial["trial_id"], "task_id": row["task_id"], "agent": trial["agent"], "seed": trial["seed"],
        "family": row["family"], "domain": row["domain"], "topic": row["topic"], "difficulty": row["difficulty"],
        "success": trial["success"], "judged": bool(trial["judged"]), "judge_note": trial.get("judge_note", ""),
        "steps": trial["steps"], "tokens": trial["tokens"], "wall_time_s": trial["wall_time_s"],
        "stop_reason": trial["stop_reason"], "n_calls": n_calls, "ok_calls": ok_calls, "useful_calls": useful,
        "tool_efficiency": useful / n_calls if n_calls else None,
    }


def summarize_group(scores: list[dict]) -> dict[str, Any]:
    judged = [s for s in scores if s["judged"]]
    calls = sum(s["n_calls"] for s in judged)
    with_tokens = [s["tokens"] for s in scores if isinstance(s["tokens"], int)]
    stops: dict[str, int] = defaultdict(int)
    for s in scores:
        stops[s["stop_reason"]] += 1
    return {
        "n": len(scores), "judged": len(judged), "unjudged": len(scores) - len(judged),
        "succeeded": sum(1 for s in judged if s["success"] is True),
        "success_rate": sum(1 for s in judged if s["success"] is True) / len(judged) if judged else None,
        "mean_steps": sum(s["steps"] for s in scores) / len(scores) if scores else None,
        "tokens": sum(with_tokens) if with_tokens else None,
        "mean_tokens": sum(with_tokens) / len(with_tokens) if with_tokens else None,
        "tool_calls": sum(s["n_calls"] for s in scores),
        "tool_efficiency": sum(s["useful_calls"] for s in judged) / calls if calls else None,
        "crashes": stops.get("crash", 0), "stop_reasons": dict(sorted(stops.items())),
    }


def _groups(scores: list[dict], keys: tuple[str, ...]) -> list[dict]:
    buckets: dict[tuple, list[dict]] = defaultdict(list)
    for s in scores:
        buckets[tuple(s[k] for k in keys)].append(s)
    return [{**dict(zip(keys, key)), **summarize_group(group)}
            for key, group in sorted(buckets.items(), key=lambda kv: tuple(str(v) for v in kv[0]))]


def aggregate_tasks(scores: list[dict]) -> dict[str, Any]:
    return {"overall": _groups(scores, ("agent",)),
            "by_family": _groups(scores, ("agent", "family")),
            "by_topic": _groups(scores, ("agent", "family", "topic")),
            "by_difficulty": _groups(scores, ("agent", "family", "difficulty"))}


def score_task_runs(task_dir: Path, runs: Path) -> tuple[dict, list[dict]]:
    """The report and the per-trial scores of every task trial under ``runs`` against ``task_dir``."""
    rows = {r["task_id"]: r for r in read_task_rows(Path(task_dir))}
    trials, invalid = load_task_trials(Path(runs))
    scores = []
    for t in trials:
        row = rows.get(t["task_id"])
        if row is None:
            invalid.append({"trial_id": t["trial_id"], "reason": f"task {t['task_id']!r} is not in {task_dir}"})
            continue
        scores.append(score_task_trial(t, row))
    tasks_per_family: dict[str, int] = defaultdict(int)
    for r in rows.values():
        tasks_per_family[r["family"]] += 1
    report = {"tasks": str(task_dir), "runs": str(runs), "n_tasks": len(rows),
              "tasks_per_family": dict(sorted(tasks_per_family.items())), "n_trials": len(scores),
              **aggregate_tasks(scores), "invalid_trials": sorted(invalid, key=lambda d: d["trial_id"])}
    return report, scores


def _fmt(x: Any, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.1f}" if pct else f"{x:.2f}" if isinstance(x, float) else str(x)


def print_task_tables(report: dict) -> None:
    """Per family and per difficulty (per topic only in the report: too many rows for a console)."""

    console = Console(width=None if sys.stdout.isatty() else 150)
    for title, key, label in (("by family", "by_family", None), ("by difficulty", "by_difficulty", "difficulty")):
        t = Table(title=f"Legwork task-set race scores, {title} (success and tool efficiency in %)")
        columns = ["agent", "family"] + ([label] if label else []) + ["n", "judged", "success", "steps", "tokens",
                                                                       "tool calls", "tool eff", "crashes"]
        for col in columns:
            t.add_column(col, justify="left" if col in ("agent", "family", "topic") else "right")
        groups = report[key] + ([{"agent": g["agent"], "family": "all", **g} for g in report["overall"]]
                                if label is None else [])
        for g in groups:
            t.add_row(g["agent"], g["family"], *([str(g[label])] if label else []), str(g["n"]), str(g["judged"]),
                      _fmt(g["success_rate"], True), _fmt(g["mean_steps"]), _fmt(g["tokens"]),
                      str(g["tool_calls"]), _fmt(g["tool_efficiency"], True), str(g["crashes"]))
        console.print(t)


def main(task_dir: str | Path, runs: str | Path, out: str | Path | None = None) -> int:
    """Score, print the tables, and with ``out`` write the report and the per-trial lines beside it."""
    if not Path(task_dir).is_dir():
        raise FileNotFoundError(f"no task set at {task_dir} (build one with python -m pipeline.tasks build)")
    if not Path(runs).exists():
        raise FileNotFoundError(f"no runs at {runs} (race one with python -m pipeline.race --tasks DIR)")
    report, scores = score_task_runs(Path(task_dir), Path(runs))
    if not report["n_trials"]:   # a table of nothing, exit 0, would read as a scored race
        raise UserError(f"no trials in {runs} (race the tasks with python -m pipeline.race --tasks {task_dir})")
    print_task_tables(report)
    for bad in report["invalid_trials"]:
        print(f"invalid trial {bad['trial_id']}: {bad['reason']}", file=sys.stderr)
    if out is None:
        return 0
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    jsonl = out.with_name(out.stem + ".trials.jsonl")
    jsonl.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in scores), encoding="utf-8")
    print(f"report: {out}; per trial: {jsonl}")
    return 0


__all__ = ["aggregate_tasks", "load_task_trials", "main", "score_task_runs", "score_task_trial", "summarize_group"]
