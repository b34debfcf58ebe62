"""The MCP tool server, driven by the official SDK's own client over stdio and streamable HTTP."""
from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from in_process import run_module
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from pipeline.tools.serve import (
    ANSWER_TOOL,
    CallRefused,
    ServeError,
    _parser,
    check_page_url,
    http_token,
    is_loopback,
    prepare,
)
from pipeline.tools.toollog import truncate

ROOT = Path(__file__).resolve().parent.parent


def server_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEGWORK_")}
    env.update(PYTHONPATH=str(ROOT), LEGWORK_CACHE=str(cache))
    return env


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One generated easy leg and the cache it was recorded in (the server answers from it)."""
    base = tmp_path_factory.mktemp("mcp")
    cache = base / "cache.sqlite"
    from pipeline.export import load_legs
    from pipeline.generate import main as generate
    with pytest.MonkeyPatch.context() as env:   # the generate CLI in this process, without LEGWORK_ variables
        for name in [k for k in os.environ if k.startswith("LEGWORK_")]:
            env.delenv(name)
        assert generate(["--difficulty", "easy", "--count", "1", "--task-runner", "local", "--out", str(base / "run"),
                         "--cache", str(cache), "--quiet"]) == 0
    (leg,) = load_legs(base / "run")
    return {"base": base, "cache": cache, "run": base / "run", "leg": leg}


def stdio_params(world, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "pipeline.tools", "serve", *args],
                                 env=server_env(world["cache"]), cwd=str(ROOT))


def run_client(server, scenario):
    async def main():
        async with Client(server) as client:
            return await scenario(client)
    return anyio.run(main)


def in_process(world, tool: str, args: dict) -> str:
    """The same call computed afresh in this process (no cache), for comparison."""
    from pipeline.config import load_settings
    from pipeline.tools.registry import Toolbox
    return Toolbox(load_settings(env={}), cache=False).call(tool, args).response_json


FAMILY_CALLS = [
    ("maps_elevation", {"locations": {"lat": 48.4, "lng": 9.99}}),  # Ulm (coordinates: no gazetteer load)
    ("fetch_webpage", None),  # the leg's seed page (filled in below)
    ("web_search", None),
    ("weather_historical", {"location": {"lat": 41.85, "lng": -87.65}, "start_date": "2016-01-01"}),
    ("countries_population", {"country": "Germany"}),
    ("stock_historical_price", {"symbol": "AAPL", "date": "2010-01-04"}),
    ("calculator", {"expression": "2**10 + sqrt(16)"}),
    ("python_execute_code", {"code": "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), 2)\n"
                                     "    print('network')\nexcept OSError:\n    print('no network')\nprint(6 * 7)"}),
]
BAD_CALLS = [
    ("maps_geocode", {"addr": "Ulm"}, "invalid arguments"),
    ("maps_elevation", {"locations": {"lat": 95, "lng": 10}}, "invalid arguments"),
    ("teleport", {"to": "Mars"}, "unknown tool"),
    ("fetch_webpage", {"url": "file:///etc/passwd"}, "only Wikipedia page URLs"),
    ("fetch_webpage", {"url": "http://169.254.169.254/wiki/X"}, "only Wikipedia page URLs"),
    ("fetch_webpage", {"url": "https://en.wikipedia.org/wiki/No_such_page_here"}, "not found in the snapshot"),
    ("python_execute_code", {"code": ""}, "invalid arguments"),
]


@pytest.fixture(scope="module")
def session(world):
    """One stdio server (as an MCP client launches it) and one client session making every call the
    tests below look at: the server starts in seconds, so the tests share it."""
    from pipeline.race import trial_dir_name, worked_solution

    leg = world["leg"]
    family = [(name, args if args is not None else {"fetch_webpage": {"url": leg.seed_url},
                                                    "web_search": {"query": leg.seed_title, "num_results": 3}}[name])
              for name, args in FAMILY_CALLS]
    trial_id = trial_dir_name("oracle", leg.leg_id, 0)
    meta = {"legwork/trial_id": trial_id, "legwork/leg_id": leg.leg_id, "legwork/agent": "oracle"}
    answer = str(leg.passcode)
    runs = world["base"] / "served"

    async def scenario(client):
        out = {"tools": (await client.list_tools()).tools, "instructions": client.instructions}
        out["family"] = [await client.call_tool(name, args) for name, args in family]
        out["bad"] = [await client.call_tool(name, args) for name, args, _ in BAD_CALLS]
        out["escape"] = await client.call_tool("calculator", {"expression": "1+1"},
                                               meta={"legwork/trial_id": "../escape"})
        out["foreign_leg"] = await client.call_tool("calculator", {"expression": "1"},
                                                    meta={"legwork/leg_id": "leg_nope"})
        out["after"] = await client.call_tool("calculator", {"expression": "1+1"})  # still serving
        out["race"] = [await client.call_tool(t.tool, t.args, meta=meta) for t in leg.trace]
        out["submitted"] = await client.call_tool(ANSWER_TOOL, {"answer": answer,
                                                                "message": worked_solution(leg, answer)}, meta=meta)
        # A weaker agent: the first half of the calls and a wrong answer (scores strictly between 0 and 1).
        partial = {"legwork/trial_id": f"partial-{leg.leg_id}", "legwork/leg_id": leg.leg_id, "legwork/agent": "half"}
        for t in leg.trace[: len(leg.trace) // 2]:
            await client.call_tool(t.tool, t.args, meta=partial)
        await client.call_tool(ANSWER_TOOL, {"answer": str((leg.passcode + 1) % 10)}, meta=partial)
        return out

    server = stdio_params(world, "--dataset", str(world["run"]), "--log-dir", str(runs), "--answer-tool")
    results = run_client(server, scenario)
    return {**results, "family_calls": family, "runs": runs, "trial_id": trial_id, "answer": answer}


# ---- tools/list ------------------------------------------------------------------------------
def test_lists_the_same_tools_and_schemas_as_tools_list(world, session):
    listed = subprocess.run([sys.executable, "-m", "pipeline.tools", "list"], check=True, capture_output=True,
                            text=True, env=server_env(world["cache"]), cwd=ROOT, timeout=60)
    expected = [entry["function"] for entry in json.loads(listed.stdout)]
    manifest = json.loads((ROOT / "snapshots" / "default" / "manifest.json").read_text())
    assert f"snapshot {manifest['hash']}, data version world-" in session["instructions"]  # what it serves, stated
    tools = session["tools"]
    assert [t.name for t in tools] == [e["name"] for e in expected] + [ANSWER_TOOL]  # the answer tool: opt-in
    for tool, entry in zip(tools, expected):
        assert tool.description == entry["description"]
        assert tool.input_schema == entry["parameters"]


# ---- one call per family --------------------------------------------------------------------------
def test_one_call_per_family_answers_like_the_registry(world, session):
    expected = {name: in_process(world, name, args) for name, args in session["family_calls"]}
    for (name, _), result in zip(session["family_calls"], session["family"]):
        assert not result.is_error, (name, result.content)
        assert result.content[0].text == truncate(expected[name], 8000), name
    answers = {name: json.loads(text) for name, text in expected.items()}
    assert answers["maps_elevation"]["elevation_m"] == 502.0  # pvlib's grid at Ulm (measured independently)
    assert answers["fetch_webpage"]["title"] == world["leg"].seed_title
    assert answers["countries_population"]["population"] > 80_000_000
    assert answers["calculator"]["numeric"] == 1028
    sandbox = answers["python_execute_code"]
    assert sandbox["stdout"] == "no network\n42\n" and sandbox["isolation"] != "none"


# ---- agent code sees nothing of the server's host ---------------------------------------------------
ANSWER_PROBE = """import json, os, sqlite3
import pyarrow.parquet as pq
for name, read in [
    ("beside", lambda: json.load(open({beside!r}))["passcode"]),
    ("beside-relative", lambda: json.load(open("../answers.json"))["passcode"]),
    ("in-cwd", lambda: json.load(open({in_cwd!r}))["passcode"]),
    ("dataset", lambda: pq.read_table({legs!r}).column("passcode").to_pylist()),
    ("cache", lambda: sqlite3.connect("file:" + {cache!r} + "?mode=ro", uri=True)
                      .execute("SELECT count(*) FROM sqlite_master").fetchall()),
    ("listing", lambda: os.listdir({cwd!r})),
]:
    try:
        print(name, "ESCAPED", read())
    except Exception as exc:
        print(name, "blocked", type(exc).__name__)
