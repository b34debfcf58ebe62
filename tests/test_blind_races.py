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


def test_a_racers_tool_logs_in_its_folder_whatever_log_it_is_given(tmp_path):
    """Race 31: a racer passed ``--log /dev/null`` and its call escaped the budget, which counts the log.
    A racer's tool logs every call in its own folder."""
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("make_racers", root / "benchmarks" / "blind_race" / "make_racers.py")
    make_racers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_racers)
    tool = tmp_path / "tool"
    tool.write_text(make_racers.TOOL.format(root=root, out=tmp_path, python=sys.executable, snapshot="",
                                            budget="--budget 10 ", log=f"--log {tmp_path / 'tool_log.jsonl'}"))
    tool.chmod(0o755)
    args = ["call", "countries_area", '{"country": "France"}', "--log", "/dev/null"]
    done = subprocess.run([str(tool), *args], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "tool_log.jsonl").read_text().splitlines()) == 1
