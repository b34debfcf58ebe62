"""The agent executor, run as agents run it: one subprocess per call."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.tools.spec import TOOLS, openai_schema

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*argv: str, env_extra: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEGWORK_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "pipeline.tools", *argv], check=False, capture_output=True,
                          text=True, env=env, cwd=cwd or ROOT, timeout=60)


@pytest.fixture
def cache_args(tmp_path):
    return ["--cache", str(tmp_path / "cache.sqlite")]


def test_list_prints_every_schema_in_openai_form():
    done = run_cli("list")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [entry["function"]["name"] for entry in listed] == list(TOOLS)
    assert listed == [openai_schema(name) for name in TOOLS]


def test_call_prints_the_result(cache_args):
    done = run_cli(*cache_args, "call", "python_execute_code", '{"code": "print(6 * 7)"}')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["stdout"] == "42\n" and result["provenance"] == "offline-data"


def test_aar_style_call_without_the_call_word(cache_args):
    done = run_cli(*cache_args, "python_generate_code", '{"task": "sum of 2 and 3"}')
    assert done.returncode == 0, done.stderr
    assert "sum(numbers)" in json.loads(done.stdout)["code"]


def test_unknown_tool_exits_2_with_one_line(cache_args):
    done = run_cli(*cache_args, "call", "teleport", '{"to": "Mars"}')
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "unknown tool 'teleport'" in done.stderr


def test_a_snapshot_that_is_not_there_is_the_users_error_not_the_tools(tmp_path, cache_args):
    """Exit 2 and one line (a setting to fix), not a tool error's exit 1 with JSON for the agent to read."""
    done = run_cli(*cache_args, "--snapshot", str(tmp_path / "nowhere"), "call", "web_search", '{"query": "Nile"}')
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and f"snapshot not found: {tmp_path / 'nowhere'}" in done.stderr
    done = run_cli("--cache", str(tmp_path), "call", "calculator", '{"expression": "1+1"}')   # a folder: no cache
    assert done.returncode == 2 and f"the call cache {tmp_path} cannot be used" in done.stderr


def test_invalid_json_exits_2(cache_args):
    done = run_cli(*cache_args, "call", "maps_geocode", '{"address": "Ulm"')
    assert done.returncode == 2
    assert "not valid JSON" in done.stderr and done.stderr.count("\n") == 1


def test_schema_violation_exits_2(cache_args):
    done = run_cli(*cache_args, "call", "maps_elevation", '{"locations": {"lat": 95, "lng": 10}}')
    assert done.returncode == 2
    assert "maps_elevation: invalid arguments" in done.stderr and done.stderr.count("\n") == 1
    done = run_cli(*cache_args, "call", "python_execute_code", '["print(1)"]')
    assert done.returncode == 2 and "must be a JSON object" in done.stderr


def test_tool_error_exits_1_with_json(cache_args):
    done = run_cli(*cache_args, "call", "python_generate_code", '{"task": "write me a poem"}')
    assert done.returncode == 1
    assert "no offline generator" in json.loads(done.stdout)["error"]


def test_long_output_is_shortened_inside_its_json(cache_args):
    """A long result is shortened inside its JSON, never cut as text: the output parses, fits the cut and
    says what was left out; the short fields keep their values."""
    code = json.dumps({"code": "print('y' * 20000)"})
    done = run_cli(*cache_args, "call", "python_execute_code", code)
    assert done.returncode == 0
    printed = done.stdout.rstrip("\n")
    full = run_cli(*cache_args, "--max-chars", "1000000", "call", "python_execute_code", code).stdout.rstrip("\n")
    assert len(full) > 20000 and json.loads(full)["stdout"] == "y" * 20000 + "\n"
    assert len(printed) <= 8000
    shown = json.loads(printed)
    assert shown["stdout"].startswith("y" * 7000) and len(shown["stdout"]) < 8000
    assert shown["shortened"] == {"stdout": f"the first {len(shown['stdout']) - 2} of 20001 characters"}
    assert all(shown[k] == v for k, v in json.loads(full).items() if k != "stdout")


