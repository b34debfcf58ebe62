"""What every task family shares: the row schema, the golden trace, Parquet I/O and the CLI.

A family is a package ``pipeline.tasks.<name>`` that exposes two functions:

    build(count: int | None, seed: int, out_dir: Path, toolbox: Toolbox) -> Report
        generate, verify and write the family's Parquet file(s) into ``out_dir``
        (use ``write_task_table``; only verified tasks are written);
    validate(rows: list[dict], toolbox: Toolbox) -> Report
        re-verify rows read back from ``out_dir`` (``toolbox`` replays from the cache).

``python -m pipeline.tasks validate DIR`` reads every ``*.parquet`` file in DIR whose schema
holds the task columns, groups the rows by ``family`` and hands each group to its family.

``--count`` means the same in every family: the number of tasks (rows) to write, spread evenly
over the family's *cells* (its natural grid: math template x level, atp topic x language, os task
kind, git level kind; ``spread``). Each cell draws its candidates from its own seeded stream,
distinct across the whole set (``Candidates``); a cell whose space is used up gives the rest of its
share to the others (``plan_counts``, ``fill_cells``). A count the family cannot reach raises
``CountTooLarge`` before anything is written, and the CLI says the most it can make (exit 2).
"""
from __future__ import annotations

import argparse
import hashlib
import heapq
import importlib
import json
import random
import sys
import tempfile
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from pipeline.cache import CallCache, ReplayMiss, canonical_json
from pipeline.config import load_settings
from pipeline.model import SERVED_AS, TraceEntry
from pipeline.tools.registry import Toolbox
from pipeline.usage import UserError

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


class NoTaskRows(UserError):
    """A folder given as a task set holds no task rows (a wrong path, or a folder of something else)."""

    def __init__(self, path):
        super().__init__(f"no task rows in {path} (build a task set with python -m pipeline.tasks build)")


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


# ---- one meaning of --count ------------------------------------------------------------------
class CountTooLarge(Exception):
    """The family cannot make ``asked`` tasks for this seed; ``most`` is how many it can make.
    Raised before anything is written."""

    def __init__(self, family: str, asked: int, most: int, why: str = ""):
        self.family, self.asked, self.most = family, asked, most
        super().__init__(f"{family}: cannot make {asked} tasks for this seed; the most it can make is {most}"
                         + (f" ({why})" if why else ""))


class Shortfall(Exception):
    """Every cell is used up before the count is reached; ``made`` is how many there are (candidates,
    or accepted results when ``rejected`` candidates failed their checks)."""

    def __init__(self, made: int, rejected: int = 0):
        self.made, self.rejected = made, rejected
        super().__init__(f"only {made} tasks")


