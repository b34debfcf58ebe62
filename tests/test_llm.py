"""The LLM client against a local OpenAI-compatible server started by the test."""
from __future__ import annotations

import json

import pytest
from live_http import Answer, ScriptedServer

from pipeline.cache import CallCache, ReplayMiss
from pipeline.config import load_settings
from pipeline.llm import DEFAULT_MAX_TOKENS, LLMClient, LLMError, LLMJunk, parse_json_reply

MODEL = "test-model-7b"


def completion(content: str | None, tool_calls: list[dict] | None = None, finish: str = "stop") -> Answer:
    message: dict = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                  "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                                 for i, c in enumerate(tool_calls)]
    return Answer(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": MODEL,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})


def make_client(server: ScriptedServer | None, tmp_path, **kwargs) -> LLMClient:
    settings = load_settings(env={}, llm_base_url=f"{server.url}/v1" if server else None, llm_model=MODEL,
                             cache_path=tmp_path / "cache.sqlite")
    return LLMClient(settings, CallCache(settings.cache_path), **kwargs)


HELLO = [{"role": "user", "content": "Say hello"}]


def test_chat_sends_the_request_and_returns_the_reply(tmp_path):
    with ScriptedServer({"/v1/chat/completions": completion("Hello!")}) as server:
        reply = make_client(server, tmp_path).chat(HELLO)
    assert reply == {"content": "Hello!", "tool_calls": [], "finish_reason": "stop", "model": MODEL,
                     "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}
    sent = server.hits("/v1/chat/completions")[0].json()
    assert sent["model"] == MODEL and sent["messages"] == HELLO and sent["temperature"] == 0
    # every request is bounded: a weak model without max_tokens writes until its context is full
    assert sent["max_tokens"] == DEFAULT_MAX_TOKENS
    assert server.hits("/v1/chat/completions")[0].headers["authorization"] == "Bearer EMPTY"


def test_second_call_is_served_from_the_cache(tmp_path):
    with ScriptedServer({"/v1/chat/completions": completion("Hello!")}) as server:
        client = make_client(server, tmp_path)
        first = client.chat(HELLO)
        second = client.chat(HELLO)
        other = client.chat([{"role": "user", "content": "Something else"}])
    assert first == second == other
    assert len(server.hits("/v1/chat/completions")) == 2  # the repeat sent nothing


def test_replay_answers_from_cache_only_even_from_another_host(tmp_path):
    with ScriptedServer({"/v1/chat/completions": completion("Recorded")}) as server:
        make_client(server, tmp_path).chat(HELLO)
    # Recorded against one address, replayed with no server at all: the namespace has no host.
    replayer = make_client(None, tmp_path, mode="replay")
    assert replayer.chat(HELLO)["content"] == "Recorded"
    assert replayer.requests_sent == 0
    with pytest.raises(ReplayMiss, match="llm call test-model-7b"):
        replayer.chat([{"role": "user", "content": "never asked"}])


def test_tool_calls_are_returned(tmp_path):
    tools = [{"type": "function", "function": {"name": "maps_geocode", "parameters": {"type": "object"}}}]
    answer = completion(None, [{"name": "maps_geocode", "arguments": {"address": "Ulm"}}], finish="tool_calls")
    with ScriptedServer({"/v1/chat/completions": answer}) as server:
        reply = make_client(server, tmp_path).chat(HELLO, tools=tools)
    assert reply["tool_calls"] == [{"id": "call_0", "name": "maps_geocode", "arguments": '{"address": "Ulm"}'}]
    assert server.hits("/v1/chat/completions")[0].json()["tools"] == tools


def test_transient_errors_are_retried_by_the_sdk_honouring_retry_after(tmp_path):
    script = [Answer(503, {"error": {"message": "overloaded"}}, headers={"Retry-After": "0"}),
              Answer(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0"}),
              completion("finally")]
    with ScriptedServer({"/v1/chat/completions": script}) as server:
        reply = make_client(server, tmp_path).chat(HELLO)
    assert reply["content"] == "finally"
    assert len(server.hits("/v1/chat/completions")) == 3


def test_persistent_failure_is_a_clear_error_and_not_cached(tmp_path):
    with ScriptedServer({"/v1/chat/completions": Answer(500, {"error": {"message": "boom"}})}) as server:
        client = make_client(server, tmp_path, max_attempts=2)
        with pytest.raises(LLMError, match="failed 2 times"):
            client.chat(HELLO)
    assert client.cache.count("llm") == 0


def test_async_chat_shares_the_cache_with_chat(tmp_path):
    import asyncio

    with ScriptedServer({"/v1/chat/completions": completion("Hello!")}) as server:
        client = make_client(server, tmp_path)

        async def both():
            return await asyncio.gather(client.achat(HELLO), client.achat([{"role": "user", "content": "2"}]))
        first, second = asyncio.run(both())
        again = client.chat(HELLO)                       # answered from what achat recorded
    assert first == second == again and first["usage"]["total_tokens"] == 8
    assert len(server.hits("/v1/chat/completions")) == 2


def test_event_loops_one_after_another_share_one_tls_context_for_a_plain_http_endpoint(tmp_path, monkeypatch):
    """A race or an attribution runs one event loop after another, each with its own async client; against
    a local (plain-HTTP) server they build no TLS context of their own (one reads the CA bundle, ~35 ms),
    and each loop's answer still comes from the server."""
    import asyncio
    import ssl

    import openai  # noqa: F401 - imported before counting: importing the SDK builds contexts of its own

    from pipeline import llm

    made = []
    new_context = ssl.SSLContext.__new__

    def counted(cls, *args, **kwargs):
        made.append(cls)
        return new_context(cls, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "__new__", staticmethod(counted))
    llm._plain_http_tls.cache_clear()
    with ScriptedServer({"/v1/chat/completions": completion("Hello!")}) as server:
        client = make_client(server, tmp_path)
        replies = [asyncio.run(client.achat([{"role": "user", "content": str(n)}])) for n in range(5)]
    llm._plain_http_tls.cache_clear()
    assert [r["content"] for r in replies] == ["Hello!"] * 5 and len(server.hits("/v1/chat/completions")) == 5
    assert len(made) == 1, f"{len(made)} TLS contexts for 5 event loops"


def test_client_errors_are_not_retried(tmp_path):
    with (ScriptedServer({"/v1/chat/completions": Answer(400, {"error": {"message": "bad model"}})}) as server,
          pytest.raises(LLMError, match="HTTP 400")):
        make_client(server, tmp_path).chat(HELLO)
    assert len(server.hits("/v1/chat/completions")) == 1


def test_json_chat_parses_json_and_rejects_junk(tmp_path):
    script = [completion('```json\n{"answer": 42}\n```'), completion("Sure! The answer is 42.")]
    with ScriptedServer({"/v1/chat/completions": script}) as server:
        client = make_client(server, tmp_path)
        assert client.json_chat(HELLO, response_format={"type": "json_object"}) == {"answer": 42}
        with pytest.raises(LLMJunk) as caught:
            client.json_chat([{"role": "user", "content": "again"}])
    assert caught.value.raw == "Sure! The answer is 42."
    assert server.hits("/v1/chat/completions")[0].json()["response_format"] == {"type": "json_object"}


def test_parse_json_reply_is_strict():
    assert parse_json_reply('  [1, 2]\n') == [1, 2]
    for junk in ["{'a': 1}", "Here: {\"a\": 1}", "", "{\"a\": 1} trailing"]:
        with pytest.raises(LLMJunk):
            parse_json_reply(junk)


def test_unconfigured_llm_is_a_clear_error(tmp_path):
    with pytest.raises(LLMError, match="no LLM configured"):
        LLMClient(load_settings(env={}, cache_path=tmp_path / "c.sqlite"))


def test_live_python_generate_code_asks_the_llm_and_replays(tmp_path):
    from pipeline.tools.registry import Toolbox

    program = json.dumps({"code": "print(sum(range(1, 11)))"})
    with ScriptedServer({"/v1/chat/completions": completion(program)}) as server:
        settings = load_settings(env={}, llm_base_url=f"{server.url}/v1", llm_model=MODEL,
                                 cache_path=tmp_path / "cache.sqlite", backends={"python_generate_code": "live"})
        toolbox = Toolbox(settings)
        result = toolbox.call("python_generate_code", {"task": "add the numbers from 1 to 10"})
        sent = server.hits("/v1/chat/completions")[0].json()
    assert result.ok and result.data["code"] == "print(sum(range(1, 11)))"
    assert result.data["provenance"] == "live" and MODEL in result.data["source"]
    assert sent["messages"][-1] == {"role": "user", "content": "add the numbers from 1 to 10"}
    executed = toolbox.call("python_execute_code", {"code": result.data["code"]})
    assert executed.data["stdout"] == "55\n"
    # Both the tool call and the LLM call were recorded: a replay needs no server.
    assert toolbox.cache.count("llm") == 1
    replay = Toolbox(settings.with_overrides(default_backend="replay", backends={}, replay_of="live"))
    assert replay.call("python_generate_code", {"task": "add the numbers from 1 to 10"}).data == result.data
