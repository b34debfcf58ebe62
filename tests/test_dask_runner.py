"""Scale-out: a run through Prefect on a local Dask cluster (2 worker processes) gives the same bytes as
the in-process driver (no Prefect, no Dask)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipeline.config import PROJECT_ROOT


def generate(out, runner, env):
    return subprocess.run([sys.executable, "-m", "pipeline.generate", "--difficulty", "easy", "--variant", "dag",
                           "--count", "2", "--seed", "9", "--batch-size", "1", "--task-runner", runner, "--out", str(out)],
                          cwd=PROJECT_ROOT, env=env, check=False, capture_output=True, text=True, timeout=900)


# slow: 40 s of Dask start-up; tests/test_release_runs.py::test_two_worker_processes_make_the_bytes_one_makes keeps
# byte-identity of parallel runs in the default run
@pytest.mark.slow
def test_dask_run_matches_thread_run_byte_for_byte(tmp_path):
    env = {**os.environ, "LEGWORK_CACHE": str(tmp_path / "cache.sqlite"), "PREFECT_HOME": str(tmp_path / "prefect")}
    dask = generate(tmp_path / "dask", "dask", env)
    assert dask.returncode == 0, dask.stderr[-3000:]
    local = generate(tmp_path / "local", "local", {**env, "LEGWORK_CACHE": str(tmp_path / "cache2.sqlite")})
    assert local.returncode == 0, local.stderr[-3000:]
    assert (tmp_path / "dask" / "legs.parquet").read_bytes() == (tmp_path / "local" / "legs.parquet").read_bytes()
    assert "Traceback" not in dask.stderr
