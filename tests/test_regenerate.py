"""The regeneration flow end to end (slow): legs, task sets, validation, report, dry-run publish,
and a second run that reuses everything and reports no change."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipeline.config import PROJECT_ROOT


@pytest.mark.slow
def test_regeneration_is_incremental(tmp_path):
    env = {**os.environ, "LEGWORK_CACHE": str(tmp_path / "cache.sqlite"), "PREFECT_HOME": str(tmp_path / "prefect")}
    cmd = [sys.executable, "-m", "flows.regenerate", "--out", str(tmp_path / "rel"), "--count", "1",
           "--levels", "easy", "--families", "git"]
    first = subprocess.run(cmd, cwd=PROJECT_ROOT, env=env, check=False, capture_output=True, text=True, timeout=1200)
    assert first.returncode == 0, first.stderr[-3000:]
    changes = json.loads((tmp_path / "rel" / "changes.json").read_text())
    # two legs, 40 git tasks and a training trajectory for each leg (OS and git trajectories are not made)
    assert len(changes["added"]) == 2 + 40 + 2 and not changes["removed"]
    assert sum(k.startswith("trajectories/leg/") for k in changes["added"]) == 2
    index = (tmp_path / "rel" / "report" / "index.html").read_text(encoding="utf-8")
    assert "--skip-invariants" not in index and index.count("all hold") == 2   # one row per leg
    assert (tmp_path / "rel" / "hub" / "README.md").is_file()
    second = subprocess.run(cmd, cwd=PROJECT_ROOT, env=env, check=False, capture_output=True, text=True, timeout=1200)
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads((tmp_path / "rel" / "changes.json").read_text()) == {"added": [], "removed": [], "changed": []}
    # another seed: the same folders, yet nothing is reused (keyed by parameters, not by files being there)
    third = subprocess.run([*cmd, "--seed", "1"], cwd=PROJECT_ROOT, env=env, check=False, capture_output=True,
                           text=True, timeout=1200)
    assert third.returncode == 0, third.stderr[-3000:]
    changed = json.loads((tmp_path / "rel" / "changes.json").read_text())
    assert changed["added"] or changed["changed"], changed   # new legs and tasks, not the old ones again


def test_serve_prints_the_scheduled_deployment():
    out = subprocess.run([sys.executable, "-m", "flows.serve", "--cron", "0 3 * * 1", "--print"], cwd=PROJECT_ROOT,
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    spec = json.loads(out.stdout)
    assert spec["cron"] == "0 3 * * 1" and spec["name"] == "legwork-regeneration"
    # typed parameters, as a deployment and the Prefect UI show and validate them (no argv list)
    assert spec["parameters"]["count"] == 5 and spec["parameters"]["upload"] is False
    schema = spec["parameter_schema"]
    assert schema["count"]["type"] == "integer" and schema["upload"]["type"] == "boolean"
    assert {"out", "seed", "families", "levels", "variants", "repo_id"} <= set(schema)


def test_reuse_is_keyed_by_parameters_code_and_data(tmp_path):
    from flows.release import finished, mark_finished, prepare, step_key
    from pipeline.versions import code_version, tree_digest
    for top in ("pipeline", "flows", "templates", "prompts"):
        (tmp_path / top).mkdir()
    (tmp_path / "pipeline" / "a.py").write_text("x = 1\n")
    before = code_version(root=tmp_path)
    (tmp_path / "pipeline" / "a.py").write_text("x = 2\n")
    assert code_version(root=tmp_path) == before    # computed once per process
    tree_digest.cache_clear()
    assert code_version(root=tmp_path) != before
    versions = {"code": before, "data": "d1"}
    key = step_key("task-set", {"family": "git", "seed": 0}, versions)
    assert key != step_key("task-set", {"family": "git", "seed": 1}, versions)
    assert key != step_key("task-set", {"family": "git", "seed": 0}, {**versions, "data": "d2"})
    folder = tmp_path / "out" / "git"
    folder.mkdir(parents=True)
    (folder / "stale.parquet").write_text("from an older layout, no marker")
    prepare(folder, key)                        # no marker of this key: emptied
    assert not (folder / "stale.parquet").exists() and not finished(folder, key)
    (folder / "half.parquet").write_text("unfinished work of this key")
    prepare(folder, key)                        # unfinished work of the same key resumes
    assert (folder / "half.parquet").exists()
    mark_finished(folder, key, {"family": "git", "seed": 0}, versions)
    assert finished(folder, key)
    other = step_key("task-set", {"family": "git", "seed": 1}, versions)
    assert not finished(folder, other)
    prepare(folder, other)                      # another seed: the old set is not reused
    assert not (folder / "half.parquet").exists()
