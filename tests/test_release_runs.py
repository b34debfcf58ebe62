"""The runs of a release side by side (``flows.runs``): the same bytes with one worker or two
processes, and a run that falls short says why instead of losing what it made."""
from __future__ import annotations

import dataclasses
import hashlib

import pyarrow.parquet as pq

from flows.runs import release_runs, run_all
from pipeline.config import load_settings


def _digests(root) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.parquet"))}


def test_two_worker_processes_make_the_bytes_one_makes(tmp_path):
    runs = release_runs(seed=17, counts={"linear": 1, "dag": 1}, levels=("easy",))
    outcomes = {}
    for workers in (1, 2):
        settings = load_settings(cache_path=tmp_path / f"cache-{workers}.sqlite")
        out = tmp_path / f"w{workers}"
        outcomes[workers] = run_all([(p, out / d) for p, d in runs], settings, workers=workers)
        assert [o.failure for o in outcomes[workers]] == [None, None]
    assert _digests(tmp_path / "w1") == _digests(tmp_path / "w2")
    assert len(_digests(tmp_path / "w1")) >= 2 * 10   # eight stages, legs and rejected, per run
    assert [o.params.variant for o in outcomes[2]] == ["linear", "dag"]   # in the order asked, not finished


def test_a_run_short_of_its_count_comes_back_with_what_it_made(tmp_path):
    [(params, folder)] = release_runs(seed=3, counts={"linear": 1, "dag": 1}, levels=("easy",), variants=("linear",))
    params = dataclasses.replace(params, seed_title="Xyzzy page that is not there",   # 20 attempts, not 200
                                 preset_overrides=("generation.attempts_per_leg=20",))
    [outcome] = run_all([(params, tmp_path / folder)], load_settings(cache_path=tmp_path / "c.sqlite"), workers=1)
    assert outcome.failure and "accepted 0 of 1" in outcome.failure
    assert outcome.result.rejected and (tmp_path / folder / "rejected.parquet").exists()
    # the rows come back with their reasons, their legs' JSON stays in the run's artifact
    written = pq.read_table(tmp_path / folder / "rejected.parquet").to_pylist()
    assert [r["reason"] for r in outcome.result.rejected] == [r["reason"] for r in written]
    assert all("leg_json" not in r for r in outcome.result.rejected) and all(r["leg_json"] for r in written)
