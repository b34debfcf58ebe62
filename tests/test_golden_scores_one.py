"""The golden solution earns 1 on every figure it is the reference for (RCR, intermediate accuracy, eta;
with FA and PVR), in ``pipeline.score``'s functions, on every family of legs: Legwork's linear and DAG
legs (the golden trace replayed as its ATIF trajectory, which is what Harbor's solve.sh and Inspect's
scripted oracle replay; and the race oracle), and the 20 imported AAR legs (no golden trace: the oracle's
executor runs them here, and recorded chains the offline world cannot answer stop at their failed step).
Harbor's verifier is held by tests/test_harbor_export.py, Inspect's scorer by tests/test_inspect_tasks.py.

Controls: the checks that made these figures fall below 1 for the golden solution (eta counting only
roadblock steps as golden, a chain owed past a step the world failed) are exercised by legs that have a
choice hop's look-ups and by AAR legs geocoding rivers; a trial missing a golden call or its working
scores below 1.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.agents.runtime import run_trial
from pipeline.config import load_settings
from pipeline.export import load_legs
from pipeline.export.trajectories import Origin, atif_trajectory, leg_trajectory
from pipeline.scoring import load_trials, score_trials
from pipeline.scoring.trials import trial_from_atif
from pipeline.stages.base import StageContext
from pipeline.tools.registry import Toolbox

AAR = Path(__file__).resolve().parents[2] / "shared" / "anchors" / "aar" / "data"
FIGURES = ("fa", "pvr", "rcr", "intermediate", "eta")


def figures(score) -> dict[str, float]:
    """The defined figures of a trial (PVR and RCR are undefined for a leg without page stops or roadblocks)."""
    return {k: float(getattr(score, k)) for k in FIGURES if getattr(score, k) is not None}


def all_one(score) -> bool:
    got = figures(score)
    return set(got) >= {"fa", "intermediate", "eta"} and all(v == 1.0 for v in got.values())


@pytest.fixture(scope="module")
def legwork_legs(tmp_path_factory) -> list:
    """Easy legs of both variants (seed 7's DAG legs include a choice hop: look-ups of every candidate)."""
    root = tmp_path_factory.mktemp("legs")
    ctx = StageContext.create(load_settings(cache_path=root / "cache.sqlite"))
    legs = []
    for variant in ("linear", "dag"):
        out = root / variant
        run_generation(GenerationParams(level="easy", variant=variant, count=3, seed=7), out, ctx.settings,
                       local_map_stage(ctx))
        legs += load_legs(out)
    return legs


def golden_trial(leg):
    """The golden trajectory (every traced call with its response, then the closing answer), read as
    ``pipeline.score`` reads an ATIF trajectory."""
    return trial_from_atif(atif_trajectory(leg_trajectory(leg, Origin())), f"golden-{leg.leg_id}", "golden",
                           leg.leg_id, str(leg.passcode))


def test_the_golden_trajectory_of_every_legwork_leg_scores_one(legwork_legs):
    assert {leg.variant for leg in legwork_legs} == {"linear", "dag"}
    scores = score_trials(legwork_legs, [golden_trial(leg) for leg in legwork_legs])
    assert [(s.leg_id, figures(s)) for s in scores if not all_one(s)] == []
    # a choice hop's look-ups are golden calls too (eta counted only roadblock steps: 0.33 on one of these)
    assert any(len(leg.trace) > sum(len(s.tool_chain or []) for s in leg.stops) + len(
        [s for s in leg.stops if s.kind == "route_info"]) for leg in legwork_legs)


def test_a_trial_short_of_the_golden_one_scores_below_one(legwork_legs):
    leg = next(leg for leg in legwork_legs if any(s.kind == "roadblock" for s in leg.stops))
    no_working = golden_trial(leg)
    no_working.messages = [m.rsplit("\n", 1)[-1] for m in no_working.messages]   # "ANSWER: d" only
    short = golden_trial(leg)
    roadblock_tools = {st.tool for s in leg.stops if s.kind == "roadblock" for st in s.tool_chain}
    drop = max(i for i, c in enumerate(short.calls) if c.tool in roadblock_tools)
    del short.calls[drop]
    [a, b] = score_trials([leg], [no_working, short])
    assert a.intermediate < 1.0 and b.rcr < 1.0


def test_the_race_oracle_scores_one_on_legwork_legs(legwork_legs, tmp_path):
    toolbox = Toolbox(load_settings(cache_path=tmp_path / "cache.sqlite"))
    for leg in legwork_legs:
        run_trial(leg, "oracle", tmp_path / "runs", toolbox=toolbox)
    scores = score_trials(legwork_legs, load_trials(tmp_path / "runs"))
    assert len(scores) == len(legwork_legs) and [(s.leg_id, figures(s)) for s in scores if not all_one(s)] == []


@pytest.mark.skipif(not AAR.is_dir(), reason="the AAR anchors are absent")
def test_the_race_oracle_scores_one_on_the_20_imported_aar_legs(tmp_path):
    """RCR was 81.9% (12 of 20 below 1: aar-linear-hard-sample_000 0.5): the executor stops a recorded
    chain at a step the offline world fails, and scoring owed the steps after it."""
    legs = load_legs(AAR)
    assert len(legs) == 20 and not any(leg.trace for leg in legs)
    toolbox = Toolbox(load_settings(cache_path=tmp_path / "cache.sqlite"))
    for leg in legs:
        run_trial(leg, "oracle", tmp_path / "runs", toolbox=toolbox)
    scores = score_trials(legs, load_trials(tmp_path / "runs"))
    assert len(scores) == 20 and [(s.leg_id, figures(s)) for s in scores if not all_one(s)] == []
    by_id = {s.leg_id: s for s in scores}
    assert by_id["aar-linear-hard-sample_000"].rcr == 1.0          # geocoding rivers fails offline
    failed = [c for t in load_trials(tmp_path / "runs") if t.leg_id == "aar-linear-hard-sample_000"
              for c in t.calls if c.tool == "maps_geocode" and not c.success]
    assert failed                       # the recorded chain's step the offline world fails, made and counted


@pytest.mark.skipif(not AAR.is_dir(), reason="the AAR anchors are absent")
def test_a_recorded_chain_is_owed_up_to_the_failed_step_not_without_it(tmp_path):
    """The waiver needs the agent to have made the failed golden step: skipping it leaves the chain undone."""
    [leg] = [leg for leg in load_legs(AAR) if leg.leg_id == "aar-linear-hard-sample_000"]
    toolbox = Toolbox(load_settings(cache_path=tmp_path / "cache.sqlite"))
    run_trial(leg, "oracle", tmp_path / "runs", toolbox=toolbox)
    [trial] = load_trials(tmp_path / "runs")
    [full] = score_trials([leg], [trial])
    trial.calls = [c for c in trial.calls if not (c.tool == "maps_geocode" and not c.success)]
    [skipped] = score_trials([leg], [trial])
    assert full.rcr == 1.0 and skipped.rcr == 0.5
