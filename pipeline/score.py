"""``python -m pipeline.score --legs DATASET --runs RUNS_DIR [--judge golden|llm] [--out report.json]``

Scores every trial under RUNS_DIR against its leg (definitions: docs/SCORING.md), prints a
table by agent, variant and level, and with ``--out`` writes the report (aggregates, tool utility)
plus the per-trial scores next to it as ``<out stem>.trials.jsonl`` and ``<out stem>.trials.parquet``.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from pipeline.cache import CallCache
from pipeline.config import load_settings
from pipeline.export import load_legs
from pipeline.scoring.judges import make_judge
from pipeline.scoring.metrics import TrialScore, aggregate, score_trials
from pipeline.scoring.tasks import main as score_tasks
from pipeline.scoring.trials import load_trials
from pipeline.snapshot.store import SnapshotStore
from pipeline.usage import UserError, run_cli


def _resolver(snapshot: str | None) -> Callable | None:
    """How a fetched title or URL is read as a page (its redirects followed): through ``snapshot``, by
    default the configured world (``LEGWORK_SNAPSHOT`` or the embedded one), the world ``pipeline.tools``
    serves a racer; ``none``: as written. A racer who fetched "Levumodwick City" got the page
    Levumodwick, which the tool's answer names, and was scored as not having visited it (blind race 48,
    R11: PVR 7 of 8)."""
    if snapshot == "none":
        return None
    path = Path(snapshot) if snapshot else load_settings().snapshot_dir
    if not snapshot and not (path / "pages.sqlite").is_file():   # no world here: titles as written
        return None
    return SnapshotStore.open(path).resolve


def write_trials(scores: list[TrialScore], out: Path) -> tuple[Path, Path]:

    jsonl = out.with_name(out.stem + ".trials.jsonl")
    parquet = out.with_name(out.stem + ".trials.parquet")
    rows = [s.to_dict() for s in scores]
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    flat = [{**{k: v for k, v in r.items() if k not in ("judgments", "wide")}, "judgments_json": json.dumps(r["judgments"]),
             "wide_json": json.dumps(r["wide"])} for r in rows]
    schema = pa.schema([
        ("trial_id", pa.string()), ("leg_id", pa.string()), ("agent", pa.string()), ("variant", pa.string()),
        ("level", pa.string()), ("answer", pa.string()), ("passcode", pa.int64()), ("fa", pa.int64()),
        ("pvr", pa.float64()), ("rcr", pa.float64()), ("intermediate", pa.float64()), ("steps", pa.int64()),
        ("budget", pa.int64()), ("step_limit_hit", pa.bool_()), ("n_calls", pa.int64()),
        ("useful_calls", pa.int64()), ("eta", pa.float64()), ("tokens", pa.int64()), ("wall_time_s", pa.float64()),
        ("error_class", pa.string()), ("shortcut", pa.bool_()), ("near_miss", pa.bool_()),
        ("invalid_reason", pa.string()), ("judgments_json", pa.string()),
        ("wide_json", pa.string()), ("wide_recall", pa.float64()), ("wide_precision", pa.float64()),
    ])
    pq.write_table(pa.Table.from_pylist(flat, schema=schema), parquet)
    return jsonl, parquet


def _fmt(x: Any, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.1f}" if pct else f"{x:.2f}"


def print_table(report: dict) -> None:

    t = Table(title="Legwork race scores (FA, PVR, RCR, errors in %)")
    for col in ("agent", "variant", "level", "n", "FA", "PVR", "RCR", "inter", "nav err", "tool err", "comp err",
                "invalid", "eta", "steps", "limit", "wide R", "wide P"):
        t.add_column(col, justify="left" if col in ("agent", "variant", "level") else "right")
    rows = report["groups"] + [{"agent": "all", "variant": "", "level": "", **report["overall"]}]
    for g in rows:
        e = g["errors"]
        t.add_row(g["agent"], g["variant"], g["level"], str(g["n"]), _fmt(g["fa"], True), _fmt(g["pvr"], True),
                  _fmt(g["rcr"], True), _fmt(g["intermediate"], True), _fmt(e["navigation"], True),
                  _fmt(e["tool_use"], True), _fmt(e["computation"], True), _fmt(e["invalid"], True),
                  _fmt(g["eta"]), _fmt(g["steps"]), _fmt(g["step_limit_rate"], True),
                  _fmt(g.get("wide_recall"), True), _fmt(g.get("wide_precision"), True))
    Console(width=None if sys.stdout.isatty() else 170).print(t)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.score", description=__doc__.split("\n\n")[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--legs", help="legs.parquet, a directory holding it, or a directory of AAR JSON")
    source.add_argument("--tasks", help="a task-set directory: score task-set trials (pipeline.scoring.tasks)")
    ap.add_argument("--runs", required=True, help="trial directories, JSONL records, Harbor trials or ATIF files")
    ap.add_argument("--judge", choices=("golden", "llm"), default="golden")
    ap.add_argument("--snapshot", help="snapshot directory whose redirect table resolves fetched titles and URLs "
                    "(default: the configured one, LEGWORK_SNAPSHOT or the embedded world; 'none': as written)")
    ap.add_argument("--llm-base-url")
    ap.add_argument("--llm-model")
    ap.add_argument("--out", help="report JSON path (without it: the table only)")
    a = ap.parse_args(argv)
    if a.tasks:
        return score_tasks(a.tasks, a.runs, a.out)


    legs = load_legs(a.legs)            # a missing dataset or runs folder: one line (pipeline.usage.run_cli)
    trials = load_trials(a.runs)
    if not trials:   # a table of nothing, exit 0, would read as a scored race
        raise UserError(f"no trials in {a.runs} (race the legs with python -m pipeline.race --legs {a.legs})")
    resolve = _resolver(a.snapshot)
    settings = cache = None
    if a.judge == "llm":
        settings = load_settings(llm_base_url=a.llm_base_url, llm_model=a.llm_model)
        cache = CallCache(settings.cache_path)
    judge = make_judge(a.judge, resolve=resolve, settings=settings, cache=cache)
    scores = score_trials(legs, trials, judge, resolve)
    report = {"legs": str(a.legs), "runs": str(a.runs), "judge": a.judge, "n_legs": len(legs), **aggregate(scores),
              "invalid_trials": [{"trial_id": s.trial_id, "reason": s.invalid_reason} for s in scores
                                 if s.error_class == "invalid"]}
    print_table(report)
    for bad in report["invalid_trials"]:
        print(f"invalid trial {bad['trial_id']}: {bad['reason']}", file=sys.stderr)
    if a.out is None:
        return 0
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    jsonl, parquet = write_trials(scores, out)
    print(f"report: {out}; per trial: {jsonl}, {parquet}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m pipeline.score"))