"""


def test_agent_code_cannot_read_the_answers_beside_the_server(world):
    """A leg raced through the server, its answer file (JSON with the passcode) beside the server's
    working folder and in it, the served dataset and the cache at hand: python_execute_code through
    the server reads none of them, where the same code run by the server's user reads them all.
    Outside /tmp on purpose: the sandbox's private /tmp hid /tmp before the root was rebuilt."""
    from pipeline.race import trial_dir_name

    leg = world["leg"]
    base = Path(tempfile.mkdtemp(prefix="legwork-test-mcp-", dir="/var/tmp"))
    try:
        cwd, run = base / "server", base / "run"
        cwd.mkdir()
        shutil.copytree(world["run"], run)
        cache = base / "cache.sqlite"
        shutil.copy(world["cache"], cache)
        answer = json.dumps({"leg_id": leg.leg_id, "passcode": leg.passcode})
        (base / "answers.json").write_text(answer)
        (cwd / "answers.json").write_text(answer)
        code = ANSWER_PROBE.format(beside=str(base / "answers.json"), in_cwd=str(cwd / "answers.json"),
                                   legs=str(run / "legs.parquet"), cache=str(cache), cwd=str(cwd))
        control = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False,
                                 timeout=120)
        assert control.stdout.count("ESCAPED") == 6, control.stdout + control.stderr
        assert f"beside ESCAPED {leg.passcode}\n" in control.stdout

        meta = {"legwork/trial_id": trial_dir_name("prober", leg.leg_id, 0), "legwork/leg_id": leg.leg_id,
                "legwork/agent": "prober"}

        async def scenario(client):
            first = leg.trace[0]
            raced = await client.call_tool(first.tool, first.args, meta=meta)  # racing the leg
            return raced, await client.call_tool("python_execute_code", {"code": code}, meta=meta)

        env = {**server_env(world["cache"]), "LEGWORK_CACHE": str(cache)}
        server = StdioServerParameters(command=sys.executable, env=env, cwd=str(cwd),
                                       args=["-m", "pipeline.tools", "serve", "--dataset", str(run),
                                             "--log-dir", str(base / "runs")])
        raced, probed = run_client(server, scenario)
        assert not raced.is_error and not probed.is_error, probed.content
        data = json.loads(probed.content[0].text)
        assert data["isolation"] != "none" and data["exit_code"] == 0, data
        assert "ESCAPED" not in data["stdout"] and data["stdout"].count(" blocked ") == 6, data["stdout"]
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ---- errors are tool errors, never crashes ---------------------------------------------------------
def test_bad_arguments_come_back_as_tool_errors(world, session):
    for (name, _, reason), result in zip(BAD_CALLS, session["bad"]):
        assert result.is_error, name
        assert reason in result.content[0].text, (name, result.content[0].text)
    assert session["escape"].is_error and "trial id" in session["escape"].content[0].text
    assert session["foreign_leg"].is_error and "not in the served dataset" in session["foreign_leg"].content[0].text
    assert not session["after"].is_error and json.loads(session["after"].content[0].text)["numeric"] == 2
    runs = session["runs"]
    trials = sorted(p.name for p in runs.iterdir())
    assert len(trials) == 3 and session["trial_id"] in trials  # the session's own trial and the two named ones
    assert not (runs.parent / "escape").exists()
    (own,) = [runs / t for t in trials if t.startswith("session-")]
    logged = [json.loads(line) for line in (own / "tool_log.jsonl").read_text().splitlines()]
    names = [n for n, _ in session["family_calls"]] + [n for n, _, _ in BAD_CALLS] + ["calculator"]
    assert [entry["tool"] for entry in logged] == names
    assert [entry["success"] for entry in logged] == [True] * len(FAMILY_CALLS) + [False] * len(BAD_CALLS) + [True]


