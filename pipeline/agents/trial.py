"""The trial record: one layout and one writer for every way of racing.

A trial is a directory ``RUNS/<label>-<item id>-s<seed>/`` (``trial_dir_name``) holding
``tool_log.jsonl`` (one line per call, ``pipeline.tools.toollog.ToolLog``) and ``trial.json``,
written last and atomically (``write_record``): its presence means the trial finished, and a
re-run skips it unless it stopped for a reason in ``BROKEN`` (its surroundings failed it, not the
agent). Race's legs, the task families, the modular agent, the Inspect tasks and the MCP server
(``pipeline.tools.serve``, which rewrites its record after each call) all write through here.

Fields every record carries: ``agent``, ``seed``, ``answer``, ``tool_log``, ``steps``, ``tokens``,
``wall_time_s``, ``stop_reason``, ``messages`` (the agent's last texts), ``budget`` (what the trial
could spend, LLM agents), ``agent_error`` (why it broke). Legs add ``leg_id``, ``variant``, ``level``;
task families add ``task_id``, ``family``, ``domain``, ``topic``, ``difficulty``, ``success``,
``judged``, ``judge_note`` (``TRIAL_KEYS``); the modular agent adds ``modular``.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.tools.toollog import ToolLog

# A trial that ended for these reasons was broken by its surroundings, not by the agent: a re-run redoes it.
BROKEN = ("crash", "llm_error")
# the fields of a finished task-family trial: a trial.json holding all of them is not run again
TRIAL_KEYS = ("task_id", "family", "domain", "topic", "difficulty", "agent", "seed", "success", "judged",
              "steps", "tokens", "wall_time_s", "stop_reason", "answer")
TOOL_LOG = "tool_log.jsonl"


@dataclass(frozen=True)
class Budget:
    """What one trial of an LLM agent may spend; recorded with the trial."""
    steps: int | None = None        # actions (default: the environment's step budget)
    timeout_s: float = 600.0        # wall clock for the whole trial
    max_tokens: int = 1024          # completion tokens per request (the server stops the reply there)
    trial_tokens: int = 200_000     # tokens (prompt and completion, as reported) for the whole trial
    stop: tuple[str, ...] = ()      # stop sequences sent with every request

    def to_dict(self, steps: int) -> dict[str, Any]:
        return {"steps": self.steps or steps, "timeout_s": self.timeout_s, "max_tokens": self.max_tokens,
                "trial_tokens": self.trial_tokens, "stop": list(self.stop)}


@dataclass
class TrialResult:
    """How an agent's trial went, before the environment adds its identity and judgement."""
    leg_id: str | None
    agent: str
    seed: int
    answer: Any
    steps: int
    tokens: int | None = None
    wall_time_s: float = 0.0
    stop_reason: str = "answered"
    messages: list[str] = field(default_factory=list)
    error: str | None = None        # why the trial could not go on (llm_error, crash)
    extra: dict[str, Any] = field(default_factory=dict)   # more fields for trial.json (the modular agent's)


def trial_dir_name(agent: str, item_id: str, seed: int) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{agent}-{item_id}-s{seed}")


def trial_label(agent: str, client=None) -> str:
    """The name a trial is filed under: the agent, or for ``modular`` its configuration's label."""
    return client.label if agent == "modular" and client is not None else agent


def read_record(d: Path) -> dict | None:
    """``d/trial.json`` as a dict, or None when it is missing or unreadable."""
    try:
        record = json.loads((Path(d) / "trial.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def finished_trial(d: Path, keys: tuple[str, ...] = (), item_key: str | None = None,
                   item_id: str | None = None) -> bool:
    """``d`` holds a complete trial (a re-run skips it: every field of ``keys``, of item ``item_id``) and
    not a broken one (a re-run redoes it)."""
    record = read_record(d)
    if record is None or not all(k in record for k in keys):
        return False
    if item_id is not None and record.get(item_key) != item_id:
        return False
    return record.get("stop_reason") not in BROKEN


def write_record(d: Path, record: dict[str, Any]) -> Path:
    """Write ``d/trial.json`` atomically (a reader sees the old record or the new one, never half)."""
    d = Path(d)
    tmp = d / "trial.json.tmp"
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, d / "trial.json")
    return d


def open_trial(out_dir: Path, label: str, item_id: str, seed: int) -> tuple[Path, ToolLog]:
    """A fresh trial directory: no ``trial.json`` (it is written last) and an empty tool log."""
    d = Path(out_dir) / trial_dir_name(label, item_id, seed)
    d.mkdir(parents=True, exist_ok=True)
    (d / "trial.json").unlink(missing_ok=True)
    log_path = d / TOOL_LOG
    log_path.write_text("", encoding="utf-8")
    return d, ToolLog(log_path)


def base_record(result: TrialResult, budget: Budget | None = None, budget_steps: int = 0) -> dict[str, Any]:
    """The fields every trial carries, from an agent's result."""
    record = {"agent": result.agent, "seed": result.seed, "answer": result.answer, "tool_log": TOOL_LOG,
              "steps": result.steps, "tokens": result.tokens, "wall_time_s": result.wall_time_s,
              "stop_reason": result.stop_reason, "messages": result.messages}
    if budget is not None:
        record["budget"] = budget.to_dict(budget_steps)
    return record


__all__ = ["BROKEN", "TOOL_LOG", "TRIAL_KEYS", "Budget", "TrialResult", "base_record", "finished_trial",
           "open_trial", "read_record", "trial_dir_name", "trial_label", "write_record"]
