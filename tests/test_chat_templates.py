"""The ``trajectories`` rows render with the real Qwen2.5, Qwen3 and Llama 3.1 chat templates (TRL
1.16.0's copies, tests/fixtures/chat_templates): no error, no null keys, the arguments of every call
shown to the model as the object it was called with (not JSON text encoded again), the tool schemas
as objects; rows read back through ``datasets`` from the Parquet the export writes. The controls feed
the same checks the defects a careful user hit (null keys, arguments and tools as JSON text) and
expect them found. OpenAI's fine-tuning lines keep their own form (arguments as JSON text)."""
from __future__ import annotations

import json
import os

import pytest

from pipeline.export.hub import ConfigData, write_shards
from pipeline.export.trajectories import (
    CONFIG,
    SPLIT,
    TRAJECTORY_SCHEMA,
    Origin,
    openai_finetune_line,
    storage_row,
    trajectory_rows,
)
from pipeline.tools.spec import openai_schema
from tests.chat_templates import NAMES, null_keys, render, rendered_calls, template_problems
from tests.test_race import small_leg


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[dict]:
    """A leg's row written as the export writes it and read back with ``datasets``."""
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    import datasets
    out = tmp_path_factory.mktemp("traj")
    chats, _ = trajectory_rows([(small_leg(), Origin("run:x", "snap"))])
    write_shards(ConfigData(CONFIG, "trajectories", TRAJECTORY_SCHEMA, [storage_row(r) for r in chats], split=SPLIT),
                 out)
    ds = datasets.load_dataset("parquet", data_files=str(out / CONFIG / f"{SPLIT}-*.parquet"), split="train",
                               cache_dir=str(out / "hf"))
    return ds.to_list()


@pytest.mark.parametrize("name", NAMES)
def test_a_row_renders_with_the_template(rows, name):
    for row in rows:
        assert template_problems(name, row["messages"], row["tools"]) == []
        assert rendered_calls(name, render(name, row["messages"], row["tools"])) == [
            ("fetch_webpage", {"url": "https://en.wikipedia.org/wiki/Ulm"}),
            ("python_execute_code", {"code": "print(1181 * 2)"})]


def test_rows_hold_only_the_keys_each_message_uses(rows):
    [row] = rows
    assert null_keys(row["messages"]) == []
    assert [sorted(m) for m in row["messages"]] == [
        ["content", "role"], ["content", "role"],
        ["role", "tool_calls"], ["content", "name", "role", "tool_call_id"],
        ["role", "tool_calls"], ["content", "name", "role", "tool_call_id"],
        ["content", "role"]]
    assert row["tools"] == [openai_schema("fetch_webpage"), openai_schema("python_execute_code")]


# ---- controls: the defects are found --------------------------------------------------------------
def _with_nulls(messages):
    keys = ("content", "tool_calls", "tool_call_id", "name")
    return [{**{k: None for k in keys}, **m} for m in messages]


def _string_arguments(messages):
    return [{**m, "tool_calls": [{**c, "function": {**c["function"], "arguments": json.dumps(c["function"]["arguments"])}}
                                 for c in m["tool_calls"]]} if m.get("tool_calls") else m for m in messages]


def test_null_keys_are_found_and_break_llama(rows):
    [row] = rows
    msgs = _with_nulls(row["messages"])
    assert any("null key" in p for p in template_problems("qwen2_5", msgs, row["tools"]))
    assert any("TypeError" in p for p in template_problems("llama3_1", msgs, row["tools"]))


@pytest.mark.parametrize("name", ["qwen2_5", "llama3_1"])
def test_arguments_as_json_text_are_found_double_encoded(rows, name):
    [row] = rows
    problems = template_problems(name, _string_arguments(row["messages"]), row["tools"])
    assert any("double-encoded" in p for p in problems), problems


@pytest.mark.parametrize("name", NAMES)
def test_tools_as_json_text_are_found(rows, name):
    [row] = rows
    problems = template_problems(name, row["messages"], json.dumps(row["tools"]))
    assert any("tool schemas" in p or "fails" in p for p in problems), problems


def test_the_openai_finetune_line_keeps_arguments_as_json_text(rows):
    [row] = rows
    line = openai_finetune_line(row)
    assert set(line) == {"messages", "tools", "parallel_tool_calls"} and line["tools"] == row["tools"]
    calls = [c for m in line["messages"] for c in m.get("tool_calls", [])]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == \
        [c["function"]["arguments"] for m in row["messages"] for c in m.get("tool_calls", [])]
    assert all(isinstance(c["function"]["arguments"], str) for c in calls)
    assert all("name" not in m for m in line["messages"] if m["role"] == "tool")
    assert null_keys(line["messages"]) == []
