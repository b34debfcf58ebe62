"""Races on task sets: oracle solves every judged task, random stays near chance, re-runs skip finished
trials, the task scorer's CLI reports per family, and the llm agent talks to a stand-in
OpenAI-compatible server (tokens from ``usage``; ATP gets the prover's error back)."""
import json
import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from in_process import run_module
from live_http import chat_completion, send_json

from pipeline.agents.tasks import race_task_set, run_task_trial, trial_complete
from pipeline.config import load_settings
from pipeline.tasks.common import FAMILIES, build_task_set, read_task_rows
from pipeline.tasks.os.sandbox import sandbox_available
from pipeline.tools.registry import Toolbox

ROOT = Path(__file__).resolve().parents[1]
COUNTS = {"math": 20, "atp": 3, "os": 4, "git": 4}   # tasks per family (--count)
needs_coq = pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc not installed (Debian package coq)")
needs_sandbox = pytest.mark.skipif(not sandbox_available(), reason="OS sandbox needs root, unshare and overlayfs")
FAMILY_PARAMS = [
    "math",
    pytest.param("atp", marks=[needs_coq, pytest.mark.coq]),
    pytest.param("os", marks=needs_sandbox),
    "git",
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tmp_path_factory.mktemp("task-races")
    settings = load_settings(cache_path=base / "cache.sqlite")
    tasks = base / "tasks"
    for family in FAMILIES:
        if family == "os" and not sandbox_available():
            continue
        report = build_task_set(family, COUNTS[family], 0, tasks, settings)
        assert not report.failures, (family, report.failures)
    runs = base / "runs"
    for agent in ("oracle", "random"):
        race_task_set(tasks, agent, runs, settings=settings, seed=3)
    return {"base": base, "settings": settings, "tasks": tasks, "runs": runs, "rows": read_task_rows(tasks)}


def trials(runs: Path, agent: str, family: str) -> list[dict]:
    out = [json.loads(p.read_text()) for p in sorted(runs.glob(f"{agent}-*/trial.json"))]
    return [t for t in out if t["family"] == family]


def success_rate(ts: list[dict]) -> float:
    judged = [t for t in ts if t["judged"]]
    assert judged, "no judged trial"
    return sum(t["success"] is True for t in judged) / len(judged)


@pytest.mark.parametrize("family", FAMILY_PARAMS)
def test_oracle_solves_every_judged_task(world, family):
    ts = trials(world["runs"], "oracle", family)
    assert len(ts) == sum(r["family"] == family for r in world["rows"]) > 0
    assert success_rate(ts) == 1.0
    assert all(t["stop_reason"] != "crash" and "agent_error" not in t for t in ts)
    for t in ts:
        assert (t["success"] is None) == (not t["judged"])
        log = [json.loads(line) for line in (world["runs"] / f"oracle-{t['task_id']}-s3" / "tool_log.jsonl")
               .read_text().splitlines()]
        assert len(log) == t["steps"] > 0
        assert set(log[0]) >= {"tool", "args", "success", "result_preview", "result_len", "ts"}
    if family == "math":
        assert {e["tool"] for t in ts for e in map(json.loads, (world["runs"] / f"oracle-{t['task_id']}-s3" /
                                                                "tool_log.jsonl").read_text().splitlines())} \
            == {"calculator", "math_knowledge_search"}
    if family == "atp":
        unjudged = [t for t in ts if not t["judged"]]
        if shutil.which("lake") is None:
            assert any("no Lean 4 toolchain" in t["judge_note"] for t in unjudged)
        if shutil.which("isabelle") is None:
            assert any("no Isabelle toolchain" in t["judge_note"] for t in unjudged)
        assert all(t["success"] is True for t in ts if t["domain"] == "coq")


@pytest.mark.parametrize("family", FAMILY_PARAMS)
def test_random_is_near_chance(world, family):
    ts = trials(world["runs"], "random", family)
    assert len(ts) == sum(r["family"] == family for r in world["rows"])
    assert success_rate(ts) < 0.3
    again = run_task_trial(next(r for r in world["rows"] if r["family"] == family), "random",
                           world["base"] / "again", seed=3,
                           toolbox=Toolbox(world["settings"]) if family == "math" else None)
    first = json.loads((world["runs"] / again.name / "trial.json").read_text())
    assert json.loads((again / "trial.json").read_text())["answer"] == first["answer"]   # seeded


def test_rerun_skips_finished_trials(world):
    runs = world["runs"]
    before = {p: p.stat().st_mtime_ns for p in runs.glob("oracle-*/trial.json")}
    summary = race_task_set(world["tasks"], "oracle", runs, settings=world["settings"], seed=3)
    assert summary.skipped == len(world["rows"]) == len(summary.trials)
    assert {p: p.stat().st_mtime_ns for p in runs.glob("oracle-*/trial.json")} == before
    # a trial.json cut short is not complete: that trial alone runs again
    victim = next(iter(sorted(before)))
    victim.write_text(victim.read_text()[:40])
    assert not trial_complete(victim)
    summary = race_task_set(world["tasks"], "oracle", runs, settings=world["settings"], seed=3)
    assert summary.skipped == len(world["rows"]) - 1
    assert trial_complete(victim) and json.loads(victim.read_text())["success"] is not False


def test_score_cli_reports_per_family(world):
    out = world["base"] / "report" / "report.json"
    done = run_module("pipeline.score", "--tasks", str(world["tasks"]), "--runs", str(world["runs"]),
                      "--out", str(out), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "by family" in done.stdout
    report = json.loads(out.read_text())
    fams = {(g["agent"], g["family"]): g for g in report["by_family"]}
    present = {r["family"] for r in world["rows"]}
    for family in present:
        oracle, rand = fams[("oracle", family)], fams[("random", family)]
        if oracle["judged"]:
            assert oracle["success_rate"] == 1.0 and oracle["tool_efficiency"] == 1.0
            assert rand["success_rate"] < 0.3
        assert oracle["n"] == rand["n"] == report["tasks_per_family"][family]
    assert fams[("random", "math")]["tool_calls"] == 0 and fams[("oracle", "math")]["mean_steps"] > 1
    assert {g["agent"] for g in report["overall"]} == {"oracle", "random"}
    assert any(g["family"] == "git" and g["difficulty"] == 1 for g in report["by_difficulty"])
    assert any(g["family"] == "math" and g["topic"].startswith("alg.") for g in report["by_topic"])
    assert report["invalid_trials"] == []
    lines = (out.parent / "report.trials.jsonl").read_text().splitlines()
    assert len(lines) == report["n_trials"] == 2 * len(world["rows"])


def test_race_cli_on_tasks(world, tmp_path):
    env = dict(os.environ, LEGWORK_CACHE=str(tmp_path / "cache.sqlite"))
    cmd = ["pipeline.race", "--tasks", str(world["tasks"]), "--agent", "random",
           "--out", str(tmp_path / "runs"), "--limit", "3", "--seed", "1"]
    done = run_module(*cmd, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "runs").glob("random-*-s1/trial.json"))) == 3
    again = run_module(*cmd, cwd=ROOT, env=env)
    assert "3 already complete" in again.stdout
    both = run_module(*cmd, "--legs", "x", cwd=ROOT)
    assert both.returncode == 2 and "not allowed with" in both.stderr


