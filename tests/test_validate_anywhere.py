"""A dataset checks anywhere: `validate` and the report's invariant table work from the legs
alone. Runs are generated with one cache and validated through the CLI with another, empty
one; tampered copies (one response byte, a `live` entry) show what is re-executed and what is
only checked against the trace."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from in_process import run_module

from pipeline import validate as validate_cli
from pipeline.cache import canonical_json
from pipeline.config import load_settings
from pipeline.invariants import MACHINE_FIELDS, REEXECUTABLE_PROVENANCES
from pipeline.report import __main__ as report_cli
from pipeline.tools.registry import Toolbox

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"golden traces: (\d+) calls re-executed, (\d+) checked against the trace only"
                     r"(?:, (\d+) answered from the generator's cache)?")


def run_cli(module: str, *args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "LEGWORK_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("LEGWORK_CONFIG", None)
    return run_module(module, *args, env=env, cwd=ROOT)


def validate(run: Path, *flags: str, cache: Path) -> tuple[int, str]:
    """``python -m pipeline.validate`` in this process (the subprocess path is tested once)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = validate_cli.main([str(run), *flags, "--cache", str(cache)])
    return code, out.getvalue()


def generate(out: Path, cache: Path, *args: str) -> Path:
    done = run_cli("pipeline.generate", *args, "--task-runner", "local", "--out", str(out), cache=cache)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An easy DAG run and a medium DAG run, both generated with cache A."""
    root = tmp_path_factory.mktemp("anywhere")
    cache_a = root / "a.sqlite"
    # seed 4242: one of its legs runs python_execute_code (test_the_sandbox_may_describe_another_machine)
    easy = generate(root / "easy", cache_a, "--difficulty", "easy", "--variant", "linear", "--count", "5",
                    "--seed", "4242")
    medium = generate(root / "medium", cache_a, "--difficulty", "medium", "--variant", "dag", "--count", "1")
    assert cache_a.is_file()
    return {"root": root, "cache_a": cache_a, "easy": easy, "medium": medium}


def legs_rows(run: Path) -> tuple[pa.Schema, list[dict]]:
    table = pq.read_table(run / "legs.parquet")
    return table.schema, table.to_pylist()


def copy_with(run: Path, dest: Path, edit) -> Path:
    """A copy of the run whose legs.parquet has ``edit(row_index, leg_dict)`` applied."""
    shutil.copytree(run, dest, ignore=shutil.ignore_patterns("artifacts"))
    schema, rows = legs_rows(run)
    for i, row in enumerate(rows):
        leg = json.loads(row["leg_json"])
        edit(i, leg)
        row["leg_json"] = canonical_json(leg)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), dest / "legs.parquet")
    return dest


def summary_numbers(stdout: str) -> tuple[int, int, int]:
    found = SUMMARY.search(stdout)
    assert found, stdout
    return int(found.group(1)), int(found.group(2)), int(found.group(3) or 0)


def traced_calls(run: Path) -> int:
    """Counted from the flat column generation wrote, independently of the validator."""
    return sum(r["n_tool_calls"] for r in legs_rows(run)[1])


@pytest.mark.parametrize("name", ["easy", "medium"])
def test_a_run_validates_fully_with_another_empty_cache(runs, name, tmp_path):
    """The easy run through a separate process (LEGWORK_CACHE=B, as a user runs it), the medium
    DAG run through the same CLI entry point in this process (--cache B)."""
    cache_b = tmp_path / "b.sqlite"
    if name == "easy":
        done = run_cli("pipeline.validate", str(runs[name]), cache=cache_b)
        code, stdout = done.returncode, done.stdout + done.stderr
    else:
        code, stdout = validate(runs[name], cache=cache_b)
    assert code == 0, stdout
    n = len(legs_rows(runs[name])[1])
    assert f"{n} legs, 0 failing" in stdout
    assert f"3_expressions={n}/{n}" in stdout
    every = sum(len(json.loads(r["leg_json"])["trace"]) for r in legs_rows(runs[name])[1])
    assert every == traced_calls(runs[name]) > 0
    assert summary_numbers(stdout) == (every, 0, 0)     # no live call: all re-executed
    assert not cache_b.exists()                         # validation neither needs nor writes a cache


def test_one_tampered_response_byte_fails_naming_the_leg_and_call(runs, tmp_path):
    target = {}

    def flip_one_byte(i, leg):
        if i != 1:
            return
        n = next(k for k, t in enumerate(leg["trace"]) if t["tool"] == "fetch_webpage")
        text = leg["trace"][n]["response"]
        at = text.index('"title":"') + len('"title":"')        # a letter of the page title
        leg["trace"][n]["response"] = text[:at] + ("X" if text[at] != "X" else "Y") + text[at + 1:]
        target.update(leg=leg["leg_id"], call=n, stop=leg["trace"][n]["stop"], step=leg["trace"][n]["step"])

    bad = copy_with(runs["easy"], tmp_path / "bad", flip_one_byte)
    code, stdout = validate(bad, cache=tmp_path / "b.sqlite")
    assert code == 1
    fails = [line for line in stdout.splitlines() if line.startswith("FAIL")]
    assert fails == [f"FAIL {target['leg']}: invariant 3_expressions: call {target['call']} "
                     f"(stop {target['stop']} step {target['step']}, fetch_webpage): response differs from the trace"
                     + fails[0].split("response differs from the trace", 1)[1]]
    assert "5 legs, 1 failing" in stdout


def make_live(entry: dict, value_edit=None) -> None:
    """Turn a trace entry into a consistent record of a live call (provenance in entry and response)."""
    data = json.loads(entry["response"])
    data["provenance"] = "live"
    if value_edit:
        value_edit(data)
    entry["response"], entry["provenance"] = canonical_json(data), "live"


def test_a_live_entry_is_checked_against_the_trace_not_re_executed(runs, tmp_path):
    def to_live(i, leg):
        if i == 0:
            make_live(leg["trace"][-1])

    live = copy_with(runs["easy"], tmp_path / "live", to_live)
    code, stdout = validate(live, cache=tmp_path / "b.sqlite")
    assert code == 0, stdout
    assert summary_numbers(stdout) == (traced_calls(runs["easy"]) - 1, 1, 0)


def test_a_live_answer_inconsistent_with_its_traced_value_fails(runs, tmp_path):
    """The live response is not asked again, but the value the stop extracts from it must be
    the one the trace recorded."""
    target = {}

    def inconsistent(i, leg):
        if i != 0:
            return
        n = next(k for k, t in enumerate(leg["trace"])
                 if isinstance(t["value"], (int, float)) and not isinstance(t["value"], bool)
                 and t["provenance"] in REEXECUTABLE_PROVENANCES)
        leg["trace"][n]["value"] = leg["trace"][n]["value"] + 1
        make_live(leg["trace"][n])
        target.update(leg=leg["leg_id"], call=n)

    bad = copy_with(runs["easy"], tmp_path / "bad", inconsistent)
    code, stdout = validate(bad, cache=tmp_path / "b.sqlite")
    assert code == 1
    assert re.search(rf"FAIL {target['leg']}: invariant 3_expressions: call {target['call']} \(.*\) yields .*,"
                     r" the trace says", stdout), stdout
    assert summary_numbers(stdout)[1] == 1


def test_the_sandbox_may_describe_another_machine(runs, tmp_path):
    """python_execute_code names its isolation and interpreter: a trace made elsewhere differs
    there and still validates (with a note), but not when stdout differs."""
    _, rows = legs_rows(runs["easy"])
    assert any('"tool":"python_execute_code"' in r["leg_json"] for r in rows), \
        "the easy run has no sandbox call: choose a --seed in the fixture whose legs have one"

    def elsewhere(stdout_too):
        def edit(i, leg):
            for t in leg["trace"]:
                if t["tool"] == "python_execute_code":
                    data = json.loads(t["response"])
                    data.update(isolation="none", source="local sandbox (no isolation), CPython 3.11.0")
                    if stdout_too:
                        data["stdout"] = data["stdout"] + " "
                    t["response"] = canonical_json(data)
        return edit

    code, stdout = validate(copy_with(runs["easy"], tmp_path / "ok", elsewhere(False)), cache=tmp_path / "b.sqlite")
    assert code == 0, stdout
    assert "note: " in stdout and "same answer, other machine" in stdout
    code, stdout = validate(copy_with(runs["easy"], tmp_path / "bad", elsewhere(True)), cache=tmp_path / "b.sqlite")
    assert code == 1 and "python_execute_code): response differs" in stdout


def test_the_generator_cache_is_an_optional_speed_up(runs, tmp_path):
    every = traced_calls(runs["medium"])
    code, stdout = validate(runs["medium"], "--from-cache", cache=runs["cache_a"])
    assert code == 0 and summary_numbers(stdout) == (0, 0, every)
    code, stdout = validate(runs["medium"], "--from-cache", cache=tmp_path / "none.sqlite")
    assert code == 0 and summary_numbers(stdout) == (every, 0, 0)
    assert not (tmp_path / "none.sqlite").exists()


def test_report_invariant_table_under_an_empty_cache(runs, tmp_path):
    out = tmp_path / "site"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = report_cli.main([str(runs["easy"]), str(runs["medium"]), "--out", str(out),
                                "--cache", str(tmp_path / "b.sqlite")])
    assert code == 0
    stdout = stdout.getvalue()
    n = len(legs_rows(runs["easy"])[1]) + len(legs_rows(runs["medium"])[1])
    every = traced_calls(runs["easy"]) + traced_calls(runs["medium"])
    assert "0 legs fail an invariant" in stdout
    assert summary_numbers(stdout) == (every, 0, 0)
    index = (out / "index.html").read_text(encoding="utf-8")
    table = index.split('id="invariants"')[1].split("</table>")[0]
    assert re.findall(r"<td>3_expressions</td>\s*<td class=\"n\"><span class=\"ok\">(\d+)/(\d+)</span>", table) \
        == [(str(n), str(n))]
    assert f"Golden traces: {every} calls re-executed, 0 checked against the trace only." in index


def test_a_run_from_another_snapshot_is_named(runs, tmp_path):
    """Page responses depend on the snapshot: validating with another one says so up front."""
    other = copy_with(runs["medium"], tmp_path / "other", lambda i, leg: None)
    info = json.loads((other / "run.json").read_text())
    info["snapshot"] = "0" * 64
    (other / "run.json").write_text(json.dumps(info))
    code, stdout = validate(other, cache=tmp_path / "b.sqlite")
    assert code == 0
    assert "warning: the run was generated on snapshot 000000000000, this one is " in stdout
    code, stdout = validate(runs["medium"], cache=tmp_path / "b.sqlite")
    assert "warning" not in stdout


@pytest.fixture(scope="module")
def checker():
    from pipeline.config import load_settings
    from pipeline.validate import TraceChecker
    with TraceChecker(load_settings(cache_path=Path("/nonexistent/never.sqlite"))) as c:
        yield c


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_changed_character_of_a_computable_response_is_caught(runs, checker, data):
    """Property: whichever leg, call and character is changed, invariant 3 names that call."""
    from pipeline.invariants import check_golden_trace
    from pipeline.model import Leg
    rows = legs_rows(runs["easy"])[1] + legs_rows(runs["medium"])[1]
    leg = Leg.from_json(data.draw(st.sampled_from(rows))["leg_json"])
    assert not check_golden_trace(leg, checker.offline).errors
    # the sandbox's description of its machine may differ (tested above); every other byte counts
    n = data.draw(st.sampled_from([k for k, t in enumerate(leg.trace) if t.tool not in MACHINE_FIELDS]))
    entry = leg.trace[n]
    at = data.draw(st.integers(0, len(entry.response) - 1))
    new = data.draw(st.characters(codec="utf-8").filter(lambda c: c != entry.response[at]))
    entry.response = entry.response[:at] + new + entry.response[at + 1:]
    errors = check_golden_trace(leg, checker.offline).errors
    label = f"call {n} (stop {entry.stop} step {entry.step}, {entry.tool}): response differs from the trace"
    assert any(e.startswith(label) for e in errors), errors


def test_re_execution_follows_the_runs_no_simulated_setting(runs, tmp_path):
    """Under --no-simulated a tool may not answer with (or build on) a simulated value, so the
    re-execution uses the run's setting: a leg with simulated calls then cannot re-execute. (Legs of
    chains of hops take real data first and seldom hold a simulated value, so one leg's first roadblock
    is made a rating of a place no data holds, answered by the simulated provider.)"""
    place = "sim:48.404879:9.976476:cafe:Ulm%20Cafe%201"
    rating = Toolbox(load_settings(env={}, cache_path=tmp_path / "r.sqlite")).call(
        "maps_place_details", {"place_id": place})
    assert rating.provenance == "simulated"

    def with_a_simulated_call(i, leg):
        if i:
            return
        stop = next(s for s in leg["stops"] if s["kind"] == "roadblock")
        stop["tool_chain"] = [{"tool": "maps_place_details", "args": {"place_id": place}, "output_key": "rating",
                               "extract": "rating", "aar_args": None}]
        leg["trace"] = [t for t in leg["trace"] if t["stop"] != stop["index"]] + [{
            "stop": stop["index"], "step": 0, "tool": "maps_place_details", "args": {"place_id": place},
            "response": rating.response_json, "provenance": "simulated", "served_from": "toolbox",
            "value": rating.data["rating"]}]
        leg["trace"].sort(key=lambda t: (t["stop"], t["step"]))
    strict = copy_with(runs["easy"], tmp_path / "strict", with_a_simulated_call)
    info = json.loads((strict / "run.json").read_text())
    info["params"]["no_simulated"] = True
    (strict / "run.json").write_text(json.dumps(info))
    code, stdout = validate(strict, cache=tmp_path / "b.sqlite")
    legs = [json.loads(r["leg_json"]) for r in legs_rows(strict)[1]]
    simulated = {leg["leg_id"] for leg in legs if any(t["provenance"] == "simulated" for t in leg["trace"])}
    assert simulated and code == 1
    for leg_id in simulated:
        assert re.search(rf"FAIL {leg_id}: invariant 3_expressions: re-execution failed: .*simulated", stdout), stdout
        assert f"FAIL {leg_id}: invariant 6_provenance" in stdout
