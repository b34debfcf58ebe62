"""python_execute_code and python_generate_code through the tool registry (offline backends)."""
from __future__ import annotations

from datetime import date

import pytest

from pipeline.config import load_settings
from pipeline.tools.registry import Toolbox


@pytest.fixture
def toolbox(tmp_path):
    settings = load_settings(env={}, cache_path=tmp_path / "cache.sqlite", snapshot_dir=tmp_path / "snap",
                             sandbox_allow_unisolated=True)  # the tool path is checked also where no sandbox works
    return Toolbox(settings)


def test_execute_code_returns_output_and_provenance(toolbox):
    result = toolbox.call("python_execute_code", {"code": "print(sum(range(101)))"})
    assert result.ok
    assert result.data["stdout"] == "5050\n"
    assert result.data["exit_code"] == 0 and result.data["timed_out"] is False
    assert result.data["provenance"] == "offline-data"
    assert result.data["source"].startswith("local sandbox (")


def test_execute_code_is_recorded_and_replayed(toolbox, tmp_path):
    first = toolbox.call("python_execute_code", {"code": "print('x' * 3)"})
    second = toolbox.call("python_execute_code", {"code": "print('x' * 3)"})
    assert (first.served_from, second.served_from) == ("computed", "cache")
    assert first.response_json == second.response_json


def test_execute_code_timeout(toolbox):
    result = toolbox.call("python_execute_code", {"code": "import time; time.sleep(30)", "timeout_s": 0.5})
    assert result.data["timed_out"] is True


def _run_generated(toolbox, task: str) -> str:
    generated = toolbox.call("python_generate_code", {"task": task})
    assert generated.ok, generated.data
    assert generated.data["provenance"] == "offline-data"
    executed = toolbox.call("python_execute_code", {"code": generated.data["code"]})
    assert executed.data["exit_code"] == 0, executed.data
    return executed.data["stdout"].strip()


@pytest.mark.parametrize("task, expected", [
    ("What is (17 + 5) * 3?", 66),
    ("Compute the sum of 1,250 and 380.", 1630),
    ("What is the average of 3, 4 and 8?", 5),
    ("Find the product of 6 and 7", 42),
    ("What is the difference between 10 and 3.5?", 6.5),
    ("What is 15% of 240?", 36),
    ("square root of 1764", 42),
    ("Convert 42.195 km to miles", 42.195 / 1.609344),
    ("Convert 212 F to celsius", 100),
    ("convert 3 feet to meters", 0.9144),
    ("How many days are there between 2024-01-15 and 2024-03-01?",
     (date(2024, 3, 1) - date(2024, 1, 15)).days),
])
def test_generated_code_computes_the_answer(toolbox, task, expected):
    assert float(_run_generated(toolbox, task)) == pytest.approx(expected, rel=1e-6)


def test_unknown_task_asks_for_an_llm(toolbox):
    result = toolbox.call("python_generate_code", {"task": "scrape the news and summarise it"})
    assert not result.ok
    assert "no offline generator for this task; configure an LLM" in result.error


def test_generated_code_is_deterministic(toolbox):
    task = {"task": "Convert 10 km to miles"}
    from pipeline.tools.backends.offline.python_tools import generate_code
    assert generate_code(task["task"]) == generate_code(task["task"])
    assert toolbox.call("python_generate_code", task).data["code"] == generate_code(task["task"])[0]
