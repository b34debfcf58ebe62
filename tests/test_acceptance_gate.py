"""The acceptance gate in the driver: a leg that comes out of the last stage breaking an invariant is
not written to legs.parquet; rejected.parquet holds it with the invariant and its message (issue 23,
item 8: verified by replacing the acceptance call in ``flows.generate.apply_stage`` with ``None``)."""
from __future__ import annotations

import copy

import pyarrow.parquet as pq

from flows.generate import STAGES, GenerationParams, local_map_stage, run_generation
from pipeline.acceptance import run_acceptance


def test_a_leg_failing_acceptance_is_rejected_with_its_reason_and_not_written(ctx, tmp_path):
    plain = local_map_stage(ctx)
    forged: list[str] = []

    def forging(stage, batches):
        """The first leg to reach the last stage gets a trace value of unknown provenance: every
        stage lets it through (nothing before acceptance reads provenance), invariant 6 does not."""
        if stage == STAGES[-1] and not forged:
            leg = next((leg for b in batches for leg in b if leg.trace), None)
            if leg is not None:
                forged.append(leg.leg_id)
        batches = [[forge(leg) if leg.leg_id in forged and stage == STAGES[-1] else leg for leg in b] for b in batches]
        return plain(stage, batches)

    def forge(leg):
        leg = copy.deepcopy(leg)
        leg.trace[-1].provenance = "hearsay"
        return leg

    params = GenerationParams(level="easy", variant="linear", count=1, seed=9)
    result = run_generation(params, tmp_path / "run", ctx.settings, forging, allow_errors=True)
    assert forged, "no leg reached the last stage"
    legs = pq.read_table(tmp_path / "run" / "legs.parquet").to_pylist()
    rejected = pq.read_table(tmp_path / "run" / "rejected.parquet").to_pylist()
    # the slot was filled by a later attempt; the forged leg is not among the accepted
    assert len(legs) == 1 and forged[0] not in [r["leg_id"] for r in legs]
    assert [leg.leg_id for leg in result.accepted] == [r["leg_id"] for r in legs]
    [row] = [r for r in rejected if r["leg_id"] == forged[0]]
    assert row["stage"] == STAGES[-1] and row["status"] == "error" and row["where"] == "pipeline/invariants.py"
    assert row["reason"].startswith("acceptance: invariant 6_provenance fails: trace call ")
    assert row["reason"].endswith("has provenance 'hearsay'")
    assert result.errors == [row]
    # the run's solver figures count what was accepted (the forged leg was solved, yet not accepted)
    figures = run_acceptance(tmp_path / "run")
    assert figures["accepted"] == 1 and figures == run_acceptance(tmp_path / "run" / "legs.parquet")


def test_run_acceptance_needs_a_run_folder(tmp_path):
    assert run_acceptance(tmp_path) is None                       # no legs.parquet
    (tmp_path / "legs.parquet").write_bytes(b"")
    assert run_acceptance(tmp_path) is None                       # no rejected.parquet next to it
    (tmp_path / "rejected.parquet").write_bytes(b"")
    assert run_acceptance(tmp_path / "rejected.parquet") is None  # not a legs file


def test_solver_acceptance_of_nothing_has_no_rates():
    from pipeline.acceptance import solver_acceptance
    assert solver_acceptance([], [{"reason": "prevalidate: the seed stop fails"}]) == {
        "candidates": 0, "accepted": 0, "solved": 0, "solve_rate": None, "ambiguous": 0, "unsolved": 0,
        "wrong_answer": 0, "ambiguous_rate": None}