def test_page_urls_are_confined_to_wiki_pages():
    for ok in ("https://en.wikipedia.org/wiki/Ulm", "http://de.wikipedia.org/wiki/Ulm", "Ray Charles"):
        check_page_url(ok)
    for bad in ("file:///etc/passwd", "https://example.com/wiki/Ulm", "https://en.wikipedia.org.evil.com/wiki/X",
                "https://user:pw@en.wikipedia.org/wiki/X", "https://en.wikipedia.org:8080/wiki/X", "gopher://x"):
        with pytest.raises(CallRefused):
            check_page_url(bad)


# ---- the served snapshot and the dataset ---------------------------------------------------------------
def test_refuses_a_dataset_built_on_another_snapshot(world, tmp_path):
    service, lines = prepare(_parser().parse_args(["--dataset", str(world["run"])]))
    manifest = json.loads((service.settings.snapshot_dir / "manifest.json").read_text())
    assert service.served.snapshot_hash == manifest["hash"]
    assert manifest["hash"] in lines[0] and "data version world-" in lines[0]
    assert "= served" in lines[1]

    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(world["run"] / "legs.parquet", other / "legs.parquet")
    run = json.loads((world["run"] / "run.json").read_text())
    (other / "run.json").write_text(json.dumps({**run, "snapshot": "0" * 64}))
    with pytest.raises(ServeError, match="another snapshot|built on snapshot 000000000000"):
        prepare(_parser().parse_args(["--dataset", str(other)]))
    _, lines = prepare(_parser().parse_args(["--dataset", str(other), "--allow-other-snapshot"]))
    assert "allowed by --allow-other-snapshot" in lines[1]
    # Without run.json the golden traces say which snapshot the pages came from.
    (other / "run.json").unlink()
    _, lines = prepare(_parser().parse_args(["--dataset", str(other)]))
    assert "from the golden traces" in lines[1] and "= served" in lines[1]

    # A downloaded hub config (its Parquet shards) is a dataset too: the traces name the snapshot.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.export import load_legs
    from pipeline.export.hub import leg_record
    shards = tmp_path / "release" / "legs_dag"
    shards.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([leg_record(world["leg"])]), shards / "test-00000-of-00001.parquet")
    assert load_legs(shards) == [world["leg"]]
    _, lines = prepare(_parser().parse_args(["--dataset", str(shards)]))
    assert "1 legs" in lines[1] and "from the golden traces" in lines[1] and "= served" in lines[1]
    with pytest.raises(ServeError, match="leg_nope is not in the dataset"):
        prepare(_parser().parse_args(["--dataset", str(world["run"]), "--leg-id", "leg_nope"]))


