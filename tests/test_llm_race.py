"""LLM races a real evaluation can afford, against a stand-in OpenAI-compatible server on 127.0.0.1:
concurrent trials, a token budget per request and per trial, an overrun the agent is told about,
token usage recorded, and a re-run that skips finished trials and redoes broken ones."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from live_http import chat_completion, send_json
from test_race import small_leg

from pipeline.config import load_settings
from pipeline.llm import LLMClient
from pipeline.model import Leg
from pipeline.race import Budget, race_legs, run_trial
from pipeline.tools.registry import Toolbox


class StandIn(BaseHTTPRequestHandler):
    """Answers ``ANSWER: 2`` after ``delay`` seconds; counts requests and how many overlap.
    ``mode``: "answer"; "overrun" (first reply cut at max_tokens, then the answer); "down" (HTTP 500)."""
    mode = "answer"
    delay = 0.0
    lock = threading.Lock()
    active = 0
    peak = 0
    bodies: list = []   # noqa: RUF012 - reset per test by the fixture

    def do_POST(self):
        cls = type(self)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with cls.lock:
            cls.bodies.append(body)
            cls.active += 1
            cls.peak = max(cls.peak, cls.active)
        try:
            time.sleep(cls.delay)
            if cls.mode == "down":
                send_json(self, 500, {"error": {"message": "down"}})
                return
            cut = cls.mode == "overrun" and not any(m["role"] == "assistant" for m in body["messages"])
            content = "Let me think about this very long" if cut else "2362 % 10 = 2\nANSWER: 2"
            send_json(self, 200, chat_completion(body["model"], {"role": "assistant", "content": content},
                                                 "length" if cut else "stop", (90, 10)))
        finally:
            with cls.lock:
                cls.active -= 1

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    StandIn.mode, StandIn.delay, StandIn.active, StandIn.peak, StandIn.bodies = "answer", 0.0, 0, 0, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}/v1"
    httpd.shutdown()


def legs(n: int) -> list[Leg]:
    out = []
    for i in range(n):
        leg = small_leg()
        leg.leg_id = f"race-{i}"
        leg.seed_url = f"{leg.seed_url}#{i}"   # distinct requests, so no cache hit between trials
        out.append(leg)
    return out


def setup(server_url: str, tmp_path, **client_kw):
    settings = load_settings(cache_path=tmp_path / "c.sqlite", llm_base_url=server_url, llm_model="stand-in")
    toolbox = Toolbox(settings)
    return toolbox, LLMClient(settings, toolbox.cache, **client_kw)


def trial(d) -> dict:
    return json.loads((d / "trial.json").read_text())


def test_concurrent_trials_overlap_at_the_server_and_record_tokens(server, tmp_path):
    import asyncio
    StandIn.delay = 0.3
    toolbox, client = setup(server, tmp_path, max_tokens=64)
    t0 = time.monotonic()
    dirs, skipped = asyncio.run(race_legs(legs(6), "llm", tmp_path / "runs", toolbox=toolbox, client=client,
                                          budget=Budget(max_tokens=64), concurrency=3))
    wall = time.monotonic() - t0
    assert skipped == 0 and StandIn.peak == 3            # three requests in flight at once, never more
    assert wall < 6 * 0.3                                # faster than one after another
    for d in dirs:
        rec = trial(d)
        assert rec["answer"] == "2" and rec["stop_reason"] == "answered" and rec["tokens"] == 100
        assert rec["budget"]["max_tokens"] == 64
    assert {b["max_tokens"] for b in StandIn.bodies} == {64}


def test_an_overrun_is_a_failed_step_the_agent_is_told_about(server, tmp_path):
    StandIn.mode = "overrun"
    toolbox, client = setup(server, tmp_path)
    d = run_trial(small_leg(), "llm", tmp_path / "runs", toolbox=toolbox, client=client,
                  budget=Budget(max_tokens=16, timeout_s=60))
    rec = trial(d)
    assert rec["answer"] == "2" and rec["steps"] == 1 and rec["tokens"] == 200
    assert len(StandIn.bodies) == 2 and StandIn.bodies[0]["messages"] != StandIn.bodies[1]["messages"]
    told = StandIn.bodies[1]["messages"][-1]
    assert told["role"] == "user" and "cut off at 16 tokens" in told["content"]


def test_token_budget_per_trial_ends_the_trial(server, tmp_path):
    StandIn.mode = "overrun"
    toolbox, client = setup(server, tmp_path)
    d = run_trial(small_leg(), "llm", tmp_path / "runs", toolbox=toolbox, client=client,
                  budget=Budget(max_tokens=16, trial_tokens=100, timeout_s=60))
    rec = trial(d)
    assert rec["stop_reason"] == "token_limit" and rec["answer"] is None and len(StandIn.bodies) == 1


def test_a_rerun_skips_finished_trials_and_redoes_broken_ones(server, tmp_path):
    import asyncio
    toolbox, client = setup(server, tmp_path, max_attempts=1)
    runs = tmp_path / "runs"
    StandIn.mode = "down"
    dirs, _ = asyncio.run(race_legs(legs(2), "llm", runs, toolbox=toolbox, client=client, concurrency=2))
    assert {trial(d)["stop_reason"] for d in dirs} == {"llm_error"}
    assert "HTTP 500" in trial(dirs[0])["agent_error"] or "failed 1 times" in trial(dirs[0])["agent_error"]
    StandIn.mode = "answer"
    dirs, skipped = asyncio.run(race_legs(legs(2), "llm", runs, toolbox=toolbox, client=client, concurrency=2))
    assert skipped == 0 and {trial(d)["stop_reason"] for d in dirs} == {"answered"}
    sent = len(StandIn.bodies)
    dirs, skipped = asyncio.run(race_legs(legs(2), "llm", runs, toolbox=toolbox, client=client, concurrency=2))
    assert skipped == 2 and len(StandIn.bodies) == sent        # nothing asked again
