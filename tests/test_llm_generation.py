"""The LLM path of generation (plan, paraphrase, round trip) against a local OpenAI-compatible
server started by the test. The stand-in model follows simple scripted rules."""
from __future__ import annotations

import json
import re

import pyarrow.parquet as pq
import pytest
from live_http import Answer, ScriptedServer

from flows.generate import BudgetExhausted, GenerationParams, local_map_stage, run_generation
from pipeline.cache import CallCache
from pipeline.clues import parse_riddle
from pipeline.config import load_settings
from pipeline.llm import LLMClient
from pipeline.stages.base import StageContext

PREFIX = "Next leg of the race: "


def reply(content: str) -> Answer:
    return Answer(200, {"id": "c1", "object": "chat.completion", "created": 1700000000, "model": "scripted",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def scripted_model(junk: bool = False):
    """Plans the first N listed pages, prefixes each clue, and reconstructs steps from the clue wording."""
    def answer(request) -> Answer:
        text = request.json()["messages"][-1]["content"]
        if junk:
            return reply("Sure! Here is what you asked for.")
        if text.startswith("You plan one leg"):
            n = int(re.search(r"exactly (\d+) pages", text).group(1))
            titles = re.findall(r"^- (.+?): ", text, re.MULTILINE)
            return reply(json.dumps({"theme": "a scripted theme", "route": titles[:n]}))
        if text.startswith("Rewrite one clue"):
            clue = re.search(r"^Clue \d+: (.*)$", text, re.MULTILINE).group(1)
            return reply(json.dumps({"clue": PREFIX + clue}))
        if text.startswith("Here is a riddle"):
            riddle = text.split("Riddle:\n", 1)[1].rsplit("\nAnswer with JSON", 1)[0].replace(PREFIX, "")
            steps = [{"clue": n, "kind": s["kind"], "operation": s["op"], "uses": s["refs"]}
                     for n, s in enumerate(parse_riddle(riddle), start=1)]
            return reply(json.dumps({"steps": steps}))
        return Answer(400, {"error": "unexpected prompt"})
    return answer


def context(server, tmp_path):
    settings = load_settings(env={}, cache_path=tmp_path / "cache.sqlite", llm_base_url=f"{server.url}/v1",
                             llm_model="scripted")
    llm = LLMClient(settings, CallCache(settings.cache_path))
    return StageContext.create(settings, llm=llm), llm


@pytest.mark.parametrize("variant", ["linear", "dag"])
def test_llm_plans_paraphrases_and_round_trips(tmp_path, variant):
    with ScriptedServer({"/v1/chat/completions": scripted_model()}) as server:
        ctx, llm = context(server, tmp_path)
        params = GenerationParams(level="medium", variant=variant, count=1, seed=4)
        result = run_generation(params, tmp_path / "run", ctx.settings, local_map_stage(ctx))
        leg = result.accepted[0]
        assert leg.metadata["round_trip"]["parser"] == "llm"
        assert leg.metadata["round_trip"]["alignment"] >= 0.7
        assert leg.theme == "a scripted theme"
        assert all(c.text.startswith(PREFIX) for c in leg.clues)
        sent = llm.requests_sent
        # a re-run of the same stages is answered from the cache: the server is not asked again
        run_generation(params, tmp_path / "again", ctx.settings, local_map_stage(ctx))
        assert llm.requests_sent == sent
        before = (tmp_path / "run" / "legs.parquet").read_bytes()
        assert before == (tmp_path / "again" / "legs.parquet").read_bytes()


def test_an_llm_answering_junk_rejects_the_leg_with_the_reason(tmp_path):
    with ScriptedServer({"/v1/chat/completions": scripted_model(junk=True)}) as server:
        ctx, _ = context(server, tmp_path)
        # every attempt rejected: 20 attempts (of the default 200) show it as well and take a tenth of the time
        params = GenerationParams(level="easy", variant="linear", count=1, seed=1,
                                  preset_overrides=("generation.attempts_per_leg=20",))
        with pytest.raises(BudgetExhausted):
            run_generation(params, tmp_path / "run", ctx.settings, local_map_stage(ctx))
        rows = pq.read_table(tmp_path / "run" / "rejected.parquet").to_pylist()
        # junk is bad input: every attempt is a rejection with its reason, never an error; the attempts
        # that reached the LLM say so (a plan can still reject a route with no entity before asking it)
        assert rows and {r["status"] for r in rows} == {"rejected"}
        llm = [r["reason"] for r in rows if "LLM" in r["reason"]]
        assert llm and all(r.startswith(("plan", "verbalize")) for r in llm)
        assert any("not JSON" in r for r in llm)
        assert all("LLM" in r["reason"] for r in rows if r["stage"] == "verbalize")