# ---- HTTP and the bearer token --------------------------------------------------------------------------
def test_token_is_required_off_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.org")
    assert http_token(_parser().parse_args(["--http"])) is None
    assert len(http_token(_parser().parse_args(["--http", "--host", "0.0.0.0"]))) >= 32
    assert http_token(_parser().parse_args(["--http", "--require-token"])) is not None


def _stderr_lines(proc) -> queue.Queue:
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in proc.stderr:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def test_streamable_http_on_loopback_with_a_required_token(world, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.tools", "serve", "--http", "--port", "0",
                             "--require-token", "--log-dir", str(tmp_path / "runs")],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            env=server_env(world["cache"]), cwd=ROOT)
    try:
        lines = _stderr_lines(proc)
        token = url = None
        while url is None:
            line = lines.get(timeout=60)
            if line.startswith("bearer token"):
                token = line.rsplit(" ", 1)[1].strip()
            elif line.startswith("serving MCP"):
                url = line.split(" at ", 1)[1].strip()
        assert token and url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        refused = urllib.request.Request(url, data=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "Accept": "application/json, text/event-stream"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(refused, timeout=30)
        assert err.value.code == 401

        async def main():
            async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    tools = (await client.list_tools()).tools
                    result = await client.call_tool("maps_elevation", {"locations": {"lat": 48.4, "lng": 9.99}},
                                                    meta={"legwork/trial_id": "http-trial"})
                # A handshake-era client has an MCP session: its unnamed calls form that session's trial.
                async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                    for _ in range(2):
                        await client.call_tool("calculator", {"expression": "1+1"})
                return tools, result

        tools, result = anyio.run(main)
        assert len(tools) == 22 and not result.is_error
        assert json.loads(result.content[0].text)["elevation_m"] == 502.0
        logged = (tmp_path / "runs" / "http-trial" / "tool_log.jsonl").read_text().splitlines()
        assert [json.loads(line)["tool"] for line in logged] == ["maps_elevation"]
        (legacy,) = [d for d in (tmp_path / "runs").iterdir() if d.name.startswith("session-")]
        assert len((legacy / "tool_log.jsonl").read_text().splitlines()) == 2
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# ---- a race through the server scores like one in process ----------------------------------------------------
def _score(world, runs: Path, out: Path) -> tuple[dict, list[dict]]:
    done = run_module("pipeline.score", "--legs", str(world["run"]), "--runs", str(runs), "--out", str(out),
                      env=server_env(world["cache"]), cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    trials = [json.loads(line) for line in out.with_name(out.stem + ".trials.jsonl").read_text().splitlines()]
    return report, trials


def _timeless(obj):
    if isinstance(obj, dict):
        return {k: _timeless(v) for k, v in obj.items() if k not in ("wall_time_s", "runs")}
    if isinstance(obj, list):
        return [_timeless(v) for v in obj]
    return obj


def test_a_trial_through_the_server_scores_like_the_same_calls_in_process(world, session, tmp_path):
    from pipeline.config import load_settings
    from pipeline.race import ToolLog, call_tool, run_trial
    from pipeline.tools.registry import Toolbox

    leg = world["leg"]
    local = run_trial(leg, "oracle", tmp_path / "local", toolbox=Toolbox(load_settings(cache_path=world["cache"])))
    submitted = session["submitted"]
    assert not submitted.is_error and json.loads(submitted.content[0].text)["answer"] == session["answer"]
    assert [r.content[0].text for r in session["race"]] == [truncate(t.response, 8000) for t in leg.trace]

    served_dir = session["runs"] / session["trial_id"]
    assert local.name == served_dir.name
    served_log = [json.loads(x) for x in (served_dir / "tool_log.jsonl").read_text().splitlines()]
    local_log = [json.loads(x) for x in (local / "tool_log.jsonl").read_text().splitlines()]
    assert [{k: v for k, v in e.items() if k != "ts"} for e in served_log] == \
        [{k: v for k, v in e.items() if k != "ts"} for e in local_log]

    # The weaker agent's same calls made in process, logged by race's writer, in race's trial layout.
    half = tmp_path / "local" / f"partial-{leg.leg_id}"
    log = ToolLog(half / "tool_log.jsonl")
    toolbox = Toolbox(load_settings(cache_path=world["cache"]))
    for t in leg.trace[: len(leg.trace) // 2]:
        call_tool(toolbox, log, t.tool, t.args)
    (half / "trial.json").write_text(json.dumps({"leg_id": leg.leg_id, "agent": "half", "steps": log.calls,
                                                 "answer": str((leg.passcode + 1) % 10),
                                                 "tool_log": "tool_log.jsonl"}))

    only = tmp_path / "served"
    for name in (served_dir.name, half.name):  # the two race trials (not the session's own trial)
        shutil.copytree(session["runs"] / name, only / name)
    local_report, local_trials = _score(world, tmp_path / "local", tmp_path / "local.json")
    served_report, served_trials = _score(world, only, tmp_path / "served.json")
    assert {g["agent"]: g["fa"] for g in local_report["groups"]} == {"oracle": 1, "half": 0}
    half_scores = next(t for t in local_trials if t["agent"] == "half")
    assert half_scores["rcr"] < 1 and half_scores["n_calls"] == len(leg.trace) // 2, half_scores
    assert _timeless(served_report) == _timeless(local_report)
    assert _timeless(served_trials) == _timeless(local_trials)
