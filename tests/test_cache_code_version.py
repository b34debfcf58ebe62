"""The record/replay cache never serves an answer recorded by other code: the offline backends' code
is part of a record's namespace (``tools.registry.offline_code_digest``). Blind race 8 (R09) met the
failure this prevents: a golden trace kept a simulated museum list recorded before the simulator
changed, while the racer's tools, on the same data, answered with today's list."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pipeline.config import PROJECT_ROOT

CALL = ["maps_search_places", json.dumps({"query": "museum", "location": "São Paulo", "radius_m": 5000})]


def _copy_project(dest: Path) -> Path:
    for name in ("pipeline", "templates", "prompts"):
        shutil.copytree(PROJECT_ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "snapshots").symlink_to(PROJECT_ROOT / "snapshots")
    return dest


def _call(project: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEGWORK_")}
    env.update(PYTHONPATH=str(project), LEGWORK_CACHE=str(cache), LEGWORK_DERIVED=str(cache.parent / "derived"))
    done = subprocess.run([sys.executable, "-m", "pipeline.tools", "call", *CALL], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_an_answer_recorded_by_other_code_is_computed_again(tmp_path):
    project = _copy_project(tmp_path / "project")
    cache = tmp_path / "calls.sqlite"
    before = _call(project, cache)
    assert before["provenance"] == "simulated" and before["places"]
    maps = project / "pipeline" / "tools" / "backends" / "offline" / "maps.py"
    text = maps.read_text()
    assert "SIMULATED_PLACES_KM = 20.0" in text
    maps.write_text(text.replace("SIMULATED_PLACES_KM = 20.0", "SIMULATED_PLACES_KM = 10.0"))   # new answers
    after = _call(project, cache)
    assert after == _call(project, tmp_path / "fresh.sqlite")   # what this code answers, not the record
    assert after["places"] != before["places"]
