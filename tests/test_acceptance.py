"""Acceptance is validation: every accepted leg passes the invariants before it is written, and an
unexpected exception inside a stage is an error (recorded with where it happened, failing the run),
never a quiet rejection."""
from __future__ import annotations

import copy
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flows.generate import (
    STAGES,
    GenerationErrors,
    GenerationParams,
    acceptance_failure,
    apply_stage,
    local_map_stage,
    run_generation,
)
from pipeline.model import ROADBLOCK, Clue
from pipeline.stages.verbalize import forbidden_names


@pytest.fixture(scope="module")
def finished(ctx, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = run_generation(GenerationParams(level="medium", variant="dag", count=2, seed=6), out, ctx.settings,
                            local_map_stage(ctx))
    return result, out


def break_a_tool_chain(leg):
    """A leg in a state no stage should ever produce (a chain step that is not a step)."""
    stop = next(s for s in leg.stops if s.kind == ROADBLOCK and s.tool_chain)
    stop.tool_chain = [None]
    return leg


def test_runs_record_no_errors_and_accepted_legs_pass_every_invariant(finished, ctx):
    result, out = finished
    assert result.errors == []
    statuses = {r["status"] for r in pq.read_table(out / "rejected.parquet").to_pylist()}
    assert statuses <= {"rejected"}
    for leg in result.accepted:
        assert acceptance_failure(leg, ctx) is None


def test_an_unexpected_exception_is_an_error_with_its_last_frame(finished, ctx):
    leg = break_a_tool_chain(copy.deepcopy(finished[0].accepted[0]))
    [(_, failure)] = apply_stage("golden", [leg], ctx)
    assert failure is not None and failure.error and failure.status == "error"
    assert "AttributeError" in failure.reason
    assert failure.where.startswith("pipeline/execute.py:") and " in " in failure.where


def test_a_bad_input_stays_a_rejection(finished, ctx):
    leg = copy.deepcopy(finished[0].accepted[0])
    leg.stops[0].page_url = "https://en.wikipedia.org/wiki/No_such_page_in_the_snapshot_at_all"
    [(_, failure)] = apply_stage("golden", [leg], ctx)
    assert failure is not None and not failure.error and failure.where is None


def test_a_leg_that_breaks_an_invariant_is_not_accepted(finished, ctx):
    leg = copy.deepcopy(finished[0].accepted[0])
    names = forbidden_names(leg, ctx)
    assert names, "a medium DAG leg visits pages other than its seed"
    leg.clues[1] = Clue(number=leg.clues[1].number, stop=leg.clues[1].stop, text=f"Go to {names[0]} and look.")
    failure = acceptance_failure(leg, ctx)
    assert failure is not None and failure.error
    assert "5_riddle" in failure.reason


def test_errors_fail_the_run_are_written_and_are_redone_on_resume(ctx, tmp_path):
    params = GenerationParams(level="easy", variant="linear", count=2, seed=9)
    plain = local_map_stage(ctx)

    broken: list[str] = []

    def buggy(stage, batches):   # the first leg to reach golden meets the bug (whichever seed it has)
        if stage == "golden" and not broken and batches and batches[0]:
            broken.append(batches[0][0].leg_id)
        if stage == "golden":
            batches = [[break_a_tool_chain(copy.deepcopy(leg)) if leg.leg_id in broken else leg for leg in b]
                       for b in batches]
        return plain(stage, batches)

    with pytest.raises(GenerationErrors) as info:
        run_generation(params, tmp_path / "run", ctx.settings, buggy)
    errors = info.value.result.errors
    assert errors and all(e["stage"] == "golden" and e["where"] for e in errors)
    rows = pq.read_table(tmp_path / "run" / "rejected.parquet").to_pylist()
    assert [r for r in rows if r["status"] == "error"] == errors
    def golden_statuses() -> list[set[str]]:
        paths = sorted((tmp_path / "run" / "artifacts").glob(f"round-*/{STAGES.index('golden') + 1}-golden.parquet"))
        return [{r["status"] for r in pq.read_table(path).to_pylist()} for path in paths]
    assert sum("error" in s for s in golden_statuses()) == 1    # the round where the bug was met

    # with the bug fixed, a re-run in the same folder redoes the stage that met it and ends clean
    fixed = run_generation(params, tmp_path / "run", ctx.settings, plain)
    assert fixed.errors == [] and len(fixed.accepted) == 2
    assert not any("error" in s for s in golden_statuses())
    run_generation(params, tmp_path / "clean", ctx.settings, plain)
    assert (tmp_path / "run" / "legs.parquet").read_bytes() == (tmp_path / "clean" / "legs.parquet").read_bytes()


def test_allow_errors_returns_the_run_instead_of_raising(ctx, tmp_path):
    plain = local_map_stage(ctx)

    def buggy(stage, batches):
        if stage == "golden":
            batches = [[break_a_tool_chain(copy.deepcopy(leg)) for leg in b] for b in batches]
        return plain(stage, batches)

    # every attempt fails the same way: 20 attempts (of the default 200) show it in a tenth of the time
    params = GenerationParams(level="easy", variant="linear", count=1, seed=9,
                              preset_overrides=("generation.attempts_per_leg=20",))
    from flows.generate import BudgetExhausted
    with pytest.raises(BudgetExhausted) as info:  # every attempt meets the bug: nothing is accepted
        run_generation(params, tmp_path / "run", ctx.settings, buggy, allow_errors=True)
    assert info.value.result.errors and not info.value.result.accepted


def test_cli_exits_zero_and_says_zero_errors(tmp_path):
    from in_process import run_module
    done = run_module("pipeline.generate", "--difficulty", "easy", "--variant", "linear", "--count", "1", "--seed", "3",
                      "--task-runner", "local", "--quiet", "--out", str(tmp_path / "run"),
                      "--cache", str(tmp_path / "c.sqlite"), cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
    assert "errors: 0" in done.stdout


def test_solver_acceptance_counts_by_hand():
    from pipeline.acceptance import solver_acceptance
    from pipeline.model import Leg

    def leg(i: int, status: str) -> Leg:
        made = Leg(leg_id=f"l{i}", level="easy", variant="linear", seed=i, seed_title="S", seed_url="u")
        made.metadata["solver"] = {"status": status}
        return made
    rows = [{"reason": "verbalize: the riddle is ambiguous: clue 2 (candidates: A; B)"},
            {"reason": "verbalize: the riddle is ambiguous: clue 1 (candidates: C; D)"},
            {"reason": "verbalize: the riddle alone does not solve: clue 3"},
            {"reason": "verbalize: the riddle alone gives 4, the leg's passcode is 7"},
            {"reason": "prevalidate: the seed stop fails"}, {"reason": None}]
    figures = solver_acceptance([leg(0, "solved"), leg(1, "solved"), leg(2, "failed")], rows)
    # 3 accepted + 4 solver rejections reached the solver; 2 of 3 accepted were solved
    assert figures == {"candidates": 7, "accepted": 3, "solved": 2, "solve_rate": 0.6667, "ambiguous": 2,
                       "unsolved": 1, "wrong_answer": 1, "ambiguous_rate": 0.2857}