def test_options_after_call_and_a_long_page_at_the_default_cut(tmp_path, cache_args):
    """``call TOOL JSON --max-chars N --log F`` reads as the options before ``call`` (blind race 14); a long
    page printed at the default cut is strict JSON that shows its section titles (Asia, issue 33)."""
    log = tmp_path / "log.jsonl"
    after = run_cli("call", "fetch_webpage", '{"url": "Asia"}', "--max-chars", "8000", "--log", str(log), *cache_args)
    before = run_cli(*cache_args, "--max-chars=8000", "call", "fetch_webpage", '{"url": "Asia"}')
    assert after.returncode == before.returncode == 0, after.stderr
    assert after.stdout == before.stdout and len(after.stdout.rstrip("\n")) <= 8000
    page = json.loads(after.stdout)
    assert [c["title"] for c in page["contents"]][-1] == "See also" and page["infobox"]
    assert json.loads(log.read_text())["tool"] == "fetch_webpage"
    small = run_cli(*cache_args, "call", "web_search", '{"query": "capital city", "num_results": 50}', "--max-chars", "1500")
    found = json.loads(small.stdout)
    assert len(small.stdout.rstrip("\n")) <= 1500 and found["next_offset"] == len(found["results"]) < 50
    pretty = run_cli(*cache_args, "call", "fetch_webpage", '{"url": "Asia"}', "--pretty")
    assert json.loads(pretty.stdout)["title"] == "Asia" and len(pretty.stdout.rstrip("\n")) <= 8000


def test_a_cut_object_keeps_its_short_fields_in_key_order_and_its_length():
    from pipeline.cache import canonical_json
    from pipeline.tools.toollog import short_fields_first
    data = {"lead": "x" * 500, "title": "Algeria", "sections": [{"text": "y" * 300}], "url": "https://e/A"}
    text = canonical_json(data)
    shown = short_fields_first(text)
    assert len(shown) == len(text) and json.loads(shown) == data
    assert list(json.loads(shown)) == ["title", "url", "lead", "sections"]
    assert short_fields_first("[1, 2]") == "[1, 2]" and short_fields_first("not json") == "not json"


def test_log_lines(tmp_path, cache_args):
    log = tmp_path / "logs" / "tool_log.jsonl"
    run_cli(*cache_args, "--log", str(log), "call", "python_execute_code", '{"code": "print(1)"}')
    run_cli(*cache_args, "--log", str(log), "call", "fetch_webpage",
            '{"url": "https://en.wikipedia.org/wiki/Ulm"}', env_extra={"LEGWORK_SNAPSHOT": str(tmp_path / "none")})
    run_cli(*cache_args, "--log", str(log), "call", "nope", "{}")
    # The environment variable works too.
    run_cli(*cache_args, "call", "python_generate_code", '{"task": "sum of 1 and 2"}',
            env_extra={"LEGWORK_TOOL_LOG": str(log)})
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["tool"] for line in lines] == ["python_execute_code", "fetch_webpage", "nope",
                                                "python_generate_code"]
    first = lines[0]
    assert set(first) == {"tool", "args", "success", "result_preview", "result_len", "ts"}
    assert first["args"] == {"code": "print(1)"} and first["success"] is True
    assert json.loads(first["result_preview"])["stdout"] == "1\n"
    assert first["result_len"] == len(first["result_preview"])
    assert abs(first["ts"] - time.time()) < 120
    assert lines[1]["url"] == "https://en.wikipedia.org/wiki/Ulm" and lines[1]["success"] is False
    assert lines[2]["success"] is False
    assert lines[3]["success"] is True


