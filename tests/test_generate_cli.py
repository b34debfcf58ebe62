"""End to end through the CLI, as a user runs it: Prefect flow, legs.parquet, validate, AAR export."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest
from in_process import run_module

from pipeline.config import PROJECT_ROOT


def run(args, env):
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT_ROOT, env=env, check=False, capture_output=True, text=True,
                          timeout=600)


def run_here(args, env):
    """``run`` inside this process (``in_process``): the same main, arguments and environment."""
    return run_module(args[0], *args[1:], env=env, cwd=PROJECT_ROOT)


def test_generate_with_prefect_then_validate_and_export(tmp_path):
    env = {**os.environ, "LEGWORK_CACHE": str(tmp_path / "cache.sqlite"), "PREFECT_HOME": str(tmp_path / "prefect")}
    out = tmp_path / "run"
    gen = run(["pipeline.generate", "--difficulty", "extreme", "--count", "1", "--seed", "2", "--out", str(out),
               "--export-aar", str(tmp_path / "aar")], env)
    assert gen.returncode == 0, gen.stderr[-3000:]
    assert "accepted 1 legs" in gen.stdout
    rows = pq.read_table(out / "legs.parquet").to_pylist()
    assert len(rows) == 1 and rows[0]["level"] == "extreme" and rows[0]["variant"] == "dag"
    sizes = [len(s["wide"]["members"]) for s in json.loads(rows[0]["leg_json"])["stops"] if s.get("wide")]
    assert len(sizes) >= 2 and "wide" in gen.stdout   # the table shows the wide stops and their sets' sizes
    assert f"{len(sizes)} ({sizes[0]}," in " ".join(gen.stdout.split()), gen.stdout
    assert 0 <= rows[0]["passcode"] <= 9
    stages = sorted(p.name for p in (out / "artifacts" / "round-00").glob("*.parquet"))
    assert stages == ["1-crawl.parquet", "2-plan.parquet", "3-build.parquet", "4-prevalidate.parquet",
                      "5-link.parquet", "6-diamond.parquet", "7-golden.parquet", "8-verbalize.parquet"]
    val = run(["pipeline.validate", str(out)], env)
    assert val.returncode == 0, val.stdout[-3000:] + val.stderr[-3000:]
    exported = list((tmp_path / "aar").glob("*.json"))
    assert len(exported) == 1
    aar = json.loads(exported[0].read_text())
    assert aar["passcode"] == rows[0]["passcode"] and aar["seed_url"] == rows[0]["seed_url"]
    assert len(aar["stops"]) == rows[0]["n_stops"]


# A duplicate of test_validate_anywhere.py::test_a_run_validates_fully_with_another_empty_cache[easy] (a run
# generated through the CLI with cache A, validated by the CLI in a separate process with an empty cache B:
# every call re-executed, no leg failing, no cache written), which fails under the same mutants.
@pytest.mark.slow
def test_validate_needs_no_cache_of_the_generator(tmp_path):
    env = {**os.environ, "LEGWORK_CACHE": str(tmp_path / "cache.sqlite")}
    out = tmp_path / "run"
    gen = run(["pipeline.generate", "--difficulty", "easy", "--variant", "linear", "--count", "1", "--out", str(out),
               "--task-runner", "local"], env)
    assert gen.returncode == 0, gen.stderr[-3000:]
    leg_id = pq.read_table(out / "legs.parquet").to_pylist()[0]["leg_id"]
    env["LEGWORK_CACHE"] = str(tmp_path / "other.sqlite")  # nothing recorded here: every call is re-executed
    val = run(["pipeline.validate", str(out)], env)
    assert val.returncode == 0, val.stdout[-3000:] + val.stderr[-3000:]
    assert f"FAIL {leg_id}" not in val.stdout and "1 legs, 0 failing" in val.stdout
    calls = pq.read_table(out / "legs.parquet").to_pylist()[0]["n_tool_calls"]
    assert f"golden traces: {calls} calls re-executed, 0 checked against the trace only" in val.stdout


# slow: 9 s, two CLI generations and a kill; tests/test_legs.py::
# test_same_inputs_give_identical_bytes_and_resume_finishes_the_same keeps a resumed run's bytes equal to an
# uninterrupted run's and its finished artifacts not redone in the default run
@pytest.mark.slow
def test_a_run_killed_midway_resumes_to_the_same_bytes(tmp_path):
    """kill -9 during generation, then the same command again: the result equals an uninterrupted run."""
    args = ["pipeline.generate", "--difficulty", "medium", "--variant", "dag", "--count", "4", "--seed", "11",
            "--task-runner", "local"]
    whole_env = {**os.environ, "LEGWORK_CACHE": str(tmp_path / "whole.sqlite")}
    whole = run([*args, "--out", str(tmp_path / "whole")], whole_env)
    assert whole.returncode == 0, whole.stderr[-3000:]

    env = {**os.environ, "LEGWORK_CACHE": str(tmp_path / "cut.sqlite")}
    out = tmp_path / "cut"
    proc = subprocess.Popen([sys.executable, "-m", *args, "--out", str(out)], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not list(out.glob("artifacts/*/3-build.parquet")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be interrupted"
    assert not (out / "legs.parquet").exists()
    finished = {p: p.stat().st_mtime_ns for p in out.glob("artifacts/*/*.parquet")}
    assert finished

    resumed = run([*args, "--out", str(out)], env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (out / "legs.parquet").read_bytes() == (tmp_path / "whole" / "legs.parquet").read_bytes()
    assert (out / "rejected.parquet").read_bytes() == (tmp_path / "whole" / "rejected.parquet").read_bytes()
    assert all(p.stat().st_mtime_ns == t for p, t in finished.items()), "finished artifacts were redone"


def test_quiet_silences_progress_never_a_failure(tmp_path):
    """Issue 23.6: every run that exits non-zero says why on stderr, with or without --quiet; --quiet
    leaves out the progress and the table of legs (a success prints its one-line result only)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEGWORK_")}
    env["LEGWORK_CACHE"] = str(tmp_path / "cache.sqlite")
    base = ["pipeline.generate", "--difficulty", "easy", "--count", "1", "--task-runner", "local"]
    # a seed page with no fact to extract: every attempt is rejected at plan (20 attempts fail as 200 do)
    for quiet in ([], ["--quiet"]):
        failed = run_here([*base, "--seed-title", "Direct representation", "--set", "generation.attempts_per_leg=20",
                      "--out", str(tmp_path / f"seed{len(quiet)}"), *quiet], env)
        assert failed.returncode == 1, failed.stderr[-2000:]
        assert "generation incomplete" in failed.stderr and "has no extractable fact" in failed.stderr, quiet
        assert failed.stdout == ""
    # a seed title the snapshot does not have: refused before the first attempt, with near titles
    absent = run_here([*base, "--quiet", "--seed-title", "Brave New Worlds Zq", "--out", str(tmp_path / "absent")], env)
    assert absent.returncode == 2 and "no page 'Brave New Worlds Zq'" in absent.stderr, absent.stderr[-2000:]
    assert "Brave New World" in absent.stderr.split("pages with its words:")[1]
    assert not (tmp_path / "absent" / "rejected.parquet").exists()
    refused = run_here([*base, "--count", "0", "--quiet", "--out", str(tmp_path / "none")], env)
    assert refused.returncode == 2 and "--count must be at least 1" in refused.stderr
    bad = run_here([*base, "--quiet", "--faults", "rate=7", "--out", str(tmp_path / "none")], env)
    assert bad.returncode == 2 and "configuration error" in bad.stderr and "rate" in bad.stderr
    # another run's folder: refused, naming the argument, under --quiet too
    ok = run_here([*base, "--quiet", "--out", str(tmp_path / "ok")], env)
    assert ok.returncode == 0, ok.stderr[-2000:]
    # success under --quiet: the one-line result, no table, no progress
    assert ok.stdout.startswith("accepted 1 legs") and len(ok.stdout.splitlines()) == 1 and ok.stderr == ""
    loud = run_here([*base, "--out", str(tmp_path / "ok")], env)   # resumed: the table again
    assert loud.returncode == 0 and "accepted 1 legs" in loud.stdout and "Legwork legs in" in loud.stdout
    other = run_here([*base, "--count", "2", "--quiet", "--out", str(tmp_path / "ok")], env)
    assert other.returncode != 0 and "other arguments" in other.stderr and "count" in other.stderr
