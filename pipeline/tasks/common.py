"""What every task family shares: the row schema, the golden trace, Parquet I/O and the CLI.

A family is a package ``pipeline.tasks.<name>`` that exposes two functions:

    build(count: int | None, seed: int, out_dir: Path, toolbox: Toolbox) -> Report
        generate, verify and write the family's Parquet file(s) into ``out_dir``
        (use ``write_task_table``; only verified tasks are written);
    validate(rows: list[dict], toolbox: Toolbox) -> Report
        re-verify rows read back from ``out_dir`` (``toolbox`` replays from the cache).

``python -m pipeline.tasks validate DIR`` reads every ``*.parquet`` file in DIR whose schema
holds the task columns, groups the rows by ``family`` and hands each group to its family.
"""
from __future__ import annotations

import argparse
import importlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.cache import canonical_json
from pipeline.model import SERVED_AS, TraceEntry

FAMILIES = ("math", "atp", "os", "git")

# One row per task. Structured parts are canonical JSON text so the schema stays stable.
TASK_SCHEMA = pa.schema([
    pa.field("task_id", pa.string(), nullable=False),     # unique, stable for a seed
    pa.field("family", pa.string(), nullable=False),      # math | atp | os | git
    pa.field("domain", pa.string(), nullable=False),      # e.g. algebra, geometry, coq, shell, branching
    pa.field("topic", pa.string(), nullable=False),       # e.g. the knowledge point or level name
    pa.field("difficulty", pa.int64(), nullable=False),   # family-defined scale (math: 1-5)
    pa.field("seed", pa.int64(), nullable=False),
    pa.field("prompt", pa.string(), nullable=False),      # what the agent is shown
    pa.field("answer_json", pa.string(), nullable=False), # canonical JSON of the reference answer
    pa.field("trace_json", pa.string(), nullable=False),  # canonical JSON of the GoldenTrace
    pa.field("metadata_json", pa.string(), nullable=False),  # family-specific canonical JSON
])


GoldenStep = TraceEntry  # one tool call of a golden solution: the same entry as a leg's trace (stop is None)