# ---- llm agent against a stand-in server -------------------------------------------------------------
class Scripted(BaseHTTPRequestHandler):
    """OpenAI-compatible /chat/completions replaying ``script`` (one assistant message per turn)."""
    script: ClassVar[list] = []
    requests: ClassVar[list] = []
    status: ClassVar[int] = 200

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        if self.status != 200:
            send_json(self, self.status, {"error": {"message": "bad request", "type": "invalid_request_error"}})
            return
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        message = self.script[min(turn, len(self.script) - 1)]
        send_json(self, 200, chat_completion(body["model"], message,
                                             "tool_calls" if message.get("tool_calls") else "stop",
                                             (100 + turn, 7), cid=f"x{turn}"))

    def log_message(self, *args):
        pass


def tool_call(i: int, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def say(text: str) -> dict:
    return {"role": "assistant", "content": text}


@pytest.fixture()
def llm(tmp_path):
    from pipeline.llm import LLMClient
    server = HTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Scripted.requests, Scripted.status = [], 200
    settings = load_settings(cache_path=tmp_path / "c.sqlite", llm_base_url=f"http://127.0.0.1:{server.server_port}/v1",
                             llm_model="scripted")
    try:
        yield settings, LLMClient(settings, None)
    finally:
        server.shutdown()


def run_llm_trial(world, llm, row, script, name):
    settings, client = llm
    Scripted.script = script
    d = run_task_trial(row, "llm", world["base"] / name, toolbox=Toolbox(settings), client=client, timeout_s=60)
    return json.loads((d / "trial.json").read_text()), d


def test_llm_math_uses_tools_and_counts_tokens(world, llm):
    row = next(r for r in world["rows"] if r["family"] == "math" and "calculator" in r["trace_json"])
    answer = json.loads(row["answer_json"])["value"]
    calc = next(s for s in json.loads(row["trace_json"])["steps"] if s["tool"] == "calculator")
    rec, d = run_llm_trial(world, llm, row, [tool_call(1, "calculator", calc["args"]),
                                             say(f"Worked it out.\nANSWER: {answer}")], "llm-math")
    assert rec["success"] is True and rec["judged"] and rec["stop_reason"] == "answered"
    assert rec["steps"] == 1 and rec["tokens"] == 107 + 108
    [entry] = [json.loads(line) for line in (d / "tool_log.jsonl").read_text().splitlines()]
    assert entry["tool"] == "calculator" and entry["success"] and entry["result_preview"] == calc["response"]
    first, second = Scripted.requests[:2]
    assert {t["function"]["name"] for t in first["tools"]} == {"calculator", "math_knowledge_search"}
    assert row["prompt"] in first["messages"][1]["content"]
    assert second["messages"][-1]["role"] == "tool" and second["messages"][-1]["content"] == calc["response"]

    wrong, _ = run_llm_trial(world, llm, row, [say("ANSWER: 123456789")], "llm-math-wrong")
    assert wrong["success"] is False and wrong["judged"] and wrong["tokens"] == 107 and wrong["steps"] == 0


def test_llm_server_failure_is_a_crashed_trial(world, llm):
    row = next(r for r in world["rows"] if r["family"] == "math")
    Scripted.status = 400
    rec, d = run_llm_trial(world, llm, row, [say("ANSWER: 1")], "llm-crash")
    assert rec["stop_reason"] == "crash" and rec["success"] is False and "agent_error" in rec
    assert "400" in rec["agent_error"] and not trial_complete(d / "trial.json")   # a re-run redoes it


@needs_coq
@pytest.mark.coq
def test_llm_atp_gets_the_prover_error_back(world, llm):
    row = next(r for r in world["rows"] if r["family"] == "atp" and r["domain"] == "coq")
    meta, proof = json.loads(row["metadata_json"]), json.loads(row["answer_json"])["proof"]
    wrong = f"{meta['statement']}\n  simpl.\n{meta['closing']}\n"
    rec, _ = run_llm_trial(world, llm, row, [say(f"```coq\n{wrong}```"), say(f"Fixed:\n```coq\n{proof}```")],
                           "llm-atp")
    assert rec["success"] is True and rec["steps"] == 2 and rec["answer"] == proof
    feedback = Scripted.requests[1]["messages"][-1]
    assert feedback["role"] == "user" and "rejected" in feedback["content"] and "coqc" in feedback["content"]
    assert rec["tokens"] == 107 + 108


def test_llm_git_replays_its_commands(world, llm):
    row = next(r for r in world["rows"] if r["family"] == "git")
    commands = json.loads(row["answer_json"])["solutionCommand"].split(";")
    script = [tool_call(i, "git", {"command": c}) for i, c in enumerate(commands)] + [say("done")]
    rec, _ = run_llm_trial(world, llm, row, script, "llm-git")
    assert rec["success"] is True and rec["steps"] == len(commands) and rec["answer"] == ";".join(commands)
    assert '"tree"' in Scripted.requests[1]["messages"][-1]["content"]
    # the same agent stopping before the last command does not reach the goal
    rec, _ = run_llm_trial(world, llm, row, script[:-2] + [say("done")], "llm-git-short")
    assert rec["success"] is False and rec["judged"]


@needs_sandbox
def test_llm_os_runs_commands_in_the_sandbox(world, llm):
    row = next(r for r in world["rows"] if r["family"] == "os" and "match" in json.loads(r["answer_json"]))
    plan = json.loads(row["trace_json"])["plan"]
    match = json.loads(row["answer_json"])["match"]
    script = [tool_call(0, "bash", {"command": plan[0]["script"]}), tool_call(1, "answer", {"answer": match})]
    rec, _ = run_llm_trial(world, llm, row, script, "llm-os")
    assert rec["success"] is True and rec["steps"] == 1
    assert match in Scripted.requests[1]["messages"][-1]["content"]
