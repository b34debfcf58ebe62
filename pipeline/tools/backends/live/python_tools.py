"""Live python tools: code written by the configured LLM; execution in the same local sandbox.

python_generate_code asks the LLM (``pipeline.llm``; settings ``llm_base_url``/``llm_model``)
for a short program that prints the answer. The reply must be JSON ``{"code": "..."}``; the
LLM call itself is recorded in the cache (kind ``llm``), so a replay needs no model.
Without an LLM configured it falls back to the offline templates. python_execute_code has
no remote service: the live backend runs the local sandbox like the offline one.
"""
from __future__ import annotations

from pipeline.llm import LLMClient, LLMJunk
from pipeline.tools.backends.offline.python_tools import execute_in_sandbox
from pipeline.tools.backends.offline.python_tools import python_generate_code as offline_generate
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements

PROMPT = ("You write short, self-contained Python 3 programs (standard library only, no network, no input) "
          "that print the answer to a task on stdout and nothing else. Reply with a JSON object "
          '{"code": "<the program>"} and no other text.')


@implements("python_execute_code", "live")
def python_execute_code(args: dict, ctx: BackendContext) -> dict:
    return execute_in_sandbox(args, ctx.settings)


@implements("python_generate_code", "live")
def python_generate_code(args: dict, ctx: BackendContext) -> dict:
    settings = ctx.settings
    if not (settings.llm_model and settings.llm_base_url):
        return offline_generate(args, ctx)

    client = ctx.shared.get("llm_client")
    if client is None:
        client = ctx.shared["llm_client"] = LLMClient(settings, ctx.toolbox.cache)
    messages = [{"role": "system", "content": PROMPT}, {"role": "user", "content": args["task"]}]
    try:
        reply = client.json_chat(messages, response_format={"type": "json_object"})
    except LLMJunk as exc:
        raise ToolError(f"the LLM did not answer with JSON code: {exc.raw[:200]!r}") from None
    code = reply.get("code") if isinstance(reply, dict) else None
    if not isinstance(code, str) or not code.strip():
        raise ToolError(f"the LLM's reply has no 'code' string: {str(reply)[:200]}")
    return {"code": code, "units": {}, "provenance": "live", "source": f"LLM {settings.llm_model} (live)"}