@dataclass
class GoldenTrace:
    plan: list[Any] = field(default_factory=list)     # family-defined plan steps
    steps: list[TraceEntry] = field(default_factory=list)
    final_answer: Any = None

    def to_json(self) -> str:
        return canonical_json(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> GoldenTrace:
        d = json.loads(text)
        return cls(plan=d.get("plan", []), steps=[TraceEntry.from_dict(s) for s in d.get("steps", [])],
                   final_answer=d.get("final_answer"))

    def record(self, toolbox, tool: str, args: dict, value_of=None) -> dict:
        """Call a tool through the toolbox, append the step, return the result data."""
        result = toolbox.call(tool, args)
        data = result.data
        value = value_of(data) if value_of else None
        self.steps.append(TraceEntry(stop=None, step=len(self.steps), tool=tool, args=dict(args),
                                     response=result.response_json, provenance=result.provenance,
                                     served_from=SERVED_AS.get(result.served_from, result.served_from), value=value))
        return data


def replay_trace(trace: GoldenTrace, toolbox) -> list[str]:
    """Re-issue every call of ``trace``; return one message per response that differs."""
    from pipeline.cache import ReplayMiss

    problems = []
    for s in trace.steps:
        try:
            got = toolbox.call(s.tool, s.args).response_json
        except ReplayMiss as exc:
            problems.append(f"step {s.step} {s.tool}: {exc}")
            continue
        if got != s.response:
            problems.append(f"step {s.step} {s.tool}: replayed response differs from the golden trace")
    return problems


def write_task_table(rows: list[dict], path: Path, schema: pa.Schema = TASK_SCHEMA) -> Path:
    """Write rows in the given order with fixed options, so a seed gives byte-identical files."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path, compression="zstd", compression_level=3, use_dictionary=True,
                   write_statistics=False, row_group_size=1 << 20)
    return path


def read_task_rows(out_dir: Path) -> list[dict]:
    """All task rows from the Parquet files of ``out_dir`` that carry the task columns."""
    rows: list[dict] = []
    for path in sorted(Path(out_dir).glob("*.parquet")):
        schema = pq.read_schema(path)
        if all(name in schema.names for name in TASK_SCHEMA.names):
            rows.extend(pq.read_table(path, columns=TASK_SCHEMA.names).to_pylist())
    return rows


@dataclass
class Failure:
    task_id: str
    reason: str


@dataclass
class Report:
    """What a family hands back: a summary table for the console and any failures."""
    title: str
    columns: list[str]
    rows: list[list[Any]]
    failures: list[Failure] = field(default_factory=list)


def verify_all(rows: list[dict], verify_row, workers: int = 2) -> tuple[dict[str, Any], list[Failure]]:
    """Re-verify every row in parallel; the checks by task id and the failures in task-id order.

    Checks are whatever ``verify_row`` returns; they need ``ok`` and ``detail``."""
    with ThreadPoolExecutor(workers) as pool:
        checks = dict(zip([r["task_id"] for r in rows], pool.map(verify_row, rows)))
    return checks, [Failure(tid, c.detail) for tid, c in sorted(checks.items()) if not c.ok]


def family_module(name: str):
    if name not in FAMILIES:
        raise SystemExit(f"unknown task family {name!r}; choose one of {', '.join(FAMILIES)}")
    return importlib.import_module(f"pipeline.tasks.{name}")


def print_report(report: Report) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:      # logs and pipes: wide enough not to cut names
        console = Console(width=140)
    table = Table(title=report.title)
    for column in report.columns:
        table.add_column(str(column))
    for row in report.rows:
        table.add_row(*[str(v) for v in row])
    console.print(table)
    for f in report.failures:
        console.print(f"[red]FAIL[/red] {f.task_id}: {f.reason}", highlight=False)


def _toolbox(settings, replay: bool):
    from pipeline.tools.registry import Toolbox

    if replay:
        settings = settings.with_overrides(default_backend="replay", backends={})
    return Toolbox(settings)


def build_task_set(family: str, count: int | None, seed: int, out_dir: Path, settings) -> Report:
    """Generate, verify and write one family's task set (``count`` None: the family's default size)."""
    return family_module(family).build(count, seed, Path(out_dir), _toolbox(settings, replay=False))


def validate_task_set(task_dir: Path, settings) -> list[Report]:
    """Re-verify every task of a folder, its tool calls replayed; one report per family found
    (none when the folder holds no task rows)."""
    rows = read_task_rows(task_dir)
    toolbox = _toolbox(settings, replay=True)
    return [family_module(name).validate([r for r in rows if r["family"] == name], toolbox)
            for name in sorted({r["family"] for r in rows})]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.tasks",
                                     description="Build or validate a task set (math, atp, os, git) with verified golden traces.")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="generate, verify and write a task set")
    b.add_argument("--family", required=True, choices=FAMILIES)
    b.add_argument("--count", type=int, default=None, help="family-defined size (math: problems per cell)")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--out", required=True, type=Path)
    b.add_argument("--cache", default=None, help="record/replay cache file (default: settings)")
    v = sub.add_parser("validate", help="re-verify every task in a directory (replaying tool calls)")
    v.add_argument("dir", type=Path)
    v.add_argument("--cache", default=None, help="record/replay cache file (default: settings)")
    args = parser.parse_args(argv)

    from pipeline.config import load_settings
    settings = load_settings(**({"cache_path": Path(args.cache)} if args.cache else {}))
    if args.command == "build":
        report = build_task_set(args.family, args.count, args.seed, args.out, settings)
        print_report(report)
        return 1 if report.failures else 0

    reports = validate_task_set(args.dir, settings)
    if not reports:
        print(f"no task rows found in {args.dir}")
        return 1
    for report in reports:
        print_report(report)
    return 1 if any(report.failures for report in reports) else 0
