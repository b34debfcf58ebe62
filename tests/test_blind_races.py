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
