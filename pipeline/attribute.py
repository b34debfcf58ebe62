"""Which module makes an agent win: ``python -m pipeline.attribute`` (CapaBench's Shapley attribution).

    python -m pipeline.attribute (--tasks DIR | --legs DATASET) --default MODEL[@URL][#t=T]
        --test MODEL[@URL][#t=T] [--test ...] [--default2 MODEL[@URL][#t=T]] --out DIR
        [--limit N] [--concurrency N] [--permutations N] [--resamples 1000] [--confidence 0.95]
        [--max-steps N] [--max-tokens N] [--trial-tokens N] [--timeout-s S]

For every (default, test) pair it races the modular agent (``pipeline.agents.modular``) in all 16
configurations S (the modules the test model drives) on the same tasks, through the race runners
(resumable: a re-run skips finished trials; the all-default configuration is run once for all test
models). v(S) = success rate: task sets, the race's judged success (a task is kept only when it is
judged in every configuration; the others are listed under ``dropped``); legs, finish-line accuracy
(FA). Per pair: exact Shapley values with bootstrap intervals over tasks, Banzhaf values beside them,
the best measured configuration and the one the Shapley values predict (test model on the modules
with a positive value) with its predicted (additive) and measured success
(``pipeline.scoring.attribution``). ``--permutations N`` uses the sampled path instead (Monte-Carlo
permutations, configurations run on demand; their number is reported). With ``--default2``, every
test model is also measured under the second default, and CapaBench's ranking consistency per module
is reported (``pipeline.scoring.attribution.ranking_consistency``).

Writes ``DIR/attribution.json``, ``DIR/trials.parquet`` (one row per trial of every configuration),
``DIR/report/index.html`` (a table per test model, a bar per module with its interval) and the trials
under ``DIR/runs/``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from pipeline.agents.modular import (
    LETTERS,
    ROLES,
    ModelSpec,
    config_tag,
    make_agent,
    modules_for,
)
from pipeline.agents.runtime import race
from pipeline.agents.tasks import race_task_set
from pipeline.agents.trial import Budget
from pipeline.config import load_settings
from pipeline.export import load_legs
from pipeline.report.render import environment
from pipeline.scoring.attribution import Attribution, all_subsets, attribute, ranking_consistency
from pipeline.scoring.metrics import final_answer_correct
from pipeline.tasks.common import FAMILIES, NoTaskRows, read_task_rows
from pipeline.tools.registry import Toolbox
from pipeline.usage import run_cli

TRIAL_COLUMNS = ("default", "test", "config", "test_modules", "label", "item_id", "family", "success", "judged",
                 "answer", "steps", "tokens", "wall_time_s", "stop_reason", "reflections", "module_calls_json",
                 "module_tokens_json", "trial_dir")


def tag_of(s: frozenset) -> str:
    return config_tag(modules_for(s))


def letters_of(s) -> str:
    return ",".join(LETTERS[r] for r in ROLES if r in s) or "-"


class Runner:
    """Runs one configuration of the modular agent on every item and returns its trial records."""

    def __init__(self, a, settings, out: Path):
        self.a, self.settings, self.runs = a, settings, out / "runs"
        self.toolbox = Toolbox(settings)
        self.kind = "tasks" if a.tasks else "legs"
        self.client_options = {"timeout_s": a.request_timeout_s, "max_attempts": a.max_retries + 1,
                               "max_tokens": a.max_tokens}
        if self.kind == "legs":
            legs = load_legs(a.legs)
            self.legs = legs[: a.limit] if a.limit else legs
            self.items = [leg.leg_id for leg in self.legs]
        else:
            rows = [r for r in read_task_rows(Path(a.tasks)) if r["family"] in FAMILIES]
            if not rows:   # a wrong path is the user's, not 16 configurations of 0 tasks each
                raise NoTaskRows(a.tasks)
            self.rows = rows[: a.limit] if a.limit else rows
            self.items = [r["task_id"] for r in self.rows]

    def run(self, default: ModelSpec, test: ModelSpec, s: frozenset) -> list[dict]:
        agent = make_agent(self.settings, self.toolbox.cache, modules_for(s), default, test,
                           max_steps=self.a.max_steps, **self.client_options)
        if self.kind == "legs":
            budget = Budget(timeout_s=self.a.timeout_s, max_tokens=self.a.max_tokens, trial_tokens=self.a.trial_tokens)
            dirs, _ = asyncio.run(race(self.legs, "modular", self.runs, toolbox=self.toolbox, seed=self.a.seed,
                                       client=agent, budget=budget, concurrency=self.a.concurrency))
        else:
            dirs = race_task_set(Path(self.a.tasks), "modular", self.runs, settings=self.settings, limit=self.a.limit,
                                 seed=self.a.seed, client=agent, timeout_s=self.a.timeout_s,
                                 max_tokens=self.a.max_tokens, workers=self.a.concurrency,
                                 trial_tokens=self.a.trial_tokens).trials
        return [self.record(d) for d in dirs]

    def record(self, d: Path) -> dict:
        rec = json.loads((d / "trial.json").read_text(encoding="utf-8"))
        if self.kind == "legs":
            leg = next(leg for leg in self.legs if leg.leg_id == rec["leg_id"])
            rec.update(item_id=rec["leg_id"], family="legs", judged=True,
                       success=bool(final_answer_correct(rec.get("answer"), leg.passcode)))
        else:
            rec["item_id"] = rec["task_id"]
        rec["trial_dir"] = str(d.relative_to(self.runs.parent))
        return rec


def attribute_pair(runner: Runner, default: ModelSpec, test: ModelSpec, *, permutations: int | None,
                   resamples: int, confidence: float, seed: int, trials: list[dict]) -> tuple[Attribution, dict]:
    """All configurations of one (default, test) pair (or those the sampler asks for), attributed."""
    records: dict[frozenset, list[dict]] = {}
    start = time.monotonic()

    def run(s: frozenset) -> list[dict]:
        if s not in records:
            t0 = time.monotonic()
            records[s] = runner.run(default, test, s)
            for rec in records[s]:
                trials.append(trial_row(default, test, s, rec))
            print(f"  {tag_of(s)} (test on {letters_of(s)}): "
                  f"{sum(r['success'] is True for r in records[s])}/{len(records[s])} succeeded "
                  f"({time.monotonic() - t0:.1f} s)", file=sys.stderr)
        return records[s]

    dropped: list[str] = []
    if permutations:
        def outcomes(s: frozenset) -> list[float]:       # sampled: an unjudged trial counts as a failure
            return [float(r["success"] is True) for r in run(s)]
        result = attribute(ROLES, outcomes, exact=False, permutations=permutations, resamples=resamples,
                           confidence=confidence, seed=seed)
    else:
        for s in all_subsets(ROLES):
            run(s)
        judged_everywhere = [i for i, item in enumerate(runner.items)
                             if all(records[s][i]["judged"] and records[s][i]["success"] is not None for s in records)]
        kept = set(judged_everywhere)
        dropped = [item for i, item in enumerate(runner.items) if i not in kept]
        table = {s: [float(records[s][i]["success"] is True) for i in judged_everywhere] for s in records}
        result = attribute(ROLES, table, exact=True, resamples=resamples, confidence=confidence, seed=seed)
    wall = time.monotonic() - start
    info = {"default": str(default), "test": str(test), "default_model": default.key, "test_model": test.key,
            "wall_time_s": round(wall, 2), "dropped": dropped,
            "trials": sum(len(r) for r in records.values()),
            "tokens": sum(int(t.get("tokens") or 0) for rs in records.values() for t in rs)}
    return result, info


def trial_row(default: ModelSpec, test: ModelSpec, s: frozenset, rec: dict) -> dict[str, Any]:
    modular = rec.get("modular") or {}
    return {"default": str(default), "test": str(test), "config": tag_of(s), "test_modules": letters_of(s),
            "label": rec.get("agent"), "item_id": rec["item_id"], "family": rec.get("family"),
            "success": rec.get("success"), "judged": bool(rec.get("judged")),
            "answer": None if rec.get("answer") is None else str(rec["answer"]),
            "steps": rec.get("steps"), "tokens": rec.get("tokens"), "wall_time_s": rec.get("wall_time_s"),
            "stop_reason": rec.get("stop_reason"), "reflections": modular.get("reflections"),
            "module_calls_json": json.dumps(modular.get("calls")), "module_tokens_json": json.dumps(modular.get("tokens")),
            "trial_dir": rec["trial_dir"]}


def write_trials(rows: list[dict], path: Path) -> None:
    schema = pa.schema([("default", pa.string()), ("test", pa.string()), ("config", pa.string()),
                        ("test_modules", pa.string()), ("label", pa.string()), ("item_id", pa.string()),
                        ("family", pa.string()), ("success", pa.bool_()), ("judged", pa.bool_()),
                        ("answer", pa.string()), ("steps", pa.int64()), ("tokens", pa.int64()),
                        ("wall_time_s", pa.float64()), ("stop_reason", pa.string()), ("reflections", pa.int64()),
                        ("module_calls_json", pa.string()), ("module_tokens_json", pa.string()),
                        ("trial_dir", pa.string())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def pair_entry(result: Attribution, info: dict) -> dict[str, Any]:
    entry = {**info, **result.to_dict()}
    for row in entry["table"]:
        row["config"] = tag_of(frozenset(row["test_modules"]))
        row["test_modules"] = [LETTERS[r] for r in row["test_modules"]]
    for key in ("best", "predicted"):
        entry[key]["config"] = tag_of(frozenset(entry[key]["test_modules"]))
        entry[key]["test_modules"] = [LETTERS[r] for r in entry[key]["test_modules"]]
    return entry


# ---- output -----------------------------------------------------------------------------------------
def print_pair(entry: dict) -> None:

    console = Console(width=None if sys.stdout.isatty() else 130)
    pct = f"{100 * entry['confidence']:.0f}%"
    t = Table(title=f"default {entry['default_model']}, test {entry['test_model']}: {entry['n_tasks']} tasks, "
                    f"{entry['method']} ({entry['configurations_run']} configurations, {entry['wall_time_s']:.1f} s)")
    sampled = entry["banzhaf"] is None and entry.get("sampling")
    columns = ("module", "Shapley", f"{pct} interval (tasks)") + \
        ((f"{pct} interval (permutations)",) if sampled else ("Banzhaf", f"{pct} interval"))
    for col in columns:
        t.add_column(col, justify="left" if col == "module" else "right")
    for role in ROLES:
        sh = entry["shapley"][role]
        more = entry["sampling"][role] if sampled else (entry["banzhaf"] or {}).get(role)
        cells = [f"{LETTERS[role]} {role}", f"{sh['value']:+.3f}", f"[{sh['low']:+.3f}, {sh['high']:+.3f}]"]
        if not sampled:
            cells.append("-" if more is None else f"{more['value']:+.3f}")
        cells.append("-" if more is None else f"[{more['low']:+.3f}, {more['high']:+.3f}]")
        t.add_row(*cells)
    console.print(t)
    best, pred = entry["best"], entry["predicted"]
    v_all = "-" if entry["v_all"] is None else f"{entry['v_all']:.3f}"
    console.print(f"v(none) = {entry['v_none']:.3f}, v(all) = {v_all}; sum of Shapley "
                  f"{entry['efficiency']['sum_shapley']:+.3f}")
    console.print(f"best measured: {best['config']} (test on {','.join(best['test_modules']) or '-'}) v = {best['v']:.3f}")
    console.print(f"predicted: {pred['config']} (test on {','.join(pred['test_modules']) or '-'}) predicted "
                  f"{pred['predicted']:.3f}, measured {pred['measured']:.3f}")
    console.print("v(S): " + "  ".join(f"{r['config']} {r['v']:.2f}" for r in entry["table"]))


def interval_chart(shapley: dict[str, dict], *, width: int = 560, label_width: int = 130, row_h: int = 30) -> dict:
    """Geometry of a bar per module (its Shapley value) with its interval as a whisker, zero marked."""
    lows = [min(0.0, v["low"], v["value"]) for v in shapley.values()]
    highs = [max(0.0, v["high"], v["value"]) for v in shapley.values()]
    lo, hi = min(lows), max(highs)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.05, hi + 0.05
    pad = 0.05 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    bar_width = width - label_width - 20

    def x(v: float) -> float:
        return round(label_width + (v - lo) / (hi - lo) * bar_width, 2)

    bars = []
    for i, role in enumerate(ROLES):
        v = shapley[role]
        y = 10 + i * row_h
        x0, x1 = sorted((x(0.0), x(v["value"])))
        bars.append({"label": f"{LETTERS[role]} {role}", "y": y, "h": row_h - 10, "x": x0, "w": round(x1 - x0, 2),
                     "colour": "#3f8f3a" if v["value"] >= 0 else "#c0392b", "lx": x(v["low"]), "hx": x(v["high"]),
                     "cy": y + (row_h - 10) / 2,
                     "title": f"{role}: {v['value']:+.3f} [{v['low']:+.3f}, {v['high']:+.3f}]"})
    height = 10 + len(ROLES) * row_h + 24
    ticks = [{"x": x(t), "text": f"{t:+.2f}"} for t in sorted({round(lo + pad, 6), 0.0, round(hi - pad, 6)})]
    return {"width": width, "height": height, "label_width": label_width, "zero": x(0.0), "bars": bars,
            "axis_y": height - 20, "ticks": ticks}


def write_report(doc: dict, out_dir: Path) -> Path:
    env = environment()
    pairs = [{**p, "chart": interval_chart(p["shapley"])} for p in doc["pairs"]]
    html = env.get_template("attribution.html.j2").render(doc=doc, pairs=pairs, roles=ROLES, letters=LETTERS)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "index.html"
    path.write_text(html, encoding="utf-8")
    return path


# ---- CLI ---------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.attribute", description=__doc__.split("\n\n")[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--tasks", help="a task-set directory (python -m pipeline.tasks build)")
    source.add_argument("--legs", help="legs: a run folder, legs.parquet or any dataset pipeline.race reads")
    ap.add_argument("--default", required=True, metavar="MODEL[@URL][#t=T]", help="the default model")
    ap.add_argument("--test", required=True, action="append", metavar="MODEL[@URL][#t=T]",
                    help="a test model (repeatable)")
    ap.add_argument("--default2", metavar="MODEL[@URL][#t=T]",
                    help="a second default model: ranking consistency of the test models per module")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--limit", type=int, help="the first N tasks or legs")
    ap.add_argument("--concurrency", type=int, default=1, help="trials run at once")
    ap.add_argument("--seed", type=int, default=0, help="race seed (trial names) and bootstrap seed")
    ap.add_argument("--permutations", type=int, default=None,
                    help="sampled path: Monte-Carlo permutations instead of all 16 configurations")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the tasks")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--timeout-s", type=float, default=600.0, help="wall clock per trial")
    ap.add_argument("--max-steps", type=int, default=None,
                    help="cap every trial's step budget (default: the leg's B or the family's own)")
    ap.add_argument("--max-tokens", type=int, default=1024, help="completion tokens per request")
    ap.add_argument("--trial-tokens", type=int, default=200_000, help="tokens per trial")
    ap.add_argument("--request-timeout-s", type=float, default=120.0)
    ap.add_argument("--max-retries", type=int, default=3)
    a = ap.parse_args(argv)

    settings = load_settings()
    try:
        defaults = [ModelSpec.parse(a.default)] + ([ModelSpec.parse(a.default2)] if a.default2 else [])
        tests = [ModelSpec.parse(t) for t in a.test]
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    for spec in defaults + tests:
        if not (spec.base_url or settings.llm_base_url):
            raise SystemExit(f"no endpoint for {spec}: write MODEL@URL or set llm_base_url")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(a, settings, out)
    trials: list[dict] = []
    pairs, phi = [], {}
    for default in defaults:
        for test in tests:
            print(f"default {default}, test {test}: {len(runner.items)} {runner.kind}", file=sys.stderr)
            result, info = attribute_pair(runner, default, test, permutations=a.permutations, resamples=a.resamples,
                                          confidence=a.confidence, seed=a.seed, trials=trials)
            entry = pair_entry(result, info)
            entry.update(confidence=a.confidence, v_none=result.table[frozenset()],
                         v_all=result.table.get(frozenset(ROLES)))
            pairs.append(entry)
            phi.setdefault(str(default), {})[str(test)] = {r: result.shapley[r].value for r in ROLES}
            print_pair(entry)
    consistency = ranking_consistency(phi, ROLES) if a.default2 else None
    doc = {"source": {runner.kind: a.tasks or a.legs}, "n_items": len(runner.items), "items": runner.items,
           "modules": {LETTERS[r]: r for r in ROLES}, "defaults": [str(d) for d in defaults],
           "tests": [str(t) for t in tests], "seed": a.seed,
           "bootstrap": {"resamples": a.resamples, "confidence": a.confidence, "seed": a.seed},
           "pairs": pairs, "ranking_consistency": consistency}
    if consistency is not None:
        print("ranking consistency per module (two defaults): " +
              ", ".join(f"{LETTERS[r]} {'-' if c is None else f'{c:.2f}'}" for r, c in consistency.items()))
    (out / "attribution.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    write_trials(trials, out / "trials.parquet")
    page = write_report(doc, out / "report")
    print(f"attribution: {out / 'attribution.json'}; trials: {out / 'trials.parquet'}; report: {page}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m pipeline.attribute"))