def cell_rng(seed: int, *coords) -> random.Random:
    """An independent random stream per cell (sha256 of the seed and the cell's coordinates)."""
    digest = hashlib.sha256("/".join(map(str, (seed, *coords))).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def spread(total: int, cells: Sequence[Hashable]) -> dict[Hashable, int]:
    """``total`` split evenly over ``cells``; the first ``total % len(cells)`` cells (in order) get one more."""
    base, extra = divmod(total, len(cells))
    return {c: base + (i < extra) for i, c in enumerate(cells)}


def _level_up(target: dict[Hashable, int], cells: Sequence[Hashable], amount: int) -> None:
    """Give ``amount`` more tasks to ``cells``, one at a time to the cell with the fewest (the earliest
    on ties): water filling, so the shares stay as even as the cells' sizes allow."""
    heap = [(target[c], i, c) for i, c in enumerate(cells)]
    heapq.heapify(heap)
    for _ in range(amount):
        n, i, c = heapq.heappop(heap)
        target[c] = n + 1
        heapq.heappush(heap, (n + 1, i, c))


def plan_counts(count: int, cells: Sequence[Hashable], available: Callable[[Hashable, int], int]) -> dict[Hashable, int]:
    """How many tasks each cell gives: an even share (``spread``); a cell that has fewer than its share
    (``available(cell, n)`` is min(n, what the cell has)) gives what it has, and the rest goes to the
    cells that still have more, fewest first (``_level_up``). Raises ``Shortfall`` when every cell is
    used up."""
    target = spread(count, cells)
    closed: set[Hashable] = set()
    while True:
        short = 0
        for c in cells:
            if c in closed:
                continue
            have = available(c, target[c])
            if have < target[c]:
                short += target[c] - have
                target[c] = have
                closed.add(c)
        if not short:
            return target
        still_open = [c for c in cells if c not in closed]
        if not still_open:
            raise Shortfall(sum(target.values()))
        _level_up(target, still_open, short)


class Candidates:
    """The candidates of every cell, drawn lazily from the cell's own stream and kept in draw order.

    ``draw(source)`` yields ``(keys, item)`` per draw and ends when the source's space is used up (or
    after the family's draw limit); a draw sharing any key (e.g. its prompt) with an earlier candidate
    of any cell is skipped, so candidates are distinct across the whole set (sampling without
    replacement). Several cells may share one source (``source_of``: e.g. the three languages of an
    ATP topic), each taking the source's candidates from the first."""

    def __init__(self, draw: Callable[[Hashable], Iterator[tuple[Iterable[Hashable], Any]]],
                 source_of: Callable[[Hashable], Hashable] | None = None):
        self._draw = draw
        self._source_of = source_of or (lambda cell: cell)
        self._streams: dict[Hashable, Iterator] = {}
        self.lists: dict[Hashable, list] = {}
        self.used_up: set[Hashable] = set()
        self.seen: set[Hashable] = set()

    def ensure(self, cell: Hashable, n: int) -> int:
        """Draw until ``cell`` has ``n`` candidates or its space is used up; min(n, candidates)."""
        source = self._source_of(cell)
        found = self.lists.setdefault(source, [])
        while len(found) < n and source not in self.used_up:
            stream = self._streams.setdefault(source, self._draw(source))
            try:
                keys, item = next(stream)
            except StopIteration:
                self.used_up.add(source)
                break
            keys = tuple(keys)
            if any(k in self.seen for k in keys):
                continue
            self.seen.update(keys)
            found.append(item)
        return min(n, len(found))

    def get(self, cell: Hashable, position: int) -> Any:
        return self.lists[self._source_of(cell)][position]


def fill_cells(count: int, cells: Sequence[Hashable], pool: Candidates,
               check: Callable[[list[tuple[Hashable, int, Any]]], list[Any]]) -> dict[Hashable, list]:
    """Exactly ``count`` accepted results, spread over ``cells`` as ``plan_counts`` says.

    ``check(batch)`` gets ``(cell, position, candidate)`` triples (position: the candidate's index in
    its cell) and returns a result per triple, None for a rejected candidate (it may check them in
    parallel). A rejected candidate is replaced by the cell's next one; a cell whose candidates run
    out gives the rest of its share to the cells that have more. The count is checked against the
    candidates first (``Shortfall`` before any ``check``); a ``Shortfall`` later means too many
    candidates were rejected. Deterministic when ``draw`` and ``check`` are."""
    target = plan_counts(count, cells, pool.ensure)
    made: dict[Hashable, list] = {c: [] for c in cells}
    pos = dict.fromkeys(cells, 0)
    closed: set[Hashable] = set()
    rejected = 0
    while True:
        batch = []
        for c in cells:
            need = target[c] - len(made[c])
            if need > 0:
                have = pool.ensure(c, pos[c] + need)
                batch += [(c, p, pool.get(c, p)) for p in range(pos[c], have)]
                pos[c] = max(pos[c], have)
        if batch:
            results = check(batch)
            if len(results) != len(batch):
                raise ValueError("check must return one result per candidate")
            for (c, _p, _item), result in zip(batch, results):
                if result is not None:
                    made[c].append(result)
                else:
                    rejected += 1
            continue
        short = {c: target[c] - len(made[c]) for c in cells if len(made[c]) < target[c]}
        if not short:
            return made
        for c in short:
            target[c] = len(made[c])
            closed.add(c)
        still_open = [c for c in cells if c not in closed and pool.ensure(c, pos[c] + 1) > pos[c]]
        if not still_open:
            raise Shortfall(sum(len(v) for v in made.values()), rejected)
        _level_up(target, still_open, sum(short.values()))


def fill_or_refuse(family: str, count: int, cells: Sequence[Hashable], pool: Candidates, check,
                   space: str) -> dict[Hashable, list]:
    """``fill_cells``, a shortfall turned into ``CountTooLarge`` (``space`` says where the limit comes from)."""
    try:
        return fill_cells(count, cells, pool, check)
    except Shortfall as exc:
        if exc.rejected:
            space += f", less the {exc.rejected} candidates that failed their checks"
        raise CountTooLarge(family, count, exc.made, space) from None


def duplicate_prompts(rows: list[dict]) -> list[Failure]:
    """One failure per row whose prompt an earlier row (in task-id order) already has."""
    first: dict[str, str] = {}
    failures = []
    for r in sorted(rows, key=lambda r: r["task_id"]):
        if r["prompt"] in first:
            failures.append(Failure(r["task_id"], f"same prompt as {first[r['prompt']]}"))
        else:
            first[r["prompt"]] = r["task_id"]
    return failures


def family_module(name: str):
    if name not in FAMILIES:
        raise SystemExit(f"unknown task family {name!r}; choose one of {', '.join(FAMILIES)}")
    return importlib.import_module(f"pipeline.tasks.{name}")


def print_report(report: Report) -> None:

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
    if replay:
        settings = settings.with_overrides(default_backend="replay", backends={})
    return Toolbox(settings)


def build_task_set(family: str, count: int | None, seed: int, out_dir: Path, settings) -> Report:
    """Generate, verify and write one family's task set (``count`` None: the family's default size)."""
    return family_module(family).build(count, seed, Path(out_dir), _toolbox(settings, replay=False))


def validate_task_set(task_dir: Path, settings, from_cache: bool = False) -> list[Report]:
    """Re-verify every task of a folder; one report per family found (none when the folder holds no
    task rows). Golden tool calls are executed again offline over a throwaway cache and compared with
    the trace, so a set validates anywhere (a downloaded release, another machine); ``from_cache``
    replays them from the build's cache instead (what the build recorded, not a recomputation)."""

    rows = read_task_rows(task_dir)
    reports = []
    with tempfile.TemporaryDirectory(prefix="legwork-task-validate-") as scratch:
        if from_cache:
            toolbox = _toolbox(settings, replay=True)
        else:
            toolbox = Toolbox(settings.with_overrides(default_backend="offline", backends={}),
                              cache=CallCache(Path(scratch) / "calls.sqlite"))
        try:
            for name in sorted({r["family"] for r in rows}):
                mine = [r for r in rows if r["family"] == name]
                report = family_module(name).validate(mine, toolbox)
                report.failures.extend(duplicate_prompts(mine))
                reports.append(report)
        finally:
            if toolbox.cache is not None:
                toolbox.cache.close()
    return reports


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.tasks",
                                     description="Build or validate a task set (math, atp, os, git) with verified golden traces.")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="generate, verify and write a task set")
    b.add_argument("--family", required=True, choices=FAMILIES)
    b.add_argument("--count", type=_positive, default=None, metavar="N",
                   help="number of tasks (rows) to write, spread evenly over the family's cells: math 27 "
                        "templates x 5 levels, atp 7 topics x 3 languages, os 40 task kinds, git 9 level kinds; "
                        "a cell whose space is used up gives its share to the others (default: math 500, "
                        "atp 120, os 60, git 40). A count the family cannot reach is refused before anything "
                        "is written, with the most it can make (exit 2)")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--out", required=True, type=Path)
    b.add_argument("--cache", default=None, help="record/replay cache file (default: settings)")
    v = sub.add_parser("validate", help="re-verify every task in a directory (golden tool calls executed again "
                                        "offline and compared with the trace; no build cache needed)")
    v.add_argument("dir", type=Path)
    v.add_argument("--from-cache", action="store_true",
                   help="replay the golden tool calls from the build's cache instead of executing them again")
    v.add_argument("--cache", default=None, help="record/replay cache file for --from-cache (default: settings)")
    args = parser.parse_args(argv)

    settings = load_settings(**({"cache_path": Path(args.cache)} if args.cache else {}))
    if args.command == "build":
        try:
            report = build_task_set(args.family, args.count, args.seed, args.out, settings)
        except CountTooLarge as exc:
            print(f"error: {exc}; nothing was written", file=sys.stderr)
            return 2
        print_report(report)
        return 1 if report.failures else 0

    reports = validate_task_set(args.dir, settings, from_cache=args.from_cache)
    if not reports:
        print(f"error: no task rows found in {args.dir}", file=sys.stderr)
        return 1
    for report in reports:
        print_report(report)
    return 1 if any(report.failures for report in reports) else 0