def test_replay_backend_answers_only_from_the_cache(cache_args):
    args = '{"code": "print(123)"}'
    missed = run_cli(*cache_args, "--backend", "replay", "call", "python_execute_code", args)
    assert missed.returncode == 1 and "replay: no recorded tool call" in missed.stderr
    recorded = run_cli(*cache_args, "call", "python_execute_code", args)
    replayed = run_cli(*cache_args, "--backend", "replay", "call", "python_execute_code", args)
    assert replayed.returncode == 0 and replayed.stdout == recorded.stdout


def test_cold_start_is_fast_and_imports_nothing_heavy(cache_args):
    probe = ("import sys, time\nt = time.perf_counter()\nfrom pipeline.tools.cli import main\n"
             "code = main(['--cache', sys.argv[1], 'call', 'python_generate_code', '{\"task\": \"sum of 1 and 2\"}'])\n"
             "heavy = sorted(m for m in ('pyarrow', 'pandas', 'prefect', 'openai') if m in sys.modules)\n"
             "print('HEAVY', heavy)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", probe, cache_args[1]], check=False, capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=60)
    assert done.stdout.strip().endswith("HEAVY []"), done.stdout + done.stderr
    best = min(_timed(run_cli, *cache_args, "call", "python_generate_code", '{"task": "sum of 1 and 2"}')
               for _ in range(3))
    assert best < 1.5


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    done = fn(*args)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - start


# ---- one tool-log writer ---------------------------------------------------------------------------
def test_race_the_cli_and_the_server_share_one_writer():
    from pipeline import race
    from pipeline.tools import cli, serve, toollog

    assert race.ToolLog is toollog.ToolLog and race.call_tool is toollog.call_tool
    assert cli.PREVIEW_CHARS == toollog.PREVIEW_CHARS
    assert "call_tool" in serve.ToolService.call.__code__.co_names  # the server logs through toollog.call_tool


_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                        max_size=3), max_leaves=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(st.sampled_from(sorted(TOOLS)), st.dictionaries(st.text(max_size=8), _json_values,
                                                                                 max_size=3),
                                st.booleans(), st.text(max_size=3000)), min_size=1, max_size=4))
def test_what_the_writer_writes_the_scorer_reads(tmp_path, calls):
    """Round trip through the scorer's own reader (pipeline.scoring.trials), whatever the arguments and text."""
    from pipeline.scoring.trials import read_tool_log
    from pipeline.tools.toollog import PREVIEW_CHARS, ToolLog

    path = tmp_path / f"log-{time.monotonic_ns()}.jsonl"
    log = ToolLog(path)
    for tool, args, ok, text in calls:
        log.record(tool, args, ok, text)
    read = read_tool_log(path)
    assert log.calls == len(calls) == len(read)
    for (tool, args, ok, text), call in zip(calls, read):
        assert (call.tool, call.args, call.success) == (tool, args, ok)
        assert call.result_preview == text[:PREVIEW_CHARS] and call.result_len == len(text)
        assert call.url == (args["url"] if isinstance(args.get("url"), str) else None)


def test_concurrent_writers_never_interleave_lines(tmp_path):
    import threading

    from pipeline.tools.toollog import ToolLog

    path = tmp_path / "tool_log.jsonl"
    logs = [ToolLog(path), ToolLog(path)]  # two writers on one file, as two CLI processes would be

    def write(log, n):
        for i in range(200):
            log.record("calculator", {"expression": f"{n}+{i}"}, True, "x" * (i * 37 % 3000))

    threads = [threading.Thread(target=write, args=(log, n)) for n, log in enumerate(logs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 400 and sorted(line["args"]["expression"] for line in lines) == sorted(
        f"{n}+{i}" for n in range(2) for i in range(200))


def test_serve_takes_the_executors_options(tmp_path):
    done = run_cli("--snapshot", str(tmp_path / "no-snapshot"), "serve")
    assert done.returncode == 2 and f"no snapshot at {tmp_path / 'no-snapshot'}" in done.stderr
