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
    assert len(changes["added"]) == 2 + 40 and not changes["removed"]
    index = (tmp_path / "rel" / "report" / "index.html").read_text(encoding="utf-8")
    assert "--skip-invariants" not in index and index.count("all hold") == 2   # one row per leg
    assert (tmp_path / "rel" / "hub" / "README.md").is_file()
    second = subprocess.run(cmd, cwd=PROJECT_ROOT, env=env, check=False, capture_output=True, text=True, timeout=1200)
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads((tmp_path / "rel" / "changes.json").read_text()) == {"added": [], "removed": [], "changed": []}


def test_serve_prints_the_scheduled_deployment():
    out = subprocess.run([sys.executable, "-m", "flows.serve", "--cron", "0 3 * * 1", "--print"], cwd=PROJECT_ROOT,
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    spec = json.loads(out.stdout)
    assert spec["cron"] == "0 3 * * 1" and spec["name"] == "legwork-regeneration"
    assert "--out" in spec["parameters"]["argv"]
