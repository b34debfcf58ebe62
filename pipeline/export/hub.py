"""Hub layout of a Legwork release: one dataset config per family, Parquet shards, a dataset card.

A release directory is exactly what ``huggingface_hub.upload_folder`` sends:

    README.md                                   dataset card: YAML front matter (configs, features,
                                                split sizes, licence) and the datasheet
    release.json                                what went in: run digests, task files, shard digests
    <config>/<split>-NNNNN-of-NNNNN.parquet     rows, sorted, in shards of at most ``shard_rows``

Configs: ``legs_linear`` and ``legs_dag`` (from ``legs.parquet`` of generate runs; a leg's variant
decides its config), and ``math``, ``math_derived``, ``atp``, ``os``, ``git`` (from the Parquet files
that ``python -m pipeline.tasks build`` writes), and ``trajectories`` (one golden chat per published
leg and math or ATP task, ``pipeline.export.trajectories``). Only configs with rows are written.

Same inputs give the same bytes: rows are sorted by a stable key, the writer options are fixed, and
nothing time- or machine-dependent (clock, local paths) enters a file.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from pipeline.acceptance import run_acceptance
from pipeline.cache import canonical_json, file_sha256
from pipeline.config import PROJECT_ROOT
from pipeline.export import load_legs
from pipeline.export.trajectories import CONFIG as TRAJECTORY_CONFIG
from pipeline.export.trajectories import SPLIT as TRAJECTORY_SPLIT
from pipeline.export.trajectories import TRAJECTORY_SCHEMA, Origin, storage_row, trajectory_rows
from pipeline.model import LEVELS, Leg, leg_summary
from pipeline.report.stats import blind_races, wide_stats, world_spread
from pipeline.tasks.common import TASK_SCHEMA
from pipeline.tasks.math.dataset import DERIVED_SCHEMA
from pipeline.usage import UserError

SHARD_ROWS = 500            # rows per Parquet shard (the hub viewer and partial downloads like small files)
ROW_GROUP_ROWS = 100        # rows per row group inside a shard
SPLIT = "test"              # every config is an evaluation set but ``trajectories`` (training data: ``train``)
LICENSE = "cc-by-sa-4.0"    # leg text comes from Wikipedia (CC BY-SA); the share-alike licence covers all
RELEASE_FORMAT = 1
TEMPLATE = "dataset_card.md.j2"

LEG_CONFIGS = {"linear": "legs_linear", "dag": "legs_dag"}
TASK_CONFIGS = ("math", "math_derived", "atp", "os", "git")
CONFIG_NAMES = (*LEG_CONFIGS.values(), *TASK_CONFIGS, TRAJECTORY_CONFIG)
ROW_MEANING = {
    "legs_linear": "a race leg whose stops form a chain",
    "legs_dag": "a race leg with diamonds (a stop forks into two tool branches that merge)",
    "math": "an algebra or geometry problem with a worked, tool-checked solution",
    "math_derived": "a process-level task derived from a math problem",
    "atp": "a theorem in one prover language (Coq, Lean 4 or Isabelle) with a golden proof",
    "os": "a shell task in the AgentBench OS format",
    "git": "a Learn Git Branching level (start tree, goal tree, golden commands)",
    "trajectories": "the golden solution of a leg or a math or ATP task as an OpenAI tool-calling chat",
}

# Flat, typed columns a consumer can filter on, then the nested JSON.
LEG_SCHEMA = pa.schema([
    pa.field("leg_id", pa.string(), nullable=False),
    pa.field("level", pa.string(), nullable=False),
    pa.field("variant", pa.string(), nullable=False),
    pa.field("n_stops", pa.int64(), nullable=False),
    pa.field("n_route_info", pa.int64(), nullable=False),
    pa.field("n_roadblocks", pa.int64(), nullable=False),
    pa.field("n_detours", pa.int64(), nullable=False),
    pa.field("n_diamonds", pa.int64(), nullable=False),
    pa.field("n_tool_calls", pa.int64(), nullable=False),
    pa.field("passcode", pa.int64(), nullable=False),
    pa.field("seed_url", pa.string(), nullable=False),
    pa.field("seed_title", pa.string(), nullable=False),
    pa.field("riddle", pa.string(), nullable=False),
    pa.field("step_budget", pa.int64(), nullable=False),
    pa.field("simulated_share", pa.float64(), nullable=False),
    pa.field("leg", pa.string(), nullable=False),            # canonical JSON of the leg without its trace
    pa.field("golden_trace", pa.string(), nullable=False),   # canonical JSON list of TraceEntry
])


def _task_schemas() -> tuple[pa.Schema, pa.Schema]:
    # The task columns stay as ``pipeline.tasks`` writes them, so ``python -m pipeline.tasks validate``
    # reads a downloaded config directly; ``n_tool_calls`` is added for filtering.
    return TASK_SCHEMA.append(pa.field("n_tool_calls", pa.int64(), nullable=False)), DERIVED_SCHEMA


class ReleaseError(UserError, ValueError):
    """The inputs cannot make one consistent release (missing files, conflicting rows)."""


@dataclass
class Shard:
    path: str          # relative to the release root, POSIX form
    rows: int
    bytes: int
    sha256: str


@dataclass
class ConfigData:
    name: str
    kind: str                                  # legs | tasks | derived | trajectories
    schema: pa.Schema
    rows: list[dict] = field(default_factory=list)
    provenance: Counter = field(default_factory=Counter)   # tool values by provenance, over golden traces
    split: str = SPLIT
    shards: list[Shard] = field(default_factory=list)
    table_bytes: int = 0                       # in-memory Arrow size (the card's num_bytes)

    @property
    def simulated(self) -> int:
        return self.provenance.get("simulated", 0)

    @property
    def tool_values(self) -> int:
        return sum(self.provenance.values())


@dataclass
class RunSource:
    """One generate run: its run.json and its accepted legs."""
    digest: str
    params: dict[str, Any]
    legs_sha256: str
    legs: list[Leg]
    snapshot: str | None = None  # the snapshot hash of run.json: agents race against tools serving it
    acceptance: dict[str, Any] | None = None  # the riddle-only solver's figures (pipeline.acceptance)


@dataclass
class TaskFile:
    name: str
    sha256: str
    rows: int
    families: list[str]


@dataclass
class TaskSource:
    files: list[TaskFile]


@dataclass
class Release:
    repo_id: str
    configs: dict[str, ConfigData]
    runs: list[RunSource]
    task_sets: list[TaskSource]
    left_out: dict[str, int] = field(default_factory=dict)   # rows not published, by config (unverified ATP)

    def manifest(self) -> dict[str, Any]:
        return {
            "format": RELEASE_FORMAT,
            "repo_id": self.repo_id,
            "license": LICENSE,
            "runs": [{"digest": r.digest, "params": r.params, "legs": len(r.legs), "legs_sha256": r.legs_sha256}
                     for r in self.runs],
            "task_sets": [{"files": [f.__dict__ for f in t.files]} for t in self.task_sets],
            "configs": {c.name: {"split": c.split, "rows": len(c.rows), "provenance": dict(sorted(c.provenance.items())),
                                 "shards": [s.__dict__ for s in c.shards]}
                        for c in self.configs.values()},
        }




# ---- legs ------------------------------------------------------------------------------------
def leg_record(leg: Leg) -> dict[str, Any]:
    """One hub row: the flat columns of LEG_SCHEMA (``model.leg_summary``), the leg without its
    trace, the golden trace."""
    if leg.passcode is None:
        raise ReleaseError(f"{leg.leg_id} has no passcode (not an accepted leg)")
    body = leg.to_dict()
    trace = body.pop("trace")
    row = {k: v for k, v in leg_summary(leg).items() if k in LEG_SCHEMA.names}
    row["simulated_share"] = row["simulated_share"] or 0.0
    return {**row, "leg": canonical_json(body), "golden_trace": canonical_json(trace)}


def read_run(run_dir: Path) -> RunSource:
    run_dir = Path(run_dir)
    legs_path = run_dir / "legs.parquet" if run_dir.is_dir() else run_dir
    if not legs_path.is_file():
        raise ReleaseError(f"no legs.parquet at {run_dir}")
    run_json = legs_path.parent / "run.json"
    info = json.loads(run_json.read_text()) if run_json.is_file() else {}
    return RunSource(digest=info.get("digest", "unknown"), params=info.get("params", {}),
                     legs_sha256=file_sha256(legs_path), legs=load_legs(legs_path), snapshot=info.get("snapshot"),
                     acceptance=run_acceptance(legs_path))


def _add_unique(seen: dict[str, dict], key: str, row: dict, what: str) -> None:
    """The same row from two inputs is kept once; two different rows with one id are an error."""
    if key in seen:
        if seen[key] != row:
            raise ReleaseError(f"{what} {key} occurs twice with different content")
        return
    seen[key] = row


# ---- tasks -----------------------------------------------------------------------------------
def _trace_provenance(trace_json: str) -> Counter:
    steps = json.loads(trace_json).get("steps", [])
    return Counter(s.get("provenance") or "none" for s in steps)


def read_task_dir(task_dir: Path, origins: dict[str, str] | None = None) -> tuple[TaskSource, dict[str, list[dict]]]:
    """Task rows of every Parquet file in ``task_dir``, by config (family, or ``math_derived``).
    ``origins``, when given, gets ``tasks:<file>@<sha256[:16]>`` for every task id."""
    task_schema, derived_schema = _task_schemas()
    task_dir = Path(task_dir)
    if not task_dir.is_dir():
        raise ReleaseError(f"no task directory at {task_dir}")
    by_config: dict[str, list[dict]] = {}
    files = []
    base_names = [f.name for f in task_schema if f.name != "n_tool_calls"]
    for path in sorted(task_dir.glob("*.parquet")):
        names = pq.read_schema(path).names
        if all(n in names for n in base_names):
            rows = pq.read_table(path, columns=base_names).to_pylist()
            tag = f"tasks:{path.name}@{file_sha256(path)[:16]}"
            for r in rows:
                if origins is not None:
                    origins.setdefault(r["task_id"], tag)
                if r["family"] not in TASK_CONFIGS:
                    raise ReleaseError(f"{path.name}: unknown task family {r['family']!r}")
                r["n_tool_calls"] = len(json.loads(r["trace_json"]).get("steps", []))
                by_config.setdefault(r["family"], []).append(r)
            families = sorted({r["family"] for r in rows})
        elif all(n in names for n in derived_schema.names):
            rows = pq.read_table(path, columns=derived_schema.names).to_pylist()
            by_config.setdefault("math_derived", []).extend(rows)
            families = ["math_derived"]
        else:
            continue        # not a task table (e.g. a report); not part of a release
        files.append(TaskFile(path.name, file_sha256(path), len(rows), families))
    if not files:
        raise ReleaseError(f"no task Parquet files in {task_dir} (expected the output of pipeline.tasks build)")
    return TaskSource(files), by_config


# ---- assembling ------------------------------------------------------------------------------
def unverified(row: dict) -> bool:
    """An ATP row no prover accepted (Lean 4 / Isabelle without a toolchain: structural checks only)."""
    return row["family"] == "atp" and not json.loads(row["metadata_json"]).get("verified", False)


def assemble(repo_id: str, legs_dirs: list[Path], task_dirs: list[Path] = (),
             include_unverified: bool = False) -> Release:
    """Read every input and group its rows into configs (no files written). ATP rows no prover
    verified are left out (counted in ``Release.left_out``) unless ``include_unverified``."""
    task_schema, derived_schema = _task_schemas()
    runs: list[RunSource] = []
    for p in legs_dirs:           # the same run given twice is one run
        run = read_run(p)
        if all((r.digest, r.legs_sha256) != (run.digest, run.legs_sha256) for r in runs):
            runs.append(run)
    legs_seen: dict[str, dict[str, dict]] = {c: {} for c in LEG_CONFIGS.values()}
    traces: dict[str, Leg] = {}
    for run in runs:
        for leg in run.legs:
            if leg.variant not in LEG_CONFIGS:
                raise ReleaseError(f"{leg.leg_id}: unknown variant {leg.variant!r}")
            _add_unique(legs_seen[LEG_CONFIGS[leg.variant]], leg.leg_id, leg_record(leg), "leg")
            traces[leg.leg_id] = leg
    task_sets, tasks_seen, left_out, task_origins = [], {c: {} for c in TASK_CONFIGS}, Counter(), {}
    for d in task_dirs:
        source, by_config = read_task_dir(d, task_origins)
        task_sets.append(source)
        for name, rows in by_config.items():
            key = "derived_id" if name == "math_derived" else "task_id"
            for r in rows:
                if not include_unverified and name != "math_derived" and unverified(r):
                    left_out[name] += 1
                    continue
                _add_unique(tasks_seen[name], r[key], r, "task")

    configs: dict[str, ConfigData] = {}
    level_rank = {lv: i for i, lv in enumerate(LEVELS)}
    for name, seen in legs_seen.items():
        if not seen:
            continue
        rows = sorted(seen.values(), key=lambda r: (level_rank.get(r["level"], len(LEVELS)), r["leg_id"]))
        prov = Counter(t.provenance or "none" for r in rows for t in traces[r["leg_id"]].trace)
        configs[name] = ConfigData(name, "legs", LEG_SCHEMA, rows, prov)
    for name in TASK_CONFIGS:
        seen = tasks_seen[name]
        if not seen:
            continue
        if name == "math_derived":
            configs[name] = ConfigData(name, "derived", derived_schema, [seen[k] for k in sorted(seen)])
        else:
            rows = [seen[k] for k in sorted(seen)]
            prov = sum((_trace_provenance(r["trace_json"]) for r in rows), Counter())
            configs[name] = ConfigData(name, "tasks", task_schema, rows, prov)
    # the golden chats of what is published (the same legs and tasks, unverified ATP rows left out alike)
    run_of = {leg.leg_id: Origin(f"run:{run.digest}", run.snapshot) for run in runs for leg in run.legs}
    chats, _ = trajectory_rows(
        [(traces[r["leg_id"]], run_of[r["leg_id"]]) for c in configs.values() if c.kind == "legs" for r in c.rows],
        [(r, Origin(task_origins.get(r["task_id"]))) for c in configs.values() if c.kind == "tasks" for r in c.rows])
    if chats:
        prov = Counter(p for r in chats for p in r["metadata"]["tool_provenance"])
        configs[TRAJECTORY_CONFIG] = ConfigData(TRAJECTORY_CONFIG, "trajectories", TRAJECTORY_SCHEMA,
                                                [storage_row(r) for r in chats], prov, split=TRAJECTORY_SPLIT)
    if not configs:
        raise ReleaseError("nothing to publish: no legs and no tasks in the inputs")
    return Release(repo_id, configs, runs, task_sets, dict(left_out))


# ---- writing ---------------------------------------------------------------------------------
def shard_name(split: str, index: int, total: int) -> str:
    return f"{split}-{index:05d}-of-{total:05d}.parquet"


def _storage_type(t: pa.DataType) -> pa.DataType:
    if isinstance(t, pa.JsonType):
        return t.storage_type
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_storage_type(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_storage_type(f.type)) for f in t])
    return t


def storage_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every JSON extension type replaced by its storage (a string of JSON text)."""
    return pa.schema([f.with_type(_storage_type(f.type)) for f in schema], metadata=schema.metadata)


