"""AgentBench OS-interaction JSON: read its variants, import into task rows, export back verbatim.

The format allows several spellings, all kept as they are (so export(import(x)) == x):
  create.init:        "script" | {"code": "script"} | {"file": "init/x.sh"}
  start:              "script" (background processes started before the agent acts)
  evaluation.match:   the expected answer string
  evaluation.check:   {"code": ...} | {"file": ...} | [null, {"language": "python", "file": "check/..."}]
                      (a list: item null means "run the example and pass its output on")
  evaluation.example: "script" | {"code": ...} | {"file": ...}   (also found at the top level)
Scripts given as ``file`` live outside the JSON; such tasks import fine but cannot be run here.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pipeline.cache import canonical_json
from pipeline.tasks.common import GoldenTrace


class ExternalScript(ValueError):
    """The task refers to a script file that is not part of the JSON."""


def _script(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "code" in value:
            return value["code"]
        if "file" in value:
            raise ExternalScript(f"{what} refers to the external file {value['file']!r}")
    raise ExternalScript(f"{what} has an unsupported form: {json.dumps(value)[:80]}")


def init_script(task: dict) -> str | None:
    create = task.get("create")
    if not isinstance(create, dict):
        if create is None:
            return None
        raise ExternalScript(f"create has an unsupported form: {json.dumps(create)[:80]}")
    return _script(create.get("init"), "create.init")


def start_script(task: dict) -> str | None:
    return _script(task.get("start"), "start")


def example_script(task: dict) -> str | None:
    evaluation = task.get("evaluation", {})
    return _script(evaluation.get("example", task.get("example")), "example")


def match_value(task: dict) -> str | None:
    return task.get("evaluation", {}).get("match")


def check_script(task: dict) -> str | None:
    check = task.get("evaluation", {}).get("check")
    if check is None:
        return None
    if isinstance(check, list):
        raise ExternalScript("evaluation.check is a script chain with external files")
    return _script(check, "evaluation.check")


def is_runnable(task: dict) -> tuple[bool, str]:
    """Whether every script the task needs is inline (so the sandbox can run it)."""
    try:
        init_script(task), start_script(task), example_script(task)
        if match_value(task) is None and check_script(task) is None:
            return False, "neither evaluation.match nor evaluation.check"
        if example_script(task) is None:
            return False, "no example solution"
    except ExternalScript as exc:
        return False, str(exc)
    return True, "inline scripts"


def load(path: Path) -> list[dict]:
    """An AgentBench file holds one task object or a list of them."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def import_tasks(tasks: list[dict], source: str) -> list[dict]:
    """Task rows (common schema) for AgentBench task objects; the object is kept verbatim."""

    rows = []
    for i, task in enumerate(tasks):
        digest = hashlib.sha256(canonical_json(task).encode()).hexdigest()[:10]
        runnable, why = is_runnable(task)
        labels = list(task.get("labels", []))
        answer = {"match": match_value(task)} if match_value(task) is not None else \
            {"check": task.get("evaluation", {}).get("check")}
        try:
            example = example_script(task)
        except ExternalScript:
            example = None
        rows.append({
            "task_id": f"os-import-{Path(source).stem}-{i:03d}-{digest}", "family": "os",
            "domain": "imported", "topic": labels[0] if labels else "unlabelled", "difficulty": 0, "seed": 0,
            "prompt": task.get("description", ""), "answer_json": canonical_json(answer),
            "trace_json": GoldenTrace(plan=[{"act": "bash", "script": example}] if example else [],
                                      final_answer=match_value(task)).to_json(),
            "metadata_json": canonical_json({"agentbench": task, "labels": labels, "source": source,
                                             "runnable": runnable, "verified": False,
                                             "verification": f"imported; {why}"}),
        })
    return rows


def export_tasks(rows: list[dict]) -> list[dict]:
    """The AgentBench objects of OS task rows, in row order."""
    return [json.loads(r["metadata_json"])["agentbench"] for r in rows if r["family"] == "os"]


def dump(rows: list[dict], path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(export_tasks(rows), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
