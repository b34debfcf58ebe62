"""The card's difficulty table pools the blind races' scores by level, weighted by legs raced."""
from __future__ import annotations

import json

from pipeline.report.stats import blind_races


def _race(folder, groups):
    folder.mkdir(parents=True)
    (folder / "score.json").write_text(json.dumps({"groups": groups}))


def test_races_pool_by_level_weighted_by_legs(tmp_path):
    _race(tmp_path / "race-1", [{"level": "hard", "n": 4, "fa": 0.75, "pvr": 1.0, "steps": 18},
                                {"level": "easy", "n": 2, "fa": 1.0, "pvr": 1.0, "steps": 4}])
    _race(tmp_path / "race-2", [{"level": "hard", "n": 4, "fa": 1.0, "pvr": 0.5, "steps": 14}])
    rows = blind_races(tmp_path)
    assert [r["level"] for r in rows] == ["easy", "hard"]
    hard = rows[1]
    assert (hard["legs"], hard["races"]) == (8, 2)
    assert (hard["fa"], hard["pvr"], hard["calls"]) == (0.875, 0.75, 16.0)   # (3 + 4) / 8, (4 + 2) / 8, 128 / 8


def test_no_races_no_table(tmp_path):
    assert blind_races(tmp_path) == []


def _pooled():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "blind_race" / "pooled.py"
    spec = importlib.util.spec_from_file_location("pooled", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_failed_leg_of_a_kept_race_has_its_review():
    """Issue 21, item 8: every failed leg reviewed stop by stop. A race folder whose failure has no entry
    in ``reviews.json`` (defect or the agent's error) is a race not yet reviewed."""
    pooled = _pooled()
    reviews = json.loads((pooled.HERE / "reviews.json").read_text())
    rows = [r for folder in sorted(pooled.HERE.glob("race-*")) for r in pooled.raced(folder)]
    assert len(rows) >= 32 * 11
    failed = {(r["race"], r["racer"]) for r in rows if not r["solved"]}
    reviewed = {(race, racer) for race, entries in reviews.items() if race.startswith("race-") for racer in entries}
    assert failed == reviewed
    assert {e["class"] for race, entries in reviews.items() if race.startswith("race-")
            for e in entries.values()} <= {"defect", "agent"}