def write_shards(config: ConfigData, root: Path, shard_rows: int = SHARD_ROWS) -> list[Shard]:
    """Write ``config``'s rows as ``<config>/<split>-NNNNN-of-NNNNN.parquet`` with fixed writer options."""
    if shard_rows < 1:
        raise ValueError("shard_rows must be at least 1")
    folder = Path(root) / config.name
    folder.mkdir(parents=True, exist_ok=True)
    # JSON columns (``pa.json_()``) are built from their JSON text, then typed
    table = pa.Table.from_pylist(config.rows, schema=storage_schema(config.schema)).cast(config.schema)
    config.table_bytes = table.nbytes
    total = max(1, -(-table.num_rows // shard_rows))
    shards = []
    for i in range(total):
        part = table.slice(i * shard_rows, shard_rows)
        path = folder / shard_name(config.split, i, total)
        pq.write_table(part, path, compression="zstd", compression_level=3, use_dictionary=True,
                       write_statistics=True, row_group_size=ROW_GROUP_ROWS, data_page_version="1.0")
        shards.append(Shard(path.relative_to(root).as_posix(), part.num_rows, path.stat().st_size, file_sha256(path)))
    config.shards = shards
    return shards


_DTYPES = {pa.string(): "string", pa.int64(): "int64", pa.float64(): "float64", pa.bool_(): "bool"}


def features_yaml(schema: pa.Schema) -> list[dict[str, Any]]:
    """The card's ``dataset_info.features`` (the hub's YAML form of ``datasets.Features``); nested
    columns (lists, structs) in the form ``datasets`` itself writes."""
    if any(pa.types.is_nested(f.type) for f in schema):
        import datasets
        return datasets.Features.from_arrow_schema(schema)._to_yaml_list()
    out = []
    for f in schema:
        if f.type not in _DTYPES:
            raise ReleaseError(f"column {f.name} has type {f.type}, which the card cannot describe")
        out.append({"name": f.name, "dtype": _DTYPES[f.type]})
    return out


def size_category(n: int) -> str:
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < bound:
            return label
    return "1M<n<10M"


def front_matter(release: Release) -> dict[str, Any]:
    configs = list(release.configs.values())
    return {
        "license": LICENSE,
        "language": ["en"],
        "pretty_name": "Legwork: race legs and agent task sets",
        "task_categories": ["question-answering", "text-generation"],
        "tags": ["agents", "tool-use", "benchmark", "evaluation", "synthetic", "wikipedia", "multi-hop",
                 "golden-traces"],
        "size_categories": [size_category(sum(len(c.rows) for c in configs))],
        "configs": [{"config_name": c.name, "data_files": [{"split": c.split, "path": f"{c.name}/{c.split}-*"}]}
                    for c in configs],
        "dataset_info": [{
            "config_name": c.name,
            "features": features_yaml(c.schema),
            "splits": [{"name": c.split, "num_bytes": c.table_bytes, "num_examples": len(c.rows)}],
            "download_size": sum(s.bytes for s in c.shards),
            "dataset_size": c.table_bytes,
        } for c in configs],
    }


def render_card(release: Release, templates_dir: Path) -> str:

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    meta = yaml.safe_dump(front_matter(release), sort_keys=False, allow_unicode=True, width=1000,
                          default_flow_style=False)
    configs = list(release.configs.values())
    leg_levels = {name: dict(sorted(Counter(r["level"] for r in c.rows).items(),
                                    key=lambda kv: LEVELS.index(kv[0]) if kv[0] in LEVELS else 99))
                  for name, c in release.configs.items() if c.kind == "legs"}
    spread = world_spread([leg for run in release.runs for leg in run.legs]) if release.runs else []
    return env.get_template(TEMPLATE).render(
        front_matter=meta, repo_id=release.repo_id, configs=configs, runs=release.runs, spread=spread,
        task_sets=release.task_sets, leg_levels=leg_levels, license=LICENSE,
        has_legs=any(c.kind == "legs" for c in configs), row_meaning=ROW_MEANING, shares=shares,
        task_families=[c.name for c in configs if c.kind in ("tasks", "derived")],
        trajectories=release.configs.get(TRAJECTORY_CONFIG),
        blind=blind_races(PROJECT_ROOT / "benchmarks" / "blind_race") if release.runs else [],
        wide=wide_stats([leg for run in release.runs for leg in run.legs]) if release.runs else [],
    )


def write_release(release: Release, out_dir: Path, templates_dir: Path, shard_rows: int = SHARD_ROWS) -> list[Path]:
    """Write shards, release.json and README.md under ``out_dir``; return every file written, sorted.

    ``out_dir`` must be empty or absent: a stale shard left from an earlier release would be picked
    up by the card's ``<config>/<split>-*`` patterns.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise ReleaseError(f"{out_dir} is not empty; choose an empty or new directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    for config in release.configs.values():
        write_shards(config, out_dir, shard_rows)
    (out_dir / "release.json").write_text(json.dumps(release.manifest(), indent=2, sort_keys=True) + "\n",
                                          encoding="utf-8")
    (out_dir / "README.md").write_text(render_card(release, templates_dir), encoding="utf-8")
    return sorted(p for p in out_dir.rglob("*") if p.is_file())


def shares(config: ConfigData) -> list[tuple[str, int, float]]:
    """(provenance, count, share) rows of a config, most frequent first (for the card)."""
    total = config.tool_values
    return [(k, v, v / total if total else 0.0) for k, v in sorted(config.provenance.items(), key=lambda kv: (-kv[1], kv[0]))]
